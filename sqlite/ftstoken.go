package sqlite

import (
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// This file splits text into the tokens the full-text tables' tokenizer
// makes of it (see tokenizer): runs of letters, digits, private-use
// characters and marks, folded to lower case without diacritics, then
// reduced by Porter's stemmer. The in-memory summary index (sumindex.go)
// uses it to count the same terms FTS5 counts. For ASCII text the tokens
// are FTS5's exactly (TestTokensMatchFTS5 checks words and stems against
// FTS5's own vocabulary); outside ASCII, case folding and diacritics
// follow Go's Unicode tables, which can differ from SQLite's on rare
// characters.

// ftsTokens calls emit with each token of s, in order. The token's bytes
// are only valid during the call.
func ftsTokens(s string, emit func(tok []byte)) {
	var buf []byte
	i := 0
	for i < len(s) {
		c := s[i]
		if c < 0x80 {
			if !asciiWord(c) {
				i++
				continue
			}
		} else if r, n := utf8.DecodeRuneInString(s[i:]); !tokenRune(r) {
			i += n
			continue
		}
		buf = buf[:0]
		for i < len(s) {
			c := s[i]
			if c < 0x80 {
				if !asciiWord(c) {
					break
				}
				if 'A' <= c && c <= 'Z' {
					c += 'a' - 'A'
				}
				buf = append(buf, c)
				i++
				continue
			}
			r, n := utf8.DecodeRuneInString(s[i:])
			if !tokenRune(r) {
				break
			}
			buf = foldRune(buf, r)
			i += n
		}
		emit(porter(buf))
	}
}

func asciiWord(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// tokenRune reports whether a non-ASCII rune belongs to a token:
// categories L* N* Co M*, as the tokenizer is configured.
func tokenRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r) || unicode.Is(unicode.Co, r)
}

// foldRune appends r lowercased and without its diacritics (a combining
// diacritical mark alone folds to nothing).
func foldRune(buf []byte, r rune) []byte {
	if diacritic(r) {
		return buf
	}
	r = unicode.ToLower(unicode.ToUpper(r)) // folds µ (micro) to μ, as SQLite does
	var d [utf8.UTFMax]byte
	n := utf8.EncodeRune(d[:], r)
	dec := norm.NFD.Bytes(d[:n])
	base, m := utf8.DecodeRune(dec)
	if m == len(dec) || allMarks(dec[m:]) {
		return utf8.AppendRune(buf, base)
	}
	return utf8.AppendRune(buf, r)
}

// diacritic reports whether r is a combining diacritical mark (U+0300 to
// U+036F), which the tokenizer drops.
func diacritic(r rune) bool { return 0x300 <= r && r <= 0x36f }

func allMarks(b []byte) bool {
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if !diacritic(r) {
			return false
		}
		b = b[n:]
	}
	return true
}

// porterMax is the longest token (in bytes) the stemmer reduces; longer
// ones, and those under 3 bytes, pass unchanged.
const porterMax = 64

// porter returns the stem of the lowercased token t (reusing t's array),
// as FTS5's porter tokenizer makes it: Porter's 1980 algorithm, steps 1a
// to 5b.
func porter(t []byte) []byte {
	if len(t) > porterMax || len(t) < 3 {
		return t
	}
	// Step 1a: plurals.
	if n := len(t); t[n-1] == 's' {
		switch {
		case t[n-2] == 'e' && (n > 4 && t[n-4] == 's' && t[n-3] == 's' || n > 3 && t[n-3] == 'i'):
			t = t[:n-2] // -sses, -ies
		case t[n-2] != 's':
			t = t[:n-1]
		}
	}
	// Step 1b: -eed, -ed, -ing.
	if stem, ok := cut(t, "eed"); ok {
		if measureGt0(stem) {
			t = t[:len(t)-1]
		}
	} else if stem, ok := cut(t, "ed"); ok && hasVowel(stem) {
		t = step1b2(stem)
	} else if stem, ok := cut(t, "ing"); ok && hasVowel(stem) {
		t = step1b2(stem)
	}
	// Step 1c: y to i after a vowel.
	if t[len(t)-1] == 'y' && hasVowel(t[:len(t)-1]) {
		t[len(t)-1] = 'i'
	}
	t = applyRules(t, step2Rules, measureGt0)
	t = applyRules(t, step3Rules, measureGt0)
	t = step4(t)
	// Step 5a: a final e.
	if t[len(t)-1] == 'e' {
		stem := t[:len(t)-1]
		if measureGt1(stem) || measureEq1(stem) && !endsCVC(stem) {
			t = stem
		}
	}
	// Step 5b: a double l.
	if len(t) > 1 && t[len(t)-1] == 'l' && t[len(t)-2] == 'l' && measureGt1(t[:len(t)-1]) {
		t = t[:len(t)-1]
	}
	return t
}

