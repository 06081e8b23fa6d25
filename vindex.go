package strata

import (
	"context"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"sort"
	"sync"
)

// vecSet is an in-memory set of vectors of one dimension, searched by
// cosine similarity. Each vector is kept twice, compactly:
//
//   - int8, scaled per vector (dim bytes + 4): cosines from these are
//     within about 0.01 of the float32 ones;
//   - one sign bit per dimension of the vector minus the set's mean (dim/8
//     bytes): a 384-dimension vector is six 64-bit words, compared with
//     XOR and POPCNT.
//
// A search over more than rerankMin vectors first ranks all of them by the
// Hamming distance of their sign bits to the query's (parallel over
// GOMAXPROCS), keeps the best candidates, and reranks those by their int8
// cosine; a smaller set is ranked by int8 cosine outright, exactly. At a
// million vectors of dimension 384 this answers in under 10 ms on two
// cores, where an exact int8 scan takes 80 to 150 (see
// BenchmarkVectorSearch and README "Embeddings and hybrid search" for the
// figures and the recall the candidate stage costs).
//
// Vectors are normalized on insert; a zero vector is kept but never
// returned. Keys are the caller's (a turn's seq, or a node's slot).
// vecSet is not safe for concurrent use; vecIndex guards it.
type vecSet struct {
	dim, words int
	keys       []int64
	vals       [][]int8  // dim values per vector, valBlock vectors per block (the last may hold fewer)
	want       int       // the length reserve expects, which sizes new blocks
	scale      []float32 // per vector: cosine = scale * dot(query, vals)
	codes      []uint64  // len(keys) * words
	dead       []bool    // removed (replaced) vectors
	ndead      int
	// mean centres the sign bits; it is recomputed (and the codes with
	// it) each time the set doubles, so that its bits stay informative.
	mean       []float32
	meanAt     int
	sum        []float64 // of the normalized vectors, for the next mean
	live, zero int
	sampled    int  // vectors in sum
	bulk       bool // sign bits wait for endBulk
}

// rerankMin is the size below which a search is exact; it is also the
// least number of candidates the sign stage keeps.
const rerankMin = 4096

// rerankShare is the share of a big set kept as candidates for the int8
// rerank (1% of a million: ten thousand).
const rerankShare = 0.01

func newVecSet(dim int) *vecSet {
	return &vecSet{dim: dim, words: (dim + 63) / 64, mean: make([]float32, dim), sum: make([]float64, dim)}
}

func (s *vecSet) len() int { return len(s.keys) - s.ndead }

// reserve makes room for n more vectors, so that a bulk load of a known
// size copies nothing as it grows (at a million vectors, growing by
// append copied the int8 values about four times over).
func (s *vecSet) reserve(n int) {
	if n <= 0 {
		return
	}
	s.keys = reserveRoom(s.keys, n)
	s.dead = reserveRoom(s.dead, n)
	s.scale = reserveRoom(s.scale, n)
	s.codes = reserveRoom(s.codes, n*s.words)
	s.want = len(s.keys) + n
}

// valBlock is how many vectors' int8 values a block holds. The values are
// most of an index's memory (384 MB for a million vectors of dimension
// 384); in blocks, they are never copied as the set grows, and a load
// allocates and clears them a few megabytes at a time as it goes, on the
// goroutine that fills them, in parallel with the store's read.
const valBlock = 1 << 14

// vec returns the int8 values of slot.
func (s *vecSet) vec(slot int) []int8 {
	b, i := s.vals[slot/valBlock], (slot%valBlock)*s.dim
	return b[i : i+s.dim : i+s.dim]
}

