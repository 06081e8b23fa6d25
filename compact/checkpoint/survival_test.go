package checkpoint_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/compact/checkpoint"
	"github.com/strata-memory/strata/compact/internal/agentgen"
	"github.com/strata-memory/strata/internal/race"
	"github.com/strata-memory/strata/tiktoken"
)

// The survival target: of the identifiers in a compacted span, at least
// 95% appear in its checkpoint. "Identifiers in a span" are agentgen's
// planted ones (Transcript.Truth) that occur in the span; one survives
// when the checkpoint says it verbatim, ignoring case, as a whole word
// (agentgen.Contains). Three writers are compared on the same spans:
//
//	extractive  checkpoint.Writer without a model
//	llm+ledger  checkpoint.Writer with the plausible fake model
//	plain       the same fake model asked "Summarize this conversation."
//	            about the same serialized span, with no ledger
//
// The fake keeps every third identifier-like word it reads (at most 12),
// in the same way for both prompts.

const survivalSeeds = 20

// scenario is a kind of span to measure.
type scenario struct {
	name   string
	tasks  int
	prune  bool // as package compact hands it over: pruned and cut
	assert bool // the 95% target applies at the default budget
}

// The last scenario is the span of a compaction at package compact's
// default threshold: 80 tasks prune to about 85k tokens, over the 100k
// threshold with the output headroom, and the span is what precedes the
// last 20k tokens. The 95% target holds for all of them at the default
// budget; at 3,000 and 1,000 tokens the identifiers of the larger spans
// need more room than there is (the "needs" column), and the ledger has to
// rank: those rows are reported, not asserted.
var scenarios = []scenario{
	{"5 tasks (agentgen default)", 5, false, true},
	{"20 tasks", 20, false, true},
	{"40 tasks", 40, false, true},
	{"80 tasks, as compacted", 80, true, true},
}

type tally struct{ kept, total int }

func (t *tally) add(truth []checkpoint.Identifier, text string) {
	for _, id := range truth {
		t.total++
		if agentgen.Contains(text, id.Text) {
			t.kept++
		}
	}
}

func (t tally) rate() float64 { return float64(t.kept) / float64(max(1, t.total)) }

type survival struct {
	ext, llm, plain tally
	tokens, spans   int
	needs           int // tokens of the identifiers, verbatim, one per line
}

// measure runs the three writers over the scenario's spans, one seed
// per goroutine (the writers are safe for concurrent use).
func measure(t testing.TB, sc scenario, budget int, tok strata.Tokenizer) survival {
	ext, err := checkpoint.New(checkpoint.Options{Budget: budget, Tokenizer: tok})
	if err != nil {
		t.Fatal(err)
	}
	llm, err := checkpoint.New(checkpoint.Options{Budget: budget, Tokenizer: tok, LLM: &fakeModel{reply: plausible}})
	if err != nil {
		t.Fatal(err)
	}
	per := make([]survival, survivalSeeds)
	errs := make([]error, survivalSeeds)
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i := range per {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			s := &per[i]
			tr := agentgen.Generate(int64(i+1), agentgen.Options{Tasks: sc.tasks})
			span := tr.Entries()
			if sc.prune {
				span = asCompacted(tr, tok)
			}
			for _, e := range span {
				s.tokens += tok.Count(e.Text)
			}
			s.spans++
			truth := agentgen.TruthIn(tr.Truth, span)
			for _, id := range truth {
				s.needs += tok.Count(id.Text) + 1
			}
			a, err := ext.Checkpoint(context.Background(), span, "")
			if err != nil {
				errs[i] = err
				return
			}
			s.ext.add(truth, a.Text)
			b, err := llm.Checkpoint(context.Background(), span, "")
			if err != nil {
				errs[i] = err
				return
			}
			s.llm.add(truth, b.Text)
			c, _ := plausible(1, strata.CompletionRequest{System: "Summarize this conversation.", User: checkpoint.Serialize(span)})
			s.plain.add(truth, c.Text)
		}()
	}
	wg.Wait()
	var sum survival
	for i, s := range per {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		sum.ext.kept, sum.ext.total = sum.ext.kept+s.ext.kept, sum.ext.total+s.ext.total
		sum.llm.kept, sum.llm.total = sum.llm.kept+s.llm.kept, sum.llm.total+s.llm.total
		sum.plain.kept, sum.plain.total = sum.plain.kept+s.plain.kept, sum.plain.total+s.plain.total
		sum.tokens, sum.spans, sum.needs = sum.tokens+s.tokens, sum.spans+s.spans, sum.needs+s.needs
	}
	return sum
}

