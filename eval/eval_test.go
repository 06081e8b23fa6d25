package eval

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/extractive"
	"github.com/strata-memory/strata/internal/hashembed"
	"github.com/strata-memory/strata/sqlite"
	"github.com/strata-memory/strata/tiktoken"
)

// tiny is a LoCoMo-format file: conv-a has two sessions, conv-b one. Its
// questions cover a plain evidence list, two ids joined in one string, ids
// padded with spaces, ids that name no turn, an empty evidence list and an
// adversarial question.
const tiny = `[
 {"sample_id": "conv-a",
  "conversation": {
   "speaker_a": "Ann", "speaker_b": "Bob",
   "session_1_date_time": "1:56 pm on 8 May, 2023",
   "session_1": [
    {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a puppy named Biscuit last weekend."},
    {"speaker": "Bob", "dia_id": "D1:2", "text": "My sister moved to Lisbon for a new job at the aquarium."},
    {"speaker": "Ann", "dia_id": "D1:3", "text": "Biscuit chewed my running shoes already."}
   ],
   "session_2_date_time": "10:00 am on 20 June, 2023",
   "session_2": [
    {"speaker": "Bob", "dia_id": "D2:1", "text": "I visited my sister in Lisbon and we saw the sharks."},
    {"speaker": "Ann", "dia_id": "D2:2", "text": "I finished the marathon in Boston in under four hours."},
    {"speaker": "Bob", "dia_id": "D2:3", "text": "Congratulations, that is a great time!"}
   ]
  },
  "qa": [
   {"question": "What is the name of Ann's puppy?", "answer": "Biscuit", "evidence": ["D1:1"], "category": 4},
   {"question": "Where does Bob's sister live and where did he visit her?", "answer": "Lisbon", "evidence": ["D1:2; D2:1"], "category": 1},
   {"question": "When did Ann run the marathon in Boston?", "answer": "June 2023", "evidence": [" D2:2 ", "D7:7"], "category": 2},
   {"question": "What did Bob's puppy chew?", "adversarial_answer": "shoes", "evidence": ["D1:3"], "category": 5},
   {"question": "Would Ann like a second dog?", "answer": "Likely yes", "evidence": [], "category": 3},
   {"question": "What might Ann buy soon?", "answer": "Shoes", "evidence": ["D"], "category": 3},
   {"question": "What did Biscuit chew?", "answer": "Running shoes", "evidence": ["D1:3"], "category": 3}
  ]
 },
 {"sample_id": "conv-b",
  "conversation": {
   "speaker_a": "Cy", "speaker_b": "Dee",
   "session_1_date_time": "9:00 am on 1 March, 2023",
   "session_1": [
    {"speaker": "Cy", "dia_id": "D1:1", "text": "I went to Oslo to ski with my cousins."},
    {"speaker": "Dee", "dia_id": "D1:2", "text": "Oslo must be cold in winter."}
   ]
  },
  "qa": [
   {"question": "Where did Cy go to ski?", "answer": "Oslo", "evidence": ["D1:1"], "category": 4}
  ]
 }
]`

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// newMemory returns a Memory over a fresh SQLite store.
func newMemory(t testing.TB) *strata.Memory {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "eval.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	tok, err := tiktoken.New("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	m, err := strata.New(strata.Config{Store: st, Tokenizer: tok, Summarizer: extractive.New()})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestRun(t *testing.T) {
	file := writeFile(t, "tiny.json", tiny)
	tests := []struct {
		name          string
		opts          Options
		questions     int
		evidence      int
		noEvidence    int
		unknown       []string
		perCategory   map[int]int // questions per category
		wantCats      []int
		wantBudgets   []int
		wantFullScore bool
	}{
		{name: "defaults", opts: Options{Budgets: []int{100000}}, questions: 5, evidence: 6, noEvidence: 2,
			unknown: []string{"conv-a:D7:7", "conv-a:D"}, perCategory: map[int]int{1: 1, 2: 1, 3: 1, 4: 2},
			wantCats: []int{1, 2, 3, 4}, wantBudgets: []int{100000}, wantFullScore: true},
		{name: "adversarial only", opts: Options{Budgets: []int{100000}, Categories: []int{5}}, questions: 1, evidence: 1,
			unknown: []string{}, perCategory: map[int]int{5: 1}, wantCats: []int{5}, wantBudgets: []int{100000}, wantFullScore: true},
		{name: "open-domain only", opts: Options{Budgets: []int{100000}, Categories: []int{3}}, questions: 1, evidence: 1,
			noEvidence: 2, unknown: []string{"conv-a:D"}, perCategory: map[int]int{3: 1}, wantCats: []int{3},
			wantBudgets: []int{100000}, wantFullScore: true},
		{name: "budgets sorted and distinct", opts: Options{Budgets: []int{400, 200, 400}, Categories: []int{4, 1, 4}},
			questions: 3, evidence: 4, unknown: []string{}, perCategory: map[int]int{1: 1, 4: 2}, wantCats: []int{1, 4},
			wantBudgets: []int{200, 400}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := Run(context.Background(), newMemory(t), file, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Conversations != 2 || rep.Turns != 8 || rep.Policy != "chunks" || rep.Tokenizer != "o200k_base" {
				t.Errorf("imported %d conversations, %d turns, policy %q, tokenizer %q", rep.Conversations, rep.Turns,
					rep.Policy, rep.Tokenizer)
			}
			if rep.Questions != tt.questions || rep.EvidenceTurns != tt.evidence || rep.NoEvidence != tt.noEvidence {
				t.Errorf("questions %d, evidence turns %d, no evidence %d; want %d, %d, %d", rep.Questions,
					rep.EvidenceTurns, rep.NoEvidence, tt.questions, tt.evidence, tt.noEvidence)
			}
			if !reflect.DeepEqual(rep.UnknownEvidence, tt.unknown) {
				t.Errorf("unknown evidence %q, want %q", rep.UnknownEvidence, tt.unknown)
			}
			if !reflect.DeepEqual(rep.Categories, tt.wantCats) {
				t.Errorf("categories %v, want %v", rep.Categories, tt.wantCats)
			}
			var budgets []int
			for _, b := range rep.Budgets {
				budgets = append(budgets, b.Budget)
				o := b.Overall
				if o.Questions != tt.questions || o.Evidence != tt.evidence {
					t.Errorf("budget %d: overall %d questions, %d evidence", b.Budget, o.Questions, o.Evidence)
				}
				sum := 0
				for i, c := range b.Categories {
					if c.Category != tt.wantCats[i] || c.Questions != tt.perCategory[c.Category] {
						t.Errorf("budget %d: category row %d is %d with %d questions", b.Budget, i, c.Category, c.Questions)
					}
					sum += c.Context.Found
				}
				if sum != o.Context.Found {
					t.Errorf("budget %d: categories find %d, overall %d", b.Budget, sum, o.Context.Found)
				}
				if o.BM25.MeanTokens > float64(b.Budget) || o.Context.MeanTokens > float64(b.Budget) {
					t.Errorf("budget %d: mean tokens %.1f and %.1f", b.Budget, o.Context.MeanTokens, o.BM25.MeanTokens)
				}
				if !tt.wantFullScore {
					continue
				}
				for _, s := range []Score{o.Context, o.BM25} {
					if s.Found != tt.evidence || s.Recall != 1 || s.Pooled != 1 {
						t.Errorf("budget %d: found %d, recall %v, pooled %v; want everything", b.Budget, s.Found,
							s.Recall, s.Pooled)
					}
				}
				if o.Context.Coverage != 1 {
					t.Errorf("budget %d: coverage %v, want 1 (every turn raw)", b.Budget, o.Context.Coverage)
				}
				if o.BM25.Coverage <= 0 || o.BM25.Coverage >= 1 {
					t.Errorf("budget %d: the baseline covers %v, want its hits' share, some but not all turns", b.Budget, o.BM25.Coverage)
				}
				if o.Points != 0 || o.PooledPoints != 0 {
					t.Errorf("budget %d: %v points apart (%v pooled)", b.Budget, o.Points, o.PooledPoints)
				}
			}
			if !reflect.DeepEqual(budgets, tt.wantBudgets) {
				t.Errorf("budgets %v, want %v", budgets, tt.wantBudgets)
			}
		})
	}
}

func TestRunErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name string
		file string
		opts Options
		want string // besides the file's name
	}{
		{name: "missing", file: filepath.Join(dir, "absent.json"), want: "no such file"},
		{name: "not JSON", file: write("broken.json", "[\n{\"sample_id\": "), want: "broken.json:2: not JSON"},
		{name: "an object", file: write("object.json", `{"sample_id": "x"}`), want: "not a LoCoMo file"},
		{name: "null", file: write("null.json", `null`), want: "not a LoCoMo file"},
		{name: "no date", file: write("nodate.json", `[{"sample_id": "c", "conversation": {"speaker_a": "A", "speaker_b": "B",
			"session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "hi"}]}, "qa": []}]`), want: "session_1_date_time"},
		{name: "no questions", file: write("empty.json", `[]`), want: "no question to ask"},
		{name: "adversarial questions only", file: write("adversarial.json", `[{"sample_id": "c", "conversation": {"speaker_a": "A", "speaker_b": "B",
			"session_1_date_time": "1:56 pm on 8 May, 2023", "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "hi"}]},
			"qa": [{"question": "Who?", "evidence": ["D1:1"], "category": 5}]}]`), want: "categories [5]; 5, LoCoMo's adversarial, is asked only when named"},
		{name: "category without questions", file: write("tiny.json", tiny), opts: Options{Categories: []int{7}},
			want: "no question of categories [7]: the file's questions are of categories [1 2 3 4 5]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Run(context.Background(), newMemory(t), tt.file, tt.opts)
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tt.file) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q: want it to name %s and say %q", err, tt.file, tt.want)
			}
		})
	}
}