// grow appends room for one more vector's values and returns it. Every
// block but the last is full; a new block has room for what reserve
// expects, up to valBlock vectors, or grows by appending if nothing was
// reserved.
func (s *vecSet) grow() []int8 {
	last := len(s.vals) - 1
	if last < 0 || len(s.vals[last]) == valBlock*s.dim {
		n := min(valBlock, max(s.want-len(s.keys), 0))
		s.vals = append(s.vals, make([]int8, 0, n*s.dim))
		last++
	}
	b := slices.Grow(s.vals[last], s.dim)
	b = b[:len(b)+s.dim]
	s.vals[last] = b
	return b[len(b)-s.dim:]
}

// reserveRoom returns xs with room for n more elements. Unlike
// slices.Grow, it makes the new array with make, whose clearing of a big
// array is preemptible and skipped for memory fresh from the system:
// slices.Grow clears the room it adds in one call the garbage collector
// cannot interrupt. For the int8 values of a million vectors, before they
// went into blocks, that call took 1.5 s of one core while the collector
// spun on the other, waiting to stop it.
func reserveRoom[T any](xs []T, n int) []T {
	if cap(xs)-len(xs) >= n {
		return xs
	}
	out := make([]T, len(xs), len(xs)+n)
	copy(out, xs)
	return out
}

// add appends v (of s.dim values) under key and returns its slot.
func (s *vecSet) add(key int64, v []float32) int {
	slot := len(s.keys)
	q := s.grow()
	s.keys = append(s.keys, key)
	s.dead = append(s.dead, false)
	s.codes = slices.Grow(s.codes, s.words)[:len(s.codes)+s.words]
	var norm float64
	var maxAbs float32
	for _, x := range v {
		norm += float64(x) * float64(x)
		// Not the builtin max, whose NaN and signed-zero rules cost
		// tenfold here; the store has no NaN.
		if a := math.Float32frombits(math.Float32bits(x) &^ (1 << 31)); a > maxAbs {
			maxAbs = a
		}
	}
	norm = math.Sqrt(norm)
	if norm == 0 || maxAbs == 0 {
		clear(q)
		clear(s.codes[slot*s.words:])
		s.scale = append(s.scale, 0)
		s.zero++
		return slot
	}
	// q = round(v / maxAbs * 127); cosine(query, v) = dot(query, q) *
	// maxAbs / 127 / norm for a normalized query.
	k := 127 / maxAbs
	for i, x := range v {
		q[i] = int8(roundHalfAway(x * k))
	}
	s.scale = append(s.scale, float32(float64(maxAbs)/127/norm))
	// The mean is taken over a sample: all of the first vectors, then one
	// in sampleEvery.
	if s.live < 4096 || s.live%sampleEvery == 0 {
		inv := 1 / norm
		for i, x := range v {
			s.sum[i] += float64(x) * inv
		}
		s.sampled++
	}
	s.live++
	switch {
	case s.bulk:
		// encoded by endBulk
	case s.live >= 2*s.meanAt && s.live >= 64:
		s.recentre()
	default:
		s.encode(slot)
	}
	return slot
}

// sampleEvery is how sparsely the mean samples a big set.
const sampleEvery = 16

// roundHalfAway rounds x to the nearest integer, halves away from zero,
// without a branch: it adds 0.5 with the sign of x and truncates.
func roundHalfAway(x float32) int32 {
	half := math.Float32frombits(math.Float32bits(x)&(1<<31) | math.Float32bits(0.5))
	return int32(x + half)
}

// beginBulk defers the sign bits of the vectors added until endBulk,
// which centres them once on the mean of them all.
func (s *vecSet) beginBulk() { s.bulk = true }

func (s *vecSet) endBulk() {
	s.bulk = false
	if s.live > 0 {
		s.recentre()
	}
}

// remove marks slot as removed: it is never returned again.
func (s *vecSet) remove(slot int) {
	if s.dead[slot] {
		return
	}
	s.dead[slot] = true
	s.ndead++
}

