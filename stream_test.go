package strata_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/extractive"
	"github.com/strata-memory/strata/internal/proptest"
	"github.com/strata-memory/strata/sqlite"
)

// This file proves invariant 7 (stream equals bulk): turns appended in
// random splits, late into periods that had closed, across restarts and
// under a moving clock, end in the same pyramid as one import of the same
// turns at the final clock.
//
// `go test` runs a bounded number of cases; RAPID_CHECKS=N (or
// -rapid.checks=N) runs more. A case that ever failed is kept under
// testdata/rapid/ and replayed first on every run.

// streamPolicies are the pyramids the property runs over: the three
// presets and three custom ones (counts over days, and sessions under
// calendar levels, with and without a week level that months cut).
var streamPolicies = []strata.Policy{
	{Name: "mixed", Levels: []strata.Level{
		{Name: "day", Kind: strata.KindCalendar, Period: strata.PeriodDay, Budget: 120},
		{Name: "trio", Kind: strata.KindCount, Span: 3, Budget: 200},
		{Name: "pair", Kind: strata.KindCount, Span: 2, Budget: 300},
	}},
	{Name: "episodes", Levels: []strata.Level{
		{Name: "session", Kind: strata.KindSession, Budget: 150},
		{Name: "day", Kind: strata.KindCalendar, Period: strata.PeriodDay, Budget: 200},
		{Name: "month", Kind: strata.KindCalendar, Period: strata.PeriodMonth, Budget: 300},
	}},
	{Name: "diary", Levels: []strata.Level{
		{Name: "session", Kind: strata.KindSession, Budget: 150},
		{Name: "week", Kind: strata.KindCalendar, Period: strata.PeriodWeek, Budget: 200},
		{Name: "month", Kind: strata.KindCalendar, Period: strata.PeriodMonth, Budget: 300},
	}},
}

// streamZones are the time zones the property's periods close in.
var streamZones = []string{"UTC", "America/New_York", "Asia/Kathmandu"}

var streamWords = []string{"Lisbon", "invoice", "port 8080", "Maria", "deploy", "2023-05-08", "garden",
	"/etc/hosts", "error E42", "piano", "Kyoto", "budget", "v1.4.2", "the race", "Tuesday"}

// streamCase is one generated conversation and how to append it.
type streamCase struct {
	policy  string
	zone    string
	tiers   strata.TierPolicy
	turns   []strata.Turn
	splits  []int       // batch sizes, summing to len(turns)
	clocks  []time.Time // the clock of each batch, never going back
	restart []bool      // reopen the store before the batch
}