func TestRunBadOptions(t *testing.T) {
	file := writeFile(t, "tiny.json", tiny)
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{"zero budget", Options{Budgets: []int{0}}, "budget 0"},
		{"negative category", Options{Categories: []int{-1}}, "category -1"},
		{"unknown policy", Options{Policy: "nonesuch"}, "nonesuch"},
		{"budget below the header", Options{Budgets: []int{5}}, "budget"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Run(context.Background(), newMemory(t), file, tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one saying %q", err, tt.want)
			}
		})
	}
}

func TestRunPolicy(t *testing.T) {
	file := writeFile(t, "tiny.json", tiny)
	rep, err := Run(context.Background(), newMemory(t), file, Options{Budgets: []int{100000}, Policy: "sessions"})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Policy != "sessions" {
		t.Errorf("policy %q, want sessions", rep.Policy)
	}
}

// TestBaselineBudget checks that the baseline keeps the best hits, in
// order, while their joined rendering fits the budget, and stops at the
// first that does not.
func TestBaselineBudget(t *testing.T) {
	ctx := context.Background()
	m := newMemory(t)
	if _, err := Run(ctx, m, writeFile(t, "tiny.json", tiny), Options{Budgets: []int{100000}}); err != nil {
		t.Fatal(err)
	}
	const query = "Biscuit puppy sister Lisbon marathon Boston shoes"
	hits, err := m.Store().Search(ctx, strata.SearchQuery{Namespace: m.Namespace(), Conversation: "conv-a",
		Text: query, K: 200, Kind: strata.KindTurn})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) < 4 {
		t.Fatalf("%d hits, want at least 4", len(hits))
	}
	tok := m.Tokenizer()
	for _, budget := range []int{1, 20, 40, 60, 80, 100, 150, 1000} {
		got, tokens, err := baseline(ctx, m, "conv-a", query, budget)
		if err != nil {
			t.Fatal(err)
		}
		var joined string
		n := 0
		for n < len(hits) && got[hits[n].Turn.ExtID] {
			joined += renderTurn(*hits[n].Turn)
			n++
		}
		if n != len(got) {
			t.Errorf("budget %d: kept %v, not a prefix of the hits", budget, got)
		}
		if c := tok.Count(joined); c != tokens || tokens > budget {
			t.Errorf("budget %d: reported %d tokens, the rendering counts %d", budget, tokens, c)
		}
		if n < len(hits) && tok.Count(joined+renderTurn(*hits[n].Turn)) <= budget {
			t.Errorf("budget %d: stopped after %d hits though the next fits", budget, n)
		}
	}
}

