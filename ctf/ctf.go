package ctf

import (
	"fmt"
	"strconv"
	"strings"
)

// Version is the CTF version this package reads and writes.
const Version = 1

// Magic starts every header line.
const Magic = "#CTF"

// The glyphs of the escape scheme, as UTF-8. All four start with the bytes
// 0xE2 0x90 and differ in the third byte.
const (
	GlyphTab = "\u2409" // ␉ SYMBOL FOR HORIZONTAL TABULATION: a TAB in the value
	GlyphLF  = "\u240A" // ␊ SYMBOL FOR LINE FEED: an LF in the value
	GlyphCR  = "\u240D" // ␍ SYMBOL FOR CARRIAGE RETURN: a CR in the value
	GlyphEsc = "\u241B" // ␛ SYMBOL FOR ESCAPE: the next glyph (or "-") is literal
)

// NullField is the field that stands for a null value.
const NullField = "-"

const (
	glyphLead = 0xE2 // first byte of every glyph
	glyphMid  = 0x90 // second byte of every glyph
	tabLast   = 0x89 // third byte of ␉
	lfLast    = 0x8A // third byte of ␊
	crLast    = 0x8D // third byte of ␍
	escLast   = 0x9B // third byte of ␛
)

// escDash is a value that is exactly "-".
const escDash = GlyphEsc + "-"

// Value is one field of a row: a string, or null.
type Value struct {
	S    string
	Null bool
}

// Str returns the non-null Value s.
func Str(s string) Value { return Value{S: s} }

// Null returns the null Value.
func Null() Value { return Value{Null: true} }

// String returns the value as it appears in a row (escaped; "-" when null).
func (v Value) String() string {
	if v.Null {
		return NullField
	}
	return Escape(v.S)
}

// Attr is a key=value pair of the header line other than fields=.
type Attr struct {
	Key, Value string
}

// Header is the first line of a block.
type Header struct {
	// Version is the format version; 0 means Version when encoding.
	Version int
	// Fields names the columns of every row, in order. It has at least one
	// name; names are unique.
	Fields []string
	// Attrs are the other key=value pairs, in the order of the line, such
	// as turns=2 or type=summaries. A decoder keeps the ones it does not
	// know. Keys are unique and never "fields".
	Attrs []Attr
}

// Attr returns the value of the attribute key and whether the header has it.
func (h Header) Attr(key string) (string, bool) {
	for _, a := range h.Attrs {
		if a.Key == key {
			return a.Value, true
		}
	}
	return "", false
}

// Index returns the position of the named field, or -1.
func (h Header) Index(field string) int {
	for i, f := range h.Fields {
		if f == field {
			return i
		}
	}
	return -1
}

// String returns the header line, without its LF. It does not check the
// header (see Validate).
func (h Header) String() string { return string(h.appendTo(nil)) }

func (h *Header) appendTo(b []byte) []byte {
	v := h.Version
	if v == 0 {
		v = Version
	}
	b = append(b, Magic+" v"...)
	b = strconv.AppendInt(b, int64(v), 10)
	for _, a := range h.Attrs {
		b = append(b, ' ')
		b = append(b, a.Key...)
		b = append(b, '=')
		b = append(b, a.Value...)
	}
	b = append(b, " fields="...)
	for i, f := range h.Fields {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, f...)
	}
	return b
}

