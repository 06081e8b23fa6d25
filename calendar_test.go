package strata_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/extractive"
	"github.com/strata-memory/strata/internal/synth"
	"github.com/strata-memory/strata/sqlite"
)

// clock is a settable clock for a Memory.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

// newClocked opens a Memory over a fresh SQLite file, with tiering off
// unless tiers is given, on the clock c.
func newClocked(t testing.TB, c *clock, tiers *strata.TierPolicy) (*strata.Memory, *sqlite.Store) {
	t.Helper()
	st := openNewStore(t, filepath.Join(t.TempDir(), "strata.db"))
	t.Cleanup(func() { st.Close() })
	if tiers == nil {
		tiers = &strata.TierPolicy{Off: true}
	}
	m, err := strata.New(strata.Config{Store: st, Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New(),
		Now: c.Now, Tiers: tiers})
	if err != nil {
		t.Fatal(err)
	}
	return m, st
}

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func turnAt(ext, when, text string) strata.Turn {
	return strata.Turn{ExtID: ext, Role: strata.RoleUser, Name: "Ann", Content: text, Time: at(when)}
}

// keys lists the keys of a conversation's nodes of one level.
func keys(t testing.TB, m *strata.Memory, conv string, lvl int) []string {
	t.Helper()
	ns, err := m.Store().Nodes(context.Background(), strata.NodeFilter{Namespace: m.Namespace(), Conversation: conv, Level: lvl})
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, n := range ns {
		out = append(out, fmt.Sprintf("%s:%d-%d", n.Key, n.FirstSeq, n.LastSeq))
	}
	return out
}

func TestCalendarPyramid(t *testing.T) {
	c := &clock{t: at("2024-01-01T00:00:00Z")}
	m, _ := newClocked(t, c, nil)
	ctx := context.Background()
	// Days across a week that straddles May and June 2023: 2023-W22 runs
	// Monday 29 May to Sunday 4 June, so the month level cuts it at the end
	// of May: one week node in each month, and each month node holds its
	// calendar month exactly.
	turns := []strata.Turn{
		turnAt("a", "2023-05-24T10:00:00Z", "Wednesday in W21."),
		turnAt("b", "2023-05-24T11:00:00Z", "Still Wednesday."),
		turnAt("c", "2023-05-29T09:00:00Z", "Monday of W22, in May."),
		turnAt("d", "2023-06-01T09:00:00Z", "Thursday of W22."),
		turnAt("e", "2023-06-01T23:59:59Z", "Late Thursday."),
		turnAt("f", "2023-06-12T08:00:00Z", "Monday of W24."),
	}
	if _, err := m.Ingest(ctx, strata.Batch{Conversation: "cal", Turns: turns, Policy: "calendar"}); err != nil {
		t.Fatal(err)
	}
	for lvl, want := range map[int]string{
		1: "2023-05-24:1-2 2023-05-29:3-3 2023-06-01:4-5 2023-06-12:6-6",
		2: "2023-W21:1-2 2023-W22:3-3 2023-W22 (2023-06):4-5 2023-W24:6-6",
		3: "2023-05:1-3 2023-06:4-6",
	} {
		if got := strings.Join(keys(t, m, "cal", lvl), " "); got != want {
			t.Errorf("level %d: %s, want %s", lvl, got, want)
		}
	}
	// Rolling up again changes nothing.
	if n, err := m.Rollup(ctx, "cal"); err != nil || n != 0 {
		t.Fatalf("second rollup made %d nodes (err %v), want 0", n, err)
	}
}