func genStreamCase(t *rapid.T) streamCase {
	var c streamCase
	names := []string{"chunks", "calendar", "sessions", "mixed", "episodes", "diary"}
	c.policy = rapid.SampledFrom(names).Draw(t, "policy")
	switch rapid.IntRange(0, 2).Draw(t, "tiers") {
	case 0:
		c.tiers = strata.TierPolicy{Off: true}
	case 1:
		c.tiers = strata.TierPolicy{HotChunks: rapid.IntRange(0, 2).Draw(t, "hot"), WarmMaxTurns: rapid.IntRange(3, 30).Draw(t, "warmTurns")}
	default:
		c.tiers = strata.TierPolicy{HotChunks: rapid.IntRange(0, 1).Draw(t, "hot"), WarmMaxAge: 2 * time.Hour}
	}
	n := rapid.IntRange(1, 90).Draw(t, "turns")
	at := time.Date(2026, time.Month(rapid.IntRange(1, 12).Draw(t, "month")), rapid.IntRange(1, 28).Draw(t, "day"),
		rapid.IntRange(0, 23).Draw(t, "hour"), 0, 0, 0, time.UTC)
	for i := range n {
		switch rapid.IntRange(0, 9).Draw(t, "step") {
		case 0, 1, 2, 3: // within a session
			at = at.Add(time.Duration(rapid.IntRange(0, 20).Draw(t, "minutes")) * time.Minute)
		case 4, 5: // after a gap
			at = at.Add(time.Duration(rapid.IntRange(31, 600).Draw(t, "gap")) * time.Minute)
		case 6, 7: // days later
			at = at.Add(time.Duration(rapid.IntRange(1, 9).Draw(t, "days")) * 24 * time.Hour)
		case 8: // out of order: stamped before the turn before it
			at = at.Add(-time.Duration(rapid.IntRange(1, 3000).Draw(t, "back")) * time.Minute)
		case 9: // at the same instant
		}
		role := strata.RoleUser
		name := "Ana"
		if i%2 == 1 {
			role, name = strata.RoleAssistant, "Bo"
		}
		w := rapid.SliceOfN(rapid.SampledFrom(streamWords), 1, 4).Draw(t, "words")
		tr := strata.Turn{ExtID: fmt.Sprintf("t%03d", i), Role: role, Name: name, Time: at,
			Content: fmt.Sprintf("%s said %d things about %v.", name, i, w)}
		if rapid.IntRange(0, 9).Draw(t, "pin") == 0 {
			tr.Importance = 0.9
		}
		c.turns = append(c.turns, tr)
	}
	clock := c.turns[0].Time
	for left := n; left > 0; {
		k := rapid.IntRange(1, min(left, 12)).Draw(t, "batch")
		if rapid.Bool().Draw(t, "one") {
			k = 1
		}
		last := c.turns[n-left+k-1].Time
		switch rapid.IntRange(0, 3).Draw(t, "clock") {
		case 0: // the clock stays
		case 1: // live: the clock is at the batch's newest turn
			clock = latest(clock, last)
		case 2: // minutes or hours later
			clock = latest(clock, last).Add(time.Duration(rapid.IntRange(1, 300).Draw(t, "later")) * time.Minute)
		case 3: // days later: periods close
			clock = latest(clock, last).Add(time.Duration(rapid.IntRange(1, 10).Draw(t, "daysLater")) * 24 * time.Hour)
		}
		c.splits = append(c.splits, k)
		c.clocks = append(c.clocks, clock)
		c.restart = append(c.restart, rapid.IntRange(0, 7).Draw(t, "restart") == 0)
		left -= k
	}
	c.zone = rapid.SampledFrom(streamZones).Draw(t, "zone")
	return c
}

// fataler is what the helpers need of a *testing.T or a *rapid.T.
type fataler interface {
	Fatalf(format string, args ...any)
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// streamMemory opens a Memory over the SQLite file at path, a new store
// (openNewStore) if there is no file there.
func streamMemory(t fataler, path string, c *clock, tiers strata.TierPolicy) (*strata.Memory, *sqlite.Store) {
	var st *sqlite.Store
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		st = openNewStore(t, path)
	} else {
		if st, err = sqlite.Open(context.Background(), path); err != nil {
			t.Fatalf("%v", err)
		}
	}
	m, err := strata.New(strata.Config{Store: st, Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New(),
		Policies: streamPolicies, Now: c.Now, Tiers: &tiers})
	if err != nil {
		st.Close()
		t.Fatalf("%v", err)
	}
	return m, st
}

// pyramidState is what stream and bulk must agree on.
type pyramidState struct {
	Nodes    []strata.Node
	Counters map[string]int
	Sessions int
	Tiers    []strata.TierStats
	Turns    []strata.Turn
}

func statePyramid(t fataler, m *strata.Memory, conv string) pyramidState {
	ctx := context.Background()
	var s pyramidState
	ns, err := m.Store().Nodes(ctx, strata.NodeFilter{Namespace: m.Namespace(), Conversation: conv})
	if err != nil {
		t.Fatalf("%v", err)
	}
	for _, n := range ns {
		n.Created, n.ColdAt = time.Time{}, time.Time{} // when, by the clock, not what
		n.Start, n.End = n.Start.UTC(), n.End.UTC()
		s.Nodes = append(s.Nodes, n)
	}
	st, err := m.Stats(ctx)
	if err != nil {
		t.Fatalf("%v", err)
	}
	for _, pc := range st.PerConversation {
		if pc.ID == conv {
			s.Counters, s.Sessions = pc.Counters, pc.Sessions
			for _, ts := range pc.Tiers {
				ts.StoredBytes = 0 // block and segment sizes depend on how the copies were written
				s.Tiers = append(s.Tiers, ts)
			}
		}
	}
	if s.Turns, err = m.Store().Turns(ctx, strata.TurnFilter{Namespace: m.Namespace(), Conversation: conv}); err != nil {
		t.Fatalf("%v", err)
	}
	for i := range s.Turns {
		s.Turns[i].Time = s.Turns[i].Time.UTC()
	}
	return s
}

