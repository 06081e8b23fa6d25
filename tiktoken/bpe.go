package tiktoken

import (
	"math"
	"slices"
	"sync"
)

// noRank marks a pair of parts that do not form a token.
const noRank = math.MaxUint32

// heapThreshold is the piece length, in bytes, from which merge switches
// from the quadratic scan tiktoken uses to a heap. Both give the same parts.
const heapThreshold = 256

// merge byte-pair encodes piece, which must hold at least one byte, and
// returns the offsets at which its tokens start, followed by len(piece).
// Like tiktoken, it repeatedly merges the adjacent pair of parts that forms
// the lowest-ranked token, the leftmost one on ties.
func (v vocab) merge(piece string) []int {
	if len(piece) >= heapThreshold {
		return v.mergeHeap(piece)
	}
	return v.mergeScan(piece)
}

// rank returns the rank of piece[start:end], or noRank.
func (v vocab) rank(piece string, start, end int) uint32 {
	if r, ok := v[piece[start:end]]; ok {
		return r
	}
	return noRank
}

// mergeScan is tiktoken's _byte_pair_merge: parts[i] starts at offset
// starts[i], and ranks[i] is the rank of parts i and i+1 merged.
func (v vocab) mergeScan(piece string) []int {
	n := len(piece)
	starts := make([]int, n+1)
	ranks := make([]uint32, n+1)
	for i := range starts {
		starts[i] = i
		ranks[i] = noRank
	}
	for i := 0; i+2 <= n; i++ {
		ranks[i] = v.rank(piece, i, i+2)
	}
	// rankAfter returns the rank of parts i, i+1 and i+2 merged, which is
	// what parts i and i+1 would form once i+1 and i+2 are merged.
	rankAfter := func(i int) uint32 {
		if i+3 < len(starts) {
			return v.rank(piece, starts[i], starts[i+3])
		}
		return noRank
	}
	for {
		best, at := uint32(noRank), -1
		for i, r := range ranks[:len(ranks)-1] {
			if r < best {
				best, at = r, i
			}
		}
		if at < 0 {
			break
		}
		if at > 0 {
			ranks[at-1] = rankAfter(at - 1)
		}
		ranks[at] = rankAfter(at)
		starts = append(starts[:at+1], starts[at+2:]...)
		ranks = append(ranks[:at+1], ranks[at+2:]...)
	}
	return starts
}

// mergeHeap gives the same result as mergeScan in O(n log n), keeping the
// parts in a linked list and the candidate merges in a heap ordered by rank
// and then offset. Entries made stale by earlier merges are skipped.
func (v vocab) mergeHeap(piece string) []int {
	m := getMerger()
	defer putMerger(m)
	live := m.run(v, piece)
	starts := make([]int, 0, live)
	for i := 0; i <= len(piece); i = int(m.next[i]) {
		starts = append(starts, i)
	}
	return starts
}

// mergeCount returns the number of tokens piece byte-pair encodes to, as
// len(merge(piece))-1 would, without allocating for a long piece.
func (v vocab) mergeCount(piece string) int {
	if len(piece) < heapThreshold {
		return len(v.mergeScan(piece)) - 1
	}
	m := getMerger()
	defer putMerger(m)
	return m.run(v, piece) - 1
}

// merger holds the working memory of mergeHeap, kept in a pool and reused
// from piece to piece: a long run of text without spaces is merged in
// thousands of pieces, and allocating the lists and the heap afresh for
// each cost more than the merging and drove the garbage collector (a
// 16 MiB turn allocated 0.7 GB).
type merger struct {
	next, prev []int32
	h          pairHeap
}

var mergers = sync.Pool{New: func() any { return new(merger) }}

func getMerger() *merger { return mergers.Get().(*merger) }

// putMerger gives m back to the pool unless it grew for a piece far longer
// than MaxPiece (Encode merges whole pre-tokens), which would keep that
// memory for good.
func putMerger(m *merger) {
	if cap(m.next) <= 4*MaxPiece+1 {
		mergers.Put(m)
	}
}

// run merges piece and returns the number of parts left, whose start
// offsets are linked from 0 by m.next up to len(piece).
func (m *merger) run(v vocab, piece string) int {
	n := len(piece)
	if n >= math.MaxInt32 {
		panic("tiktoken: a pre-token of 2 GiB or more")
	}
	// Part boundaries are byte offsets; next and prev link the live ones.
	m.next = slices.Grow(m.next[:0], n+1)[:n+1]
	m.prev = slices.Grow(m.prev[:0], n+1)[:n+1]
	next, prev := m.next, m.prev
	for i := range next {
		next[i], prev[i] = int32(i+1), int32(i-1)
	}
	// pairRank returns the rank of the part at i merged with its successor.
	pairRank := func(i int32) uint32 {
		j := next[i]
		if int(j) >= n {
			return noRank
		}
		return v.rank(piece, int(i), int(next[j]))
	}
	h := m.h[:0]
	for i := 0; i+2 <= n; i++ {
		if r := v.rank(piece, i, i+2); r != noRank {
			h = append(h, pair{rank: r, start: int32(i), end: int32(i + 2)})
		}
	}
	h.init()
	live := n + 1
	for len(h) > 0 {
		p := h.pop()
		// Stale unless the part still starts at p.start and its successor
		// still ends at p.end.
		if prev[p.start] == -2 || int(next[p.start]) >= n || next[next[p.start]] != p.end {
			continue
		}
		// Merge: drop the boundary between the two parts.
		mid := next[p.start]
		next[p.start] = p.end
		prev[p.end] = p.start
		prev[mid] = -2
		live--
		if r := pairRank(p.start); r != noRank {
			h.push(pair{rank: r, start: p.start, end: next[next[p.start]]})
		}
		if q := prev[p.start]; q >= 0 {
			if r := pairRank(q); r != noRank {
				h.push(pair{rank: r, start: q, end: p.end})
			}
		}
	}
	m.h = h
	return live
}

// pair is a candidate merge of the part starting at start with its
// successor, which ends at end.
type pair struct {
	rank       uint32
	start, end int32
}

// pairHeap is a binary min-heap of pairs, ordered by rank and then
// offset. It is typed rather than container/heap's, which boxes every
// pair pushed or popped: an allocation per merge, which made merging a
// long pre-token several times slower.
type pairHeap []pair

func (h pairHeap) less(i, j int) bool {
	if h[i].rank != h[j].rank {
		return h[i].rank < h[j].rank
	}
	return h[i].start < h[j].start
}

func (h pairHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *pairHeap) push(p pair) {
	*h = append(*h, p)
	s := *h
	for i := len(s) - 1; i > 0; {
		parent := (i - 1) / 2
		if !s.less(i, parent) {
			break
		}
		s[i], s[parent] = s[parent], s[i]
		i = parent
	}
}

func (h *pairHeap) pop() pair {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	*h = s[:last]
	h.down(0)
	return top
}

func (h pairHeap) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && h.less(r, l) {
			m = r
		}
		if !h.less(m, i) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}
