package ctf

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// escapes is the escape table: a value and the field that stands for it.
var escapes = []struct{ value, field string }{
	{"", ""},
	{"hello", "hello"},
	{"-", "␛-"},
	{"--", "--"},
	{" -", " -"},
	{"-x", "-x"},
	{"a\tb", "a␉b"},
	{"a\nb", "a␊b"},
	{"a\rb", "a␍b"},
	{"line one\r\nline two\n", "line one␍␊line two␊"},
	{"\t\t\n\n", "␉␉␊␊"},
	{"␉", "␛␉"},
	{"␊", "␛␊"},
	{"␍", "␛␍"},
	{"␛", "␛␛"},
	{"␛-", "␛␛-"},
	{"␛␛", "␛␛␛␛"},
	{"␉\t", "␛␉␉"},
	{"␛\t", "␛␛␉"},
	{"a␊b\nc", "a␛␊b␊c"},
	{"␀␁␡", "␀␁␡"}, // other Control Pictures stay as they are
	{"it’s … — “quoted”", "it’s … — “quoted”"},
	{"emoji 🎉👩‍💻 ok", "emoji 🎉👩‍💻 ok"},
	{"你好，世界\t日本語", "你好，世界␉日本語"},
	{"\x00\x1f\x7f\v\f", "\x00\x1f\x7f\v\f"},
	{"\u2028\u2029\u0085", "\u2028\u2029\u0085"},
	{"\xe2\x90", "\xe2\x90"},                 // a cut glyph (invalid UTF-8) stays
	{"\xe2\x90\t", "\xe2\x90␉"},              // ... and does not swallow what follows
	{"\xe2\xe2\x90\x89", "\xe2␛␉"},           // a glyph after a stray lead byte
	{"\xff\xfe-\x80", "\xff\xfe-\x80"},       // invalid UTF-8 survives
	{"ends with ␛", "ends with ␛␛"},          // escape glyph at the end
	{"#CTF v1 fields=a", "#CTF v1 fields=a"}, // a value may look like a header
}

func TestEscapeTable(t *testing.T) {
	for _, c := range escapes {
		if got := Escape(c.value); got != c.field {
			t.Errorf("Escape(%q) = %q, want %q", c.value, got, c.field)
		}
		if got := string(AppendValue([]byte("x"), Str(c.value))); got != "x"+c.field {
			t.Errorf("AppendValue(%q) = %q, want %q", c.value, got, "x"+c.field)
		}
		v, err := Unescape(c.field)
		if err != nil || v.Null || v.S != c.value {
			t.Errorf("Unescape(%q) = %+v, %v; want %q", c.field, v, err, c.value)
		}
		if strings.ContainsAny(c.field, "\t\n\r") {
			t.Errorf("field %q holds a raw TAB, LF or CR", c.field)
		}
	}
	if got := AppendValue(nil, Null()); string(got) != "-" {
		t.Errorf("null = %q", got)
	}
	if v, err := Unescape("-"); err != nil || !v.Null {
		t.Errorf(`Unescape("-") = %+v, %v`, v, err)
	}
	if s := Str("-").String(); s != "␛-" {
		t.Errorf("String = %q", s)
	}
}

// The original sketch wrote only ␉ and ␊; its fields read back the same.
func TestSketchEscapes(t *testing.T) {
	v, err := Unescape("def f():␊␉return 1␊")
	if err != nil || v.S != "def f():\n\treturn 1\n" {
		t.Fatalf("got %q, %v", v.S, err)
	}
}

func TestUnescapeErrors(t *testing.T) {
	for _, c := range []struct{ field, want string }{
		{"a␛b", `bad escape at byte 1: ␛ followed by "b"`},
		{"␛", "␛ ends the field"},
		{"x␛", "␛ ends the field"},
		{"␛é", `followed by "é"`},
		{"a␛-", "␛- is only valid as a whole field"},
		{"␛-␛-", "␛- is only valid as a whole field"},
		{"␛␀", `followed by "␀"`},
		{"a\tb", "raw"},
		{"a\rb", "raw"},
	} {
		_, err := Unescape(c.field)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Unescape(%q) = %v, want an error with %q", c.field, err, c.want)
		}
	}
}

