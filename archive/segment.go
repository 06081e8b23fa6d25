package archive

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// Record is one archived turn.
type Record struct {
	Seq int64 // key: the turn's position in its conversation, unique within a segment
	// Line is one JSON object. It must not contain a line break ('\n' or
	// '\r'); surrounding spaces and tabs are dropped when it is stored.
	Line json.RawMessage
}

// Info describes a segment.
type Info struct {
	Path     string // the blob read or written, as Blobs.Locate names it (Files: the file; the .jsonl.gz one when read from it)
	Records  int
	Bytes    int64 // size of the blob
	RawBytes int64 // decompressed size: record lines and trailer
	First    int64 // first Seq (0 when no records)
	Last     int64 // last Seq (0 when no records)
}

// crashHook, when set (by tests), is called at the named points of a
// write so a test can kill the process there.
var crashHook func(point string)

func at(point string) {
	if crashHook != nil {
		crashHook(point)
	}
}

// Segments reads and writes the segments kept in Blobs. Its methods take
// a segment's key (Key(namespace, conversation, period)); their errors name
// the segment as Blobs.Locate does ("archive segment <path>: ..." for
// Files). The zero value is not usable: Blobs must be set.
type Segments struct {
	Blobs Blobs
}

// Merge rewrites the segment at key (which must end in .jsonl.zst) so that
// it holds its records plus recs, one per Seq, sorted by Seq: a record in
// recs replaces a stored one with the same Seq, and among records of recs
// with the same Seq the last wins. With no recs it writes nothing. The
// new segment is written with Blobs.Put, which reads it back for
// verification before it replaces the old one, so a kill at any instant
// leaves the old segment or the new one. If only the .jsonl.gz form exists
// its records are carried over and it is deleted afterwards. A corrupt
// existing segment is an error (nothing is written). It returns the stats
// of the resulting segment.
func (g Segments) Merge(ctx context.Context, key string, recs []Record) (Info, error) {
	name := g.Blobs.Locate(key)
	if !strings.HasSuffix(key, Ext) {
		return Info{}, invalid(name, "Merge: path must end in %s", Ext)
	}
	add := make([]Record, len(recs))
	for i, r := range recs {
		line, err := checkLine(r.Line)
		if err != nil {
			return Info{}, invalid(name, "record seq %d: %v", r.Seq, err)
		}
		add[i] = Record{Seq: r.Seq, Line: line}
	}
	unlock := lock(g.Blobs, key)
	defer unlock()

	old, err := g.load(ctx, key)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if len(add) == 0 {
			return Info{Path: name}, nil
		}
		old = &segment{key: key, path: name}
	case err != nil:
		return Info{}, err
	}
	if len(add) == 0 {
		return old.info(), g.tidy(ctx, old)
	}
	// Stable sort so that, among equal seqs, the last of recs comes last.
	slices.SortStableFunc(add, func(a, b Record) int { return cmp.Compare(a.Seq, b.Seq) })
	merged := make([]Record, 0, len(old.recs)+len(add))
	i := 0
	for j := 0; j < len(add); j++ {
		if j+1 < len(add) && add[j+1].Seq == add[j].Seq {
			continue // a later one of recs wins
		}
		for i < len(old.recs) && old.recs[i].Seq < add[j].Seq {
			merged = append(merged, old.recs[i])
			i++
		}
		if i < len(old.recs) && old.recs[i].Seq == add[j].Seq {
			i++ // replaced
		}
		merged = append(merged, add[j])
	}
	merged = append(merged, old.recs[i:]...)
	return g.commit(ctx, key, merged)
}

