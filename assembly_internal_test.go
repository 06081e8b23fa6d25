package strata

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// TestQueryCoverageShareDefaults checks the query coverage share's
// default, its "none", and how a RelevanceShare set alone reads.
func TestQueryCoverageShareDefaults(t *testing.T) {
	tests := []struct {
		name string
		in   AssemblyOptions
		want float64
		bad  bool
	}{
		{name: "default", want: DefaultQueryCoverageShare},
		{name: "set", in: AssemblyOptions{QueryCoverageShare: 0.3}, want: 0.3},
		{name: "none", in: AssemblyOptions{QueryCoverageShare: -0.5}, want: -1},
		{name: "relevance share alone", in: AssemblyOptions{RelevanceShare: 0.75}, want: 0.25},
		{name: "relevance share 1 leaves none", in: AssemblyOptions{RelevanceShare: 1}, want: -1},
		{name: "both set: the coverage share wins", in: AssemblyOptions{RelevanceShare: 0.5, QueryCoverageShare: 0.2}, want: 0.2},
		{name: "over 1", in: AssemblyOptions{QueryCoverageShare: 1.5}, bad: true},
	}
	for _, tt := range tests {
		got, err := tt.in.withDefaults()
		if tt.bad {
			if ErrorCode(err) != EINVALID {
				t.Errorf("%s: err %v, want EINVALID", tt.name, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got.QueryCoverageShare != tt.want {
			t.Errorf("%s: query coverage share %v, want %v", tt.name, got.QueryCoverageShare, tt.want)
		}
	}
}

// TestOverviewCache checks that an overview's key changes with anything
// it is written from, and that the cache keeps the newest entries.
func TestOverviewCache(t *testing.T) {
	group := []Node{{ID: "a", Level: 3, FirstSeq: 1, LastSeq: 100, Summary: "first", Facts: []string{"x"}},
		{ID: "b", Level: 3, FirstSeq: 101, LastSeq: 200, Summary: "second", Themes: []string{"y"}}}
	base := overviewKey("ns", "c", 4, 200, group)
	if overviewKey("ns", "c", 4, 200, slices.Clone(group)) != base {
		t.Fatal("the same input gives two keys")
	}
	change := map[string]func(g []Node) [32]byte{
		"namespace":    func(g []Node) [32]byte { return overviewKey("ns2", "c", 4, 200, g) },
		"conversation": func(g []Node) [32]byte { return overviewKey("ns", "c2", 4, 200, g) },
		"budget":       func(g []Node) [32]byte { return overviewKey("ns", "c", 4, 199, g) },
		"summary":      func(g []Node) [32]byte { g[1].Summary = "second, rewritten"; return overviewKey("ns", "c", 4, 200, g) },
		"span":         func(g []Node) [32]byte { g[1].LastSeq = 210; return overviewKey("ns", "c", 4, 200, g) },
		"facts":        func(g []Node) [32]byte { g[0].Facts = nil; return overviewKey("ns", "c", 4, 200, g) },
		"nodes":        func(g []Node) [32]byte { return overviewKey("ns", "c", 4, 200, g[:1]) },
	}
	for name, f := range change {
		g := slices.Clone(group)
		if f(g) == base {
			t.Errorf("a different %s gives the same key", name)
		}
	}
	var c summaryCache
	for i := range summaryCacheSize + 1 {
		c.put(overviewKey("ns", "c", 4, i, group), Summary{Text: fmt.Sprint(i)})
	}
	if _, ok := c.get(overviewKey("ns", "c", 4, 0, group)); ok {
		t.Error("the oldest entry is still there")
	}
	if got, ok := c.get(overviewKey("ns", "c", 4, summaryCacheSize, group)); !ok || got.Text != fmt.Sprint(summaryCacheSize) {
		t.Errorf("newest entry: %q %v", got.Text, ok)
	}
}

// TestWordsInASCII: the ASCII path of wordsIn finds what the general one
// finds.
func TestWordsInASCII(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		alpha := rapid.SampledFrom([]string{"de", "deploy", "deployed", "Deploy", "DEPLOYING", "yoga", "yo", "x86", "a", "the", "cat", "cats", strings.Repeat("long", 20)})
		text := strings.Join(rapid.SliceOf(alpha).Draw(t, "text"), rapid.SampledFrom([]string{" ", ", ", "-", "_", "\n"}).Draw(t, "sep"))
		var words []string
		for _, w := range rapid.SliceOfDistinct(alpha, func(s string) string { return strings.ToLower(s) }).Draw(t, "words") {
			words = append(words, strings.ToLower(w))
		}
		got, want := wordsInASCII(words, text), wordsInSet(words, text)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("wordsIn(%q, %q) = %v, want %v", words, text, got, want)
		}
	})
}

// TestCountCache: cached counts are the tokenizer's, through generations
// turning over, and a text counted lately is not counted again.
func TestCountCache(t *testing.T) {
	c := newCountCache()
	calls := 0
	tok := countingTokenizer{CharEstimator{}, &calls}
	for round := range 3 {
		for i := range countCacheSize + 100 {
			text := fmt.Sprintf("text %d of some length %s", i, strings.Repeat("x", i%50))
			if got, want := c.count(tok, text), (CharEstimator{}).Count(text); got != want {
				t.Fatalf("round %d, text %d: %d tokens, want %d", round, i, got, want)
			}
		}
	}
	before := calls
	c.count(tok, fmt.Sprintf("text %d of some length %s", countCacheSize+99, strings.Repeat("x", (countCacheSize+99)%50)))
	if calls != before {
		t.Fatal("a text counted just before was counted again")
	}
}

type countingTokenizer struct {
	Tokenizer
	calls *int
}

func (c countingTokenizer) Count(s string) int { *c.calls++; return c.Tokenizer.Count(s) }

func TestLendToOpeners(t *testing.T) {
	// Turns 10-20: session 3 is 12-16, session 4 from 17 on.
	sessionOf := map[int64]int{}
	for s := int64(10); s <= 20; s++ {
		switch {
		case s < 12:
			sessionOf[s] = 2
		case s < 17:
			sessionOf[s] = 3
		default:
			sessionOf[s] = 4
		}
	}
	delete(sessionOf, 18) // a gap in the turns read
	score := map[int64]float64{}
	lendToOpeners([]lead{
		{15, 0.4}, // opener 12
		{14, 0.9}, // opener 12: only the best lead of a session counts
		{12, 1},   // opens its own session: lends nothing
		{20, 1},   // 19's session goes back past a turn not read: no opener found
		{11, 0.5}, // session 2 begins before the turns read
		{99, 1},   // not read
	}, sessionOf, score, 0.5)
	want := map[int64]float64{12: 0.45}
	if len(score) != len(want) || score[12] != want[12] {
		t.Fatalf("scores %v, want %v", score, want)
	}
	lendToOpeners([]lead{{15, 1}}, sessionOf, score, 0)
	if score[12] != 0.45 {
		t.Fatalf("a zero weight lent: %v", score)
	}
}
