package extractive

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// kind is what a token or an identifier is.
type kind uint8

const (
	kNone    kind = iota
	kWord         // a plain word
	kCap          // a capitalized word: a name candidate
	kAcronym      // all capitals: LGBTQ, NASA
	kName         // a name, possibly of several words ("New York", "Dr. Lee")
	kNumber       // a number, with its currency, unit or counted noun
	kDate         // 7 May 2023, 2023-05-07, May 7, Saturday
	kTime         // 1:56 pm, 10am
	kURL          // https://..., www....
	kEmail        // a@b.c
	kPath         // /etc/x, ./a, ~/x, C:\x, src/main.go
	kCode         // snake_case, camelCase, pkg.Func, foo(), --flag, `x y`, #12, @user
	kAbbrev       // e.g, a.m: neither a word nor an identifier
	kCarried      // an identifier a child node listed under Mentions
	kBare         // a number without unit or noun: weighs, is never listed
)

// kindWeight is how much covering one identifier of the kind is worth
// during sentence selection, against 1 per content word.
var kindWeight = [...]float64{
	kName: 2.5, kAcronym: 2.5, kCap: 2.5, kNumber: 3, kDate: 3, kTime: 3,
	kURL: 4, kEmail: 4, kPath: 4, kCode: 4, kCarried: 3, kBare: 1,
}

// tok is one token of a sentence: a byte range and its kind.
type tok struct {
	start, end int
	kind       kind
	flags      uint16 // see wordFlags; flagsUnknown until scan looks
	plain      bool   // lower-case ASCII letters only
}

func hasURLPrefix(t string) bool {
	if len(t) < 5 {
		return false
	}
	// The ':' or '.' of each prefix, where it must be, rules out words.
	switch t[0] | 0x20 {
	case 'h':
		return (t[4] == ':' || len(t) > 5 && t[5] == ':') && (hasPrefixFold(t, "http://") || hasPrefixFold(t, "https://"))
	case 'w':
		return t[3] == '.' && hasPrefixFold(t, "www.")
	case 'f':
		return (t[3] == ':' || t[4] == ':') && (hasPrefixFold(t, "ftp://") || hasPrefixFold(t, "file://"))
	}
	return false
}

func hasPrefixFold(s, p string) bool {
	return len(s) >= len(p) && strings.EqualFold(s[:len(p)], p)
}

// delimAt reports whether the rune at s[i] separates tokens, and its size.
// Commas between digits ("4,500") and "()" after a name ("foo()") do not.
func delimAt(s string, i int) (bool, int) {
	c := s[i]
	if c < utf8.RuneSelf {
		switch asciiClass[c] {
		case classOther:
			return false, 1
		case classDelim:
			return true, 1
		}
		switch c {
		case ',':
			return !(i > 0 && i+1 < len(s) && isDigit(s[i-1]) && isDigit(s[i+1])), 1
		case '(':
			return !(i > 0 && i+1 < len(s) && s[i+1] == ')' && (isASCIILetter(s[i-1]) || isDigit(s[i-1]) || s[i-1] == '_')), 1
		}
		return false, 1
	}
	r, sz := utf8.DecodeRuneInString(s[i:])
	if r == '’' {
		return false, sz
	}
	if unicode.IsSpace(r) || unicode.IsPunct(r) {
		return true, sz
	}
	if unicode.IsSymbol(r) && !unicode.Is(unicode.Sc, r) && r != '°' {
		return true, sz // emoji and other pictographs
	}
	return false, sz
}

// ASCII byte classes for delimAt.
const (
	classOther = iota
	classDelim
	classSpecial // ',' and '(': it depends on the neighbours
)

var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for _, c := range " \t\n\r\f\v\"{}[]<>|;`=*!?)" {
		t[c] = classDelim
	}
	t[','], t['('] = classSpecial, classSpecial
	return t
}()

