package strata_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/extractive"
	"github.com/strata-memory/strata/internal/hashembed"
	"github.com/strata-memory/strata/sqlite"
)

// TestReopenColdSpan sends a late turn into a day whose node had closed,
// gone cold (archived), been summarized by a model, embedded and learned
// from: the day gets one node over the longer span, whole and byte-exact,
// its model summary is asked for again, the old node's vector is gone, and
// no learning is duplicated.
func TestReopenColdSpan(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "strata.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	policy := strata.Policy{Name: "llmdays", Levels: []strata.Level{
		{Name: "day", Kind: strata.KindCalendar, Period: strata.PeriodDay, Budget: 200, Summarizer: strata.MethodLLM},
		{Name: "week", Kind: strata.KindCalendar, Period: strata.PeriodWeek, Budget: 300},
	}}
	model := &fakeModel{answer: func(_ int, req strata.CompletionRequest) (strata.Completion, error) {
		return strata.Completion{Text: "SUMMARY:\nAna planned the Lisbon trip.\nFACTS:\n- Ana's flight is on Friday.\nTHEMES: travel",
			OutputTokens: 20, FinishReason: "stop"}, nil
	}}
	clk := &clock{t: at("2026-11-21T12:00:00Z")}
	m, err := strata.New(strata.Config{Store: st, Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New(),
		Policy: policy, Now: clk.Now, Embedder: hashembed.New("hash-a", 16),
		LLM:   strata.LLMOptions{Completer: model, Backoff: time.Millisecond},
		Tiers: &strata.TierPolicy{HotChunks: 0, WarmMaxAge: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	first := []strata.Turn{
		turnAt("a", "2026-11-20T09:00:00Z", "Ana: the flight to Lisbon leaves Friday at 07:40 from gate B12."),
		turnAt("b", "2026-11-20T10:00:00Z", "Ana booked the hotel on Rua Augusta, booking ref QX-4471."),
	}
	first[1].Importance = 0.9 // pinned: its row keeps its content in every tier
	if _, err := m.Ingest(ctx, strata.Batch{Conversation: "trip", Turns: first}); err != nil {
		t.Fatal(err)
	}
	days := nodesAt(t, m, "trip", 1)
	if len(days) != 1 || days[0].Tier != strata.TierCold {
		t.Fatalf("before: %d day nodes, tier %v; want one cold", len(days), days[0].Tier)
	}
	if _, err := m.SummarizePending(ctx, strata.PendingOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Embed(ctx, strata.EmbedRequest{Conversation: "trip"}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Learn(ctx, "trip"); err != nil {
		t.Fatal(err)
	}
	before := nodesAt(t, m, "trip", 1)[0]
	if before.Method != strata.MethodLLM {
		t.Fatalf("before: method %s, want llm", before.Method)
	}
	learned := activeLearnings(t, m, "trip")

	// Two days later, a turn of the 20th arrives.
	clk.Set(at("2026-11-22T12:00:00Z"))
	late := turnAt("c", "2026-11-20T11:00:00Z", "Ana: also, the museum closes at 18:00 on Mondays.")
	if _, err := m.Ingest(ctx, strata.Batch{Conversation: "trip", Turns: []strata.Turn{late}}); err != nil {
		t.Fatal(err)
	}
	days = nodesAt(t, m, "trip", 1)
	if len(days) != 1 || days[0].Key != "2026-11-20" || days[0].FirstSeq != 1 || days[0].LastSeq != 3 {
		t.Fatalf("after: day nodes %v, want one 2026-11-20 over turns 1-3", nodeKeys(days))
	}
	if days[0].ID == before.ID || !days[0].Pending || days[0].Method != strata.MethodExtractive {
		t.Errorf("after: node %s pending %v method %s; want a new node, extractive, its model summary due", days[0].ID, days[0].Pending, days[0].Method)
	}
	if days[0].Tier != strata.TierCold {
		t.Errorf("after: tier %s, want cold again", days[0].Tier)
	}
	turns, err := st.Turns(ctx, strata.TurnFilter{Namespace: m.Namespace(), Conversation: "trip"})
	if err != nil {
		t.Fatal(err)
	}
	all := append(first, late)
	if len(turns) != 3 {
		t.Fatalf("%d turns read back, want 3", len(turns))
	}
	for i, tr := range turns {
		if tr.Content != all[i].Content || tr.Importance != all[i].Importance {
			t.Errorf("turn %d reads back as %q (importance %v), want %q (%v)", i+1, tr.Content, tr.Importance, all[i].Content, all[i].Importance)
		}
	}
	stats, err := m.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Archive.Records != 3 {
		t.Errorf("archive holds %d records, want 3 (one per turn of the cold span)", stats.Archive.Records)
	}
	vc, err := st.VectorCounts(ctx, m.Namespace(), "trip")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range vc {
		for _, sp := range c.Spaces {
			if sp.Nodes != 0 {
				t.Errorf("%d node vectors after the reopening, want 0 (the old node's went with it; the new one waits for its model summary)", sp.Nodes)
			}
		}
	}

	// The model summary is written again, and learning again adds no
	// duplicate.
	if _, err := m.SummarizePending(ctx, strata.PendingOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Learn(ctx, "trip"); err != nil {
		t.Fatal(err)
	}
	if got := nodesAt(t, m, "trip", 1)[0]; got.Method != strata.MethodLLM || got.Pending {
		t.Errorf("after the pass: method %s pending %v", got.Method, got.Pending)
	}
	again := activeLearnings(t, m, "trip")
	seen := map[string]bool{}
	for _, l := range again {
		k := strings.ToLower(l.Text)
		if seen[k] {
			t.Errorf("learning %q twice", l.Text)
		}
		seen[k] = true
	}
	if len(again) < len(learned) {
		t.Errorf("%d learnings after, %d before", len(again), len(learned))
	}
}

func nodesAt(t *testing.T, m *strata.Memory, conv string, lvl int) []strata.Node {
	t.Helper()
	ns, err := m.Store().Nodes(context.Background(), strata.NodeFilter{Namespace: m.Namespace(), Conversation: conv, Level: lvl})
	if err != nil {
		t.Fatal(err)
	}
	return ns
}

func activeLearnings(t *testing.T, m *strata.Memory, conv string) []strata.Learning {
	t.Helper()
	ls, err := m.Learnings(context.Background(), strata.LearningFilter{Conversation: conv})
	if err != nil {
		t.Fatal(err)
	}
	var out []strata.Learning
	for _, l := range ls {
		if l.Status != strata.LearningSuperseded {
			out = append(out, l)
		}
	}
	return out
}

// TestReopenTwoWriters adds turns of one closed day from two Memories over
// one database file, as two processes would: however their rollups
// interleave, the day ends with one node over every turn.
func TestReopenTwoWriters(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "strata.db")
	clk := &clock{t: at("2026-11-22T00:00:00Z")}
	var ms [2]*strata.Memory
	for i := range ms {
		st, err := sqlite.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		if ms[i], err = strata.New(strata.Config{Store: st, Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New(),
			Policy: strata.CalendarPolicy(), Now: clk.Now}); err != nil {
			t.Fatal(err)
		}
	}
	const each = 15
	errs := make(chan error, 2)
	for w, m := range ms {
		go func() {
			for i := range each {
				tr := turnAt(fmt.Sprintf("w%d-%d", w, i), fmt.Sprintf("2026-11-20T%02d:%02d:00Z", 8+i/4, (i%4)*15+w), fmt.Sprintf("writer %d says %d.", w, i))
				if _, err := m.Ingest(ctx, strata.Batch{Conversation: "both", Turns: []strata.Turn{tr}}); err != nil {
					errs <- fmt.Errorf("writer %d turn %d: %w", w, i, err)
					return
				}
			}
			errs <- nil
		}()
	}
	for range ms {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ms[0].Rollup(ctx, "both"); err != nil {
		t.Fatal(err)
	}
	days := nodesAt(t, ms[0], "both", 1)
	if len(days) != 1 || days[0].FirstSeq != 1 || days[0].LastSeq != 2*each {
		t.Fatalf("day nodes %v, want one over turns 1-%d", nodeKeys(days), 2*each)
	}
	weeks := nodesAt(t, ms[0], "both", 2)
	if len(weeks) > 1 || len(weeks) == 1 && weeks[0].LastSeq != 2*each {
		t.Fatalf("week nodes %v, want at most one, over every turn", nodeKeys(weeks))
	}
}

// TestReopenWhileModelWrites reopens a day while the model is writing its
// summary: the summary of the replaced node is dropped, not put back as a
// second node of the day, and the replacement gets its own.
func TestReopenWhileModelWrites(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "strata.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	policy := strata.Policy{Name: "llmdays", Levels: []strata.Level{
		{Name: "day", Kind: strata.KindCalendar, Period: strata.PeriodDay, Budget: 200, Summarizer: strata.MethodLLM},
	}}
	var m *strata.Memory
	model := &fakeModel{answer: func(n int, req strata.CompletionRequest) (strata.Completion, error) {
		if n == 1 { // a late turn of the same day arrives meanwhile
			late := turnAt("late", "2026-11-20T11:00:00Z", "Ana: one more thing about the trip.")
			if _, err := m.Ingest(context.Background(), strata.Batch{Conversation: "trip", Turns: []strata.Turn{late}}); err != nil {
				return strata.Completion{}, err
			}
		}
		return strata.Completion{Text: "SUMMARY:\nAna planned the trip on 20 November.\nFACTS:\n- Ana plans a trip.\nTHEMES: travel",
			OutputTokens: 20, FinishReason: "stop"}, nil
	}}
	clk := &clock{t: at("2026-11-21T12:00:00Z")}
	if m, err = strata.New(strata.Config{Store: st, Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New(),
		Policy: policy, Now: clk.Now, LLM: strata.LLMOptions{Completer: model, Backoff: time.Millisecond},
		Tiers: &strata.TierPolicy{Off: true}}); err != nil {
		t.Fatal(err)
	}
	first := []strata.Turn{turnAt("a", "2026-11-20T09:00:00Z", "Ana: the trip starts Friday.")}
	if _, err := m.Ingest(ctx, strata.Batch{Conversation: "trip", Turns: first}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.SummarizePending(ctx, strata.PendingOptions{}); err != nil {
		t.Fatalf("SummarizePending: %v", err)
	}
	days := nodesAt(t, m, "trip", 1)
	if len(days) != 1 || days[0].LastSeq != 2 {
		t.Fatalf("day nodes %v, want one over turns 1-2", nodeKeys(days))
	}
	if _, err := m.SummarizePending(ctx, strata.PendingOptions{}); err != nil {
		t.Fatal(err)
	}
	if d := nodesAt(t, m, "trip", 1)[0]; d.Method != strata.MethodLLM || d.Pending {
		t.Errorf("the replacement: method %s pending %v, want its own model summary", d.Method, d.Pending)
	}
}

// TestWedgedPyramidRepaired starts from the pyramid the race of two
// processes used to leave (a core node standing over a session node that
// the other process had reopened into a longer one) and checks that the
// next append repairs it: it answers without error and ends in the pyramid
// one import of the same turns makes.
func TestWedgedPyramidRepaired(t *testing.T) {
	ctx := context.Background()
	clk := &clock{t: at("2026-11-02T00:00:00Z")}
	m, _ := newClocked(t, clk, nil)
	var turns []strata.Turn
	for s := range 8 { // eight sessions of two turns, two hours apart
		for i := range 2 {
			turns = append(turns, turnAt(fmt.Sprintf("s%d-%d", s, i),
				fmt.Sprintf("2026-11-01T%02d:%02d:00Z", 2*s, 10*i), fmt.Sprintf("session %d, turn %d.", s, i)))
		}
	}
	late := turnAt("s7-late", "2026-11-01T14:20:00Z", "session 7 again, after its node closed.")
	next := []strata.Turn{
		turnAt("s8-0", "2026-11-01T18:00:00Z", "session 8 starts."),
		turnAt("s8-1", "2026-11-01T18:10:00Z", "session 8 goes on."),
	}
	ingest := func(ts ...strata.Turn) {
		t.Helper()
		res, err := m.Ingest(ctx, strata.Batch{Conversation: "w", Policy: "sessions", Turns: ts})
		if err != nil || res.RollupDeferred != "" {
			t.Fatalf("ingest: %v %s", err, res.RollupDeferred)
		}
	}
	ingest(turns...)
	cores := nodesAt(t, m, "w", 2)
	if len(cores) != 1 || cores[0].LastSeq != 16 {
		t.Fatalf("core nodes %v, want one over turns 1-16", nodeKeys(cores))
	}
	old := cores[0]
	ingest(late) // session 7 reopens; its core node is made again over 1-17
	// The state the race left: the old core node put back over the
	// session node that is gone.
	now := nodesAt(t, m, "w", 2)
	if _, err := m.Store().ReplaceNodes(ctx, m.Namespace(), "w", []string{now[0].ID}, nil); err != nil {
		t.Fatal(err)
	}
	if err := m.Store().PutNodes(ctx, m.Namespace(), "w", []strata.Node{old}); err != nil {
		t.Fatal(err)
	}
	clk.Set(at("2026-11-01T19:00:00Z"))
	ingest(next...)

	bclk := &clock{t: clk.Now()}
	bm, _ := newClocked(t, bclk, nil)
	all := append(append(append([]strata.Turn{}, turns...), late), next...)
	if _, err := bm.Ingest(ctx, strata.Batch{Conversation: "w", Policy: "sessions", Turns: all}); err != nil {
		t.Fatal(err)
	}
	for lvl := 1; lvl <= 3; lvl++ {
		got, want := nodeKeys(nodesAt(t, m, "w", lvl)), nodeKeys(nodesAt(t, bm, "w", lvl))
		if !slices.Equal(got, want) {
			t.Fatalf("level %d: %v, one import makes %v", lvl, got, want)
		}
	}
}
