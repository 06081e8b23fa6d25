package strata

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// cosine is the exact float64 cosine of two vectors.
func cosine(a, b []float32) float64 {
	var d, na, nb float64
	for i := range a {
		d += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return d / math.Sqrt(na*nb)
}

func randomVec(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

// A small set is searched exactly: the hits are the vectors of highest
// cosine, best first, with cosines within the int8 error.
func TestVecSetExact(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const dim, n = 48, 1000
	set := newVecSet(dim)
	vecs := make([][]float32, n)
	for i := range vecs {
		vecs[i] = randomVec(r, dim)
		// Unnormalized, with a scale: the set normalizes.
		for j := range vecs[i] {
			vecs[i][j] *= float32(1 + i%5)
		}
		set.add(int64(100+i), vecs[i])
	}
	for range 20 {
		q := randomVec(r, dim)
		got := set.search(normalize(q), 10, nil)
		if len(got) != 10 {
			t.Fatalf("%d hits, want 10", len(got))
		}
		order := make([]int, n)
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, b int) int {
			ca, cb := cosine(q, vecs[a]), cosine(q, vecs[b])
			switch {
			case ca > cb:
				return -1
			case ca < cb:
				return 1
			}
			return 0
		})
		found := 0
		for i, h := range got {
			if i > 0 && h.score > got[i-1].score {
				t.Fatalf("hits not best first: %v", got)
			}
			if set.keys[h.slot] != int64(100+h.slot) {
				t.Fatalf("slot %d has key %d", h.slot, set.keys[h.slot])
			}
			if d := math.Abs(float64(h.score) - cosine(q, vecs[h.slot])); d > 0.01 {
				t.Fatalf("cosine of slot %d = %v, exact %v", h.slot, h.score, cosine(q, vecs[h.slot]))
			}
			if slices.Contains(order[:10], h.slot) {
				found++
			}
		}
		if found < 9 {
			t.Fatalf("found %d of the exact top 10", found)
		}
	}
}

// A big set takes the sign-bit stage: on clustered data it keeps the
// exact top 10 among its candidates.
func TestVecSetCandidates(t *testing.T) {
	s := newSynthVectors(3*rerankMin, 96, 20, synthMixes[1], 5)
	set := newVecSet(96)
	for i, v := range s.vecs {
		set.add(int64(i), v)
	}
	var rec float64
	for qi, q := range s.queries {
		cands := set.candidates(q, 300)
		if len(cands) != 300 {
			t.Fatalf("candidates(300) = %d slots", len(cands))
		}
		got := set.search(q, 10, nil)
		rec += recall(s.truth[qi], got)
	}
	if rec /= float64(len(s.queries)); rec < 0.95 {
		t.Fatalf("recall@10 through the sign stage = %.3f, want >= 0.95", rec)
	}
	if set.meanAt < set.live/2 {
		t.Fatalf("mean taken at %d of %d vectors: it should be recentred as the set doubles", set.meanAt, set.live)
	}
}

// Removed and zero vectors are never hits; keep filters.
func TestVecSetRemoveZeroKeep(t *testing.T) {
	set := newVecSet(4)
	a := set.add(1, []float32{1, 0, 0, 0})
	b := set.add(2, []float32{0.9, 0.1, 0, 0})
	set.add(3, []float32{0, 0, 0, 0})
	c := set.add(4, []float32{0, 1, 0, 0})
	q := normalize([]float32{1, 0, 0, 0})
	slots := func(hs []vecHit) []int {
		var out []int
		for _, h := range hs {
			out = append(out, h.slot)
		}
		return out
	}
	if got := slots(set.search(q, 10, nil)); !slices.Equal(got, []int{a, b, c}) {
		t.Fatalf("hits = %v, want %v (no zero vector)", got, []int{a, b, c})
	}
	set.remove(a)
	set.remove(a)
	if got := slots(set.search(q, 10, nil)); !slices.Equal(got, []int{b, c}) || set.len() != 3 {
		t.Fatalf("after removing %d: hits %v, len %d; want [%d %d] and 3", a, got, set.len(), b, c)
	}
	if got := slots(set.search(q, 10, func(slot int) bool { return slot != b })); !slices.Equal(got, []int{c}) {
		t.Fatalf("hits kept = %v, want [%d]", got, c)
	}
}