// step1b2 tidies a stem whose -ed or -ing was removed.
func step1b2(t []byte) []byte {
	for _, r := range [][2]string{{"at", "ate"}, {"bl", "ble"}, {"iz", "ize"}} {
		if stem, ok := cut(t, r[0]); ok {
			return append(stem, r[1]...)
		}
	}
	c := t[len(t)-1]
	if len(t) >= 2 && !isVowel(c, false) && c != 'l' && c != 's' && c != 'z' && c == t[len(t)-2] {
		return t[:len(t)-1]
	}
	if measureEq1(t) && endsCVC(t) {
		return append(t, 'e')
	}
	return t
}

type porterRule struct{ suffix, repl string }

// The rules of steps 2 and 3, in the order they are tried: the first
// whose suffix ends the word decides, applied if its stem's measure is
// above 0 and not otherwise.
var step2Rules = []porterRule{
	{"ational", "ate"}, {"tional", "tion"}, {"enci", "ence"}, {"anci", "ance"}, {"izer", "ize"},
	{"logi", "log"}, {"bli", "ble"}, {"alli", "al"}, {"entli", "ent"}, {"eli", "e"}, {"ousli", "ous"},
	{"ization", "ize"}, {"ation", "ate"}, {"ator", "ate"}, {"alism", "al"}, {"iveness", "ive"},
	{"fulness", "ful"}, {"ousness", "ous"}, {"aliti", "al"}, {"iviti", "ive"}, {"biliti", "ble"},
}

var step3Rules = []porterRule{
	{"ical", "ic"}, {"ness", ""}, {"icate", "ic"}, {"iciti", "ic"}, {"ful", ""}, {"ative", ""}, {"alize", "al"},
}

// step4Suffixes are removed when the stem's measure is above 1 ("ion"
// also needs the stem to end in s or t); the first that ends the word
// decides.
var step4Suffixes = []string{"al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent",
	"ion", "ou", "ism", "ate", "iti", "ous", "ive", "ize"}

// applyRules applies the first rule of rules whose suffix ends t (with a
// stem of at least one letter) if cond holds for its stem. Rules are
// grouped by their suffix's last but one letter, as FTS5's generated
// steps are: only rules of t's group are tried.
func applyRules(t []byte, rules []porterRule, cond func([]byte) bool) []byte {
	if len(t) < 2 {
		return t
	}
	for _, r := range rules {
		if r.suffix[len(r.suffix)-2] != t[len(t)-2] {
			continue
		}
		if stem, ok := cut(t, r.suffix); ok {
			if cond(stem) {
				return append(stem, r.repl...)
			}
			return t
		}
	}
	return t
}

func step4(t []byte) []byte {
	if len(t) < 2 {
		return t
	}
	for _, suf := range step4Suffixes {
		if suf[len(suf)-2] != t[len(t)-2] {
			continue
		}
		stem, ok := cut(t, suf)
		if !ok {
			continue
		}
		c := measureGt1(stem)
		if suf == "ion" {
			c = c && (stem[len(stem)-1] == 's' || stem[len(stem)-1] == 't')
		}
		if c {
			return stem
		}
		return t
	}
	return t
}

// cut returns t without suffix if t ends with it and is longer.
func cut(t []byte, suffix string) ([]byte, bool) {
	if len(t) > len(suffix) && string(t[len(t)-len(suffix):]) == suffix {
		return t[:len(t)-len(suffix)], true
	}
	return t, false
}

// isVowel: a, e, i, o, u, and y after a consonant.
func isVowel(c byte, yIsVowel bool) bool {
	return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u' || yIsVowel && c == 'y'
}

// gobbleVC returns the length of the shortest prefix of t that holds a
// vowel followed by a consonant, or 0 if there is none; prevCons says
// whether the letter before t is a consonant.
func gobbleVC(t []byte, prevCons bool) int {
	cons := prevCons
	i := 0
	for ; i < len(t); i++ {
		cons = !isVowel(t[i], cons)
		if !cons {
			break
		}
	}
	for i++; i < len(t); i++ {
		cons = !isVowel(t[i], cons)
		if cons {
			return i + 1
		}
	}
	return 0
}

func measureGt0(t []byte) bool { return gobbleVC(t, false) > 0 }

func measureGt1(t []byte) bool {
	n := gobbleVC(t, false)
	return n > 0 && gobbleVC(t[n:], true) > 0
}

func measureEq1(t []byte) bool {
	n := gobbleVC(t, false)
	return n > 0 && gobbleVC(t[n:], true) == 0
}

// endsCVC reports whether t ends consonant, vowel, consonant, the last
// not w, x or y.
func endsCVC(t []byte) bool {
	last := t[len(t)-1]
	if last == 'w' || last == 'x' || last == 'y' {
		return false
	}
	mask, cons := 0, false
	for _, c := range t {
		cons = !isVowel(c, cons)
		mask <<= 1
		if cons {
			mask |= 1
		}
	}
	return mask&7 == 5
}

// hasVowel reports whether t holds a vowel (y counting as one after the
// first letter).
func hasVowel(t []byte) bool {
	for i, c := range t {
		if isVowel(c, i > 0) {
			return true
		}
	}
	return false
}
