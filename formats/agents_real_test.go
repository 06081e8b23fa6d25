package formats

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

// readCounted reads every record of a file with auto detection, failing
// on any error, and returns the format, the records and the counts.
func readCounted(t *testing.T, path string) (string, []Record, Counts) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	peek := make([]byte, peekSize)
	n, _ := io.ReadFull(f, peek)
	format, err := Detect(peek[:n])
	if err != nil {
		t.Fatalf("%s: Detect: %v", path, err)
	}
	f.Seek(0, io.SeekStart)
	recs := readAll(t, Auto, path, f)
	return format, recs, recs2counts(t, path)
}

// recs2counts reads path again and returns the reader's counts.
func recs2counts(t *testing.T, path string) Counts {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd, err := Open(Auto, path, f)
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := rd.Next(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	c, ok := rd.(Counter)
	if !ok {
		t.Fatalf("%s: the reader does not count its records", path)
	}
	return c.Counts()
}

// TestAgentsReal reads the real transcripts of the folder STRATA_AGENTS
// names, checking figures counted by hand in the files.
func TestAgentsReal(t *testing.T) {
	dir := os.Getenv("STRATA_AGENTS")
	if dir == "" {
		t.Skip("STRATA_AGENTS is not set")
	}
	// Counted with jq: records by type, assistant records by message id,
	// user records by content (isMeta ones apart), response items by type.
	want := map[string]struct {
		format                        string
		records, kept, turns, skipped int
		assistant, user, tool, system int
		calls, errors                 int
		conversation                  string
	}{
		"claude_code_main.jsonl":      {ClaudeCode, 63, 46, 30, 17, 12, 7, 10, 1, 10, 2, "-workspace"},
		"claude_code_sidechain.jsonl": {ClaudeCode, 2, 2, 2, 0, 1, 1, 0, 0, 0, 0, "-workspace"},
		"claude_code_2.jsonl":         {ClaudeCode, 275, 258, 153, 17, 67, 10, 76, 0, 76, 5, "-Users-user-repo"},
		"codex_rollout_2.jsonl":       {Codex, 26, 10, 9, 16, 3, 1, 3, 2, 3, 0, "-Users-Nikita-Levyankov-repos-EPMCDME-codemie-ai-codemie-code"},
	}
	for name, w := range want {
		format, recs, c := readCounted(t, filepath.Join(dir, name))
		roles := map[string]int{}
		calls, errs := 0, 0
		open := map[string]bool{}
		for _, r := range recs {
			roles[string(r.Turn.Role)]++
			calls += len(r.Turn.ToolCalls)
			for _, c := range r.Turn.ToolCalls {
				open[c.ID] = true
			}
			for _, res := range r.Turn.ToolResults {
				if !open[res.CallID] || res.Name == "" {
					t.Errorf("%s: result %q answers no earlier call", name, res.CallID)
				}
				delete(open, res.CallID)
				if res.IsError {
					errs++
				}
			}
			if r.Turn.Time.IsZero() || r.Conversation != w.conversation {
				t.Errorf("%s line %d: time %v, conversation %q", name, r.Line, r.Turn.Time, r.Conversation)
			}
		}
		t.Logf("%s: %s, %d records, %d kept, %d turns, skipped %v; roles %v; %d calls, %d errors",
			name, format, c.Records, c.Kept, c.Turns, c.Skipped, roles, calls, errs)
		got := [...]int{c.Records, c.Kept, c.Turns, c.SkippedTotal(), roles["assistant"], roles["user"], roles["tool"], roles["system"], calls, errs}
		exp := [...]int{w.records, w.kept, w.turns, w.skipped, w.assistant, w.user, w.tool, w.system, w.calls, w.errors}
		if format != w.format || got != exp || len(recs) != w.turns {
			t.Errorf("%s: %s %v, want %s %v", name, format, got, w.format, exp)
		}
	}
}
