package ctf

import (
	"fmt"
	"io"
	"strconv"
)

// flushAt is the buffered size at which an Encoder writes to its writer.
const flushAt = 64 << 10

// Encoder writes a block: its header, then one row per call to Encode.
// Output is buffered; call Close (or Flush) at the end.
type Encoder struct {
	w      io.Writer
	fields []string
	want   int // rows the header announces, -1 if it does not
	rows   int
	buf    []byte
	err    error
}

// NewEncoder checks the header and returns an Encoder that writes it, then
// the rows, to w. If the header has a turns= or count= attribute, Close
// checks that exactly that many rows were written.
func NewEncoder(w io.Writer, h Header) (*Encoder, error) {
	if err := h.Validate(); err != nil {
		return nil, err
	}
	e := &Encoder{w: w, fields: h.Fields, want: announced(&h), buf: make([]byte, 0, 4096)}
	e.buf = h.appendTo(e.buf)
	e.buf = append(e.buf, '\n')
	return e, nil
}

// announced returns the row count the header states, or -1.
func announced(h *Header) int {
	want := -1
	for _, a := range h.Attrs {
		if isCountAttr(a.Key) {
			want, _ = parseCount(a.Value)
		}
	}
	return want
}

// Encode writes one row. It has one value per field of the header.
func (e *Encoder) Encode(row []Value) error {
	if e.err != nil {
		return e.err
	}
	if len(row) != len(e.fields) {
		return &Error{Row: e.rows + 1, Msg: fmt.Sprintf("%d values for %d fields", len(row), len(e.fields))}
	}
	for i, v := range row {
		if i > 0 {
			e.buf = append(e.buf, '\t')
		}
		e.buf = AppendValue(e.buf, v)
	}
	e.buf = append(e.buf, '\n')
	e.rows++
	if len(e.buf) >= flushAt {
		return e.Flush()
	}
	return nil
}

// encodeRaw appends one row produced by fn, which appends the fields
// (escaped, tab-separated) and may fail.
func (e *Encoder) encodeRaw(fn func(dst []byte, row int) ([]byte, error)) error {
	if e.err != nil {
		return e.err
	}
	n := len(e.buf)
	b, err := fn(e.buf, e.rows+1)
	if err != nil {
		e.buf = b[:n]
		return err
	}
	e.buf = append(b, '\n')
	e.rows++
	if len(e.buf) >= flushAt {
		return e.Flush()
	}
	return nil
}

// Flush writes the buffered output to the writer.
func (e *Encoder) Flush() error {
	if e.err != nil {
		return e.err
	}
	if len(e.buf) > 0 {
		if _, err := e.w.Write(e.buf); err != nil {
			e.err = err
			return err
		}
		e.buf = e.buf[:0]
	}
	return nil
}

// Close flushes the output and checks the row count the header announced.
// It does not close the writer.
func (e *Encoder) Close() error {
	if err := e.Flush(); err != nil {
		return err
	}
	if e.want >= 0 && e.rows != e.want {
		e.err = &Error{Row: e.rows, Msg: fmt.Sprintf("the header announces %d rows, %d were written", e.want, e.rows)}
		return e.err
	}
	return nil
}

// Marshal returns the block of the header and rows. Each row has one value
// per field.
func Marshal(h Header, rows [][]Value) ([]byte, error) {
	if err := h.Validate(); err != nil {
		return nil, err
	}
	if want := announced(&h); want >= 0 && want != len(rows) {
		return nil, fmt.Errorf("ctf: the header announces %d rows, got %d", want, len(rows))
	}
	size := 64
	for _, r := range rows {
		for _, v := range r {
			size += len(v.S) + 1
		}
	}
	b := make([]byte, 0, size+size/16)
	b = h.appendTo(b)
	b = append(b, '\n')
	for n, r := range rows {
		if len(r) != len(h.Fields) {
			return nil, &Error{Row: n + 1, Msg: fmt.Sprintf("%d values for %d fields", len(r), len(h.Fields))}
		}
		for i, v := range r {
			if i > 0 {
				b = append(b, '\t')
			}
			b = AppendValue(b, v)
		}
		b = append(b, '\n')
	}
	return b, nil
}

// HeaderLine returns a version 1 header line, with its LF, for rendering
// rows into a prompt with Row. It panics if a field name or attribute is
// not valid (see Header.Validate): names are meant to be constants.
func HeaderLine(fields []string, attrs ...Attr) string {
	h := Header{Fields: fields, Attrs: attrs}
	if err := h.Validate(); err != nil {
		panic(err)
	}
	return string(append(h.appendTo(nil), '\n'))
}

// Row returns one row, with its LF: each value escaped (none is null; a
// value "-" is written ␛-), joined by TAB.
func Row(values ...string) string {
	n := len(values)
	for _, v := range values {
		n += len(v)
	}
	b := make([]byte, 0, n+8)
	for i, v := range values {
		if i > 0 {
			b = append(b, '\t')
		}
		b = appendEscaped(b, v)
	}
	return string(append(b, '\n'))
}

// CountAttr returns the attribute key=n, such as turns=12.
func CountAttr(key string, n int) Attr { return Attr{Key: key, Value: strconv.Itoa(n)} }
