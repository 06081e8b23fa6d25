package compact_test

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"
	"time"

	"github.com/strata-memory/strata/compact"
)

// benchTranscript is a 1,000-message list with 300 tool results: 100
// turns of a user message, three tool rounds and a reply, each followed
// by a short exchange; tool outputs are 200 to 12,000 characters.
func benchTranscript(b testing.TB, p compact.Provider) *compact.Transcript {
	r := rand.New(rand.NewSource(1))
	var msgs []string
	for turn := 0; turn < 100; turn++ {
		msgs = append(msgs, user(p, text(r, 300)))
		for k := 0; k < 3; k++ {
			msgs = append(msgs, toolRound(p, fmt.Sprintf("call_%d_%d", turn, k), "bash", `{"cmd":"make test"}`, text(r, 200+r.Intn(11800)))...)
		}
		msgs = append(msgs, assistant(p, text(r, 400)), user(p, "thanks"), assistant(p, "You're welcome."))
	}
	tr := mustParse(b, p, list(msgs...))
	n, results := len(tr.Messages), 0
	for _, m := range tr.Messages {
		if m.IsToolResult() {
			results++
		}
	}
	if n != 1000 || results != 300 {
		b.Fatalf("%d messages, %d tool results; want 1000, 300", n, results)
	}
	return tr
}

// BenchmarkPrune measures layer 1 over a freshly parsed 1,000-message
// list with 300 tool results (parsing excluded; each iteration prunes a
// clone of the unpruned list, so every run does the full work). It
// reports the median iteration as p50-ns.
func BenchmarkPrune(b *testing.B) {
	for _, p := range providers {
		b.Run(string(p), func(b *testing.B) {
			tr := benchTranscript(b, p)
			cfg := compact.DefaultConfig()
			var times []time.Duration
			b.ReportAllocs()
			for b.Loop() {
				c := tr.Clone()
				start := time.Now()
				st, err := compact.Prune(c, cfg)
				times = append(times, time.Since(start))
				if err != nil || st.Cleared < 250 {
					b.Fatalf("%+v %v", st, err)
				}
			}
			slices.Sort(times)
			b.ReportMetric(float64(times[len(times)/2].Nanoseconds()), "p50-ns")
		})
	}
}
