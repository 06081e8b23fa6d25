package storetest

import (
	"context"
	"flag"
	"fmt"
	"os"
	"reflect"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/extractive"
)

// This file holds the property of several writers: turns appended through
// two Memories over one store, as two server processes would, by several
// clients at once, in random batches, end in the pyramid that one import of
// the same turns (in the order the store gave them) makes, for every preset
// and for custom policies. Every append must succeed: a rollup that loses a
// race to another process reads the pyramid again, and a stored pyramid
// that no longer fits its children is repaired by the next rollup rather
// than refused forever.

// rollupPolicies are the custom pyramids the property runs besides the
// presets: counts over days, and sessions under calendar levels (with a
// week level that months cut at their ends).
var rollupPolicies = []strata.Policy{
	{Name: "mixed", Levels: []strata.Level{
		{Name: "day", Kind: strata.KindCalendar, Period: strata.PeriodDay, Budget: 120},
		{Name: "trio", Kind: strata.KindCount, Span: 3, Budget: 200},
		{Name: "pair", Kind: strata.KindCount, Span: 2, Budget: 300},
	}},
	{Name: "diary", Levels: []strata.Level{
		{Name: "session", Kind: strata.KindSession, Budget: 150},
		{Name: "week", Kind: strata.KindCalendar, Period: strata.PeriodWeek, Budget: 200},
		{Name: "month", Kind: strata.KindCalendar, Period: strata.PeriodMonth, Budget: 300},
	}},
}

// rollupClock is a clock the writers move forward, never back.
type rollupClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *rollupClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

// advance moves the clock to t if t is later.
func (c *rollupClock) advance(t time.Time) {
	c.mu.Lock()
	if t.After(c.t) {
		c.t = t
	}
	c.mu.Unlock()
}

// rollupCase is one generated conversation and how its writers append it.
type rollupCase struct {
	policy  string
	writers int
	turns   []strata.Turn
	batches [][]strata.Turn // in the order generated; writer i takes every writers-th from i
	ahead   []time.Duration // how far past its newest turn each batch moves the clock
}

func genRollupCase(t *rapid.T) rollupCase {
	var c rollupCase
	c.policy = rapid.SampledFrom([]string{"chunks", "calendar", "sessions", "mixed", "diary"}).Draw(t, "policy")
	c.writers = rapid.IntRange(2, 4).Draw(t, "writers")
	n := rapid.IntRange(4, 120).Draw(t, "turns")
	at := time.Date(2026, time.Month(rapid.IntRange(1, 12).Draw(t, "month")), rapid.IntRange(1, 28).Draw(t, "day"),
		rapid.IntRange(0, 23).Draw(t, "hour"), 0, 0, 0, time.UTC)
	for i := range n {
		switch rapid.IntRange(0, 9).Draw(t, "step") {
		case 0, 1, 2, 3, 4: // within a session
			at = at.Add(time.Duration(rapid.IntRange(1, 20).Draw(t, "minutes")) * time.Minute)
		case 5, 6: // after a session gap
			at = at.Add(time.Duration(rapid.IntRange(31, 600).Draw(t, "gap")) * time.Minute)
		case 7, 8: // days later
			at = at.Add(time.Duration(rapid.IntRange(1, 9).Draw(t, "days")) * 24 * time.Hour)
		case 9: // at the same instant
		}
		role := strata.RoleUser
		if i%2 == 1 {
			role = strata.RoleAssistant
		}
		w := rapid.SliceOfN(rapid.SampledFrom([]string{"Lisbon", "invoice", "port 8080", "deploy", "garden", "piano", "Kyoto"}), 1, 3).Draw(t, "words")
		c.turns = append(c.turns, strata.Turn{ExtID: fmt.Sprintf("t%03d", i), Role: role, Time: at,
			Content: fmt.Sprintf("turn %d is about %v.", i, w)})
	}
	for i := 0; i < n; {
		k := min(rapid.IntRange(1, 3).Draw(t, "batch"), n-i)
		c.batches = append(c.batches, c.turns[i:i+k])
		c.ahead = append(c.ahead, []time.Duration{0, time.Minute, 2 * time.Hour, 3 * 24 * time.Hour}[rapid.IntRange(0, 3).Draw(t, "ahead")])
		i += k
	}
	return c
}