// tokenize appends the tokens of s to toks, classified.
func tokenize(s string, toks []tok) []tok {
	i := 0
	for i < len(s) {
		// The common token: ASCII letters and then a delimiter. Nothing of
		// it is trimmed, and its kind follows from its case alone (see
		// letterKind); it is no URL, which needs a ':' or '.' there.
		if c := s[i]; c == ' ' {
			i++
			continue
		} else if isASCIILetter(c) {
			j := i + 1
			for j < len(s) && isASCIILetter(s[j]) {
				j++
			}
			if j == len(s) || letterEnd(s, j) {
				k, plain := letterKind(s[i:j])
				toks = append(toks, tok{start: i, end: j, kind: k, flags: flagsUnknown, plain: plain})
				i = j
				continue
			}
		}
		d, sz := delimAt(s, i)
		if d {
			i += sz
			continue
		}
		a := i
		if hasURLPrefix(s[i:]) {
			i = urlEnd(s, i)
			b := i
			for b > a && strings.IndexByte(".,:;!?'", s[b-1]) >= 0 {
				b--
			}
			toks = append(toks, tok{start: a, end: b, kind: kURL, flags: flagsUnknown})
			continue
		}
		i = tokenEnd(s, i)
		a, b := trimToken(s, a, i)
		if a < b {
			if k := classify(s[a:b]); k != kNone {
				toks = append(toks, tok{start: a, end: b, kind: k, flags: flagsUnknown})
			}
		}
	}
	return toks
}

// urlEnd returns where the URL starting at s[i] ends: at a space, a
// quote, an unbalanced bracket or a punctuation mark outside ASCII.
func urlEnd(s string, i int) int {
	depth := 0
	for i < len(s) {
		c := s[i]
		switch c {
		case ' ', '\t', '\n', '\r', '"', '<', '>', '`', '|', '{', '}':
			return i
		case '(', '[':
			depth++
		case ')', ']':
			if depth == 0 {
				return i
			}
			depth--
		}
		if c >= utf8.RuneSelf {
			r, sz := utf8.DecodeRuneInString(s[i:])
			if unicode.IsSpace(r) || (unicode.IsPunct(r) && r != '’') {
				return i
			}
			i += sz
			continue
		}
		i++
	}
	return i
}

// tokenEnd returns where the token starting at s[i] ends: at the next
// delimiter (see delimAt).
func tokenEnd(s string, i int) int {
	for i < len(s) {
		if c := s[i]; c < utf8.RuneSelf && asciiClass[c] == classOther {
			i++ // the common case
			continue
		}
		if d, sz := delimAt(s, i); d {
			break
		} else if s[i] == '(' { // "foo()"
			i += 2
		} else {
			i += sz
		}
	}
	return i
}

// letterEnd reports whether s[j], after an ASCII letter, ends the token
// as delimAt has it.
func letterEnd(s string, j int) bool {
	switch c := s[j]; {
	case c >= utf8.RuneSelf:
		return false
	case c == ',':
		return true // a comma is kept only between digits
	case c == '(':
		return j+1 >= len(s) || s[j+1] != ')' // "foo()" is one token
	default:
		return asciiClass[c] == classDelim
	}
}

// letterKind is classify for a token of ASCII letters: a plain word when
// all are lower case (plain reports it), code when a later one is upper
// case (camelCase), an acronym when all of two or more are upper case,
// else a capitalized word.
func letterKind(t string) (k kind, plain bool) {
	if c := t[0]; c >= 'a' && c <= 'z' {
		for i := 1; i < len(t); i++ {
			if t[i] < 'a' {
				return kCode, false
			}
		}
		return kWord, true
	}
	if len(t) >= 2 {
		for i := 1; i < len(t); i++ {
			if t[i] >= 'a' {
				return kCap, false
			}
		}
		return kAcronym, false
	}
	return kCap, false
}

// trimToken strips quotes, dashes and sentence punctuation from the ends
// of the raw token s[a:b], and a possessive "'s".
func trimToken(s string, a, b int) (int, int) {
	for a < b {
		c := s[a]
		switch {
		case c == '\'':
			a++
			continue
		case c == '-':
			if b-a > 2 && s[a+1] == '-' && isASCIILetter(s[a+2]) {
				return a, trimRight(s, a, b)
			}
			a++
			continue
		case c == '.':
			if strings.HasPrefix(s[a:b], "./") || strings.HasPrefix(s[a:b], "../") ||
				(b-a > 1 && (isASCIILetter(s[a+1]) || s[a+1] == '_')) {
				return a, trimRight(s, a, b)
			}
			a++
			continue
		case c >= utf8.RuneSelf:
			if r, sz := utf8.DecodeRuneInString(s[a:b]); r == '’' {
				a += sz
				continue
			}
		}
		break
	}
	return a, trimRight(s, a, b)
}

