package storetest

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-memory/strata"
)

func testAppendSeq(t *testing.T, s strata.Store) {
	ensure(t, s, "ns", "c")
	turns := mkTurns("t", 5)
	got := appendTurns(t, s, "ns", "c", turns[:3])
	if !slices.Equal(seqs(got), []int64{1, 2, 3}) || !slices.Equal(extIDs(got), extIDs(turns[:3])) {
		t.Errorf("first AppendTurns returned seqs %v ext_ids %q, want 1..3 and %q", seqs(got), extIDs(got), extIDs(turns[:3]))
	}
	got = appendTurns(t, s, "ns", "c", turns[3:])
	if !slices.Equal(seqs(got), []int64{4, 5}) {
		t.Errorf("second AppendTurns returned seqs %v, want [4 5]", seqs(got))
	}
	all := allTurns(t, s, "ns", "c")
	if !slices.Equal(seqs(all), seqRange(1, 5)) || !slices.Equal(extIDs(all), extIDs(turns)) {
		t.Errorf("Turns = seqs %v ext_ids %q, want 1..5 and %q", seqs(all), extIDs(all), extIDs(turns))
	}
}

func testAppendDedup(t *testing.T, s strata.Store) {
	ensure(t, s, "ns", "c")
	mk := func(id, content string) strata.Turn {
		return strata.Turn{ExtID: id, Role: strata.RoleUser, Content: content, Time: base}
	}
	steps := []struct {
		name     string
		in       []strata.Turn
		wantIDs  []string
		wantSeqs []int64
	}{
		{"new turns", []strata.Turn{mk("a", "A"), mk("b", "B")}, []string{"a", "b"}, []int64{1, 2}},
		{"one stored, one new", []strata.Turn{mk("b", "B again"), mk("c", "C")}, []string{"c"}, []int64{3}},
		{"all stored", []strata.Turn{mk("a", "A"), mk("b", "B"), mk("c", "C")}, nil, nil},
		{"an ext_id twice in one call", []strata.Turn{mk("d", "first d"), mk("d", "second d"), mk("e", "E")},
			[]string{"d", "e"}, []int64{4, 5}},
	}
	for _, st := range steps {
		got, err := s.AppendTurns(ctx(t), "ns", "c", st.in)
		if err != nil {
			t.Fatalf("%s: AppendTurns: %v", st.name, err)
		}
		if !slices.Equal(extIDs(got), st.wantIDs) || !slices.Equal(seqs(got), st.wantSeqs) {
			t.Errorf("%s: AppendTurns returned ext_ids %q seqs %v, want %q %v",
				st.name, extIDs(got), seqs(got), st.wantIDs, st.wantSeqs)
		}
	}
	all := allTurns(t, s, "ns", "c")
	var contents []string
	for _, tr := range all {
		contents = append(contents, tr.Content)
	}
	if want := []string{"A", "B", "C", "first d", "E"}; !slices.Equal(contents, want) || !slices.Equal(seqs(all), seqRange(1, 5)) {
		t.Errorf("stored turns: seqs %v contents %q, want 1..5 and %q", seqs(all), contents, want)
	}
	if c, err := s.Conversation(ctx(t), "ns", "c"); err != nil || c.Turns != 5 {
		t.Errorf("Conversation after duplicates = %d turns (err %v), want 5", c.Turns, err)
	}
}

func testAppendNotFound(t *testing.T, s strata.Store) {
	_, err := s.AppendTurns(ctx(t), "ns", "missing", mkTurns("t", 1))
	wantCode(t, "AppendTurns to a missing conversation", err, strata.ENOTFOUND)
	ensure(t, s, "a", "c")
	_, err = s.AppendTurns(ctx(t), "b", "c", mkTurns("t", 1))
	wantCode(t, "AppendTurns to a conversation of another namespace", err, strata.ENOTFOUND)
	if got := allTurns(t, s, "a", "c"); len(got) != 0 {
		t.Errorf("a failed AppendTurns in namespace b stored %d turns in namespace a", len(got))
	}
}

