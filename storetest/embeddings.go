package storetest

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-memory/strata"
)

// Embeddings: the conformance tests of Unembedded, PutEmbeddings,
// Vectors, VectorVersion, DeleteEmbeddings and VectorCounts. They pin:
//
//   - Unembedded lists turns (their whole Text, whatever their tier) then
//     nodes (their summary) in EmbedRef order, pages with After and Limit,
//     filters by Kind, and leaves out expired turns and pending nodes; a
//     space of dimension 0 counts a vector of the model in any dimension.
//   - PutEmbeddings keeps one vector per item and model (putting again
//     replaces it, in any dimension), stores values bit for bit, and
//     rejects bad input as EINVALID naming the field, storing nothing.
//   - Vectors streams what was put, with refs, dimension, version and a
//     node's last seq; Since keeps what later puts wrote; fn's error stops
//     it.
//   - VectorVersion grows with each put and records removals: a node's
//     vector goes when its summary changes or ResetPyramid removes it,
//     and DeleteEmbeddings removes the vectors outside the space kept.
//   - VectorCounts counts embeddable turns (not expired) and nodes (not
//     pending) and the vectors per space; every method is ENOTFOUND for an
//     unknown conversation, and nothing crosses namespaces.

var (
	spaceA  = strata.EmbedSpace{Model: "model-a", Dim: 4}
	spaceA8 = strata.EmbedSpace{Model: "model-a", Dim: 8}
	spaceB  = strata.EmbedSpace{Model: "model-b", Dim: 4}
)

// vecFor is a vector of dimension d whose values tell the item apart and
// include values a lossy store would change: a negative zero, a
// subnormal, and values that need all 32 bits.
func vecFor(r strata.EmbedRef, d int) []float32 {
	v := make([]float32, d)
	for i := range v {
		v[i] = float32(r.Level*1000) + float32(r.Seq) + float32(i)/3
	}
	v[0] = float32(math.Copysign(0, -1))
	if d > 1 {
		v[1] = math.SmallestNonzeroFloat32 * float32(1+r.Seq%7)
	}
	if d > 2 {
		v[2] = -math.MaxFloat32 / float32(1+r.Level)
	}
	return v
}

// embedAll lists everything without a vector in space and puts a vector
// for each, in one call; it returns the sources listed.
func embedAll(t *testing.T, s strata.Store, ns, conv string, space strata.EmbedSpace) []strata.EmbedSource {
	t.Helper()
	srcs, err := s.Unembedded(ctx(t), strata.EmbedFilter{Namespace: ns, Conversation: conv, Space: space, Limit: 10000})
	if err != nil {
		t.Fatalf("Unembedded(%v): %v", space, err)
	}
	es := make([]strata.Embedding, len(srcs))
	for i, src := range srcs {
		es[i] = strata.Embedding{EmbedRef: src.EmbedRef, Vector: vecFor(src.EmbedRef, space.Dim)}
	}
	if err := s.PutEmbeddings(ctx(t), ns, conv, space, es); err != nil {
		t.Fatalf("PutEmbeddings(%v, %d): %v", space, len(es), err)
	}
	return srcs
}

// vectors returns every vector of the conversation in space, copied, by
// ref.
func vectors(t *testing.T, s strata.Store, f strata.VectorFilter) map[strata.EmbedRef]strata.Vector {
	t.Helper()
	out := map[strata.EmbedRef]strata.Vector{}
	err := s.Vectors(ctx(t), f, func(x strata.Vector) error {
		if _, dup := out[x.EmbedRef]; dup {
			t.Errorf("Vectors(%+v) streamed %+v twice", f, x.EmbedRef)
		}
		x.Values = slices.Clone(x.Values)
		out[x.EmbedRef] = x
		return nil
	})
	if err != nil {
		t.Fatalf("Vectors(%+v): %v", f, err)
	}
	if c, ok := s.(strata.VectorCounter); ok {
		if n, err := c.CountVectors(ctx(t), f); err != nil || n != len(out) {
			t.Errorf("CountVectors(%+v) = %d, %v; Vectors streamed %d", f, n, err, len(out))
		}
	}
	return out
}