// RunConcurrentRollups runs the property of several writers. open returns
// two handles on one new, empty store (two processes' views of it) and a
// function that closes both.
//
// `go test` runs a bounded number of cases; RAPID_CHECKS=N (or
// -rapid.checks=N) runs more.
func RunConcurrentRollups(t *testing.T, open func(t *testing.T) (a, b strata.Store, closeBoth func())) {
	if f := flag.Lookup("rapid.checks"); f != nil && os.Getenv("RAPID_CHECKS") == "" && f.Value.String() == f.DefValue {
		flag.Set("rapid.checks", "12")
		defer flag.Set("rapid.checks", f.DefValue)
	}
	ctx := context.Background()
	rapid.Check(t, func(rt *rapid.T) {
		c := genRollupCase(rt)
		clk := &rollupClock{t: c.turns[0].Time}
		a, b, closeAB := open(t)
		defer closeAB()
		var ms [2]*strata.Memory
		for i, s := range []strata.Store{a, b} {
			ms[i] = rollupMemory(rt, s, clk)
		}
		var wg sync.WaitGroup
		errs := make(chan error, c.writers)
		for w := range c.writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				m := ms[w%2]
				for i := w; i < len(c.batches); i += c.writers {
					batch := c.batches[i]
					clk.advance(batch[len(batch)-1].Time.Add(c.ahead[i]))
					res, err := m.Ingest(ctx, strata.Batch{Conversation: "shared", Policy: c.policy, Turns: batch})
					if err == nil && res.RollupDeferred != "" {
						err = fmt.Errorf("stored, but %s", res.RollupDeferred)
					}
					if err != nil {
						errs <- fmt.Errorf("writer %d, batch %d: %w", w, i, err)
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			rt.Fatalf("%v", err)
		}
		// A worker's pass: what a rollup racing the last appends left.
		if _, err := ms[0].Rollup(ctx, "shared"); err != nil {
			rt.Fatalf("rollup after the writers: %v", err)
		}
		got := rollupState(rt, ms[1], "shared")
		if len(got.turns) != len(c.turns) {
			rt.Fatalf("stored %d turns, appended %d", len(got.turns), len(c.turns))
		}

		// One import of the stored turns, in their stored order, at the
		// final clock.
		bulk, _, closeBulk := open(t)
		defer closeBulk()
		bm := rollupMemory(rt, bulk, &rollupClock{t: clk.Now()})
		in := make([]strata.Turn, len(got.turns))
		for i, tr := range got.turns {
			in[i] = strata.Turn{ExtID: tr.ExtID, Role: tr.Role, Time: tr.Time, Content: tr.Content}
		}
		if _, err := bm.Ingest(ctx, strata.Batch{Conversation: "shared", Policy: c.policy, Turns: in}); err != nil {
			rt.Fatalf("bulk: %v", err)
		}
		want := rollupState(rt, bm, "shared")
		if len(got.nodes) != len(want.nodes) {
			rt.Fatalf("the writers made %d nodes, one import %d:\nwriters %v\nimport  %v", len(got.nodes), len(want.nodes), nodeSpans(got.nodes), nodeSpans(want.nodes))
		}
		for i := range want.nodes {
			if !reflect.DeepEqual(got.nodes[i], want.nodes[i]) {
				rt.Fatalf("node %d differs:\nwriters %+v\nimport  %+v", i, got.nodes[i], want.nodes[i])
			}
		}
		for i := range want.turns {
			if got.turns[i].Session != want.turns[i].Session {
				rt.Fatalf("turn %d: session %d, one import gives %d", want.turns[i].Seq, got.turns[i].Session, want.turns[i].Session)
			}
		}
	})
}

// rollupMemory is a Memory over s with the extractive summarizer, tiers
// off, on clock c.
func rollupMemory(t *rapid.T, s strata.Store, c *rollupClock) *strata.Memory {
	off := strata.TierPolicy{Off: true}
	m, err := strata.New(strata.Config{Store: s, Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New(),
		Policies: rollupPolicies, Now: c.Now, Tiers: &off})
	if err != nil {
		t.Fatalf("%v", err)
	}
	return m
}

type rollupResult struct {
	nodes []strata.Node
	turns []strata.Turn
}

// rollupState reads a conversation's nodes (without the instants they
// were made) and turns.
func rollupState(t *rapid.T, m *strata.Memory, conv string) rollupResult {
	ctx := context.Background()
	var r rollupResult
	ns, err := m.Store().Nodes(ctx, strata.NodeFilter{Namespace: m.Namespace(), Conversation: conv})
	if err != nil {
		t.Fatalf("%v", err)
	}
	for _, n := range ns {
		n.Created = time.Time{}
		n.Start, n.End = n.Start.UTC(), n.End.UTC()
		r.nodes = append(r.nodes, n)
	}
	if r.turns, err = m.Store().Turns(ctx, strata.TurnFilter{Namespace: m.Namespace(), Conversation: conv}); err != nil {
		t.Fatalf("%v", err)
	}
	for i := range r.turns {
		r.turns[i].Time = r.turns[i].Time.UTC()
	}
	return r
}

func nodeSpans(ns []strata.Node) []string {
	var out []string
	for _, n := range ns {
		out = append(out, fmt.Sprintf("L%d:%s:%d-%d", n.Level, n.Key, n.FirstSeq, n.LastSeq))
	}
	return out
}
