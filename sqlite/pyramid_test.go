package sqlite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/archive"
	"github.com/strata-memory/strata/internal/spanfmt"
)

// The tests of this file check SetImportance and ResetPyramid where the
// conformance suite cannot: when a kill interrupts them, and in the window
// a kill leaves between ResetPyramid's commit and its archive cleanup.

const pyNS, pyConv = "ns", "c"

// pyramidCorpus stores 30 turns of every shape, several days apart, under
// three level-1 nodes and a level-2 one, and moves them to tiers: 1-10
// warm, 11-20 cold (from hot), 21-30 cold (from warm). Turn 15 is pinned
// while cold, turn 25 unpinned while cold. It returns the turns as Turns
// reads them.
func pyramidCorpus(t *testing.T, s *Store) []strata.Turn {
	t.Helper()
	ctx := t.Context()
	if _, err := s.EnsureConversation(ctx, strata.Conversation{Namespace: pyNS, ID: pyConv, Policy: "chunks"}); err != nil {
		t.Fatal(err)
	}
	base := time.Date(2024, 3, 1, 12, 0, 0, 123456789, time.UTC)
	in := make([]strata.Turn, 30)
	hard := []string{"tab\there", "line\nbreak\r\n", "glyphs \u2409 \u240a", "-", "", "emoji 🎉 and 漢字"}
	for i := range in {
		n := i + 1
		tt := strata.Turn{ExtID: fmt.Sprintf("e%d", n), Session: 1 + i/12, Role: strata.RoleUser, Name: "Ada",
			Content: fmt.Sprintf("turn %d uniqword%d %s", n, n, hard[i%len(hard)]),
			Time:    base.Add(time.Duration(i) * 7 * time.Hour), Tokens: 10 + i}
		switch i % 4 {
		case 1:
			tt.Role, tt.Model = strata.RoleAssistant, "model-x"
			tt.ToolCalls = []strata.ToolCall{{ID: "c", Name: "look", Arguments: json.RawMessage("{ \"q\" : \"a<b>\" }")}}
		case 2:
			tt.Role = strata.RoleTool
			tt.ToolResults = []strata.ToolResult{{CallID: "c", Name: "look", Content: "out\tput"}}
		case 3:
			tt.Tags, tt.SessionLabel = []string{"a", "b c"}, "label"
			tt.Metadata = map[string]any{"k": "v", "n": 2.5}
		}
		if n == 5 || n == 25 {
			tt.Importance = 0.9
		}
		in[i] = tt
	}
	if _, err := s.AppendTurns(ctx, pyNS, pyConv, in); err != nil {
		t.Fatal(err)
	}
	if err := s.PutNodes(ctx, pyNS, pyConv, pyramidNodes(2)); err != nil {
		t.Fatal(err)
	}
	pyramidTiers(t, s)
	for _, x := range []struct {
		seq int64
		imp float64
	}{{15, 0.9}, {25, 0.2}} {
		if _, err := s.SetImportance(ctx, pyNS, pyConv, x.seq, x.imp); err != nil {
			t.Fatal(err)
		}
	}
	return pyramidTurns(t, s)
}

// openCorpus opens a store in a new folder, closed when t ends, and
// stores pyramidCorpus in it.
func openCorpus(t *testing.T) (*Store, []strata.Turn) {
	t.Helper()
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, pyramidCorpus(t, s)
}

// pyramidNodes returns the level-1 nodes 1-10, 11-20, 21-30 and, if
// levels is 2, a level-2 node over the first two.
func pyramidNodes(levels int) []strata.Node {
	var out []strata.Node
	for _, sp := range [][2]int64{{1, 10}, {11, 20}, {21, 30}} {
		out = append(out, strata.Node{ID: strata.NodeID(pyNS, pyConv, 1, sp[0], sp[1]), Level: 1,
			FirstSeq: sp[0], LastSeq: sp[1], Summary: fmt.Sprintf("span %d to %d", sp[0], sp[1])})
	}
	if levels == 2 {
		out = append(out, strata.Node{ID: strata.NodeID(pyNS, pyConv, 2, 1, 20), Level: 2, FirstSeq: 1, LastSeq: 20, Summary: "both"})
	}
	return out
}

