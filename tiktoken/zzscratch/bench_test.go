package zzscratch

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	pk "github.com/pkoukk/tiktoken-go"
	pkl "github.com/pkoukk/tiktoken-go-loader"
	tg "github.com/tiktoken-go/tokenizer"
)

func corpus(tb testing.TB) []string {
	b, err := os.ReadFile("/work/shared/data/locomo-dev.json")
	if err != nil {
		tb.Fatal(err)
	}
	var samples []struct {
		Conversation map[string]json.RawMessage `json:"conversation"`
	}
	if err := json.Unmarshal(b, &samples); err != nil {
		tb.Fatal(err)
	}
	var out []string
	for _, s := range samples {
		for k, v := range s.Conversation {
			if !strings.HasPrefix(k, "session_") || strings.HasSuffix(k, "date_time") {
				continue
			}
			var turns []struct{ Text string }
			if err := json.Unmarshal(v, &turns); err != nil {
				tb.Fatal(k, err)
			}
			for _, t := range turns {
				out = append(out, t.Text)
			}
		}
	}
	return out
}

func TestSame(t *testing.T) {
	texts := corpus(t)
	pk.SetBpeLoader(pkl.NewOfflineLoader())
	a, _ := pk.GetEncoding("o200k_base")
	c, _ := tg.Get(tg.O200kBase)
	nonascii := 0
	tot := 0
	for _, s := range texts {
		n1 := len(a.EncodeOrdinary(s))
		n2, _ := c.Count(s)
		tot += n2
		if n1 != n2 {
			t.Errorf("%q: %d vs %d", s, n1, n2)
		}
		for _, r := range s {
			if r >= 128 {
				nonascii++
				break
			}
		}
	}
	t.Logf("%d texts, %d tokens, %d non-ascii", len(texts), tot, nonascii)
}

func BenchmarkPkoukk(b *testing.B) {
	texts := corpus(b)
	pk.SetBpeLoader(pkl.NewOfflineLoader())
	a, _ := pk.GetEncoding("o200k_base")
	b.ResetTimer()
	toks := 0
	for i := 0; i < b.N; i++ {
		toks += len(a.EncodeOrdinary(texts[i%len(texts)]))
	}
	b.ReportMetric(float64(toks)/b.Elapsed().Seconds(), "tok/s")
}
func BenchmarkPkoukkEncode(b *testing.B) {
	texts := corpus(b)
	pk.SetBpeLoader(pkl.NewOfflineLoader())
	a, _ := pk.GetEncoding("o200k_base")
	b.ResetTimer()
	toks := 0
	for i := 0; i < b.N; i++ {
		toks += len(a.Encode(texts[i%len(texts)], nil, nil))
	}
	b.ReportMetric(float64(toks)/b.Elapsed().Seconds(), "tok/s")
}

func BenchmarkTiktokenGo(b *testing.B) {
	texts := corpus(b)
	c, _ := tg.Get(tg.O200kBase)
	b.ResetTimer()
	toks := 0
	for i := 0; i < b.N; i++ {
		n, _ := c.Count(texts[i%len(texts)])
		toks += n
	}
	b.ReportMetric(float64(toks)/b.Elapsed().Seconds(), "tok/s")
}

func BenchmarkLoadPkoukk(b *testing.B) {
	pk.SetBpeLoader(pkl.NewOfflineLoader())
	for i := 0; i < b.N; i++ {
		pk.GetEncoding("cl100k_base")
	}
}
