package ctf

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// Decoder reads a block: its header, then its rows one at a time.
//
// Decoding errors are *Error values naming the line and field; an error
// ends the block (every later call returns it again). Next never skips a
// row.
type Decoder struct {
	// One of the two sources: a whole block in memory, or a stream.
	src string
	pos int
	br  *bufio.Reader
	buf []byte // a long line being assembled from br

	line    int // lines read so far
	h       Header
	started bool // the header has been read (or failed)
	want    int  // rows the header announces, -1 if none
	rows    int
	hdrErr  error
	err     error

	// reuse makes Next return the same slice every time, for the turn and
	// node decoders, which copy the values out.
	reuse bool
	row   []Value
}

// NewDecoder returns a Decoder reading from r.
func NewDecoder(r io.Reader) *Decoder {
	return &Decoder{br: bufio.NewReaderSize(r, 64<<10)}
}

// newStringDecoder returns a Decoder over a whole block. The values it
// returns are substrings of s when they need no unescaping.
func newStringDecoder(s string) *Decoder { return &Decoder{src: s} }

// Header reads the header if it has not been read, and returns it.
func (d *Decoder) Header() (Header, error) {
	if !d.started {
		d.started = true
		line, ok, err := d.readLine()
		switch {
		case err != nil:
			d.hdrErr = err
		case !ok:
			d.hdrErr = &Error{Line: 1, Msg: "missing header: the input is empty"}
		default:
			d.line = 1
			if h, e := parseHeader(line); e != nil {
				d.hdrErr = e
			} else {
				d.h = h
				d.want = announced(&h)
			}
		}
		d.err = d.hdrErr
	}
	return d.h, d.hdrErr
}

// Line returns the number of lines read so far: after Next returns a row,
// the line of that row (the header is line 1).
func (d *Decoder) Line() int { return d.line }

// Next returns the next row, one value per field of the header, or io.EOF
// after the last row. At the end it checks the row count the header
// announces (turns= or count=), if any.
func (d *Decoder) Next() ([]Value, error) {
	if !d.started {
		if _, err := d.Header(); err != nil {
			return nil, err
		}
	}
	if d.err != nil {
		return nil, d.err
	}
	line, ok, err := d.readLine()
	if err != nil {
		d.err = err
		return nil, err
	}
	if !ok {
		if d.want >= 0 && d.rows != d.want {
			key := "count"
			if _, ok := d.h.Attr("turns"); ok {
				key = "turns"
			}
			d.err = &Error{Line: 1, Msg: fmt.Sprintf("the header says %s=%d but the block has %d rows", key, d.want, d.rows)}
			return nil, d.err
		}
		d.err = io.EOF
		return nil, io.EOF
	}
	d.line++
	if d.want >= 0 && d.rows == d.want {
		d.err = &Error{Line: d.line, Msg: fmt.Sprintf("row %d is one more than the header announces (%d)", d.rows+1, d.want)}
		return nil, d.err
	}
	row, e := d.parseRow(line)
	if e != nil {
		d.err = e
		return nil, e
	}
	d.rows++
	return row, nil
}

// parseRow splits and unescapes one row.
func (d *Decoder) parseRow(line string) ([]Value, error) {
	fields := d.h.Fields
	if i := strings.IndexByte(line, '\r'); i >= 0 {
		e := &Error{Line: d.line, Field: fields[min(strings.Count(line[:i], "\t"), len(fields)-1)]}
		if i == len(line)-1 {
			e.Field = ""
			e.Msg = "CRLF line ending (CTF lines end with LF alone)"
		} else {
			e.Msg = fmt.Sprintf("raw carriage return (a CR in a value is written %s)", GlyphCR)
		}
		return nil, e
	}
	n := strings.Count(line, "\t") + 1
	if n != len(fields) {
		msg := fmt.Sprintf("%d fields, the header names %d (%s)", n, len(fields), strings.Join(fields, ","))
		if line == "" {
			msg = "empty line: " + msg
		}
		return nil, &Error{Line: d.line, Msg: msg}
	}
	row := d.row
	if !d.reuse || len(row) != n {
		row = make([]Value, n)
		if d.reuse {
			d.row = row
		}
	}
	for i := range row {
		f := line
		if i < n-1 {
			j := strings.IndexByte(line, '\t')
			f, line = line[:j], line[j+1:]
		}
		v, msg := unescape(f)
		if msg != "" {
			return nil, &Error{Line: d.line, Field: fields[i], Msg: msg}
		}
		row[i] = v
	}
	return row, nil
}

// readLine returns the next line without its LF; ok is false at the end of
// the input. A last line without an LF is a line; an LF at the very end
// does not start another one.
func (d *Decoder) readLine() (line string, ok bool, err error) {
	if d.br == nil {
		if d.pos >= len(d.src) {
			return "", false, nil
		}
		rest := d.src[d.pos:]
		i := strings.IndexByte(rest, '\n')
		if i < 0 {
			d.pos = len(d.src)
			return rest, true, nil
		}
		d.pos += i + 1
		return rest[:i], true, nil
	}
	d.buf = d.buf[:0]
	for {
		b, err := d.br.ReadSlice('\n')
		switch err {
		case nil:
			if len(d.buf) == 0 {
				return string(b[:len(b)-1]), true, nil
			}
			d.buf = append(d.buf, b[:len(b)-1]...)
			return string(d.buf), true, nil
		case bufio.ErrBufferFull:
			d.buf = append(d.buf, b...)
		case io.EOF:
			d.buf = append(d.buf, b...)
			if len(d.buf) == 0 {
				return "", false, nil
			}
			return string(d.buf), true, nil
		default:
			return "", false, err
		}
	}
}

// Unmarshal decodes a whole block. The strings of the rows share memory
// with one copy of data.
func Unmarshal(data []byte) (Header, [][]Value, error) {
	d := newStringDecoder(string(data))
	h, err := d.Header()
	if err != nil {
		return Header{}, nil, err
	}
	rows := make([][]Value, 0, min(max(d.want, 0), 1<<16))
	for {
		r, err := d.Next()
		if err == io.EOF {
			return h, rows, nil
		}
		if err != nil {
			return Header{}, nil, err
		}
		rows = append(rows, r)
	}
}
