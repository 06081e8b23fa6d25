package tiktoken

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// The pre-tokenizer patterns, as in tiktoken's openai_public.py (newer
// versions spell cl100k_base's with possessive quantifiers, to the same
// effect). The scanners below reproduce them with the semantics of
// tiktoken's backtracking engine; the tests check them against another
// backtracking engine.
const (
	o200kPattern  = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	cl100kPattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
)

// Character classes used by the patterns, as bits of a class byte.
const (
	cPrefix = 1 << iota // [^\r\n\p{L}\p{N}]: optional prefix of a word
	cUpper              // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
	cLower              // [\p{Ll}\p{Lm}\p{Lo}\p{M}]
	cLetter             // \p{L}
	cNumber             // \p{N}
	cSpace              // \s: Unicode White_Space, as unicode.IsSpace
	cPunct              // [^\s\p{L}\p{N}]
)

// classOf computes the class bits of r from Go's unicode tables, which the
// Go regular-expression engines use too.
func classOf(r rune) uint8 {
	var c uint8
	letter := unicode.Is(unicode.L, r)
	number := unicode.Is(unicode.N, r)
	space := unicode.IsSpace(r)
	mark := unicode.Is(unicode.M, r)
	if letter {
		c |= cLetter
	}
	if number {
		c |= cNumber
	}
	if space {
		c |= cSpace
	}
	if !letter && !number && r != '\r' && r != '\n' {
		c |= cPrefix
	}
	if !letter && !number && !space {
		c |= cPunct
	}
	both := mark || unicode.Is(unicode.Lm, r) || unicode.Is(unicode.Lo, r)
	if both || unicode.Is(unicode.Lu, r) || unicode.Is(unicode.Lt, r) {
		c |= cUpper
	}
	if both || unicode.Is(unicode.Ll, r) {
		c |= cLower
	}
	return c
}

// asciiClass holds the class bits of the ASCII characters.
var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for r := range rune(utf8.RuneSelf) {
		t[r] = classOf(r)
	}
	return t
}()

// bmpClass holds the class bits of the Basic Multilingual Plane; it is built
// by initClasses, before the first Tokenizer is returned.
var (
	bmpClass     []uint8
	bmpClassOnce sync.Once
)

func initClasses() {
	bmpClassOnce.Do(func() {
		t := make([]uint8, 1<<16)
		for r := range rune(len(t)) {
			t[r] = classOf(r)
		}
		bmpClass = t
	})
}

