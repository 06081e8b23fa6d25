package storetest

import (
	"testing"
	"time"

	"github.com/strata-memory/strata"
)

// testNodeKeysAndFilters: keys, aggregates, model and pending marks
// round-trip; NodeFilter's Key, Covers, Overlaps and Pending select what
// they say.
func testNodeKeysAndFilters(t *testing.T, s strata.Store) {
	ensure(t, s, "ns", "c")
	appendTurns(t, s, "ns", "c", mkTurns("t", 30))
	var nodes []strata.Node
	for i, k := range []string{"2023-05-08", "2023-05-09", "2023-05-10"} {
		n := mkNode("ns", "c", 1, int64(i*10+1), int64(i*10+10), "day "+k)
		n.Key = k
		n.Start = time.Date(2023, 5, 8+i, 9, 0, 0, 0, time.UTC)
		n.End = n.Start.Add(2 * time.Hour)
		nodes = append(nodes, n)
	}
	nodes[1].Pending = true
	nodes[2].Model = "llama3"
	nodes[2].Method = strata.MethodLLM
	nodes[0].Aggregates = &strata.Aggregates{
		Numbers: map[string]strata.NumberStat{"stress": {Count: 2, Sum: 0.5, Mean: 0.25, Min: 0.1, Max: 0.4}},
		Labels:  map[string]strata.LabelStat{"emotion": {Counts: map[string]int{"calm": 2, "warmth": 1}, Dominant: "calm"}},
	}
	week := mkNode("ns", "c", 2, 1, 30, "the week")
	week.Key = "2023-W19"
	if err := s.PutNodes(ctx(t), "ns", "c", append(nodes, week)); err != nil {
		t.Fatal(err)
	}
	get := func(f strata.NodeFilter) []strata.Node {
		t.Helper()
		f.Namespace, f.Conversation = "ns", "c"
		got, err := s.Nodes(ctx(t), f)
		if err != nil {
			t.Fatalf("Nodes(%+v): %v", f, err)
		}
		return got
	}
	for i, n := range get(strata.NodeFilter{Level: 1}) {
		if d := diffNode(nodes[i], n); d != "" {
			t.Error(d)
		}
	}
	ids := func(ns []strata.Node) []string {
		out := []string{}
		for _, n := range ns {
			out = append(out, n.Key)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		f    strata.NodeFilter
		want []string
	}{
		{"key", strata.NodeFilter{Key: "2023-05-09"}, []string{"2023-05-09"}},
		{"key none", strata.NodeFilter{Key: "2023-05-11"}, []string{}},
		{"covers 15", strata.NodeFilter{Covers: 15}, []string{"2023-05-09", "2023-W19"}},
		{"covers 30 at level 1", strata.NodeFilter{Covers: 30, Level: 1}, []string{"2023-05-10"}},
		{"pending", strata.NodeFilter{Pending: true}, []string{"2023-05-09"}},
		{"overlaps the 9th", strata.NodeFilter{Level: 1, Overlaps: strata.Period{
			Start: time.Date(2023, 5, 9, 0, 0, 0, 0, time.UTC), End: time.Date(2023, 5, 10, 0, 0, 0, 0, time.UTC)}},
			[]string{"2023-05-09"}},
		{"overlaps from the 9th at 10:30", strata.NodeFilter{Level: 1, Overlaps: strata.Period{
			Start: time.Date(2023, 5, 9, 10, 30, 0, 0, time.UTC)}}, []string{"2023-05-09", "2023-05-10"}},
	} {
		if got := ids(get(tc.f)); jsonOf(got) != jsonOf(tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	// Replacing a node clears what the new one does not set.
	nodes[1].Pending = false
	nodes[1].Model = "m2"
	if err := s.PutNodes(ctx(t), "ns", "c", nodes[1:2]); err != nil {
		t.Fatal(err)
	}
	if got := get(strata.NodeFilter{Pending: true}); len(got) != 0 {
		t.Errorf("still pending after replacement: %v", ids(got))
	}
}

// testTurnsByTime: Since and Until bound turn times, half-open, with the
// other filters.
func testTurnsByTime(t *testing.T, s strata.Store) {
	ensure(t, s, "ns", "c")
	appendTurns(t, s, "ns", "c", mkTurns("t", 10)) // one minute apart from base
	for _, tc := range []struct {
		name         string
		since, until time.Time
		from         int64
		want         []int64
	}{
		{"since", base.Add(7 * time.Minute), time.Time{}, 0, seqRange(8, 10)},
		{"until is exclusive", time.Time{}, base.Add(2 * time.Minute), 0, seqRange(1, 2)},
		{"both", base.Add(3 * time.Minute), base.Add(5 * time.Minute), 0, seqRange(4, 5)},
		{"with FromSeq", base, base.Add(5 * time.Minute), 3, seqRange(3, 5)},
		{"empty", base.Add(time.Hour), time.Time{}, 0, []int64{}},
	} {
		got, err := s.Turns(ctx(t), strata.TurnFilter{Namespace: "ns", Conversation: "c", Since: tc.since, Until: tc.until, FromSeq: tc.from})
		if err != nil {
			t.Fatal(err)
		}
		if jsonOf(seqs(got)) != jsonOf(tc.want) {
			t.Errorf("%s: seqs %v, want %v", tc.name, seqs(got), tc.want)
		}
	}
}

// testUpdateConversation: a time zone and important periods set at
// creation or later, and the errors.
func testUpdateConversation(t *testing.T, s strata.Store) {
	c, err := s.EnsureConversation(ctx(t), strata.Conversation{Namespace: "ns", ID: "c", Policy: "calendar",
		TimeZone: "Europe/Berlin", Important: []string{"2023-05-08"}})
	if err != nil {
		t.Fatal(err)
	}
	if c.TimeZone != "Europe/Berlin" || jsonOf(c.Important) != `["2023-05-08"]` {
		t.Fatalf("created with %q %v", c.TimeZone, c.Important)
	}
	tz, marks := "America/New_York", []string{"2023-05-08", "2023-W19"}
	if c, err = s.UpdateConversation(ctx(t), "ns", "c", strata.ConversationUpdate{TimeZone: &tz, Important: &marks}); err != nil {
		t.Fatal(err)
	}
	if c.TimeZone != tz || jsonOf(c.Important) != jsonOf(marks) || c.Policy != "calendar" {
		t.Fatalf("updated to %q %v %q", c.TimeZone, c.Important, c.Policy)
	}
	none := []string{}
	if c, err = s.UpdateConversation(ctx(t), "ns", "c", strata.ConversationUpdate{Important: &none}); err != nil || len(c.Important) != 0 || c.TimeZone != tz {
		t.Fatalf("clearing marks: %v %q %v", c.Important, c.TimeZone, err)
	}
	bad := "Mars/Olympus"
	_, err = s.UpdateConversation(ctx(t), "ns", "c", strata.ConversationUpdate{TimeZone: &bad})
	wantCode(t, "a bad time zone", err, strata.EINVALID)
	_, err = s.UpdateConversation(ctx(t), "ns", "nope", strata.ConversationUpdate{TimeZone: &tz})
	wantCode(t, "an unknown conversation", err, strata.ENOTFOUND)
	if got, _ := s.Conversation(ctx(t), "ns", "c"); got.TimeZone != tz {
		t.Errorf("a failed update changed the zone to %q", got.TimeZone)
	}
}

// testModelCalls: the log of model calls, per conversation and namespace.
func testModelCalls(t *testing.T, s strata.Store) {
	ensure(t, s, "ns", "a")
	ensure(t, s, "ns", "b")
	ensure(t, s, "other", "a")
	at := base.Add(time.Hour)
	calls := []strata.Call{
		{Node: "n1", Level: 1, Provider: "openai", Model: "m", Attempt: 1, TokensIn: 300, TokensOut: 90, Elapsed: 1500 * time.Millisecond, Outcome: "over_budget", At: at},
		{Node: "n1", Level: 1, Provider: "openai", Model: "m", Attempt: 2, TokensIn: 320, TokensOut: 60, Elapsed: 900 * time.Millisecond, Outcome: "ok", At: at.Add(time.Second)},
	}
	if err := s.RecordCalls(ctx(t), "ns", "a", calls); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordCalls(ctx(t), "ns", "b", calls[:1]); err != nil {
		t.Fatal(err)
	}
	got, err := s.Calls(ctx(t), "ns", "a")
	if err != nil {
		t.Fatal(err)
	}
	for i := range calls {
		calls[i].Conversation = "a"
	}
	if len(got) != 2 || jsonOf(got[0]) != jsonOf(calls[0]) || jsonOf(got[1]) != jsonOf(calls[1]) {
		t.Fatalf("Calls(a) = %s\nwant %s", jsonOf(got), jsonOf(calls))
	}
	if all, _ := s.Calls(ctx(t), "ns", ""); len(all) != 3 {
		t.Errorf("Calls of the namespace: %d, want 3", len(all))
	}
	if other, _ := s.Calls(ctx(t), "other", ""); len(other) != 0 {
		t.Errorf("another namespace sees %d calls", len(other))
	}
	wantCode(t, "RecordCalls of an unknown conversation", s.RecordCalls(ctx(t), "ns", "nope", calls), strata.ENOTFOUND)
}
