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
		// Unless a speaker label follows: "... 10 kg. assistant: ...".
		k := j
		for k < len(s) && k-j <= 32 && s[k] != ' ' {
			k++
		}
		return k > j+1 && k < len(s) && s[k-1] == ':' && handleLike(s[j:k-1])
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
		if titleSet.hasFold(w) {
			return false
		}
		// Dotted abbreviations: "U.S", "a.m", "p.m".
		if len(w) >= 3 && w[len(w)-2] == '.' && strings.Count(w, ".")*2 >= len(w)-1 {
			return unicode.IsUpper(next) && (strings.EqualFold(w, "a.m") || strings.EqualFold(w, "p.m"))
		}
	}
	return true
}

// plainByte marks the ASCII bytes that can neither end a sentence nor
// need decoding: everything but . ! ? \n \r and bytes of multi-byte runes.
var plainByte = func() (t [256]bool) {
	for c := 0; c < utf8.RuneSelf; c++ {
		t[c] = c != '.' && c != '!' && c != '?' && c != '\n' && c != '\r'
	}
	return t
}()

// splitSentences appends the sentences of s to out as trimmed byte ranges.
// Sentences end at newlines, at . ! ? followed by a space (see
// dotEndsSentence for periods), and at full-width CJK stops. Periods inside
// tokens (3.5, example.com, ./a.go) are never boundaries because no space
// follows them. A sentence reaching maxSentenceBytes is cut (see cutLong).
func splitSentences(s string, out []span) []span {
	emit := func(start, end int) {
		for end > start {
			r, sz := utf8.DecodeLastRuneInString(s[start:end])
			if !unicode.IsSpace(r) {
				break
			}
			end -= sz
		}
		if end > start {
			out = append(out, span{start, end})
		}
	}
	start := -1
	i := 0
	for i < len(s) {
		if start < 0 {
			i = skipSpace(s, i)
			if i >= len(s) {
				break
			}
			start = i
		}
		j := i
		for j < len(s) && plainByte[s[j]] {
			j++
		}
		if j-start >= maxSentenceBytes {
			end := cutLong(s, start)
			emit(start, end)
			start, i = -1, end
			continue
		}
		if j >= len(s) {
			break
		}
		c := s[j]
		r, sz := rune(c), 1
		if c >= utf8.RuneSelf {
			r, sz = utf8.DecodeRuneInString(s[j:])
		}
		switch {
		case c == '\n' || c == '\r':
			emit(start, j)
			start, i = -1, j+1
		case c == '.' || c == '!' || c == '?' || narrowStop(r):
			strong := c == '!' || c == '?' || r == '।' || r == '؟' || r == '۔'
			k, more := stopsEnd(s, j+sz)
			k = skipClosers(s, k)
			strong = strong || more
			if k >= len(s) || spaceAt(s, k) {
				if strong || dotEndsSentence(s, wordStart(s, start, j), j, k) {
					emit(start, k)
					start = -1
				}
			}
			i = k
		case wideStop(r):
			k := skipClosers(s, j+sz)
			emit(start, k)
			start, i = -1, k
		default:
			i = j + sz
		}
	}
	if start >= 0 {
		emit(start, len(s))
	}
	return out
}

// skipSpace returns the index of the first byte at or after i that does
// not start a space.
func skipSpace(s string, i int) int {
	for i < len(s) {
		if c := s[i]; c < utf8.RuneSelf {
			if !isSpaceByte(c) {
				break
			}
			i++
		} else if r, sz := utf8.DecodeRuneInString(s[i:]); unicode.IsSpace(r) {
			i += sz
		} else {
			break
		}
	}
	return i
}

// stopsEnd returns where the run of stops (. ! ? and narrow stops) from k
// ends, and whether it has a ! or ?.
func stopsEnd(s string, k int) (int, bool) {
	strong := false
	for k < len(s) {
		d := s[k]
		if d == '.' || d == '!' || d == '?' {
			strong = strong || d != '.'
			k++
			continue
		}
		if d >= utf8.RuneSelf {
			if r2, sz2 := utf8.DecodeRuneInString(s[k:]); narrowStop(r2) {
				k += sz2
				continue
			}
		}
		break
	}
	return k, strong
}

// wordStart returns where the word ending at i begins, not before start.
func wordStart(s string, start, i int) int {
	for i > start && !isSpaceByte(s[i-1]) {
		i--
	}
	return i
}

// cutLong returns where a sentence starting at start and reaching
// maxSentenceBytes ends: at its last space past a quarter of the limit,
// else after its last character of a spaceless script, else at the next
// space (or the end).
func cutLong(s string, start int) int {
	limit := min(start+maxSentenceBytes, len(s))
	for limit > start && limit < len(s) && !utf8.RuneStart(s[limit]) {
		limit--
	}
	floor := start + maxSentenceBytes/4
	for k := limit - 1; k > floor; k-- {
		if s[k] == ' ' || s[k] == '\t' {
			return k
		}
	}
	for k := limit; k > floor; {
		r, sz := utf8.DecodeLastRuneInString(s[:k])
		if isSpaceless(r) {
			return k
		}
		k -= sz
	}
	for k := limit; k < len(s); k++ {
		if isSpaceByte(s[k]) {
			return k
		}
	}
	return len(s)
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
// space, and s itself when there is nothing to replace: no two spaces in a
// row and no other white space.
func collapseSpace(s string) string {
	if !needsCollapse(s) {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

// needsCollapse reports whether s has two spaces in a row or white space
// other than a space.
func needsCollapse(s string) bool {
	const lo, hi, ones = 0x0101010101010101, 0x8080808080808080, 0x2020202020202020
	prevSpace := false
	for i := 0; i < len(s); {
		if i+8 <= len(s) {
			x := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
				uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
			if (x|(x-ones))&hi == 0 { // 8 bytes of printable ASCII
				y := x ^ ones                                   // zero where a space
				z := ^(((y &^ hi) + (hi - lo)) | y | (hi - lo)) // 0x80 where a space, else 0
				if z&(z>>8) != 0 || prevSpace && z&0x80 != 0 {
					return true
				}
				prevSpace = z>>63 != 0
				i += 8
				continue
			}
		}
		c := s[i]
		if c == ' ' {
			if prevSpace {
				return true
			}
			prevSpace = true
			i++
			continue
		}
		prevSpace = false
		if c < utf8.RuneSelf {
			if isSpaceByte(c) {
				return true
			}
			i++
			continue
		}
		r, sz := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) {
			return true
		}
		i += sz
	}
	return false
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

// stripFillers removes a leading list bullet ("- ", "* ", "2. ") and
// interjections ("Wow, ", "Oh! ") from a sentence. It never returns an
// empty string.
func stripFillers(s string) string {
	s = stripBullet(s)
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
		if !fillerSet.hasFold(s[:i]) {
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

// stripBullet removes a list marker: "- ", "* ", "• ", "+ ", "1. ", "2) ".
func stripBullet(s string) string {
	i := 0
	switch {
	case strings.HasPrefix(s, "- ") || strings.HasPrefix(s, "* ") || strings.HasPrefix(s, "+ "):
		i = 2
	case strings.HasPrefix(s, "• "):
		i = len("• ")
	default:
		for i < len(s) && i < 3 && isDigit(s[i]) {
			i++
		}
		if i == 0 || i+1 >= len(s) || (s[i] != '.' && s[i] != ')') || s[i+1] != ' ' {
			return s
		}
		i += 2
	}
	if rest := strings.TrimLeft(s[i:], " "); rest != "" {
		return rest
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