func TestIdentifierSurvival(t *testing.T) {
	if testing.Short() || race.Enabled {
		// Without the race detector it takes a few seconds, under it a
		// minute and a half, for no concurrency: .ci/run runs it without.
		t.Skip("measures 20 seeds of several span sizes: run it without -short and without -race")
	}
	tok, err := tiktoken.New(tiktoken.O200kBase)
	if err != nil {
		t.Fatal(err)
	}
	var report strings.Builder
	fmt.Fprintf(&report, "identifier survival over %d seeds (o200k tokens):\n", survivalSeeds)
	fmt.Fprintf(&report, "%-28s %6s %8s %6s %6s %10s %11s %7s\n", "span", "budget", "tokens", "truth", "needs", "extractive", "llm+ledger", "plain")
	for _, sc := range scenarios {
		for _, budget := range []int{checkpoint.DefaultBudget, 3000, 1000} {
			s := measure(t, sc, budget, tok)
			fmt.Fprintf(&report, "%-28s %6d %8d %6d %6d %9.1f%% %10.1f%% %6.1f%%\n", sc.name, budget, s.tokens/s.spans,
				s.ext.total/s.spans, s.needs/s.spans, 100*s.ext.rate(), 100*s.llm.rate(), 100*s.plain.rate())
			if sc.assert && budget == checkpoint.DefaultBudget {
				if s.ext.rate() < 0.95 || s.llm.rate() < 0.95 {
					t.Errorf("%s at %d tokens: extractive %.3f, llm+ledger %.3f, want >= 0.95", sc.name, budget, s.ext.rate(), s.llm.rate())
				}
			}
			if s.plain.rate() >= s.llm.rate() {
				t.Errorf("%s at %d tokens: the ledger does not beat the plain prompt (%.3f vs %.3f)", sc.name, budget, s.llm.rate(), s.plain.rate())
			}
		}
	}
	t.Log("\n" + report.String())
}

// TestUpdateSurvival compacts each transcript twice (the second time
// updating the first checkpoint) and checks that the second checkpoint
// keeps the first span's identifiers, except those the update rules
// supersede, and its own span's.
func TestUpdateSurvival(t *testing.T) {
	tok, err := tiktoken.New(tiktoken.O200kBase)
	if err != nil {
		t.Fatal(err)
	}
	w, _ := checkpoint.New(checkpoint.Options{Tokenizer: tok})
	var old, cur, superseded tally
	for seed := int64(1); seed <= survivalSeeds; seed++ {
		tr := agentgen.Generate(seed, agentgen.Options{Tasks: 10})
		span := tr.Entries()
		cut := len(span) / 2
		for span[cut].Role != "user" || span[cut].Kind != "text" {
			cut++
		}
		r1, err := w.Checkpoint(context.Background(), span[:cut], "")
		if err != nil {
			t.Fatal(err)
		}
		r2, err := w.Checkpoint(context.Background(), span[cut:], r1.Text)
		if err != nil {
			t.Fatal(err)
		}
		// What the update may drop: the first span's errors, fixed by a
		// passing run of the second.
		var first []checkpoint.Identifier
		for _, id := range agentgen.TruthIn(tr.Truth, span[:cut]) {
			if agentgen.Contains(r1.Text, id.Text) {
				if id.Kind == checkpoint.KindError && !agentgen.Contains(r2.Text, id.Text) {
					superseded.total++
					continue
				}
				first = append(first, id)
			}
		}
		old.add(first, r2.Text)
		cur.add(agentgen.TruthIn(tr.Truth, span[cut:]), r2.Text)
	}
	t.Logf("update: the first span's identifiers kept %.1f%% (%d errors superseded as fixed), the second span's %.1f%%",
		100*old.rate(), superseded.total, 100*cur.rate())
	if old.rate() < 0.99 || cur.rate() < 0.95 {
		t.Errorf("update survival: earlier %.3f, new %.3f", old.rate(), cur.rate())
	}
}

// asCompacted returns the span package compact would hand the writer for
// a transcript with its default configuration: tool results more than 6
// tool-result messages old replaced by a placeholder, results longer than
// 4000 characters cut to their first and last 1500, and the span all the
// entries before the last 20,000 tokens, cut at a user message.
func asCompacted(tr agentgen.Transcript, tok strata.Tokenizer) []checkpoint.Entry {
	msgs := append([]agentgen.Message(nil), tr.Messages...)
	age := 0
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != "tool" {
			continue
		}
		if i+1 < len(msgs) && msgs[i+1].Role == "tool" {
			// A run of results answers one assistant message: one age.
		} else {
			age++
		}
		r := *msgs[i].Result
		switch out := []rune(r.Output); {
		case age > 6 && len(out) > 70:
			r.Output = "[Tool output cleared — content was processed in earlier turns]"
		case age > 2 && len(out) > 4000:
			r.Output = string(out[:1500]) + fmt.Sprintf("\n\n--- trimmed (kept 1500 head + 1500 tail of %d chars) ---\n\n", len(out)) + string(out[len(out)-1500:])
		}
		msgs[i].Result = &r
	}
	entries := agentgen.Transcript{Messages: msgs}.Entries()
	kept := 0
	cut := len(entries)
	for cut > 0 && kept < 20000 {
		cut--
		kept += tok.Count(entries[cut].Text)
	}
	for cut < len(entries) && (entries[cut].Role != "user" || entries[cut].Kind != "text") {
		cut++
	}
	return entries[:cut]
}

// BenchmarkSurvival reports the survival rates of the three writers on
// the 20-task spans, as metrics: go test -bench Survival -run '^$'.
func BenchmarkSurvival(b *testing.B) {
	tok, err := tiktoken.New(tiktoken.O200kBase)
	if err != nil {
		b.Fatal(err)
	}
	for _, budget := range []int{checkpoint.DefaultBudget, 1000} {
		b.Run(fmt.Sprintf("budget=%d", budget), func(b *testing.B) {
			var s survival
			for i := 0; i < b.N; i++ {
				s = measure(b, scenarios[1], budget, tok)
			}
			b.ReportMetric(100*s.ext.rate(), "extractive-%")
			b.ReportMetric(100*s.llm.rate(), "llm+ledger-%")
			b.ReportMetric(100*s.plain.rate(), "plain-%")
		})
	}
}