// recentre sets the mean to that of the vectors added so far and encodes
// every vector's sign bits against it.
func (s *vecSet) recentre() {
	for i := range s.mean {
		s.mean[i] = float32(s.sum[i] / float64(s.sampled))
	}
	s.meanAt = s.live
	// Each slot's bits are its own: a big set is encoded on every core.
	var wg sync.WaitGroup
	for _, sh := range shardsFor(len(s.keys)) {
		wg.Go(func() {
			for slot := sh[0]; slot < sh[1]; slot++ {
				s.encode(slot)
			}
		})
	}
	wg.Wait()
}

// encode sets the sign bits of slot: bit i is set when the vector's
// component i is above the mean's. The bits are built in a register, and
// without a branch (the sign bit of mean - value), since the comparisons
// of real vectors are coin tosses a branch predictor loses.
func (s *vecSet) encode(slot int) {
	code := s.codes[slot*s.words : (slot+1)*s.words]
	sc := s.scale[slot]
	if sc == 0 {
		clear(code)
		return
	}
	vals := s.vec(slot)
	mean := s.mean[:len(vals)]
	for w := range code {
		lo, hi := w*64, min(w*64+64, len(vals))
		var word uint64
		for i := lo; i < hi; i++ {
			word |= uint64(math.Float32bits(mean[i]-float32(vals[i])*sc)>>31) << (i - lo)
		}
		code[w] = word
	}
}

// vecHit is a slot and its cosine to the query.
type vecHit struct {
	slot  int
	score float32
}

// search returns up to k slots best first by cosine to the normalized
// query q, skipping removed and zero vectors and those keep rejects (keep
// may be nil).
func (s *vecSet) search(q []float32, k int, keep func(slot int) bool) []vecHit {
	n := len(s.keys)
	if n == 0 || k <= 0 {
		return nil
	}
	cands := s.candidates(q, max(rerankMin, int(rerankShare*float64(n)), 4*k))
	top := newTopK(k)
	score := func(slot int) {
		if s.dead[slot] || s.scale[slot] == 0 || keep != nil && !keep(slot) {
			return
		}
		top.push(vecHit{slot, s.scale[slot] * dotInt8(q, s.vec(slot))})
	}
	if cands == nil {
		for slot := range n {
			score(slot)
		}
	} else {
		for _, slot := range cands {
			score(int(slot))
		}
	}
	return top.sorted()
}

// candidates returns the r slots whose sign bits are nearest the query's
// (ties at the cut included), or nil if the set holds no more than r
// vectors (then every slot is a candidate).
func (s *vecSet) candidates(q []float32, r int) []int32 {
	n := len(s.keys)
	if n <= r {
		return nil
	}
	qc := make([]uint64, s.words)
	for i, x := range q {
		if x > s.mean[i] {
			qc[i/64] |= 1 << (i % 64)
		}
	}
	dist := make([]uint16, n)
	shards := shardsFor(n)
	hists := make([][]int, len(shards))
	var wg sync.WaitGroup
	for si, sh := range shards {
		wg.Add(1)
		go func() {
			defer wg.Done()
			hists[si] = hamming(s.codes, qc, s.words, sh[0], sh[1], dist)
		}()
	}
	wg.Wait()
	hist := hists[0]
	for _, h := range hists[1:] {
		for d, c := range h {
			hist[d] += c
		}
	}
	// The cut: the smallest distance at which r slots are reached.
	cut, seen := 0, 0
	for cut < len(hist) && seen+hist[cut] < r {
		seen += hist[cut]
		cut++
	}
	// Every slot nearer than the cut, and the first ones at it up to r.
	atCut := r - seen
	out := make([]int32, 0, r)
	for slot, d := range dist {
		switch {
		case int(d) < cut:
			out = append(out, int32(slot))
		case int(d) == cut && atCut > 0:
			out = append(out, int32(slot))
			atCut--
		}
	}
	return out
}

