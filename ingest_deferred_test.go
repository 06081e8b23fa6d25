package strata_test

import (
	"context"
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/internal/proptest"
	"github.com/strata-memory/strata/internal/synth"
)

// TestIngestDeferredEqualsIngest: IngestDeferred and then its rollup
// leave the store as Ingest does (the same turns, the same nodes, the
// same counts), and the turns are stored, readable, before the rollup
// runs. Some batches resend turns already stored (by ext_id).
func TestIngestDeferredEqualsIngest(t *testing.T) {
	// Two stores serve every case, each case a conversation of its own:
	// opening two stores a case cost most of the test's time.
	ctx := context.Background()
	a, b := newMemory(t, nil), newMemory(t, nil)
	defer proptest.Bound(100, 25)()
	cases := 0
	rapid.Check(t, func(rt *rapid.T) {
		cases++
		conv := fmt.Sprintf("c%d", cases)
		all := synth.New(rapid.Uint64Range(1, 1000).Draw(rt, "seed")).Turns(rapid.IntRange(1, 70).Draw(rt, "turns"))
		for at := 0; at < len(all); {
			n := rapid.IntRange(1, 25).Draw(rt, "batch")
			back := rapid.IntRange(0, min(at, 3)).Draw(rt, "resent")
			batch := strata.Batch{Conversation: conv, Turns: append([]strata.Turn(nil), all[at-back:min(len(all), at+n)]...)}
			at = min(len(all), at+n)
			want, err := a.Ingest(ctx, batch)
			if err != nil {
				rt.Fatal(err)
			}
			res, rollup, err := b.IngestDeferred(ctx, batch)
			if err != nil {
				rt.Fatal(err)
			}
			stored, _, err := b.Turns(ctx, conv, 0, 0, 1000)
			if err != nil {
				rt.Fatal(err)
			}
			if len(stored) != at {
				rt.Fatalf("before the rollup: %d turns stored, want %d", len(stored), at)
			}
			if res.Added != want.Added || res.Skipped != want.Skipped || res.Nodes != 0 {
				rt.Fatalf("append: %+v, Ingest's %+v", res, want)
			}
			if got := rollup(ctx); got != want {
				rt.Fatalf("after the rollup: %+v, Ingest's %+v", got, want)
			}
		}
		if na, nb := nodes(rt, a, conv), nodes(rt, b, conv); fmt.Sprint(na) != fmt.Sprint(nb) {
			rt.Fatalf("nodes differ:\n%v\n%v", na, nb)
		}
	})
}

// nodes lists a conversation's nodes by what they cover and say.
func nodes(rt *rapid.T, m *strata.Memory, conv string) []string {
	ns, err := m.Store().Nodes(context.Background(), strata.NodeFilter{Namespace: strata.DefaultNamespace, Conversation: conv})
	if err != nil {
		rt.Fatal(err)
	}
	var out []string
	for _, n := range ns {
		out = append(out, fmt.Sprintf("L%d %d-%d %s %q", n.Level, n.FirstSeq, n.LastSeq, n.Key, n.Summary))
	}
	return out
}
