package strata_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/extractive"
	"github.com/strata-memory/strata/internal/synth"
	"github.com/strata-memory/strata/tiktoken"
)

var update = flag.Bool("update", false, "rewrite golden files")

func o200k(t testing.TB) strata.Tokenizer {
	t.Helper()
	tok, err := tiktoken.New("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestContextBudgetIsHard assembles packages at many budgets, with and
// without queries, in both renderings, and checks each against the
// tokenizer's count of the whole rendering.
func TestContextBudgetIsHard(t *testing.T) {
	ctx := context.Background()
	tok := o200k(t)
	m := newMemory(t, tok)
	turns := synth.New(11).Turns(437)
	turns[200].Importance = 0.9
	turns[436].Content = string(make([]byte, 0)) + "a closing remark about the bakery flour order"
	ingest(t, m, "c", turns)
	for _, budget := range []int{90, 100, 150, 333, 500, 1000, 2000, 4000, 9000} {
		for _, q := range []string{"", "bakery flour order", "Caroline painting", "zzz-nothing-matches"} {
			for _, format := range []string{strata.FormatText, strata.FormatMarkdown} {
				name := fmt.Sprintf("%d/%q/%s", budget, q, format)
				pkg, err := m.Context(ctx, strata.ContextRequest{Conversation: "c", Query: q, Budget: budget, Format: format})
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if n := tok.Count(pkg.Rendered); n != pkg.Tokens || n > budget {
					t.Fatalf("%s: rendered is %d tokens, package says %d, budget %d", name, n, pkg.Tokens, budget)
				}
				checkCoverage(t, name, pkg)
			}
		}
	}
}

// checkCoverage checks that every turn before the freshest raw run is
// either raw, under a summary, or declared omitted, and that the newest
// turn is raw whenever any fresh turn fits.
func checkCoverage(t *testing.T, name string, pkg *strata.Package) {
	t.Helper()
	covered := make([]bool, pkg.Turns+1)
	for _, it := range pkg.Items {
		for s := it.FirstSeq; s <= it.LastSeq; s++ {
			covered[s] = true
		}
	}
	for _, o := range pkg.Omitted {
		for s := o.FirstSeq; s <= o.LastSeq; s++ {
			covered[s] = true
		}
	}
	for s := int64(1); s <= pkg.Turns; s++ {
		if !covered[s] {
			t.Fatalf("%s: turn %d is neither shown, summarized nor declared omitted", name, s)
		}
	}
}

func TestContextFreshAndCoverage(t *testing.T) {
	ctx := context.Background()
	tok := o200k(t)
	m := newMemory(t, tok)
	ingest(t, m, "c", synth.New(5).Turns(419))
	pkg, err := m.Context(ctx, strata.ContextRequest{Conversation: "c", Budget: 2000})
	if err != nil {
		t.Fatal(err)
	}
	last := pkg.Items[len(pkg.Items)-1]
	if last.Kind != strata.KindTurn || last.FirstSeq != 419 {
		t.Fatalf("last item %+v, want turn 419 raw", last)
	}
	if len(pkg.Omitted) > 0 {
		t.Fatalf("omitted %+v at budget 2000 on 419 turns", pkg.Omitted)
	}
	first := pkg.Items[0]
	if first.Kind != strata.KindSummary || first.FirstSeq != 1 || first.Level != 3 {
		t.Fatalf("first item %+v, want the macro summary of turns 1-100", first)
	}
	// A budget that holds everything gives every turn raw.
	pkg, err = m.Context(ctx, strata.ContextRequest{Conversation: "c", Budget: 200000})
	if err != nil {
		t.Fatal(err)
	}
	if len(pkg.Items) != 419 {
		t.Fatalf("%d items at a huge budget, want all 419 turns raw", len(pkg.Items))
	}
	for i, it := range pkg.Items {
		if it.Kind != strata.KindTurn || it.FirstSeq != int64(i+1) {
			t.Fatalf("item %d: %+v", i, it)
		}
	}
	// Too small for the header: a clear error.
	if _, err := m.Context(ctx, strata.ContextRequest{Conversation: "c", Budget: 5}); strata.ErrorCode(err) != strata.EINVALID {
		t.Fatalf("budget 5: err %v, want EINVALID", err)
	}
	if _, err := m.Context(ctx, strata.ContextRequest{Conversation: "nope", Budget: 500}); strata.ErrorCode(err) != strata.ENOTFOUND {
		t.Fatalf("missing conversation: err %v, want ENOTFOUND", err)
	}
}

func TestContextQueryBringsEvidence(t *testing.T) {
	ctx := context.Background()
	m := newMemory(t, o200k(t))
	turns := synth.New(9).Turns(300)
	turns[41].Content = "My sister Ottilie adopted a greyhound called Biscuit last spring."
	ingest(t, m, "c", turns)
	pkg, err := m.Context(ctx, strata.ContextRequest{Conversation: "c", Query: "What is the name of Ottilie's greyhound?", Budget: 1000})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, it := range pkg.Items {
		if it.Kind == strata.KindTurn && it.FirstSeq == 42 {
			found = true
		}
	}
	if !found {
		t.Fatalf("turn 42 not raw in the package:\n%s", pkg.Rendered)
	}
}

func TestContextGolden(t *testing.T) {
	ctx := context.Background()
	m := newMemory(t, o200k(t))
	ingest(t, m, "golden", synth.New(2).Turns(57))
	for _, tc := range []struct {
		name, query, format string
		budget              int
	}{
		{"text-600", "", strata.FormatText, 600},
		{"markdown-600-query", "garden recipe", strata.FormatMarkdown, 600},
	} {
		pkg, err := m.Context(ctx, strata.ContextRequest{Conversation: "golden", Query: tc.query, Budget: tc.budget, Format: tc.format})
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("testdata", "context-"+tc.name+".golden")
		if *update {
			if err := os.WriteFile(path, []byte(pkg.Rendered), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -update to create it)", err)
		}
		if string(want) != pkg.Rendered {
			t.Errorf("%s: rendering differs from %s (run go test -update and review the diff):\n%s", tc.name, path, pkg.Rendered)
		}
	}
}

// TestContextRanksColdTurnsByTheirOwnMatch: the turns of a cold span are
// found by their own words, as hot ones are. The cold turn that holds the
// query's words must outrank the turns that hold fewer of them, and the
// cold turns of its span that hold only the common word come in, if at
// all, as its neighbours (up to three turns away: the neighbours of its
// neighbours' own hits).
func TestContextRanksColdTurnsByTheirOwnMatch(t *testing.T) {
	ctx := context.Background()
	c := &clock{t: at("2024-01-01T00:00:00Z")}
	m, _ := newClocked(t, c, &strata.TierPolicy{HotChunks: 1, WarmMaxTurns: 40})
	turns := greyhoundTurns()
	ingest(t, m, "c", turns)

	nodes, err := m.Store().Nodes(ctx, strata.NodeFilter{Namespace: m.Namespace(), Conversation: "c", Covers: 46})
	if err != nil || len(nodes) == 0 {
		t.Fatalf("nodes over turn 46: %v %v", nodes, err)
	}
	if nodes[0].Tier != strata.TierCold {
		t.Fatalf("the span of turn 46 is %s, want cold", nodes[0].Tier)
	}
	pkg, err := m.Context(ctx, strata.ContextRequest{Conversation: "c", Query: "What is the name of Ottilie's greyhound?", Budget: 200})
	if err != nil {
		t.Fatal(err)
	}
	raw := rawTurns(pkg)
	if !raw[46] {
		t.Fatalf("cold turn 46 not raw in the package:\n%s", pkg.Rendered)
	}
	for _, s := range []int64{41, 42, 50} {
		if raw[s] {
			t.Errorf("cold turn %d, which holds only the common word, is in:\n%s", s, pkg.Rendered)
		}
	}
}

// greyhoundTurns is 300 synthetic turns where turns 41-50 mention a
// greyhound show, turn 46 names Ottilie's greyhound, and turns 250, 270
// and 290 hold the word greyhound alone.
func greyhoundTurns() []strata.Turn {
	turns := synth.New(9).Turns(300)
	for i := 40; i < 50; i++ {
		turns[i].Content = fmt.Sprintf("The greyhound show had %d entrants this year.", i)
	}
	turns[45].Content = "My sister Ottilie adopted a greyhound called Biscuit last spring."
	for _, i := range []int{249, 269, 289} {
		turns[i].Content = "A greyhound ran past the cafe this morning."
	}
	return turns
}

// rawTurns returns the seqs of the turns a package quotes raw.
func rawTurns(pkg *strata.Package) map[int64]bool {
	raw := map[int64]bool{}
	for _, it := range pkg.Items {
		if it.Kind == strata.KindTurn {
			raw[it.FirstSeq] = true
		}
	}
	return raw
}

func TestPackageCovered(t *testing.T) {
	tests := []struct {
		name  string
		items []strata.Item
		want  int64
	}{
		{"empty", nil, 0},
		{"turns", []strata.Item{{Kind: strata.KindTurn, FirstSeq: 3, LastSeq: 3}, {Kind: strata.KindTurn, FirstSeq: 9, LastSeq: 9}}, 2},
		// A summary counts its whole span; turns inside it and an
		// overlapping summary are not counted twice.
		{"overlaps", []strata.Item{{Kind: strata.KindSummary, FirstSeq: 1, LastSeq: 10},
			{Kind: strata.KindTurn, FirstSeq: 5, LastSeq: 5}, {Kind: strata.KindSummary, FirstSeq: 8, LastSeq: 20},
			{Kind: strata.KindTurn, FirstSeq: 21, LastSeq: 21}, {Kind: strata.KindTurn, FirstSeq: 30, LastSeq: 30}}, 22},
		{"nested", []strata.Item{{Kind: strata.KindSummary, FirstSeq: 1, LastSeq: 100},
			{Kind: strata.KindSummary, FirstSeq: 11, LastSeq: 20}}, 100},
		// A learning's span is where it was said: it shows no turn.
		{"learning", []strata.Item{{Kind: strata.KindLearning, FirstSeq: 1, LastSeq: 50},
			{Kind: strata.KindTurn, FirstSeq: 7, LastSeq: 7}}, 1},
	}
	for _, tt := range tests {
		p := strata.Package{Items: tt.items}
		if got := p.Covered(); got != tt.want {
			t.Errorf("%s: Covered() = %d, want %d", tt.name, got, tt.want)
		}
	}
}

// searchSpy is a real store that records the searches made of it.
type searchSpy struct {
	strata.Store
	mu      sync.Mutex
	queries []strata.SearchQuery
}

func (s *searchSpy) Search(ctx context.Context, q strata.SearchQuery) ([]strata.Hit, error) {
	s.mu.Lock()
	s.queries = append(s.queries, q)
	s.mu.Unlock()
	return s.Store.Search(ctx, q)
}

// TestContextSearchWindow: in a conversation longer than the search
// window, the turn search covers only the window, and a turn before it is
// still found through its summary and ranked by its own match, as a cold
// turn is; a window as long as the conversation searches every turn.
// (Before the window was scored like the cold turns, turn 46 lost to the
// window's turns that hold only "greyhound".)
func TestContextSearchWindow(t *testing.T) {
	ctx := context.Background()
	turns := greyhoundTurns()
	for _, tc := range []struct {
		window int
		from   int64
	}{{100, 201}, {300, 0}, {-1, 0}} {
		st := openNewStore(t, filepath.Join(t.TempDir(), "strata.db"))
		defer st.Close()
		spy := &searchSpy{Store: st}
		m, err := strata.New(strata.Config{Store: spy, Tokenizer: o200k(t), Summarizer: extractive.New(),
			Tiers: &strata.TierPolicy{Off: true}, Assembly: strata.AssemblyOptions{SearchWindow: tc.window}})
		if err != nil {
			t.Fatal(err)
		}
		ingest(t, m, "c", turns)
		pkg, err := m.Context(ctx, strata.ContextRequest{Conversation: "c", Query: "What is the name of Ottilie's greyhound?", Budget: 200})
		if err != nil {
			t.Fatal(err)
		}
		turnSearches := 0
		for _, q := range spy.queries {
			if q.Kind == strata.KindTurn {
				turnSearches++
				if q.FromSeq != tc.from {
					t.Errorf("window %d: turn search from seq %d, want %d", tc.window, q.FromSeq, tc.from)
				}
			} else if q.FromSeq != 0 {
				t.Errorf("window %d: a %q search from seq %d, want every summary", tc.window, q.Kind, q.FromSeq)
			}
		}
		if turnSearches != 1 {
			t.Errorf("window %d: %d turn searches, want 1", tc.window, turnSearches)
		}
		raw := rawTurns(pkg)
		if !raw[46] {
			t.Errorf("window %d: turn 46 not raw in the package:\n%s", tc.window, pkg.Rendered)
		}
		if tc.from == 0 {
			continue // searched whole: the hit's neighbours come with it
		}
		for _, s := range []int64{41, 42, 50} {
			if raw[s] {
				t.Errorf("window %d: turn %d, which holds only the common word, is in:\n%s", tc.window, s, pkg.Rendered)
			}
		}
	}
}

// TestContextUnreadableColdSpan: when the turns a query points at cannot
// all be read in one go (here: a cold span whose archive segments are
// gone), relevance reads them range by range and skips the unreadable
// ones: the package is still made, with the hot turns the query finds.
func TestContextUnreadableColdSpan(t *testing.T) {
	ctx := context.Background()
	c := &clock{t: at("2024-01-01T00:00:00Z")}
	m, st := newClocked(t, c, &strata.TierPolicy{HotChunks: 1, WarmMaxTurns: 40})
	turns := synth.New(9).Turns(300)
	turns[45].Content = "My sister Ottilie adopted a greyhound called Biscuit last spring."
	turns[289].Content = "Ottilie's greyhound Biscuit ran past the cafe this morning."
	ingest(t, m, "c", turns)
	nodes, err := m.Store().Nodes(ctx, strata.NodeFilter{Namespace: m.Namespace(), Conversation: "c", Covers: 46})
	if err != nil || len(nodes) == 0 || nodes[0].Tier != strata.TierCold {
		t.Fatalf("the span of turn 46: %+v, %v; want it cold", nodes, err)
	}
	dir := filepath.Join(filepath.Dir(st.Path()), "archive")
	removed := 0
	filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() && os.Remove(p) == nil {
			removed++
		}
		return nil
	})
	if removed == 0 {
		t.Fatalf("no archive segment under %s", dir)
	}
	pkg, err := m.Context(ctx, strata.ContextRequest{Conversation: "c", Query: "Ottilie's greyhound Biscuit", Budget: 400})
	if err != nil {
		t.Fatalf("a package with an unreadable cold span: %v", err)
	}
	if raw := rawTurns(pkg); !raw[290] || raw[46] {
		t.Fatalf("want hot turn 290 raw and cold turn 46 (unreadable) not:\n%s", pkg.Rendered)
	}
}