// hamming writes the Hamming distance of each code in [from, to) to the
// query's into dist and returns the histogram of those distances.
func hamming(codes, qc []uint64, words, from, to int, dist []uint16) []int {
	hist := make([]int, words*64+1)
	switch words {
	case 6: // dimension 321..384, the most common: unrolled
		q0, q1, q2, q3, q4, q5 := qc[0], qc[1], qc[2], qc[3], qc[4], qc[5]
		for slot := from; slot < to; slot++ {
			c := codes[slot*6 : slot*6+6 : slot*6+6]
			d := bits.OnesCount64(c[0]^q0) + bits.OnesCount64(c[1]^q1) + bits.OnesCount64(c[2]^q2) +
				bits.OnesCount64(c[3]^q3) + bits.OnesCount64(c[4]^q4) + bits.OnesCount64(c[5]^q5)
			dist[slot] = uint16(d)
			hist[d]++
		}
	default:
		for slot := from; slot < to; slot++ {
			c := codes[slot*words : (slot+1)*words]
			d := 0
			for i, w := range c {
				d += bits.OnesCount64(w ^ qc[i])
			}
			dist[slot] = uint16(d)
			hist[d]++
		}
	}
	return hist
}

// shardsFor splits [0, n) into one range per processor (one range when n
// is small enough that goroutines would cost more than they save).
func shardsFor(n int) [][2]int {
	p := runtime.GOMAXPROCS(0)
	if n < 1<<15 || p < 2 {
		return [][2]int{{0, n}}
	}
	out := make([][2]int, 0, p)
	for i := range p {
		out = append(out, [2]int{i * n / p, (i + 1) * n / p})
	}
	return out
}

// dotInt8 is the dot product of a float32 vector and an int8 one of the
// same length.
func dotInt8(q []float32, v []int8) float32 {
	v = v[:len(q)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(q); i += 4 {
		s0 += q[i] * float32(v[i])
		s1 += q[i+1] * float32(v[i+1])
		s2 += q[i+2] * float32(v[i+2])
		s3 += q[i+3] * float32(v[i+3])
	}
	for ; i < len(q); i++ {
		s0 += q[i] * float32(v[i])
	}
	return s0 + s1 + s2 + s3
}

// normalize returns v scaled to unit length (a new slice), or nil for a
// zero vector.
func normalize(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 {
		return nil
	}
	k := float32(1 / math.Sqrt(n))
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = x * k
	}
	return out
}

// topK keeps the k best hits seen (a min-heap on score, ties broken by
// slot so that results are deterministic).
type topK struct {
	k int
	h []vecHit
}

func newTopK(k int) *topK { return &topK{k: k, h: make([]vecHit, 0, k)} }

// worse reports whether a ranks below b.
func worse(a, b vecHit) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	return a.slot > b.slot
}

func (t *topK) push(x vecHit) {
	if len(t.h) < t.k {
		t.h = append(t.h, x)
		for i := len(t.h) - 1; i > 0; {
			p := (i - 1) / 2
			if !worse(t.h[i], t.h[p]) {
				break
			}
			t.h[i], t.h[p] = t.h[p], t.h[i]
			i = p
		}
		return
	}
	if !worse(t.h[0], x) {
		return
	}
	t.h[0] = x
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(t.h) && worse(t.h[l], t.h[m]) {
			m = l
		}
		if r < len(t.h) && worse(t.h[r], t.h[m]) {
			m = r
		}
		if m == i {
			break
		}
		t.h[i], t.h[m] = t.h[m], t.h[i]
		i = m
	}
}

// sorted returns the hits best first.
func (t *topK) sorted() []vecHit {
	out := append([]vecHit(nil), t.h...)
	sort.Slice(out, func(i, j int) bool { return worse(out[j], out[i]) })
	return out
}

