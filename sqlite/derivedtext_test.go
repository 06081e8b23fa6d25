package sqlite_test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/extractive"
	"github.com/strata-memory/strata/internal/proptest"
	"github.com/strata-memory/strata/internal/race"
	"github.com/strata-memory/strata/internal/synth"
	"github.com/strata-memory/strata/sqlite"
)

// derivedBase writes a store of n synthetic turns under the chunks policy
// (levels 1 to 3, the upper ones derived) at path and closes it.
func derivedBase(t *testing.T, path string, n int) {
	t.Helper()
	st, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m, err := strata.New(strata.Config{Store: st, Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New(),
		Tiers: &strata.TierPolicy{Off: true}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Ingest(t.Context(), strata.Batch{Conversation: "c", Policy: "chunks", Turns: synth.New(5).Turns(n)}); err != nil {
		t.Fatal(err)
	}
}

func copyFile(t interface{ Fatal(...any) }, from, to string) {
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestDerivedTextsAgainstChildren: Vacuum rewrites derived nodes' texts
// against their children's, in far fewer bytes, and every node reads as
// before, in the store, in one opened before and in one opened after.
func TestDerivedTextsAgainstChildren(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "t.db")
	derivedBase(t, path, 3000)
	st := openAt(t, path)
	other := openAt(t, path)
	all := strata.NodeFilter{Namespace: "default", Conversation: "c"}
	before, err := st.Nodes(ctx, all)
	if err != nil {
		t.Fatal(err)
	}
	derivedBytes := func() (n int64) {
		if err := rawDB(t, path).QueryRow(`SELECT sum(length(summary) + coalesce(length(facts), 0) + coalesce(length(themes), 0))
			FROM nodes WHERE derived = 1`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	plain := derivedBytes()
	if err := st.Vacuum(ctx); err != nil {
		t.Fatal(err)
	}
	framed, err := sqlite.ChildFrames(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	after := derivedBytes()
	t.Logf("derived node texts: %d bytes plain, %d after Vacuum (%.1fx); %d nodes framed against their children", plain, after, float64(plain)/float64(after), framed)
	if framed == 0 || after*3 > plain {
		t.Fatalf("after Vacuum: %d nodes framed against their children, derived texts %d bytes of %d; want some, and a third at most", framed, after, plain)
	}
	for name, s := range map[string]*sqlite.Store{"the store": st, "a store opened before": other, "a store opened after": openAt(t, path)} {
		got, err := s.Nodes(ctx, all)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(before, got) {
			t.Fatalf("%s reads other nodes after Vacuum", name)
		}
	}
}

// TestDerivedTextsFollowTheirChildren is the property behind frames
// against children: whatever is put, replaced or compressed, in any order,
// a store whose derived texts were framed reads the same nodes as a copy
// that never was, through its own cache after each step and freshly
// opened at the end.
func TestDerivedTextsFollowTheirChildren(t *testing.T) {
	// One goroutine: .ci/run runs it at depth without the race detector.
	race.SkipOneGoroutine(t)
	defer proptest.Bound(40, 15)()
	ctx := t.Context()
	base := filepath.Join(t.TempDir(), "base.db")
	derivedBase(t, base, 300)
	rapid.Check(t, func(rt *rapid.T) {
		dir, err := os.MkdirTemp("", "derived-")
		if err != nil {
			rt.Fatal(err)
		}
		defer os.RemoveAll(dir)
		pa, pb := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")
		copyFile(rt, base, pa)
		copyFile(rt, base, pb)
		open := func(p string) *sqlite.Store {
			s, err := sqlite.Open(ctx, p)
			if err != nil {
				rt.Fatal(err)
			}
			return s
		}
		a, b := open(pa), open(pb)
		defer a.Close()
		defer b.Close()
		if _, err := a.CompressNodeTexts(ctx); err != nil {
			rt.Fatal(err)
		}
		if n, err := sqlite.ChildFrames(ctx, a); err != nil || n == 0 {
			rt.Fatalf("%d nodes framed against their children (%v)", n, err)
		}
		all := strata.NodeFilter{Namespace: "default", Conversation: "c"}
		// A frame left wrong stays wrong (nothing can expand it to
		// rewrite it), so a store opened at the end, with no cache,
		// finds what the cached reads after each step may not.
		same := func(step string, s *sqlite.Store) {
			want, err := b.Nodes(ctx, all)
			if err != nil {
				rt.Fatal(err)
			}
			got, err := s.Nodes(ctx, all)
			if err != nil {
				rt.Fatalf("after %s: %v", step, err)
			}
			if !reflect.DeepEqual(want, got) {
				rt.Fatalf("after %s, the framed store reads other nodes", step)
			}
		}
		defer func() {
			fresh := open(pa)
			defer fresh.Close()
			same("every step, a store opened then", fresh)
		}()
		nodes, err := b.Nodes(ctx, all)
		if err != nil {
			rt.Fatal(err)
		}
		steps := rapid.IntRange(1, 6).Draw(rt, "steps")
		for i := range steps {
			op := rapid.SampledFrom([]string{"put", "replace", "compress"}).Draw(rt, "op")
			if op == "compress" {
				if _, err := a.CompressNodeTexts(ctx); err != nil {
					rt.Fatal(err)
				}
				same(op, a)
				continue
			}
			// Mostly children of framed nodes: levels 1 and 2.
			k := rapid.IntRange(0, len(nodes)-1).Draw(rt, "node")
			n := nodes[k]
			n.Summary += fmt.Sprintf(" Edit %d.", i)
			if rapid.Bool().Draw(rt, "new fact") {
				n.Facts = append(append([]string(nil), n.Facts...), fmt.Sprintf("fact %d", i))
			}
			nodes[k] = n
			for _, s := range []*sqlite.Store{a, b} {
				var err error
				if op == "put" {
					err = s.PutNodes(ctx, "default", "c", []strata.Node{n})
				} else {
					_, err = s.ReplaceNodes(ctx, "default", "c", []string{n.ID}, []strata.Node{n})
				}
				if err != nil {
					rt.Fatalf("%s %s: %v", op, n.ID, err)
				}
			}
			same(fmt.Sprintf("%s %s (level %d)", op, n.ID, n.Level), a)
		}
	})
}