// sameBits reports whether two vectors are bit for bit equal.
func sameBits(a, b []float32) bool {
	return slices.EqualFunc(a, b, func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) })
}

// testEmbeddingsRoundTrip: Unembedded lists every turn (with its whole
// Text, whatever its shape) and then every node (its summary) in EmbedRef
// order; the vectors put come back bit for bit from Vectors, with their
// refs, dimension and a node's last seq; nothing is unembedded afterwards;
// VectorCounts counts them.
func testEmbeddingsRoundTrip(t *testing.T, s strata.Store) {
	turns := tierCorpus(t, s, "ns", "c")
	srcs, err := s.Unembedded(ctx(t), strata.EmbedFilter{Namespace: "ns", Conversation: "c", Space: spaceA})
	if err != nil {
		t.Fatal(err)
	}
	var want []strata.EmbedSource
	for _, tt := range turns {
		want = append(want, strata.EmbedSource{EmbedRef: strata.EmbedRef{Seq: tt.Seq}, Text: tt.Text()})
	}
	for _, n := range []strata.Node{mkNode("ns", "c", 1, 1, 10, "first span about alpha"), mkNode("ns", "c", 1, 11, 20, "second span about beta"),
		mkNode("ns", "c", 1, 21, 30, "third span about gamma"), mkNode("ns", "c", 2, 1, 20, "alpha and beta")} {
		want = append(want, strata.EmbedSource{EmbedRef: strata.EmbedRef{Level: n.Level, Seq: n.FirstSeq, Node: n.ID}, Text: n.Summary})
	}
	if !slices.Equal(srcs, want) {
		t.Fatalf("Unembedded of a new conversation:\n got %v\nwant %v", srcs, want)
	}
	embedAll(t, s, "ns", "c", spaceA)
	got := vectors(t, s, strata.VectorFilter{Namespace: "ns", Conversation: "c", Space: spaceA})
	if len(got) != len(want) {
		t.Fatalf("Vectors streamed %d vectors, want %d", len(got), len(want))
	}
	for _, w := range want {
		x, ok := got[w.EmbedRef]
		if !ok {
			t.Fatalf("Vectors did not stream %+v", w.EmbedRef)
		}
		if !sameBits(x.Values, vecFor(w.EmbedRef, 4)) || x.Dim != 4 {
			t.Errorf("vector of %+v = %v (dim %d), want %v bit for bit", w.EmbedRef, x.Values, x.Dim, vecFor(w.EmbedRef, 4))
		}
		wantLast := w.Seq
		if w.Node != "" {
			wantLast = map[int64]int64{1: 10, 11: 20, 21: 30}[w.Seq]
			if w.Level == 2 {
				wantLast = 20
			}
		}
		if x.LastSeq != wantLast || x.Version < 1 {
			t.Errorf("vector of %+v: last seq %d, version %d; want %d and a positive version", w.EmbedRef, x.LastSeq, x.Version, wantLast)
		}
	}
	for _, kind := range []string{strata.KindTurn, strata.KindSummary} {
		for ref := range vectors(t, s, strata.VectorFilter{Namespace: "ns", Conversation: "c", Space: spaceA, Kind: kind}) {
			if ref.Kind() != kind {
				t.Errorf("Vectors of kind %s streamed %+v", kind, ref)
			}
		}
	}
	if left, err := s.Unembedded(ctx(t), strata.EmbedFilter{Namespace: "ns", Conversation: "c", Space: spaceA}); err != nil || len(left) != 0 {
		t.Fatalf("Unembedded after embedding everything = %d sources (%v), want none", len(left), err)
	}
	vcs, err := s.VectorCounts(ctx(t), "ns", "c")
	if err != nil {
		t.Fatal(err)
	}
	wantCounts := []strata.VectorCounts{{Conversation: "c", Turns: 30, Nodes: 4, Spaces: []strata.SpaceCount{{Space: spaceA, Turns: 30, Nodes: 4}}}}
	if fmt.Sprint(vcs) != fmt.Sprint(wantCounts) {
		t.Fatalf("VectorCounts = %+v, want %+v", vcs, wantCounts)
	}
}

