package checkpoint

import (
	"testing"

	"pgregory.net/rapid"
)

// TestHasWordsNeverHidesAMatch is the property fitLedger's shortcut rests
// on: wherever containsWord finds a needle in a text, every word of the
// needle is a word of the text, so hasWords over the text's words lets
// the search run.
func TestHasWordsNeverHidesAMatch(t *testing.T) {
	// Few letters and many separators, so that matches are common.
	text := rapid.StringOfN(rapid.SampledFrom([]rune("ab1_ ./-:,\n")), 0, 60, -1)
	rapid.Check(t, func(rt *rapid.T) {
		hay := text.Draw(rt, "hay")
		var needle string
		if rapid.Bool().Draw(rt, "part") && len(hay) > 0 {
			i := rapid.IntRange(0, len(hay)-1).Draw(rt, "i")
			j := rapid.IntRange(i+1, len(hay)).Draw(rt, "j")
			needle = hay[i:j]
		} else {
			needle = text.Draw(rt, "needle")
		}
		words := map[string]bool{}
		addWords(words, hay)
		if containsWord(hay, needle) && !hasWords(words, needle) {
			rt.Fatalf("containsWord(%q, %q) holds, but hasWords says a word of it is not in the text", hay, needle)
		}
	})
}
