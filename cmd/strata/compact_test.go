package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-memory/strata/compact"
	"github.com/strata-memory/strata/compact/checkpoint"
)

// compactOut is the --json wrapper of strata compact.
type compactOut struct {
	Stats    compact.Stats   `json:"stats"`
	Messages json.RawMessage `json:"messages"`
}

func readAgent(t *testing.T, provider string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "agent-"+provider+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCompactCLI: both providers compact a generated agent transcript; with
// --conversation the span lands in the conversation's turns and the state
// is kept, so a second run merges into the first checkpoint.
func TestCompactCLI(t *testing.T) {
	for _, p := range []string{"openai", "anthropic"} {
		t.Run(p, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "s.db")
			in := readAgent(t, p)
			out, errs, err := run(t, db, in, "compact", "--provider", p, "--conversation", "agent", "--json",
				"--threshold", "20000", "--keep-recent-tokens", "4000")
			if err != nil {
				t.Fatalf("compact: %v\n%s", err, errs)
			}
			var res compactOut
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatalf("compact --json printed no JSON: %v\n%.300s", err, out)
			}
			s := res.Stats
			if !s.Compacted || s.MessagesCompacted == 0 || s.TokensAfter >= s.TokensBefore || s.IdentifiersKept == 0 ||
				s.Mode != "extractive" || s.CompactionCount != 1 || s.TurnsRemembered != s.MessagesCompacted {
				t.Fatalf("stats %+v: want a compaction with identifiers, its span remembered", s)
			}
			if !strings.Contains(string(res.Messages), "Previous conversation summary") {
				t.Fatalf("the compacted list has no summary pair: %.300s", res.Messages)
			}
			list := mustRun(t, db, "list", "--json")
			if !strings.Contains(list, `"agent"`) {
				t.Fatalf("conversation agent not listed after compact:\n%s", list)
			}

			// The compacted list, compacted again with a smaller window,
			// merges into the checkpoint the first run kept.
			again, errs, err := run(t, db, string(res.Messages), "compact", "--provider", p, "--conversation", "agent",
				"--json", "--force", "--threshold", "20000", "--keep-recent-tokens", "1000")
			if err != nil {
				t.Fatalf("second compact: %v\n%s", err, errs)
			}
			var res2 compactOut
			if err := json.Unmarshal([]byte(again), &res2); err != nil {
				t.Fatal(err)
			}
			if !res2.Stats.Compacted || !res2.Stats.Update || res2.Stats.CompactionCount != 2 {
				t.Fatalf("second run stats %+v: want an update, compaction 2", res2.Stats)
			}
		})
	}
}

// TestCompactCLIStdout: without --json the list goes to stdout as the
// provider's JSON and --stats writes the statistics on stderr; without
// --conversation nothing is stored.
func TestCompactCLIStdout(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s.db")
	out, errs, err := run(t, db, readAgent(t, "openai"), "compact", "--stats", "--threshold", "20000", "--keep-recent-tokens", "4000")
	if err != nil {
		t.Fatalf("compact: %v\n%s", err, errs)
	}
	var msgs []map[string]any
	if err := json.Unmarshal([]byte(out), &msgs); err != nil || len(msgs) == 0 {
		t.Fatalf("stdout is not an OpenAI message list: %v\n%.300s", err, out)
	}
	var st compact.Stats
	if err := json.Unmarshal([]byte(errs), &st); err != nil || !st.Compacted {
		t.Fatalf("stderr is not the statistics of a compaction: %v\n%s", err, errs)
	}
	if _, err := os.Stat(db); err == nil {
		t.Fatal("compact without --conversation created the database")
	}
}

