package spanfmt

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/strata-memory/strata"
)

// copies is a fake store's hydrate: the stub of seq n becomes a turn
// whose content is "whole n"; a stub of span bad makes the whole call
// fail, as an unreadable segment does; an expired stub is dropped.
func copies(bad int64, calls *int) func([]strata.Turn, []Stub) ([]strata.Turn, error) {
	return func(ts []strata.Turn, stubs []Stub) ([]strata.Turn, error) {
		*calls++
		out := slices.Clone(ts)
		drop := map[int]bool{}
		for _, st := range stubs {
			if st.Span == bad {
				return nil, fmt.Errorf("segment of span %d unreadable", bad)
			}
			if st.Tier == TierExpired {
				drop[st.Index] = true
				continue
			}
			out[st.Index].Content = fmt.Sprint("whole ", out[st.Index].Seq)
		}
		kept := out[:0]
		for i, t := range out {
			if !drop[i] {
				kept = append(kept, t)
			}
		}
		return kept, nil
	}
}

func contents(ts []strata.Turn) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Content)
	}
	return out
}

func TestHydrateReadable(t *testing.T) {
	ts := []strata.Turn{{Seq: 1, Content: "hot 1"}, {Seq: 2}, {Seq: 3}, {Seq: 4}, {Seq: 5, Content: "hot 5"}}
	stubs := []Stub{
		{Index: 1, Tier: TierWarm, Span: 10, HasSpan: true},
		{Index: 2, Tier: TierCold, Span: 20, HasSpan: true},
		{Index: 3, Tier: TierWarm, Span: 10, HasSpan: true},
	}
	ctx := context.Background()

	calls := 0
	got, err := HydrateReadable(ctx, slices.Clone(ts), stubs, copies(-1, &calls))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"hot 1", "whole 2", "whole 3", "whole 4", "hot 5"}; !slices.Equal(contents(got), want) || calls != 1 {
		t.Errorf("all readable: %q in %d calls, want %q in one", contents(got), calls, want)
	}

	// Span 20 unreadable: its turn is dropped, the others stay, each span
	// read on its own after the first call failed.
	calls = 0
	got, err = HydrateReadable(ctx, slices.Clone(ts), stubs, copies(20, &calls))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"hot 1", "hot 5", "whole 2", "whole 4"}; !slices.Equal(contents(got), want) || calls != 3 {
		t.Errorf("span 20 unreadable: %q in %d calls, want %q in 3", contents(got), calls, want)
	}

	// A done context fails the call instead of dropping turns.
	done, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := HydrateReadable(done, slices.Clone(ts), stubs, copies(20, &calls)); err == nil {
		t.Error("done context: no error")
	}
}

func TestHydrateHits(t *testing.T) {
	hit := func(conv string, seq int64, content string) strata.Hit {
		return strata.Hit{Kind: strata.KindTurn, Conversation: conv, Turn: &strata.Turn{Seq: seq, Content: content}}
	}
	hits := []strata.Hit{hit("a", 1, "hot a1"), hit("b", 7, ""), hit("a", 3, ""), hit("b", 8, ""), hit("a", 4, "")}
	stubs := []Stub{
		{Index: 1, Tier: TierCold, Span: 1, HasSpan: true},
		{Index: 2, Tier: TierWarm, Span: 2, HasSpan: true},
		{Index: 3, Tier: TierExpired, Span: 1, HasSpan: true},
		{Index: 4, Tier: TierWarm, Span: 2, HasSpan: true},
	}
	var order []string
	calls := 0
	got, err := HydrateHits(hits, stubs, func(c string, ts []strata.Turn, sts []Stub) ([]strata.Turn, error) {
		order = append(order, c)
		for i, st := range sts {
			if st.Index != i {
				t.Errorf("conversation %s: stub %d has index %d", c, i, st.Index)
			}
		}
		return copies(-1, &calls)(ts, sts)
	})
	if err != nil {
		t.Fatal(err)
	}
	var gotText []string
	for _, h := range got {
		gotText = append(gotText, h.Conversation+" "+h.Turn.Content)
	}
	if want := []string{"a hot a1", "b whole 7", "a whole 3", "a whole 4"}; !slices.Equal(gotText, want) {
		t.Errorf("hits %q, want %q (the expired one dropped, the order kept)", gotText, want)
	}
	if !slices.Equal(order, []string{"b", "a"}) {
		t.Errorf("conversations hydrated in order %q, want b then a, once each", order)
	}

	boom := errors.New("boom")
	if _, err := HydrateHits(hits[:2], stubs[:1], func(string, []strata.Turn, []Stub) ([]strata.Turn, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Errorf("a failing conversation: %v, want boom", err)
	}
}
