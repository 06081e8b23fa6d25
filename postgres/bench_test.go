package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/strata-memory/strata"
)

// BenchmarkAppendTurns appends turns of about 270 bytes in batches of 500
// to one conversation (no rollups), and reports turns per second.
func BenchmarkAppendTurns(b *testing.B) {
	ctx := context.Background()
	s := openStore(b, testDSN(b))
	if _, err := s.EnsureConversation(ctx, strata.Conversation{Namespace: "ns", ID: "c"}); err != nil {
		b.Fatal(err)
	}
	const batch = 500
	text := "We looked at the quarterly numbers again and the billing service still drops about one request " +
		"in a thousand under load; Maria thinks the retry budget is too small, Tom wants to move the queue to " +
		"a separate cluster before the March release. Next step: a load test on staging. "
	b.ResetTimer()
	n := 0
	start := time.Now()
	for b.Loop() {
		turns := make([]strata.Turn, batch)
		for i := range turns {
			n++
			turns[i] = strata.Turn{ExtID: fmt.Sprintf("t%d", n), Role: strata.RoleUser,
				Content: fmt.Sprintf("%s(%d)", text, n), Time: t0.Add(time.Duration(n) * time.Second), Tokens: 60}
		}
		if _, err := s.AppendTurns(ctx, "ns", "c", turns); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)/time.Since(start).Seconds(), "turns/s")
}

// BenchmarkSearch searches 20,000 such turns for two words.
func BenchmarkSearch(b *testing.B) {
	ctx := context.Background()
	s := openStore(b, testDSN(b))
	if _, err := s.EnsureConversation(ctx, strata.Conversation{Namespace: "ns", ID: "c"}); err != nil {
		b.Fatal(err)
	}
	words := []string{"billing", "queue", "retry", "staging", "cluster", "release", "numbers", "budget"}
	for k := 0; k < 40; k++ {
		turns := make([]strata.Turn, 500)
		for i := range turns {
			n := k*500 + i
			turns[i] = strata.Turn{ExtID: fmt.Sprintf("t%d", n), Role: strata.RoleUser,
				Content: fmt.Sprintf("note %d about the %s and the %s", n, words[n%len(words)], words[(n/8)%len(words)]),
				Time:    t0.Add(time.Duration(n) * time.Second)}
		}
		if _, err := s.AppendTurns(ctx, "ns", "c", turns); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.Search(ctx, strata.SearchQuery{Namespace: "ns", Conversation: "c", Text: "billing queue", K: 10}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTurns reads back 10,000 hot turns of about 270 bytes, the
// whole conversation at once, and reports turns per second.
func BenchmarkTurns(b *testing.B) {
	ctx := context.Background()
	s := openStore(b, testDSN(b))
	if _, err := s.EnsureConversation(ctx, strata.Conversation{Namespace: "ns", ID: "c"}); err != nil {
		b.Fatal(err)
	}
	const batches, batch = 20, 500
	text := "We looked at the quarterly numbers again and the billing service still drops about one request " +
		"in a thousand under load; Maria thinks the retry budget is too small, Tom wants to move the queue to " +
		"a separate cluster before the March release. Next step: a load test on staging. "
	for k := 0; k < batches; k++ {
		turns := make([]strata.Turn, batch)
		for i := range turns {
			n := k*batch + i
			turns[i] = strata.Turn{ExtID: fmt.Sprintf("t%d", n), Role: strata.RoleUser,
				Content: fmt.Sprintf("%s(%d)", text, n), Time: t0.Add(time.Duration(n) * time.Second), Tokens: 60}
		}
		if _, err := s.AppendTurns(ctx, "ns", "c", turns); err != nil {
			b.Fatal(err)
		}
	}
	n := 0
	start := time.Now()
	for b.Loop() {
		got, err := s.Turns(ctx, strata.TurnFilter{Namespace: "ns", Conversation: "c"})
		if err != nil || len(got) != batches*batch {
			b.Fatalf("Turns: %d, %v", len(got), err)
		}
		n += len(got)
	}
	b.ReportMetric(float64(n)/time.Since(start).Seconds(), "turns/s")
}