func trimRight(s string, a, b int) int {
	for b > a {
		c := s[b-1]
		if c == '.' || c == ',' || c == ':' || c == '\'' || c == '-' || c == '$' {
			b--
			continue
		}
		if c >= utf8.RuneSelf {
			if r, sz := utf8.DecodeLastRuneInString(s[a:b]); r == '’' {
				b -= sz
				continue
			}
		}
		break
	}
	// A "+" glued to code ("cfg.Host+"), not to an acronym ("LGBTQ+", "C++").
	if b-a > 2 && s[b-1] == '+' && (s[b-2] >= 'a' && s[b-2] <= 'z' || isDigit(s[b-2])) {
		b--
	}
	// A possessive: "Caroline's", "kids’".
	if b-a > 2 && s[b-1] == 's' && s[b-2] == '\'' {
		return b - 2
	}
	if b-a > 4 && s[b-1] == 's' && strings.HasSuffix(s[a:b-1], "’") {
		return b - 1 - len("’")
	}
	return b
}

// classify returns the kind of a trimmed token.
func classify(t string) kind {
	if t == "" {
		return kNone
	}
	if plainLower(t) {
		// Fast path: a plain lower-case word.
		if len(t) > 2 && hasURLPrefix(t) {
			return kURL
		}
		return kWord
	}
	if k, ok := classifyMarked(t); ok {
		return k
	}
	return classifyShape(t, shapeOf(t))
}

// plainLower reports whether t is lower-case ASCII letters, apostrophes
// and hyphens, starting with a letter.
func plainLower(t string) bool {
	if c := t[0]; !(c >= 'a' && c <= 'z') {
		return false
	}
	for i := 1; i < len(t); i++ {
		if d := t[i]; !(d >= 'a' && d <= 'z' || d == '\'' || d == '-') {
			return false
		}
	}
	return true
}

// classifyMarked returns the kind of a token its start marks: a URL, a
// flag, a path, a hashtag, handle or dotted name; ok is false for others.
func classifyMarked(t string) (k kind, ok bool) {
	c := t[0]
	if hasURLPrefix(t) {
		return kURL, true
	}
	if c == '-' && len(t) > 2 && t[1] == '-' {
		return kCode, true
	}
	if c == '/' || strings.HasPrefix(t, "./") || strings.HasPrefix(t, "../") || strings.HasPrefix(t, "~/") {
		if len(t) >= 2 && hasAlnum(t[1:]) {
			return kPath, true
		}
		return kNone, true
	}
	if len(t) >= 3 && isASCIILetter(c) && t[1] == ':' && (t[2] == '\\' || t[2] == '/') {
		return kPath, true
	}
	if c == '#' || c == '@' || c == '.' {
		if len(t) > 1 && hasAlnum(t[1:]) && !strings.ContainsRune(t[1:], '@') {
			return kCode, true
		}
	}
	return kNone, false
}

// A shape counts the classes of a token's characters.
type shape struct {
	letters, digits, upper, lower    int
	at, slash, backslash, dot, under bool
	firstUpper, firstLower           bool
}

func shapeOf(t string) shape {
	var sh shape
	for i, r := range t {
		switch {
		case r < utf8.RuneSelf && isDigit(byte(r)):
			sh.digits++
		case r == '@':
			sh.at = true
		case r == '/':
			sh.slash = true
		case r == '\\':
			sh.backslash = true
		case r == '.':
			sh.dot = true
		case r == '_':
			sh.under = true
		case unicode.IsLetter(r):
			sh.letters++
			if unicode.IsUpper(r) {
				sh.upper++
				if i == 0 {
					sh.firstUpper = true
				}
			} else if unicode.IsLower(r) {
				sh.lower++
				if i == 0 {
					sh.firstLower = true
				}
			}
		}
	}
	return sh
}