// TestRenderTurn checks that the baseline renders a turn as a text context
// package renders a turn that follows no other turn on its day (one that
// does is shorter: it runs under that turn's heading), so that both are
// measured alike.
func TestRenderTurn(t *testing.T) {
	ctx := context.Background()
	m := newMemory(t)
	if _, err := Run(ctx, m, writeFile(t, "tiny.json", tiny), Options{Budgets: []int{100000}}); err != nil {
		t.Fatal(err)
	}
	pkg, err := m.Context(ctx, strata.ContextRequest{Conversation: "conv-a", Budget: 100000, Format: strata.FormatText})
	if err != nil {
		t.Fatal(err)
	}
	turns, err := m.Store().Turns(ctx, strata.TurnFilter{Namespace: m.Namespace(), Conversation: "conv-a"})
	if err != nil {
		t.Fatal(err)
	}
	tokens := map[string]int{}
	lone := map[string]bool{}
	for _, it := range pkg.Items {
		if it.Kind == strata.KindTurn {
			tokens[it.ExtID] = it.Tokens
			lone[it.ExtID] = it.Follows == nil || !sameDay(it.Follows.Start, it.Start)
		}
	}
	if len(turns) != 6 || len(tokens) != 6 {
		t.Fatalf("%d turns, %d raw in the package; want 6", len(turns), len(tokens))
	}
	if !lone["D1:1"] || !lone["D2:1"] || lone["D1:2"] {
		t.Fatalf("turns that open a day: %v; want D1:1 and D2:1 only", lone)
	}
	for _, tr := range turns {
		s := renderTurn(tr)
		if !lone[tr.ExtID] {
			if n := m.Tokenizer().Count(s); n <= tokens[tr.ExtID] {
				t.Errorf("%s follows the turn before it but costs %d tokens in the package, alone %d", tr.ExtID, tokens[tr.ExtID], n)
			}
			continue
		}
		if !strings.Contains(pkg.Rendered, s) {
			t.Errorf("%s renders as %q, not found in the package:\n%s", tr.ExtID, s, pkg.Rendered)
		}
		if n := m.Tokenizer().Count(s); n != tokens[tr.ExtID] {
			t.Errorf("%s: %d tokens, the package's item %d", tr.ExtID, n, tokens[tr.ExtID])
		}
		hits, err := m.Store().Search(ctx, strata.SearchQuery{Namespace: m.Namespace(), Conversation: "conv-a",
			Text: tr.Content, K: 1, Kind: strata.KindTurn})
		if err != nil || len(hits) != 1 {
			t.Fatalf("search for %s: %v, %d hits", tr.ExtID, err, len(hits))
		}
		if h := renderTurn(*hits[0].Turn); h != s {
			t.Errorf("%s from search renders as %q, from the store %q", tr.ExtID, h, s)
		}
	}
}

