package storetest

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/extractive"
	"github.com/strata-memory/strata/internal/race"
)

// testValidInput drives a Memory over the store with what some store
// cannot keep: NUL and invalid UTF-8 in ids and in every text field of a
// turn, ids over strata.MaxIDBytes, a turn over strata.MaxTurnBytes. Every
// store must answer alike: a write is EINVALID naming the field and stores
// nothing (no conversation either); a lookup by an id no store can hold
// is ENOTFOUND or EINVALID, never an internal error.
func testValidInput(t *testing.T, s strata.Store) {
	c := ctx(t)
	m, err := strata.New(strata.Config{Store: s, Namespace: "ns", Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New(),
		Now: func() time.Time { return base }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Ingest(c, strata.Batch{Conversation: "c", Turns: []strata.Turn{{ExtID: "e1", Role: strata.RoleUser, Content: "the first turn", Time: base}}}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"a\x00b", "a\xffb", strings.Repeat("x", strata.MaxIDBytes+1)} {
		for name, call := range idCalls(c, m, bad) {
			if code := strata.ErrorCode(call()); code != strata.ENOTFOUND && code != strata.EINVALID {
				t.Errorf("%s(%.20q): error code %q (%v), want notfound or invalid", name, bad, code, call())
			}
		}
	}
	// Text no id names: a reason kept in the audit record, a query.
	_, err = m.DeleteConversation(c, "c", "because\x00")
	wantCode(t, "DeleteConversation with a NUL in the reason", err, strata.EINVALID)
	for _, q := range []string{"first\x00", "first\xff"} {
		if _, err := m.Search(c, "", q, 10); strata.ErrorCode(err) == strata.EINTERNAL {
			t.Errorf("Search(%q): %v", q, err)
		}
	}
	testRefusedTurns(t, c, m)
}

// idCalls returns, by name, calls of every Memory method that takes a
// conversation id, with the id bad.
func idCalls(c context.Context, m *strata.Memory, bad string) map[string]func() error {
	return map[string]func() error{
		"Conversation": func() error { _, err := m.Conversation(c, bad); return err },
		"Turns":        func() error { _, _, err := m.Turns(c, bad, 0, 0, 10); return err },
		"Tree":         func() error { _, err := m.Tree(c, bad); return err },
		"ZoomPeriod":   func() error { _, err := m.ZoomPeriod(c, bad, "2023-05-08", time.Time{}); return err },
		"NodesIn":      func() error { _, _, err := m.NodesIn(c, bad, 1, 0, 0, 10); return err },
		"Pin":          func() error { _, err := m.Pin(c, bad, 1, 1); return err },
		"MarkImportant": func() error {
			_, err := m.MarkImportant(c, bad, "2023-05-08", true)
			return err
		},
		"Learn":     func() error { _, err := m.Learn(c, bad); return err },
		"Learnings": func() error { _, err := m.Learnings(c, strata.LearningFilter{Conversation: bad}); return err },
		"Search":    func() error { _, err := m.Search(c, bad, "first", 10); return err },
		"Context": func() error {
			_, err := m.Context(c, strata.ContextRequest{Conversation: bad, Budget: 100})
			return err
		},
		"DeleteConversation": func() error { _, err := m.DeleteConversation(c, bad, "why"); return err },
		"SetPolicy":          func() error { _, err := m.SetPolicy(c, bad, "calendar"); return err },
		"Cost":               func() error { _, err := m.Cost(c, bad); return err },
		"Review":             func() error { _, err := m.Review(c, bad); return err },
		"Tier":               func() error { _, err := m.Tier(c, bad); return err },
		"Retention":          func() error { _, err := m.Retention(c, bad, true); return err },
		"Node":               func() error { _, _, err := m.Node(c, bad); return err },
		"Expand":             func() error { _, _, err := m.Expand(c, bad); return err },
		"Resummarize":        func() error { _, err := m.Resummarize(c, bad); return err },
		"CreateConversation": func() error { _, err := m.CreateConversation(c, bad, "", ""); return err },
		"Ingest": func() error {
			_, err := m.Ingest(c, strata.Batch{Conversation: bad, Turns: []strata.Turn{{Role: strata.RoleUser, Content: "hi"}}})
			return err
		},
		"Import": func() error {
			done := false
			_, err := m.Import(c, func() (string, strata.Turn, error) {
				if done {
					return "", strata.Turn{}, io.EOF
				}
				done = true
				return bad, strata.Turn{Role: strata.RoleUser, Content: "hi"}, nil
			})
			return err
		},
	}
}

// testRefusedTurns: a turn with a NUL in any text field, or too big, is
// refused naming the field, and nothing of its batch is stored. m holds
// one turn in conversation c.
func testRefusedTurns(t *testing.T, c context.Context, m *strata.Memory) {
	ok := strata.Turn{Role: strata.RoleUser, Content: "fine"}
	for _, tc := range []struct {
		field string
		turn  func(t *strata.Turn)
	}{
		{"content", func(t *strata.Turn) { t.Content = "a\x00b" }},
		{"name", func(t *strata.Turn) { t.Name = "a\x00b" }},
		{"ext_id", func(t *strata.Turn) { t.ExtID = "a\x00b" }},
		{"ext_id", func(t *strata.Turn) { t.ExtID = strings.Repeat("x", strata.MaxIDBytes+1) }},
		{"session", func(t *strata.Turn) { t.SessionLabel = "a\x00b" }},
		{"model", func(t *strata.Turn) { t.Model = "a\x00b" }},
		{"tags[0]", func(t *strata.Turn) { t.Tags = []string{"a\x00b"} }},
		{"metadata.k", func(t *strata.Turn) { t.Metadata = map[string]any{"k": "a\x00b"} }},
		{"metadata.k[1]", func(t *strata.Turn) { t.Metadata = map[string]any{"k": []string{"x", "a\x00b"}} }},
		{`metadata key "k\x00"`, func(t *strata.Turn) { t.Metadata = map[string]any{"k\x00": "v"} }},
		{"tool_calls[0].name", func(t *strata.Turn) { t.ToolCalls = []strata.ToolCall{{Name: "f\x00"}} }},
		{"tool_calls[0].id", func(t *strata.Turn) { t.ToolCalls = []strata.ToolCall{{Name: "f", ID: "\x00"}} }},
		{"tool_calls[0].arguments", func(t *strata.Turn) {
			t.ToolCalls = []strata.ToolCall{{Name: "f", Arguments: json.RawMessage("{\"a\": \"\x00\"}")}}
		}},
		{"tool_results[0].content", func(t *strata.Turn) { t.ToolResults = []strata.ToolResult{{Content: "a\x00"}} }},
		{"tool_results[0].name", func(t *strata.Turn) { t.ToolResults = []strata.ToolResult{{Name: "a\x00", Content: "x"}} }},
		{"tool_results[0].call_id", func(t *strata.Turn) { t.ToolResults = []strata.ToolResult{{CallID: "a\x00", Content: "x"}} }},
		{"content", func(t *strata.Turn) { t.Content = "a\xffb" }},
		{"content", func(t *strata.Turn) { t.Content = strings.Repeat("x", strata.MaxTurnBytes+1) }},
		{"turn", func(t *strata.Turn) {
			t.Content = strings.Repeat("x", strata.MaxTurnBytes/2)
			t.ToolResults = []strata.ToolResult{{Content: strings.Repeat("y", strata.MaxTurnBytes/2+1)}}
		}},
	} {
		bad := ok
		tc.turn(&bad)
		for _, conv := range []string{"c", "fresh"} {
			_, err := m.Ingest(c, strata.Batch{Conversation: conv, Turns: []strata.Turn{ok, bad}})
			if strata.ErrorCode(err) != strata.EINVALID || !strings.Contains(err.Error(), "turn 2: "+tc.field+":") {
				t.Errorf("a turn with a bad %s: %.300v; want invalid naming turn 2 and %s", tc.field, err, tc.field)
			}
		}
	}
	if got, err := m.Conversation(c, "c"); err != nil || got.Turns != 1 {
		t.Errorf("after the refused batches: %+v, %v; want the 1 turn of before", got, err)
	}
	if _, err := m.Conversation(c, "fresh"); strata.ErrorCode(err) != strata.ENOTFOUND {
		t.Errorf("a refused batch created its conversation: %v", err)
	}
}

// testMaxTurn stores a turn of exactly strata.MaxTurnBytes, the most a
// turn may carry, and reads it back whole: the limit is one every store
// takes.
func testMaxTurn(t *testing.T, s strata.Store) {
	if race.Enabled {
		t.Skip("a turn of MaxTurnBytes takes minutes under the race detector")
	}
	ensure(t, s, "ns", "c")
	tr := strata.Turn{ExtID: "big", Role: strata.RoleTool, Name: "reader", Time: base,
		ToolResults: []strata.ToolResult{{CallID: "c1", Name: "read", Content: "ok"}}}
	tr.Content = strings.Repeat("0123456789abcdef\n", strata.MaxTurnBytes/17+1)[:strata.MaxTurnBytes-tr.Size()]
	if tr.Size() != strata.MaxTurnBytes {
		t.Fatalf("the turn is %d bytes, want %d", tr.Size(), strata.MaxTurnBytes)
	}
	if err := tr.Validate(); err != nil {
		t.Fatalf("a turn of MaxTurnBytes: %v", err)
	}
	over := tr
	over.Content += "x"
	if err := over.Validate(); strata.ErrorCode(err) != strata.EINVALID {
		t.Errorf("a turn of MaxTurnBytes+1: %v, want invalid", err)
	}
	appendTurns(t, s, "ns", "c", []strata.Turn{tr})
	got := allTurns(t, s, "ns", "c")
	if len(got) != 1 || got[0].Size() != strata.MaxTurnBytes || got[0].Content != tr.Content {
		t.Fatalf("the turn of MaxTurnBytes did not come back whole")
	}
}