// testEmbeddingsPaging: paging Unembedded with After and Limit yields
// every source once, in order, across the turns-to-nodes boundary; Kind
// keeps one kind.
func testEmbeddingsPaging(t *testing.T, s strata.Store) {
	tierCorpus(t, s, "ns", "c")
	all, err := s.Unembedded(ctx(t), strata.EmbedFilter{Namespace: "ns", Conversation: "c", Space: spaceA})
	if err != nil {
		t.Fatal(err)
	}
	var paged []strata.EmbedSource
	var after *strata.EmbedRef
	for range 100 {
		page, err := s.Unembedded(ctx(t), strata.EmbedFilter{Namespace: "ns", Conversation: "c", Space: spaceA, After: after, Limit: 7})
		if err != nil {
			t.Fatal(err)
		}
		if len(page) > 7 {
			t.Fatalf("a page of Limit 7 has %d sources", len(page))
		}
		if len(page) == 0 {
			break
		}
		paged = append(paged, page...)
		last := page[len(page)-1].EmbedRef
		after = &last
	}
	if !slices.Equal(paged, all) {
		t.Fatalf("pages of 7:\n got %v\nwant %v", paged, all)
	}
	for i := 1; i < len(all); i++ {
		if !all[i-1].Less(all[i].EmbedRef) {
			t.Fatalf("Unembedded out of order: %+v before %+v", all[i-1].EmbedRef, all[i].EmbedRef)
		}
	}
	for _, kind := range []string{strata.KindTurn, strata.KindSummary} {
		got, err := s.Unembedded(ctx(t), strata.EmbedFilter{Namespace: "ns", Conversation: "c", Space: spaceA, Kind: kind})
		if err != nil {
			t.Fatal(err)
		}
		n := map[string]int{strata.KindTurn: 30, strata.KindSummary: 4}[kind]
		if len(got) != n || slices.ContainsFunc(got, func(x strata.EmbedSource) bool { return x.Kind() != kind }) {
			t.Errorf("Unembedded of kind %s = %d sources, want %d of that kind", kind, len(got), n)
		}
	}
}

// testEmbeddingsSpaces: an item keeps one vector per model; putting again
// replaces it, also with another dimension; vectors of two models live
// side by side; a space of dimension 0 counts the model's vectors of any
// dimension as present.
func testEmbeddingsSpaces(t *testing.T, s strata.Store) {
	ensure(t, s, "ns", "c")
	appendTurns(t, s, "ns", "c", mkTurns("t", 3))
	one := []strata.Embedding{{EmbedRef: strata.EmbedRef{Seq: 2}, Vector: []float32{1, 2, 3, 4}}}
	for range 2 {
		if err := s.PutEmbeddings(ctx(t), "ns", "c", spaceA, one); err != nil {
			t.Fatal(err)
		}
	}
	count := func(space strata.EmbedSpace) int {
		t.Helper()
		return len(vectors(t, s, strata.VectorFilter{Namespace: "ns", Conversation: "c", Space: space}))
	}
	if n := count(spaceA); n != 1 {
		t.Fatalf("after putting the same vector twice: %d vectors, want 1", n)
	}
	one[0].Vector = []float32{5, 6, 7, 8}
	if err := s.PutEmbeddings(ctx(t), "ns", "c", spaceA, one); err != nil {
		t.Fatal(err)
	}
	if got := vectors(t, s, strata.VectorFilter{Namespace: "ns", Conversation: "c", Space: spaceA}); !sameBits(got[strata.EmbedRef{Seq: 2}].Values, one[0].Vector) {
		t.Fatalf("after putting a new vector: %v, want %v", got, one[0].Vector)
	}
	if err := s.PutEmbeddings(ctx(t), "ns", "c", spaceB, one); err != nil {
		t.Fatal(err)
	}
	if a, b := count(spaceA), count(spaceB); a != 1 || b != 1 {
		t.Fatalf("vectors of two models: %d and %d, want 1 and 1", a, b)
	}
	unembedded := func(space strata.EmbedSpace) []int64 {
		t.Helper()
		srcs, err := s.Unembedded(ctx(t), strata.EmbedFilter{Namespace: "ns", Conversation: "c", Space: space})
		if err != nil {
			t.Fatal(err)
		}
		var out []int64
		for _, x := range srcs {
			out = append(out, x.Seq)
		}
		return out
	}
	if got := unembedded(strata.EmbedSpace{Model: "model-a"}); !slices.Equal(got, []int64{1, 3}) {
		t.Fatalf("unembedded in model-a of any dimension = %v, want [1 3]", got)
	}
	if got := unembedded(spaceA8); !slices.Equal(got, []int64{1, 2, 3}) {
		t.Fatalf("unembedded in model-a of dimension 8 = %v, want [1 2 3]: turn 2's vector has 4", got)
	}
	// The same model in dimension 8 replaces the vector of dimension 4.
	eight := []strata.Embedding{{EmbedRef: strata.EmbedRef{Seq: 2}, Vector: vecFor(strata.EmbedRef{Seq: 2}, 8)}}
	if err := s.PutEmbeddings(ctx(t), "ns", "c", spaceA8, eight); err != nil {
		t.Fatal(err)
	}
	if a, a8, any := count(spaceA), count(spaceA8), count(strata.EmbedSpace{Model: "model-a"}); a != 0 || a8 != 1 || any != 1 {
		t.Fatalf("after a put in dimension 8: %d vectors of dimension 4, %d of 8, %d of any; want 0, 1, 1", a, a8, any)
	}
	vcs, err := s.VectorCounts(ctx(t), "ns", "")
	if err != nil {
		t.Fatal(err)
	}
	want := []strata.VectorCounts{{Conversation: "c", Turns: 3, Spaces: []strata.SpaceCount{{Space: spaceA8, Turns: 1}, {Space: spaceB, Turns: 1}}}}
	if fmt.Sprint(vcs) != fmt.Sprint(want) {
		t.Fatalf("VectorCounts = %+v, want %+v", vcs, want)
	}
}

