package strata

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"
)

// synthVectors is a synthetic embedding corpus with the structure of real
// sentence embeddings: every vector shares a common direction (embedding
// models are anisotropic), belongs to one of `topics` topics and one of
// `subs` subtopics of it, and has its own noise. With the weights below a
// random pair has cosine about 0.2, a pair of one topic about 0.45 and a
// pair of one subtopic about 0.7. Turns come in runs of 5 to 30 on one
// topic (a conversation stays on a subject for a while), which is what
// coarse-to-fine search over span vectors relies on.
type synthVectors struct {
	dim     int
	vecs    [][]float32 // normalized
	queries [][]float32 // normalized, drawn like the turns
	truth   [][]int     // exact float32 top 10 of each query
}

const (
	synthTopics = 1000
	synthSubs   = 50
)

// synthMix is the squared weights of a synthetic vector's parts; they
// sum to 1, so each is the part's share of the cosine of two vectors
// that share it.
type synthMix struct {
	name                      string
	common, topic, sub, noise float64
}

var synthMixes = []synthMix{
	// Neighbours stand out: one subtopic is cosine 0.7, one topic 0.45.
	{"subtopics", 0.2, 0.25, 0.25, 0.3},
	// Neighbours barely stand out: one subtopic is cosine 0.55, one
	// topic 0.5, so the top 10 of a query lie among its topic's 1,000
	// vectors by small margins.
	{"flat", 0.2, 0.3, 0.05, 0.45},
}

func newSynthVectors(n, dim, nq int, mix synthMix, seed uint64) *synthVectors {
	r := rand.New(rand.NewPCG(seed, 1))
	unit := func() []float32 {
		v := make([]float32, dim)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return normalize(v)
	}
	common := unit()
	topics := make([][]float32, synthTopics)
	subs := make([][]float32, synthTopics*synthSubs)
	for i := range topics {
		topics[i] = unit()
	}
	for i := range subs {
		subs[i] = unit()
	}
	draw := func(topic int) []float32 {
		sub := subs[topic*synthSubs+r.IntN(synthSubs)]
		noise := unit()
		v := make([]float32, dim)
		a, b, c, e := float32(math.Sqrt(mix.common)), float32(math.Sqrt(mix.topic)), float32(math.Sqrt(mix.sub)), float32(math.Sqrt(mix.noise))
		for i := range v {
			v[i] = a*common[i] + b*topics[topic][i] + c*sub[i] + e*noise[i]
		}
		return normalize(v)
	}
	s := &synthVectors{dim: dim, vecs: make([][]float32, 0, n)}
	for len(s.vecs) < n {
		topic, run := r.IntN(synthTopics), 5+r.IntN(26)
		for j := 0; j < run && len(s.vecs) < n; j++ {
			s.vecs = append(s.vecs, draw(topic))
		}
	}
	for range nq {
		s.queries = append(s.queries, draw(r.IntN(synthTopics)))
	}
	s.truth = make([][]int, nq)
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for qi, q := range s.queries {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			top := newTopK(10)
			for i, v := range s.vecs {
				var d float32
				for j := range v {
					d += q[j] * v[j]
				}
				top.push(vecHit{i, d})
			}
			for _, h := range top.sorted() {
				s.truth[qi] = append(s.truth[qi], h.slot)
			}
		}()
	}
	wg.Wait()
	return s
}

// recall is the share of the exact top 10 found in got.
func recall(truth []int, got []vecHit) float64 {
	n := 0
	for _, t := range truth {
		if slices.ContainsFunc(got, func(h vecHit) bool { return h.slot == t }) {
			n++
		}
	}
	return float64(n) / float64(len(truth))
}

// synthMillion makes a million vectors of dimension 384 of the mix and
// indexes them.
func synthMillion(b *testing.B, mix synthMix) (*synthVectors, *vecSet, time.Duration) {
	if testing.Short() {
		b.Skip("a million vectors take a minute to make")
	}
	s := newSynthVectors(1_000_000, 384, 50, mix, 7)
	start := time.Now()
	set := newVecSet(384)
	for i, v := range s.vecs {
		set.add(int64(i), v)
	}
	return s, set, time.Since(start)
}

