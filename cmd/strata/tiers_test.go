package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/archive"
	"github.com/strata-memory/strata/formats"
	"github.com/strata-memory/strata/internal/synth"
	"github.com/strata-memory/strata/sqlite"
)

// runCfg runs the CLI in-process against db with the config file cfg.
func runCfg(t testing.TB, db, cfg, stdin string, args ...string) (string, string, error) {
	t.Helper()
	return runAt(t, db, cfg, stdin, nil, args...)
}

// runAt is runCfg on the clock now (nil: the time of day).
func runAt(t testing.TB, db, cfg, stdin string, now func() time.Time, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	m := &Main{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb,
		Getenv: func(k string) string {
			switch k {
			case "STRATA_DB":
				return db
			case "STRATA_CONFIG":
				return cfg
			}
			return ""
		},
		Now: now}
	err := m.Run(context.Background(), args)
	return out.String(), errb.String(), err
}

func mustCfg(t testing.TB, db, cfg string, args ...string) string {
	t.Helper()
	out, errs, err := runCfg(t, db, cfg, "", args...)
	if err != nil {
		t.Fatalf("strata %s: %v\n%s", strings.Join(args, " "), err, errs)
	}
	return out
}

func writeFile(t testing.TB, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// sourceTurns writes n synthetic turns of conv as JSONL, with every 37th
// turn pinned, and returns the file and the turns by ext_id.
func sourceTurns(t testing.TB, dir, conv string, n int) (string, map[string]strata.Turn) {
	t.Helper()
	var b strings.Builder
	byID := map[string]strata.Turn{}
	for i, tr := range synth.New(5).Turns(n) {
		rec := map[string]any{"conversation": conv, "session": tr.SessionLabel, "ext_id": tr.ExtID,
			"role": tr.Role, "name": tr.Name, "content": tr.Content, "time": tr.Time}
		if i%37 == 36 {
			rec["importance"] = 0.9
		}
		line, _ := json.Marshal(rec)
		b.Write(line)
		b.WriteByte('\n')
		byID[tr.ExtID] = tr
	}
	return writeFile(t, dir, conv+".jsonl", b.String()), byID
}

type expandJSON struct {
	Node  strata.Node   `json:"node"`
	Turns []strata.Turn `json:"turns"`
}

// checkExpands expands every node of conv and compares each turn's content
// with the source; it returns the level-1 nodes by tier.
func checkExpands(t *testing.T, db, cfg, conv string, src map[string]strata.Turn) map[strata.Tier][]string {
	t.Helper()
	var tr struct {
		Nodes []struct {
			ID    string      `json:"id"`
			Level int         `json:"level"`
			Tier  strata.Tier `json:"tier"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(mustCfg(t, db, cfg, "tree", "--conversation", conv, "--json")), &tr); err != nil {
		t.Fatal(err)
	}
	byTier := map[strata.Tier][]string{}
	for _, n := range tr.Nodes {
		var ex expandJSON
		if err := json.Unmarshal([]byte(mustCfg(t, db, cfg, "expand", n.ID, "--json")), &ex); err != nil {
			t.Fatal(err)
		}
		if int64(len(ex.Turns)) != ex.Node.Turns() {
			t.Fatalf("expand %s: %d turns, want %d", n.ID, len(ex.Turns), ex.Node.Turns())
		}
		for i, got := range ex.Turns {
			want, ok := src[got.ExtID]
			if !ok || got.Content != want.Content || got.Name != want.Name || !got.Time.Equal(want.Time) ||
				got.Seq != ex.Node.FirstSeq+int64(i) {
				t.Fatalf("expand %s: turn %d (%s) differs from the source", n.ID, got.Seq, got.ExtID)
			}
		}
		if n.Level == 1 {
			byTier[n.Tier] = append(byTier[n.Tier], n.ID)
		}
	}
	return byTier
}

func TestTiersThroughTheCLI(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	cfg := writeFile(t, dir, "strata.yaml", "tiers:\n  hot_chunks: 2\n  warm_max_turns: 200\n")
	file, src := sourceTurns(t, dir, "c", 640)
	mustCfg(t, db, cfg, "import", file)

	byTier := checkExpands(t, db, cfg, "c", src)
	// 64 micro spans: the newest 2 hot, the 43 followed by more than 200
	// turns cold, the 19 between warm.
	if len(byTier[strata.TierHot]) != 2 || len(byTier[strata.TierWarm]) != 19 || len(byTier[strata.TierCold]) != 43 {
		t.Fatalf("spans per tier: hot %d, warm %d, cold %d; want 2, 19, 43", len(byTier[strata.TierHot]),
			len(byTier[strata.TierWarm]), len(byTier[strata.TierCold]))
	}
	var st struct {
		strata.Stats
	}
	if err := json.Unmarshal([]byte(mustCfg(t, db, cfg, "stats", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	got := map[strata.Tier]strata.TierStats{}
	for _, x := range st.Tiers {
		got[x.Tier] = x
	}
	if got[strata.TierCold].Spans != 43 || got[strata.TierWarm].Spans != 19 || st.Archive.Segments == 0 || st.Archive.Ratio < 1.5 {
		t.Fatalf("stats: tiers %+v, archive %+v", st.Tiers, st.Archive)
	}
	if text := mustCfg(t, db, cfg, "stats"); !strings.Contains(text, "cold") || !strings.Contains(text, "archive") {
		t.Errorf("stats text lacks tiers:\n%s", text)
	}
	// The tree's text says each level-1 node's tier.
	tree := mustCfg(t, db, cfg, "tree", "--conversation", "c")
	for tier, ids := range byTier {
		for _, id := range ids {
			if !regexp.MustCompile(`(?m)^ *\S+ +` + id + `  .* tokens  ` + string(tier) + `$`).MatchString(tree) {
				t.Fatalf("tree text does not show node %s as %s:\n%s", id, tier, tree)
			}
		}
	}
	// Importing again changes nothing; tiering again moves nothing.
	mustCfg(t, db, cfg, "import", file)
	if out := mustCfg(t, db, cfg, "tier"); !strings.Contains(out, "moved 0 spans to warm and 0 to cold") {
		t.Errorf("a second tier pass: %s", out)
	}

	// A missing segment: expand names it, context still works.
	segs, _ := filepath.Glob(filepath.Join(sqlite.ArchiveRoot(db), "*", "*", "*.jsonl.zst"))
	if len(segs) != st.Archive.Segments {
		t.Fatalf("%d segment files, stats say %d", len(segs), st.Archive.Segments)
	}
	sort.Strings(segs)
	victim := segs[0]
	if err := os.Remove(victim); err != nil {
		t.Fatal(err)
	}
	_, errs, err := runCfg(t, db, cfg, "", "expand", byTier[strata.TierCold][0])
	if err == nil || !strings.Contains(err.Error(), victim) {
		t.Fatalf("expand of a span in a deleted segment: err %v (stderr %s), want it to name %s", err, errs, victim)
	}
	for _, q := range []string{"", "uniqueness", src["t3"].Content} {
		var pkg struct {
			Budget int `json:"budget"`
			Tokens int `json:"tokens"`
			Items  []struct {
				Kind string `json:"kind"`
			} `json:"items"`
		}
		out := mustCfg(t, db, cfg, "context", "--conversation", "c", "--budget", "2000", "--query", q, "--json")
		if err := json.Unmarshal([]byte(out), &pkg); err != nil {
			t.Fatal(err)
		}
		if pkg.Tokens > 2000 || len(pkg.Items) == 0 {
			t.Errorf("context (query %q) with a segment missing: %d tokens, %d items", q, pkg.Tokens, len(pkg.Items))
		}
	}
}

func TestContextExpandsTheColdSpanAQueryPointsInto(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	cfg := writeFile(t, dir, "strata.yaml", "tiers:\n  hot_chunks: 1\n  warm_max_turns: 10\n")
	file, src := sourceTurns(t, dir, "c", 300)
	mustCfg(t, db, cfg, "import", file)
	// The summary of a cold span names what a turn said; ask for it.
	var tr treeJSON
	json.Unmarshal([]byte(mustCfg(t, db, cfg, "tree", "--conversation", "c", "--json")), &tr)
	var target string
	for _, n := range tr.Nodes {
		if n.Level == 1 && n.FirstSeq == 41 {
			target = n.ID
		}
	}
	var ex expandJSON
	json.Unmarshal([]byte(mustCfg(t, db, cfg, "expand", target, "--json")), &ex)
	if ex.Node.Tier != strata.TierCold {
		t.Fatalf("node %s is %s, want cold", target, ex.Node.Tier)
	}
	words := strings.Fields(ex.Node.Summary)
	query := strings.Join(words[:min(8, len(words))], " ")
	var pkg struct {
		Items []struct {
			Kind     string `json:"kind"`
			ExtID    string `json:"ext_id"`
			FirstSeq int64  `json:"first_seq"`
		} `json:"items"`
	}
	json.Unmarshal([]byte(mustCfg(t, db, cfg, "context", "--conversation", "c", "--budget", "3000", "--query", query, "--json")), &pkg)
	raw := 0
	for _, it := range pkg.Items {
		if it.Kind == "turn" && it.FirstSeq >= 41 && it.FirstSeq <= 50 {
			raw++
			if src[it.ExtID].Content == "" {
				t.Errorf("turn %s is not from the source", it.ExtID)
			}
		}
	}
	if raw == 0 {
		t.Errorf("no raw turn of the cold span the query points into (query %q)", query)
	}
	// Search finds every turn of the cold span by its own words, whole.
	for n := 41; n <= 50; n++ {
		id := fmt.Sprintf("t%d", n)
		var sr struct {
			Hits []struct {
				Kind  string `json:"kind"`
				ExtID string `json:"ext_id"`
				Text  string `json:"text"`
			} `json:"hits"`
		}
		q := src[id].Content
		json.Unmarshal([]byte(mustCfg(t, db, cfg, "search", "--conversation", "c", "--json", q)), &sr)
		found := false
		for _, h := range sr.Hits {
			found = found || h.Kind == "turn" && h.ExtID == id && strings.Contains(h.Text, src[id].Content)
		}
		if !found {
			t.Errorf("search for the words of cold turn %s finds it not, or not whole: %+v", id, sr.Hits)
		}
	}
}

// TestLoCoMoTiers imports locomo-dev with a small hot window and checks
// that every node of conv-26, whatever its tier, expands to the source
// file's turns.
func TestLoCoMoTiers(t *testing.T) {
	file := os.Getenv("STRATA_LOCOMO")
	if file == "" {
		t.Skip("STRATA_LOCOMO names no LoCoMo file")
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	cfg := writeFile(t, dir, "strata.yaml", "tiers:\n  hot_chunks: 2\n  warm_max_turns: 100\n")
	mustCfg(t, db, cfg, "import", "--format", "locomo", file)
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := formats.Open(formats.LoCoMo, file, f)
	if err != nil {
		t.Fatal(err)
	}
	src := map[string]strata.Turn{}
	for {
		rec, err := r.Next()
		if err != nil {
			break
		}
		if rec.Conversation == "conv-26" {
			src[rec.Turn.ExtID] = rec.Turn
		}
	}
	byTier := checkExpands(t, db, cfg, "conv-26", src)
	if len(byTier[strata.TierHot]) == 0 || len(byTier[strata.TierWarm]) == 0 || len(byTier[strata.TierCold]) == 0 {
		t.Errorf("conv-26 spans per tier: %d hot, %d warm, %d cold; want some of each",
			len(byTier[strata.TierHot]), len(byTier[strata.TierWarm]), len(byTier[strata.TierCold]))
	}
}

func TestRetentionThroughTheCLI(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	file, _ := sourceTurns(t, dir, "c", 400)
	keep := writeFile(t, dir, "keep.yaml", "tiers:\n  hot_chunks: 2\n  warm_max_turns: 100\n  cold_retention_days: 1\n")
	// The turns are from 2023; imported under the rule, they go cold now,
	// and nothing expires until a day has passed since.
	imported := time.Now()
	mustCfg(t, db, keep, "import", file)
	if out := mustCfg(t, db, keep, "retention", "--dry-run"); !strings.Contains(out, "nothing went cold more than 1 days ago") {
		t.Fatalf("retention --dry-run right after the import: %s", out)
	}
	if out := mustCfg(t, db, keep, "tier"); !strings.Contains(out, "c: moved 0 spans to warm and 0 to cold") || strings.Contains(out, "expire") {
		t.Fatalf("tier right after the import: %s", out)
	}
	later := func() time.Time { return imported.Add(25 * time.Hour) }
	mustAt := func(args ...string) string {
		t.Helper()
		out, errs, err := runAt(t, db, keep, "", later, args...)
		if err != nil {
			t.Fatalf("strata %s: %v\n%s", strings.Join(args, " "), err, errs)
		}
		return out
	}

	dry := mustAt("retention", "--dry-run")
	if !strings.Contains(dry, "would delete") || !strings.Contains(dry, "; cold since "+imported.UTC().Format("2006-01-02")) ||
		!strings.Contains(dry, ", newest turn 2023-") {
		t.Fatalf("retention --dry-run a day later: %s", dry)
	}
	if out := mustAt("retention", "--log"); !strings.Contains(out, "no raw content has expired") {
		t.Fatalf("a dry run left a log: %s", out)
	}
	var expired []strata.Expiry
	if err := json.Unmarshal([]byte(mustAt("retention", "--json")), &expired); err != nil {
		t.Fatal(err)
	}
	if len(expired) == 0 || expired[0].Rule != "cold_retention_days=1" || expired[0].ColdAt.Before(imported.Add(-time.Second)) ||
		expired[0].NewestTurn.Year() != 2023 {
		t.Fatalf("retention expired %+v", expired)
	}
	var log []strata.Expiry
	json.Unmarshal([]byte(mustCfg(t, db, keep, "retention", "--log", "--json")), &log)
	if len(log) != len(expired) {
		t.Fatalf("log has %d records, %d expired", len(log), len(expired))
	}
	// Expand of an expired span says why, and keeps its pinned turn.
	out, _, err := runCfg(t, db, keep, "", "expand", expired[0].NodeID)
	if err == nil || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("expand of an expired span: %v", err)
	}
	_ = out
	// Pinned turns are never expired: turn 37 (the first pinned) is whole.
	var ex expandJSON
	json.Unmarshal([]byte(mustRunJSONAllowErr(t, db, keep, "expand", strata.NodeID("default", "c", 1, 31, 40))), &ex)
	found := false
	for _, tr := range ex.Turns {
		if tr.Seq == 37 && tr.Content != "" {
			found = true
		}
	}
	if !found {
		t.Errorf("the pinned turn 37 did not survive retention: %+v", ex.Turns)
	}
	// The summaries stay, and context works.
	if out := mustCfg(t, db, keep, "context", "--conversation", "c", "--budget", "1500"); !strings.Contains(out, "summary") {
		t.Errorf("context after retention has no summaries:\n%s", out)
	}
	// Re-importing the source adds nothing back.
	mustCfg(t, db, keep, "import", file)
	var tr treeJSON
	json.Unmarshal([]byte(mustCfg(t, db, keep, "tree", "--conversation", "c", "--json")), &tr)
	if tr.Turns != 400 {
		t.Errorf("after re-import: %d turns", tr.Turns)
	}
}

// contentOf is s as turn content, which may not be empty.
func contentOf(s string) string {
	if s == "" {
		return "(empty name)"
	}
	return s
}

// mustRunJSONAllowErr runs a command that may fail (expand of an expired
// span) and returns its standard output.
func mustRunJSONAllowErr(t *testing.T, db, cfg string, args ...string) string {
	t.Helper()
	out, _, _ := runCfg(t, db, cfg, "", append(args, "--json")...)
	return out
}

// TestKilledTierLosesNothing kills `strata tier` (SIGKILL) at many instants
// of a pass that archives hundreds of spans, resumes it, and expects every
// node to expand to its source turns, each archived turn to be in exactly
// one segment record, and a store that passes SQLite's integrity check.
func TestKilledTierLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	off := writeFile(t, dir, "off.yaml", "tiers:\n  off: true\n")
	on := writeFile(t, dir, "on.yaml", "tiers:\n  hot_chunks: 2\n  warm_max_turns: 300\n")
	file, src := sourceTurns(t, dir, "k", killedTierTurns)

	// How long an uninterrupted pass takes, on a store of its own; the
	// store the passes are killed in is a copy of it before the pass.
	clean := filepath.Join(dir, "clean.db")
	mustCfg(t, clean, off, "import", file)
	db := filepath.Join(dir, "killed.db")
	copyStoreFile(t, clean, db)
	start := time.Now()
	mustCfg(t, clean, on, "tier")
	full := time.Since(start)

	kills := 0
	for i := 1; i <= 12; i++ {
		cmd := exec.Command(os.Args[0], "tier")
		cmd.Env = childEnv("STRATA_DB="+db, "STRATA_CONFIG="+on)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		// Spread the kills over the pass; each pass resumes the last, so
		// later ones land in less remaining work.
		after := time.Duration(i) * full / 14
		select {
		case <-done:
		case <-time.After(after):
			cmd.Process.Kill() // SIGKILL
			<-done
			kills++
		}
	}
	mustCfg(t, db, on, "tier")
	t.Logf("%d kills over a pass of %v", kills, full)

	byTier := checkExpands(t, db, on, "k", src)
	want := checkExpands(t, clean, on, "k", src)
	for _, tier := range strata.Tiers {
		if len(byTier[tier]) != len(want[tier]) {
			t.Errorf("%s spans: %d after kills, %d without", tier, len(byTier[tier]), len(want[tier]))
		}
	}
	// Each archived turn is in exactly one record of one segment.
	segs, _ := filepath.Glob(filepath.Join(sqlite.ArchiveRoot(db), "*", "*", "*.jsonl.zst"))
	seen := map[int64]string{}
	for _, p := range segs {
		recs, err := archive.Read(p, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if prev, ok := seen[r.Seq]; ok {
				t.Fatalf("turn %d is archived twice: %s and %s", r.Seq, prev, p)
			}
			seen[r.Seq] = p
		}
	}
	if len(seen) != len(want[strata.TierCold])*10 {
		t.Errorf("%d archived turns, want %d", len(seen), len(want[strata.TierCold])*10)
	}
	leftovers, _ := filepath.Glob(filepath.Join(sqlite.ArchiveRoot(db), "*", "*", "*.tmp*"))
	for _, l := range leftovers {
		t.Logf("leftover temporary file (ignored by readers): %s", l)
	}
	sdb, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	defer sdb.Close()
	var ok string
	if err := sdb.QueryRow(`PRAGMA integrity_check`).Scan(&ok); err != nil || ok != "ok" {
		t.Fatalf("integrity check: %q %v", ok, err)
	}
	// The full-text index holds exactly the turns not expired, whatever
	// their tier.
	var nFTS, nRows int
	sdb.QueryRow(`SELECT count(*) FROM turns WHERE tier < 3`).Scan(&nRows)
	sdb.QueryRow(`SELECT count(*) FROM turns_fts_docsize`).Scan(&nFTS)
	if nFTS != nRows && nFTS != 0 {
		t.Errorf("%d index entries for %d indexed turns", nFTS, nRows)
	}
}

func TestCTFRoundTripThroughTheCLI(t *testing.T) {
	hard := []string{"tab\there\tand\tthere", "line\nbreak\nand\r\nCRLF", "\u2409 \u240a literal glyphs \u241b", "-", "",
		"--", "- ", "trailing tab\t", "\n", "mixed \t\u2409\n\u240a - end"}
	var in strings.Builder
	for i, h := range hard {
		line, _ := json.Marshal(map[string]any{"conversation": "c", "ext_id": fmt.Sprintf("x%d", i), "role": "user",
			"name": h, "content": contentOf(h), "time": "2024-05-01T10:00:00Z"})
		in.Write(line)
		in.WriteByte('\n')
	}
	enc, errs, err := runCfg(t, "", "", in.String(), "ctf", "encode")
	if err != nil {
		t.Fatalf("ctf encode: %v\n%s", err, errs)
	}
	if !strings.HasPrefix(enc, "#CTF v1 ") {
		t.Fatalf("ctf encode output starts %q", enc[:min(40, len(enc))])
	}
	dec, errs, err := runCfg(t, "", "", enc, "ctf", "decode")
	if err != nil {
		t.Fatalf("ctf decode: %v\n%s", err, errs)
	}
	sc := bufio.NewScanner(strings.NewReader(dec))
	i := 0
	for sc.Scan() {
		var rec struct {
			Content string `json:"content"`
			Name    string `json:"name"`
			ExtID   string `json:"ext_id"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("decode line %d: %v", i+1, err)
		}
		if i >= len(hard) || rec.Content != contentOf(hard[i]) || rec.Name != hard[i] || rec.ExtID != fmt.Sprintf("x%d", i) {
			t.Fatalf("line %d: %+v, want content and name %q", i+1, rec, hard[min(i, len(hard)-1)])
		}
		i++
	}
	if i != len(hard) {
		t.Fatalf("decoded %d turns, want %d", i, len(hard))
	}
	// Malformed input names the line.
	bad := enc[:strings.Index(enc, "\n")+1] + "only-one-field\n"
	_, _, err = runCfg(t, "", "", bad, "ctf", "decode")
	if err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("decode of a malformed row: %v", err)
	}
}
