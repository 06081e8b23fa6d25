package formats

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"

	"github.com/strata-memory/strata/internal/synth"
)

// synthJSONL returns n generated turns as JSONL lines, written the way
// strata-bench writes its input.
func synthJSONL(tb testing.TB, n int) []byte {
	tb.Helper()
	g := synth.New(42)
	var buf bytes.Buffer
	for i := 0; i < n; i++ {
		t := g.Next()
		line, err := json.Marshal(map[string]any{"conversation": "big", "session": t.SessionLabel, "ext_id": t.ExtID,
			"role": t.Role, "name": t.Name, "content": t.Content, "time": t.Time})
		if err != nil {
			tb.Fatal(err)
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}

// BenchmarkJSONL parses 100,000 generated JSONL lines per iteration.
func BenchmarkJSONL(b *testing.B) {
	const lines = 100000
	data := synthJSONL(b, lines)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		r, err := Open(JSONL, "bench.jsonl", bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for {
			_, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != lines {
			b.Fatalf("%d records, want %d", n, lines)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*lines), "ns/line")
}
