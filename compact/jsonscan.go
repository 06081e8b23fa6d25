package compact

import (
	"encoding/json"
	"unicode/utf8"
)

// The scanner below walks JSON that json.Valid has already accepted, so it
// only has to find where values begin and end. It hands back sub-slices of
// the input: a value strata does not change is written back as the same
// bytes.

// member is one key/value pair of a JSON object, in input order.
type member struct {
	key    string // decoded
	rawKey []byte // as written, quotes included
	val    []byte // as written
	off    int    // where val starts in the object's bytes
}

// kindOf names the JSON type of a value for error messages.
func kindOf(v []byte) string {
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

func isNull(v []byte) bool { return len(v) == 0 || (len(v) == 4 && string(v) == "null") }

func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipValue returns the index just past the value that starts at b[i].
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}

// skipString returns the index just past the string that starts at b[i].
func skipString(b []byte, i int) int {
	i++
	for i < len(b) {
		switch b[i] {
		case '\\':
			i += 2
			continue
		case '"':
			return i + 1
		}
		i++
	}
	return i
}

// objectMembers returns the members of a valid JSON object.
func objectMembers(b []byte) []member {
	var ms []member
	i := skipSpace(b, 1)
	for i < len(b) && b[i] != '}' {
		ks := i
		i = skipString(b, i)
		rawKey := b[ks:i]
		i = skipSpace(b, i)
		i = skipSpace(b, i+1) // ':'
		vs := i
		i = skipValue(b, i)
		ms = append(ms, member{key: decodeString(rawKey), rawKey: rawKey, val: b[vs:i], off: vs})
		i = skipSpace(b, i)
		if i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
		}
	}
	return ms
}

// arrayElements returns the elements of a valid JSON array.
func arrayElements(b []byte) [][]byte {
	els, _ := arrayElementsAt(b)
	return els
}

// arrayElementsAt returns the elements of a valid JSON array and where
// each starts in b.
func arrayElementsAt(b []byte) ([][]byte, []int) {
	var els [][]byte
	var offs []int
	i := skipSpace(b, 1)
	for i < len(b) && b[i] != ']' {
		vs := i
		i = skipValue(b, i)
		els = append(els, b[vs:i])
		offs = append(offs, vs)
		i = skipSpace(b, i)
		if i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
		}
	}
	return els, offs
}

// decodeString decodes a valid JSON string literal. Invalid UTF-8 becomes
// U+FFFD, as encoding/json does.
func decodeString(raw []byte) string {
	inner := raw[1 : len(raw)-1]
	plain := true
	for _, c := range inner {
		if c == '\\' || c >= utf8.RuneSelf {
			plain = false
			break
		}
	}
	if plain {
		return string(inner)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return string(inner)
	}
	return s
}

// lookup returns the value of the last member named key (encoding/json
// also keeps the last of duplicate keys).
func lookup(ms []member, key string) ([]byte, bool) {
	var v []byte
	ok := false
	for _, m := range ms {
		if m.key == key {
			v, ok = m.val, true
		}
	}
	return v, ok
}

// appendString appends s as a JSON string literal. It escapes only what
// JSON requires (quote, backslash, control characters), so text reads the
// same in the output as in Go.
func appendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// splice appends src (an object whose members are ms) with the value of
// its member key replaced by val, keeping every other byte; false if src
// has no such member.
func splice(dst, src []byte, ms []member, key string, val []byte) ([]byte, bool) {
	for k := len(ms) - 1; k >= 0; k-- {
		if m := ms[k]; m.key == key {
			dst = append(dst, src[:m.off]...)
			dst = append(dst, val...)
			return append(dst, src[m.off+len(m.val):]...), true
		}
	}
	return dst, false
}

// appendObject appends an object made of ms, with the value of each key in
// repl written instead of the member's own; keys of repl that ms lacks are
// added at the end in the order of extra.
func appendObject(dst []byte, ms []member, repl map[string][]byte, extra []string) []byte {
	dst = append(dst, '{')
	n := 0
	for _, m := range ms {
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		dst = append(dst, m.rawKey...)
		dst = append(dst, ':')
		if v, ok := repl[m.key]; ok {
			dst = append(dst, v...)
		} else {
			dst = append(dst, m.val...)
		}
	}
	for _, k := range extra {
		if _, ok := lookup(ms, k); ok {
			continue
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		dst = appendString(dst, k)
		dst = append(dst, ':')
		dst = append(dst, repl[k]...)
	}
	return append(dst, '}')
}