// Remove rewrites the segment at key (which must end in .jsonl.zst)
// without the records whose Seq lies in [from, to], deleting the blob when
// none remain, with the crash safety of Merge. A segment that does not
// exist holds nothing to remove: Remove returns Info{Path: <its name>}
// and no error. When no record lies in the range nothing is written.
func (g Segments) Remove(ctx context.Context, key string, from, to int64) (Info, error) {
	name := g.Blobs.Locate(key)
	if !strings.HasSuffix(key, Ext) {
		return Info{}, invalid(name, "Remove: path must end in %s", Ext)
	}
	unlock := lock(g.Blobs, key)
	defer unlock()

	old, err := g.load(ctx, key)
	if errors.Is(err, fs.ErrNotExist) {
		return Info{Path: name}, nil
	}
	if err != nil {
		return Info{}, err
	}
	keep := make([]Record, 0, len(old.recs))
	for _, r := range old.recs {
		if r.Seq < from || r.Seq > to {
			keep = append(keep, r)
		}
	}
	if len(keep) == len(old.recs) {
		return old.info(), g.tidy(ctx, old)
	}
	if len(keep) > 0 {
		return g.commit(ctx, key, keep)
	}
	// Nothing left: delete the .gz sibling first (the .zst shadows it), so
	// that a kill in between never brings its records back.
	gz := gzipSibling(key)
	if err := g.Blobs.Delete(ctx, gz); err == nil {
		at("gz-removed")
	} else if !errors.Is(err, fs.ErrNotExist) {
		return Info{}, blobError(g.Blobs.Locate(gz), "remove", err)
	}
	if err := g.Blobs.Delete(ctx, key); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Info{}, blobError(name, "remove", err)
	}
	at("removed")
	return Info{Path: name}, nil
}

// Read returns the records of the segment at key with from <= Seq <= to
// (to == 0: no upper bound), in Seq order, after verifying the whole
// segment. If key ends in .jsonl.zst and does not exist, the .jsonl.gz
// blob of the same stem is read instead. A missing segment is an error for
// which errors.Is(err, fs.ErrNotExist) holds; a segment failing
// verification is one wrapping ErrCorrupt. Both name the segment.
func (g Segments) Read(ctx context.Context, key string, from, to int64) ([]Record, error) {
	s, err := g.load(ctx, key)
	if err != nil {
		return nil, err
	}
	lo, _ := slices.BinarySearchFunc(s.recs, from, func(r Record, k int64) int { return cmp.Compare(r.Seq, k) })
	hi := len(s.recs)
	if to != 0 {
		hi, _ = slices.BinarySearchFunc(s.recs, to, func(r Record, k int64) int {
			if r.Seq <= k {
				return -1
			}
			return 1
		})
	}
	if lo >= hi {
		return nil, nil
	}
	return s.recs[lo:hi:hi], nil
}

// Stat reads and verifies the segment at key (with the .jsonl.gz fallback
// of Read) and returns its stats.
func (g Segments) Stat(ctx context.Context, key string) (Info, error) {
	s, err := g.load(ctx, key)
	if err != nil {
		return Info{}, err
	}
	return s.info(), nil
}

// atPath returns the Files of path's folder and path's key in it.
func atPath(path string) (Segments, string) {
	return Segments{NewFiles(filepath.Dir(path))}, filepath.Base(path)
}

// Merge is Segments.Merge of the segment file at path.
func Merge(path string, recs []Record) (Info, error) {
	g, key := atPath(path)
	return g.Merge(context.Background(), key, recs)
}

// Remove is Segments.Remove of the segment file at path.
func Remove(path string, from, to int64) (Info, error) {
	g, key := atPath(path)
	return g.Remove(context.Background(), key, from, to)
}

// Read is Segments.Read of the segment file at path.
func Read(path string, from, to int64) ([]Record, error) {
	g, key := atPath(path)
	return g.Read(context.Background(), key, from, to)
}

// Stat is Segments.Stat of the segment file at path.
func Stat(path string) (Info, error) {
	g, key := atPath(path)
	return g.Stat(context.Background(), key)
}

// segment is a loaded, verified segment.
type segment struct {
	key       string
	path      string   // Blobs.Locate(key)
	recs      []Record // Lines point into one buffer
	size, raw int64
}

func (s *segment) info() Info {
	in := Info{Path: s.path, Records: len(s.recs), Bytes: s.size, RawBytes: s.raw}
	if len(s.recs) > 0 {
		in.First, in.Last = s.recs[0].Seq, s.recs[len(s.recs)-1].Seq
	}
	return in
}

func gzipSibling(key string) string {
	return strings.TrimSuffix(key, Ext) + GzipExt
}

