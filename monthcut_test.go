package strata_test

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/extractive"
	"github.com/strata-memory/strata/internal/proptest"
)

// This file tests the month cut (Policy.MonthCut): a month node covers its
// calendar month in the conversation's time zone, every turn of a closed
// month lies under exactly that month's node, and a pyramid built before
// the rule is rebuilt into the one a fresh import makes.

// checkMonthCut fails unless conv's month nodes follow the month cut: a
// month node holds the turns of its month, and the turns stamped out of
// order that joined them (earlier than a turn before them, never after the
// month); every turn of a month that has a node, but those stamped out of
// order, lies under it; and a node of a level the month cuts holds the
// turns of one month.
func checkMonthCut(t fataler, m *strata.Memory, conv string) {
	ctx := context.Background()
	c, err := m.Conversation(ctx, conv)
	if err != nil {
		t.Fatalf("%v", err)
	}
	p, err := m.PolicyOf(ctx, conv)
	if err != nil {
		t.Fatalf("%v", err)
	}
	month := p.LevelOf(strata.PeriodMonth)
	if month == 0 {
		return
	}
	loc := c.Location()
	ts, err := m.Store().Turns(ctx, strata.TurnFilter{Namespace: m.Namespace(), Conversation: conv})
	if err != nil {
		t.Fatalf("%v", err)
	}
	bySeq := map[int64]strata.Turn{}
	inOrder := map[int64]bool{}
	var high time.Time
	for i, tt := range ts {
		bySeq[tt.Seq] = tt
		inOrder[tt.Seq] = i == 0 || !tt.Time.Before(high)
		if i == 0 || tt.Time.After(high) {
			high = tt.Time
		}
	}
	ns, err := m.Store().Nodes(ctx, strata.NodeFilter{Namespace: m.Namespace(), Conversation: conv})
	if err != nil {
		t.Fatalf("%v", err)
	}
	owner := map[string]strata.Node{}
	for _, n := range ns {
		switch {
		case n.Level == month:
			k, err := strata.ParsePeriod(n.Key, loc)
			if err != nil || k.Kind != strata.PeriodMonth {
				t.Fatalf("month node %s has key %q (%v)", n.ID, n.Key, err)
			}
			owner[k.Label()] = n
			for seq := n.FirstSeq; seq <= n.LastSeq; seq++ {
				tt, ok := bySeq[seq]
				if ok && (inOrder[seq] && !k.Contains(tt.Time) || !tt.Time.Before(k.End)) {
					t.Fatalf("month node %s (turns %d-%d) holds turn %d of %s", n.Key, n.FirstSeq, n.LastSeq, seq, tt.Time.In(loc))
				}
			}
		case p.MonthCut(n.Level):
			held := ""
			for seq := n.FirstSeq; seq <= n.LastSeq; seq++ {
				tt, ok := bySeq[seq]
				if !ok || !inOrder[seq] {
					continue
				}
				l := strata.PeriodOf(strata.PeriodMonth, tt.Time, loc).Label()
				if held == "" {
					held = l
				} else if l != held {
					t.Fatalf("%s node %q (turns %d-%d) holds turns of %s and %s", p.LevelName(n.Level), n.Key, n.FirstSeq, n.LastSeq, held, l)
				}
			}
		}
	}
	for _, tt := range ts {
		l := strata.PeriodOf(strata.PeriodMonth, tt.Time, loc).Label()
		if n, ok := owner[l]; ok && inOrder[tt.Seq] && (tt.Seq < n.FirstSeq || tt.Seq > n.LastSeq) {
			t.Fatalf("turn %d of %s lies outside the month node %s (turns %d-%d)", tt.Seq, tt.Time.In(loc), n.Key, n.FirstSeq, n.LastSeq)
		}
	}
}

// weekMonth is a policy whose first level is a week that months cut.
var weekMonth = strata.Policy{Name: "weekmonth", Levels: []strata.Level{
	{Name: "week", Kind: strata.KindCalendar, Period: strata.PeriodWeek, Budget: 200},
	{Name: "month", Kind: strata.KindCalendar, Period: strata.PeriodMonth, Budget: 300},
}}