func testAppendEmpty(t *testing.T, s strata.Store) {
	ensure(t, s, "ns", "c")
	got, err := s.AppendTurns(ctx(t), "ns", "c", nil)
	if err != nil || len(got) != 0 {
		t.Errorf("AppendTurns(nil) = %d turns, %v; want none and no error", len(got), err)
	}
}

// bigContent is about bigSize bytes (10 MB) of text that ends with a word
// found nowhere else.
func bigContent() string {
	var b strings.Builder
	line := "Line %d: the quarterly numbers\twere reviewed — résumé ✓ — and filed 📁.\n"
	for i := 0; b.Len() < bigSize; i++ {
		fmt.Fprintf(&b, line, i)
	}
	b.WriteString("final word: quetzalcoatlus")
	return b.String()
}

func testContentExact(t *testing.T, s strata.Store) {
	ensure(t, s, "ns", "c")
	contents := []string{
		"",
		"  leading and trailing spaces  ",
		"tabs\tand\nnewlines\r\nCRLF\n\n\n",
		"emoji 😀👍🏽 family 👨‍👩‍👧 flag 🇯🇵",
		"中文内容，日本語のテキスト、한국어 텍스트, ภาษาไทย",
		"combining e\u0301 vs precomposed é; RTL עברית العربية",
		"quotes ' \" ` backslash \\ percent % underscore _ semicolon ; -- comment /* */",
		`{"json": [1, 2.50, "x"], "html": "<b>&amp;</b>"}`,
		"line\u2028and\u2029paragraph separators, BOM \ufeff, replacement \ufffd",
		bigContent(),
	}
	turns := make([]strata.Turn, len(contents))
	for i, c := range contents {
		turns[i] = strata.Turn{ExtID: fmt.Sprintf("x%d", i), Role: strata.RoleUser, Content: c, Time: base}
	}
	appendTurns(t, s, "ns", "c", turns)
	got := allTurns(t, s, "ns", "c")
	if len(got) != len(contents) {
		t.Fatalf("Turns returned %d turns, want %d", len(got), len(contents))
	}
	for i, c := range contents {
		if got[i].Content != c {
			if len(c) > 200 {
				t.Errorf("turn %d: content of %d bytes came back as %d bytes, different", i, len(c), len(got[i].Content))
			} else {
				t.Errorf("turn %d: content %q came back as %q", i, c, got[i].Content)
			}
		}
	}
	hits, err := s.Search(ctx(t), strata.SearchQuery{Namespace: "ns", Conversation: "c", Text: "quetzalcoatlus", K: 5})
	if err != nil {
		t.Fatalf("Search: %v", err)
	}
	if len(hits) != 1 || hits[0].Turn == nil || hits[0].Turn.ExtID != "x9" {
		t.Errorf("Search for the last word of a %d-byte turn: %d hits, want that turn", bigSize, len(hits))
	}
}

func testTurnRoundTrip(t *testing.T, s strata.Store) {
	ensure(t, s, "ns", "c")
	full := strata.Turn{
		ExtID:        "ext-1",
		Session:      2,
		SessionLabel: "Tuesday standup",
		Role:         strata.RoleAssistant,
		Name:         "Ada",
		Content:      "Let me look that up.",
		Time:         time.Date(2024, 2, 29, 23, 59, 59, 999999999, time.FixedZone("X", 5*3600+1800)),
		Model:        "model-x-2024",
		ToolCalls: []strata.ToolCall{
			{ID: "call_1", Name: "search", Arguments: json.RawMessage("{ \"q\" : \"a<b>&c\",\n  \"n\": 1.50, \"u\": \"\\u00e9\" }")},
			{Name: "noargs"},
		},
		ToolResults: []strata.ToolResult{
			{CallID: "call_1", Name: "search", Content: "result\nline two", IsError: true},
			{Content: "plain"},
		},
		Tokens:     42,
		Importance: 0.85,
		Tags:       []string{"decision", "with space", "ünïcode"},
		Metadata: map[string]any{
			"source": "slack",
			"n":      3.5,
			"ok":     true,
			"nested": map[string]any{"list": []any{1.0, "x", false, nil}},
		},
	}
	tool := strata.Turn{
		ExtID: "ext-2", Role: strata.RoleTool, Content: "",
		ToolResults: []strata.ToolResult{{CallID: "call_1", Content: "42"}},
		Time:        time.Unix(0, 1).UTC(), // one nanosecond after the epoch
	}
	minimal := strata.Turn{ExtID: "ext-3", Role: strata.RoleUser, Content: "hi"} // zero time
	in := []strata.Turn{full, tool, minimal}
	got := appendTurns(t, s, "ns", "c", in)
	stored := allTurns(t, s, "ns", "c")
	if len(got) != 3 || len(stored) != 3 {
		t.Fatalf("AppendTurns returned %d turns and Turns %d, want 3 and 3", len(got), len(stored))
	}
	for i := range in {
		want := in[i]
		want.Seq = int64(i + 1)
		if d := diffTurn(want, got[i]); d != "" {
			t.Errorf("AppendTurns result: %s", d)
		}
		if d := diffTurn(want, stored[i]); d != "" {
			t.Errorf("Turns: %s", d)
		}
	}
}