// load reads and verifies the segment at key, falling back to the gzip
// sibling of a missing .jsonl.zst.
func (g Segments) load(ctx context.Context, key string) (*segment, error) {
	name := g.Blobs.Locate(key)
	data, err := g.Blobs.Get(ctx, key)
	if err == nil {
		return decodeBlob(key, name, data)
	}
	if !errors.Is(err, fs.ErrNotExist) || !strings.HasSuffix(key, Ext) {
		return nil, openError(name, err)
	}
	gz := gzipSibling(key)
	gzName := g.Blobs.Locate(gz)
	data, err = g.Blobs.Get(ctx, gz)
	if err == nil {
		return decodeBlob(gz, gzName, data)
	}
	if errors.Is(err, fs.ErrNotExist) {
		// A concurrent Merge may have just replaced the .gz by the .zst.
		if data, err2 := g.Blobs.Get(ctx, key); err2 == nil {
			return decodeBlob(key, name, data)
		}
		return nil, &segError{path: name, msg: "does not exist (nor " + path.Base(gz) + ")", err: fs.ErrNotExist}
	}
	return nil, openError(gzName, err)
}

func openError(name string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return &segError{path: name, msg: "does not exist", err: err}
	}
	return blobError(name, "read", err)
}

// blobError reports a failed operation of Blobs on the segment name: the
// error itself when it already names the segment (Files' errors do),
// else one that does.
func blobError(name, op string, err error) error {
	var se *segError
	if errors.As(err, &se) {
		return err
	}
	return ioError(name, op, err)
}

// decodeBlob decodes the blob data of key, named name.
func decodeBlob(key, name string, data []byte) (*segment, error) {
	s, err := decode(name, data)
	if err != nil {
		return nil, err
	}
	s.key = key
	return s, nil
}

// decode decompresses and verifies the file content data read from path.
func decode(path string, data []byte) (*segment, error) {
	var raw []byte
	var err error
	isGzip := strings.HasSuffix(path, ".gz")
	if isGzip {
		raw, err = gunzip(data)
		if err != nil {
			return nil, corrupt(path, "gzip: %v", err)
		}
	} else {
		if len(data) == 0 {
			return nil, corrupt(path, "empty file")
		}
		raw, err = decoder.DecodeAll(data, nil)
		if err != nil {
			return nil, corrupt(path, "zstd: %v", err)
		}
	}
	recs, err := parse(path, raw, !isGzip, isGzip || !checksummed(data))
	if err != nil {
		return nil, err
	}
	return &segment{path: path, recs: recs, size: int64(len(data)), raw: int64(len(raw))}, nil
}

func gunzip(data []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.Grow(4 * len(data))
	if _, err := io.Copy(&buf, io.LimitReader(zr, maxDecoded+1)); err != nil {
		return nil, err
	}
	if buf.Len() > maxDecoded {
		return nil, errors.New("decompressed size exceeds 1 GiB")
	}
	return buf.Bytes(), zr.Close()
}

const (
	trailerPrefix = `{"checksum":` // format 1 only
	recPrefix     = `{"seq":`
	recMiddle     = `,"rec":`
)

type trailer struct {
	Checksum string `json:"checksum"`
	Records  *int   `json:"records"`
}

// parse verifies the decompressed segment raw and returns its records.
// A zstd segment (zst) must end in a newline; a gzip file may lack it.
// Unless validate, lines in the exact forms Merge writes are trusted to be
// valid JSON (a checksum proved them unchanged since Merge validated
// them). A format 1 trailer is verified wherever it is found.
func parse(path string, raw []byte, zst, validate bool) ([]Record, error) {
	body := raw
	if len(raw) > 0 {
		end := len(raw)
		if raw[end-1] == '\n' {
			end--
		} else if zst {
			return nil, corrupt(path, "does not end with a newline (truncated?)")
		}
		start := bytes.LastIndexByte(raw[:end], '\n') + 1
		last := raw[start:end]
		if bytes.HasPrefix(bytes.TrimLeft(last, " \t"), []byte(trailerPrefix)) {
			var t trailer
			if err := json.Unmarshal(last, &t); err != nil {
				return nil, corrupt(path, "bad trailer: %v", err)
			}
			sum, ok := strings.CutPrefix(t.Checksum, "sha256:")
			want, err := hex.DecodeString(sum)
			if !ok || err != nil || len(want) != sha256.Size || t.Records == nil {
				return nil, corrupt(path, "bad trailer %q", last)
			}
			body = raw[:start]
			got := sha256.Sum256(body)
			if !bytes.Equal(got[:], want) {
				return nil, corrupt(path, "checksum mismatch")
			}
			recs, err := parseLines(path, body, false)
			if err != nil {
				return nil, err
			}
			if len(recs) != *t.Records {
				return nil, corrupt(path, "trailer says %d records, found %d", *t.Records, len(recs))
			}
			return recs, nil
		}
	}
	return parseLines(path, body, validate)
}

