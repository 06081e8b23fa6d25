package strata_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/internal/hashembed"
	"github.com/strata-memory/strata/internal/synth"
)

// BenchmarkHybridSearch measures Memory.Search end to end over one
// SQLite conversation of $STRATA_BENCH_TURNS synthetic turns (default
// 100,000; 1,000,000 for the figure in the README), embedded in 384
// dimensions by the hash embedder: BM25 in the store, the query's
// vector, the vector index, fusion, and reading the hits. It logs the
// time to import, to embed and to load the index (the first search), and
// reports the latency percentiles of the searches after it, next to
// the same searches without an embedder (BM25 alone).
func BenchmarkHybridSearch(b *testing.B) {
	if testing.Short() {
		b.Skip("builds a big conversation")
	}
	n := 100_000
	if s := os.Getenv("STRATA_BENCH_TURNS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n <= 0 {
			b.Fatalf("STRATA_BENCH_TURNS=%q", s)
		}
	}
	ctx := context.Background()
	st := openStore(b)
	emb := hashembed.New("hash-384", 384)
	m := embedMemory(b, st, emb, strata.EmbeddingOptions{BatchSize: 256}, nil)
	lexical := embedMemory(b, st, nil, strata.EmbeddingOptions{}, nil)

	start := time.Now()
	turns := synth.New(1)
	i := 0
	if _, err := m.Import(ctx, func() (string, strata.Turn, error) {
		if i == n {
			return "", strata.Turn{}, errEOF
		}
		i++
		return "c", turns.Next(), nil
	}); err != nil {
		b.Fatal(err)
	}
	b.Logf("%d turns: imported in %v", n, time.Since(start).Round(time.Millisecond))
	start = time.Now()
	res, err := m.Embed(ctx, strata.EmbedRequest{Conversation: "c"})
	if err != nil {
		b.Fatal(err)
	}
	took := time.Since(start)
	b.Logf("embedded %d turns and %d summaries in %v (%.0f vectors/s)", res.Turns, res.Nodes, took.Round(time.Millisecond),
		float64(res.Turns+res.Nodes)/took.Seconds())
	start = time.Now()
	if res, err := m.Embed(ctx, strata.EmbedRequest{Conversation: "c"}); err != nil || res.Turns+res.Nodes != 0 {
		b.Fatalf("second Embed = %+v, %v", res, err)
	}
	b.Logf("a second Embed, with nothing to do: %v", time.Since(start).Round(time.Millisecond))
	start = time.Now()
	if _, err := m.Stats(ctx); err != nil {
		b.Fatal(err)
	}
	b.Logf("Stats with the embedding counts: %v", time.Since(start).Round(time.Millisecond))

	words := []string{"garden", "recipe", "deploy", "server", "birthday", "party", "coffee", "bakery", "deadline",
		"painting", "camping", "guitar", "supplier", "price", "doctor", "sleep", "family", "trip", "budget", "report"}
	r := rand.New(rand.NewPCG(9, 9))
	queries := make([]string, 200)
	for i := range queries {
		queries[i] = words[r.IntN(len(words))] + " " + words[r.IntN(len(words))]
	}
	// The floor under loading the index: reading the vectors alone.
	for _, kind := range []string{strata.KindTurn, strata.KindSummary} {
		f := strata.VectorFilter{Namespace: strata.DefaultNamespace, Conversation: "c", Space: strata.EmbedSpace{Model: emb.Model()}, Kind: kind}
		start = time.Now()
		n := 0
		if err := st.Vectors(ctx, f, func(strata.Vector) error { n++; return nil }); err != nil {
			b.Fatal(err)
		}
		b.Logf("reading the %d %s vectors from the store: %v", n, kind, time.Since(start).Round(time.Millisecond))
	}
	start = time.Now()
	if _, err := m.Search(ctx, "c", queries[0], 10); err != nil {
		b.Fatal(err)
	}
	b.Logf("first search (loads the vector index): %v", time.Since(start).Round(time.Millisecond))

	for _, mode := range []struct {
		name string
		m    *strata.Memory
	}{{"hybrid", m}, {"bm25", lexical}} {
		b.Run(fmt.Sprintf("turns=%d/%s", n, mode.name), func(b *testing.B) {
			var lat []time.Duration
			for i := 0; b.Loop(); i++ {
				t0 := time.Now()
				hits, err := mode.m.Search(ctx, "c", queries[i%len(queries)], 10)
				lat = append(lat, time.Since(t0))
				if err != nil || len(hits) == 0 {
					b.Fatalf("%q: %d hits, %v", queries[i%len(queries)], len(hits), err)
				}
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}