func TestHeader(t *testing.T) {
	h, err := ParseHeader("#CTF v1 type=summaries count=2 fields=chunk_id,turn_range,summary,themes x-new=ok")
	if err != nil {
		t.Fatal(err)
	}
	want := Header{Version: 1, Fields: []string{"chunk_id", "turn_range", "summary", "themes"},
		Attrs: []Attr{{"type", "summaries"}, {"count", "2"}, {"x-new", "ok"}}}
	if !reflect.DeepEqual(h, want) {
		t.Fatalf("got %+v", h)
	}
	if v, ok := h.Attr("x-new"); !ok || v != "ok" {
		t.Errorf("Attr = %q %v", v, ok)
	}
	if h.Index("summary") != 2 || h.Index("nope") != -1 {
		t.Error("Index")
	}
	// The writer puts fields= last.
	if s := h.String(); s != "#CTF v1 type=summaries count=2 x-new=ok fields=chunk_id,turn_range,summary,themes" {
		t.Errorf("String = %q", s)
	}
	// Runs of spaces are tolerated.
	if h, err := ParseHeader("#CTF  v1  fields=a "); err != nil || !reflect.DeepEqual(h.Fields, []string{"a"}) {
		t.Errorf("spaces: %+v %v", h, err)
	}
}

func TestHeaderValidate(t *testing.T) {
	for _, h := range []Header{
		{Version: 2, Fields: []string{"a"}},
		{},
		{Fields: []string{"a b"}},
		{Fields: []string{""}},
		{Fields: []string{"a", "a"}},
		{Fields: []string{"a"}, Attrs: []Attr{{"fields", "x"}}},
		{Fields: []string{"a"}, Attrs: []Attr{{"k", "a b"}}},
		{Fields: []string{"a"}, Attrs: []Attr{{"k", "1"}, {"k", "2"}}},
		{Fields: []string{"a"}, Attrs: []Attr{{"turns", "-1"}}},
		{Fields: []string{"a"}, Attrs: []Attr{{"k=", "1"}}},
		{Fields: []string{"a"}, Attrs: []Attr{{"turns", "1"}, {"count", "01"}, {"count", "2"}}},
		{Fields: []string{"a"}, Attrs: []Attr{{"turns", "1"}, {"count", "2"}}},
	} {
		if err := h.Validate(); err == nil {
			t.Errorf("%+v: no error", h)
		}
		if _, err := Marshal(h, nil); err == nil {
			t.Errorf("Marshal %+v: no error", h)
		}
	}
}

