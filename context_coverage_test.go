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
)

// queryHistory is a 600-turn conversation (six closed macros, whose
// summaries alone take about 1,600 tokens) with one turn the query below
// finds.
func queryHistory(t *testing.T, o strata.AssemblyOptions) (*strata.Memory, strata.Tokenizer) {
	t.Helper()
	tok := o200k(t)
	st := openNewStore(t, filepath.Join(t.TempDir(), "strata.db"))
	t.Cleanup(func() { st.Close() })
	m, err := strata.New(strata.Config{Store: st, Tokenizer: tok, Summarizer: extractive.New(), Assembly: o})
	if err != nil {
		t.Fatal(err)
	}
	turns := synth.New(7).Turns(600)
	turns[250].Content = "My sister Ottilie adopted a greyhound called Biscuit last spring."
	ingest(t, m, "c", turns)
	return m, tok
}

const ottilie = "What is the name of Ottilie's greyhound?"

// TestContextQueryCoversHistory checks that a package with query hits
// still represents every turn of the conversation, raw or by a summary,
// within the budget, with the evidence raw.
func TestContextQueryCoversHistory(t *testing.T) {
	ctx := context.Background()
	m, tok := queryHistory(t, strata.AssemblyOptions{})
	for _, budget := range []int{1000, 2000, 4000} {
		for _, format := range []string{strata.FormatText, strata.FormatMarkdown} {
			name := fmt.Sprintf("%d/%s", budget, format)
			pkg, err := m.Context(ctx, strata.ContextRequest{Conversation: "c", Query: ottilie, Budget: budget, Format: format})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if n := tok.Count(pkg.Rendered); n != pkg.Tokens || n > budget {
				t.Fatalf("%s: rendered is %d tokens, package says %d, budget %d", name, n, pkg.Tokens, budget)
			}
			if got := pkg.Covered(); got != pkg.Turns || len(pkg.Omitted) > 0 {
				t.Errorf("%s: covers %d of %d turns, omits %+v", name, got, pkg.Turns, pkg.Omitted)
			}
			evidence, overview := false, false
			for _, it := range pkg.Items {
				if it.Kind == strata.KindTurn && it.FirstSeq == 251 {
					evidence = true
				}
				if it.LevelName == strata.OverviewLevelName {
					overview = true
					if it.Kind != strata.KindSummary || it.NodeID != "" || it.Level != 4 || it.Text == "" {
						t.Errorf("%s: overview item %+v", name, it)
					}
				}
			}
			if !evidence {
				t.Errorf("%s: turn 251 not raw:\n%s", name, pkg.Rendered)
			}
			// Six macros do not fit a tenth of these budgets: overviews
			// stand for them. (The query's few candidates leave room to
			// refine them: into more overviews at 2,000, into the macros
			// at 4,000.)
			if budget < 4000 && !overview {
				t.Errorf("%s: no overview", name)
			}
		}
	}
	checkCoverage(t, "", mustContext(t, m, strata.ContextRequest{Conversation: "c", Query: ottilie, Budget: 300}))

	// A query with many candidates fills the budget with relevance: the
	// summaries keep to their share.
	for _, budget := range []int{1000, 2000, 4000} {
		pkg := mustContext(t, m, strata.ContextRequest{Conversation: "c", Query: "Caroline recipe garden games conference", Budget: budget})
		coverage, relevance := 0, 0
		for _, it := range pkg.Items {
			switch it.Reason {
			case strata.ReasonCoverage:
				coverage += it.Tokens
			case strata.ReasonRelevance:
				relevance += it.Tokens
			}
		}
		if got := pkg.Covered(); got != pkg.Turns || float64(coverage) > float64(budget)*strata.DefaultQueryCoverageShare ||
			relevance < budget/2 {
			t.Errorf("budget %d: covers %d of %d turns; coverage %d tokens, relevance %d", budget, got, pkg.Turns, coverage, relevance)
		}
	}

	// No coverage share: the history before the fresh turns is left to
	// relevance and listed as omitted, as before the share existed.
	none, _ := queryHistory(t, strata.AssemblyOptions{QueryCoverageShare: -1})
	pkg := mustContext(t, none, strata.ContextRequest{Conversation: "c", Query: ottilie, Budget: 2000})
	if len(pkg.Omitted) == 0 || pkg.Covered() >= pkg.Turns/2 {
		t.Errorf("no coverage share: covers %d of %d turns, omits %+v", pkg.Covered(), pkg.Turns, pkg.Omitted)
	}
	for _, it := range pkg.Items {
		if it.Kind == strata.KindSummary {
			t.Errorf("no coverage share: summary %+v", it)
		}
	}
}