// convIndex is the vector index of one conversation in one space: its
// turns' vectors and its nodes' vectors, loaded from the store on first
// use and brought up to date before each search by what the store's
// VectorVersion says changed (new vectors are streamed in; a removal
// reloads the part it touched).
type convIndex struct {
	conv string

	load sync.Mutex // one refresh at a time

	mu     sync.RWMutex // searches read; a refresh swaps or appends under it
	loaded bool
	space  EmbedSpace
	ver    VectorVersion
	turns  *vecSet  // keys: turn seqs
	seen   []uint64 // bit per turn seq with a vector in turns
	nodes  *vecSet  // keys: index into refs
	refs   []nodeVec
	slotOf map[string]int // node id -> its slot in nodes
	used   uint64         // the cache's tick when last searched
}

// nodeVec is what the index keeps of a node besides its vector.
type nodeVec struct {
	EmbedRef
	LastSeq int64
}

func newConvIndex(conv string, space EmbedSpace) *convIndex {
	return &convIndex{conv: conv, space: space}
}

// refresh brings the index up to version v of the store.
func (ix *convIndex) refresh(ctx context.Context, st Store, ns string, v VectorVersion) error {
	ix.load.Lock()
	defer ix.load.Unlock()
	ix.mu.RLock()
	loaded, have := ix.loaded, ix.ver
	ix.mu.RUnlock()
	if loaded && v == have {
		return nil
	}
	reloadTurns := !loaded || v.TurnsRemoved > have.Version
	reloadNodes := !loaded || v.NodesRemoved > have.Version
	f := VectorFilter{Namespace: ns, Conversation: ix.conv, Space: ix.space}

	// Reloaded parts are built aside, so that searches go on meanwhile.
	var turns, nodes *vecSet
	var seen []uint64
	var refs []nodeVec
	slotOf := map[string]int{}
	dim := ix.space.Dim
	accept := func(x Vector) bool {
		if dim == 0 {
			dim = x.Dim // the model's dimension, learnt from its first vector
		}
		return x.Dim == dim
	}
	var err error
	if reloadTurns {
		if turns, seen, err = loadTurnVecs(ctx, st, f, accept); err != nil {
			return err
		}
	}
	if reloadNodes {
		if nodes, refs, slotOf, err = loadNodeVecs(ctx, st, f, accept); err != nil {
			return err
		}
	}
	// New vectors of the parts kept are streamed in, copied, and added
	// under the write lock.
	var fresh []Vector
	if !reloadTurns || !reloadNodes {
		f := f
		f.Since = have.Version
		if reloadTurns {
			f.Kind = KindSummary
		} else if reloadNodes {
			f.Kind = KindTurn
		}
		if fresh, err = copyVectors(ctx, st, f, accept); err != nil {
			return err
		}
	}

	ix.mu.Lock()
	defer ix.mu.Unlock()
	if reloadTurns {
		ix.turns, ix.seen = turns, seen
	}
	if reloadNodes {
		ix.nodes, ix.refs, ix.slotOf = nodes, refs, slotOf
	}
	ix.addFresh(fresh, dim)
	ix.space.Dim = dim
	ix.ver, ix.loaded = v, true
	return nil
}

// loadTurnVecs reads the turn vectors f selects that accept takes into a
// new set (nil if none), with the bitmap of their seqs.
func loadTurnVecs(ctx context.Context, st Store, f VectorFilter, accept func(Vector) bool) (*vecSet, []uint64, error) {
	f.Kind = KindTurn
	n := countVectors(ctx, st, f)
	var turns *vecSet
	var seen []uint64
	err := stream(ctx, st, f, accept, func(x Vector) {
		if turns == nil {
			turns = newVecSet(len(x.Values))
			turns.reserve(n)
			turns.beginBulk()
		}
		if setBit(&seen, x.Seq) {
			turns.add(x.Seq, x.Values)
		}
	})
	if err != nil {
		return nil, nil, err
	}
	if turns != nil {
		turns.endBulk()
	}
	return turns, seen, nil
}

