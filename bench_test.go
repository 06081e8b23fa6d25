package strata_test

import (
	"context"
	"fmt"
	"testing"

	"strata"
	"strata/internal/synth"
)

// BenchmarkIngest measures Ingest with rollups in batches of 5,000 turns,
// as `strata import` does, in turns per second. cmd/strata-bench runs the
// same at 1,000,000 turns next to the bare-insert baselines.
func BenchmarkIngest(b *testing.B) {
	turns := synth.New(1).Turns(b.N)
	m := newMemory(b, o200k(b))
	ctx := context.Background()
	b.ResetTimer()
	i := 0
	_, err := m.Import(ctx, func() (string, strata.Turn, error) {
		if i == len(turns) {
			return "", strata.Turn{}, errEOF
		}
		i++
		return "c", turns[i-1], nil
	})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "turns/s")
}

// BenchmarkContext measures Context(budget 4000) at several conversation
// lengths, without and with a query: its time must not grow with length
// beyond the logarithmic (without a query).
func BenchmarkContext(b *testing.B) {
	for _, n := range []int{1000, 10000, 50000} {
		m := newMemory(b, o200k(b))
		ctx := context.Background()
		g := synth.New(2)
		for i := 0; i < n; i += 5000 {
			if _, err := m.Ingest(ctx, strata.Batch{Conversation: "c", Turns: g.Turns(min(5000, n-i))}); err != nil {
				b.Fatal(err)
			}
		}
		for _, q := range []string{"", "garden recipe"} {
			b.Run(fmt.Sprintf("turns=%d/query=%q", n, q), func(b *testing.B) {
				for b.Loop() {
					pkg, err := m.Context(ctx, strata.ContextRequest{Conversation: "c", Query: q, Budget: 4000})
					if err != nil || pkg.Tokens > 4000 {
						b.Fatalf("%v, %d tokens", err, pkg.Tokens)
					}
				}
			})
		}
	}
}
