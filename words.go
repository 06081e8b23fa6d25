package strata

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// queryWords are the lowercased words of a query worth matching: three
// letters or more, or any number.
func queryWords(q string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(q), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if (utf8.RuneCountInString(w) >= 3 || unicode.IsDigit([]rune(w)[0])) && !stopWords[w] && !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

var stopWords = map[string]bool{"the": true, "and": true, "for": true, "are": true, "was": true, "were": true,
	"you": true, "what": true, "when": true, "where": true, "which": true, "who": true, "how": true, "did": true,
	"does": true, "with": true, "that": true, "this": true, "from": true, "have": true, "has": true, "had": true}

// overlap counts the query words found in text, a word matching another
// when one starts with the other and they share at least four letters
// (so "deploy" matches "deployed").
func overlap(words []string, text string) int {
	return len(wordsIn(words, text))
}

// wordsIn returns the indexes of the words of words that text holds, as
// overlap matches them.
func wordsIn(words []string, text string) []int {
	if len(words) == 0 {
		return nil
	}
	if isASCII(text) {
		return wordsInASCII(words, text)
	}
	return wordsInSet(words, text)
}

// wordsInSet is wordsIn by the set of the text's lowercased words.
func wordsInSet(words []string, text string) []int {
	have := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		have[w] = true
	}
	var out []int
	for i, q := range words {
		if have[q] {
			out = append(out, i)
			continue
		}
		if len(q) < 4 {
			continue
		}
		for w := range have {
			if len(w) >= 4 && (strings.HasPrefix(w, q) || strings.HasPrefix(q, w)) {
				out = append(out, i)
				break
			}
		}
	}
	return out
}

// wordsInASCII is wordsIn for ASCII text, without building the text's
// set of words: each word is lowercased in place of a small buffer and
// compared with the query words not matched yet.
func wordsInASCII(words []string, text string) []int {
	found := make([]bool, len(words))
	left := len(words)
	var buf [64]byte
	for i := 0; i < len(text) && left > 0; {
		if !asciiAlnum(text[i]) {
			i++
			continue
		}
		j := i
		for j < len(text) && asciiAlnum(text[j]) {
			j++
		}
		var w []byte
		if j-i <= len(buf) {
			w = buf[:j-i]
		} else {
			w = make([]byte, j-i)
		}
		for k := range w {
			c := text[i+k]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			w[k] = c
		}
		for q, qw := range words {
			if found[q] {
				continue
			}
			// (string(...) in a comparison does not copy.)
			if string(w) == qw || len(qw) >= 4 && len(w) >= 4 &&
				(len(w) >= len(qw) && string(w[:len(qw)]) == qw || len(qw) >= len(w) && qw[:len(w)] == string(w)) {
				found[q] = true
				left--
			}
		}
		i = j
	}
	var out []int
	for q, ok := range found {
		if ok {
			out = append(out, q)
		}
	}
	return out
}

func asciiAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
