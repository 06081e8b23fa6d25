package strata_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/extractive"
	"github.com/strata-memory/strata/internal/synth"
)

// TestRetentionCountsFromArchiving imports a year-old history under a
// retention rule and tiers that archive it at once: nothing expires during
// the import, nor while the archived spans are younger than the rule, and
// once the clock passes the rule counted from the archiving, the spans
// expire with an audit record that keeps both times.
func TestRetentionCountsFromArchiving(t *testing.T) {
	ctx := context.Background()
	archived := at("2026-11-26T12:00:00Z")
	c := &clock{t: archived}
	m, st := newClocked(t, c, &strata.TierPolicy{HotChunks: 2, WarmMaxTurns: 50, ColdRetentionDays: 90})
	// 300 turns, a year before the clock, an hour apart.
	from := at("2025-11-01T09:00:00Z")
	turns := make([]strata.Turn, 300)
	for i := range turns {
		turns[i] = strata.Turn{ExtID: fmt.Sprintf("t%d", i+1), Role: strata.RoleUser, Name: "Ann",
			Content: fmt.Sprintf("note %d about the garden and the boat", i+1), Time: from.Add(time.Duration(i) * time.Hour)}
	}
	if _, err := m.Ingest(ctx, strata.Batch{Conversation: "old", Policy: "chunks", Turns: turns}); err != nil {
		t.Fatal(err)
	}
	spans, err := st.Nodes(ctx, strata.NodeFilter{Namespace: m.Namespace(), Conversation: "old", Level: 1})
	if err != nil {
		t.Fatal(err)
	}
	var cold []strata.Node
	for _, n := range spans {
		switch n.Tier {
		case strata.TierCold:
			if !n.ColdAt.Equal(archived) {
				t.Errorf("node %s went cold at %v, want the clock's %v", n.ID, n.ColdAt, archived)
			}
			cold = append(cold, n)
		case strata.TierExpired:
			t.Errorf("node %s (turns %d-%d) expired during the import", n.ID, n.FirstSeq, n.LastSeq)
		default:
			if !n.ColdAt.IsZero() {
				t.Errorf("node %s is %s but has a cold time %v", n.ID, n.Tier, n.ColdAt)
			}
		}
	}
	if len(cold) < 20 {
		t.Fatalf("%d of %d spans are cold after the import, want most", len(cold), len(spans))
	}
	expiries := func() []strata.Expiry {
		t.Helper()
		ex, err := st.Expiries(ctx, m.Namespace(), "old")
		if err != nil {
			t.Fatal(err)
		}
		return ex
	}
	if ex := expiries(); len(ex) != 0 {
		t.Fatalf("the import expired %d spans: %+v", len(ex), ex[0])
	}
	// Every turn is still whole.
	back, err := st.Turns(ctx, strata.TurnFilter{Namespace: m.Namespace(), Conversation: "old"})
	if err != nil || len(back) != len(turns) {
		t.Fatalf("after the import: %d turns (%v), want %d", len(back), err, len(turns))
	}
	for i := range back {
		if back[i].Content != turns[i].Content {
			t.Fatalf("turn %d: %q, want %q", i+1, back[i].Content, turns[i].Content)
		}
	}

	// 89 days after the archiving: nothing is past the rule.
	c.Set(archived.Add(89 * 24 * time.Hour))
	for _, f := range []func() (strata.TierResult, error){
		func() (strata.TierResult, error) { return m.TierPlan(ctx, "old") },
		func() (strata.TierResult, error) { return m.Retention(ctx, "old", true) },
		func() (strata.TierResult, error) { return m.Tier(ctx, "old") },
		func() (strata.TierResult, error) { return m.Retention(ctx, "old", false) },
	} {
		res, err := f()
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Expired) != 0 {
			t.Fatalf("89 days after the archiving, %d spans expire", len(res.Expired))
		}
	}

	// 91 days after: the cold spans expire, and the record says when each
	// went cold and how old its newest turn is.
	later := archived.Add(91 * 24 * time.Hour)
	c.Set(later)
	plan, err := m.Retention(ctx, "old", true)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Expired) != len(cold) {
		t.Fatalf("a dry run 91 days after the archiving expires %d spans, want %d", len(plan.Expired), len(cold))
	}
	res, err := m.Retention(ctx, "old", false)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Expired) != len(cold) {
		t.Fatalf("91 days after the archiving, %d spans expire, want %d", len(res.Expired), len(cold))
	}
	log := expiries()
	if len(log) != len(cold) {
		t.Fatalf("%d audit records, want %d", len(log), len(cold))
	}
	for i, e := range log {
		n := cold[i]
		if e.NodeID != n.ID || !e.At.Equal(later) || !e.ColdAt.Equal(archived) || !e.NewestTurn.Equal(n.End) {
			t.Errorf("audit record %d: node %s at %v, cold at %v, newest turn %v; want node %s at %v, cold at %v, newest turn %v",
				i, e.NodeID, e.At, e.ColdAt, e.NewestTurn, n.ID, later, archived, n.End)
		}
		if e.NewestTurn.After(from.Add(300 * time.Hour)) {
			t.Errorf("audit record %d: newest turn %v is not the span's", i, e.NewestTurn)
		}
	}
	if res.Expired[0].ColdAt != log[0].ColdAt || res.Expired[0].NewestTurn != log[0].NewestTurn {
		t.Errorf("the returned record %+v differs from the log's %+v", res.Expired[0], log[0])
	}
}

// TestDeferTiers: with DeferTiers, Ingest rolls up but moves nothing, and
// RollupAll then moves exactly what an Ingest without it would have.
func TestDeferTiers(t *testing.T) {
	ctx := context.Background()
	policy := &strata.TierPolicy{HotChunks: 2, WarmMaxTurns: 50}
	turns := synth.New(4).Turns(400)
	tiersOf := func(m *strata.Memory) map[string]strata.Tier {
		t.Helper()
		ns, err := m.Store().Nodes(ctx, strata.NodeFilter{Namespace: m.Namespace(), Conversation: "c", Level: 1})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]strata.Tier{}
		for _, n := range ns {
			out[n.ID] = n.Tier
		}
		return out
	}
	open := func(deferred bool) *strata.Memory {
		st := openNewStore(t, filepath.Join(t.TempDir(), "strata.db"))
		t.Cleanup(func() { st.Close() })
		m, err := strata.New(strata.Config{Store: st, Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New(),
			Tiers: policy, DeferTiers: deferred})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < len(turns); i += 40 {
			res, err := m.Ingest(ctx, strata.Batch{Conversation: "c", Turns: turns[i : i+40]})
			if err != nil {
				t.Fatal(err)
			}
			if deferred && res.Moved != 0 {
				t.Fatalf("an append with DeferTiers moved %d spans", res.Moved)
			}
		}
		return m
	}
	now, later := open(false), open(true)
	for id, tier := range tiersOf(later) {
		if tier != strata.TierHot {
			t.Fatalf("node %s is %s before any pass", id, tier)
		}
	}
	pass, err := later.RollupAll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(pass.Moved) == 0 {
		t.Fatal("the pass moved nothing")
	}
	want, got := tiersOf(now), tiersOf(later)
	if len(want) == 0 || len(got) != len(want) {
		t.Fatalf("%d spans, want %d", len(got), len(want))
	}
	for id, tier := range want {
		if got[id] != tier {
			t.Errorf("node %s is %s after the pass, %s when each append moves", id, got[id], tier)
		}
	}
}