// testEmbeddingsInvalid: bad puts are EINVALID naming the field and store
// nothing, not even their good items; bad filters are EINVALID; an
// unknown conversation is ENOTFOUND for every method.
func testEmbeddingsInvalid(t *testing.T, s strata.Store) {
	tierCorpus(t, s, "ns", "c")
	node := strata.NodeID("ns", "c", 1, 1, 10)
	good := strata.Embedding{EmbedRef: strata.EmbedRef{Seq: 1}, Vector: []float32{1, 0, 0, 0}}
	for name, tc := range map[string]struct {
		space strata.EmbedSpace
		e     strata.Embedding
		field string
	}{
		"empty model":       {strata.EmbedSpace{Dim: 4}, good, "model"},
		"zero dimension":    {strata.EmbedSpace{Model: "m"}, good, "dimensions"},
		"short vector":      {spaceA, strata.Embedding{EmbedRef: strata.EmbedRef{Seq: 2}, Vector: []float32{1, 2, 3}}, "embeddings[1].vector"},
		"NaN":               {spaceA, strata.Embedding{EmbedRef: strata.EmbedRef{Seq: 2}, Vector: []float32{1, float32(math.NaN()), 3, 4}}, "embeddings[1].vector[1]"},
		"infinity":          {spaceA, strata.Embedding{EmbedRef: strata.EmbedRef{Seq: 2}, Vector: []float32{1, 2, 3, float32(math.Inf(-1))}}, "embeddings[1].vector[3]"},
		"unknown turn":      {spaceA, strata.Embedding{EmbedRef: strata.EmbedRef{Seq: 31}, Vector: []float32{1, 2, 3, 4}}, "embeddings[1].seq"},
		"unknown node":      {spaceA, strata.Embedding{EmbedRef: strata.EmbedRef{Level: 1, Seq: 1, Node: "nope"}, Vector: []float32{1, 2, 3, 4}}, "embeddings[1].node"},
		"turn with a level": {spaceA, strata.Embedding{EmbedRef: strata.EmbedRef{Level: 1, Seq: 2}, Vector: []float32{1, 2, 3, 4}}, "embeddings[1].level"},
	} {
		err := s.PutEmbeddings(ctx(t), "ns", "c", tc.space, []strata.Embedding{good, tc.e})
		wantCode(t, name, err, strata.EINVALID)
		if err != nil && !containsFold(err.Error(), tc.field) {
			t.Errorf("%s: error %q does not name %s", name, err, tc.field)
		}
	}
	if v, err := s.VectorVersion(ctx(t), "ns", "c"); err != nil || v != (strata.VectorVersion{}) {
		t.Fatalf("VectorVersion after rejected puts = %+v, %v; want zero", v, err)
	}
	if got := vectors(t, s, strata.VectorFilter{Namespace: "ns", Conversation: "c", Space: strata.EmbedSpace{Model: "m"}}); len(got) != 0 {
		t.Fatalf("rejected puts stored %d vectors", len(got))
	}
	// A node's ref needs only its id.
	if err := s.PutEmbeddings(ctx(t), "ns", "c", spaceA, []strata.Embedding{{EmbedRef: strata.EmbedRef{Node: node}, Vector: []float32{0, 1, 0, 0}}}); err != nil {
		t.Fatalf("a node's vector by id: %v", err)
	}

	for name, f := range map[string]strata.EmbedFilter{
		"empty model":        {Namespace: "ns", Conversation: "c"},
		"negative dimension": {Namespace: "ns", Conversation: "c", Space: strata.EmbedSpace{Model: "m", Dim: -1}},
		"unknown kind":       {Namespace: "ns", Conversation: "c", Space: spaceA, Kind: "learning"},
	} {
		_, err := s.Unembedded(ctx(t), f)
		wantCode(t, "Unembedded: "+name, err, strata.EINVALID)
	}
	for name, f := range map[string]strata.VectorFilter{
		"empty model":  {Namespace: "ns", Conversation: "c"},
		"unknown kind": {Namespace: "ns", Conversation: "c", Space: spaceA, Kind: "learning"},
	} {
		wantCode(t, "Vectors: "+name, s.Vectors(ctx(t), f, func(strata.Vector) error { return nil }), strata.EINVALID)
		if c, ok := s.(strata.VectorCounter); ok {
			_, err := c.CountVectors(ctx(t), f)
			wantCode(t, "CountVectors: "+name, err, strata.EINVALID)
		}
	}

	for _, where := range [][2]string{{"ns", "missing"}, {"other", "c"}} {
		ns, conv := where[0], where[1]
		_, err := s.Unembedded(ctx(t), strata.EmbedFilter{Namespace: ns, Conversation: conv, Space: spaceA})
		wantCode(t, "Unembedded of "+ns+"/"+conv, err, strata.ENOTFOUND)
		wantCode(t, "PutEmbeddings to "+ns+"/"+conv, s.PutEmbeddings(ctx(t), ns, conv, spaceA, []strata.Embedding{good}), strata.ENOTFOUND)
		wantCode(t, "Vectors of "+ns+"/"+conv, s.Vectors(ctx(t), strata.VectorFilter{Namespace: ns, Conversation: conv, Space: spaceA},
			func(strata.Vector) error { return nil }), strata.ENOTFOUND)
		if c, ok := s.(strata.VectorCounter); ok {
			_, err := c.CountVectors(ctx(t), strata.VectorFilter{Namespace: ns, Conversation: conv, Space: spaceA})
			wantCode(t, "CountVectors of "+ns+"/"+conv, err, strata.ENOTFOUND)
		}
		_, err = s.VectorVersion(ctx(t), ns, conv)
		wantCode(t, "VectorVersion of "+ns+"/"+conv, err, strata.ENOTFOUND)
		_, err = s.DeleteEmbeddings(ctx(t), ns, conv, spaceA)
		wantCode(t, "DeleteEmbeddings of "+ns+"/"+conv, err, strata.ENOTFOUND)
		_, err = s.VectorCounts(ctx(t), ns, conv)
		wantCode(t, "VectorCounts of "+ns+"/"+conv, err, strata.ENOTFOUND)
	}
}