// pyramidTiers moves 1-10 to warm, 11-20 to cold, 21-30 to warm then cold.
func pyramidTiers(t *testing.T, s *Store) {
	t.Helper()
	id := func(first, last int64) string { return strata.NodeID(pyNS, pyConv, 1, first, last) }
	if _, err := s.Demote(t.Context(), pyNS, pyConv, []string{id(1, 10), id(21, 30)}, strata.TierWarm, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Demote(t.Context(), pyNS, pyConv, []string{id(11, 20), id(21, 30)}, strata.TierCold, time.Now()); err != nil {
		t.Fatal(err)
	}
}

func pyramidTurns(t *testing.T, s *Store) []strata.Turn {
	t.Helper()
	ts, err := s.Turns(t.Context(), strata.TurnFilter{Namespace: pyNS, Conversation: pyConv})
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// sameAll fails unless got holds exactly want, byte for byte.
func sameAll(t *testing.T, what string, want, got []strata.Turn) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d turns, want %d", what, len(got), len(want))
	}
	for i := range want {
		if !spanfmt.SameTurn(&want[i], &got[i]) {
			t.Fatalf("%s: turn %d differs:\n got %+v\nwant %+v", what, want[i].Seq, got[i], want[i])
		}
	}
}

// archiveDir is the folder of the test conversation's segments.
func archiveDir(t *testing.T, s *Store) string {
	t.Helper()
	f, ok := s.seg.Blobs.(*archive.Files)
	if !ok {
		t.Fatalf("the store keeps its segments in %T, not files", s.seg.Blobs)
	}
	return archive.Dir(f.Root(), pyNS, pyConv)
}

// archived returns the seqs of every record in the conversation's
// segment files, failing on a seq found twice, and the record count the
// segments table holds.
func archived(t *testing.T, s *Store) (seqs map[int64]bool, table int64) {
	t.Helper()
	seqs = map[int64]bool{}
	dir := archiveDir(t, s)
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), archive.Ext) {
			continue
		}
		recs, err := archive.Read(filepath.Join(dir, e.Name()), math.MinInt64, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if seqs[r.Seq] {
				t.Fatalf("turn %d is archived twice", r.Seq)
			}
			seqs[r.Seq] = true
		}
	}
	if err := s.r.QueryRow(`SELECT coalesce(sum(records), 0) FROM segments`).Scan(&table); err != nil {
		t.Fatal(err)
	}
	return seqs, table
}

// checkSearchable fails unless every turn of want is a turn hit, whole.
func checkSearchable(t *testing.T, s *Store, want []strata.Turn) {
	t.Helper()
	for _, w := range want {
		hits, err := s.Search(t.Context(), strata.SearchQuery{Namespace: pyNS, Conversation: pyConv,
			Text: fmt.Sprintf("uniqword%d", w.Seq), Kind: strata.KindTurn})
		if err != nil || len(hits) != 1 || !spanfmt.SameTurn(hits[0].Turn, &w) {
			t.Fatalf("turn %d is not found whole by search: %d hits, %v", w.Seq, len(hits), err)
		}
	}
}

// checkReset fails unless the conversation is reset: no nodes, policy
// calendar, want as its turns, all hot and searchable, no archive left.
func checkReset(t *testing.T, s *Store, want []strata.Turn) {
	t.Helper()
	nodes, err := s.Nodes(t.Context(), strata.NodeFilter{Namespace: pyNS, Conversation: pyConv})
	if err != nil || len(nodes) != 0 {
		t.Fatalf("%d nodes left (%v)", len(nodes), err)
	}
	c, err := s.Conversation(t.Context(), pyNS, pyConv)
	if err != nil || c.Policy != "calendar" {
		t.Fatalf("policy %q (%v), want calendar", c.Policy, err)
	}
	sameAll(t, "Turns after the reset", want, pyramidTurns(t, s))
	checkSearchable(t, s, want)
	var stubs int
	s.r.QueryRow(`SELECT count(*) FROM turns WHERE tier <> 0 OR span IS NOT NULL`).Scan(&stubs)
	if stubs != 0 {
		t.Errorf("%d rows are not hot after the reset", stubs)
	}
	if seqs, table := archived(t, s); len(seqs) != 0 || table != 0 {
		t.Errorf("after the reset the archive holds %d records (the segments table says %d), want none", len(seqs), table)
	}
}

