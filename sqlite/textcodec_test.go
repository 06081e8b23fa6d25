package sqlite_test

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/extractive"
	"github.com/strata-memory/strata/internal/synth"
	"github.com/strata-memory/strata/sqlite"
	"github.com/strata-memory/strata/storetest"
)

// TestConformanceCompressed runs the store contract on stores that hold a
// text dictionary from the start and compress every node text a frame
// shortens: what they read back must be what was written, whatever the
// encoding.
func TestConformanceCompressed(t *testing.T) {
	if testing.Short() || !runVariants {
		t.Skip("the suite runs once in TestConformance (and the variants without the race detector)")
	}
	var samples []string
	g := synth.New(3)
	for _, tr := range g.Turns(400) {
		samples = append(samples, tr.Content)
	}
	samples = append(samples, `["the otter crossed the weir","apple pie"]`, "summary of turns 1-10: the walrus migrates north")
	dict, err := sqlite.BuildTextDictionary(samples)
	if err != nil {
		t.Fatal(err)
	}
	storetest.Run(t, func(t *testing.T) strata.Store {
		s := openTemp(t)
		if err := sqlite.InstallTextDictionary(t.Context(), s, dict); err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// importHistory imports a synthetic conversation "c" of 3,000 turns
// under the chunks policy into st, with tiers off.
func importHistory(t testing.TB, st *sqlite.Store) {
	t.Helper()
	m, err := strata.New(strata.Config{Store: st, Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New(),
		Tiers: &strata.TierPolicy{Off: true}})
	if err != nil {
		t.Fatal(err)
	}
	turns := synth.New(11).Turns(3000)
	for i := 0; i < len(turns); i += 500 {
		if _, err := m.Ingest(t.Context(), strata.Batch{Conversation: "c", Policy: "chunks", Turns: turns[i : i+500]}); err != nil {
			t.Fatal(err)
		}
	}
}

// nodeTextBytes is what the node texts take in the file, and how many are
// frames.
func nodeTextBytes(t *testing.T, path string) (bytes, frames int64) {
	t.Helper()
	if err := rawDB(t, path).QueryRow(`SELECT sum(length(summary) + coalesce(length(facts), 0) + coalesce(length(themes), 0)),
		sum(typeof(summary) = 'blob') FROM nodes`).Scan(&bytes, &frames); err != nil {
		t.Fatal(err)
	}
	return bytes, frames
}

// TestVacuumCompressesNodeTexts: the first Vacuum of a store with enough
// node text trains a dictionary and rewrites the texts; every node, search
// hit and vector reads as before, in this store and in another one opened
// on the file before the dictionary existed; a node whose summary changes
// afterwards still loses its vector, one put again unchanged keeps it.
func TestVacuumCompressesNodeTexts(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "t.db")
	st := openAt(t, path)
	importHistory(t, st)
	other := openAt(t, path) // another process: it has read no dictionary
	all := strata.NodeFilter{Namespace: "default", Conversation: "c"}
	before, err := st.Nodes(ctx, all)
	if err != nil {
		t.Fatal(err)
	}
	query := strata.SearchQuery{Namespace: "default", Conversation: "c", Text: before[len(before)/2].Summary[:40], K: 20}
	hitsBefore, err := st.Search(ctx, query)
	if err != nil {
		t.Fatal(err)
	}
	space := strata.EmbedSpace{Model: "test", Dim: 2}
	var es []strata.Embedding
	for _, n := range before[:10] {
		es = append(es, strata.Embedding{EmbedRef: strata.EmbedRef{Level: n.Level, Seq: n.FirstSeq, Node: n.ID}, Vector: []float32{1, float32(n.FirstSeq)}})
	}
	if err := st.PutEmbeddings(ctx, "default", "c", space, es); err != nil {
		t.Fatal(err)
	}
	plain, frames := nodeTextBytes(t, path)
	if frames != 0 {
		t.Fatalf("%d frames before any dictionary", frames)
	}

	if err := st.Vacuum(ctx); err != nil {
		t.Fatal(err)
	}
	packed, frames := nodeTextBytes(t, path)
	t.Logf("node texts: %d bytes, %d after Vacuum (%.2fx); %d of %d summaries are frames", plain, packed,
		float64(plain)/float64(packed), frames, len(before))
	if frames < int64(len(before))/2 || packed*10 > plain*7 {
		t.Fatalf("after Vacuum: %d of %d summaries compressed, %d bytes of %d; want most, and 30%% saved", frames, len(before), packed, plain)
	}
	// The store opened before meets the dictionary in several reads at
	// once: each may reload it, none may fail.
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			got, err := other.Nodes(ctx, all)
			if err == nil && !reflect.DeepEqual(before, got) {
				err = fmt.Errorf("other nodes")
			}
			errs <- err
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatalf("a concurrent read by the store opened before: %v", err)
		}
	}
	for name, s := range map[string]*sqlite.Store{"the store": st, "a store opened before": other} {
		after, err := s.Nodes(ctx, all)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(before, after) {
			t.Fatalf("%s reads other nodes after Vacuum", name)
		}
		hits, err := s.Search(ctx, query)
		if err != nil {
			t.Fatal(err)
		}
		if hitList(hits) != hitList(hitsBefore) {
			t.Fatalf("%s finds other hits after Vacuum", name)
		}
	}
	count := func() int {
		n, err := st.CountVectors(ctx, strata.VectorFilter{Namespace: "default", Conversation: "c", Space: space})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(); n != 10 {
		t.Fatalf("%d vectors after Vacuum, want the 10 put before", n)
	}
	// Put again as it is: the vector stays; with another summary: it goes.
	same := before[0]
	if err := st.PutNodes(ctx, "default", "c", []strata.Node{same}); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 10 {
		t.Fatalf("%d vectors after a node was put again unchanged, want 10", n)
	}
	changed := before[1]
	changed.Summary += " And then the otter left."
	if err := st.PutNodes(ctx, "default", "c", []strata.Node{changed}); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 9 {
		t.Fatalf("%d vectors after a node's summary changed, want 9", n)
	}
	got, err := other.Nodes(ctx, strata.NodeFilter{Namespace: "default", Conversation: "c", Level: 1, FromSeq: changed.FirstSeq, Limit: 1})
	if err != nil || len(got) != 1 || got[0].Summary != changed.Summary {
		t.Fatalf("the changed node read by the other store: %v, %v", got, err)
	}
	// A second Vacuum trains nothing new and changes no text.
	if err := st.Vacuum(ctx); err != nil {
		t.Fatal(err)
	}
	var dicts int
	if err := rawDB(t, path).QueryRow(`SELECT count(*) FROM text_dicts`).Scan(&dicts); err != nil {
		t.Fatal(err)
	}
	if dicts != 1 {
		t.Fatalf("%d dictionaries after two Vacuums, want 1", dicts)
	}
}

// hitList names each hit with its score.
func hitList(hs []strata.Hit) string {
	var b strings.Builder
	for _, h := range hs {
		switch {
		case h.Node != nil:
			fmt.Fprintf(&b, "%s %q %.6f\n", h.Node.ID, h.Node.Summary, h.Score)
		case h.Turn != nil:
			fmt.Fprintf(&b, "turn %d %.6f\n", h.Turn.Seq, h.Score)
		}
	}
	return b.String()
}

// TestVacuumLeavesSmallStores: a store with too little node text to train
// on gets no dictionary, and keeps its texts as they are but for those of
// derived nodes, which need none (they are framed against their
// children's).
func TestVacuumLeavesSmallStores(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "t.db")
	st := openAt(t, path)
	m, err := strata.New(strata.Config{Store: st, Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Ingest(ctx, strata.Batch{Conversation: "c", Policy: "chunks", Turns: synth.New(2).Turns(60)}); err != nil {
		t.Fatal(err)
	}
	if err := st.Vacuum(ctx); err != nil {
		t.Fatal(err)
	}
	var dicts int
	if err := rawDB(t, path).QueryRow(`SELECT count(*) FROM text_dicts`).Scan(&dicts); err != nil {
		t.Fatal(err)
	}
	againstChildren, err := sqlite.ChildFrames(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if _, frames := nodeTextBytes(t, path); dicts != 0 || frames > int64(againstChildren) {
		t.Fatalf("%d dictionaries and %d frames (%d nodes framed against their children) in a store too small to train a dictionary on",
			dicts, frames, againstChildren)
	}
}

// TestDamagedNodeTextIsAnError: a frame whose bytes changed reads as an
// error naming its node, never as other text.
func TestDamagedNodeTextIsAnError(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "t.db")
	st := openAt(t, path)
	importHistory(t, st)
	if err := st.Vacuum(ctx); err != nil {
		t.Fatal(err)
	}
	var pk int64
	var id string
	var frame []byte
	db := rawDB(t, path)
	if err := db.QueryRow(`SELECT pk, id, summary FROM nodes WHERE typeof(summary) = 'blob' ORDER BY pk LIMIT 1`).Scan(&pk, &id, &frame); err != nil {
		t.Fatal(err)
	}
	frame[len(frame)-6] ^= 0x20
	if _, err := db.Exec(`UPDATE nodes SET summary = ? WHERE pk = ?`, frame, pk); err != nil {
		t.Fatal(err)
	}
	_, err := st.Nodes(ctx, strata.NodeFilter{Namespace: "default", Conversation: "c"})
	if err == nil || !strings.Contains(err.Error(), id) {
		t.Fatalf("reading a damaged summary: %v, want an error naming node %s", err, id)
	}
}

// BenchmarkReadNodes reads every node of a 3,000-turn history (480 nodes)
// with Store.Nodes, from a store whose texts are plain and from the same
// store after Vacuum compressed them; reads after the first find most
// texts in the cache of recently read frames, as a server's context
// packages do.
//
//	go test -run x -bench ReadNodes ./sqlite/
func BenchmarkReadNodes(b *testing.B) {
	for _, compress := range []bool{false, true} {
		name := "plain"
		if compress {
			name = "compressed"
		}
		b.Run(name, func(b *testing.B) {
			st, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "t.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			importHistory(b, st)
			if compress {
				if err := st.Vacuum(b.Context()); err != nil {
					b.Fatal(err)
				}
			}
			f := strata.NodeFilter{Namespace: "default", Conversation: "c"}
			for b.Loop() {
				if _, err := st.Nodes(b.Context(), f); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
