package tiktoken

import (
	"slices"
	"testing"
)

// FuzzCountMatchesReference compares Count, Encode and the pre-token split
// with the oracle for arbitrary strings, including invalid UTF-8.
func FuzzCountMatchesReference(f *testing.F) {
	for _, s := range tricky {
		f.Add(s)
	}
	f.Add(string(alphabet))
	for _, s := range locomoSample(f, 50) {
		f.Add(s)
	}
	toks := tokenizers(f)
	f.Fuzz(func(t *testing.T, s string) {
		for _, tok := range toks {
			ref := refEncode(t, tok, s)
			if got := tok.Count(s); got != len(ref) {
				t.Fatalf("%s: Count(%q) = %d, want %d\nsplit: %q", tok.Name(), s, got, len(ref), split(tok, s))
			}
			if got := tok.Encode(s); !slices.Equal(got, ref) {
				t.Fatalf("%s: Encode(%q) = %v, want %v", tok.Name(), s, got, ref)
			}
			if got, want := split(tok, s), refSplit(t, compiled(tok), s); !slices.Equal(got, want) {
				t.Fatalf("%s: split(%q) = %q, want %q", tok.Name(), s, got, want)
			}
		}
	})
}
