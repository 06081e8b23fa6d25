package tiktoken

import (
	"sync"
	"testing"

	pkoukk "github.com/pkoukk/tiktoken-go"
	loader "github.com/pkoukk/tiktoken-go-loader"
)

// BenchmarkCount counts the tokens of LoCoMo turns, one turn per operation,
// with this package and with github.com/pkoukk/tiktoken-go, the exact library
// it is checked against. It reports tokens and turns per second.
func BenchmarkCount(b *testing.B) {
	texts := locomoTexts(b)
	for _, e := range encodings {
		tok, err := New(e.name)
		if err != nil {
			b.Fatal(err)
		}
		pkoukk.SetBpeLoader(loader.NewOfflineLoader())
		lib, err := pkoukk.GetEncoding(e.name)
		if err != nil {
			b.Fatal(err)
		}
		var mu sync.Mutex
		run := func(name string, count func(string) int) {
			b.Run(e.name+"/"+name, func(b *testing.B) {
				tokens, turns := 0, 0
				for b.Loop() {
					tokens += count(texts[turns%len(texts)])
					turns++
				}
				b.ReportMetric(float64(tokens)/b.Elapsed().Seconds(), "tokens/s")
				b.ReportMetric(float64(turns)/b.Elapsed().Seconds(), "turns/s")
			})
			b.Run(e.name+"/"+name+"-parallel", func(b *testing.B) {
				var tokens, turns int64
				b.RunParallel(func(pb *testing.PB) {
					n, i := 0, 0
					for pb.Next() {
						n += count(texts[i%len(texts)])
						i++
					}
					mu.Lock()
					tokens += int64(n)
					turns += int64(i)
					mu.Unlock()
				})
				b.ReportMetric(float64(tokens)/b.Elapsed().Seconds(), "tokens/s")
				b.ReportMetric(float64(turns)/b.Elapsed().Seconds(), "turns/s")
			})
		}
		run("fast", tok.Count)
		run("reference", func(s string) int { return len(lib.EncodeOrdinary(s)) })
	}
}

// BenchmarkLoadVocab measures building a vocabulary, which New does once
// per encoding and process.
func BenchmarkLoadVocab(b *testing.B) {
	for _, e := range encodings {
		b.Run(e.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := loadVocab(e.file); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
