package proxy

import (
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-memory/strata/tiktoken"
)

// TestCountCacheEqualsTokenizer: the cached count of a text equals the
// tokenizer's, the first time and every time after, for texts that
// differ by little (a character changed, one longer).
func TestCountCacheEqualsTokenizer(t *testing.T) {
	tok, err := tiktoken.New("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	c := newCountCache(tok)
	words := []string{"the", "orchard", " ", "Paris", "🙂", "état", "\n", "tool_call", "{\"city\":\"Paris\"}", "1234567"}
	rapid.Check(t, func(rt *rapid.T) {
		var b strings.Builder
		for _, i := range rapid.SliceOfN(rapid.IntRange(0, len(words)-1), 0, 200).Draw(rt, "words") {
			b.WriteString(words[i])
		}
		s := b.String()
		for _, v := range []string{s, s + "x", strings.Replace(s, "the", "thee", 1), s} {
			if got, want := c.Count(v), tok.Count(v); got != want {
				rt.Fatalf("Count(%q) = %d, the tokenizer's %d", v, got, want)
			}
		}
	})
}