// TestMonthNodesCoverTheirMonth imports generated conversations whose
// turns cluster around month ends, in time zones with odd offsets, under
// every policy with a month level: each month node covers exactly its
// calendar month, and each turn of a closed month lies under exactly its
// node.
func TestMonthNodesCoverTheirMonth(t *testing.T) {
	defer proptest.Bound(40, 15)()
	policies := append([]strata.Policy{weekMonth}, streamPolicies...)
	rapid.Check(t, func(rt *rapid.T) {
		name := rapid.SampledFrom([]string{"calendar", "diary", "episodes", "weekmonth"}).Draw(rt, "policy")
		zone := rapid.SampledFrom([]string{"UTC", "America/New_York", "Asia/Kathmandu", "Australia/Lord_Howe", "Pacific/Chatham"}).Draw(rt, "zone")
		loc, err := strata.LoadTimeZone(zone)
		if err != nil {
			rt.Fatalf("%v", err)
		}
		y, mo := 2023+rapid.IntRange(0, 3).Draw(rt, "year"), time.Month(rapid.IntRange(1, 12).Draw(rt, "month"))
		at := time.Date(y, mo+1, 1, 0, 0, 0, 0, loc).Add(-time.Duration(rapid.IntRange(0, 96).Draw(rt, "before")) * time.Hour)
		n := rapid.IntRange(1, 60).Draw(rt, "turns")
		var turns []strata.Turn
		for i := range n {
			switch rapid.IntRange(0, 5).Draw(rt, "step") {
			case 0, 1, 2:
				at = at.Add(time.Duration(rapid.IntRange(0, 40).Draw(rt, "minutes")) * time.Minute)
			case 3, 4:
				at = at.Add(time.Duration(rapid.IntRange(1, 30).Draw(rt, "hours")) * time.Hour)
			default:
				at = at.Add(time.Duration(rapid.IntRange(1, 12).Draw(rt, "days")) * 24 * time.Hour)
			}
			turns = append(turns, strata.Turn{ExtID: fmt.Sprintf("t%02d", i), Role: strata.RoleUser, Name: "Ann",
				Content: fmt.Sprintf("Note %d about the garden.", i), Time: at})
		}
		st := openNewStore(rt, filepath.Join(t.TempDir(), "strata.db"))
		defer st.Close()
		m, err := strata.New(strata.Config{Store: st, Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New(),
			Policies: policies, Tiers: &strata.TierPolicy{Off: true}, Now: func() time.Time { return at.AddDate(0, 3, 0) }})
		if err != nil {
			rt.Fatalf("%v", err)
		}
		ctx := context.Background()
		if _, err := m.Ingest(ctx, strata.Batch{Conversation: "c", Policy: name, TimeZone: zone, Turns: turns}); err != nil {
			rt.Fatalf("%v", err)
		}
		checkTiling(rt, statePyramid(rt, m, "c"))
		checkMonthCut(rt, m, "c")
		// The clock is months past the last turn: every month is closed,
		// each node inside its month.
		p, _ := m.PolicyOf(ctx, "c")
		months, err := m.Store().Nodes(ctx, strata.NodeFilter{Namespace: m.Namespace(), Conversation: "c", Level: p.LevelOf(strata.PeriodMonth)})
		if err != nil {
			rt.Fatalf("%v", err)
		}
		seen := map[string]bool{}
		for _, tt := range turns {
			seen[strata.PeriodOf(strata.PeriodMonth, tt.Time, loc).Label()] = true
		}
		if len(months) != len(seen) {
			rt.Fatalf("%d month nodes for turns in %d months: %v", len(months), len(seen), nodeKeys(months))
		}
		for _, n := range months {
			k, _ := strata.ParsePeriod(n.Key, loc)
			if !k.Contains(n.Start) || !k.Contains(n.End) {
				rt.Fatalf("month node %s spans %s .. %s", n.Key, n.Start.In(loc), n.End.In(loc))
			}
		}
	})
}