// TestCompactCLIErrors: bad input names the message and field; a failing
// hook aborts before anything is remembered; bad thresholds name the flag.
func TestCompactCLIErrors(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s.db")
	_, _, err := run(t, db, `[{"role":"user","content":"hi"},{"role":"tool","content":"x"}]`, "compact", "--conversation", "c")
	if err == nil || !strings.Contains(err.Error(), "messages[1]") {
		t.Fatalf("a tool message without tool_call_id: %v; want an error naming messages[1]", err)
	}
	_, _, err = run(t, db, readAgent(t, "openai"), "compact", "--conversation", "c", "--force", "--keep-recent-tokens", "4000",
		"--hook", "exit 3")
	if err == nil || !strings.Contains(err.Error(), "hook") {
		t.Fatalf("a failing hook: %v; want the compaction aborted", err)
	}
	if out := mustRun(t, db, "list", "--json"); strings.Contains(out, `"c"`) {
		t.Fatalf("an aborted compaction remembered its span:\n%s", out)
	}
	_, _, err = run(t, db, readAgent(t, "openai"), "compact", "--tool-soft-trim-chars", "100")
	if err == nil || !strings.Contains(err.Error(), "tool_soft_trim") {
		t.Fatalf("soft-trim chars below head + tail: %v; want an error naming the setting", err)
	}
	if _, _, err = run(t, db, "[]", "compact", "--provider", "gemini"); err == nil {
		t.Fatal("an unknown provider was accepted")
	}
}

// TestCompactHookFailureKeepsInput: when --hook fails, the input list is
// written to standard output unchanged, so that an agent piping its
// messages through strata compact never receives an empty list; the error
// goes to standard error (exit status 1), and nothing is stored.
func TestCompactHookFailureKeepsInput(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s.db")
	in := readAgent(t, "openai")
	for _, extra := range [][]string{nil, {"--conversation", "c"}, {"--json"}} {
		args := append([]string{"compact", "--force", "--keep-recent-tokens", "4000", "--hook", "echo broken >&2; exit 3"}, extra...)
		out, errs, err := run(t, db, in, args...)
		if err == nil || !strings.Contains(err.Error(), "hook") {
			t.Fatalf("%v: a failing hook: %v; want an error naming the hook", extra, err)
		}
		if out != in {
			t.Fatalf("%v: standard output is not the input unchanged (%d bytes, input %d):\n%.200s", extra, len(out), len(in), out)
		}
		if !strings.Contains(errs, "broken") {
			t.Fatalf("%v: the hook's own output is not on standard error: %q", extra, errs)
		}
	}
	if out := mustRun(t, db, "list", "--json"); strings.Contains(out, `"c"`) {
		t.Fatalf("an aborted compaction remembered its span:\n%s", out)
	}
}

// TestCompactClearDigestFlag: hard-cleared results keep a digest line by
// default; --no-clear-digest (or STRATA_TOOL_CLEAR_DIGEST=false) leaves
// the bare placeholder.
func TestCompactClearDigestFlag(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s.db")
	in := readAgent(t, "openai")
	out, errs, err := run(t, db, in, "compact", "--threshold", "1000000", "--keep-recent-tokens", "4000", "--stats")
	if err != nil {
		t.Fatalf("compact: %v\n%s", err, errs)
	}
	if !strings.Contains(out, checkpoint.DigestPrefix) {
		t.Fatalf("no cleared result kept a digest:\n%.400s", out)
	}
	out, errs, err = run(t, db, in, "compact", "--threshold", "1000000", "--keep-recent-tokens", "4000", "--no-clear-digest", "--stats")
	if err != nil {
		t.Fatalf("compact --no-clear-digest: %v\n%s", err, errs)
	}
	if strings.Contains(out, checkpoint.DigestPrefix) || !strings.Contains(out, "Tool output cleared") {
		t.Fatalf("--no-clear-digest: want bare placeholders:\n%.400s", out)
	}
}

