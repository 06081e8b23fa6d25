// Package textseg prepares text for full-text indexes and turns free text
// into search terms, the same way for every store, so that a query finds
// the same turns whichever store holds them.
//
// Words are runs of letters, digits, private-use characters and marks
// (categories L* N* Co M*). Scripts written without spaces between words
// would otherwise index a whole clause as one token. Their runs are
// rewritten for the index as the run's characters (a base character with
// its marks) and every pair of adjacent characters, each a separate token;
// a query's run becomes its pairs (or its single character), so any
// substring of the text is findable.
package textseg

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// wordRune reports whether r is part of a word: a letter, digit,
// private-use character or mark (categories L* N* Co M*), as SQLite's FTS5
// tokenizer is configured to see it.
func wordRune(r rune) bool {
	if r < 0x80 {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsNumber(r) ||
		unicode.IsMark(r) || unicode.Is(unicode.Co, r)
}

// unspacedScripts are the scripts whose text has no spaces between words.
var unspacedScripts = []*unicode.RangeTable{
	unicode.Han, unicode.Hiragana, unicode.Katakana,
	unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar,
}

// unspacedRune reports whether r is a base character of a script written
// without spaces.
func unspacedRune(r rune) bool {
	if r < 0x0e00 {
		return false
	}
	if r == 0x30fc || r == 0xff70 { // ー and its halfwidth form: kana length marks (script Common)
		return true
	}
	if unicode.IsMark(r) || !unicode.IsLetter(r) {
		return false
	}
	return unicode.IsOneOf(unspacedScripts, r)
}

// scan splits s into words of spaced scripts and runs of unspaced
// characters, dropping separators, and calls word or run for each in
// order. A run is given as its characters (a base character with its
// marks); the slice is reused between calls.
func scan(s string, word func(w string), run func(chars []string)) {
	var chars []string
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case unspacedRune(r):
			chars = chars[:0]
			for i < len(s) {
				r, n := utf8.DecodeRuneInString(s[i:])
				if !unspacedRune(r) {
					break
				}
				j := i + n
				for j < len(s) {
					m, k := utf8.DecodeRuneInString(s[j:])
					if !unicode.IsMark(m) {
						break
					}
					j += k
				}
				chars = append(chars, s[i:j])
				i = j
			}
			run(chars)
		case wordRune(r):
			j := i + n
			for j < len(s) {
				m, k := utf8.DecodeRuneInString(s[j:])
				if !wordRune(m) || unspacedRune(m) {
					break
				}
				j += k
			}
			word(s[i:j])
			i = j
		default:
			i += n
		}
	}
}

// IndexText returns s as it is given to an index whose tokenizer splits
// words as wordRune does (SQLite's FTS5, as strata configures it): s
// itself unless it holds unspaced text, whose runs are replaced by their
// characters and character pairs.
func IndexText(s string) string {
	if !hasUnspaced(s) {
		return s
	}
	return words(s, false)
}

// Words returns the words of s, separated by single spaces, with the runs
// of unspaced scripts replaced by their characters and character pairs: s
// as its index terms, for an index whose own parser splits text otherwise
// (PostgreSQL's, which keeps URLs, paths and hyphenated words whole). The
// words are those QueryTerms finds, before stop words are dropped and
// case is folded.
func Words(s string) string { return words(s, false) }

// ContentWords returns what Words returns without the stop words, which
// no query asks for (QueryTerms drops them): the text an index needs to
// find whatever a query can find, in about half the terms of chat text.
func ContentWords(s string) string { return words(s, true) }

func words(s string, dropStop bool) string {
	var b strings.Builder
	b.Grow(len(s) + len(s)/8)
	scan(s, func(w string) {
		if dropStop && isStopWord(w) {
			return
		}
		b.WriteString(w)
		b.WriteByte(' ')
	}, func(chars []string) {
		for _, c := range chars {
			b.WriteString(c)
			b.WriteByte(' ')
		}
		for k := 0; k+1 < len(chars); k++ {
			b.WriteString(chars[k])
			b.WriteString(chars[k+1])
			b.WriteByte(' ')
		}
	})
	return b.String()
}

// hasUnspaced reports whether s holds a character of an unspaced script.
func hasUnspaced(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0xe0 { // ASCII, or lead bytes of runes below U+0800
			continue
		}
		r, _ := utf8.DecodeRuneInString(s[i:])
		if unspacedRune(r) {
			return true
		}
	}
	return false
}

// MaxTerms bounds the number of terms a query is reduced to.
const MaxTerms = 64

// QueryTerms returns the search terms of free text: its words, lowercased,
// without English stop words, and the character pairs (or the single
// character) of its unspaced runs; each term once, in order of appearance.
func QueryTerms(text string) []string {
	var terms []string
	seen := map[string]bool{}
	add := func(t string) {
		if !seen[t] && len(terms) < MaxTerms {
			seen[t] = true
			terms = append(terms, t)
		}
	}
	scan(text, func(w string) {
		w = strings.ToLower(w)
		if !stopWords[w] && hasBase(w) {
			add(w)
		}
	}, func(chars []string) {
		if len(chars) == 1 {
			add(chars[0])
		}
		for k := 0; k+1 < len(chars); k++ {
			add(chars[k] + chars[k+1])
		}
	})
	return terms
}

// hasBase reports whether w holds a character other than a mark: a word
// of marks alone may tokenize to nothing once diacritics are removed.
func hasBase(w string) bool {
	for _, r := range w {
		if !unicode.IsMark(r) {
			return true
		}
	}
	return false
}

// StopWords returns the stop words, sorted: the words QueryTerms drops
// and ContentWords leaves out.
func StopWords() []string {
	out := make([]string, 0, len(stopWords))
	for w := range stopWords {
		out = append(out, w)
	}
	slices.Sort(out)
	return out
}

// isStopWord reports whether the word w, lowercased, is a stop word.
func isStopWord(w string) bool {
	if len(w) > maxStopLen {
		return false
	}
	for i := 0; i < len(w); i++ {
		if c := w[i]; c >= 0x80 {
			return stopWords[strings.ToLower(w)]
		} else if 'A' <= c && c <= 'Z' {
			var buf [maxStopLen]byte
			n := copy(buf[:], w)
			for j := range n {
				if 'A' <= buf[j] && buf[j] <= 'Z' {
					buf[j] += 'a' - 'A'
				}
			}
			return stopWords[string(buf[:n])]
		}
	}
	return stopWords[w]
}

// maxStopLen is the length in bytes of the longest stop word.
const maxStopLen = 10

// stopWords are dropped from queries: they match nearly every turn.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`
		a about above after again against all am an and any are as at
		be because been before being below between both but by
		can could did do does doing down during each few for from further
		had has have having he her here hers herself him himself his how
		i if in into is it its itself just me more most my myself
		no nor not of off on once only or other our ours ourselves out over own
		same she should so some such than that the their theirs them themselves
		then there these they this those through to too under until up
		very was we were what when where which while who whom why will with
		would you your yours yourself yourselves
		s t d ll m re ve don doesn didn isn aren wasn weren`) {
		m[w] = true
	}
	return m
}()