func TestTopKTies(t *testing.T) {
	top := newTopK(3)
	for _, h := range []vecHit{{5, 0.5}, {1, 0.5}, {9, 0.9}, {3, 0.5}, {2, 0.1}} {
		top.push(h)
	}
	if got := top.sorted(); !slices.Equal(got, []vecHit{{9, 0.9}, {1, 0.5}, {3, 0.5}}) {
		t.Fatalf("top 3 = %v", got)
	}
}

func TestSetBit(t *testing.T) {
	var b []uint64
	for _, i := range []int64{0, 63, 64, 1000} {
		if !setBit(&b, i) {
			t.Fatalf("setBit(%d) on a clear bit = false", i)
		}
	}
	for _, i := range []int64{0, 63, 64, 1000} {
		if setBit(&b, i) {
			t.Fatalf("setBit(%d) on a set bit = true", i)
		}
	}
	if !setBit(&b, 1) {
		t.Fatal("setBit(1) = false")
	}
}

// The cache drops the least recently searched indexes past its bound,
// never those of the search under way.
func TestIndexCacheTrim(t *testing.T) {
	c := indexCache{maxVectors: 25}
	space := EmbedSpace{Model: "m", Dim: 2}
	fill := func(ix *convIndex, n int) {
		ix.turns = newVecSet(2)
		for i := range n {
			ix.turns.add(int64(i+1), []float32{1, float32(i)})
		}
	}
	for i, conv := range []string{"a", "b", "c"} {
		fill(c.get(conv, space, c.next()), 10+i)
	}
	// a (10), b (11), c (12): 33 > 25, and a is the oldest.
	c.trim(c.tick)
	if _, ok := c.m["a"]; ok || len(c.m) != 2 {
		t.Fatalf("after trimming: %d indexes, a kept %v; want b and c", len(c.m), ok)
	}
	// One search over b and c, 23 vectors, then d alone with 30: b and c
	// go, d stays though it is over the bound alone.
	tick := c.next()
	fill(c.get("d", space, tick), 30)
	c.trim(tick)
	if _, ok := c.m["d"]; !ok || len(c.m) != 1 {
		t.Fatalf("after a search of a big conversation: %d indexes, d kept %v; want d alone", len(c.m), ok)
	}
	// Another space replaces the index.
	if ix := c.get("d", EmbedSpace{Model: "other"}, c.next()); ix.size() != 0 {
		t.Fatal("an index of another model was reused")
	}
}

// A set reserved for n vectors takes them without moving its arrays, and
// answers as one that grew by appending. n spans several value blocks.
func TestVecSetReserve(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const n, dim = 2*valBlock + 5000, 12
	vs := make([][]float32, n)
	for i := range vs {
		vs[i] = randomVec(r, dim)
	}
	grown, reserved := newVecSet(dim), newVecSet(dim)
	reserved.reserve(n)
	codes := &reserved.codes[:1][0]
	var blocks []*int8
	for _, s := range []*vecSet{grown, reserved} {
		s.beginBulk()
		for i, v := range vs {
			s.add(int64(i), v)
			if s == reserved && i%valBlock == 0 {
				blocks = append(blocks, &s.vals[i/valBlock][:1][0])
			}
		}
		s.endBulk()
	}
	if &reserved.codes[0] != codes {
		t.Fatal("a reserved set moved its codes while taking the vectors it was reserved for")
	}
	for _, s := range []*vecSet{grown, reserved} {
		if len(s.vals) != 3 || len(s.vals[0]) != valBlock*dim || len(s.vals[1]) != valBlock*dim || len(s.vals[2]) != 5000*dim {
			t.Fatalf("value blocks of %d, want 3: two full, one of 5000 vectors", len(s.vals))
		}
	}
	for i, b := range blocks {
		if &reserved.vals[i][0] != b || cap(reserved.vals[i]) != len(reserved.vals[i]) {
			t.Fatalf("value block %d of the reserved set moved, or was sized past what was reserved", i)
		}
	}
	for i, v := range vs { // every vector reads back as its own
		if got := float64(reserved.scale[i] * dotInt8(normalize(v), reserved.vec(i))); math.Abs(got-1) > 0.02 {
			t.Fatalf("vector %d: cosine with itself %v through its block", i, got)
		}
	}
	for q := range 20 {
		query := normalize(randomVec(r, dim))
		a, b := grown.search(query, 10, nil), reserved.search(query, 10, nil)
		if !slices.Equal(a, b) {
			t.Fatalf("query %d: grown %v, reserved %v", q, a, b)
		}
	}
}