// classAt returns the class bits of the character at s[i] and its length in
// bytes. s must be valid UTF-8 and i < len(s).
func classAt(s string, i int) (uint8, int) {
	if b := s[i]; b < utf8.RuneSelf {
		return asciiClass[b], 1
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	if r < 1<<16 {
		return bmpClass[r], n
	}
	return classOf(r), n
}

// hasClass reports whether the character at s[i] exists and has a class bit
// in mask.
func hasClass(s string, i int, mask uint8) bool {
	if i >= len(s) {
		return false
	}
	c, _ := classAt(s, i)
	return c&mask != 0
}

// skipClass returns the end of the run of characters with a class bit in mask
// that starts at s[i].
func skipClass(s string, i int, mask uint8) int {
	for i < len(s) {
		if b := s[i]; b < utf8.RuneSelf {
			if asciiClass[b]&mask == 0 {
				return i
			}
			i++
			continue
		}
		c, n := classAt(s, i)
		if c&mask == 0 {
			return i
		}
		i += n
	}
	return i
}

// contraction matches (?i:'s|'t|'re|'ve|'m|'ll|'d) at s[i], returning the
// end of the match or i. tiktoken's engine folds case with Unicode simple
// case folding, under which s also matches U+017F LATIN SMALL LETTER LONG S.
func contraction(s string, i int) int {
	if i+1 >= len(s) || s[i] != '\'' {
		return i
	}
	switch s[i+1] {
	case 's', 'S', 't', 'T', 'm', 'M', 'd', 'D':
		return i + 2
	case 0xC5: // U+017F is C5 BF
		if i+2 < len(s) && s[i+2] == 0xBF {
			return i + 3
		}
	case 'r', 'R', 'v', 'V':
		if i+2 < len(s) && (s[i+2] == 'e' || s[i+2] == 'E') {
			return i + 3
		}
	case 'l', 'L':
		if i+2 < len(s) && (s[i+2] == 'l' || s[i+2] == 'L') {
			return i + 3
		}
	}
	return i
}

// upperStarLowerPlus matches [Upper]*[Lower]+ at s[q] the way a backtracking
// engine does: the greedy [Upper]* gives characters back until [Lower]+ can
// match, and [Lower]+ is then greedy. It returns the end of the match or -1.
func upperStarLowerPlus(s string, q int) int {
	e := skipClass(s, q, cUpper)
	k := e
	for !hasClass(s, k, cLower) {
		if k == q {
			return -1
		}
		_, n := utf8.DecodeLastRuneInString(s[q:k])
		k -= n
	}
	return skipClass(s, k, cLower)
}

// upperPlusLowerStar matches [Upper]+[Lower]* at s[q]; it returns the end of
// the match or -1. Nothing after it can fail, so it never backtracks.
func upperPlusLowerStar(s string, q int) int {
	if !hasClass(s, q, cUpper) {
		return -1
	}
	return skipClass(s, skipClass(s, q, cUpper), cLower)
}

// spaces matches the last three alternatives shared by both patterns,
// \s*[\r\n]+|\s+(?!\S)|\s+, at s[i], where s[i] is white space.
func spaces(s string, i int) int {
	e := skipClass(s, i, cSpace)
	// \s*[\r\n]+: \s* backs off to the last line break of the run, which
	// [\r\n]+ then takes. Multi-byte white space never contains these bytes.
	if k := strings.LastIndexAny(s[i:e], "\r\n"); k >= 0 {
		return i + k + 1
	}
	// \s+(?!\S): the whole run at the end of the text, otherwise the run
	// without its last character, which must leave at least one.
	if e == len(s) {
		return e
	}
	if _, n := utf8.DecodeLastRuneInString(s[i:e]); e-n > i {
		return e - n
	}
	// \s+: a single white-space character before a non-space.
	return e
}

// nextO200k returns the end of the o200k_base pre-token that starts at s[i].
func nextO200k(s string, i int) int {
	c, n := classAt(s, i)
	// Alternatives 1 and 2: a word with an optional leading character and
	// an optional contraction. The prefix is tried before its absence.
	if c&(cPrefix|cUpper|cLower) != 0 {
		if c&cPrefix != 0 {
			if e := upperStarLowerPlus(s, i+n); e >= 0 {
				return contraction(s, e)
			}
		}
		if c&(cUpper|cLower) != 0 {
			if e := upperStarLowerPlus(s, i); e >= 0 {
				return contraction(s, e)
			}
		}
		if c&cPrefix != 0 {
			if e := upperPlusLowerStar(s, i+n); e >= 0 {
				return contraction(s, e)
			}
		}
		if c&cUpper != 0 {
			if e := upperPlusLowerStar(s, i); e >= 0 {
				return contraction(s, e)
			}
		}
	}
	// \p{N}{1,3}
	if c&cNumber != 0 {
		return digits(s, i+n)
	}
	//  ?[^\s\p{L}\p{N}]+[\r\n/]*
	j := i
	if s[i] == ' ' {
		j++
	}
	if hasClass(s, j, cPunct) {
		j = skipClass(s, j, cPunct)
		for j < len(s) && (s[j] == '\r' || s[j] == '\n' || s[j] == '/') {
			j++
		}
		return j
	}
	return spaces(s, i)
}

// nextCl100k returns the end of the cl100k_base pre-token that starts at s[i].
func nextCl100k(s string, i int) int {
	if e := contraction(s, i); e > i {
		return e
	}
	c, n := classAt(s, i)
	// [^\r\n\p{L}\p{N}]?\p{L}+
	if c&cPrefix != 0 && hasClass(s, i+n, cLetter) {
		return skipClass(s, i+n, cLetter)
	}
	if c&cLetter != 0 {
		return skipClass(s, i+n, cLetter)
	}
	// \p{N}{1,3}
	if c&cNumber != 0 {
		return digits(s, i+n)
	}
	//  ?[^\s\p{L}\p{N}]+[\r\n]*
	j := i
	if s[i] == ' ' {
		j++
	}
	if hasClass(s, j, cPunct) {
		j = skipClass(s, j, cPunct)
		for j < len(s) && (s[j] == '\r' || s[j] == '\n') {
			j++
		}
		return j
	}
	return spaces(s, i)
}

// digits completes \p{N}{1,3} after its first character, which ends at s[i].
func digits(s string, i int) int {
	for range 2 {
		if i >= len(s) {
			break
		}
		c, n := classAt(s, i)
		if c&cNumber == 0 {
			break
		}
		i += n
	}
	return i
}