// loadNodeVecs reads the summary vectors f selects that accept takes into
// a new set (nil if none), with what the index keeps of each node and the
// slot of each node's vector. A node's later vector replaces its earlier.
func loadNodeVecs(ctx context.Context, st Store, f VectorFilter, accept func(Vector) bool) (*vecSet, []nodeVec, map[string]int, error) {
	f.Kind = KindSummary
	n := countVectors(ctx, st, f)
	refs := make([]nodeVec, 0, n)
	slotOf := make(map[string]int, n)
	var nodes *vecSet
	err := stream(ctx, st, f, accept, func(x Vector) {
		if nodes == nil {
			nodes = newVecSet(len(x.Values))
			nodes.reserve(n)
			nodes.beginBulk()
		}
		if old, ok := slotOf[x.Node]; ok {
			nodes.remove(old)
		}
		slotOf[x.Node] = nodes.add(int64(len(refs)), x.Values)
		refs = append(refs, nodeVec{x.EmbedRef, x.LastSeq})
	})
	if err != nil {
		return nil, nil, nil, err
	}
	if nodes != nil {
		nodes.endBulk()
	}
	return nodes, refs, slotOf, nil
}

// copyVectors returns copies of the vectors f selects that accept takes.
func copyVectors(ctx context.Context, st Store, f VectorFilter, accept func(Vector) bool) ([]Vector, error) {
	var out []Vector
	err := st.Vectors(ctx, f, func(x Vector) error {
		if accept(x) {
			x.Values = append([]float32(nil), x.Values...)
			out = append(out, x)
		}
		return nil
	})
	return out, err
}

// addFresh adds vectors of dimension dim read since the index's version;
// the caller holds ix.mu for writing.
func (ix *convIndex) addFresh(fresh []Vector, dim int) {
	for _, x := range fresh {
		if x.Node == "" {
			if ix.turns == nil {
				ix.turns = newVecSet(dim)
			}
			if setBit(&ix.seen, x.Seq) {
				ix.turns.add(x.Seq, x.Values)
			}
			continue
		}
		if ix.nodes == nil {
			ix.nodes = newVecSet(dim)
		}
		if old, ok := ix.slotOf[x.Node]; ok {
			ix.nodes.remove(old)
		}
		ix.slotOf[x.Node] = ix.nodes.add(int64(len(ix.refs)), x.Values)
		ix.refs = append(ix.refs, nodeVec{x.EmbedRef, x.LastSeq})
	}
}

// countVectors is how many vectors f selects if the store can count them
// cheaply (a VectorCounter), else 0. It is a sizing hint: vectors written
// between the count and the read are still read.
func countVectors(ctx context.Context, st Store, f VectorFilter) int {
	c, ok := st.(VectorCounter)
	if !ok {
		return 0
	}
	n, err := c.CountVectors(ctx, f)
	if err != nil {
		return 0
	}
	return n
}

// stream reads the vectors f selects that accept takes and hands them to
// add on another goroutine, in chunks, so that reading the store and
// quantizing overlap. add sees the vectors in the store's order.
func stream(ctx context.Context, st Store, f VectorFilter, accept func(Vector) bool, add func(Vector)) error {
	const chunkLen = 1024
	type chunk struct {
		xs   []Vector
		vals []float32 // the chunk's values, which xs' Values share
	}
	ch := make(chan chunk, 2)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for c := range ch {
			for _, x := range c.xs {
				add(x)
			}
		}
	}()
	var cur chunk
	err := st.Vectors(ctx, f, func(x Vector) error {
		if !accept(x) {
			return nil
		}
		if cur.vals == nil {
			cur.vals = make([]float32, 0, chunkLen*len(x.Values))
			cur.xs = make([]Vector, 0, chunkLen)
		}
		at := len(cur.vals)
		cur.vals = append(cur.vals, x.Values...)
		x.Values = cur.vals[at:len(cur.vals):len(cur.vals)]
		cur.xs = append(cur.xs, x)
		if len(cur.xs) == chunkLen {
			ch <- cur
			cur = chunk{}
		}
		return nil
	})
	if len(cur.xs) > 0 {
		ch <- cur
	}
	close(ch)
	<-done
	return err
}