// checksummed reports whether the zstd frame data carries a content
// checksum (the decoder verified it then); Merge always writes one.
func checksummed(data []byte) bool {
	var h zstd.Header
	return h.Decode(data) == nil && h.HasCheckSum
}

// parseLines parses record lines (each ending in '\n' except perhaps the
// last), checking that seqs strictly increase. Unless validate, lines in
// the exact forms Merge writes are trusted to hold valid JSON: the caller
// verified a checksum over them, and Merge validates every line.
func parseLines(path string, body []byte, validate bool) ([]Record, error) {
	recs := make([]Record, 0, bytes.Count(body, []byte{'\n'})+1)
	for n := 1; len(body) > 0; n++ {
		var line []byte
		if i := bytes.IndexByte(body, '\n'); i >= 0 {
			line, body = body[:i:i], body[i+1:]
		} else {
			line, body = body, nil
		}
		r, err := parseRecord(line, validate)
		if err != nil {
			return nil, corrupt(path, "line %d: %v", n, err)
		}
		if len(recs) > 0 && r.Seq <= recs[len(recs)-1].Seq {
			return nil, corrupt(path, "line %d: seq %d after seq %d", n, r.Seq, recs[len(recs)-1].Seq)
		}
		recs = append(recs, r)
	}
	return recs, nil
}

// parseRecord parses a record line: [N,value] (format 2, what Merge
// writes) or {"seq":N,"rec":{...}} (format 1, read only). The fast path
// reads the exact forms Merge writes and wrote (checking that the value is
// valid JSON if validate); anything else goes through encoding/json.
func parseRecord(line []byte, validate bool) (Record, error) {
	if rest, ok := bytes.CutPrefix(line, []byte{'['}); ok {
		if seq, n, ok := parseInt(rest); ok && n < len(rest) && rest[n] == ',' {
			inner := rest[n+1:]
			if len(inner) > 2 && inner[len(inner)-1] == ']' {
				inner = inner[: len(inner)-1 : len(inner)-1]
				if (inner[0] == '[' || inner[0] == '{') && (!validate || json.Valid(inner)) {
					return Record{Seq: seq, Line: inner}, nil
				}
			}
		}
		var v []json.RawMessage
		if err := json.Unmarshal(line, &v); err != nil {
			return Record{}, err
		}
		var seq int64
		if len(v) != 2 || json.Unmarshal(v[0], &seq) != nil || (v[1][0] != '[' && v[1][0] != '{') {
			return Record{}, errors.New("not a [seq,value] record")
		}
		return Record{Seq: seq, Line: v[1]}, nil
	}
	if rest, ok := bytes.CutPrefix(line, []byte(recPrefix)); ok {
		if seq, n, ok := parseInt(rest); ok {
			rest = rest[n:]
			if inner, ok := bytes.CutPrefix(rest, []byte(recMiddle)); ok && len(inner) > 1 && inner[0] == '{' && inner[len(inner)-1] == '}' {
				inner = inner[: len(inner)-1 : len(inner)-1]
				if !validate || json.Valid(inner) {
					return Record{Seq: seq, Line: inner}, nil
				}
			}
		}
	}
	var v struct {
		Seq *int64          `json:"seq"`
		Rec json.RawMessage `json:"rec"`
	}
	if err := json.Unmarshal(line, &v); err != nil {
		return Record{}, err
	}
	if v.Seq == nil || len(v.Rec) == 0 || v.Rec[0] != '{' {
		return Record{}, errors.New(`not a [seq,value] or {"seq":N,"rec":{...}} record`)
	}
	return Record{Seq: *v.Seq, Line: v.Rec}, nil
}

// parseInt parses a decimal int64 at the start of b, returning it and its
// length.
func parseInt(b []byte) (int64, int, bool) {
	i, neg := 0, false
	if len(b) > 0 && b[0] == '-' {
		neg, i = true, 1
	}
	start := i
	var u uint64
	for ; i < len(b) && '0' <= b[i] && b[i] <= '9'; i++ {
		if u > (1<<63)/10 {
			return 0, 0, false
		}
		u = u*10 + uint64(b[i]-'0')
	}
	if i == start || i-start > 19 || (b[start] == '0' && i-start > 1) {
		return 0, 0, false
	}
	if neg {
		if u > 1<<63 {
			return 0, 0, false
		}
		return -int64(u), i, true
	}
	if u > 1<<63-1 {
		return 0, 0, false
	}
	return int64(u), i, true
}

