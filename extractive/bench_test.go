package extractive

import (
	"context"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/internal/synth"
	"github.com/strata-memory/strata/tiktoken"
)

// benchSpans are level-1 spans of 10 generated turns each, as strata
// import rolls them up (the "micro" level of strata.ChunksPolicy).
func benchSpans(n int) [][]strata.Turn {
	g := synth.New(42)
	out := make([][]strata.Turn, n)
	for i := range out {
		out[i] = g.Turns(10)
	}
	return out
}

func benchTokenizers(b *testing.B) []strata.Tokenizer {
	tok, err := tiktoken.New(tiktoken.O200kBase)
	if err != nil {
		b.Fatal(err)
	}
	return []strata.Tokenizer{tok, lenTok{}}
}

// BenchmarkSpan summarizes level-1 spans of 10 generated turns at the
// micro budget (100), cycling through 2,000 different spans (more than
// the count cache holds), with the o200k tokenizer the CLI uses and with
// a free one (summarizer time alone).
func BenchmarkSpan(b *testing.B) {
	spans := benchSpans(2000)
	for _, tok := range benchTokenizers(b) {
		b.Run(tok.Name(), func(b *testing.B) {
			s := New()
			ctx := context.Background()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				req := strata.SummaryRequest{Level: 1, Budget: 100, Turns: spans[i%len(spans)], Tokenizer: tok}
				if _, err := s.Summarize(ctx, req); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// BenchmarkDigest summarizes a level-2 node over two level-1 summaries of
// generated spans (the "mini" level: budget 160), and a level-3 node over
// five of those (the "macro" level: budget 240).
func BenchmarkDigest(b *testing.B) {
	spans := benchSpans(64)
	for _, tok := range benchTokenizers(b) {
		s := New()
		ctx := context.Background()
		node := func(level int, sum strata.Summary, start, end time.Time) strata.Node {
			return strata.Node{Level: level, Start: start, End: end, Summary: sum.Text, Facts: sum.Facts, Themes: sum.Themes}
		}
		var micros []strata.Node
		for _, sp := range spans {
			sum, err := s.Summarize(ctx, strata.SummaryRequest{Level: 1, Budget: 100, Turns: sp, Tokenizer: tok})
			if err != nil {
				b.Fatal(err)
			}
			micros = append(micros, node(1, sum, sp[0].Time, sp[len(sp)-1].Time))
		}
		var minis []strata.Node
		for i := 0; i+2 <= len(micros); i += 2 {
			sum, err := s.Summarize(ctx, strata.SummaryRequest{Level: 2, Budget: 160, Children: micros[i : i+2], Tokenizer: tok})
			if err != nil {
				b.Fatal(err)
			}
			minis = append(minis, node(2, sum, micros[i].Start, micros[i+1].End))
		}
		b.Run("mini/"+tok.Name(), func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				k := 2 * (i % (len(micros) / 2))
				req := strata.SummaryRequest{Level: 2, Budget: 160, Children: micros[k : k+2], Tokenizer: tok}
				if _, err := s.Summarize(ctx, req); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
		b.Run("macro/"+tok.Name(), func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				k := 5 * (i % (len(minis) / 5))
				req := strata.SummaryRequest{Level: 3, Budget: 240, Children: minis[k : k+5], Tokenizer: tok}
				if _, err := s.Summarize(ctx, req); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
