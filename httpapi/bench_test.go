package httpapi

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/internal/synth"
)

// BenchmarkIngestHTTP appends turns through the API on loopback, one
// request per turn and in batches of 100, beside strata's in-process
// Ingest of the same batches in the same run, each in turns per second.
func BenchmarkIngestHTTP(b *testing.B) {
	turn := func(i int) string {
		return fmt.Sprintf(`{"ext_id":"t%d","role":"%s","name":"Ana","content":"turn %d: the garden, the tomatoes and the weather in spring, note %d"}`,
			i, []string{"user", "assistant"}[i%2], i, i)
	}
	for _, batch := range []int{1, 100} {
		b.Run(fmt.Sprintf("http/batch=%d", batch), func(b *testing.B) {
			ts := newServer(b, Options{})
			client := ts.Client()
			n := 0
			for b.Loop() {
				var parts []string
				for range batch {
					parts = append(parts, turn(n))
					n++
				}
				resp, err := client.Post(ts.URL+"/v1/conversations/c/turns", "application/json",
					strings.NewReader(`{"turns":[`+strings.Join(parts, ",")+`]}`))
				if err != nil || resp.StatusCode != 200 {
					b.Fatalf("append: %v %v", resp, err)
				}
				resp.Body.Close()
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "turns/s")
		})
		b.Run(fmt.Sprintf("inprocess/batch=%d", batch), func(b *testing.B) {
			m := newMemory(b)
			n := 0
			for b.Loop() {
				bt := strata.Batch{Conversation: "c"}
				for range batch {
					bt.Turns = append(bt.Turns, strata.Turn{ExtID: fmt.Sprintf("t%d", n), Role: []strata.Role{strata.RoleUser, strata.RoleAssistant}[n%2], Name: "Ana",
						Content: fmt.Sprintf("turn %d: the garden, the tomatoes and the weather in spring, note %d", n, n)})
					n++
				}
				if _, err := m.Ingest(context.Background(), bt); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "turns/s")
		})
	}
}

// BenchmarkContextHTTP asks for a context package (budget 2,000, a
// two-word query) over HTTP and in process, on a 10,000-turn conversation,
// and reports p50 and p99 beside the mean.
func BenchmarkContextHTTP(b *testing.B) {
	m := newMemory(b)
	ctx := context.Background()
	turns := synth.New(7).Turns(10000)
	i := 0
	if _, err := m.Import(ctx, func() (string, strata.Turn, error) {
		if i == len(turns) {
			return "", strata.Turn{}, io.EOF
		}
		i++
		return "c", turns[i-1], nil
	}); err != nil {
		b.Fatal(err)
	}
	s, err := New(m, Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	s.SetReady(true)
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	queries := []string{"garden deploy", "budget invoice", "flight Lisbon", "error port", "piano lesson"}
	report := func(b *testing.B, took []time.Duration) {
		slices.Sort(took)
		b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
	}
	b.Run("http", func(b *testing.B) {
		var took []time.Duration
		n := 0
		for b.Loop() {
			body := fmt.Sprintf(`{"query":%q,"budget":2000}`, queries[n%len(queries)])
			n++
			start := time.Now()
			resp, err := ts.Client().Post(ts.URL+"/v1/conversations/c/context", "application/json", strings.NewReader(body))
			if err != nil || resp.StatusCode != 200 {
				b.Fatalf("context: %v %v", resp, err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			took = append(took, time.Since(start))
		}
		report(b, took)
	})
	b.Run("inprocess", func(b *testing.B) {
		var took []time.Duration
		n := 0
		for b.Loop() {
			start := time.Now()
			if _, err := m.Context(ctx, strata.ContextRequest{Conversation: "c", Query: queries[n%len(queries)], Budget: 2000}); err != nil {
				b.Fatal(err)
			}
			n++
			took = append(took, time.Since(start))
		}
		report(b, took)
	})
}
