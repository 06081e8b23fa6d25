package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-memory/strata/internal/synth"
)

// run runs the CLI in-process against db and returns stdout, stderr and
// the error.
func run(t testing.TB, db string, stdin string, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	m := &Main{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb,
		Getenv: func(k string) string {
			switch k {
			case "STRATA_DB":
				return db
			case "STRATA_CONFIG":
				return ""
			}
			return ""
		}}
	err := m.Run(context.Background(), args)
	return out.String(), errb.String(), err
}

func mustRun(t *testing.T, db string, args ...string) string {
	t.Helper()
	out, errs, err := run(t, db, "", args...)
	if err != nil {
		t.Fatalf("strata %s: %v\n%s", strings.Join(args, " "), err, errs)
	}
	return out
}

// writeJSONL writes n synthetic turns of conversation conv as JSONL.
func writeJSONL(t *testing.T, dir, conv string, n int) string {
	t.Helper()
	var b strings.Builder
	for _, tr := range synth.New(3).Turns(n) {
		line, _ := json.Marshal(map[string]any{"conversation": conv, "session": tr.SessionLabel, "ext_id": tr.ExtID,
			"role": tr.Role, "name": tr.Name, "content": tr.Content, "time": tr.Time})
		b.Write(line)
		b.WriteByte('\n')
	}
	p := filepath.Join(dir, conv+".jsonl")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

type treeJSON struct {
	Conversation string `json:"conversation"`
	Turns        int64  `json:"turns"`
	Levels       []struct {
		Level     int    `json:"level"`
		Name      string `json:"name"`
		Nodes     int    `json:"nodes"`
		OpenTurns int64  `json:"open_turns"`
	} `json:"levels"`
	Nodes []struct {
		ID       string `json:"id"`
		Level    int    `json:"level"`
		FirstSeq int64  `json:"first_seq"`
		LastSeq  int64  `json:"last_seq"`
		Start    string `json:"start"`
		End      string `json:"end"`
		Tokens   int    `json:"tokens"`
		Summary  string `json:"summary"`
	} `json:"nodes"`
}

func TestImportTreeContextSearchExpand(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	file := writeJSONL(t, dir, "c1", 230)
	out := mustRun(t, db, "import", file)
	if !strings.Contains(out, "230 turns added") {
		t.Fatalf("import said:\n%s", out)
	}
	var tree treeJSON
	if err := json.Unmarshal([]byte(mustRun(t, db, "tree", "--conversation", "c1", "--json")), &tree); err != nil {
		t.Fatal(err)
	}
	if tree.Turns != 230 || len(tree.Levels) != 3 || tree.Levels[0].Name != "macro" || tree.Levels[0].Nodes != 2 || tree.Levels[0].OpenTurns != 30 {
		t.Fatalf("tree: %+v", tree.Levels)
	}
	// Re-import: every count unchanged.
	out = mustRun(t, db, "import", file)
	if !strings.Contains(out, "0 turns added, 230 already present, 0 nodes made") {
		t.Fatalf("re-import said:\n%s", out)
	}
	var tree2 treeJSON
	json.Unmarshal([]byte(mustRun(t, db, "tree", "--conversation", "c1", "--json")), &tree2)
	if fmt.Sprint(tree2) != fmt.Sprint(tree) {
		t.Fatal("tree changed after re-import")
	}

	var pkg struct {
		Budget int `json:"budget"`
		Tokens int `json:"tokens"`
		Items  []struct {
			Kind     string `json:"kind"`
			ExtID    string `json:"ext_id"`
			NodeID   string `json:"node_id"`
			FirstSeq int64  `json:"first_seq"`
			LastSeq  int64  `json:"last_seq"`
			Start    string `json:"start"`
			Text     string `json:"text"`
		} `json:"items"`
	}
	out = mustRun(t, db, "context", "--conversation", "c1", "--budget", "1500", "--json")
	if err := json.Unmarshal([]byte(out), &pkg); err != nil {
		t.Fatal(err)
	}
	if pkg.Tokens > 1500 || pkg.Budget != 1500 || len(pkg.Items) == 0 {
		t.Fatalf("context: tokens %d budget %d items %d", pkg.Tokens, pkg.Budget, len(pkg.Items))
	}
	if last := pkg.Items[len(pkg.Items)-1]; last.Kind != "turn" || last.FirstSeq != 230 || last.ExtID != "t230" || last.Start == "" {
		t.Fatalf("last item %+v", last)
	}
	out = mustRun(t, db, "search", "--conversation", "c1", "-k", "3", "--json", "garden")
	var hits struct {
		Hits []struct {
			Kind  string  `json:"kind"`
			Score float64 `json:"score"`
			Text  string  `json:"text"`
		} `json:"hits"`
	}
	if err := json.Unmarshal([]byte(out), &hits); err != nil || len(hits.Hits) == 0 || len(hits.Hits) > 3 {
		t.Fatalf("search: %v %s", err, out)
	}
	if !strings.Contains(strings.ToLower(hits.Hits[0].Text), "garden") {
		t.Fatalf("best hit %+v does not mention garden", hits.Hits[0])
	}
	out = mustRun(t, db, "expand", tree.Nodes[0].ID, "--json")
	var exp struct {
		Turns []struct {
			Seq int64 `json:"seq"`
		} `json:"turns"`
	}
	if err := json.Unmarshal([]byte(out), &exp); err != nil || len(exp.Turns) != 100 || exp.Turns[0].Seq != 1 {
		t.Fatalf("expand macro: %d turns (%v)", len(exp.Turns), err)
	}
	var st struct {
		Conversations int   `json:"conversations"`
		Turns         int64 `json:"turns"`
		Bytes         int64 `json:"bytes_on_disk"`
		Levels        []struct {
			Level int   `json:"level"`
			Nodes int64 `json:"nodes"`
		} `json:"levels"`
	}
	json.Unmarshal([]byte(mustRun(t, db, "stats", "--json")), &st)
	if st.Conversations != 1 || st.Turns != 230 || st.Bytes <= 0 || len(st.Levels) != 3 {
		t.Fatalf("stats: %+v", st)
	}
}

func TestImportBadInputImportsNothing(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	good := `{"conversation":"c","role":"user","content":"hello","time":"2024-01-01T10:00:00Z"}`
	cases := []struct {
		name, body, want string
	}{
		{"malformed", good + "\n{\"conversation\":\"c\",\"role\":\n", "bad.jsonl:2"},
		{"role", good + "\n" + `{"conversation":"c","role":"robot","content":"x"}` + "\n", `bad.jsonl:2: field "role"`},
		{"time", good + "\n" + `{"conversation":"c","role":"user","content":"x","time":"yesterday"}` + "\n", `bad.jsonl:2: field "time"`},
		{"utf8", good + "\n" + "{\"conversation\":\"c\",\"role\":\"user\",\"content\":\"a\xffb\"}\n", `bad.jsonl:2: field "content"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, "bad.jsonl")
			os.WriteFile(p, []byte(tc.body), 0o644)
			_, _, err := run(t, db, "", "import", p)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
			if _, _, err := run(t, db, "", "tree", "--conversation", "c"); err == nil || !strings.Contains(err.Error(), "not found") {
				t.Fatalf("conversation exists after a failed import (err %v)", err)
			}
		})
	}
	// --skip-invalid imports the rest and reports each skipped line.
	p := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(p, []byte(good+"\n"+`{"conversation":"c","role":"robot","content":"x"}`+"\n"+
		`{"conversation":"c","role":"assistant","content":"hi"}`+"\n"), 0o644)
	out, errs, err := run(t, db, "", "import", "--skip-invalid", p)
	if err != nil || !strings.Contains(out, "2 turns added") || !strings.Contains(errs, "bad.jsonl:2") {
		t.Fatalf("skip-invalid: err %v\nout %s\nerr %s", err, out, errs)
	}
}

func TestImportEdgeCases(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	empty := filepath.Join(dir, "empty.jsonl")
	os.WriteFile(empty, nil, 0o644)
	if out := mustRun(t, db, "import", empty); !strings.Contains(out, "0 conversations") {
		t.Fatalf("empty import: %s", out)
	}
	// A 10 MB turn imports whole, from standard input.
	big := strings.Repeat("0123456789abcdef ", 10<<20/17)
	line, _ := json.Marshal(map[string]any{"role": "user", "content": big})
	out, errs, err := run(t, db, string(line)+"\n", "import", "--conversation", "big", "-")
	if err != nil || !strings.Contains(out, "1 turns added") {
		t.Fatalf("big: %v %s %s", err, out, errs)
	}
	var s struct {
		ContentBytes int64 `json:"content_bytes"`
	}
	json.Unmarshal([]byte(mustRun(t, db, "stats", "--json")), &s)
	if s.ContentBytes != int64(len(big)) {
		t.Fatalf("content bytes %d, want %d", s.ContentBytes, len(big))
	}
	// Turns without a conversation need --conversation.
	nc := filepath.Join(dir, "nc.jsonl")
	os.WriteFile(nc, []byte(`{"role":"user","content":"x"}`+"\n"), 0o644)
	if _, _, err := run(t, db, "", "import", nc); err == nil || !strings.Contains(err.Error(), "conversation") {
		t.Fatalf("no conversation: err %v", err)
	}
}

func TestUsageErrors(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s.db")
	for _, args := range [][]string{{}, {"nope"}, {"tree"}, {"context", "--budget", "x"}, {"search", "--conversation", "c"}} {
		if _, _, err := run(t, db, "", args...); err == nil {
			t.Errorf("strata %v: no error", args)
		}
	}
}

func TestAddAndTokens(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s.db")
	out := mustRun(t, db, "add", "--conversation", "a", "--role", "user", "--time", "2024-02-03T04:05:06Z", "hello there")
	if !strings.Contains(out, "turn 1 added") {
		t.Fatalf("add: %s", out)
	}
	out, _, err := run(t, db, "hello world", "tokens")
	if err != nil || strings.TrimSpace(out) != "2" {
		t.Fatalf("tokens: %q %v", out, err)
	}
}

func TestDemo(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s.db")
	out := mustRun(t, db, "demo")
	for _, want := range []string{"130 turns read, 130 added", "macro", "# Memory of conversation demo"} {
		if !strings.Contains(out, want) {
			t.Fatalf("demo output lacks %q:\n%s", want, out)
		}
	}
	if out := mustRun(t, db, "demo"); !strings.Contains(out, "0 added, 130 already present") {
		t.Fatalf("second demo:\n%s", out)
	}
}

// TestImportOpenAIKeepsToolStructure imports an OpenAI messages file and
// reads the turns back: tool calls and results are structure, not text.
func TestImportOpenAIKeepsToolStructure(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s.db")
	mustRun(t, db, "import", filepath.Join("..", "..", "formats", "testdata", "openai.json"))
	var pkg struct {
		Items []struct {
			Kind  string `json:"kind"`
			ExtID string `json:"ext_id"`
			Text  string `json:"text"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, db, "context", "--conversation", "chat-7", "--budget", "2000", "--json")), &pkg); err != nil {
		t.Fatal(err)
	}
	if len(pkg.Items) != 6 {
		t.Fatalf("%d items, want the 6 messages", len(pkg.Items))
	}
	if !strings.Contains(pkg.Items[2].Text, "[tool call identify id=call_a]") || !strings.Contains(pkg.Items[3].Text, "[tool result id=call_a] a cat") {
		t.Fatalf("tool call and result not rendered from structure:\n%q\n%q", pkg.Items[2].Text, pkg.Items[3].Text)
	}
	var search struct {
		Hits []struct {
			ExtID string `json:"ext_id"`
		} `json:"hits"`
	}
	json.Unmarshal([]byte(mustRun(t, db, "search", "--conversation", "chat-7", "--json", "years")), &search)
	if len(search.Hits) == 0 {
		t.Fatal("a tool result's text is not searchable")
	}
}