// putShape rewrites conv's pyramid as an earlier version of strata would
// have built it: each spec is "level|key|first-last", finer levels first.
// The specs of the finest level given replace the nodes of that level they
// overlap; every node above that level goes, replaced by the specs. A
// node's children are the nodes of the level below in its span.
func putShape(t *testing.T, m *strata.Memory, conv string, spec []string) {
	t.Helper()
	ctx := context.Background()
	type entry struct {
		lvl  int
		key  string
		a, b int64
	}
	var es []entry
	for _, s := range spec {
		f := strings.Split(s, "|")
		var e entry
		if len(f) != 3 {
			t.Fatalf("spec %q", s)
		}
		if _, err := fmt.Sscanf(f[0]+" "+f[2], "%d %d-%d", &e.lvl, &e.a, &e.b); err != nil {
			t.Fatalf("spec %q: %v", s, err)
		}
		e.key = f[1]
		es = append(es, e)
	}
	low := es[0].lvl
	old, err := m.Store().Nodes(ctx, strata.NodeFilter{Namespace: m.Namespace(), Conversation: conv})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	var have []strata.Node // the nodes that stay, then the new ones
	for _, n := range old {
		gone := n.Level > low
		for _, e := range es {
			gone = gone || (e.lvl == n.Level && n.FirstSeq <= e.b && n.LastSeq >= e.a)
		}
		if gone {
			ids = append(ids, n.ID)
		} else {
			have = append(have, n)
		}
	}
	ts, err := m.Store().Turns(ctx, strata.TurnFilter{Namespace: m.Namespace(), Conversation: conv})
	if err != nil {
		t.Fatal(err)
	}
	var nodes []strata.Node
	for _, e := range es {
		n := strata.Node{ID: strata.NodeID(m.Namespace(), conv, e.lvl, e.a, e.b), Conversation: conv, Level: e.lvl, Key: e.key,
			FirstSeq: e.a, LastSeq: e.b, Start: ts[e.a-1].Time, End: ts[e.a-1].Time, Summary: "Built the old way: " + e.key,
			Tokens: 8, Method: strata.MethodExtractive, Status: strata.StatusOK, Created: ts[e.b-1].Time}
		for _, tt := range ts[e.a-1 : e.b] {
			n.SourceTokens += tt.Tokens
			if tt.Time.Before(n.Start) {
				n.Start = tt.Time
			}
			if tt.Time.After(n.End) {
				n.End = tt.Time
			}
		}
		for _, c := range have {
			if c.Level == e.lvl-1 && c.FirstSeq >= e.a && c.LastSeq <= e.b {
				n.Children = append(n.Children, c.ID)
			}
		}
		nodes = append(nodes, n)
		have = append(have, n)
	}
	if _, err := m.Store().ReplaceNodes(ctx, m.Namespace(), conv, ids, nodes); err != nil {
		t.Fatal(err)
	}
}

