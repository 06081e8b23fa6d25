package httpapi

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	rtmetrics "runtime/metrics"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/extractive"
	"github.com/strata-memory/strata/sqlite"
	"github.com/strata-memory/strata/tiktoken"
)

// heapPeak samples the bytes of heap objects (live and not yet collected,
// which is what the process's resident memory follows) until stopped, and
// keeps the largest figure.
type heapPeak struct {
	peak atomic.Uint64
	stop chan struct{}
	done chan struct{}
}

func heapObjects() uint64 {
	s := []rtmetrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	rtmetrics.Read(s)
	return s[0].Value.Uint64()
}

func startHeapPeak() *heapPeak {
	p := &heapPeak{stop: make(chan struct{}), done: make(chan struct{})}
	p.peak.Store(heapObjects())
	go func() {
		defer close(p.done)
		s := []rtmetrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			select {
			case <-p.stop:
				return
			default:
			}
			rtmetrics.Read(s)
			if v := s[0].Value.Uint64(); v > p.peak.Load() {
				p.peak.Store(v)
			}
			runtime.Gosched()
		}
	}()
	return p
}

func (p *heapPeak) end() uint64 {
	close(p.stop)
	<-p.done
	return p.peak.Load()
}

// BenchmarkAppendSpacelessMemory appends one turn of 16 MiB without a
// space (letters, the costliest text to count) through the API on
// loopback, with strata serve's tokenizer (o200k_base) and a SQLite store,
// and reports the heap it takes at its peak beyond what was live before
// the request (peak-MB) and what it allocates in all (alloc-MB). The peak
// is sampled while the request runs, so it is a floor of the true one.
func BenchmarkAppendSpacelessMemory(b *testing.B) {
	tok, err := tiktoken.New(tiktoken.O200kBase)
	if err != nil {
		b.Fatal(err)
	}
	st, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "strata.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	m, err := strata.New(strata.Config{Store: st, Tokenizer: tok, Summarizer: extractive.New(), DeferTiers: true})
	if err != nil {
		b.Fatal(err)
	}
	const size = 16 << 20
	s, err := New(m, Options{MaxBody: 40_000_000, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	letters := bytes.Repeat([]byte("abcdefghij"), size/10)
	body := []byte(`{"turns":[{"role":"user","content":"` + string(letters) + `"}]}`)
	letters = nil
	var peak, alloc float64
	n := 0
	for b.Loop() {
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		base := heapObjects()
		p := startHeapPeak()
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/v1/conversations/c"+strconv.Itoa(n)+"/turns", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := ts.Client().Do(req)
		if err != nil {
			b.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		top := p.end()
		if resp.StatusCode != 200 {
			b.Fatalf("append: %d %s", resp.StatusCode, out)
		}
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		peak = max(peak, float64(top-base)/(1<<20))
		alloc += float64(after.TotalAlloc-before.TotalAlloc) / (1 << 20)
		n++
	}
	b.ReportMetric(peak, "peak-MB")
	b.ReportMetric(alloc/float64(n), "alloc-MB/op")

}

// BenchmarkHealthzWhileAppending asks /healthz while writers append
// 16 MiB spaceless turns without end (two by default; set
// STRATA_BENCH_WRITERS), through a server that counts with o200k_base,
// and reports the probe's p50 and p99 in milliseconds: how long a short
// request waits behind large ones. STRATA_BENCH_MAXLARGE sets
// Options.MaxLarge (default: one less than the cores).
func BenchmarkHealthzWhileAppending(b *testing.B) {
	tok, err := tiktoken.New(tiktoken.O200kBase)
	if err != nil {
		b.Fatal(err)
	}
	st, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "strata.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	m, err := strata.New(strata.Config{Store: st, Tokenizer: tok, Summarizer: extractive.New(), DeferTiers: true})
	if err != nil {
		b.Fatal(err)
	}
	writers, maxLarge := 2, 0
	if v, err := strconv.Atoi(os.Getenv("STRATA_BENCH_WRITERS")); err == nil {
		writers = v
	}
	if v, err := strconv.Atoi(os.Getenv("STRATA_BENCH_MAXLARGE")); err == nil {
		maxLarge = v
	}
	s, err := New(m, Options{MaxBody: 40_000_000, MaxInflight: 160_000_000, MaxLarge: maxLarge,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	body := []byte(`{"turns":[{"role":"user","content":"` + string(bytes.Repeat([]byte("abcdefghij"), (16<<20)/10)) + `"}]}`)
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ctx.Err() == nil; n++ {
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, fmt.Sprintf("%s/v1/conversations/w%d-%d/turns", ts.URL, i, n), bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				if resp, err := http.DefaultClient.Do(req); err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}
		}()
	}
	time.Sleep(time.Second) // the writers' bodies are in
	var took []time.Duration
	for b.Loop() {
		start := time.Now()
		resp, err := ts.Client().Get(ts.URL + "/healthz")
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		took = append(took, time.Since(start))
		time.Sleep(5 * time.Millisecond)
	}
	stop()
	wg.Wait()
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
}