// Validate reports whether the header can be written: a supported version,
// at least one field, valid and unique names, valid attribute values, and
// count attributes (turns=, count=) that are decimal integers.
func (h Header) Validate() error {
	if h.Version != 0 && h.Version != Version {
		return fmt.Errorf("ctf: version %d is not supported (this package writes version %d)", h.Version, Version)
	}
	if len(h.Fields) == 0 {
		return fmt.Errorf("ctf: header names no fields")
	}
	for i, f := range h.Fields {
		if !validName(f) {
			return fmt.Errorf("ctf: field name %q is not valid (want letters, digits, '_', '-' or '.')", f)
		}
		for _, g := range h.Fields[:i] {
			if g == f {
				return fmt.Errorf("ctf: field %q is named twice", f)
			}
		}
	}
	for i, a := range h.Attrs {
		if !validName(a.Key) {
			return fmt.Errorf("ctf: attribute key %q is not valid (want letters, digits, '_', '-' or '.')", a.Key)
		}
		if a.Key == "fields" {
			return fmt.Errorf("ctf: fields= belongs in Header.Fields, not Header.Attrs")
		}
		for _, b := range h.Attrs[:i] {
			if b.Key == a.Key {
				return fmt.Errorf("ctf: attribute %q is given twice", a.Key)
			}
		}
		if j := badAttrValue(a.Value); j >= 0 {
			return fmt.Errorf("ctf: attribute %s: byte %#02x at offset %d is not allowed in a header value", a.Key, a.Value[j], j)
		}
		if isCountAttr(a.Key) {
			if _, err := parseCount(a.Value); err != nil {
				return fmt.Errorf("ctf: attribute %s=%s: %v", a.Key, a.Value, err)
			}
		}
	}
	if msg := countsDisagree(h.Attrs); msg != "" {
		return fmt.Errorf("ctf: %s", msg)
	}
	return nil
}

// countsDisagree says so when turns= and count= are both given and differ.
func countsDisagree(attrs []Attr) string {
	var turns, count string
	for _, a := range attrs {
		switch a.Key {
		case "turns":
			turns = a.Value
		case "count":
			count = a.Value
		}
	}
	if turns == "" || count == "" {
		return ""
	}
	t, _ := parseCount(turns)
	c, _ := parseCount(count)
	if t != c {
		return fmt.Sprintf("turns=%s and count=%s disagree", turns, count)
	}
	return ""
}

// isCountAttr reports whether the attribute states the number of rows.
func isCountAttr(key string) bool { return key == "turns" || key == "count" }

func parseCount(s string) (int, error) {
	if s == "" || len(s) > 18 {
		return 0, fmt.Errorf("want a row count")
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("want a row count (decimal digits)")
		}
		n = n*10 + int(c-'0')
	}
	return n, nil
}

// validName reports whether s is a valid field name or attribute key:
// one or more ASCII letters, digits, '_', '-' or '.'.
func validName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// badAttrValue returns the offset of the first byte not allowed in an
// attribute value (ASCII controls, space, DEL), or -1.
func badAttrValue(s string) int {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c == 0x7F {
			return i
		}
	}
	return -1
}

// ParseHeader parses a header line (without its line ending).
func ParseHeader(line string) (Header, error) {
	h, err := parseHeader(line)
	if err != nil {
		return Header{}, err
	}
	return h, nil
}

func parseHeader(line string) (Header, *Error) {
	fail := func(format string, args ...any) (Header, *Error) {
		return Header{}, &Error{Line: 1, Msg: fmt.Sprintf(format, args...)}
	}
	if !strings.HasPrefix(line, Magic) {
		if strings.HasPrefix(line, "\uFEFF"+Magic) {
			return fail("byte order mark before the header (remove it)")
		}
		return fail("missing header: a block starts with %q, got %q", Magic+" v1 ... fields=...", clip(line))
	}
	if i := strings.IndexByte(line, '\r'); i >= 0 {
		return fail("carriage return in the header line (CRLF line endings are not allowed; lines end with LF)")
	}
	rest := line[len(Magic):]
	if rest != "" && rest[0] != ' ' {
		return fail("missing header: want %q followed by a space, got %q", Magic, clip(line))
	}
	items := strings.Split(rest, " ")
	var h Header
	seenVersion, seenFields := false, false
	for _, it := range items {
		if it == "" {
			continue // runs of spaces, trailing spaces
		}
		if !seenVersion {
			seenVersion = true
			v, msg := parseVersion(it)
			if msg != "" {
				return fail("%s", msg)
			}
			h.Version = v
			continue
		}
		key, val, ok := strings.Cut(it, "=")
		if !ok {
			return fail("garbled header: %q is not key=value", clip(it))
		}
		if !validName(key) {
			return fail("garbled header: bad attribute key %q", clip(key))
		}
		if j := badAttrValue(val); j >= 0 {
			return fail("garbled header: attribute %s: byte %#02x is not allowed in a header value", key, val[j])
		}
		if key == "fields" {
			if seenFields {
				return fail("garbled header: fields= is given twice")
			}
			seenFields = true
			var msg string
			if h.Fields, msg = parseFields(val); msg != "" {
				return fail("%s", msg)
			}
			continue
		}
		for _, a := range h.Attrs {
			if a.Key == key {
				return fail("garbled header: attribute %s is given twice", key)
			}
		}
		if isCountAttr(key) {
			if _, err := parseCount(val); err != nil {
				return fail("garbled header: %s=%s: %v", key, clip(val), err)
			}
		}
		h.Attrs = append(h.Attrs, Attr{Key: key, Value: val})
	}
	if !seenVersion {
		return fail("garbled header: missing the version (v1) after %q", Magic)
	}
	if !seenFields {
		return fail("garbled header: missing fields=")
	}
	if msg := countsDisagree(h.Attrs); msg != "" {
		return fail("garbled header: %s", msg)
	}
	return h, nil
}