// setBit sets bit i of *b, growing it, and reports whether it was clear.
func setBit(b *[]uint64, i int64) bool {
	w := int(i / 64)
	if w >= len(*b) {
		*b = append(*b, make([]uint64, w+1-len(*b)+len(*b)/4)...)
	}
	if (*b)[w]&(1<<(i%64)) != 0 {
		return false
	}
	(*b)[w] |= 1 << (i % 64)
	return true
}

// size is the number of live vectors in the index.
func (ix *convIndex) size() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	n := 0
	if ix.turns != nil {
		n += ix.turns.len() - ix.turns.zero
	}
	if ix.nodes != nil {
		n += ix.nodes.len() - ix.nodes.zero
	}
	return n
}

// vectorHit is a turn or node found by its vector.
type vectorHit struct {
	ref     EmbedRef
	lastSeq int64
	score   float32 // cosine
}

// search returns up to k turns and up to k nodes (as kind allows) best
// first by cosine to the normalized query q.
func (ix *convIndex) search(q []float32, k int, kind string) []vectorHit {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	var out []vectorHit
	if ix.turns != nil && kind != KindSummary && len(q) == ix.turns.dim {
		for _, h := range ix.turns.search(q, k, nil) {
			seq := ix.turns.keys[h.slot]
			out = append(out, vectorHit{EmbedRef{Seq: seq}, seq, h.score})
		}
	}
	if ix.nodes != nil && kind != KindTurn && len(q) == ix.nodes.dim {
		for _, h := range ix.nodes.search(q, k, nil) {
			r := ix.refs[ix.nodes.keys[h.slot]]
			out = append(out, vectorHit{r.EmbedRef, r.LastSeq, h.score})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].score > out[j].score })
	return out
}

// indexCache holds the vector indexes of the conversations searched
// lately, up to maxVectors vectors in all.
type indexCache struct {
	mu         sync.Mutex
	maxVectors int
	m          map[string]*convIndex
	tick       uint64 // one per search
}

// next returns a new tick: the indexes a search gets with it are its own.
func (c *indexCache) next() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tick++
	return c.tick
}

// get returns the index of conv in space, creating it (unloaded) if need
// be; an index of another space is replaced.
func (c *indexCache) get(conv string, space EmbedSpace, tick uint64) *convIndex {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]*convIndex{}
	}
	ix, ok := c.m[conv]
	if ok && ix.space.Model == space.Model && (space.Dim == 0 || ix.sameDim(space.Dim)) {
		ix.used = tick
		return ix
	}
	ix = newConvIndex(conv, space)
	ix.used = tick
	c.m[conv] = ix
	return ix
}

// trim drops the least recently used indexes while the cache holds more
// than maxVectors vectors, keeping those of tick (the conversations of
// the search under way).
func (c *indexCache) trim(tick uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	total := 0
	var old []*convIndex
	for _, ix := range c.m {
		total += ix.size()
		if ix.used < tick {
			old = append(old, ix)
		}
	}
	sort.Slice(old, func(i, j int) bool { return old[i].used < old[j].used })
	for _, ix := range old {
		if total <= c.maxVectors {
			return
		}
		total -= ix.size()
		delete(c.m, ix.conv)
	}
}

// sameDim reports whether the index holds vectors of dimension d (or has
// not learnt its dimension yet).
func (ix *convIndex) sameDim(d int) bool {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.space.Dim == 0 || ix.space.Dim == d
}

// drop forgets the index of conv, whose conversation was deleted: a
// conversation created again with its id starts its vector versions anew,
// so the old index must not be taken for a current one.
func (c *indexCache) drop(conv string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, conv)
}
