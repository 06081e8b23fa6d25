package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/strata-memory/strata/extractive"
	"github.com/strata-memory/strata/sqlite"
	"io"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/httpapi/wire"
	"github.com/strata-memory/strata/internal/synth"
)

// BenchmarkIngestHTTP appends turns through the API on loopback, one
// request per turn and in batches of 100 and 1,000, beside strata's
// in-process Ingest of the same batches in the same run, each in turns
// per second. The turns are a generated history with its times (a few a
// minute, sessions days apart), so spans close and move to warm and cold
// as they would for an agent: "deferred" leaves the moves to the worker,
// as `strata serve` does, "inline" moves them in each append, as the CLI
// does.
func BenchmarkIngestHTTP(b *testing.B) {
	for _, tiers := range []string{"deferred", "inline"} {
		for _, batch := range []int{1, 100, 1000} {
			b.Run(fmt.Sprintf("tiers=%s/http/batch=%d", tiers, batch), func(b *testing.B) {
				s, err := New(benchMemory(b, tiers == "deferred"), Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
				if err != nil {
					b.Fatal(err)
				}
				s.SetReady(true)
				ts := httptest.NewServer(s.Handler())
				defer ts.Close()
				client := ts.Client()
				g := synth.New(3)
				n := 0
				for b.Loop() {
					var turns []wire.TurnIn
					for _, t := range g.Turns(batch) {
						turns = append(turns, wire.TurnIn{ExtID: t.ExtID, Role: t.Role, Name: t.Name, Content: t.Content, Time: t.Time})
					}
					body, err := json.Marshal(map[string]any{"turns": turns})
					if err != nil {
						b.Fatal(err)
					}
					resp, err := client.Post(ts.URL+"/v1/conversations/c/turns", "application/json", bytes.NewReader(body))
					if err != nil || resp.StatusCode != 200 {
						b.Fatalf("append: %v %v", resp, err)
					}
					resp.Body.Close()
					n += batch
				}
				b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "turns/s")
			})
			b.Run(fmt.Sprintf("tiers=%s/inprocess/batch=%d", tiers, batch), func(b *testing.B) {
				m := benchMemory(b, tiers == "deferred")
				g := synth.New(3)
				n := 0
				for b.Loop() {
					if _, err := m.Ingest(context.Background(), strata.Batch{Conversation: "c", Turns: g.Turns(batch)}); err != nil {
						b.Fatal(err)
					}
					n += batch
				}
				b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "turns/s")
			})
		}
	}
}

// benchMemory is a Memory over a fresh SQLite file with the default tier
// policy, moving spans in each append unless deferred.
func benchMemory(b *testing.B, deferred bool) *strata.Memory {
	st, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "strata.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	m, err := strata.New(strata.Config{Store: st, Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New(), DeferTiers: deferred})
	if err != nil {
		b.Fatal(err)
	}
	return m
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