// classifyShape returns the kind of a token no start marks, from its
// shape sh.
func classifyShape(t string, sh shape) kind {
	letters, digits, upper := sh.letters, sh.digits, sh.upper
	if sh.at {
		if i := strings.IndexByte(t, '@'); i > 0 && strings.IndexByte(t[i:], '.') > 1 && letters > 0 {
			return kEmail
		}
		return kNone
	}
	if sh.backslash && letters > 0 {
		return kPath
	}
	if digits > 0 && letters == 0 && !sh.under {
		return classifyNumeric(t)
	}
	if sh.slash {
		return classifyRelPath(t)
	}
	if digits > 0 {
		if k := classifyNumeric(t); k != kNone {
			return k
		}
		if len(t) > 8 && (strings.HasPrefix(t, "0x") || strings.HasPrefix(t, "0X")) {
			return kNone // an address in a stack trace
		}
		return kCode // v1.2.3, IMG_7269, mp3, COVID-19
	}
	if letters == 0 {
		return kNone
	}
	if sh.under {
		return kCode
	}
	if strings.HasSuffix(t, "()") {
		return kCode
	}
	if sh.dot {
		long := false
		for _, seg := range strings.Split(t, ".") {
			if seg == "" {
				return kNone
			}
			if len(seg) > 1 {
				long = true
			}
		}
		if !long {
			return kAbbrev
		}
		return kCode
	}
	for _, r := range t {
		if !unicode.IsLetter(r) && !unicode.IsMark(r) && !strings.ContainsRune("'’-.+&", r) {
			return kNone // "A##%%": no word
		}
	}
	if sh.firstLower && upper > 0 {
		return kCode // camelCase
	}
	if sh.firstUpper {
		if letters >= 2 && upper == letters {
			return kAcronym
		}
		return kCap
	}
	return kWord
}

func hasAlnum(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return true
		}
	}
	return false
}

// classifyRelPath accepts src/main.go, github.com/a/b and a/b/c, and
// rejects and/or, he/she and 24/7.
func classifyRelPath(t string) kind {
	segs := strings.Split(t, "/")
	for i, s := range segs {
		if s == "" && i != len(segs)-1 {
			return kNone
		}
	}
	last := segs[len(segs)-1]
	if len(segs) >= 3 || strings.Contains(segs[0], ".") ||
		(strings.LastIndexByte(last, '.') > 0 && strings.LastIndexByte(last, '.') < len(last)-1) {
		return kPath
	}
	return kNone
}