// TestMonthCutRebuildsOldPyramids writes pyramids as strata built them
// when a week belonged to the month of its Thursday and a session to the
// month of its first turn, then opens the store again: the first rollup
// rebuilds them into the pyramid a fresh import makes (a level-1 node that
// had gone warm or cold too, byte for byte), and later rollups, in this
// process or another, change nothing.
func TestMonthCutRebuildsOldPyramids(t *testing.T) {
	for _, tc := range []struct {
		name, policy, zone string
		clock              time.Time
		turns              []strata.Turn
		old                []string          // the pyramid as it was built
		want               map[int]string    // keys of the rebuilt levels
		tiers              strata.TierPolicy // while the old pyramid waits
		zoom               map[string]string // month: the turns Zoom gives
	}{{
		name: "calendar, a week across May and June", policy: "calendar", zone: "UTC", clock: at("2024-01-01T00:00:00Z"),
		turns: []strata.Turn{
			turnAt("a", "2023-05-24T10:00:00Z", "Wednesday in W21."),
			turnAt("b", "2023-05-24T11:00:00Z", "Still Wednesday."),
			turnAt("c", "2023-05-29T09:00:00Z", "Monday of W22, in May."),
			turnAt("d", "2023-06-01T09:00:00Z", "Thursday of W22."),
			turnAt("e", "2023-06-01T23:59:59Z", "Late Thursday."),
			turnAt("f", "2023-06-12T08:00:00Z", "Monday of W24."),
		},
		old: []string{"2|2023-W21|1-2", "2|2023-W22|3-5", "2|2023-W24|6-6", "3|2023-05|1-2", "3|2023-06|3-6"},
		want: map[int]string{
			2: "2023-W21:1-2 2023-W22:3-3 2023-W22 (2023-06):4-5 2023-W24:6-6",
			3: "2023-05:1-3 2023-06:4-6",
		},
		tiers: strata.TierPolicy{Off: true},
		zoom:  map[string]string{"2023-05": "1-3", "2023-06": "4-6"},
	}, {
		name: "calendar, the week of an open month", policy: "calendar", zone: "America/New_York", clock: at("2026-10-06T12:00:00Z"),
		turns: []strata.Turn{
			turnAt("a", "2026-09-29T14:00:00Z", "Tuesday of W40, in September."),
			turnAt("b", "2026-10-02T14:00:00Z", "Friday of W40, in October."),
		},
		old:   []string{"2|2026-W40|1-2"},
		want:  map[int]string{2: "2026-W40:1-1 2026-W40 (2026-10):2-2", 3: "2026-09:1-1"},
		tiers: strata.TierPolicy{Off: true},
		zoom:  map[string]string{"2026-09": "1-1", "2026-10": "2-2"},
	}, {
		// In New York the second session starts at 23:40 on 30 September
		// and ends after midnight: in UTC all of it is in October.
		name: "sessions and weeks, a session across the end of September", policy: "diary", zone: "America/New_York",
		clock: at("2027-01-10T00:00:00Z"),
		turns: []strata.Turn{
			turnAt("a", "2026-09-15T14:00:00Z", "Mid September, about the garden shed."),
			turnAt("b", "2026-09-15T14:05:00Z", "Still mid September."),
			turnAt("c", "2026-10-01T03:40:00Z", "Late on the last evening of September."),
			turnAt("d", "2026-10-01T03:55:00Z", "Five to midnight."),
			turnAt("e", "2026-10-01T04:10:00Z", "Ten past midnight, October."),
			turnAt("f", "2026-10-01T04:20:00Z", "Still the same session."),
			turnAt("g", "2026-10-20T13:00:00Z", "October 20."),
			turnAt("h", "2026-11-03T14:00:00Z", "November 3."),
		},
		old: []string{"1|session 2|3-6",
			"2|2026-W38|1-2", "2|2026-W40|3-6", "2|2026-W43|7-7", "2|2026-W45|8-8",
			"3|2026-09|1-2", "3|2026-10|3-7", "3|2026-11|8-8"},
		want: map[int]string{
			1: "session 1:1-2 session 2:3-4 session 2 (2026-10):5-6 session 3:7-7 session 4:8-8",
			2: "2026-W38:1-2 2026-W40:3-4 2026-W40 (2026-10):5-6 2026-W43:7-7 2026-W45:8-8",
			3: "2026-09:1-4 2026-10:5-7 2026-11:8-8",
		},
		tiers: strata.TierPolicy{HotChunks: 0, WarmMaxTurns: 2},
		zoom:  map[string]string{"2026-09": "1-4", "2026-10": "5-7", "2026-11": "8-8"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			path := filepath.Join(dir, "old.db")
			clk := &clock{t: tc.clock}
			b := strata.Batch{Conversation: "c", Policy: tc.policy, TimeZone: tc.zone, Turns: tc.turns}

			// The store as an earlier version left it.
			m, st := streamMemory(t, path, clk, strata.TierPolicy{Off: true})
			if _, err := m.Ingest(ctx, b); err != nil {
				t.Fatal(err)
			}
			putShape(t, m, "c", tc.old)
			st.Close()
			if !tc.tiers.Off {
				m, st = streamMemory(t, path, clk, tc.tiers)
				if _, err := m.Tier(ctx, "c"); err != nil {
					t.Fatal(err)
				}
				ns, err := m.Store().Nodes(ctx, strata.NodeFilter{Namespace: m.Namespace(), Conversation: "c", Level: 1, Covers: 3})
				if err != nil || len(ns) != 1 || ns[0].Tier == strata.TierHot {
					t.Fatalf("the old node over turn 3: %+v (%v), want one warm or cold", ns, err)
				}
				st.Close()
			}

			// Opened by this version: the first pass rebuilds.
			m, st = streamMemory(t, path, clk, tc.tiers)
			pass, err := m.RollupAll(ctx)
			if err != nil || pass.Made["c"] == 0 {
				t.Fatalf("first pass: %+v, %v; want nodes made", pass, err)
			}
			for lvl, want := range tc.want {
				if got := strings.Join(keys(t, m, "c", lvl), " "); got != want {
					t.Errorf("level %d: %s\nwant %s", lvl, got, want)
				}
			}
			got := statePyramid(t, m, "c")
			checkMonthCut(t, m, "c")
			for month, want := range tc.zoom {
				loc, _ := strata.LoadTimeZone(tc.zone)
				p, err := strata.ParsePeriod(month, loc)
				if err != nil {
					t.Fatal(err)
				}
				ts, err := m.Zoom(ctx, "c", p)
				if err != nil || len(ts) == 0 {
					t.Fatalf("zoom %s: %d turns, %v", month, len(ts), err)
				}
				if s := fmt.Sprintf("%d-%d", ts[0].Seq, ts[len(ts)-1].Seq); s != want {
					t.Errorf("zoom %s: turns %s, want %s", month, s, want)
				}
			}
			if pass, err := m.RollupAll(ctx); err != nil || len(pass.Made) != 0 {
				t.Errorf("second pass: %+v, %v; want nothing made", pass, err)
			}
			st.Close()
			m, st = streamMemory(t, path, clk, tc.tiers)
			if pass, err := m.RollupAll(ctx); err != nil || len(pass.Made) != 0 {
				t.Errorf("a pass of another process: %+v, %v; want nothing made", pass, err)
			}
			st.Close()

			// One import of the same turns makes the same pyramid.
			bm, bst := streamMemory(t, filepath.Join(dir, "fresh.db"), clk, tc.tiers)
			defer bst.Close()
			if _, err := bm.Ingest(ctx, b); err != nil {
				t.Fatal(err)
			}
			want := statePyramid(t, bm, "c")
			if len(got.Nodes) != len(want.Nodes) {
				t.Fatalf("rebuilt %d nodes, a fresh import %d:\n%v\n%v", len(got.Nodes), len(want.Nodes), nodeKeys(got.Nodes), nodeKeys(want.Nodes))
			}
			for j := range want.Nodes {
				if !reflect.DeepEqual(got.Nodes[j], want.Nodes[j]) {
					t.Errorf("node %d differs:\nrebuilt %+v\nfresh   %+v", j, got.Nodes[j], want.Nodes[j])
				}
			}
			if !reflect.DeepEqual(got.Tiers, want.Tiers) || !reflect.DeepEqual(got.Counters, want.Counters) {
				t.Errorf("tiers %+v counters %v, a fresh import %+v %v", got.Tiers, got.Counters, want.Tiers, want.Counters)
			}
			if !reflect.DeepEqual(got.Turns, want.Turns) {
				t.Errorf("the turns read back differ from a fresh import's")
			}
		})
	}
}