func testExistingExtIDs(t *testing.T, s strata.Store) {
	ensure(t, s, "ns", "c")
	ensure(t, s, "other", "c")
	appendTurns(t, s, "ns", "c", mkTurns("t", 3))
	for _, tc := range []struct {
		ns, conv string
		ids      []string
		want     []string
	}{
		{"ns", "c", []string{"t-1", "t-3", "t-9", "x"}, []string{"t-1", "t-3"}},
		{"ns", "c", nil, nil},
		{"ns", "missing", []string{"t-1"}, nil},
		{"other", "c", []string{"t-1"}, nil},
	} {
		got, err := s.ExistingExtIDs(ctx(t), tc.ns, tc.conv, tc.ids)
		if err != nil {
			t.Errorf("ExistingExtIDs(%q, %q, %q): %v", tc.ns, tc.conv, tc.ids, err)
			continue
		}
		var keys []string
		for k, v := range got {
			if v {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		if !slices.Equal(keys, tc.want) || len(got) != len(tc.want) {
			t.Errorf("ExistingExtIDs(%q, %q, %q) = %v, want %q", tc.ns, tc.conv, tc.ids, slices.Sorted(maps.Keys(got)), tc.want)
		}
	}
}

func testTurnsFilter(t *testing.T, s strata.Store) {
	ensure(t, s, "ns", "c")
	turns := mkTurns("e", 10)
	turns[2].Importance = 0.9                     // seq 3
	turns[4].Importance = 0.79                    // seq 5: not pinned
	turns[6].Importance = 1                       // seq 7
	turns[8].Importance = strata.PinnedImportance // seq 9: pinned, at the boundary
	appendTurns(t, s, "ns", "c", turns[:4])
	appendTurns(t, s, "ns", "c", turns[4:])
	for _, tc := range []struct {
		name string
		f    strata.TurnFilter
		want []int64
	}{
		{"all", strata.TurnFilter{}, seqRange(1, 10)},
		{"from", strata.TurnFilter{FromSeq: 4}, seqRange(4, 10)},
		{"to", strata.TurnFilter{ToSeq: 3}, seqRange(1, 3)},
		{"from to", strata.TurnFilter{FromSeq: 3, ToSeq: 5}, []int64{3, 4, 5}},
		{"seqs", strata.TurnFilter{Seqs: []int64{5, 2, 11}}, []int64{2, 5}},
		{"ext ids", strata.TurnFilter{ExtIDs: []string{"e-3", "e-1", "nope"}}, []int64{1, 3}},
		{"pinned", strata.TurnFilter{PinnedOnly: true}, []int64{3, 7, 9}},
		{"newest", strata.TurnFilter{Newest: true}, []int64{10, 9, 8, 7, 6, 5, 4, 3, 2, 1}},
		{"limit", strata.TurnFilter{Limit: 3}, []int64{1, 2, 3}},
		{"newest limit", strata.TurnFilter{Newest: true, Limit: 3}, []int64{10, 9, 8}},
		{"from to newest limit", strata.TurnFilter{FromSeq: 2, ToSeq: 8, Newest: true, Limit: 2}, []int64{8, 7}},
		{"seqs pinned", strata.TurnFilter{Seqs: []int64{3, 4, 9}, PinnedOnly: true}, []int64{3, 9}},
		{"from seqs", strata.TurnFilter{FromSeq: 5, Seqs: []int64{3, 6, 7}}, []int64{6, 7}},
		{"to ext ids", strata.TurnFilter{ToSeq: 4, ExtIDs: []string{"e-2", "e-9"}}, []int64{2}},
		{"pinned newest limit", strata.TurnFilter{PinnedOnly: true, Newest: true, Limit: 2}, []int64{9, 7}},
		{"nothing", strata.TurnFilter{FromSeq: 11}, nil},
	} {
		f := tc.f
		f.Namespace, f.Conversation = "ns", "c"
		got, err := s.Turns(ctx(t), f)
		if err != nil {
			t.Errorf("%s: Turns(%+v): %v", tc.name, f, err)
			continue
		}
		if !slices.Equal(seqs(got), tc.want) {
			t.Errorf("%s: Turns(%+v) = seqs %v, want %v", tc.name, f, seqs(got), tc.want)
		}
		for _, tr := range got {
			if tr.ExtID != fmt.Sprintf("e-%d", tr.Seq) {
				t.Errorf("%s: seq %d has ext_id %q, want e-%d", tc.name, tr.Seq, tr.ExtID, tr.Seq)
			}
		}
	}
	_, err := s.Turns(ctx(t), strata.TurnFilter{Namespace: "ns", Conversation: "missing"})
	wantCode(t, "Turns of a missing conversation", err, strata.ENOTFOUND)
	_, err = s.Turns(ctx(t), strata.TurnFilter{Namespace: "other", Conversation: "c"})
	wantCode(t, "Turns of a conversation of another namespace", err, strata.ENOTFOUND)
}

// testAppendAfter: AppendTurnsAfter appends only while the conversation
// ends where the writer saw it end, and changes nothing otherwise, even
// when the turns' ext_ids are new.
func testAppendAfter(t *testing.T, s strata.Store) {
	ensure(t, s, "ns", "c")
	ts := mkTurns("a", 6)
	got, err := s.AppendTurnsAfter(ctx(t), "ns", "c", 0, ts[:2])
	if err != nil || len(got) != 2 || got[0].Seq != 1 {
		t.Fatalf("AppendTurnsAfter(0) on an empty conversation = %v, %v", seqs(got), err)
	}
	if _, err := s.AppendTurnsAfter(ctx(t), "ns", "c", 0, ts[2:4]); strata.ErrorCode(err) != strata.ECONFLICT {
		t.Errorf("AppendTurnsAfter(0) after 2 turns: %v, want ECONFLICT", err)
	}
	if _, err := s.AppendTurnsAfter(ctx(t), "ns", "c", 3, ts[2:4]); strata.ErrorCode(err) != strata.ECONFLICT {
		t.Errorf("AppendTurnsAfter(3) after 2 turns: %v, want ECONFLICT", err)
	}
	if n := len(allTurns(t, s, "ns", "c")); n != 2 {
		t.Fatalf("refused appends stored turns: %d, want 2", n)
	}
	got, err = s.AppendTurnsAfter(ctx(t), "ns", "c", 2, ts[2:4])
	if err != nil || len(got) != 2 || got[0].Seq != 3 {
		t.Fatalf("AppendTurnsAfter(2) = %v, %v", seqs(got), err)
	}
	// Nothing to append is still checked.
	if _, err := s.AppendTurnsAfter(ctx(t), "ns", "c", 1, nil); strata.ErrorCode(err) != strata.ECONFLICT {
		t.Errorf("AppendTurnsAfter(1) of no turns after 4: %v, want ECONFLICT", err)
	}
	if _, err := s.AppendTurnsAfter(ctx(t), "ns", "c", -1, ts[4:]); strata.ErrorCode(err) != strata.EINVALID {
		t.Errorf("AppendTurnsAfter(-1): %v, want EINVALID", err)
	}
	if _, err := s.AppendTurnsAfter(ctx(t), "ns", "missing", 0, ts[4:]); strata.ErrorCode(err) != strata.ENOTFOUND {
		t.Errorf("AppendTurnsAfter to a missing conversation: %v, want ENOTFOUND", err)
	}
}