var errStopped = fmt.Errorf("stopped by the test")

// stopAt runs f with the hook set to stop it (by panicking) at point, and
// reports whether it stopped there.
func stopAt(point string, f func()) (stopped bool) {
	pyramidHook = func(p string) {
		if p == point {
			panic(errStopped)
		}
	}
	defer func() {
		pyramidHook = nil
		if r := recover(); r != nil {
			if r != errStopped {
				panic(r)
			}
			stopped = true
		}
	}()
	f()
	return false
}

// TestResetPyramidKillWindow stops ResetPyramid right after its commit,
// before it cleans the archive: the stale records left for turns hot
// again confuse nothing, a later Demote to cold of the same turns
// rewrites them in place (no record twice), and the next ResetPyramid
// removes what is left.
func TestResetPyramidKillWindow(t *testing.T) {
	ctx := t.Context()
	s, want := openCorpus(t)
	if seqs, table := archived(t, s); len(seqs) != 20 || table != 20 {
		t.Fatalf("before: %d records archived (table %d), want 20", len(seqs), table)
	}
	if !stopAt("reset-committed", func() { s.ResetPyramid(ctx, pyNS, pyConv, "calendar") }) {
		t.Fatal("ResetPyramid did not reach its commit")
	}

	// In the window: the reset is done, the stale records are still there.
	nodes, err := s.Nodes(ctx, strata.NodeFilter{Namespace: pyNS, Conversation: pyConv})
	if err != nil || len(nodes) != 0 {
		t.Fatalf("in the window: %d nodes (%v), want none", len(nodes), err)
	}
	sameAll(t, "Turns in the window", want, pyramidTurns(t, s))
	checkSearchable(t, s, want)
	seqs, table := archived(t, s)
	if len(seqs) != 20 || table != 20 {
		t.Fatalf("in the window: %d stale records (table %d), want the 20 left", len(seqs), table)
	}
	st, err := s.Stats(ctx, pyNS)
	if err != nil {
		t.Fatal(err)
	}
	if st.Archive.Records != 20 || st.Tiers[tierHot].Turns != 30 || st.Tiers[tierCold].Turns != 0 {
		t.Errorf("in the window Stats = archive %+v, tiers %+v; want the 20 stale records counted, 30 hot turns", st.Archive, st.Tiers)
	}

	// A new pyramid; one span goes cold again: its records are rewritten
	// in place, the other span's stale records stay, nothing twice.
	if err := s.PutNodes(ctx, pyNS, pyConv, pyramidNodes(1)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Demote(ctx, pyNS, pyConv, []string{strata.NodeID(pyNS, pyConv, 1, 11, 20)}, strata.TierCold, time.Now()); err != nil {
		t.Fatal(err)
	}
	sameAll(t, "Turns after 11-20 went cold again", want, pyramidTurns(t, s))
	if seqs, table := archived(t, s); len(seqs) != 20 || table != 20 {
		t.Fatalf("after 11-20 went cold again: %d records (table %d), want 20", len(seqs), table)
	}
	// The cleanup keeps what a cold span owns and removes the rest.
	pk, err := conversationPK(ctx, s.r, pyNS, pyConv)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.scrubArchive(ctx, pyNS, pyConv, pk); err != nil {
		t.Fatal(err)
	}
	seqs, table = archived(t, s)
	if len(seqs) != 10 || table != 10 || !seqs[11] || !seqs[20] || seqs[21] {
		t.Fatalf("after the cleanup: records %v (table %d), want 11..20", seqs, table)
	}
	sameAll(t, "Turns after the cleanup", want, pyramidTurns(t, s))
	// The rest goes cold again; the records are exact.
	if _, err := s.Demote(ctx, pyNS, pyConv, []string{strata.NodeID(pyNS, pyConv, 1, 1, 10),
		strata.NodeID(pyNS, pyConv, 1, 21, 30)}, strata.TierCold, time.Now()); err != nil {
		t.Fatal(err)
	}
	sameAll(t, "Turns after every span went cold", want, pyramidTurns(t, s))
	if seqs, table := archived(t, s); len(seqs) != 30 || table != 30 {
		t.Fatalf("after every span went cold: %d records (table %d), want 30", len(seqs), table)
	}

	// Stopped again in the window, then reset once more: clean.
	if !stopAt("reset-committed", func() { s.ResetPyramid(ctx, pyNS, pyConv, "sessions") }) {
		t.Fatal("ResetPyramid did not reach its commit")
	}
	if n, err := s.ResetPyramid(ctx, pyNS, pyConv, "calendar"); err != nil || n != 0 {
		t.Fatalf("ResetPyramid after the window = %d, %v; want 0 nodes removed", n, err)
	}
	checkReset(t, s, want)
	entries, _ := os.ReadDir(archiveDir(t, s))
	for _, e := range entries {
		if e.IsDir() && e.Name() == ".tmp" {
			temps, _ := os.ReadDir(filepath.Join(archiveDir(t, s), e.Name()))
			for _, tmp := range temps {
				t.Errorf("temp %s is left in the archive folder", tmp.Name())
			}
			continue // the archive's temp folder, empty
		}
		t.Errorf("%s is left in the archive folder", e.Name())
	}
}

// TestResetPyramidRefusesCorruptCopy checks that a warm block that does
// not decode stops the reset, naming its node, and changes nothing.
func TestResetPyramidRefusesCorruptCopy(t *testing.T) {
	ctx := t.Context()
	s, want := openCorpus(t)
	id := strata.NodeID(pyNS, pyConv, 1, 1, 10)
	var block []byte
	if err := s.w.QueryRow(`SELECT block FROM nodes WHERE id = ?`, id).Scan(&block); err != nil {
		t.Fatal(err)
	}
	bad := append([]byte(nil), block...)
	bad[len(bad)/2] ^= 0xff
	if _, err := s.w.Exec(`UPDATE nodes SET block = ? WHERE id = ?`, bad, id); err != nil {
		t.Fatal(err)
	}
	_, err := s.ResetPyramid(ctx, pyNS, pyConv, "calendar")
	if err == nil || !strings.Contains(err.Error(), id) {
		t.Fatalf("ResetPyramid over a corrupt block = %v, want an error naming node %s", err, id)
	}
	if _, err := s.w.Exec(`UPDATE nodes SET block = ? WHERE id = ?`, block, id); err != nil {
		t.Fatal(err)
	}
	sameAll(t, "Turns after a refused reset", want, pyramidTurns(t, s))
	if nodes, _ := s.Nodes(ctx, strata.NodeFilter{Namespace: pyNS, Conversation: pyConv}); len(nodes) != 4 {
		t.Errorf("a refused reset left %d nodes, want 4", len(nodes))
	}
	if seqs, _ := archived(t, s); len(seqs) != 20 {
		t.Errorf("a refused reset left %d records, want 20", len(seqs))
	}
}

const (
	envKillPoint = "STRATA_PYRAMID_KILL_POINT"
	envKillDB    = "STRATA_PYRAMID_KILL_DB"
	envKillOp    = "STRATA_PYRAMID_KILL_OP"
)

// pyramidOp is what the killed child runs: a reset, or the unpinning of a
// pinned turn of a cold span (5 is pinned in a warm span; 15 was pinned
// while cold).
func pyramidOp(ctx context.Context, s *Store, op string) error {
	switch op {
	case "reset":
		_, err := s.ResetPyramid(ctx, pyNS, pyConv, "calendar")
		return err
	case "unpin":
		_, err := s.SetImportance(ctx, pyNS, pyConv, 15, 0.3)
		return err
	case "replace":
		// The warm span 1-10, the cold span 11-20 and the node above them
		// become one span 1-20, as a reopened period does.
		_, err := s.ReplaceNodes(ctx, pyNS, pyConv, replacedIDs(), []strata.Node{replacement()})
		return err
	}
	return fmt.Errorf("unknown op %q", op)
}

func replacedIDs() []string {
	return []string{strata.NodeID(pyNS, pyConv, 1, 1, 10), strata.NodeID(pyNS, pyConv, 1, 11, 20), strata.NodeID(pyNS, pyConv, 2, 1, 20)}
}

func replacement() strata.Node {
	return strata.Node{ID: strata.NodeID(pyNS, pyConv, 1, 1, 20), Level: 1, FirstSeq: 1, LastSeq: 20, Summary: "span 1 to 20"}
}

// TestPyramidKillChild runs one op of TestPyramidKilled and kills its own
// process at the point named.
func TestPyramidKillChild(t *testing.T) {
	point := os.Getenv(envKillPoint)
	if point == "" {
		t.Skip("run by TestPyramidKilled")
	}
	s, err := Open(t.Context(), os.Getenv(envKillDB))
	if err != nil {
		t.Fatal(err)
	}
	pyramidHook = func(p string) {
		if p == point {
			if proc, err := os.FindProcess(os.Getpid()); err == nil {
				proc.Kill()
			}
			select {}
		}
	}
	if err := pyramidOp(t.Context(), s, os.Getenv(envKillOp)); err != nil {
		t.Fatal(err)
	}
	fmt.Println("finished without reaching", point)
}

// TestPyramidKilled kills a process in the middle of ResetPyramid and of
// SetImportance at each point where a kill could matter, then checks that
// the store lost and duplicated nothing, and that running the op again
// finishes it.
func TestPyramidKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	for _, tc := range []struct{ op, point string }{
		{"reset", "reset-restored"},  // before the commit
		{"reset", "reset-committed"}, // after the commit, before the cleanup
		{"reset", "scrubbed"},        // in the cleanup, one segment rewritten
		{"unpin", "importance-archived"},
		{"unpin", "importance-written"},
		{"replace", "replace-removed"},   // before the commit
		{"replace", "replace-committed"}, // after the commit, before the cleanup
	} {
		t.Run(tc.op+"/"+tc.point, func(t *testing.T) {
			ctx := t.Context()
			path := filepath.Join(t.TempDir(), "t.db")
			s, err := Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			want := pyramidCorpus(t, s)
			s.Close()

			cmd := exec.Command(os.Args[0], "-test.run=^TestPyramidKillChild$", "-test.count=1", "-test.v")
			cmd.Env = append(os.Environ(), envKillPoint+"="+tc.point, envKillDB+"="+path, envKillOp+"="+tc.op)
			out, err := cmd.CombinedOutput()
			if err == nil || strings.Contains(string(out), "finished without reaching") || strings.Contains(string(out), "--- ") {
				t.Fatalf("child not killed at %s: %v\n%s", tc.point, err, out)
			}

			s, err = Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			var ok string
			if err := s.r.QueryRow(`PRAGMA integrity_check`).Scan(&ok); err != nil || ok != "ok" {
				t.Fatalf("integrity check after the kill: %q %v", ok, err)
			}
			sameAll(t, "Turns after the kill", want, pyramidTurns(t, s))
			// The segments table describes the files, except after a kill
			// in the cleanup: records already removed are still counted
			// until the next cleanup.
			seqs, table := archived(t, s)
			if int64(len(seqs)) != table && (tc.point != "scrubbed" || int64(len(seqs)) > table) {
				t.Errorf("after the kill the segments table counts %d records, the files hold %d", table, len(seqs))
			}
			if tc.op == "replace" {
				checkReplaceKilled(t, s, want, tc.point)
				return
			}
			if err := pyramidOp(ctx, s, tc.op); err != nil {
				t.Fatalf("running %s again: %v", tc.op, err)
			}
			if tc.op == "reset" {
				checkReset(t, s, want)
				return
			}
			want[14].Importance = 0.3
			sameAll(t, "Turns after the unpin", want, pyramidTurns(t, s))
			if seqs, table := archived(t, s); len(seqs) != 20 || table != 20 {
				t.Errorf("after the unpin: %d records (table %d), want 20", len(seqs), table)
			}
			// Cold, the turn stays findable by its own words, once.
			hits, err := s.Search(ctx, strata.SearchQuery{Namespace: pyNS, Conversation: pyConv, Text: "uniqword15", Kind: strata.KindTurn})
			if err != nil || len(hits) != 1 || hits[0].Turn.Seq != 15 || hits[0].Turn.Importance != 0.3 {
				t.Errorf("the turn unpinned in a cold span: %d hits (%+v), %v; want it once, with its new importance", len(hits), hits, err)
			}
			ftsIntact(t, s, "after the unpin")
		})
	}
}

