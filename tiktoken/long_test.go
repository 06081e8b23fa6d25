package tiktoken

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/strata-memory/strata/internal/race"
	"pgregory.net/rapid"
)

// spaceless returns n bytes of text without spaces: one letter repeated,
// random letters, base64-like text, and a mix of non-ASCII letters.
func spaceless(kind string, n int) string {
	r := rand.New(rand.NewPCG(1, uint64(len(kind))))
	var b strings.Builder
	switch kind {
	case "repeated":
		return strings.Repeat("a", n)
	case "letters":
		for b.Len() < n {
			b.WriteByte(byte('a' + r.IntN(26)))
		}
	case "base64":
		const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
		for b.Len() < n {
			b.WriteByte(alphabet[r.IntN(len(alphabet))])
		}
	case "accented":
		letters := []rune("aéçñøüßœπжщ")
		for b.Len() < n {
			b.WriteRune(letters[r.IntN(len(letters))])
		}
	}
	return b.String()
}

// TestLongPieceCount: a pre-token longer than MaxPiece is counted in
// pieces of MaxPiece bytes, within two tokens a cut of the exact count
// of the whole run, and a run up to MaxPiece is still counted exactly.
func TestLongPieceCount(t *testing.T) {
	tok, err := New(O200kBase)
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"repeated", "letters", "base64", "accented"} {
		s := spaceless(kind, 64<<10)
		exact := len(tok.Encode(s))
		got := tok.Count(s)
		cuts := len(s) / (MaxPiece - 3)
		t.Logf("%s, %d bytes: %d tokens counted, %d exact (%+d over %d cuts, %.3f%%)", kind, len(s), got, exact,
			got-exact, cuts, 100*float64(got-exact)/float64(exact))
		if d := got - exact; d < -2*cuts || d > 2*cuts {
			t.Errorf("%s: counted %d, exact %d: more than two tokens a cut apart (%d cuts)", kind, got, exact, cuts)
		}
		short := s[:MaxPiece-8]
		if got, want := tok.Count(short), len(tok.Encode(short)); got != want {
			t.Errorf("%s: a run of %d bytes counted %d, exact %d", kind, len(short), got, want)
		}
	}
}

// TestCountContextCancelled: counting a long text gives up once its
// context is done.
func TestCountContextCancelled(t *testing.T) {
	tok, err := New(O200kBase)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := tok.CountContext(ctx, spaceless("letters", 1<<20)); !errors.Is(err, context.Canceled) {
		t.Errorf("counting with a cancelled context: %v, want context.Canceled", err)
	}
	if n, err := tok.CountContext(ctx, "short"); err != nil || n != tok.Count("short") {
		t.Errorf("a text shorter than a check: %d %v", n, err)
	}
}

// BenchmarkCountSpaceless counts 16 MiB turns without spaces, the
// largest body the server takes: one operation is one turn. Before long
// runs were cut, 16 MiB of one letter took about 24 s and allocated
// 2.2 GB, random letters 18.5 s and 1.3 GB; cut but with the merge's
// memory allocated afresh for each piece, 0.73 GB in 65,540 allocations;
// reused, about 1 MB (the fresh count cache) in 13.
func BenchmarkCountSpaceless(b *testing.B) {
	tok, err := New(O200kBase)
	if err != nil {
		b.Fatal(err)
	}
	for _, kind := range []string{"repeated", "letters", "base64"} {
		s := spaceless(kind, 16<<20)
		b.Run(kind, func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			b.ReportAllocs()
			for b.Loop() {
				tok.cache = newCountCache() // each turn new, as a stranger's would be
				tok.Count(s)
			}
		})
	}
}

// TestMergeCountMatchesScan: counting a piece with the pooled working
// memory gives the parts of the plain merge, whatever pieces (longer,
// shorter) the memory served before.
func TestMergeCountMatchesScan(t *testing.T) {
	tok, err := New(O200kBase)
	if err != nil {
		t.Fatal(err)
	}
	alphabets := []string{"a", "ab", "etaoinshrdlu", "0123456789", "aéçñøüßœπжщ", "日本語", "😀👍", "+/="}
	rapid.Check(t, func(t *rapid.T) {
		for range rapid.IntRange(1, 4).Draw(t, "pieces") {
			alpha := []rune(rapid.SampledFrom(alphabets).Draw(t, "alphabet"))
			picks := rapid.SliceOfN(rapid.IntRange(0, len(alpha)-1), 1, 1500).Draw(t, "runes")
			var b strings.Builder
			for _, k := range picks {
				b.WriteRune(alpha[k])
			}
			piece := b.String()
			want := tok.vocab.mergeScan(piece)
			if got := tok.vocab.mergeCount(piece); got != len(want)-1 {
				t.Fatalf("mergeCount(%q) = %d, want %d", piece, got, len(want)-1)
			}
			if got := tok.vocab.mergeHeap(piece); !slices.Equal(got, want) {
				t.Fatalf("mergeHeap(%q) = %v, want %v", piece, got, want)
			}
		}
	})
}

// TestCountSpacelessAllocations: counting a run without spaces reuses its
// working memory from piece to piece. Allocating it afresh took four
// allocations and about 44 KiB for every MaxPiece bytes (733 MB for a
// 16 MiB turn), which kept the collector busy while a server counted.
func TestCountSpacelessAllocations(t *testing.T) {
	if race.Enabled {
		// Under the race detector sync.Pool drops items at random, and
		// allocation counts mean nothing.
		t.Skip("the race detector makes sync.Pool drop items at random")
	}
	tok, err := New(O200kBase)
	if err != nil {
		t.Fatal(err)
	}
	s := spaceless("letters", 1<<20)
	tok.Count(s)
	if n := testing.AllocsPerRun(3, func() { tok.Count(s) }); n > 32 {
		t.Errorf("counting 1 MiB without spaces: %.0f allocations, want at most 32 (one piece is %d bytes)", n, MaxPiece)
	}
}