// BenchmarkVectorSearch queries a million synthetic vectors of dimension
// 384 for their top 10: the index's own search (sign bits, then int8
// rerank), an exact int8 scan over all vectors in parallel, and
// coarse-to-fine over the vectors of 10-turn spans (the mean of their
// turns', standing in for the embedding of their summary). It reports the
// latency percentiles of one query and the recall against an exact
// float32 search.
func BenchmarkVectorSearch(b *testing.B) {
	for _, mix := range synthMixes {
		b.Run(mix.name, func(b *testing.B) { benchVectorSearch(b, mix) })
	}
}

func benchVectorSearch(b *testing.B, mix synthMix) {
	s, set, build := synthMillion(b, mix)
	b.Logf("%s: 1M x 384: index built in %v, %d MiB", mix.name, build.Round(time.Millisecond),
		(len(set.keys)*set.dim+4*len(set.scale)+8*len(set.codes)+8*len(set.keys))>>20)
	run := func(b *testing.B, search func(q []float32) []vecHit) {
		var lat []time.Duration
		var rec float64
		for i := 0; b.Loop(); i++ {
			qi := i % len(s.queries)
			start := time.Now()
			got := search(s.queries[qi])
			lat = append(lat, time.Since(start))
			rec += recall(s.truth[qi], got)
		}
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
		b.ReportMetric(rec/float64(len(lat)), "recall@10")
		b.ReportMetric(0, "ns/op")
	}
	b.Run("index", func(b *testing.B) {
		run(b, func(q []float32) []vecHit { return set.search(q, 10, nil) })
	})
	for _, share := range []float64{0.002, 0.005, 0.02} {
		b.Run(fmt.Sprintf("sign-keep-%.1f%%", share*100), func(b *testing.B) {
			run(b, func(q []float32) []vecHit {
				top := newTopK(10)
				for _, slot := range set.candidates(q, int(share*float64(len(set.keys)))) {
					top.push(vecHit{int(slot), set.scale[slot] * dotInt8(q, set.vec(int(slot)))})
				}
				return top.sorted()
			})
		})
	}
	b.Run("exact-int8", func(b *testing.B) {
		run(b, func(q []float32) []vecHit { return exactInt8(set, q, 10) })
	})
	spans := spanSet(s, 10)
	for _, probe := range []int{20, 100} {
		b.Run(fmt.Sprintf("coarse-to-fine-%d-spans", probe), func(b *testing.B) {
			run(b, func(q []float32) []vecHit {
				top := newTopK(10)
				for _, h := range spans.search(q, probe, nil) {
					for slot := h.slot * 10; slot < min(h.slot*10+10, len(set.keys)); slot++ {
						top.push(vecHit{slot, set.scale[slot] * dotInt8(q, set.vec(slot))})
					}
				}
				return top.sorted()
			})
		})
	}
}

// exactInt8 scans every vector's int8 cosine, in parallel.
func exactInt8(set *vecSet, q []float32, k int) []vecHit {
	shards := shardsFor(len(set.keys))
	tops := make([]*topK, len(shards))
	var wg sync.WaitGroup
	for si, sh := range shards {
		wg.Add(1)
		go func() {
			defer wg.Done()
			top := newTopK(k)
			for slot := sh[0]; slot < sh[1]; slot++ {
				top.push(vecHit{slot, set.scale[slot] * dotInt8(q, set.vec(slot))})
			}
			tops[si] = top
		}()
	}
	wg.Wait()
	all := newTopK(k)
	for _, t := range tops {
		for _, h := range t.h {
			all.push(h)
		}
	}
	return all.sorted()
}

// spanSet is the set of span vectors: the normalized mean of each run of
// `width` consecutive turns.
func spanSet(s *synthVectors, width int) *vecSet {
	spans := newVecSet(s.dim)
	mean := make([]float32, s.dim)
	for from := 0; from < len(s.vecs); from += width {
		clear(mean)
		for _, v := range s.vecs[from:min(from+width, len(s.vecs))] {
			for i, x := range v {
				mean[i] += x
			}
		}
		spans.add(int64(from/width), mean)
	}
	return spans
}
