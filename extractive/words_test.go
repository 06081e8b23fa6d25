package extractive

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// inSet is the map lookup the word sets replace.
func inSet(m map[string]bool, s string) bool {
	if len(s) > 24 {
		return false
	}
	lower := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' || c >= utf8.RuneSelf {
			lower = false
			break
		}
	}
	if lower {
		return m[s]
	}
	var a [32]byte
	return m[string(foldKey(a[:0], s))]
}

// TestWordSets checks that every word set and word flag answers as its
// map does, for every word of every map in several cases and for random
// strings.
func TestWordSets(t *testing.T) {
	sets := []struct {
		name string
		m    map[string]bool
		s    *wordSet
		flag uint16
	}{
		{"stopWords", stopWords, stopSet, fStop}, {"factVerbs", factVerbs, factVerbSet, fFactVerb},
		{"trivialSentences", trivialSentences, trivialSet, 0}, {"themeStop", themeStop, themeStopSet, 0},
		{"sentenceStarters", sentenceStarters, nil, fStarter}, {"unitWords", unitWords, nil, fUnit},
		{"months", months, nil, fMonth}, {"weekdays", weekdays, nil, fWeekday},
		{"weekdayAbbrevs", weekdayAbbrevs, nil, fWeekdayAbbrev}, {"nameConnectors", nameConnectors, nil, fConnector},
		{"titles", titles, titleSet, fTitle}, {"fillers", fillers, fillerSet, fFiller},
		{"subjects2", subjects2, nil, fSubject2}, {"subjects1", subjects1, nil, fSubject1},
	}
	var probes []string
	for _, x := range sets {
		for w := range x.m {
			probes = append(probes, w, strings.ToUpper(w), strings.ToUpper(w[:1])+w[1:], w+"s", w[:len(w)-1],
				strings.ReplaceAll(w, "'", "’"), strings.ReplaceAll(strings.ToUpper(w), "'", "’"))
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []rune("abcdeimnorstuyAEIMST'’ .-İıſK")
	for i := 0; i < 20000; i++ {
		var b strings.Builder
		for n := r.IntN(12); n >= 0; n-- {
			b.WriteRune(alphabet[r.IntN(len(alphabet))])
		}
		probes = append(probes, b.String())
	}
	probes = append(probes, "", strings.Repeat("a", 25), "I’M", "İ", "K")
	for _, p := range probes {
		if got, want := factSubject([]byte(p)), factSubjectSwitch(p); got != want {
			t.Errorf("factSubject(%q) = %d, want %d", p, got, want)
		}
	}
	for _, x := range sets {
		for _, p := range probes {
			if x.flag != 0 {
				if got, want := wordFlags(p)&x.flag != 0, inSet(x.m, p); got != want {
					t.Errorf("%s: wordFlags(%q) = %v, want %v", x.name, p, got, want)
				}
			}
			if x.s == nil {
				continue
			}
			if got, want := x.s.hasFold(p), inSet(x.m, p); got != want {
				t.Errorf("%s: hasFold(%q) = %v, want %v", x.name, p, got, want)
			}
			if got, want := x.s.has(p), x.m[p]; got != want {
				t.Errorf("%s: has(%q) = %v, want %v", x.name, p, got, want)
			}
			if got, want := x.s.hasBytes([]byte(p)), x.m[p]; got != want {
				t.Errorf("%s: hasBytes(%q) = %v, want %v", x.name, p, got, want)
			}
		}
	}
}

// TestNormalizedEqual checks normalizedEqual against normalizeTrivial.
func TestNormalizedEqual(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	alphabet := []rune("aB1 '’.,-İKé日ab  ")
	rnd := func() string {
		var b strings.Builder
		for n := r.IntN(10); n >= 0; n-- {
			b.WriteRune(alphabet[r.IntN(len(alphabet))])
		}
		if r.IntN(10) == 0 {
			b.WriteString("\xff")
		}
		return b.String()
	}
	for i := 0; i < 200000; i++ {
		s, o := rnd(), rnd()
		if r.IntN(4) == 0 {
			o = s
		}
		want := normalizeTrivial(o, nil)
		if got, exp := normalizedEqual(s, want), string(normalizeTrivial(s, nil)) == string(want); got != exp {
			t.Fatalf("normalizedEqual(%q, %q) = %v, want %v", s, want, got, exp)
		}
	}
}

// factSubjectSwitch is factSubject as it was written first.
func factSubjectSwitch(w string) int {
	switch w {
	case "i", "i'm", "i've", "i'd", "i'll", "we", "we're", "we've", "my", "our",
		"he", "she", "they", "he's", "she's", "they're":
		return 2
	case "it", "it's", "the", "this", "that":
		return 1
	}
	return 0
}

// TestLetterKind checks letterKind against classify.
func TestLetterKind(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	letters := "abcxyzABCXYZ"
	for i := 0; i < 100000; i++ {
		b := make([]byte, 1+r.IntN(8))
		for k := range b {
			b[k] = letters[r.IntN(len(letters))]
		}
		s := string(b)
		k, plain := letterKind(s)
		if want := classify(s); k != want {
			t.Fatalf("letterKind(%q) = %d, classify = %d", s, k, want)
		}
		if plain != (strings.ToLower(s) == s) {
			t.Fatalf("letterKind(%q): plain = %v", s, plain)
		}
	}
}

// TestNeedsCollapse checks needsCollapse against its definition.
func TestNeedsCollapse(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	alphabet := []string{"a", "b", " ", " ", "\t", "\n", "\u00a0", "\u3000", "é", "\xff", "\x7f", "Z", ".", "\u2028"}
	for i := 0; i < 300000; i++ {
		var b strings.Builder
		for n := r.IntN(40); n >= 0; n-- {
			if r.IntN(3) == 0 {
				b.WriteString(alphabet[r.IntN(len(alphabet))])
			} else {
				b.WriteString("abcdefgh"[:1+r.IntN(8)])
			}
		}
		s := b.String()
		want := strings.Contains(s, "  ")
		for _, c := range s {
			if c != ' ' && unicode.IsSpace(c) {
				want = true
			}
		}
		if got := needsCollapse(s); got != want {
			t.Fatalf("needsCollapse(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestSpaceBefore(t *testing.T) {
	for _, s := range []string{"", "-", " -", "a -b", "a-b", "a- -", "--", "a\xe2", "a \xe2\x80\x94", " ", "x-y -"} {
		for _, c := range []byte{'-', 0xE2} {
			if got, want := spaceBefore(s, c), strings.Contains(s, string([]byte{' ', c})); got != want {
				t.Errorf("spaceBefore(%q, %q) = %v, want %v", s, c, got, want)
			}
		}
	}
}