// TestMarkImportantWeekParts marks a week that a month end cuts in two:
// both of its nodes count as marked.
func TestMarkImportantWeekParts(t *testing.T) {
	c := &clock{t: at("2024-01-01T00:00:00Z")}
	m, _ := newClocked(t, c, nil)
	ctx := context.Background()
	turns := []strata.Turn{
		turnAt("c", "2023-05-29T09:00:00Z", "Monday of W22, in May."),
		turnAt("d", "2023-06-01T09:00:00Z", "Thursday of W22."),
	}
	if _, err := m.Ingest(ctx, strata.Batch{Conversation: "w", Turns: turns, Policy: "calendar"}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.MarkImportant(ctx, "w", "2023-W22", true); err != nil {
		t.Fatal(err)
	}
	conv, err := m.Conversation(ctx, "w")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"2023-W22", "2023-W22 (2023-06)"} {
		if !conv.IsImportant(k) {
			t.Errorf("%q is not important after marking 2023-W22", k)
		}
	}
	if conv.IsImportant("2023-W23") || conv.IsImportant("session 3 (2023-06)") {
		t.Errorf("unmarked keys count as important")
	}
	if got := strings.Join(keys(t, m, "w", 2), " "); got != "2023-W22:1-1 2023-W22 (2023-06):2-2" {
		t.Errorf("weeks %s", got)
	}
}
