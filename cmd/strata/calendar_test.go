package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/internal/synth"
	"github.com/strata-memory/strata/sqlite"
)

type calTree struct {
	Levels []struct {
		Level     int    `json:"level"`
		Name      string `json:"name"`
		Nodes     int    `json:"nodes"`
		OpenTurns int64  `json:"open_turns"`
	} `json:"levels"`
	Counters map[string]int `json:"counters"`
	Nodes    []struct {
		ID       string `json:"id"`
		Level    int    `json:"level"`
		Key      string `json:"key"`
		FirstSeq int64  `json:"first_seq"`
		LastSeq  int64  `json:"last_seq"`
	} `json:"nodes"`
}

func calTreeOf(t *testing.T, db, conv string) calTree {
	t.Helper()
	var tr calTree
	if err := json.Unmarshal([]byte(mustRun(t, db, "tree", "--conversation", conv, "--json")), &tr); err != nil {
		t.Fatal(err)
	}
	return tr
}

func (tr calTree) keys(level int) []string {
	var out []string
	for _, n := range tr.Nodes {
		if n.Level == level {
			out = append(out, n.Key)
		}
	}
	sort.Strings(out)
	return out
}

// TestLoCoMoCalendarAndSessions checks issue-level promises on the LoCoMo
// file: the calendar pyramid of conv-26, zoom to a day, a context for a
// question about a date, and the session pyramid of conv-41.
func TestLoCoMoCalendarAndSessions(t *testing.T) {
	file := os.Getenv("STRATA_LOCOMO")
	if file == "" {
		t.Skip("STRATA_LOCOMO names no LoCoMo file")
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "cal.db")
	mustRun(t, db, "import", "--format", "locomo", "--policy", "calendar", file)
	tr := calTreeOf(t, db, "conv-26")
	// One day node per session date (conv-26 has 19 sessions on 19 days).
	var sess struct {
		Items []struct {
			Start time.Time `json:"start"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, db, "zoom", "--conversation", "conv-26", "--from", "2023-01-01", "--to", "2023-12-31", "--json")), &sess); err != nil {
		t.Fatal(err)
	}
	dates := map[string]bool{}
	for _, it := range sess.Items {
		dates[it.Start.UTC().Format("2006-01-02")] = true
	}
	days := tr.keys(1)
	if len(days) != len(dates) || len(days) != 19 {
		t.Errorf("%d day nodes, %d session dates, want 19 of each: %v", len(days), len(dates), days)
	}
	for _, d := range days {
		if !dates[d] {
			t.Errorf("day node %s has no turns", d)
		}
	}
	if got := strings.Join(tr.keys(3), " "); got != "2023-05 2023-06 2023-07 2023-08 2023-09 2023-10" {
		t.Errorf("months %s", got)
	}
	if len(tr.keys(2)) < 10 {
		t.Errorf("weeks %v", tr.keys(2))
	}
	// zoom returns exactly session 1.
	var z struct {
		Items []struct {
			ExtID string `json:"ext_id"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, db, "zoom", "--conversation", "conv-26", "--date", "2023-05-08", "--json")), &z); err != nil {
		t.Fatal(err)
	}
	if len(z.Items) != 18 {
		t.Errorf("zoom 2023-05-08: %d turns, want session 1's 18", len(z.Items))
	}
	for i, it := range z.Items {
		if it.ExtID != fmt.Sprintf("D1:%d", i+1) {
			t.Errorf("zoom item %d is %s", i, it.ExtID)
		}
	}
	// A question about 25 May 2023 gets all 17 turns of that day raw.
	var pkg struct {
		Tokens int `json:"tokens"`
		Items  []struct {
			Kind  string `json:"kind"`
			ExtID string `json:"ext_id"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, db, "context", "--conversation", "conv-26", "--budget", "3000", "--json",
		"--query", "what did Melanie tell Caroline on 25 May 2023?")), &pkg); err != nil {
		t.Fatal(err)
	}
	got := 0
	for _, it := range pkg.Items {
		if it.Kind == "turn" && strings.HasPrefix(it.ExtID, "D2:") {
			got++
		}
	}
	if got != 17 || pkg.Tokens > 3000 {
		t.Errorf("context: %d of the 17 turns of 25 May 2023, %d tokens", got, pkg.Tokens)
	}

	// The session pyramid of conv-41: 32 sessions, 4 cores, no sphere.
	sdb := filepath.Join(dir, "sessions.db")
	mustRun(t, sdb, "import", "--format", "locomo", "--policy", "sessions", file)
	st := calTreeOf(t, sdb, "conv-41")
	counts := map[string]int{}
	for _, l := range st.Levels {
		counts[l.Name] = l.Nodes
	}
	if counts["session"] != 32 || counts["core"] != 4 || counts["sphere"] != 0 {
		t.Errorf("conv-41 levels %v", counts)
	}
	if st.Counters["session_seq"] != 0 || st.Counters["core_seq"] != 4 || st.Counters["sphere_seq"] != 0 {
		t.Errorf("conv-41 counters %v", st.Counters)
	}
	// A conversation cannot be imported again under another policy.
	if _, _, err := run(t, sdb, "", "import", "--format", "locomo", "--policy", "calendar", file); strata.ErrorCode(err) != strata.ECONFLICT {
		t.Errorf("import under another policy: %v", err)
	}
	// Moving it rebuilds the pyramid: the same as a calendar import.
	out := mustRun(t, sdb, "policy", "set", "--conversation", "conv-26", "calendar")
	if !strings.Contains(out, "policy sessions -> calendar: 21 nodes removed, 38 made") {
		t.Errorf("policy set: %s", out)
	}
	if a, b := calTreeOf(t, sdb, "conv-26"), calTreeOf(t, db, "conv-26"); fmt.Sprint(a.Nodes) != fmt.Sprint(b.Nodes) {
		t.Errorf("after policy set, the tree differs from a calendar import")
	}
}

// TestZoomPinPolicyCommands runs the new commands on synthetic turns.
func TestZoomPinPolicyCommands(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	file := writeJSONL(t, dir, "c", 300)
	mustRun(t, db, "import", "--policy", "calendar", "--tz", "Europe/Berlin", file)
	tr := calTreeOf(t, db, "c")
	if len(tr.keys(1)) == 0 {
		t.Fatal("no day nodes")
	}
	day := tr.keys(1)[0]
	var z struct {
		Period string `json:"period"`
		Items  []struct {
			FirstSeq int64 `json:"first_seq"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, db, "zoom", "--conversation", "c", "--date", day, "--json")), &z); err != nil {
		t.Fatal(err)
	}
	var first struct{ FirstSeq, LastSeq int64 }
	for _, n := range tr.Nodes {
		if n.Level == 1 && n.Key == day {
			first.FirstSeq, first.LastSeq = n.FirstSeq, n.LastSeq
		}
	}
	if int64(len(z.Items)) != first.LastSeq-first.FirstSeq+1 || z.Period != day {
		t.Errorf("zoom %s: %d turns, the day node covers %d-%d", day, len(z.Items), first.FirstSeq, first.LastSeq)
	}
	for _, bad := range [][]string{
		{"zoom", "--conversation", "c"},
		{"zoom", "--conversation", "c", "--date", "2023-W01"},
		{"zoom", "--conversation", "c", "--date", "yesterday"},
		{"zoom", "--conversation", "c", "--from", "2023-01-01"},
		{"pin", "--conversation", "c"},
		{"policy", "set", "--conversation", "c"},
		{"import", "--tz", "Mars/Olympus", file},
	} {
		if _, _, err := run(t, db, "", bad...); err == nil {
			t.Errorf("strata %s: no error", strings.Join(bad, " "))
		}
	}
	out := mustRun(t, db, "pin", "--conversation", "c", "--seq", "5")
	if !strings.Contains(out, "importance 1, pinned") {
		t.Errorf("pin: %s", out)
	}
	out = mustRun(t, db, "pin", "--conversation", "c", "--day", day)
	if !strings.Contains(out, "marked important") {
		t.Errorf("pin --day: %s", out)
	}
	out = mustRun(t, db, "policy", "show", "--conversation", "c")
	if !strings.Contains(out, "one per day") || !strings.Contains(out, "window 168h0m0s") {
		t.Errorf("policy show: %s", out)
	}
}

