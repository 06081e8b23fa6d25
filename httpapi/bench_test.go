package httpapi

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"strata"
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