// TestMalformed checks that every malformed block is an error naming its
// line and, where one applies, the field.
func TestMalformed(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"", []string{"line 1:", "missing header", "empty"}},
		{"\n", []string{"line 1:", "missing header"}},
		{"hello\tworld\n", []string{"line 1:", "missing header"}},
		{"#CTFv1 fields=a\n", []string{"line 1:", "missing header"}},
		{"\uFEFF#CTF v1 fields=a\n", []string{"line 1:", "byte order mark"}},
		{"#CTF v2 fields=a\nx\n", []string{"line 1:", "version 2 is not supported", "reads version 1"}},
		{"#CTF v0 fields=a\n", []string{"line 1:", "version 0 is not supported"}},
		{"#CTF 1 fields=a\n", []string{"line 1:", "want the version"}},
		{"#CTF vx fields=a\n", []string{"line 1:", "bad version"}},
		{"#CTF\n", []string{"line 1:", "missing the version"}},
		{"#CTF v1 turns=2\n", []string{"line 1:", "missing fields="}},
		{"#CTF v1 fields=\n", []string{"line 1:", "names no fields"}},
		{"#CTF v1 fields=a,,b\n", []string{"line 1:", "field 2 of fields="}},
		{"#CTF v1 fields=a,a\n", []string{"line 1:", `"a" is named twice`}},
		{"#CTF v1 fields=a fields=b\n", []string{"line 1:", "fields= is given twice"}},
		{"#CTF v1 k=1 k=2 fields=a\n", []string{"line 1:", "k is given twice"}},
		{"#CTF v1 junk fields=a\n", []string{"line 1:", `"junk" is not key=value`}},
		{"#CTF v1 turns=two fields=a\n", []string{"line 1:", "turns=two"}},
		{"#CTF v1 turns=1 count=2 fields=a\nx\n", []string{"line 1:", "turns=1 and count=2 disagree"}},
		{"#CTF v1\tfields=a\n", []string{"line 1:"}},
		{"#CTF v1 fields=a,b\r\nx\ty\r\n", []string{"line 1:", "CRLF"}},
		{"#CTF v1 fields=a,b\nx\ty\r\n", []string{"line 2:", "CRLF line ending"}},
		{"#CTF v1 fields=a,b\nx\ty\nx\ty\r\nz\tw\n", []string{"line 3:", "CRLF line ending"}},
		{"#CTF v1 fields=a,b\nx\r\ty\n", []string{"line 2, field a:", "raw carriage return"}},
		{"#CTF v1 fields=a,b\nx\ty\rz\n", []string{"line 2, field b:", "raw carriage return"}},
		{"#CTF v1 fields=a,b\nx\n", []string{"line 2:", "1 fields, the header names 2 (a,b)"}},
		{"#CTF v1 fields=a,b\nx\ty\tz\n", []string{"line 2:", "3 fields, the header names 2"}},
		{"#CTF v1 fields=a,b\nx\ty\n\n", []string{"line 3:", "empty line"}},
		{"#CTF v1 fields=a,b\nx\ty\nx\t␛q\n", []string{"line 3, field b:", "bad escape at byte 0"}},
		{"#CTF v1 fields=a,b\nx␛\ty\n", []string{"line 2, field a:", "␛ ends the field"}},
		{"#CTF v1 fields=a,b\nx\ty␛-\n", []string{"line 2, field b:", "only valid as a whole field"}},
		{"#CTF v1 turns=3 fields=a\nx\ny\n", []string{"line 1:", "turns=3 but the block has 2 rows"}},
		{"#CTF v1 count=1 fields=a\nx\ny\n", []string{"line 3:", "row 2 is one more than the header announces (1)"}},
		{"#CTF v1 turns=0 fields=a\nx", []string{"line 2:", "one more"}},
	} {
		_, _, err := Unmarshal([]byte(c.in))
		checkErr(t, c.in, err, c.want...)
		// The streaming decoder says the same, even reading a byte at a time.
		d := NewDecoder(iotest.OneByteReader(strings.NewReader(c.in)))
		var err2 error
		for err2 == nil {
			_, err2 = d.Next()
		}
		if err2 == io.EOF || err == nil || err2.Error() != err.Error() {
			t.Errorf("%q: stream error %v, block error %v", c.in, err2, err)
		}
		// Errors are sticky.
		if _, err3 := d.Next(); err3 != err2 {
			t.Errorf("%q: second Next = %v", c.in, err3)
		}
	}
}

func checkErr(t *testing.T, in string, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("%q: no error, want %q", in, want)
		return
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Errorf("%q: error %T %v is not an *Error", in, err, err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%q: error %q does not say %q", in, err, w)
		}
	}
}

func TestLineEndings(t *testing.T) {
	rows := [][]Value{{Str("a"), Str("b")}, {Str(""), Null()}}
	for _, in := range []string{
		"#CTF v1 fields=x,y\na\tb\n\t-\n", // as written
		"#CTF v1 fields=x,y\na\tb\n\t-",   // no final LF, as the original sketch wrote
	} {
		_, got, err := Unmarshal([]byte(in))
		if err != nil || !reflect.DeepEqual(got, rows) {
			t.Errorf("%q: %v %v", in, got, err)
		}
	}
	// One field: an empty line is a row holding "".
	_, got, err := Unmarshal([]byte("#CTF v1 count=3 fields=x\n\n-\n\n"))
	if want := [][]Value{{Str("")}, {Null()}, {Str("")}}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("one field: %v %v", got, err)
	}
	// No rows.
	h, got, err := Unmarshal([]byte("#CTF v1 turns=0 fields=x"))
	if err != nil || len(got) != 0 || h.Fields[0] != "x" {
		t.Errorf("no rows: %v %v", got, err)
	}
}