// TestCalendarClosesAtMidnight follows a live conversation in New York:
// its day closes at local midnight, not before, and not at UTC midnight.
func TestCalendarClosesAtMidnight(t *testing.T) {
	c := &clock{t: at("2024-03-01T15:00:00Z")}
	m, _ := newClocked(t, c, nil)
	ctx := context.Background()
	b := strata.Batch{Conversation: "ny", Policy: "calendar", TimeZone: "America/New_York", Turns: []strata.Turn{
		turnAt("a", "2024-03-01T15:00:00Z", "Morning in New York."),
		turnAt("b", "2024-03-02T03:00:00Z", "Ten at night in New York, past midnight UTC."),
	}}
	if _, err := m.Ingest(ctx, b); err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		now  string
		want string
	}{
		{"2024-03-02T03:00:00Z", ""},
		{"2024-03-02T04:59:59Z", ""}, // 23:59:59 in New York
		{"2024-03-02T05:00:00Z", "2024-03-01:1-2"},
	} {
		c.Set(at(step.now))
		if _, err := m.Rollup(ctx, "ny"); err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(keys(t, m, "ny", 1), " "); got != step.want {
			t.Fatalf("at %s: day nodes %q, want %q", step.now, got, step.want)
		}
	}
	// A turn of the next day is appended: 2 March stays open until its end.
	if _, err := m.Ingest(ctx, strata.Batch{Conversation: "ny", Turns: []strata.Turn{turnAt("c", "2024-03-02T14:00:00Z", "Saturday.")}}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(keys(t, m, "ny", 1), " "); got != "2024-03-01:1-2" {
		t.Fatalf("day nodes %q", got)
	}
}

// TestLateTurn: a turn stamped before its predecessor belongs to the
// predecessor's period, so calendar spans stay contiguous.
func TestLateTurn(t *testing.T) {
	c := &clock{t: at("2024-01-01T00:00:00Z")}
	m, _ := newClocked(t, c, nil)
	ctx := context.Background()
	turns := []strata.Turn{
		turnAt("a", "2023-05-01T10:00:00Z", "Monday."),
		turnAt("b", "2023-05-02T10:00:00Z", "Tuesday."),
		turnAt("c", "2023-05-01T12:00:00Z", "Stamped Monday, arriving after Tuesday."),
		turnAt("d", "2023-05-03T10:00:00Z", "Wednesday."),
	}
	if _, err := m.Ingest(ctx, strata.Batch{Conversation: "late", Turns: turns, Policy: "calendar"}); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(keys(t, m, "late", 1), " "), "2023-05-01:1-1 2023-05-02:2-3 2023-05-03:4-4"; got != want {
		t.Fatalf("days %s, want %s", got, want)
	}
}