// classifyNumeric classifies a token that holds digits: ISO and slashed
// dates, clock times, years, and numbers with a currency, a decimal part or
// a short unit suffix. It returns kNone for anything else.
func classifyNumeric(t string) kind {
	// ISO date, with an optional time part.
	if len(t) >= 8 && isDigit(t[0]) && isDigit(t[1]) && isDigit(t[2]) && isDigit(t[3]) && t[4] == '-' && isDigit(t[5]) {
		return kDate
	}
	if n := strings.Count(t, "/"); n == 2 {
		for _, seg := range strings.Split(t, "/") {
			if seg == "" || len(seg) > 4 || !allDigits(seg) {
				return kNone
			}
		}
		return kDate
	} else if n > 0 {
		return kNone // 24/7, 9/10
	}
	// Clock times: 1:56, 13:45:10, 1:56pm.
	if i := strings.IndexByte(t, ':'); i == 1 || i == 2 {
		if allDigits(t[:i]) && len(t) >= i+3 && isDigit(t[i+1]) && isDigit(t[i+2]) {
			return kTime
		}
		return kNone
	}
	body := t
	currency := false
	for _, p := range []string{"$", "€", "£", "¥", "₹", "+", "-", "~", "#"} {
		if strings.HasPrefix(body, p) {
			body = body[len(p):]
			currency = p != "+" && p != "-" && p != "~"
			break
		}
	}
	if body == "" || !isDigit(body[0]) {
		return kNone
	}
	i := 0
	for i < len(body) && (isDigit(body[i]) || body[i] == ',' || body[i] == '.' || body[i] == '-') {
		i++
	}
	suffix := body[i:]
	if suffix == "" {
		if !currency && len(body) == 4 && (body[:2] == "19" || body[:2] == "20") && allDigits(body) {
			return kDate // a year
		}
		return kNumber
	}
	if strings.EqualFold(suffix, "am") || strings.EqualFold(suffix, "pm") {
		if i <= 2 {
			return kTime
		}
		return kNone
	}
	if suffix == "%" || suffix == "°C" || suffix == "°F" || suffix == "°" || suffix == "+" {
		return kNumber
	}
	if len(suffix) <= 4 {
		for j := 0; j < len(suffix); j++ {
			if !isASCIILetter(suffix[j]) {
				return kNone
			}
		}
		return kNumber // 10k, 3.5GB, 7th, 1990s, 200ms
	}
	return kNone
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

var months = map[string]bool{
	"january": true, "february": true, "march": true, "april": true, "may": true, "june": true,
	"july": true, "august": true, "september": true, "october": true, "november": true, "december": true,
	"jan": true, "feb": true, "mar": true, "apr": true, "jun": true, "jul": true, "aug": true,
	"sep": true, "sept": true, "oct": true, "nov": true, "dec": true,
}

var weekdayAbbrevs = map[string]bool{
	"mon": true, "tue": true, "tues": true, "wed": true, "thu": true, "thur": true, "thurs": true,
	"fri": true, "sat": true, "sun": true,
}

var weekdays = map[string]bool{
	"monday": true, "tuesday": true, "wednesday": true, "thursday": true, "friday": true,
	"saturday": true, "sunday": true,
}

// nameConnectors may join two capitalized words into one name
// ("Bank of America", "Vincent van Gogh").
var nameConnectors = map[string]bool{
	"of": true, "de": true, "da": true, "del": true, "van": true, "von": true, "la": true, "le": true, "du": true,
}

// dayNumber reports whether t is a day of the month: 7, 07, 7th, 22nd.
func dayNumber(t string) bool {
	n := 0
	i := 0
	for i < len(t) && isDigit(t[i]) && i < 2 {
		n = n*10 + int(t[i]-'0')
		i++
	}
	if i == 0 || n < 1 || n > 31 {
		return false
	}
	switch suf := t[i:]; {
	case suf == "", strings.EqualFold(suf, "st"), strings.EqualFold(suf, "nd"),
		strings.EqualFold(suf, "rd"), strings.EqualFold(suf, "th"):
		return true
	}
	return false
}

func isYear(t string) bool {
	return len(t) == 4 && allDigits(t) && (t[:2] == "19" || t[:2] == "20")
}

// monthShape reports whether t may be a month name: capitalized, 3 to 9
// bytes.
func monthShape(t string) bool {
	return len(t) >= 3 && len(t) <= 9 && t[0] >= 'A' && t[0] <= 'Z'
}

// lowerWord lower-cases s, allocating only when s has an upper-case
// letter or a typographic apostrophe.
func lowerWord(s string) string {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c >= 'A' && c <= 'Z') || c >= utf8.RuneSelf {
			return string(foldKey(nil, s))
		}
	}
	return s
}

// foldKey appends s lower-cased, with ’ as ', to dst. Callers pass a
// stack buffer and index maps with string(key), which does not allocate.
func foldKey(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			dst = append(dst, c)
			continue
		}
		r, sz := utf8.DecodeRuneInString(s[i:])
		if r == '’' {
			dst = append(dst, '\'')
		} else {
			dst = utf8.AppendRune(dst, unicode.ToLower(r))
		}
		i += sz - 1
	}
	return dst
}

// stem folds a lower-case English word to a crude stem so that "painting",
// "painted" and "paints" count as one term. Display uses the most frequent
// surface form, never the stem.
func stem(w string) string {
	n := len(w)
	if n < 4 || w[n-1] >= utf8.RuneSelf {
		return w
	}
	switch {
	case strings.HasSuffix(w, "ies") && n > 4:
		return w[:n-3] + "y"
	case strings.HasSuffix(w, "ing") && n > 5:
		w = w[:n-3]
	case strings.HasSuffix(w, "ed") && n > 4 && !strings.HasSuffix(w, "eed"):
		w = w[:n-2]
	case strings.HasSuffix(w, "es") && n > 4 && (strings.HasSuffix(w, "shes") || strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "sses") || strings.HasSuffix(w, "xes")):
		return w[:n-2]
	case w[n-1] == 's' && w[n-2] != 's' && w[n-2] != 'u' && w[n-2] != 'i' && w[n-2] != '\'':
		return w[:n-1]
	default:
		return w
	}
	// After -ing/-ed: undouble a final consonant ("running" -> "run").
	n = len(w)
	if n >= 3 && w[n-1] == w[n-2] && strings.IndexByte("bdgmnprt", w[n-1]) >= 0 {
		return w[:n-1]
	}
	return w
}