func TestMarshalRoundTrip(t *testing.T) {
	h := Header{Fields: []string{"a", "b", "c"}, Attrs: []Attr{{"type", "test"}, {"count", "0"}}}
	var rows [][]Value
	for i, c := range escapes {
		rows = append(rows, []Value{Str(c.value), Null(), Str(escapes[len(escapes)-1-i].value)})
	}
	rows = append(rows, []Value{Null(), Null(), Null()}, []Value{Str(""), Str(""), Str("")})
	h.Attrs[1] = CountAttr("count", len(rows))
	b, err := Marshal(h, rows)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Count(b, []byte{'\n'}) != len(rows)+1 || bytes.IndexByte(b, '\r') >= 0 {
		t.Fatalf("%d lines", bytes.Count(b, []byte{'\n'}))
	}
	h2, got, err := Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	h.Version = 1
	if !reflect.DeepEqual(h2, h) || !reflect.DeepEqual(got, rows) {
		t.Fatalf("round trip:\n%+v\n%+v", h2, got)
	}

	// The Encoder writes the same bytes, and the Decoder reads them back.
	var buf bytes.Buffer
	e, err := NewEncoder(&buf, h)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if err := e.Encode(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), b) {
		t.Fatalf("Encoder wrote\n%s\nMarshal\n%s", buf.Bytes(), b)
	}
	d := NewDecoder(iotest.HalfReader(&buf))
	for i := 0; ; i++ {
		r, err := d.Next()
		if err == io.EOF {
			if i != len(rows) {
				t.Fatalf("%d rows", i)
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if d.Line() != i+2 {
			t.Errorf("Line = %d at row %d", d.Line(), i)
		}
		if !reflect.DeepEqual(r, rows[i]) {
			t.Fatalf("row %d = %v", i, r)
		}
	}
}

func TestLongLines(t *testing.T) {
	long := strings.Repeat("word\tword\n␉ ", 50_000) // 700 kB, beyond the reader's buffer
	rows := [][]Value{{Str(long), Str("x")}, {Str("y"), Str(long)}}
	b, err := Marshal(Header{Fields: []string{"a", "b"}}, rows)
	if err != nil {
		t.Fatal(err)
	}
	d := NewDecoder(bytes.NewReader(b))
	for i := range rows {
		r, err := d.Next()
		if err != nil || !reflect.DeepEqual(r, rows[i]) {
			t.Fatalf("row %d: %v", i, err)
		}
	}
	if _, err := d.Next(); err != io.EOF {
		t.Fatal(err)
	}
}

func TestEncoderErrors(t *testing.T) {
	var buf bytes.Buffer
	e, err := NewEncoder(&buf, Header{Fields: []string{"a", "b"}, Attrs: []Attr{CountAttr("count", 2)}})
	if err != nil {
		t.Fatal(err)
	}
	checkErr(t, "short row", e.Encode([]Value{Str("x")}), "row 1:", "1 values for 2 fields")
	if err := e.Encode([]Value{Str("x"), Str("y")}); err != nil {
		t.Fatal(err)
	}
	checkErr(t, "count", e.Close(), "announces 2 rows, 1 were written")
	if _, err := Marshal(Header{Fields: []string{"a"}, Attrs: []Attr{CountAttr("turns", 1)}}, nil); err == nil {
		t.Error("Marshal with a wrong count")
	}
	_, err = Marshal(Header{Fields: []string{"a"}}, [][]Value{{Str("x")}, {}})
	checkErr(t, "Marshal short row", err, "row 2:")
	// A failing writer.
	e, _ = NewEncoder(errWriter{}, Header{Fields: []string{"a"}})
	if err := e.Close(); err == nil {
		t.Error("no write error")
	}
}

type errWriter struct{}

func (errWriter) Write([]byte) (int, error) { return 0, errors.New("boom") }

func TestRowHelpers(t *testing.T) {
	got := HeaderLine([]string{"role", "name", "content"}, CountAttr("turns", 2)) +
		Row("user", "Caroline", "Hi!\tHow are you?\nGood.") +
		Row("assistant", "", "-")
	want := "#CTF v1 turns=2 fields=role,name,content\n" +
		"user\tCaroline\tHi!␉How are you?␊Good.\n" +
		"assistant\t\t␛-\n"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	_, rows, err := Unmarshal([]byte(got))
	if err != nil || rows[1][2].S != "-" || rows[0][2].S != "Hi!\tHow are you?\nGood." {
		t.Fatalf("%v %v", rows, err)
	}
	defer func() {
		if recover() == nil {
			t.Error("HeaderLine with a bad name did not panic")
		}
	}()
	HeaderLine([]string{"bad name"})
}