func mustContext(t *testing.T, m *strata.Memory, req strata.ContextRequest) *strata.Package {
	t.Helper()
	pkg, err := m.Context(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return pkg
}

// TestContextOverviewRefines checks that budget left after relevance
// replaces an overview by the nodes it merged, and those by finer ones,
// without losing coverage.
func TestContextOverviewRefines(t *testing.T) {
	m, tok := queryHistory(t, strata.AssemblyOptions{QueryCoverageShare: 0.02})
	pkg := mustContext(t, m, strata.ContextRequest{Conversation: "c", Query: ottilie, Budget: 6000})
	if n := tok.Count(pkg.Rendered); n > 6000 {
		t.Fatalf("rendered is %d tokens", n)
	}
	if got := pkg.Covered(); got != pkg.Turns || len(pkg.Omitted) > 0 {
		t.Errorf("covers %d of %d turns, omits %+v", got, pkg.Turns, pkg.Omitted)
	}
	levels := map[string]int{}
	for _, it := range pkg.Items {
		levels[it.LevelName]++
	}
	if levels[strata.OverviewLevelName] > 0 || levels["macro"]+levels["mini"]+levels["micro"] == 0 {
		t.Errorf("items by level %v: want the overview refined into pyramid nodes", levels)
	}
}

// TestContextOverviewLongHistory checks a history longer than coverage
// reads: only the newest top-level nodes are read and merged into
// overviews; the oldest ranges are listed as omitted, the rest covered, and
// the budget holds.
func TestContextOverviewLongHistory(t *testing.T) {
	tok := o200k(t)
	st := openNewStore(t, filepath.Join(t.TempDir(), "strata.db"))
	t.Cleanup(func() { st.Close() })
	// Top-level nodes of 4 turns: 1,400 turns make 350 of them, more than
	// the 256 a package reads.
	tiny := strata.Policy{Name: "tiny", Levels: []strata.Level{
		{Name: "pair", Kind: strata.KindCount, Span: 2, Budget: 40},
		{Name: "quad", Kind: strata.KindCount, Span: 2, Budget: 60},
	}}
	m, err := strata.New(strata.Config{Store: st, Tokenizer: tok, Summarizer: extractive.New(), Policy: tiny})
	if err != nil {
		t.Fatal(err)
	}
	turns := synth.New(3).Turns(1400)
	turns[1300].Content = "My sister Ottilie adopted a greyhound called Biscuit last spring."
	ingest(t, m, "c", turns)
	for _, budget := range []int{1000, 4000} {
		t0 := time.Now()
		pkg := mustContext(t, m, strata.ContextRequest{Conversation: "c", Query: ottilie, Budget: budget})
		t.Logf("budget %d: %v, %d items, covers %d of %d turns, omits %+v", budget, time.Since(t0), len(pkg.Items),
			pkg.Covered(), pkg.Turns, pkg.Omitted)
		if n := tok.Count(pkg.Rendered); n > budget {
			t.Fatalf("budget %d: rendered is %d tokens", budget, n)
		}
		checkCoverage(t, fmt.Sprint(budget), pkg)
		// The newest 256 quads hold turns 377-1400; before them, omitted
		// (but for relevance turns that reach into them).
		if len(pkg.Omitted) == 0 || pkg.Omitted[0].FirstSeq != 1 || pkg.Omitted[len(pkg.Omitted)-1].LastSeq > 376 {
			t.Errorf("budget %d: omits %+v, want turns 1-376", budget, pkg.Omitted)
		}
		if got := pkg.Covered(); got < 1400-376 {
			t.Errorf("budget %d: covers %d turns, want %d at least", budget, got, 1400-376)
		}
		overviews := 0
		for _, it := range pkg.Items {
			if it.LevelName == strata.OverviewLevelName {
				overviews++
			}
		}
		if overviews == 0 {
			t.Errorf("budget %d: no overview", budget)
		}
		// The query matches few turns: what relevance leaves goes to
		// finer overviews, not to waste.
		if pkg.Tokens < budget*9/10 {
			t.Errorf("budget %d: %d tokens used", budget, pkg.Tokens)
		}
	}
}

// TestContextOverviewConcurrent assembles query packages from several
// goroutines at once: they share the Memory's overview cache, and each
// gets the package it would get alone.
func TestContextOverviewConcurrent(t *testing.T) {
	m, _ := queryHistory(t, strata.AssemblyOptions{})
	want := map[int]string{}
	budgets := []int{1000, 1500, 2000}
	for _, b := range budgets {
		want[b] = mustContext(t, m, strata.ContextRequest{Conversation: "c", Query: ottilie, Budget: b}).Rendered
	}
	var wg sync.WaitGroup
	errs := make(chan error, 12)
	for i := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := budgets[i%len(budgets)]
			pkg, err := m.Context(context.Background(), strata.ContextRequest{Conversation: "c", Query: ottilie, Budget: b})
			if err == nil && pkg.Rendered != want[b] {
				err = fmt.Errorf("budget %d: the package differs from the one assembled alone", b)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// TestContextNoQueryCoversHistory checks that a package without a query,
// or with one that finds nothing, represents every turn of the
// conversation, raw or by a summary, and uses at least 90% of its budget.
func TestContextNoQueryCoversHistory(t *testing.T) {
	m, tok := queryHistory(t, strata.AssemblyOptions{})
	for _, budget := range []int{1000, 2000, 4000, 8000} {
		for _, query := range []string{"", "xyzzy plugh"} {
			name := fmt.Sprintf("%d/%q", budget, query)
			pkg := mustContext(t, m, strata.ContextRequest{Conversation: "c", Query: query, Budget: budget})
			if n := tok.Count(pkg.Rendered); n != pkg.Tokens || n > budget {
				t.Fatalf("%s: rendered is %d tokens, package says %d", name, n, pkg.Tokens)
			}
			if got := pkg.Covered(); got != pkg.Turns || len(pkg.Omitted) > 0 {
				t.Errorf("%s: covers %d of %d turns, omits %+v", name, got, pkg.Turns, pkg.Omitted)
			}
			if pkg.Tokens < budget*9/10 {
				t.Errorf("%s: uses %d tokens of %d", name, pkg.Tokens, budget)
			}
			checkCoverage(t, name, pkg)
		}
	}
}

// TestSearchClimbsThePyramid checks that a search finds summaries of
// every level: the derived ones (made of their children's sentences, not
// indexed twice) follow the hit below them, so a matching span leads to
// the parts of the history it belongs to.
func TestSearchClimbsThePyramid(t *testing.T) {
	m, _ := queryHistory(t, strata.AssemblyOptions{})
	hits, err := m.Search(context.Background(), "c", ottilie, 20)
	if err != nil {
		t.Fatal(err)
	}
	levels := map[int]bool{}
	for i, h := range hits {
		if h.Node == nil {
			continue
		}
		levels[h.Node.Level] = true
		if h.Node.Level > 1 && (h.Node.FirstSeq > 251 || h.Node.LastSeq < 251 || !h.Node.Derived) {
			t.Errorf("hit %d: level-%d node %d-%d (derived %v), want one above turn 251", i, h.Node.Level, h.Node.FirstSeq, h.Node.LastSeq, h.Node.Derived)
		}
		if i > 0 && h.Score > hits[i-1].Score {
			t.Errorf("hit %d scores %v, above hit %d's %v", i, h.Score, i-1, hits[i-1].Score)
		}
	}
	if !levels[1] || !levels[2] || !levels[3] {
		t.Errorf("summary hits of levels %v, want 1, 2 and 3", levels)
	}
}

// wordyOverviews writes pyramid nodes as extractive does, and overviews
// that ignore their budget: one run-on sentence three times as long.
type wordyOverviews struct{ strata.Summarizer }

func (w wordyOverviews) Summarize(ctx context.Context, req strata.SummaryRequest) (strata.Summary, error) {
	if req.LevelName != strata.OverviewLevelName {
		return w.Summarizer.Summarize(ctx, req)
	}
	var b strings.Builder
	for i := 0; b.Len() < 12*req.Budget; i++ {
		fmt.Fprintf(&b, "thread%d went on and on ", i)
	}
	return strata.Summary{Text: strings.TrimSpace(b.String())}, nil
}

// TestContextOverviewCutToFit: an overview the summarizer cannot write
// short enough is cut at a word to its room, marked with an ellipsis,
// rather than leaving its whole span omitted.
func TestContextOverviewCutToFit(t *testing.T) {
	tok := o200k(t)
	st := openNewStore(t, filepath.Join(t.TempDir(), "strata.db"))
	defer st.Close()
	m, err := strata.New(strata.Config{Store: st, Tokenizer: tok, Summarizer: wordyOverviews{extractive.New()}})
	if err != nil {
		t.Fatal(err)
	}
	turns := synth.New(7).Turns(600)
	turns[250].Content = "My sister Ottilie adopted a greyhound called Biscuit last spring."
	ingest(t, m, "c", turns)
	cut := 0
	for _, budget := range []int{1000, 2000, 4000} {
		pkg := mustContext(t, m, strata.ContextRequest{Conversation: "c", Query: ottilie, Budget: budget})
		if got := pkg.Covered(); got != pkg.Turns || len(pkg.Omitted) > 0 {
			t.Errorf("budget %d: covers %d of %d turns, omits %+v", budget, got, pkg.Turns, pkg.Omitted)
		}
		for _, it := range pkg.Items {
			if it.LevelName != strata.OverviewLevelName {
				continue
			}
			if !strings.HasSuffix(it.Text, " …") {
				t.Errorf("budget %d: overview %d-%d not cut, though written too long: %q", budget, it.FirstSeq, it.LastSeq, it.Text)
			}
			cut++
		}
		if n := tok.Count(pkg.Rendered); n > budget {
			t.Errorf("budget %d: rendered %d tokens", budget, n)
		}
	}
	if cut == 0 {
		t.Error("no package needed an overview: the test shows nothing")
	}
}