// TestContextHitLeadsToItsSessionOpener: the turn that opens a session,
// which holds no word of the question, comes into a 4,000-token package
// because a later turn of its session is the best hit; the opener of a
// session without hits does not.
func TestContextHitLeadsToItsSessionOpener(t *testing.T) {
	ctx := context.Background()
	m := newMemory(t, o200k(t))
	turns := synth.New(11).Turns(3000)
	for i := range turns {
		turns[i].SessionLabel = fmt.Sprintf("s%d", (i+3)/6)
	}
	// A session is 6 turns, from turn 4 on: turns 610-615 are one, and
	// its opener lies in another level-1 span than the hit (chunks of
	// 10 turns), out of a hit's neighbours' reach.
	turns[609].Content = "Let's pick up the plan for the bakery's new ovens where we left off."
	turns[613].Content = "The quote for the convection deck came to 18,400 euros with installation."
	turns[1209].Content = "Can we go over the bakery plan again tomorrow?"
	ingest(t, m, "c", turns)
	pkg, err := m.Context(ctx, strata.ContextRequest{Conversation: "c", Query: "What did the convection deck quote come to?", Budget: 4000})
	if err != nil {
		t.Fatal(err)
	}
	raw := rawTurns(pkg)
	if !raw[614] {
		t.Fatalf("the hit, turn 614, is not raw in the package:\n%s", pkg.Rendered)
	}
	if !raw[610] {
		t.Fatalf("turn 610, which opens the hit's session, is not raw in the package:\n%s", pkg.Rendered)
	}
	if raw[1210] {
		t.Errorf("turn 1210 opens a session without hits and is raw in the package:\n%s", pkg.Rendered)
	}
}