// checkLine validates a record value and trims surrounding spaces and
// tabs.
func checkLine(line []byte) ([]byte, error) {
	if bytes.ContainsAny(line, "\n\r") {
		return nil, errors.New("line contains a line break")
	}
	line = bytes.Trim(line, " \t")
	if len(line) == 0 || (line[0] != '{' && line[0] != '[') || !json.Valid(line) {
		return nil, errors.New("line is not a JSON array or object")
	}
	return line, nil
}

// encode returns the decompressed form of a segment holding recs: one
// [seq,value] line per record, no trailer (the zstd frame checksum covers
// the content).
func encode(recs []Record) []byte {
	n := 0
	for _, r := range recs {
		n += len(r.Line) + 24
	}
	buf := make([]byte, 0, n)
	for _, r := range recs {
		buf = append(buf, '[')
		buf = strconv.AppendInt(buf, r.Seq, 10)
		buf = append(buf, ',')
		buf = append(buf, r.Line...)
		buf = append(buf, ']', '\n')
	}
	return buf
}

// commit writes recs (sorted, unique, non-empty) as the segment at key,
// through Blobs.Put with a check that decodes what was written and
// compares it with recs.
func (g Segments) commit(ctx context.Context, key string, recs []Record) (Info, error) {
	name := g.Blobs.Locate(key)
	raw := encode(recs)
	comp := segmentEncoder.EncodeAll(raw, make([]byte, 0, len(raw)/3+64))
	var s *segment
	err := g.Blobs.Put(ctx, key, comp, func(back []byte) error {
		got, err := decode(name, back)
		if err != nil {
			return err
		}
		if len(got.recs) != len(recs) || got.raw != int64(len(raw)) {
			return fmt.Errorf("read back %d records, wrote %d", len(got.recs), len(recs))
		}
		for i := range recs {
			if got.recs[i].Seq != recs[i].Seq || !bytes.Equal(got.recs[i].Line, recs[i].Line) {
				return fmt.Errorf("record %d differs on read back", i)
			}
		}
		s = got
		return nil
	})
	if err != nil {
		return Info{}, blobError(name, "write", err)
	}
	if s == nil {
		return Info{}, invalid(name, "write: the blobs did not hand the segment back for verification")
	}
	// The .gz sibling, if any, is shadowed by the .zst now.
	gz := gzipSibling(key)
	if err := g.Blobs.Delete(ctx, gz); err == nil {
		at("gz-removed")
	} else if !errors.Is(err, fs.ErrNotExist) {
		return Info{}, blobError(g.Blobs.Locate(gz), "remove", err)
	}
	s.key, s.path = key, name
	s.size = int64(len(comp))
	return s.info(), nil
}

// sweeper is implemented by the Blobs (Files) that can leave debris of a
// killed write behind, to delete it when there is nothing to write.
type sweeper interface {
	sweep(key string)
}

// tidy finishes what a killed Merge or Remove may have left when there
// is nothing to write: temps, and a .gz sibling shadowed by the .zst s.
func (g Segments) tidy(ctx context.Context, s *segment) error {
	if !strings.HasSuffix(s.key, Ext) {
		return nil // s is the .gz itself
	}
	if sw, ok := g.Blobs.(sweeper); ok {
		sw.sweep(s.key)
	}
	gz := gzipSibling(s.key)
	if err := g.Blobs.Delete(ctx, gz); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return blobError(g.Blobs.Locate(gz), "remove", err)
	}
	return nil
}

// locks serializes Merge and Remove on one segment within the process
// (striped: unrelated segments rarely share a lock, and holding one
// briefly longer is harmless). Files' segments are told apart by absolute
// path, so two Files of one folder share their locks.
var locks [64]sync.Mutex

func lock(b Blobs, key string) func() {
	name := b.Locate(key)
	if _, ok := b.(*Files); ok {
		if abs, err := filepath.Abs(name); err == nil {
			name = abs
		}
	}
	return lockPath(&locks, name)
}

// lockPath locks the mutex of name among stripes.
func lockPath(stripes *[64]sync.Mutex, name string) func() {
	h := fnv.New32a()
	h.Write([]byte(name))
	m := &stripes[h.Sum32()%uint32(len(stripes))]
	m.Lock()
	return m.Unlock
}