// parseVersion reads the version item of a header, "v1"; msg says what
// is wrong with it, if anything.
func parseVersion(it string) (v int, msg string) {
	if len(it) < 2 || it[0] != 'v' {
		return 0, fmt.Sprintf("garbled header: want the version (v1) after %q, got %q", Magic, clip(it))
	}
	v, err := parseCount(it[1:])
	if err != nil {
		return 0, fmt.Sprintf("garbled header: bad version %q", clip(it))
	}
	if v != Version {
		return 0, fmt.Sprintf("CTF version %d is not supported (this decoder reads version %d)", v, Version)
	}
	return v, ""
}

// parseFields reads the value of a header's fields= attribute: distinct
// valid names, comma-separated; msg says what is wrong with it, if
// anything.
func parseFields(val string) (fields []string, msg string) {
	if val == "" {
		return nil, "garbled header: fields= names no fields"
	}
	fields = strings.Split(val, ",")
	for i, f := range fields {
		if !validName(f) {
			return nil, fmt.Sprintf("garbled header: field %d of fields= is %q (want letters, digits, '_', '-' or '.')", i+1, clip(f))
		}
		for _, g := range fields[:i] {
			if g == f {
				return nil, fmt.Sprintf("garbled header: field %q is named twice", f)
			}
		}
	}
	return fields, ""
}

// clip shortens s for an error message.
func clip(s string) string {
	const max = 40
	if len(s) <= max {
		return s
	}
	i := max
	for i > 0 && s[i]&0xC0 == 0x80 {
		i--
	}
	return s[:i] + "…"
}

