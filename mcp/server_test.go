package stratamcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/extractive"
	stratamcp "github.com/strata-memory/strata/mcp"
	"github.com/strata-memory/strata/postgres"
	"github.com/strata-memory/strata/sqlite"
)

// connect serves a Memory over a fresh SQLite file through the SDK's
// in-memory transport and returns a client session to it.
func connect(t *testing.T) *mcp.ClientSession {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "strata.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return connectStore(t, st)
}

// connectStore is connect over the store st.
func connectStore(t *testing.T, st strata.Store) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	mem, err := strata.New(strata.Config{Store: st, Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New(),
		Now:   func() time.Time { return time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC) },
		Tiers: &strata.TierPolicy{Off: true}})
	if err != nil {
		t.Fatal(err)
	}
	srvT, cliT := mcp.NewInMemoryTransports()
	ss, err := stratamcp.NewServer(mem, "test").Connect(ctx, srvT, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, cliT, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call calls a tool that must succeed and decodes its structured output
// into out.
func call(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any, out any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	if res.IsError {
		t.Fatalf("%s: error result: %s", tool, text(res))
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("%s: structured content %s: %v", tool, b, err)
	}
	return res
}

// text joins a result's text contents.
func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// days returns perDay turns on each of n days from 2023-05-01, with one
// fact about Jon's job on the second day.
func days(n, perDay int) []map[string]any {
	var turns []map[string]any
	start := time.Date(2023, 5, 1, 9, 0, 0, 0, time.UTC)
	for d := range n {
		for i := range perDay {
			role, name := "user", "Jon"
			if i%2 == 1 {
				role, name = "assistant", ""
			}
			content := []string{"Ok.", "Sure, sounds good.", "Right.", "Thanks!"}[i%4]
			if d == 1 && i == 2 {
				content = "Jon's job is teaching at the school now."
			}
			turns = append(turns, map[string]any{"role": role, "name": name, "content": content,
				"time":   start.AddDate(0, 0, d).Add(time.Duration(i) * time.Minute).Format(time.RFC3339),
				"ext_id": fmt.Sprintf("d%d-%d", d, i)})
		}
	}
	return turns
}

func TestListTools(t *testing.T) {
	cs := connect(t)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if len(tool.Description) < 60 {
			t.Errorf("%s: description %q is too thin for a model to act on", tool.Name, tool.Description)
		}
		schema, _ := json.Marshal(tool.InputSchema)
		var s struct {
			Properties map[string]struct {
				Description string `json:"description"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(schema, &s); err != nil || len(s.Properties) == 0 {
			t.Errorf("%s: input schema %s has no properties (%v)", tool.Name, schema, err)
		}
		for p, d := range s.Properties {
			if d.Description == "" {
				t.Errorf("%s: input field %s has no description", tool.Name, p)
			}
		}
	}
	slices.Sort(names)
	want := []string{"context", "expand", "forget", "learnings", "recall", "remember", "zoom"}
	if !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
}

func TestTools(t *testing.T) {
	cs := connect(t)
	turns := days(4, 10)

	var rem strata.IngestResult
	call(t, cs, "remember", map[string]any{"conversation": "c", "turns": turns}, &rem)
	if rem.Added != 40 || rem.Skipped != 0 || rem.Nodes == 0 {
		t.Fatalf("remember: %+v, want 40 added and nodes made", rem)
	}
	call(t, cs, "remember", map[string]any{"conversation": "c", "turns": turns[:5]}, &rem)
	if rem.Added != 0 || rem.Skipped != 5 {
		t.Errorf("remember again: %+v, want the 5 known ext_ids skipped", rem)
	}

	var rec stratamcp.RecallOut
	call(t, cs, "recall", map[string]any{"query": "teaching school", "conversation": "c"}, &rec)
	found := false
	for _, h := range rec.Hits {
		if h.Kind == strata.KindTurn && h.ExtID == "d1-2" && strings.Contains(h.Text, "teaching") {
			found = true
		}
	}
	if !found {
		t.Errorf("recall: no turn hit d1-2 in %+v", rec.Hits)
	}

	var pkg stratamcp.ContextOut
	res := call(t, cs, "context", map[string]any{"conversation": "c", "query": "what is Jon's job?", "budget": 150}, &pkg)
	if pkg.Tokens > 150 || pkg.Budget != 150 || pkg.Turns != 40 || len(pkg.Items) == 0 {
		t.Fatalf("context: %d of %d tokens, %d turns, %d items", pkg.Tokens, pkg.Budget, pkg.Turns, len(pkg.Items))
	}
	if res.Content[0].(*mcp.TextContent).Text != pkg.Text || !strings.Contains(pkg.Text, "teaching") {
		t.Errorf("context: text content %q is not the rendered package %q, or misses the fact", text(res), pkg.Text)
	}
	// Without a query, a small budget keeps older days as summaries.
	call(t, cs, "context", map[string]any{"conversation": "c", "budget": 120}, &pkg)
	var node string
	for _, it := range pkg.Items {
		if it.Kind == strata.KindSummary && node == "" {
			node = it.NodeID
		}
		if it.Kind == strata.KindTurn && it.ExtID == "" {
			t.Errorf("context: turn item without ext_id: %+v", it)
		}
	}
	if node == "" {
		t.Fatalf("context: no summary item in %+v", pkg.Items)
	}
	if res := call(t, cs, "context", map[string]any{"conversation": "c", "budget": 120}, &pkg); !strings.Contains(text(res), "node "+node) {
		t.Errorf("context: the text content does not give node %s to expand:\n%s", node, text(res))
	}

	var ex stratamcp.ExpandOut
	call(t, cs, "expand", map[string]any{"node_id": node}, &ex)
	if ex.Node.ID != node || int64(len(ex.Turns)) != ex.Node.LastSeq-ex.Node.FirstSeq+1 {
		t.Fatalf("expand %s: node %+v with %d turns", node, ex.Node, len(ex.Turns))
	}
	for i, tu := range ex.Turns {
		if tu.Seq != ex.Node.FirstSeq+int64(i) {
			t.Errorf("expand: turn %d has seq %d, want %d", i, tu.Seq, ex.Node.FirstSeq+int64(i))
		}
	}

	var z stratamcp.ZoomOut
	call(t, cs, "zoom", map[string]any{"conversation": "c", "when": "2023-05-02"}, &z)
	if z.Period != "2023-05-02" || len(z.Turns) != 10 {
		t.Fatalf("zoom 2023-05-02: period %q, %d turns, want 10", z.Period, len(z.Turns))
	}
	for _, tu := range z.Turns {
		if !strings.HasPrefix(tu.Time, "2023-05-02") || !strings.HasPrefix(tu.ExtID, "d1-") {
			t.Errorf("zoom: turn %+v is not of 2023-05-02", tu)
		}
	}
	call(t, cs, "zoom", map[string]any{"conversation": "c", "when": "yesterday"}, &z)
	if z.Period != "2023-05-03" || len(z.Turns) != 10 {
		t.Errorf("zoom yesterday: period %q, %d turns; want 2023-05-03 (the day before the newest turn), 10", z.Period, len(z.Turns))
	}

	var ls stratamcp.LearningsOut
	call(t, cs, "learnings", map[string]any{"conversation": "c"}, &ls)
	found = false
	for _, l := range ls.Learnings {
		if l.Subject == "jon|job" && strings.Contains(l.Text, "teaching") && l.Node != "" && l.FirstSeq <= 13 && l.LastSeq >= 13 {
			found = true
		}
	}
	if !found {
		t.Errorf("learnings: no learning of Jon's job from turn 13 in %+v", ls.Learnings)
	}
}

// TestBadInput gets a tool error result naming the field for each bad
// call, and the conversation keeps every turn it had.
func TestBadInput(t *testing.T) {
	cs := connect(t)
	var rem strata.IngestResult
	call(t, cs, "remember", map[string]any{"conversation": "c", "turns": days(2, 4)}, &rem)

	for _, tt := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"remember", map[string]any{"conversation": "c", "turns": []map[string]any{{"role": "boss", "content": "hi"}}}, "role"},
		{"remember", map[string]any{"conversation": "c", "turns": []map[string]any{{"role": "user", "content": "hi", "time": "yesterday"}}}, "time"},
		{"remember", map[string]any{"conversation": "c", "turns": []map[string]any{}}, "turns"},
		{"remember", map[string]any{"turns": []map[string]any{{"role": "user", "content": "hi"}}}, "conversation"},
		{"remember", map[string]any{"conversation": "c", "turns": "hello"}, "turns"},
		{"remember", map[string]any{"conversation": "c", "turns": []map[string]any{{"role": "user", "content": "hi", "extra": 1}}}, "extra"},
		{"context", map[string]any{"conversation": "c", "budget": "big"}, "budget"},
		{"remember", map[string]any{"conversation": "c", "turns": nil}, "turns"},
		{"remember", map[string]any{"conversation": "c", "CONVERSATION": "d", "turns": []map[string]any{{"role": "user", "content": "hi"}}}, "CONVERSATION"},
		{"remember", map[string]any{"conversation": "c", "turns": []map[string]any{{"role": "user", "Content": "hi"}}}, "Content"},
		{"recall", map[string]any{"Query": "hi"}, "Query"},
		{"remember", map[string]any{"conversation": "", "turns": []map[string]any{{"role": "user", "content": "hi"}}}, "conversation id is empty"},
		{"recall", map[string]any{"query": "  "}, "query"},
		{"recall", map[string]any{"query": "hi", "k": -1}, "k"},
		{"recall", map[string]any{"query": "hi", "conversation": "nope"}, "nope"},
		{"context", map[string]any{"conversation": "c", "budget": -5}, "budget"},
		{"context", map[string]any{"conversation": "c", "format": "html"}, "format"},
		{"context", map[string]any{"conversation": "nope"}, "nope"},
		{"zoom", map[string]any{"conversation": "c", "when": "the day the cat came"}, "the day the cat came"},
		{"zoom", map[string]any{"conversation": "c", "when": ""}, "when"},
		{"expand", map[string]any{"node_id": "no-such-node"}, "no-such-node"},
		{"learnings", map[string]any{"status": "maybe"}, "status"},
		{"forget", map[string]any{"conversation": "c"}, "confirm"},
		{"forget", map[string]any{"conversation": "nope", "confirm": true}, "nope"},
	} {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tt.tool, Arguments: tt.args})
		if err != nil {
			t.Errorf("%s %v: protocol error %v, want a tool error result", tt.tool, tt.args, err)
			continue
		}
		if !res.IsError || !strings.Contains(text(res), tt.want) {
			t.Errorf("%s %v: IsError %v, %q; want an error naming %q", tt.tool, tt.args, res.IsError, text(res), tt.want)
		}
	}
	var pkg stratamcp.ContextOut
	call(t, cs, "context", map[string]any{"conversation": "c"}, &pkg)
	if pkg.Turns != 8 {
		t.Errorf("after the bad calls the conversation has %d turns, want 8", pkg.Turns)
	}
}

// TestForget deletes a conversation through the forget tool: its turns are
// gone from recall and context, the record says what went.
func TestForget(t *testing.T) {
	cs := connect(t)
	var rem strata.IngestResult
	call(t, cs, "remember", map[string]any{"conversation": "c", "turns": days(2, 4)}, &rem)
	call(t, cs, "remember", map[string]any{"conversation": "keep", "turns": days(1, 2)}, &rem)
	var d strata.Deletion
	call(t, cs, "forget", map[string]any{"conversation": "c", "confirm": true, "reason": "asked"}, &d)
	if d.Conversation != "c" || d.Turns != 8 || d.Reason != "asked" {
		t.Errorf("forget = %+v, want 8 turns of c and the reason", d)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "context", Arguments: map[string]any{"conversation": "c"}})
	if err != nil || !res.IsError {
		t.Errorf("context of a forgotten conversation: %v, IsError %v", err, res != nil && res.IsError)
	}
	var pkg stratamcp.ContextOut
	call(t, cs, "context", map[string]any{"conversation": "keep"}, &pkg)
	if pkg.Turns != 2 {
		t.Errorf("the other conversation has %d turns, want 2", pkg.Turns)
	}
}

// TestBadTextBothStores calls every tool with text no store keeps (a NUL,
// invalid UTF-8) and remember with the zero time, on SQLite and on
// PostgreSQL (when STRATA_TEST_POSTGRES names a database): each is a tool
// error naming the problem or finding nothing, the same on both stores,
// never an internal error, and nothing is stored.
func TestBadTextBothStores(t *testing.T) {
	stores := map[string]strata.Store{}
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "strata.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	stores["sqlite"] = st
	if dsn := os.Getenv("STRATA_TEST_POSTGRES"); dsn != "" {
		pg, drop, err := postgres.OpenScratch(context.Background(), dsn, "strata_mcp")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { pg.Close(); drop() })
		stores["postgres"] = pg
	}
	turn := func(k, v string) map[string]any {
		m := map[string]any{"role": "user", "content": "hi", "time": "2024-01-01T10:00:00Z"}
		m[k] = v
		return m
	}
	calls := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"remember", map[string]any{"conversation": "c", "turns": []any{turn("time", "0001-01-01T00:00:00Z")}}, "zero time"},
		{"remember", map[string]any{"conversation": "c", "turns": []any{turn("content", "a\x00b")}}, "content: contains a NUL"},
		{"remember", map[string]any{"conversation": "c", "turns": []any{turn("name", "a\x00b")}}, "name: contains a NUL"},
		{"remember", map[string]any{"conversation": "c", "turns": []any{turn("ext_id", "a\x00b")}}, "ext_id: contains a NUL"},
		{"remember", map[string]any{"conversation": "c\x00", "turns": []any{turn("name", "x")}}, "conversation id: contains a NUL"},
		{"recall", map[string]any{"query": "hi", "conversation": "c\x00"}, "not found"},
		{"context", map[string]any{"conversation": "c\x00"}, "conversation id: contains a NUL"},
		{"zoom", map[string]any{"conversation": "c\x00", "when": "2024-01-01"}, "not found"},
		{"expand", map[string]any{"node_id": "n\x00"}, "not found"},
		{"learnings", map[string]any{"conversation": "c\x00"}, "not found"},
		{"forget", map[string]any{"conversation": "c\x00", "confirm": true}, "not found"},
		{"forget", map[string]any{"conversation": "c", "confirm": true, "reason": "x\x00"}, "reason: contains a NUL"},
	}
	answers := map[string][]string{}
	for name, st := range stores {
		cs := connectStore(t, st)
		var rem strata.IngestResult
		call(t, cs, "remember", map[string]any{"conversation": "c", "turns": days(1, 2)}, &rem)
		for _, c := range calls {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
			if err != nil {
				t.Fatalf("%s: %s: %v", name, c.tool, err)
			}
			if !res.IsError || !strings.Contains(text(res), c.want) {
				t.Errorf("%s: %s %q: IsError %v, %q; want an error naming %q", name, c.tool, c.args, res.IsError, text(res), c.want)
			}
			answers[name] = append(answers[name], text(res))
		}
		var ls stratamcp.LearningsOut
		call(t, cs, "learnings", map[string]any{"subject": "jon\x00"}, &ls)
		var pkg stratamcp.ContextOut
		call(t, cs, "context", map[string]any{"conversation": "c"}, &pkg)
		if pkg.Turns != 2 {
			t.Errorf("%s: after the bad calls the conversation has %d turns, want 2", name, pkg.Turns)
		}
	}
	if pg, ok := answers["postgres"]; ok {
		for i, a := range answers["sqlite"] {
			if pg[i] != a {
				t.Errorf("%s %q: SQLite answers %q, PostgreSQL %q", calls[i].tool, calls[i].args, a, pg[i])
			}
		}
	}
}
