package sqlite_test

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/sqlite"
)

// TestSearchFromSeqProperty: whatever the turns of two conversations
// written in interleaved batches, the words and the seq, a search from a
// seq on returns exactly the unrestricted search's turn hits from that
// seq, in the same order and with the same scores. One store serves every
// case, each case two conversations of its own (a store a case made the
// test 39 s long under the race detector).
func TestSearchFromSeqProperty(t *testing.T) {
	words := []string{"otter", "heron", "weir", "mill", "ferry", "lock"}
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cases := 0
	rapid.Check(t, func(rt *rapid.T) {
		cases++
		ca, cb := fmt.Sprintf("a%d", cases), fmt.Sprintf("b%d", cases)
		for _, c := range []string{ca, cb} {
			if _, err := st.EnsureConversation(ctx, strata.Conversation{Namespace: "ns", ID: c, Policy: "chunks"}); err != nil {
				rt.Fatal(err)
			}
		}
		n := 0
		for b := range rapid.IntRange(1, 6).Draw(rt, "batches") {
			conv := rapid.SampledFrom([]string{ca, cb}).Draw(rt, "conv")
			var ts []strata.Turn
			for i := range rapid.IntRange(1, 12).Draw(rt, "turns") {
				text := ""
				for range rapid.IntRange(1, 5).Draw(rt, "words") {
					text += rapid.SampledFrom(words).Draw(rt, "word") + " "
				}
				n++
				ts = append(ts, strata.Turn{ExtID: fmt.Sprintf("%d-%d-%d", b, i, n), Role: strata.RoleUser, Content: text, Time: time.Unix(int64(n), 0)})
			}
			if _, err := st.AppendTurns(ctx, "ns", conv, ts); err != nil {
				rt.Fatal(err)
			}
		}
		query := rapid.SampledFrom(words).Draw(rt, "q1") + " " + rapid.SampledFrom(words).Draw(rt, "q2")
		conv := rapid.SampledFrom([]string{ca, cb}).Draw(rt, "searched")
		from := int64(rapid.IntRange(1, 80).Draw(rt, "from"))
		all, err := st.Search(ctx, strata.SearchQuery{Namespace: "ns", Conversation: conv, Text: query, K: 1000, Kind: strata.KindTurn})
		if err != nil {
			rt.Fatal(err)
		}
		k := rapid.IntRange(1, 20).Draw(rt, "k")
		got, err := st.Search(ctx, strata.SearchQuery{Namespace: "ns", Conversation: conv, Text: query, K: k, Kind: strata.KindTurn, FromSeq: from})
		if err != nil {
			rt.Fatal(err)
		}
		var want []strata.Hit
		for _, h := range all {
			if h.Turn.Seq >= from && len(want) < k {
				want = append(want, h)
			}
		}
		if len(got) != len(want) {
			rt.Fatalf("from %d, k %d: %d hits, want %d", from, k, len(got), len(want))
		}
		for i := range got {
			if got[i].Turn.Seq != want[i].Turn.Seq || got[i].Conversation != conv ||
				math.Abs(got[i].Score-want[i].Score) > 1e-9*math.Max(1, math.Abs(want[i].Score)) {
				rt.Fatalf("from %d, hit %d: seq %d score %v, want seq %d score %v", from, i,
					got[i].Turn.Seq, got[i].Score, want[i].Turn.Seq, want[i].Score)
			}
		}
	})
}
