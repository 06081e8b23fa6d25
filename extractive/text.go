package extractive

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file splits text into sentences and sentences into tokens. It is
// hand-written rather than regexp-based: it runs over every turn of every
// import, and one pass over the bytes is several times faster than a dozen
// regular expressions.

// maxSentenceBytes is where an unpunctuated run of text is cut into several
// sentences: at its last space, else after its last character of a script
// written without spaces (Thai, Chinese, Japanese), else at the next space.
const maxSentenceBytes = 480

// span is a byte range [start, end) of a string.
type span struct{ start, end int }

// isSpaceless reports whether r belongs to a script written without spaces
// between words, where any character boundary is a word boundary.
func isSpaceless(r rune) bool {
	if r < 0x0E00 {
		return false
	}
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana,
		unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar)
}

func isSpaceByte(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// spaceAt reports whether s has a white space rune at byte i.
func spaceAt(s string, i int) bool {
	if i >= len(s) {
		return false
	}
	if c := s[i]; c < utf8.RuneSelf {
		return isSpaceByte(c)
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return unicode.IsSpace(r)
}

// wideStop reports whether r ends a sentence by itself, with no space after
// it (full-width CJK punctuation).
func wideStop(r rune) bool {
	return r == '。' || r == '！' || r == '？' || r == '｡'
}

// narrowStop reports whether r ends a sentence when a space follows.
func narrowStop(r rune) bool {
	return r == '…' || r == '।' || r == '؟' || r == '۔'
}

// isCloser reports whether c may follow a sentence's final punctuation and
// still belong to the sentence.
func isCloser(r rune) bool {
	switch r {
	case '"', '\'', ')', ']', '}', '”', '’', '»', '」', '』', '）', '*':
		return true
	}
	return false
}

// skipClosers returns the index after any closing quotes or brackets at i.
func skipClosers(s string, i int) int {
	for i < len(s) {
		r, sz := utf8.DecodeRuneInString(s[i:])
		if !isCloser(r) {
			break
		}
		i += sz
	}
	return i
}

// titles are abbreviations after which a period never ends a sentence.
var titles = map[string]bool{
	"mr": true, "mrs": true, "ms": true, "dr": true, "prof": true, "st": true,
	"mt": true, "vs": true, "sr": true, "jr": true, "fig": true, "e.g": true,
	"i.e": true, "cf": true, "approx": true, "ca": true,
}

// dotEndsSentence decides whether the period run s[dot:after] that ends the
// word starting at wordStart is a sentence boundary. It is not after a title
// ("Dr."), "e.g.", an initial ("J."), a dotted abbreviation ("U.S."), nor
// before a lower-case word ("approx. two").
func dotEndsSentence(s string, wordStart, dot, after int) bool {
	j := after
	for j < len(s) && spaceAt(s, j) {
		_, sz := utf8.DecodeRuneInString(s[j:])
		j += sz
	}
	if j >= len(s) {
		return true
	}
	next, _ := utf8.DecodeRuneInString(s[j:])
	if unicode.IsLower(next) {
		return false
	}
	if after-dot > 1 { // an ellipsis before a capital
		return true
	}
	w := s[wordStart:dot]
	for len(w) > 0 && strings.IndexByte("(\"'[", w[0]) >= 0 {
		w = w[1:]
	}
	if len(w) == 1 && w[0] >= 'A' && w[0] <= 'Z' {
		return false // an initial
	}
	if len(w) <= 6 {
		if inSet(titles, w) {
			return false
		}
		// Dotted abbreviations: "U.S", "a.m", "p.m".
		if len(w) >= 3 && w[len(w)-2] == '.' && strings.Count(w, ".")*2 >= len(w)-1 {
			return unicode.IsUpper(next) && (strings.EqualFold(w, "a.m") || strings.EqualFold(w, "p.m"))
		}
	}
	return true
}

// splitSentences appends the sentences of s to out as trimmed byte ranges.
// Sentences end at newlines, at . ! ? followed by a space (see
// dotEndsSentence for periods), and at full-width CJK stops. Periods inside
// tokens (3.5, example.com, ./a.go) are never boundaries because no space
// follows them.
func splitSentences(s string, out []span) []span {
	start := -1
	lastSpace, lastWide := -1, -1
	wordStart := 0
	emit := func(end int) {
		e := end
		for e > start {
			r, sz := utf8.DecodeLastRuneInString(s[start:e])
			if !unicode.IsSpace(r) {
				break
			}
			e -= sz
		}
		if e > start {
			out = append(out, span{start, e})
		}
		start, lastSpace, lastWide = -1, -1, -1
	}
	i := 0
	for i < len(s) {
		c := s[i]
		var r rune
		sz := 1
		if c < utf8.RuneSelf {
			r = rune(c)
		} else {
			r, sz = utf8.DecodeRuneInString(s[i:])
		}
		space := c == ' ' || c == '\t' || c == '\f' || c == '\v' || (c >= utf8.RuneSelf && unicode.IsSpace(r))
		if start < 0 {
			if space || c == '\n' || c == '\r' {
				i += sz
				continue
			}
			start, wordStart = i, i
		}
		if c < utf8.RuneSelf && c != '.' && c != '!' && c != '?' && c != '\n' && c != '\r' && !space {
			i++ // the common case: an ASCII letter, digit or mark
			if i-start >= maxSentenceBytes {
				goto long
			}
			continue
		}
		switch {
		case c == '\n' || c == '\r':
			emit(i)
			i++
			continue
		case space:
			lastSpace = i
			i += sz
			wordStart = i
		case c == '.' || c == '!' || c == '?' || narrowStop(r):
			j := i + sz
			strong := c == '!' || c == '?'
			for j < len(s) {
				d := s[j]
				if d == '.' || d == '!' || d == '?' {
					strong = strong || d != '.'
					j++
					continue
				}
				if d >= utf8.RuneSelf {
					if r2, sz2 := utf8.DecodeRuneInString(s[j:]); narrowStop(r2) {
						j += sz2
						continue
					}
				}
				break
			}
			j = skipClosers(s, j)
			if j >= len(s) || spaceAt(s, j) || s[j] == '\n' || s[j] == '\r' {
				if strong || r == '।' || r == '؟' || r == '۔' || dotEndsSentence(s, wordStart, i, j) {
					emit(j)
					i = j
					continue
				}
			}
			i = j
		case wideStop(r):
			j := skipClosers(s, i+sz)
			emit(j)
			i = j
			continue
		default:
			if sz > 1 && isSpaceless(r) {
				lastWide = i + sz
			}
			i += sz
		}
	long:
		if start >= 0 && i-start >= maxSentenceBytes {
			min := start + maxSentenceBytes/4
			switch {
			case lastSpace > min:
				emit(lastSpace)
				i = lastSpace
			case lastWide > min:
				emit(lastWide)
				i = lastWide
			}
		}
	}
	if start >= 0 {
		emit(len(s))
	}
	return out
}

// cutAt returns a prefix length of s that is at most max bytes and does not
// cut a word: it backs up to a space, or to a character boundary in a
// spaceless script, when one lies within the last 256 bytes; else to a rune
// boundary.
func cutAt(s string, max int) int {
	if len(s) <= max {
		return len(s)
	}
	i := max
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	for j := i; j > 0 && j > max-256; {
		r, sz := utf8.DecodeLastRuneInString(s[:j])
		if unicode.IsSpace(r) || isSpaceless(r) {
			return j
		}
		j -= sz
	}
	return i
}

// tailAt returns an index from which the last ~max bytes of s start at a
// word boundary.
func tailAt(s string, max int) int {
	if len(s) <= max {
		return 0
	}
	i := len(s) - max
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	for j := i; j < len(s) && j < i+256; {
		r, sz := utf8.DecodeRuneInString(s[j:])
		if unicode.IsSpace(r) {
			return j + sz
		}
		j += sz
	}
	return i
}

// collapseSpace returns s with every run of white space replaced by one
// space, and s itself when there is nothing to replace.
func collapseSpace(s string) string {
	clean := true
	prevSpace := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			clean = false
			break
		}
		if isSpaceByte(c) {
			if c != ' ' || prevSpace {
				clean = false
				break
			}
			prevSpace = true
		} else {
			prevSpace = false
		}
	}
	if clean {
		return s
	}
	hasSpecial := false
	for _, r := range s {
		if unicode.IsSpace(r) && r != ' ' {
			hasSpecial = true
			break
		}
	}
	if !hasSpecial && !strings.Contains(s, "  ") {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

// maxRunBytes is the longest run of text without a space kept whole in a
// sentence; longer runs (base64, minified code, hex dumps) are blobs, not
// words, and keep only their first blobKeepBytes, then "…". Runs in
// spaceless scripts are exempt.
const (
	maxRunBytes   = 256
	blobKeepBytes = 48
)

// elideBlobs shortens the blobs of s (see maxRunBytes).
func elideBlobs(s string) string {
	if len(s) <= maxRunBytes {
		return s
	}
	var b strings.Builder
	last, runStart := 0, 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && s[i] != ' ' {
			continue
		}
		if i-runStart > maxRunBytes {
			r, _ := utf8.DecodeRuneInString(s[runStart:])
			if !isSpaceless(r) {
				cut := runStart + blobKeepBytes
				for !utf8.RuneStart(s[cut]) {
					cut--
				}
				b.WriteString(s[last:cut])
				b.WriteString("…")
				last = i
			}
		}
		runStart = i + 1
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// fillers are interjections stripped from the start of a sentence when a
// comma or an exclamation mark follows them ("Wow, that is cool").
var fillers = map[string]bool{
	"wow": true, "oh": true, "ooh": true, "yeah": true, "yep": true, "yes": true,
	"well": true, "so": true, "hey": true, "hi": true, "ok": true, "okay": true,
	"um": true, "uh": true, "hmm": true, "ah": true, "aw": true, "aww": true,
	"haha": true, "lol": true, "omg": true, "totally": true, "honestly": true,
	"anyway": true, "anyways": true, "btw": true, "hello": true, "yay": true,
	"cool": true, "great": true, "nice": true, "sure": true, "right": true,
	"alright": true, "gosh": true, "whoa": true, "yup": true, "ha": true,
}

// stripFillers removes leading interjections ("Wow, ", "Oh! ") from a
// sentence. It never returns an empty string.
func stripFillers(s string) string {
	for k := 0; k < 3; k++ {
		i := 0
		for i < len(s) && i < 12 && isASCIILetter(s[i]) {
			i++
		}
		if i == 0 || i >= len(s)-2 || i == 12 {
			return s
		}
		if s[i] != ',' && s[i] != '!' {
			return s
		}
		if !inSet(fillers, s[:i]) {
			return s
		}
		j := i + 1
		for j < len(s) && (s[j] == '!' || s[j] == ',' || s[j] == '.') {
			j++
		}
		if j >= len(s) || s[j] != ' ' {
			return s
		}
		rest := strings.TrimLeft(s[j:], " ")
		if rest == "" {
			return s
		}
		s = rest
	}
	return s
}

func isASCIILetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isDigit(c byte) bool       { return c >= '0' && c <= '9' }

// isWordRune reports whether r is part of a word for containsWord.
func isWordRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

// containsWord reports whether needle occurs in hay with no letter, digit
// or underscore glued to either end (unless the needle's own end is not a
// word character, as in "LGBTQ+" or "foo()").
func containsWord(hay, needle string) bool {
	if needle == "" {
		return false
	}
	first, _ := utf8.DecodeRuneInString(needle)
	last, _ := utf8.DecodeLastRuneInString(needle)
	checkL := isWordRune(first) && !isSpaceless(first)
	checkR := isWordRune(last) && !isSpaceless(last)
	off := 0
	for {
		i := strings.Index(hay[off:], needle)
		if i < 0 {
			return false
		}
		i += off
		ok := true
		if checkL && i > 0 {
			r, _ := utf8.DecodeLastRuneInString(hay[:i])
			ok = !isWordRune(r)
		}
		if ok && checkR && i+len(needle) < len(hay) {
			r, _ := utf8.DecodeRuneInString(hay[i+len(needle):])
			ok = !isWordRune(r)
		}
		if ok {
			return true
		}
		off = i + 1
		for off < len(hay) && !utf8.RuneStart(hay[off]) {
			off++
		}
	}
}