// TestConcurrentRollupProcesses runs two `strata rollup` processes over the
// same backlog at once: the pyramid has no duplicate node and equals that
// of one process.
func TestConcurrentRollupProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	backlog := func(db string) {
		ctx := context.Background()
		st, err := sqlite.Open(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		for _, conv := range []string{"a", "b", "c"} {
			if _, err := st.EnsureConversation(ctx, strata.Conversation{Namespace: strata.DefaultNamespace, ID: conv, Policy: "calendar"}); err != nil {
				t.Fatal(err)
			}
			turns := synth.New(7).Turns(3000)
			session, prev := 0, ""
			for i := range turns {
				if turns[i].SessionLabel != prev {
					session, prev = session+1, turns[i].SessionLabel
				}
				turns[i].Session = session
				turns[i].Tokens = strata.CharEstimator{}.Count(turns[i].Content)
			}
			if _, err := st.AppendTurns(ctx, strata.DefaultNamespace, conv, turns); err != nil {
				t.Fatal(err)
			}
		}
	}
	one, two := filepath.Join(dir, "one.db"), filepath.Join(dir, "two.db")
	backlog(one)
	copyStoreFile(t, one, two) // the same backlog
	mustRun(t, one, "rollup")
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "rollup")
			cmd.Env = childEnv("STRATA_DB=" + two)
			out, err := cmd.CombinedOutput()
			if err != nil {
				errs[i] = fmt.Errorf("%v: %s", err, out)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, conv := range []string{"a", "b", "c"} {
		a, b := calTreeOf(t, one, conv), calTreeOf(t, two, conv)
		seen := map[string]bool{}
		for _, n := range b.Nodes {
			k := fmt.Sprint(n.Level, n.FirstSeq, n.LastSeq)
			if seen[k] || seen[n.ID] {
				t.Fatalf("%s: node %s (level %d, %d-%d) twice", conv, n.ID, n.Level, n.FirstSeq, n.LastSeq)
			}
			seen[k], seen[n.ID] = true, true
		}
		if fmt.Sprint(a.Nodes) != fmt.Sprint(b.Nodes) || len(a.Nodes) < 100 {
			t.Errorf("%s: %d nodes after two processes, %d after one", conv, len(b.Nodes), len(a.Nodes))
		}
	}
}