// testEmbeddingsVersion: VectorVersion is zero before any vector and grows
// with each put; Vectors with Since streams only what later puts wrote;
// fn's error stops Vectors and comes back.
func testEmbeddingsVersion(t *testing.T, s strata.Store) {
	ensure(t, s, "ns", "c")
	appendTurns(t, s, "ns", "c", mkTurns("t", 4))
	v0, err := s.VectorVersion(ctx(t), "ns", "c")
	if err != nil || v0 != (strata.VectorVersion{}) {
		t.Fatalf("VectorVersion before any vector = %+v, %v; want zero", v0, err)
	}
	put := func(seqs ...int64) strata.VectorVersion {
		t.Helper()
		var es []strata.Embedding
		for _, q := range seqs {
			es = append(es, strata.Embedding{EmbedRef: strata.EmbedRef{Seq: q}, Vector: vecFor(strata.EmbedRef{Seq: q}, 4)})
		}
		if err := s.PutEmbeddings(ctx(t), "ns", "c", spaceA, es); err != nil {
			t.Fatal(err)
		}
		v, err := s.VectorVersion(ctx(t), "ns", "c")
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	v1 := put(1, 2)
	v2 := put(3)
	if v1.Version <= 0 || v2.Version <= v1.Version || v2.TurnsRemoved != 0 || v2.NodesRemoved != 0 {
		t.Fatalf("versions after two puts: %+v then %+v; want growing versions and no removal", v1, v2)
	}
	since := vectors(t, s, strata.VectorFilter{Namespace: "ns", Conversation: "c", Space: spaceA, Since: v1.Version})
	if len(since) != 1 || since[strata.EmbedRef{Seq: 3}].Version != v2.Version {
		t.Fatalf("Vectors since version %d = %v, want turn 3 alone at version %d", v1.Version, since, v2.Version)
	}
	v3 := put(1) // written again: it is new since v2
	since = vectors(t, s, strata.VectorFilter{Namespace: "ns", Conversation: "c", Space: spaceA, Since: v2.Version})
	if v3.Version <= v2.Version || len(since) != 1 || since[strata.EmbedRef{Seq: 1}].Version != v3.Version {
		t.Fatalf("Vectors since version %d after putting turn 1 again = %v (version now %+v), want turn 1 alone", v2.Version, since, v3)
	}
	stop := fmt.Errorf("stop here")
	calls := 0
	err = s.Vectors(ctx(t), strata.VectorFilter{Namespace: "ns", Conversation: "c", Space: spaceA}, func(strata.Vector) error {
		calls++
		return stop
	})
	if err != stop || calls != 1 {
		t.Fatalf("Vectors whose fn fails: %d calls, error %v; want 1 call and that error", calls, err)
	}
}

// testEmbeddingsRemovals: a node's vector goes when its summary changes
// (not when it is put again unchanged) and when the node goes
// (ResetPyramid), and each removal is recorded in NodesRemoved;
// DeleteEmbeddings keeps the space it is given (of any dimension when
// its Dim is 0), counts what it removes, records turn removals in
// TurnsRemoved, and with no conversation covers the namespace only.
func testEmbeddingsRemovals(t *testing.T, s strata.Store) {
	tierCorpus(t, s, "ns", "c")
	embedAll(t, s, "ns", "c", spaceA)
	nodeVectorRemovals(t, s)
	deleteEmbeddings(t, s)
}

// versionOfC returns the vector version of conversation ns/c.
func versionOfC(t *testing.T, s strata.Store) strata.VectorVersion {
	t.Helper()
	v, err := s.VectorVersion(ctx(t), "ns", "c")
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// nodeVectorRemovals: in tierCorpus ns/c embedded in spaceA, a node's
// vector goes when its summary changes (not when it is put again
// unchanged) and when the node goes (ResetPyramid), and each removal is
// recorded in NodesRemoved.
func nodeVectorRemovals(t *testing.T, s strata.Store) {
	first := mkNode("ns", "c", 1, 1, 10, "first span about alpha")
	before := versionOfC(t, s)
	if err := s.PutNodes(ctx(t), "ns", "c", []strata.Node{first}); err != nil {
		t.Fatal(err)
	}
	if got := vectors(t, s, strata.VectorFilter{Namespace: "ns", Conversation: "c", Space: spaceA, Kind: strata.KindSummary}); len(got) != 4 || versionOfC(t, s) != before {
		t.Fatalf("after putting a node again unchanged: %d node vectors, version %+v; want 4 and %+v", len(got), versionOfC(t, s), before)
	}
	first.Summary = "first span, summarized again by a model"
	if err := s.PutNodes(ctx(t), "ns", "c", []strata.Node{first}); err != nil {
		t.Fatal(err)
	}
	got := vectors(t, s, strata.VectorFilter{Namespace: "ns", Conversation: "c", Space: spaceA, Kind: strata.KindSummary})
	after := versionOfC(t, s)
	if len(got) != 3 || after.NodesRemoved <= before.Version || after.Version < after.NodesRemoved {
		t.Fatalf("after a node's summary changed: %d node vectors, version %+v (was %+v); want 3 and the removal recorded", len(got), after, before)
	}
	srcs, err := s.Unembedded(ctx(t), strata.EmbedFilter{Namespace: "ns", Conversation: "c", Space: spaceA})
	if err != nil || len(srcs) != 1 || srcs[0].Node != first.ID || srcs[0].Text != first.Summary {
		t.Fatalf("Unembedded after the summary changed = %v, %v; want the node with its new summary", srcs, err)
	}
	// A node pending a model summary waits for it.
	first.Pending = true
	if err := s.PutNodes(ctx(t), "ns", "c", []strata.Node{first}); err != nil {
		t.Fatal(err)
	}
	if srcs, _ := s.Unembedded(ctx(t), strata.EmbedFilter{Namespace: "ns", Conversation: "c", Space: spaceA}); len(srcs) != 0 {
		t.Fatalf("Unembedded lists a pending node: %v", srcs)
	}
	vcs, err := s.VectorCounts(ctx(t), "ns", "c")
	if err != nil || len(vcs) != 1 || vcs[0].Nodes != 3 {
		t.Fatalf("VectorCounts with a pending node = %+v, %v; want 3 nodes to embed", vcs, err)
	}

	before = versionOfC(t, s)
	if _, err := s.ResetPyramid(ctx(t), "ns", "c", "chunks"); err != nil {
		t.Fatal(err)
	}
	if got := vectors(t, s, strata.VectorFilter{Namespace: "ns", Conversation: "c", Space: spaceA, Kind: strata.KindSummary}); len(got) != 0 || versionOfC(t, s).NodesRemoved <= before.Version {
		t.Fatalf("after ResetPyramid: %d node vectors, version %+v; want none and the removal recorded", len(got), versionOfC(t, s))
	}
}

// deleteEmbeddings: after nodeVectorRemovals, DeleteEmbeddings keeps the
// space it is given (of any dimension when its Dim is 0), counts what it
// removes, records turn removals in TurnsRemoved, and with no
// conversation covers the namespace only. It adds another conversation,
// another namespace and other spaces.
func deleteEmbeddings(t *testing.T, s strata.Store) {
	ensure(t, s, "ns", "d")
	appendTurns(t, s, "ns", "d", mkTurns("d", 2))
	ensure(t, s, "other", "c")
	appendTurns(t, s, "other", "c", mkTurns("o", 2))
	embedAll(t, s, "ns", "c", spaceB)
	embedAll(t, s, "ns", "c", spaceA8) // replaces model-a's vectors of dimension 4
	embedAll(t, s, "ns", "d", spaceA)
	embedAll(t, s, "other", "c", spaceA)
	before := versionOfC(t, s)
	n, err := s.DeleteEmbeddings(ctx(t), "ns", "c", strata.EmbedSpace{Model: "model-a"})
	if err != nil || n != 30 {
		t.Fatalf("DeleteEmbeddings keeping model-a of any dimension = %d, %v; want the 30 vectors of model-b", n, err)
	}
	if v := versionOfC(t, s); v.TurnsRemoved <= before.Version || v.Version < v.TurnsRemoved {
		t.Fatalf("version after deleting turn vectors = %+v (was %+v); want the removal recorded", v, before)
	}
	if got := vectors(t, s, strata.VectorFilter{Namespace: "ns", Conversation: "c", Space: spaceA8}); len(got) != 30 {
		t.Fatalf("kept %d vectors of model-a in dimension 8, want 30", len(got))
	}
	if n, err := s.DeleteEmbeddings(ctx(t), "ns", "", spaceA); err != nil || n != 30 {
		t.Fatalf("DeleteEmbeddings of the namespace keeping model-a in dimension 4 = %d, %v; want c's 30 of dimension 8 (d's 2 kept)", n, err)
	}
	vcs, err := s.VectorCounts(ctx(t), "ns", "")
	if err != nil {
		t.Fatal(err)
	}
	want := []strata.VectorCounts{
		{Conversation: "c", Turns: 30, Nodes: 0, Spaces: []strata.SpaceCount{}},
		{Conversation: "d", Turns: 2, Nodes: 0, Spaces: []strata.SpaceCount{{Space: spaceA, Turns: 2}}},
	}
	if fmt.Sprint(vcs) != fmt.Sprint(want) {
		t.Fatalf("VectorCounts after the deletes = %+v, want %+v", vcs, want)
	}
	if n, err := s.DeleteEmbeddings(ctx(t), "ns", "", strata.EmbedSpace{}); err != nil || n != 2 {
		t.Fatalf("DeleteEmbeddings keeping nothing = %d, %v; want d's 2", n, err)
	}
	if got := vectors(t, s, strata.VectorFilter{Namespace: "other", Conversation: "c", Space: spaceA}); len(got) != 2 {
		t.Fatalf("deletes in namespace ns removed vectors of namespace other: %d left, want 2", len(got))
	}
}

// testEmbeddingsTiers: Unembedded reads the whole Text of warm and cold
// turns, leaves out expired turns (pinned ones stay), and VectorCounts
// does not count expired turns as embeddable; vectors outlive the
// content of their turns.
func testEmbeddingsTiers(t *testing.T, s strata.Store) {
	turns := tierCorpus(t, s, "ns", "c")
	demote(t, s, "ns", "c", strata.TierWarm, [2]int64{11, 20})
	demote(t, s, "ns", "c", strata.TierCold, [2]int64{21, 30})
	srcs, err := s.Unembedded(ctx(t), strata.EmbedFilter{Namespace: "ns", Conversation: "c", Space: spaceA, Kind: strata.KindTurn})
	if err != nil {
		t.Fatal(err)
	}
	if len(srcs) != 30 {
		t.Fatalf("Unembedded with warm and cold spans = %d turns, want 30", len(srcs))
	}
	for i, src := range srcs {
		if src.Seq != turns[i].Seq || src.Text != turns[i].Text() {
			t.Fatalf("Unembedded turn %d = %q, want %q", turns[i].Seq, src.Text, turns[i].Text())
		}
	}
	embedAll(t, s, "ns", "c", spaceA)
	if _, err := s.Expire(ctx(t), "ns", "c", []string{strata.NodeID("ns", "c", 1, 21, 30)}, "rule", base.Add(5000*time.Hour), false); err != nil {
		t.Fatal(err)
	}
	if got := vectors(t, s, strata.VectorFilter{Namespace: "ns", Conversation: "c", Space: spaceA, Kind: strata.KindTurn}); len(got) != 30 {
		t.Fatalf("after expiring a span: %d turn vectors, want 30 (vectors stay)", len(got))
	}
	srcs, err = s.Unembedded(ctx(t), strata.EmbedFilter{Namespace: "ns", Conversation: "c", Space: spaceB, Kind: strata.KindTurn})
	if err != nil {
		t.Fatal(err)
	}
	var seqs []int64
	for _, src := range srcs {
		seqs = append(seqs, src.Seq)
	}
	if want := append(seqRange(1, 20), 25); !slices.Equal(seqs, want) {
		t.Fatalf("Unembedded with turns 21-30 expired (25 pinned) = %v, want %v", seqs, want)
	}
	vcs, err := s.VectorCounts(ctx(t), "ns", "c")
	if err != nil || len(vcs) != 1 || vcs[0].Turns != 21 {
		t.Fatalf("VectorCounts with 9 turns expired = %+v, %v; want 21 embeddable turns", vcs, err)
	}
}

// containsFold reports whether s contains sub, ignoring case.
func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}
