package checkpoint

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Markdown in what the sections quote: a conversation's (or a model's)
// headings, emphasis and decorations are its layout, not its content.

// plainText returns a line without its Markdown layout: heading hashes,
// list markers and the symbols it opens with (✓, ✅, →, •), and emphasis
// markers (**bold**,
// __bold__, *em*) that open and close around words outside code spans.
// Markers that are part of code (**kwargs, __init__, *.go) stay.
func plainText(t string) string {
	t = strings.TrimSpace(t)
	for {
		// Until nothing changes: removing one layer may show another.
		u := strings.TrimSpace(dropDecorations(stripEmphasis(t)))
		u, _, _ = unbullet(u)
		if strings.HasPrefix(u, "#") {
			if h := strings.TrimLeft(u, "#"); h == "" || h[0] == ' ' {
				u = strings.TrimSpace(h)
			}
		}
		if u == t {
			return t
		}
		t = u
	}
}

// dropDecorations strips the symbols a line opens with: check marks,
// arrows, bullets, emoji, and the spaces after them.
func dropDecorations(t string) string {
	for t != "" {
		r, n := utf8.DecodeRuneInString(t)
		if r == ' ' || r >= 0x80 && (unicode.Is(unicode.So, r) || unicode.Is(unicode.Sm, r) || unicode.Is(unicode.Sk, r) ||
			r == '•' || r == '·' || r == '\uFE0F' || r == '\u200D') {
			t = t[n:]
			continue
		}
		break
	}
	return t
}

// stripEmphasis removes emphasis markers that pair up around words,
// outside `code`.
func stripEmphasis(t string) string {
	if !strings.ContainsAny(t, "*_") {
		return t
	}
	var b strings.Builder
	for i := 0; i < len(t); {
		c := t[i]
		if c == '`' {
			j := strings.IndexByte(t[i+1:], '`')
			if j < 0 {
				b.WriteString(t[i:])
				break
			}
			b.WriteString(t[i : i+j+2])
			i += j + 2
			continue
		}
		if c == '*' || c == '_' {
			m := t[i : i+1]
			if i+1 < len(t) && t[i+1] == c {
				m = t[i : i+2]
			}
			if end, ok := emphasisEnd(t, i, m); ok {
				b.WriteString(stripEmphasis(t[i+len(m) : end]))
				i = end + len(m)
				continue
			}
			b.WriteString(m)
			i += len(m)
			continue
		}
		b.WriteByte(c)
		i++
	}
	return b.String()
}

// emphasisEnd finds the marker m that closes the one opening at i: the
// opening starts a word and is followed by text, the closing ends one.
// A single underscore is never emphasis here (snake_case), nor a pair of
// them around one word (__init__).
func emphasisEnd(t string, i int, m string) (int, bool) {
	if m == "_" {
		return 0, false
	}
	if i > 0 && (isWordByte(t[i-1]) || t[i-1] == m[0]) {
		return 0, false
	}
	from := i + len(m)
	if from >= len(t) || t[from] == ' ' || t[from] == m[0] {
		return 0, false
	}
	for j := from + 1; j+len(m) <= len(t); j++ {
		if t[j] == '`' {
			return 0, false
		}
		if t[j:j+len(m)] != m || t[j-1] == ' ' {
			continue
		}
		after := j + len(m)
		if after < len(t) && (isWordByte(t[after]) || t[after] == m[0]) {
			continue
		}
		inner := t[from:j]
		if m == "__" && !strings.ContainsAny(inner, " -.:") {
			return 0, false
		}
		return j, true
	}
	return 0, false
}

// headingOnly reports whether a line of a list or of prose is only a
// heading: "# ...", one of the checkpoint's own headings, a short line
// emphasized whole that ends with a colon or is in Title Case
// ("**Key Decisions:**", "✓ **Technical Decisions**"), or a Title Case
// label ending with a colon ("Next Steps:").
func headingOnly(t string) bool {
	t = strings.TrimSpace(t)
	if strings.HasPrefix(t, "#") {
		return true
	}
	t = strings.TrimSpace(dropDecorations(t))
	if t == "" {
		return true
	}
	if _, rest, ok := heading(t); ok && rest == "" {
		return true // one of the checkpoint's own headings
	}
	plain := strings.TrimSpace(dropDecorations(stripEmphasis(t)))
	if len(strings.Fields(plain)) > 6 || strings.ContainsAny(plain, "`.!?") {
		return false
	}
	label := strings.HasSuffix(plain, ":")
	if !titleCase(strings.TrimSuffix(plain, ":")) && !(label && plain != t) {
		return false
	}
	if label {
		return true
	}
	for _, m := range []string{"**", "__"} {
		if plain != t && strings.HasPrefix(t, m) && (strings.HasSuffix(t, m) || strings.HasSuffix(t, ":"+m)) {
			return true
		}
	}
	return false
}

// titleCase reports whether every word of s but the small ones starts
// with a capital.
func titleCase(s string) bool {
	ws := strings.Fields(s)
	if len(ws) == 0 {
		return false
	}
	for _, w := range ws {
		switch strings.ToLower(w) {
		case "&", "and", "of", "the", "a", "to", "for", "in", "on", "with", "or":
			continue
		}
		if r, _ := utf8.DecodeRuneInString(w); !unicode.IsUpper(r) {
			return false
		}
	}
	return true
}

// noneWords are the words of an item that says there is nothing.
var noneWords = setOf(`none no nothing n/a na yet so far identified specified noted given stated explicit additional
other any constraints constraint decisions decision preferences steps step key items item at this time mentioned
found known currently in progress pending`)

// noneLike reports whether an item only says that there is nothing
// ("None.", "None identified", "No constraints yet", "Constraints: none").
func noneLike(t string) bool {
	t = strings.TrimSpace(stripEmphasis(t))
	if isNone(t) {
		return true
	}
	if label, rest, ok := strings.Cut(t, ":"); ok && len(strings.Fields(label)) <= 4 && noneLike(rest) {
		return true
	}
	w := strings.Fields(strings.ToLower(strings.Trim(t, " .()*_!")))
	if len(w) == 0 || len(w) > 5 {
		return len(w) == 0
	}
	if w[0] != "none" && w[0] != "no" && w[0] != "nothing" && w[0] != "n/a" {
		return false
	}
	for _, x := range w {
		if !noneWords[strings.Trim(x, ".,;:")] {
			return false
		}
	}
	return true
}