func TestSessionPyramid(t *testing.T) {
	c := &clock{t: at("2023-01-01T00:00:00Z")}
	m, _ := newClocked(t, c, nil)
	ctx := context.Background()
	var turns []strata.Turn
	for s := 1; s <= 20; s++ {
		for i := 0; i < 3; i++ {
			tt := turnAt(fmt.Sprintf("s%d-%d", s, i), "2022-06-01T10:00:00Z", fmt.Sprintf("Session %d, turn %d.", s, i))
			tt.Time = tt.Time.Add(time.Duration(s)*24*time.Hour + time.Duration(i)*time.Minute)
			tt.SessionLabel = fmt.Sprint("s", s)
			tt.Metadata = map[string]any{"stress": float64(s%4) / 4, "emotion": []string{"calm", "warmth"}[s%2]}
			turns = append(turns, tt)
		}
	}
	// The clock sits 10 minutes after the last turn: the last session is
	// not over (30-minute gap) until the clock moves on.
	c.Set(turns[len(turns)-1].Time.Add(10 * time.Minute))
	if _, err := m.Ingest(ctx, strata.Batch{Conversation: "s", Turns: turns, Policy: "sessions"}); err != nil {
		t.Fatal(err)
	}
	if n := len(keys(t, m, "s", 1)); n != 19 {
		t.Fatalf("%d session nodes before the gap passed, want 19", n)
	}
	c.Set(turns[len(turns)-1].Time.Add(31 * time.Minute))
	if _, err := m.Rollup(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	sess := keys(t, m, "s", 1)
	if len(sess) != 20 || sess[0] != "session 1:1-3" || sess[19] != "session 20:58-60" {
		t.Fatalf("sessions %v", sess)
	}
	if cores := keys(t, m, "s", 2); len(cores) != 2 || cores[1] != ":25-48" {
		t.Fatalf("cores %v", cores)
	}
	tree, err := m.Tree(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"session_seq": 4, "core_seq": 2, "sphere_seq": 0}
	for k, v := range want {
		if tree.Counters[k] != v {
			t.Errorf("counter %s = %d, want %d (all: %v)", k, tree.Counters[k], v, tree.Counters)
		}
	}
	// 002's aggregation: a session's statistics, merged by its core.
	ns, err := m.Store().Nodes(ctx, strata.NodeFilter{Namespace: m.Namespace(), Conversation: "s", Level: 2, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	a := ns[0].Aggregates
	if a == nil {
		t.Fatal("core has no aggregates")
	}
	// Sessions 1-8: stress s%4/4 = .25 .5 .75 0 .25 .5 .75 0, three turns each.
	if st := a.Numbers["stress"]; st.Count != 24 || st.Mean != 0.375 || st.Min != 0 || st.Max != 0.75 {
		t.Errorf("stress %+v", st)
	}
	if em := a.Labels["emotion"]; em.Counts["calm"] != 12 || em.Counts["warmth"] != 12 || em.Dominant != "calm" {
		t.Errorf("emotion %+v", em)
	}
}

func TestPolicyValidation(t *testing.T) {
	cal := func(name string, p strata.PeriodKind) strata.Level {
		return strata.Level{Name: name, Kind: strata.KindCalendar, Period: p, Budget: 100}
	}
	tests := []struct {
		name   string
		levels []strata.Level
		want   string
	}{
		{"session then week", []strata.Level{{Name: "session", Kind: strata.KindSession, Budget: 100}, cal("week", strata.PeriodWeek), cal("month", strata.PeriodMonth)}, ""},
		{"count over calendar", []strata.Level{cal("day", strata.PeriodDay), {Name: "fortnight", Kind: strata.KindCount, Span: 14, Budget: 100}}, ""},
		{"session above", []strata.Level{cal("day", strata.PeriodDay), {Name: "s", Kind: strata.KindSession, Budget: 100}}, "must be the first level"},
		{"finer above", []strata.Level{cal("week", strata.PeriodWeek), cal("day", strata.PeriodDay)}, "not coarser"},
		{"calendar over count", []strata.Level{{Name: "micro", Kind: strata.KindCount, Span: 10, Budget: 100}, cal("day", strata.PeriodDay)}, "cannot sit above the count level"},
		{"bad period", []strata.Level{cal("fortnight", "fortnight")}, `period "fortnight" is not a calendar period`},
		{"no kind", []strata.Level{{Name: "x", Span: 3, Budget: 100}}, "kind is empty"},
		{"span on calendar", []strata.Level{{Name: "day", Kind: strata.KindCalendar, Period: strata.PeriodDay, Span: 3, Budget: 100}}, "has no span"},
		{"important below budget", []strata.Level{{Name: "day", Kind: strata.KindCalendar, Period: strata.PeriodDay, Budget: 100, ImportantBudget: 50}}, "important_budget 50"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := strata.Policy{Name: "custom", Levels: tt.levels}.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
	for _, name := range strata.Presets {
		p, err := strata.Preset(name)
		if err != nil || p.Validate() != nil {
			t.Errorf("preset %s: %v %v", name, err, p.Validate())
		}
	}
}

// TestCustomPolicy runs a policy of the configuration that mixes levels:
// sessions, then weeks, then months.
func TestCustomPolicy(t *testing.T) {
	st := openNewStore(t, filepath.Join(t.TempDir(), "strata.db"))
	defer st.Close()
	custom := strata.Policy{Name: "episodes", Levels: []strata.Level{
		{Name: "session", Kind: strata.KindSession, Budget: 200},
		{Name: "week", Kind: strata.KindCalendar, Period: strata.PeriodWeek, Budget: 400},
		{Name: "month", Kind: strata.KindCalendar, Period: strata.PeriodMonth, Budget: 800},
	}}
	m, err := strata.New(strata.Config{Store: st, Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New(),
		Policies: []strata.Policy{custom}, Tiers: &strata.TierPolicy{Off: true},
		Now: func() time.Time { return at("2024-01-01T00:00:00Z") }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	turns := synth.New(3).Turns(400)
	if _, err := m.Ingest(ctx, strata.Batch{Conversation: "e", Turns: turns, Policy: "episodes"}); err != nil {
		t.Fatal(err)
	}
	c, _ := m.Conversation(ctx, "e")
	sess, weeks, months := keys(t, m, "e", 1), keys(t, m, "e", 2), keys(t, m, "e", 3)
	if len(sess) != c.Sessions {
		t.Errorf("%d session nodes for %d sessions", len(sess), c.Sessions)
	}
	// Every level tiles the turns from 1 to the end, in order.
	for lvl, ks := range [][]string{sess, weeks, months} {
		next := int64(1)
		for _, k := range ks {
			var a, b int64
			if _, err := fmt.Sscanf(k[strings.LastIndexByte(k, ':')+1:], "%d-%d", &a, &b); err != nil || a != next {
				t.Fatalf("level %d: %s does not follow turn %d (%v)", lvl+1, k, next-1, err)
			}
			next = b + 1
		}
		if next != c.Turns+1 {
			t.Errorf("level %d covers up to turn %d of %d", lvl+1, next-1, c.Turns)
		}
	}
	// An unknown policy, or another policy than the conversation's, is refused.
	if _, err := m.Ingest(ctx, strata.Batch{Conversation: "x", Turns: turns[:1], Policy: "nope"}); strata.ErrorCode(err) != strata.EINVALID {
		t.Errorf("unknown policy: %v", err)
	}
	if _, err := m.Ingest(ctx, strata.Batch{Conversation: "e", Turns: turns[:1], Policy: "calendar"}); strata.ErrorCode(err) != strata.ECONFLICT {
		t.Errorf("other policy: %v", err)
	}
}

// TestWatch closes a day within one tick after midnight, on an injected
// clock, while nothing is written.
func TestWatch(t *testing.T) {
	c := &clock{t: at("2024-03-01T23:00:00Z")}
	m, _ := newClocked(t, c, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b := strata.Batch{Conversation: "live", Policy: "calendar", Turns: []strata.Turn{
		turnAt("a", "2024-03-01T22:00:00Z", "Evening."), turnAt("b", "2024-03-01T22:30:00Z", "Later."),
	}}
	if _, err := m.Ingest(ctx, b); err != nil {
		t.Fatal(err)
	}
	passes := make(chan strata.Pass)
	done := make(chan error, 1)
	go func() {
		done <- m.Watch(ctx, 5*time.Millisecond, func(p strata.Pass, err error) {
			if err != nil {
				t.Error(err)
			}
			select {
			case passes <- p:
			case <-ctx.Done():
			}
		})
	}()
	for i := 0; i < 3; i++ {
		if p := <-passes; len(p.Made) != 0 {
			t.Fatalf("before midnight, pass %d made %v", i, p.Made)
		}
	}
	c.Set(at("2024-03-02T00:00:01Z"))
	// The pass that may be running read the old clock; the next one sees
	// midnight.
	var made int
	for i := 0; i < 2 && made == 0; i++ {
		made = (<-passes).Made["live"]
	}
	if made != 1 { // the day; its week (to 3 March) and month stay open
		t.Fatalf("after midnight: %d nodes made, want 1", made)
	}
	if got := strings.Join(keys(t, m, "live", 1), " "); got != "2024-03-01:1-2" {
		t.Fatalf("day nodes %q", got)
	}
	cancel()
	if err := <-done; err != context.Canceled {
		t.Fatalf("Watch returned %v, want context.Canceled", err)
	}
}

// TestPinQuotesAndKeeps pins a turn after its span closed and moved to
// cold storage: its nodes are rewritten to quote it, and it stays raw in
// the row and in context packages.
func TestPinQuotesAndKeeps(t *testing.T) {
	c := &clock{t: at("2024-01-01T00:00:00Z")}
	m, _ := newClocked(t, c, &strata.TierPolicy{HotChunks: 1, WarmMaxTurns: 1})
	ctx := context.Background()
	turns := synth.New(5).Turns(120)
	special := "The launch code is ZX-4471, decided with Priya on the balcony."
	turns[14].Content = special
	if _, err := m.Ingest(ctx, strata.Batch{Conversation: "p", Turns: turns, Policy: "sessions"}); err != nil {
		t.Fatal(err)
	}
	before, err := m.Store().Nodes(ctx, strata.NodeFilter{Namespace: m.Namespace(), Conversation: "p", Covers: 15})
	if err != nil || len(before) == 0 {
		t.Fatalf("nodes over turn 15: %v %v", before, err)
	}
	if before[0].Tier != strata.TierCold {
		t.Fatalf("the span of turn 15 is %s, want cold", before[0].Tier)
	}
	if _, err := m.Pin(ctx, "p", 15, 0.9); err != nil {
		t.Fatal(err)
	}
	after, err := m.Store().Nodes(ctx, strata.NodeFilter{Namespace: m.Namespace(), Conversation: "p", Covers: 15})
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before) {
		t.Fatalf("%d nodes over turn 15 after pinning, %d before", len(after), len(before))
	}
	for _, n := range after {
		if n.Level == 1 && !strings.Contains(n.Summary, special) {
			t.Errorf("level-1 node %s does not quote the pinned turn: %q", n.ID, n.Summary)
		}
	}
	pkg, err := m.Context(ctx, strata.ContextRequest{Conversation: "p", Budget: 1500})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, it := range pkg.Items {
		found = found || (it.Kind == strata.KindTurn && it.FirstSeq == 15 && it.Reason == strata.ReasonPinned)
	}
	if !found {
		t.Errorf("the pinned turn is not in the package:\n%s", pkg.Rendered)
	}
	// Unpinned, it is a plain turn again, and its span is as it was.
	if _, err := m.Pin(ctx, "p", 15, 0); err != nil {
		t.Fatal(err)
	}
	_, ts, err := m.Expand(ctx, before[0].ID)
	if err != nil || ts[14-int(before[0].FirstSeq-1)].Content != special {
		t.Fatalf("expand after unpin: %v", err)
	}
}

// TestMarkImportant gives a day node its important budget.
func TestMarkImportant(t *testing.T) {
	c := &clock{t: at("2024-01-01T00:00:00Z")}
	m, _ := newClocked(t, c, nil)
	ctx := context.Background()
	var turns []strata.Turn
	g := synth.New(9)
	for i := 0; i < 60; i++ {
		tt := g.Next()
		tt.Time = at("2023-05-08T08:00:00Z").Add(time.Duration(i) * time.Minute)
		turns = append(turns, tt)
	}
	turns = append(turns, turnAt("next", "2023-05-09T08:00:00Z", "Next day."))
	if _, err := m.Ingest(ctx, strata.Batch{Conversation: "d", Turns: turns, Policy: "calendar"}); err != nil {
		t.Fatal(err)
	}
	day := func() strata.Node {
		ns, err := m.Store().Nodes(ctx, strata.NodeFilter{Namespace: m.Namespace(), Conversation: "d", Key: "2023-05-08"})
		if err != nil || len(ns) != 1 {
			t.Fatalf("day node: %v %v", ns, err)
		}
		return ns[0]
	}
	plain := day()
	marks, err := m.MarkImportant(ctx, "d", "2023-05-08", true)
	if err != nil || len(marks) != 1 {
		t.Fatalf("marks %v, err %v", marks, err)
	}
	rich := day()
	if rich.ID != plain.ID || rich.Tokens <= plain.Tokens || rich.Tokens > 1000 {
		t.Fatalf("important day: %d tokens (id %s), plain %d (id %s); want more, within 1000", rich.Tokens, rich.ID, plain.Tokens, plain.ID)
	}
	if _, err := m.MarkImportant(ctx, "d", "2023-05-08", false); err != nil {
		t.Fatal(err)
	}
	if again := day(); again.Summary != plain.Summary {
		t.Errorf("clearing the mark does not restore the summary")
	}
	if _, err := m.MarkImportant(ctx, "d", "May 8", true); strata.ErrorCode(err) != strata.EINVALID {
		t.Errorf("a bad label: %v", err)
	}
}

// TestSetPolicy moves a tiered conversation from chunks to calendar and
// back: every turn survives byte for byte and the pyramid is the one a
// fresh import builds.
func TestSetPolicy(t *testing.T) {
	c := &clock{t: at("2024-01-01T00:00:00Z")}
	m, _ := newClocked(t, c, &strata.TierPolicy{HotChunks: 1, WarmMaxTurns: 40})
	ctx := context.Background()
	turns := synth.New(11).Turns(300)
	if _, err := m.Ingest(ctx, strata.Batch{Conversation: "a", Turns: turns}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Ingest(ctx, strata.Batch{Conversation: "b", Turns: turns, Policy: "calendar"}); err != nil {
		t.Fatal(err)
	}
	ch, err := m.SetPolicy(ctx, "a", "calendar")
	if err != nil {
		t.Fatal(err)
	}
	if ch.From != "chunks" || ch.Removed != 30+15+3 || ch.Made == 0 || ch.Moved == 0 {
		t.Errorf("change %+v", ch)
	}
	for lvl := 1; lvl <= 3; lvl++ {
		ka, kb := keys(t, m, "a", lvl), keys(t, m, "b", lvl)
		if strings.Join(ka, " ") != strings.Join(kb, " ") {
			t.Errorf("level %d after SetPolicy: %v\nfresh import: %v", lvl, ka, kb)
		}
	}
	got, err := m.Zoom(ctx, "a", strata.Period{Kind: strata.PeriodRange, Start: at("2000-01-01T00:00:00Z"), End: at("2100-01-01T00:00:00Z")})
	if err != nil || len(got) != len(turns) {
		t.Fatalf("zoom over everything: %d turns, err %v", len(got), err)
	}
	for i := range got {
		if got[i].Content != turns[i].Content || got[i].ExtID != turns[i].ExtID {
			t.Fatalf("turn %d changed: %q", i+1, got[i].Content)
		}
	}
	if _, err := m.SetPolicy(ctx, "a", "nope"); strata.ErrorCode(err) != strata.EINVALID {
		t.Errorf("unknown policy: %v", err)
	}
}

// TestContextZoom: a query naming a day brings that day's turns raw, from
// cold storage too; relative expressions count from the newest turn or Now.
func TestContextZoom(t *testing.T) {
	c := &clock{t: at("2024-01-01T00:00:00Z")}
	m, _ := newClocked(t, c, &strata.TierPolicy{HotChunks: 1, WarmMaxTurns: 1})
	ctx := context.Background()
	turns := synth.New(13).Turns(600)
	if _, err := m.Ingest(ctx, strata.Batch{Conversation: "z", Turns: turns, Policy: "calendar"}); err != nil {
		t.Fatal(err)
	}
	// The day of turn 100, and the day before the newest turn.
	for _, tt := range []struct {
		query string
		now   time.Time
		day   time.Time
	}{
		{"what happened on " + turns[99].Time.Format("2 January 2006") + "?", time.Time{}, turns[99].Time},
		{"and yesterday?", turns[449].Time.AddDate(0, 0, 1), turns[449].Time},
		{"what did we say the day before yesterday", turns[299].Time.AddDate(0, 0, 2), turns[299].Time},
	} {
		p := strata.PeriodOf(strata.PeriodDay, tt.day, time.UTC)
		want, err := m.Zoom(ctx, "z", p)
		if err != nil {
			t.Fatal(err)
		}
		pkg, err := m.Context(ctx, strata.ContextRequest{Conversation: "z", Query: tt.query, Budget: 4000, Now: tt.now})
		if err != nil {
			t.Fatal(err)
		}
		raw := rawTurns(pkg)
		for _, w := range want {
			if !raw[w.Seq] {
				t.Errorf("%q: turn %d of %s is not in the package", tt.query, w.Seq, p.Label())
			}
		}
		if len(want) == 0 {
			t.Errorf("%q: no turns on %s: the test tests nothing", tt.query, p.Label())
		}
		if pkg.Tokens > 4000 {
			t.Errorf("%q: %d tokens over 4000", tt.query, pkg.Tokens)
		}
	}
}
