package formats

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/strata-memory/strata"
)

// Counts says what a reader did with the records of its input so far: how
// many it read, how many went into turns, how many turns it yielded, and
// how many it skipped on purpose, by kind (a record type strata has no use
// for, such as "file-history-snapshot" or "event_msg/token_count"). Records
// that were neither kept nor skipped were errors. The readers of the agent
// formats (claude-code, codex, chatgpt) implement Counter.
type Counts struct {
	Records int            `json:"records"`
	Kept    int            `json:"kept"`
	Turns   int            `json:"turns"`
	Skipped map[string]int `json:"skipped,omitempty"`
}

// SkippedTotal is the number of records skipped on purpose.
func (c Counts) SkippedTotal() int {
	n := 0
	for _, k := range c.Skipped {
		n += k
	}
	return n
}

// Counter is a Reader that counts the records of its input (see Counts).
type Counter interface {
	Counts() Counts
}

func (c *Counts) skip(kind string) {
	if c.Skipped == nil {
		c.Skipped = map[string]int{}
	}
	c.Skipped[kind]++
}

// lineSource reads the non-blank lines of a JSON-lines input, however
// long, counting lines from 1.
type lineSource struct {
	name string
	br   *bufio.Reader
	line int
	buf  []byte
}

// next returns the next non-blank line (trimmed; valid until the next
// call) and its number, io.EOF at the end, or a read error.
func (s *lineSource) next() ([]byte, int, error) {
	if cap(s.buf) > 4<<20 {
		s.buf = nil // do not keep a huge line's buffer
	}
	for {
		s.buf = s.buf[:0]
		var err error
		for {
			var chunk []byte
			chunk, err = s.br.ReadSlice('\n')
			s.buf = append(s.buf, chunk...)
			if err != bufio.ErrBufferFull {
				break
			}
		}
		if err != nil && err != io.EOF {
			return nil, 0, fmt.Errorf("%s:%d: %w", s.name, s.line+1, err)
		}
		if err == io.EOF && len(s.buf) == 0 {
			return nil, 0, io.EOF
		}
		s.line++
		if line := bytes.TrimSpace(s.buf); len(line) > 0 {
			return line, s.line, nil
		}
		if err == io.EOF {
			return nil, 0, io.EOF
		}
	}
}

// queue is what the agent readers share: turns parsed ahead, the end of
// the input, and the counts.
type queue struct {
	pending []result
	end     error // io.EOF or a read error, once the input is exhausted
	counts  Counts
}

// pop returns the next parsed-ahead result, if any.
func (q *queue) pop() (Record, error, bool) {
	if len(q.pending) == 0 {
		return Record{}, nil, false
	}
	r := q.pending[0]
	q.pending[0] = result{}
	q.pending = q.pending[1:]
	if r.err == nil {
		q.counts.Turns++
	}
	return r.rec, r.err, true
}

func (q *queue) push(rec Record, err error) {
	q.pending = append(q.pending, result{rec, err})
}

// Counts implements Counter.
func (q *queue) Counts() Counts {
	c := q.counts
	if c.Skipped != nil {
		m := make(map[string]int, len(c.Skipped))
		for k, v := range c.Skipped {
			m[k] = v
		}
		c.Skipped = m
	}
	return c
}

// projectName is the name Claude Code gives the folder of a working
// directory's sessions: every character other than an ASCII letter or
// digit becomes '-' ("/home/ana/my.app" is "-home-ana-my-app").
func projectName(cwd string) string {
	b := []byte(cwd)
	for i, c := range b {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			b[i] = '-'
		}
	}
	return string(b)
}

// projectFolder returns the project folder a session file sits in, when
// its path has the layout of Claude Code's projects folder:
// projects/<project>/<session>.jsonl, or
// projects/<project>/<session>/subagents/<agent>.jsonl. It returns "" for
// any other path.
func projectFolder(path string) string {
	if path == "" || path == "input" || path == "stdin" || path == "-" {
		return ""
	}
	d := filepath.Dir(filepath.Clean(path))
	for i := 0; i < 3 && d != "." && d != string(filepath.Separator); i++ {
		if filepath.Base(filepath.Dir(d)) == "projects" {
			return filepath.Base(d)
		}
		d = filepath.Dir(d)
	}
	return ""
}

// timeOf reads an RFC 3339 time member ("" or absent = no time). The
// zero time written out (0001-01-01T00:00:00Z) is refused rather than
// read as no time, which the engine would stamp with the clock.
func timeOf(o *object, name string) (time.Time, error) {
	v, ok := o.get(name)
	if !ok {
		return time.Time{}, nil
	}
	if v[0] == '"' && len(v) >= 2 && v[len(v)-1] == '"' {
		if t, ok := parseRFC3339(v[1 : len(v)-1]); ok {
			if t.IsZero() {
				return time.Time{}, o.errf(name, "%s is the zero time, which reads as no time", v)
			}
			return t, nil
		}
	}
	s, err := o.str(name)
	if err != nil || s == "" {
		return time.Time{}, err
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, o.errf(name, "cannot parse %q as a time (want RFC 3339)", s)
	}
	if t.IsZero() {
		return time.Time{}, o.errf(name, "%q is the zero time, which reads as no time", s)
	}
	if err := strata.CheckTime(t); err != nil {
		return time.Time{}, o.errf(name, "%s", err.(*strata.Error).Message)
	}
	return t.UTC(), nil
}

// sub parses the object member name of o, or returns nil when it is
// absent or null.
func sub(o *object, name string) (*object, error) {
	v, ok := o.get(name)
	if !ok {
		return nil, nil
	}
	// Its members check their own text, so that an error names the
	// innermost field.
	return parseObject(o.file, o.line, o.prefix+name+".", v)
}

// joinText joins the non-empty texts with newlines.
func joinText(texts []string) string {
	out := texts[:0:0]
	for _, s := range texts {
		if s != "" {
			out = append(out, s)
		}
	}
	return strings.Join(out, "\n")
}