// TestFailedImportLeavesStoreAsItWas: a bad file for a conversation that
// already has turns changes nothing that was stored.
func TestFailedImportLeavesStoreAsItWas(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	good := writeJSONL(t, dir, "k", 35)
	mustRun(t, db, "import", good)
	before := mustRun(t, db, "tree", "--conversation", "k", "--json")
	more := writeJSONL(t, dir, "k", 60) // the same 35 turns and 25 new ones
	data, _ := os.ReadFile(more)
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, append(data, []byte(`{"conversation":"k","role":"user","content":"x","time":"soon"}`+"\n")...), 0o644)
	if _, _, err := run(t, db, "", "import", bad); err == nil || !strings.Contains(err.Error(), "bad.jsonl:61") {
		t.Fatalf("err = %v, want it to name bad.jsonl:61", err)
	}
	if after := mustRun(t, db, "tree", "--conversation", "k", "--json"); after != before {
		t.Fatal("a failed import changed the stored conversation")
	}
}

// TestImportClaudeCode imports a Claude Code session file: its project's
// conversation gets its turns, searchable, with the records skipped on
// purpose counted; importing it again adds nothing.
func TestImportClaudeCode(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s.db")
	file := filepath.Join("..", "..", "formats", "testdata", "claude", "projects", "-home-ana-shop", "5a1e0c2b-7d4f-4b8e-9c3a-2f6d8e1b0a94.jsonl")
	out := mustRun(t, db, "import", file)
	if !strings.Contains(out, "9 turns added") || !strings.Contains(out, "18 records read, 12 kept in 9 turns, 6 skipped on purpose (") {
		t.Fatalf("import output:\n%s", out)
	}
	var res struct {
		Files []struct {
			Records struct {
				Records, Kept, Turns int
				Skipped              map[string]int
			} `json:"records"`
		} `json:"files"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, db, "import", "--json", file)), &res); err != nil || res.Files[0].Records.Skipped["queue-operation"] != 1 {
		t.Fatalf("import --json: %+v, %v", res, err)
	}
	var search struct {
		Hits []struct {
			ExtID string `json:"ext_id"`
		} `json:"hits"`
	}
	json.Unmarshal([]byte(mustRun(t, db, "search", "--conversation=-home-ana-shop", "--json", "1199")), &search)
	found := false
	for _, h := range search.Hits {
		found = found || h.ExtID == "u-2"
	}
	if !found {
		t.Fatalf("the failing test's output (a tool result) is not found: %+v", search.Hits)
	}
}