// checkReplaceKilled checks a store whose ReplaceNodes was killed at
// point: before the commit nothing changed and running it again works;
// after it, the new span is whole and hot, and when it goes cold the
// records the kill left behind are rewritten in place, none twice.
func checkReplaceKilled(t *testing.T, s *Store, want []strata.Turn, point string) {
	t.Helper()
	ctx := t.Context()
	nodes, err := s.Nodes(ctx, strata.NodeFilter{Namespace: pyNS, Conversation: pyConv})
	if err != nil {
		t.Fatal(err)
	}
	var spans []string
	for _, n := range nodes {
		spans = append(spans, fmt.Sprintf("%d:%d-%d", n.Level, n.FirstSeq, n.LastSeq))
	}
	if point == "replace-removed" {
		if got := strings.Join(spans, " "); got != "1:1-10 1:11-20 1:21-30 2:1-20" {
			t.Fatalf("after a kill before the commit the nodes are %s, want the four of before", got)
		}
		if err := pyramidOp(ctx, s, "replace"); err != nil {
			t.Fatalf("running replace again: %v", err)
		}
	} else if got := strings.Join(spans, " "); got != "1:1-20 1:21-30" {
		t.Fatalf("after a kill past the commit the nodes are %s, want 1:1-20 1:21-30", got)
	}
	sameAll(t, "Turns after the replacement", want, pyramidTurns(t, s))
	checkSearchable(t, s, want[:20]) // 21-30 stays cold
	if _, err := s.Demote(ctx, pyNS, pyConv, []string{replacement().ID}, strata.TierCold, time.Now()); err != nil {
		t.Fatal(err)
	}
	sameAll(t, "Turns after the new span went cold", want, pyramidTurns(t, s))
	if seqs, table := archived(t, s); len(seqs) != 30 || table != 30 {
		t.Errorf("after the new span went cold: %d records (table %d), want 30", len(seqs), table)
	}
}