// TestCompactFromStore compacts an imported Claude Code session from the
// store: the list comes from its turns, nothing is appended to them, the
// checkpoint is kept, and the next run starts after it.
func TestCompactFromStore(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s.db")
	file := filepath.Join("..", "..", "formats", "testdata", "claude", "projects", "-home-ana-shop", "5a1e0c2b-7d4f-4b8e-9c3a-2f6d8e1b0a94.jsonl")
	mustRun(t, db, "import", file)
	turns := func() int {
		var st struct{ Turns int }
		json.Unmarshal([]byte(mustRun(t, db, "stats", "--conversation=-home-ana-shop", "--json")), &st)
		return st.Turns
	}
	before := turns()
	args := []string{"compact", "--conversation=-home-ana-shop", "--from-store", "--force", "--keep-recent-tokens", "10", "--keep-last-tool-results", "0", "--stats"}
	out, errs, err := run(t, db, "", args...)
	if err != nil {
		t.Fatalf("compact --from-store: %v\n%s", err, errs)
	}
	var st compact.Stats
	if err := json.Unmarshal([]byte(errs), &st); err != nil || !st.Compacted || st.MessagesCompacted == 0 || st.TurnsRemembered != 0 {
		t.Fatalf("stats: %+v, %v\n%s", st, err, errs)
	}
	tr, err := compact.Parse(compact.OpenAI, []byte(out))
	if err != nil {
		t.Fatalf("the compacted list: %v\n%s", err, out)
	}
	if !strings.HasPrefix(tr.Messages[0].Text(), compact.SummaryPrefix) || !strings.Contains(out, "checkout") {
		t.Fatalf("the compacted list does not open with the checkpoint:\n%s", out)
	}
	if after := turns(); after != before || before == 0 {
		t.Fatalf("turns %d before, %d after: the stored span was appended again", before, after)
	}
	// Again: it starts after the checkpoint and finds nothing to compact.
	out2, errs, err := run(t, db, "", args...)
	if err != nil {
		t.Fatalf("second compact: %v\n%s", err, errs)
	}
	json.Unmarshal([]byte(errs), &st)
	if st.Compacted || out2 != out {
		t.Fatalf("second run compacted %v, list equal %v:\n%s", st.Compacted, out2 == out, out2)
	}
	for _, bad := range []struct {
		args []string
		says string
	}{
		{[]string{"compact", "--from-store"}, "needs --conversation"},
		{[]string{"compact", "--conversation=nope", "--from-store"}, `"nope" not found`},
		{[]string{"compact", "--conversation=-home-ana-shop", "--from-store", "--provider", "anthropic"}, "OpenAI"},
	} {
		if _, _, err := run(t, db, "", bad.args...); err == nil || !strings.Contains(err.Error(), bad.says) {
			t.Fatalf("%v: %v, want an error saying %q", bad.args, err, bad.says)
		}
	}
}

// TestCompactFromStoreKeepsFailures checks that compact --from-store
// digests a stored result its tool reported as failed (is_error) as a
// failed one, though the OpenAI messages it compacts cannot say so: the
// failure reported only in words survives the clearing.
func TestCompactFromStoreKeepsFailures(t *testing.T) {
	dir := t.TempDir()
	db, file := filepath.Join(dir, "s.db"), filepath.Join(dir, "shards.jsonl")
	var shards strings.Builder
	for i := range 30 {
		fmt.Fprintf(&shards, "copied shards/s-%02d/part-%04d.dat\n", i, i*7)
	}
	shards.WriteString("shard s-31 copy failed: checksum differs at blk_7f3a9\n")
	line := func(v map[string]any) string { b, _ := json.Marshal(v); return string(b) + "\n" }
	var in strings.Builder
	in.WriteString(line(map[string]any{"conversation": "shards", "role": "user", "content": "copy the shards"}))
	for k := range 9 {
		id, cmd, out := fmt.Sprintf("c%d", k), "ls", strings.Repeat("y", 300)
		if k == 0 {
			cmd, out = "shardcp --all", shards.String()
		}
		in.WriteString(line(map[string]any{"conversation": "shards", "role": "assistant",
			"tool_calls": []any{map[string]any{"id": id, "name": "bash", "arguments": map[string]any{"cmd": cmd}}}}))
		in.WriteString(line(map[string]any{"conversation": "shards", "role": "tool",
			"tool_results": []any{map[string]any{"call_id": id, "content": out, "is_error": k == 0}}}))
	}
	in.WriteString(line(map[string]any{"conversation": "shards", "role": "assistant", "content": "done"}))
	if err := os.WriteFile(file, []byte(in.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, db, "import", file)
	out := mustRun(t, db, "compact", "--conversation=shards", "--from-store", "--keep-last-tool-results", "0")
	tr, err := compact.Parse(compact.OpenAI, []byte(out))
	if err != nil {
		t.Fatalf("the compacted list: %v\n%s", err, out)
	}
	for _, m := range tr.Messages {
		if m.IsToolResult() && strings.Contains(m.Text(), "shards/s-00") {
			if !strings.Contains(m.Text(), "blk_7f3a9") {
				t.Fatalf("the failed result's digest lacks its failure:\n%s", m.Text())
			}
			return
		}
	}
	t.Fatalf("no digest of the failed result in:\n%s", out)
}