func TestEvidenceIDs(t *testing.T) {
	tests := []struct {
		raw  string
		want []string
	}{
		{`["D1:3"]`, []string{"D1:3"}},
		{`["D1:3", "D2:4"]`, []string{"D1:3", "D2:4"}},
		{`["D8:6; D9:17"]`, []string{"D8:6", "D9:17"}},
		{`[" D1:3 ", "D1:3"]`, []string{"D1:3"}},
		{`["D1:3,D1:4 D1:5"]`, []string{"D1:3", "D1:4", "D1:5"}},
		{`"D1:3"`, []string{"D1:3"}},
		{`[]`, nil},
		{`["", " ; "]`, nil},
		{`null`, nil},
		{`{"x": 1}`, nil},
		{``, nil},
	}
	for _, tt := range tests {
		if got := evidenceIDs([]byte(tt.raw)); !slices.Equal(got, tt.want) {
			t.Errorf("evidenceIDs(%s) = %q, want %q", tt.raw, got, tt.want)
		}
	}
}

func TestTally(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name string
		adds [][5]int // evidence, found, tokens, coverage in percent, milliseconds
		want Score
	}{
		{"none", nil, Score{}},
		{"one full", [][5]int{{2, 2, 100, 100, 3}}, Score{Found: 2, Recall: 1, Pooled: 1, Coverage: 1, MeanTokens: 100, P50MS: 3, P99MS: 3}},
		// recall (1/2 + 1)/2 over questions, pooled 2/3 over evidence
		// turns, coverage (50% + 25%)/2 over questions
		{"per question and pooled differ", [][5]int{{2, 1, 100, 50, 4}, {1, 1, 300, 25, 2}},
			Score{Found: 2, Recall: 0.75, Pooled: 2.0 / 3, Coverage: 0.375, MeanTokens: 200, P50MS: 2, P99MS: 4}},
		{"nothing found", [][5]int{{3, 0, 10, 0, 1}, {1, 0, 20, 0, 1}}, Score{MeanTokens: 15, P50MS: 1, P99MS: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tl tally
			for _, a := range tt.adds {
				tl.add(a[0], a[1], a[2], float64(a[3])/100, time.Duration(a[4])*ms)
			}
			if got := tl.score(); got != tt.want {
				t.Errorf("score %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestPercentile(t *testing.T) {
	var hundred []time.Duration
	for i := 100; i >= 1; i-- {
		hundred = append(hundred, time.Duration(i))
	}
	tests := []struct {
		ds   []time.Duration
		p    float64
		want time.Duration
	}{
		{nil, 50, 0},
		{[]time.Duration{7}, 99, 7},
		{[]time.Duration{3, 1, 2}, 50, 2},
		{[]time.Duration{3, 1, 2, 4}, 50, 2},
		{hundred, 50, 50},
		{hundred, 99, 99},
		{hundred, 100, 100},
	}
	for _, tt := range tests {
		if got := percentile(tt.ds, tt.p); got != tt.want {
			t.Errorf("percentile(%d values, %v) = %v, want %v", len(tt.ds), tt.p, got, tt.want)
		}
	}
}

// TestRunLoCoMo runs the LoCoMo file STRATA_LOCOMO names at one budget and
// logs the figures.
func TestRunLoCoMo(t *testing.T) {
	path := os.Getenv("STRATA_LOCOMO")
	if path == "" {
		t.Skip("set STRATA_LOCOMO to the path of locomo-dev.json to run this test")
	}
	rep, err := Run(context.Background(), newMemory(t), path, Options{Budgets: []int{2000}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Conversations != 5 || rep.Questions == 0 {
		t.Fatalf("%d conversations, %d questions", rep.Conversations, rep.Questions)
	}
	b := rep.Budgets[0]
	t.Logf("%d conversations, %d turns, %d questions, %d evidence turns (%d questions and %d ids left out); %.1fs",
		rep.Conversations, rep.Turns, rep.Questions, rep.EvidenceTurns, rep.NoEvidence, len(rep.UnknownEvidence), rep.Seconds)
	for _, r := range append([]Row{b.Overall}, b.Categories...) {
		t.Logf("budget %d category %d %-11s %3d questions: recall %5.1f%% (pooled %5.1f%%), bm25 %5.1f%% (pooled %5.1f%%), %+5.1f points; p50 %.1f ms, p99 %.1f ms, bm25 p50 %.1f ms",
			b.Budget, r.Category, r.CategoryName, r.Questions, 100*r.Context.Recall, 100*r.Context.Pooled,
			100*r.BM25.Recall, 100*r.BM25.Pooled, r.Points, r.Context.P50MS, r.Context.P99MS, r.BM25.P50MS)
		if r.Context.Recall <= 0 || r.Context.Recall > 1 || r.BM25.Recall <= 0 || r.BM25.Recall > 1 {
			t.Errorf("category %d: recall %v, bm25 %v", r.Category, r.Context.Recall, r.BM25.Recall)
		}
		if r.Context.MeanTokens > 2000 || r.BM25.MeanTokens > 2000 {
			t.Errorf("category %d: mean tokens %.0f and %.0f over the budget", r.Category, r.Context.MeanTokens, r.BM25.MeanTokens)
		}
	}
}

func sameDay(a, b time.Time) bool {
	return a.UTC().Format(time.DateOnly) == b.UTC().Format(time.DateOnly)
}

// TestRunHybrid: with an embedder, Run embeds what it imported before the
// questions and says the search was hybrid; without one, lexical.
func TestRunHybrid(t *testing.T) {
	ctx := context.Background()
	file := writeFile(t, "tiny.json", tiny)
	rep, err := Run(ctx, newMemory(t), file, Options{Budgets: []int{100000}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Search != "lexical" {
		t.Fatalf("without an embedder: search %q, want lexical", rep.Search)
	}
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "eval.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	tok, err := tiktoken.New("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	emb := hashembed.New("hash-a", 32)
	m, err := strata.New(strata.Config{Store: st, Tokenizer: tok, Summarizer: extractive.New(), Embedder: emb,
		Embedding: strata.EmbeddingOptions{Weight: 0.5}})
	if err != nil {
		t.Fatal(err)
	}
	if rep, err = Run(ctx, m, file, Options{Budgets: []int{100000}}); err != nil {
		t.Fatal(err)
	}
	if rep.Search != "hybrid" || emb.Texts() < rep.Turns {
		t.Fatalf("with an embedder: search %q, %d texts embedded for %d turns; want hybrid, every turn", rep.Search, emb.Texts(), rep.Turns)
	}
	if rep.EmbedModel != "hash-a" || rep.EmbedDim != 32 || rep.VectorWeight != 0.5 {
		t.Fatalf("with an embedder: model %q, dimension %d, weight %v; want hash-a, 32, 0.5", rep.EmbedModel, rep.EmbedDim, rep.VectorWeight)
	}
	if rep.Budgets[0].Overall.Context.Recall != 1 {
		t.Fatalf("hybrid recall at a budget that holds everything: %v, want 1", rep.Budgets[0].Overall.Context.Recall)
	}
}

// TestRunMisses: OnMiss gets every evidence turn a package left out, with
// its text, its BM25 rank for the question (0: no word in common) and
// whether the baseline held it; nothing when everything fits.
func TestRunMisses(t *testing.T) {
	ctx := context.Background()
	file := writeFile(t, "tiny.json", tiny)
	text := map[string]string{"conv-a:D1:1": "I adopted a puppy named Biscuit last weekend.",
		"conv-a:D1:2": "My sister moved to Lisbon for a new job at the aquarium.",
		"conv-a:D2:1": "I visited my sister in Lisbon and we saw the sharks.",
		"conv-a:D2:2": "I finished the marathon in Boston in under four hours.",
		"conv-a:D1:3": "Biscuit chewed my running shoes already.",
		"conv-b:D1:1": "I went to Oslo to ski with my cousins."}
	for _, budget := range []int{70, 120, 100000} {
		var ms []Miss
		rep, err := Run(ctx, newMemory(t), file, Options{Budgets: []int{budget}, OnMiss: func(m Miss) { ms = append(ms, m) }})
		if err != nil {
			t.Fatal(err)
		}
		found := rep.Budgets[0].Overall.Context.Found
		if len(ms) != rep.EvidenceTurns-found {
			t.Fatalf("budget %d: %d misses reported, want %d evidence turns less %d found", budget, len(ms), rep.EvidenceTurns, found)
		}
		for _, m := range ms {
			want, ok := text[m.Conversation+":"+m.Evidence]
			if !ok || m.Text != want || m.Seq == 0 || m.Budget != budget || m.Question == "" || m.Category == 0 || m.Tokens == 0 {
				t.Errorf("budget %d: miss %+v", budget, m)
			}
			if m.BM25Rank < 1 || m.BM25Rank > 6 {
				t.Errorf("budget %d: miss %+v: every evidence turn of tiny shares a word with its question", budget, m)
			}
		}
		if budget == 100000 && len(ms) > 0 {
			t.Errorf("misses at a budget that holds everything: %+v", ms)
		}
		if budget == 70 && len(ms) == 0 {
			t.Errorf("no miss at budget 70, where the header leaves no room for a turn")
		}
	}

	// A question whose evidence shares no word with it ranks 0.
	file = writeFile(t, "pet.json", `[{"sample_id": "p", "conversation": {"speaker_a": "Ann", "speaker_b": "Bob",
	  "session_1_date_time": "1:56 pm on 8 May, 2023",
	  "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a puppy named Biscuit last weekend."},
	                {"speaker": "Bob", "dia_id": "D1:2", "text": "Which pet would suit a small flat?"}]},
	  "qa": [{"question": "What animal lives with her?", "answer": "a puppy", "evidence": ["D1:1"], "category": 4}]}]`)
	var ms []Miss
	if _, err := Run(ctx, newMemory(t), file, Options{Budgets: []int{70}, OnMiss: func(m Miss) { ms = append(ms, m) }}); err != nil {
		t.Fatal(err)
	}
	if len(ms) != 1 || ms[0].BM25Rank != 0 || ms[0].Baseline || ms[0].Speaker != "Ann" {
		t.Fatalf("misses %+v: want D1:1, by Ann, unranked and not in the baseline", ms)
	}
}

// realmemTiny is a LoCoMo-format file with RealMem's category numbers:
// 21 (named by its questions, as RealMem's converter writes them) and 22
// (unnamed).
const realmemTiny = `[
 {"sample_id": "realmem-Ann-c50",
  "conversation": {
   "speaker_a": "User", "speaker_b": "Assistant",
   "session_1_date_time": "8:00 am on 3 January, 2024",
   "session_1": [
    {"speaker": "User", "dia_id": "D1:1", "text": "I am saving for a trip to Kyoto in April."},
    {"speaker": "Assistant", "dia_id": "D1:2", "text": "A budget of 2,000 dollars could cover flights and a ryokan."}
   ],
   "session_2_date_time": "8:00 am on 9 February, 2024",
   "session_2": [
    {"speaker": "User", "dia_id": "D2:1", "text": "I switched my trip from Kyoto to Osaka, it is cheaper."},
    {"speaker": "Assistant", "dia_id": "D2:2", "text": "Osaka has good food markets."}
   ]
  },
  "qa": [
   {"question": "What budget did we plan for the Kyoto trip?", "answer": "", "evidence": ["D1:2"], "category": 21,
    "realmem_category": "Dynamic Incremental"},
   {"question": "Which city is the trip to now?", "answer": "", "evidence": ["D2:1", "D1:1"], "category": 22},
   {"question": "Anything else?", "answer": "", "evidence": ["D9:9"], "category": 21, "realmem_category": "Dynamic Incremental"}
  ]
 }
]`

// TestRunCategories: with no Categories, Run asks every category the
// file's questions use but 5, whatever their numbers, and names them as
// the file does or as LoCoMo does; categories asked for that the file
// lacks are listed, not scored as zero.
func TestRunCategories(t *testing.T) {
	ctx := context.Background()
	file := writeFile(t, "realmem.json", realmemTiny)
	var misses []Miss
	rep, err := Run(ctx, newMemory(t), file, Options{Budgets: []int{100, 100000}, OnMiss: func(m Miss) { misses = append(misses, m) }})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rep.Categories, []int{21, 22}) || !reflect.DeepEqual(rep.FileCategories, []int{21, 22}) ||
		rep.AbsentCategories != nil {
		t.Fatalf("categories %v, of the file %v, absent %v; want 21 and 22, none absent", rep.Categories, rep.FileCategories,
			rep.AbsentCategories)
	}
	if rep.Questions != 2 || rep.EvidenceTurns != 3 || rep.NoEvidence != 1 {
		t.Fatalf("%d questions, %d evidence turns, %d without evidence; want 2, 3, 1", rep.Questions, rep.EvidenceTurns, rep.NoEvidence)
	}
	for _, b := range rep.Budgets {
		if len(b.Categories) != 2 {
			t.Fatalf("budget %d: rows %+v", b.Budget, b.Categories)
		}
		c21, c22 := b.Categories[0], b.Categories[1]
		if c21.Category != 21 || c21.CategoryName != "dynamic incremental" || c21.Questions != 1 || c21.Evidence != 1 ||
			c22.Category != 22 || c22.CategoryName != "" || c22.Questions != 1 || c22.Evidence != 2 {
			t.Errorf("budget %d: rows %+v", b.Budget, b.Categories)
		}
		if b.Budget == 100000 && (c21.Context.Recall != 1 || c22.Context.Recall != 1) {
			t.Errorf("budget %d: recall %v and %v, want 1", b.Budget, c21.Context.Recall, c22.Context.Recall)
		}
	}
	for _, m := range misses {
		if m.Budget != 100 || m.BM25Rank < 1 {
			t.Errorf("miss %+v: want one at budget 100, ranked (every evidence turn shares a word with its question)", m)
		}
	}

	// Asked for, a category the file lacks is listed and has no row.
	rep, err = Run(ctx, newMemory(t), file, Options{Budgets: []int{100000}, Categories: []int{22, 4}})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rep.Categories, []int{22}) || !reflect.DeepEqual(rep.AbsentCategories, []int{4}) ||
		len(rep.Budgets[0].Categories) != 1 || rep.Questions != 1 {
		t.Fatalf("categories %v, absent %v, rows %+v, %d questions; want 22 asked, 4 absent",
			rep.Categories, rep.AbsentCategories, rep.Budgets[0].Categories, rep.Questions)
	}

	// LoCoMo's file: 5 is left out unless named, and LoCoMo names its
	// categories.
	rep, err = Run(ctx, newMemory(t), writeFile(t, "tiny.json", tiny), Options{Budgets: []int{100000}})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rep.Categories, []int{1, 2, 3, 4}) || !reflect.DeepEqual(rep.FileCategories, []int{1, 2, 3, 4, 5}) {
		t.Fatalf("categories %v of %v; want 1-4 of 1-5", rep.Categories, rep.FileCategories)
	}
	if n := rep.Budgets[0].Categories[1].CategoryName; n != "temporal" {
		t.Errorf("category 2 is named %q, want temporal", n)
	}
}

// TestEvidenceRanks: each evidence id's rank among the hits, 1 the best,
// 0 when absent; hits without a turn still take their rank.
func TestEvidenceRanks(t *testing.T) {
	hit := func(id string) strata.Hit { return strata.Hit{Kind: strata.KindTurn, Turn: &strata.Turn{ExtID: id}} }
	hits := []strata.Hit{hit("D1:4"), {Kind: strata.KindTurn}, hit("D2:1"), hit("D1:1")}
	got := evidenceRanks([]string{"D1:1", "D9:9", "D1:4"}, hits)
	if want := []int{4, 0, 1}; !slices.Equal(got, want) {
		t.Fatalf("ranks %v, want %v", got, want)
	}
}