// TestColdRowsLeaveTheirRole: a cold row leaves its role to its segment
// and reads whole through it; when its span expires the row takes its
// role back, since the row is then all that is left of the turn; a span
// whose segment was removed by hand expires anyway.
func TestColdRowsLeaveTheirRole(t *testing.T) {
	ctx := t.Context()
	s, want := openCorpus(t)
	roleOf := func(seq int64) strata.Role {
		switch (seq - 1) % 4 {
		case 1:
			return strata.RoleAssistant
		case 2:
			return strata.RoleTool
		}
		return strata.RoleUser
	}
	var cold, withRole int
	if err := s.r.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(role <> ''), 0) FROM turns WHERE tier = ?`, tierCold).
		Scan(&cold, &withRole); err != nil {
		t.Fatal(err)
	}
	if cold == 0 || withRole != 0 {
		t.Fatalf("%d cold rows, %d of them with a role; want some, none", cold, withRole)
	}
	for _, tr := range want {
		if tr.Role != roleOf(tr.Seq) {
			t.Fatalf("turn %d reads as %q, want %q", tr.Seq, tr.Role, roleOf(tr.Seq))
		}
	}
	// 11-20 expires with its segment in place, 21-30 without.
	for _, first := range []int64{11, 21} {
		if first == 21 {
			for _, p := range spanOf(t, s, 21, 30).Periods {
				if err := os.Remove(s.seg.Blobs.Locate(archive.Key(pyNS, pyConv, p))); err != nil {
					t.Fatal(err)
				}
			}
		}
		if _, err := s.Expire(ctx, pyNS, pyConv, []string{strata.NodeID(pyNS, pyConv, 1, first, first+9)}, "test", time.Now(), false); err != nil {
			t.Fatalf("expiring %d-%d: %v", first, first+9, err)
		}
	}
	got, err := s.Turns(ctx, strata.TurnFilter{Namespace: pyNS, Conversation: pyConv, FromSeq: 11, ToSeq: 30, WithExpired: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range got {
		pinned := tr.Seq == 15
		switch {
		case tr.Seq <= 20 && tr.Role != roleOf(tr.Seq):
			t.Fatalf("expired turn %d has role %q, want %q", tr.Seq, tr.Role, roleOf(tr.Seq))
		case tr.Seq > 20 && !pinned && tr.Content != "":
			t.Fatalf("expired turn %d kept its content", tr.Seq)
		}
	}
}

// spanOf reads the level-1 span first-last of the pyramid corpus.
func spanOf(t *testing.T, s *Store, first, last int64) span {
	t.Helper()
	sp, err := scanSpan(s.r.QueryRowContext(t.Context(), `SELECT `+spanCols+` FROM nodes WHERE id = ?`,
		strata.NodeID(pyNS, pyConv, 1, first, last)))
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

// TestFullMonthTakesDaySegments: once a month's segment holds
// spanfmt.MaxMonthBytes, the spans of that month going cold go to day
// segments; every turn reads back whole, and pins and expiry work on
// both kinds of span.
func TestFullMonthTakesDaySegments(t *testing.T) {
	ctx := t.Context()
	old := spanfmt.MaxMonthBytes
	spanfmt.MaxMonthBytes = 1 // any month segment is full
	defer func() { spanfmt.MaxMonthBytes = old }()
	s, want := openCorpus(t) // 11-20 and 21-30 went cold in one move: their month
	id := func(first int64) string { return strata.NodeID(pyNS, pyConv, 1, first, first+9) }
	if got := spanOf(t, s, 11, 20).Periods; !slices.Equal(got, []string{"2024-03"}) {
		t.Fatalf("span 11-20 names %q, want its month", got)
	}
	// 1-10 goes cold in a move of its own: its month's segment is full.
	if _, err := s.Demote(ctx, pyNS, pyConv, []string{id(1)}, strata.TierCold, time.Now()); err != nil {
		t.Fatal(err)
	}
	days := spanOf(t, s, 1, 10).Periods
	if len(days) < 2 || slices.ContainsFunc(days, func(p string) bool { return len(p) != len("2024-03-01") }) {
		t.Fatalf("span 1-10 names %q, want its days", days)
	}
	got := pyramidTurns(t, s)
	if len(got) != len(want) {
		t.Fatalf("%d turns, want %d", len(got), len(want))
	}
	for i := range want {
		if !spanfmt.SameTurn(&got[i], &want[i]) {
			t.Fatalf("turn %d reads %+v, want %+v", want[i].Seq, got[i], want[i])
		}
	}
	// A pin and an unpin in the day-segment span keep it in its days.
	if _, err := s.SetImportance(ctx, pyNS, pyConv, 3, 0.9); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetImportance(ctx, pyNS, pyConv, 3, 0.1); err != nil {
		t.Fatal(err)
	}
	if got := spanOf(t, s, 1, 10).Periods; !slices.Equal(got, days) {
		t.Fatalf("after a pin and an unpin, span 1-10 names %q, want %q", got, days)
	}
	turns, err := s.Turns(ctx, strata.TurnFilter{Namespace: pyNS, Conversation: pyConv, FromSeq: 1, ToSeq: 10})
	if err != nil || len(turns) != 10 || turns[2].Content != want[2].Content {
		t.Fatalf("turns 1-10 after the pin and unpin: %d, %v", len(turns), err)
	}
	if _, err := s.Expire(ctx, pyNS, pyConv, []string{id(1)}, "test", time.Now(), false); err != nil {
		t.Fatal(err)
	}
	for _, p := range days {
		if _, err := os.Stat(s.seg.Blobs.Locate(archive.Key(pyNS, pyConv, p))); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("day segment %s after its only span expired: %v", p, err)
		}
	}
}