// Error is a malformed block or a value that cannot be written.
type Error struct {
	// Line is the 1-based line of the input (the header is line 1) for a
	// decoding error, 0 for an encoding error.
	Line int
	// Row is the 1-based row for an encoding error, 0 for a decoding error.
	Row int
	// Field names the field, "" when the error is about a whole line.
	Field string
	// Msg says what is wrong.
	Msg string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("ctf: ")
	switch {
	case e.Line > 0:
		b.WriteString("line ")
		b.WriteString(strconv.Itoa(e.Line))
	case e.Row > 0:
		b.WriteString("row ")
		b.WriteString(strconv.Itoa(e.Row))
	}
	if e.Field != "" {
		if e.Line > 0 || e.Row > 0 {
			b.WriteString(", ")
		}
		b.WriteString("field ")
		b.WriteString(e.Field)
	}
	if e.Line > 0 || e.Row > 0 || e.Field != "" {
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// special marks the bytes that may need escaping: TAB, LF, CR and the lead
// byte of the glyphs.
var special = [256]bool{'\t': true, '\n': true, '\r': true, glyphLead: true}

// glyphAt reports whether s[i:] starts with one of the four glyphs, and
// returns its third byte.
func glyphAt[T ~string | ~[]byte](s T, i int) (byte, bool) {
	if i+2 < len(s) && s[i] == glyphLead && s[i+1] == glyphMid {
		switch c := s[i+2]; c {
		case tabLast, lfLast, crLast, escLast:
			return c, true
		}
	}
	return 0, false
}

// appendEscaped appends the field for the non-null value s.
func appendEscaped[T ~string | ~[]byte](dst []byte, s T) []byte {
	if len(s) == 1 && s[0] == '-' {
		return append(dst, escDash...)
	}
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !special[c] {
			continue
		}
		switch c {
		case '\t':
			dst = append(dst, s[start:i]...)
			dst = append(dst, GlyphTab...)
		case '\n':
			dst = append(dst, s[start:i]...)
			dst = append(dst, GlyphLF...)
		case '\r':
			dst = append(dst, s[start:i]...)
			dst = append(dst, GlyphCR...)
		default:
			if _, ok := glyphAt(s, i); !ok {
				continue
			}
			dst = append(dst, s[start:i]...)
			dst = append(dst, GlyphEsc...)
			dst = append(dst, s[i:i+3]...)
			i += 2
		}
		start = i + 1
	}
	return append(dst, s[start:]...)
}

// AppendValue appends the field for v to dst.
func AppendValue(dst []byte, v Value) []byte {
	if v.Null {
		return append(dst, NullField...)
	}
	return appendEscaped(dst, v.S)
}

// Escape returns the field for the non-null value s: TAB, LF and CR become
// ␉, ␊ and ␍; a literal ␉, ␊, ␍ or ␛ is prefixed with ␛; a value that is
// exactly "-" becomes ␛-. Any bytes, valid UTF-8 or not, survive Unescape.
func Escape(s string) string {
	if len(s) == 1 && s[0] == '-' {
		return escDash
	}
	for i := 0; i < len(s); i++ {
		if special[s[i]] {
			return string(appendEscaped(make([]byte, 0, len(s)+8), s))
		}
	}
	return s
}

// Unescape returns the value a field stands for: null for "-", else the
// string with its escapes undone. It fails on a bad escape: ␛ followed by
// anything other than ␉, ␊, ␍ or ␛, or ␛- anywhere but as the whole field.
// A field must not contain TAB, LF or CR.
func Unescape(field string) (Value, error) {
	for i := 0; i < len(field); i++ {
		switch field[i] {
		case '\t', '\n', '\r':
			return Value{}, fmt.Errorf("ctf: raw %q at byte %d of a field", field[i:i+1], i)
		}
	}
	v, msg := unescape(field)
	if msg != "" {
		return Value{}, fmt.Errorf("ctf: %s", msg)
	}
	return v, nil
}

// unescape decodes one field that holds no TAB, LF or CR. It returns a
// message for a bad escape.
func unescape(f string) (Value, string) {
	if len(f) == 1 && f[0] == '-' {
		return Value{Null: true}, ""
	}
	i := strings.IndexByte(f, glyphLead)
	if i < 0 {
		return Value{S: f}, ""
	}
	if f == escDash {
		return Value{S: "-"}, ""
	}
	var b []byte // nil until the first glyph
	start := 0
	for ; i < len(f); i++ {
		c, ok := glyphAt(f, i)
		if !ok {
			continue
		}
		if b == nil {
			b = make([]byte, 0, len(f))
		}
		b = append(b, f[start:i]...)
		switch c {
		case tabLast:
			b = append(b, '\t')
		case lfLast:
			b = append(b, '\n')
		case crLast:
			b = append(b, '\r')
		default: // ␛
			lit, ok := glyphAt(f, i+3)
			if !ok {
				return Value{}, badEscape(f, i)
			}
			b = append(b, glyphLead, glyphMid, lit)
			i += 3
		}
		i += 2
		start = i + 1
	}
	if b == nil {
		return Value{S: f}, ""
	}
	b = append(b, f[start:]...)
	return Value{S: string(b)}, ""
}

func badEscape(f string, i int) string {
	next := f[i+3:]
	if next == "" {
		return fmt.Sprintf("bad escape at byte %d: %s ends the field (want %s followed by %s, %s, %s or %s)", i, GlyphEsc, GlyphEsc, GlyphTab, GlyphLF, GlyphCR, GlyphEsc)
	}
	if next[0] == '-' {
		return fmt.Sprintf("bad escape at byte %d: %s- is only valid as a whole field (the value \"-\")", i, GlyphEsc)
	}
	n := 1
	for n < len(next) && n < 4 && next[n]&0xC0 == 0x80 {
		n++
	}
	return fmt.Sprintf("bad escape at byte %d: %s followed by %q (want %s, %s, %s or %s)", i, GlyphEsc, next[:n], GlyphTab, GlyphLF, GlyphCR, GlyphEsc)
}
