package strata_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/internal/synth"
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

// BenchmarkAppendOne measures Ingest of one turn at a time into a calendar
// conversation, per turn: "live" with the clock at each turn (the day is
// open, nothing reopens) and "late" with the clock a day ahead (the day
// has closed, so every turn reopens its day and week: the node is rebuilt
// over the longer span). The day holds 200 turns, as a busy day of an
// agent might.
func BenchmarkAppendOne(b *testing.B) {
	for _, late := range []bool{false, true} {
		name := "live"
		if late {
			name = "late"
		}
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			day := at("2026-11-20T00:00:00Z")
			for b.Loop() {
				b.StopTimer()
				clk := &clock{}
				m, _ := newClocked(b, clk, nil)
				b.StartTimer()
				for i := range 200 {
					t := strata.Turn{ExtID: fmt.Sprintf("t%d", i), Role: strata.RoleUser, Name: "Ana",
						Content: fmt.Sprintf("note %d about the deploy of v1.%d on port %d", i, i, 8000+i),
						Time:    day.Add(time.Duration(i) * time.Minute)}
					clk.Set(t.Time)
					if late {
						clk.Set(day.Add(36 * time.Hour))
					}
					if _, err := m.Ingest(ctx, strata.Batch{Conversation: "c", Policy: "calendar", Turns: []strata.Turn{t}}); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*200), "µs/turn")
		})
	}
}