// checkTiling fails unless every level's nodes follow each other from
// turn 1 without gap or overlap, and no two nodes of a level share a key.
func checkTiling(t fataler, s pyramidState) {
	next := map[int]int64{}
	seen := map[string]bool{}
	for _, n := range s.Nodes {
		if want := next[n.Level] + 1; n.FirstSeq != want && !(next[n.Level] == 0 && n.FirstSeq == 1) {
			t.Fatalf("level %d: node %s starts at turn %d, want %d", n.Level, n.Key, n.FirstSeq, want)
		}
		next[n.Level] = n.LastSeq
		if n.Key != "" {
			k := fmt.Sprintf("%d/%s", n.Level, n.Key)
			if seen[k] {
				t.Fatalf("level %d: two nodes %q", n.Level, n.Key)
			}
			seen[k] = true
		}
	}
}

func TestStreamEqualsBulk(t *testing.T) {
	defer proptest.Bound(25, 8)()
	rapid.Check(t, func(rt *rapid.T) {
		c := genStreamCase(rt)
		dir := t.TempDir()
		ctx := context.Background()
		conv := "c"

		// Stream: the batches one after another, the clock moving or not,
		// the store reopened now and then.
		clk := &clock{t: c.clocks[0]}
		path := filepath.Join(dir, "stream.db")
		m, st := streamMemory(rt, path, clk, c.tiers)
		i := 0
		for b, k := range c.splits {
			if c.restart[b] {
				st.Close()
				m, st = streamMemory(rt, path, clk, c.tiers)
			}
			clk.Set(c.clocks[b])
			if _, err := m.Ingest(ctx, strata.Batch{Conversation: conv, Policy: c.policy, TimeZone: c.zone, Turns: c.turns[i : i+k]}); err != nil {
				st.Close()
				rt.Fatalf("batch %d: %v", b, err)
			}
			i += k
		}
		got := statePyramid(rt, m, conv)
		st.Close()

		// Bulk: one import of every turn at the final clock.
		bclk := &clock{t: c.clocks[len(c.clocks)-1]}
		bm, bst := streamMemory(rt, filepath.Join(dir, "bulk.db"), bclk, c.tiers)
		defer bst.Close()
		if _, err := bm.Ingest(ctx, strata.Batch{Conversation: conv, Policy: c.policy, TimeZone: c.zone, Turns: c.turns}); err != nil {
			rt.Fatalf("bulk: %v", err)
		}
		want := statePyramid(rt, bm, conv)

		checkTiling(rt, want)
		checkTiling(rt, got)
		checkMonthCut(rt, bm, conv)
		if len(got.Nodes) != len(want.Nodes) {
			rt.Fatalf("stream made %d nodes, bulk %d:\nstream %v\nbulk   %v", len(got.Nodes), len(want.Nodes), nodeKeys(got.Nodes), nodeKeys(want.Nodes))
		}
		for j := range want.Nodes {
			if !reflect.DeepEqual(got.Nodes[j], want.Nodes[j]) {
				rt.Fatalf("node %d differs:\nstream %+v\nbulk   %+v", j, got.Nodes[j], want.Nodes[j])
			}
		}
		if !reflect.DeepEqual(got.Counters, want.Counters) || got.Sessions != want.Sessions {
			rt.Fatalf("counters: stream %v (%d sessions), bulk %v (%d sessions)", got.Counters, got.Sessions, want.Counters, want.Sessions)
		}
		if !reflect.DeepEqual(got.Tiers, want.Tiers) {
			rt.Fatalf("tiers: stream %+v, bulk %+v", got.Tiers, want.Tiers)
		}
		if !slices.EqualFunc(got.Turns, want.Turns, func(a, b strata.Turn) bool { return reflect.DeepEqual(a, b) }) {
			rt.Fatalf("turns read back differ")
		}
	})
}

func nodeKeys(ns []strata.Node) []string {
	var out []string
	for _, n := range ns {
		out = append(out, fmt.Sprintf("L%d:%s:%d-%d", n.Level, n.Key, n.FirstSeq, n.LastSeq))
	}
	return out
}
