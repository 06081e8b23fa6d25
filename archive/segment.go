package archive

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

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
	Path     string // the file read or written (the .jsonl.gz one when read from it)
	Records  int
	Bytes    int64 // size of the file
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

// Merge rewrites the segment at path (which must end in .jsonl.zst) so that
// it holds its records plus recs, one per Seq, sorted by Seq: a record in
// recs replaces a stored one with the same Seq, and among records of recs
// with the same Seq the last wins. It creates the folder if needed; with
// no recs it writes nothing. The new segment is written to a temp file,
// fsynced, read back and verified, then renamed over path and the folder
// fsynced, so a kill at any instant leaves the old segment or the new one.
// If only the .jsonl.gz form exists its records are carried over and it is
// deleted afterwards. A corrupt existing segment is an error (nothing is
// written). It returns the stats of the resulting segment.
func Merge(path string, recs []Record) (Info, error) {
	if !strings.HasSuffix(path, Ext) {
		return Info{}, invalid(path, "Merge: path must end in %s", Ext)
	}
	add := make([]Record, len(recs))
	for i, r := range recs {
		line, err := checkLine(r.Line)
		if err != nil {
			return Info{}, invalid(path, "record seq %d: %v", r.Seq, err)
		}
		add[i] = Record{Seq: r.Seq, Line: line}
	}
	unlock := lock(path)
	defer unlock()

	old, err := load(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if len(add) == 0 {
			return Info{Path: path}, nil
		}
		old = &segment{path: path}
	case err != nil:
		return Info{}, err
	}
	if len(add) == 0 {
		return old.info(), tidy(old)
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
	return commit(path, merged)
}

// Remove rewrites the segment at path (which must end in .jsonl.zst)
// without the records whose Seq lies in [from, to], deleting the file when
// none remain, with the crash safety of Merge. A segment that does not
// exist holds nothing to remove: Remove returns Info{Path: path} and no
// error. When no record lies in the range nothing is written.
func Remove(path string, from, to int64) (Info, error) {
	if !strings.HasSuffix(path, Ext) {
		return Info{}, invalid(path, "Remove: path must end in %s", Ext)
	}
	unlock := lock(path)
	defer unlock()

	old, err := load(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Info{Path: path}, nil
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
		return old.info(), tidy(old)
	}
	if len(keep) > 0 {
		return commit(path, keep)
	}
	// Nothing left: delete the .gz sibling first (the .zst shadows it), so
	// that a kill in between never brings its records back.
	dir := filepath.Dir(path)
	gz := gzipSibling(path)
	if err := os.Remove(gz); err == nil {
		at("gz-removed")
	} else if !errors.Is(err, fs.ErrNotExist) {
		return Info{}, ioError(gz, "remove", err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Info{}, ioError(path, "remove", err)
	}
	at("removed")
	if err := syncDir(dir); err != nil {
		return Info{}, ioError(path, "fsync folder", err)
	}
	return Info{Path: path}, nil
}

// Read returns the records of the segment at path with from <= Seq <= to
// (to == 0: no upper bound), in Seq order, after verifying the whole
// segment. If path ends in .jsonl.zst and does not exist, the .jsonl.gz
// file of the same stem is read instead. A missing segment is an error for
// which errors.Is(err, fs.ErrNotExist) holds; a segment failing
// verification is one wrapping ErrCorrupt. Both name the path.
func Read(path string, from, to int64) ([]Record, error) {
	s, err := load(path)
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

// Stat reads and verifies the segment at path (with the .jsonl.gz
// fallback of Read) and returns its stats.
func Stat(path string) (Info, error) {
	s, err := load(path)
	if err != nil {
		return Info{}, err
	}
	return s.info(), nil
}

// segment is a loaded, verified segment.
type segment struct {
	path      string
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

func gzipSibling(path string) string {
	return strings.TrimSuffix(path, Ext) + GzipExt
}

// load reads and verifies the segment at path, falling back to the gzip
// sibling of a missing .jsonl.zst.
func load(path string) (*segment, error) {
	data, err := os.ReadFile(path)
	if err == nil {
		return decode(path, data)
	}
	if !errors.Is(err, fs.ErrNotExist) || !strings.HasSuffix(path, Ext) {
		return nil, openError(path, err)
	}
	gz := gzipSibling(path)
	data, err = os.ReadFile(gz)
	if err == nil {
		return decode(gz, data)
	}
	if errors.Is(err, fs.ErrNotExist) {
		// A concurrent Merge may have just replaced the .gz by the .zst.
		if data, err2 := os.ReadFile(path); err2 == nil {
			return decode(path, data)
		}
		return nil, &segError{path: path, msg: "does not exist (nor " + filepath.Base(gz) + ")", err: fs.ErrNotExist}
	}
	return nil, openError(gz, err)
}

func openError(path string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return &segError{path: path, msg: "does not exist", err: err}
	}
	return ioError(path, "read", err)
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

// commit writes recs (sorted, unique, non-empty) as the segment at path.
func commit(path string, recs []Record) (Info, error) {
	dir, base := filepath.Dir(path), filepath.Base(path)
	if err := ensureDir(dir); err != nil {
		return Info{}, ioError(path, "create folder", err)
	}
	cleanTemps(dir, base)

	raw := encode(recs)
	comp := segmentEncoder.EncodeAll(raw, make([]byte, 0, len(raw)/3+64))

	tmpDir := filepath.Join(dir, tempFolder)
	if err := ensureDir(tmpDir); err != nil {
		return Info{}, ioError(path, "create temp folder", err)
	}
	f, err := os.CreateTemp(tmpDir, "."+base+".tmp-*")
	if err != nil {
		return Info{}, ioError(path, "create temp", err)
	}
	tmp := f.Name()
	done := false
	defer func() {
		if !done {
			f.Close()
			os.Remove(tmp)
		}
	}()
	half := len(comp) / 2
	if _, err := f.Write(comp[:half]); err != nil {
		return Info{}, ioError(path, "write temp "+filepath.Base(tmp), err)
	}
	at("temp-partial")
	if _, err := f.Write(comp[half:]); err != nil {
		return Info{}, ioError(path, "write temp "+filepath.Base(tmp), err)
	}
	at("temp-written")
	if err := f.Sync(); err != nil {
		return Info{}, ioError(path, "fsync temp "+filepath.Base(tmp), err)
	}
	if err := f.Close(); err != nil {
		return Info{}, ioError(path, "close temp "+filepath.Base(tmp), err)
	}
	at("temp-synced")

	// Read back and verify.
	back, err := os.ReadFile(tmp)
	if err != nil {
		return Info{}, ioError(path, "read back temp "+filepath.Base(tmp), err)
	}
	s, err := decode(path, back)
	if err != nil {
		return Info{}, invalid(path, "verify temp %s: %v", filepath.Base(tmp), err)
	}
	if len(s.recs) != len(recs) || s.raw != int64(len(raw)) {
		return Info{}, invalid(path, "verify temp %s: read back %d records, wrote %d", filepath.Base(tmp), len(s.recs), len(recs))
	}
	for i := range recs {
		if s.recs[i].Seq != recs[i].Seq || !bytes.Equal(s.recs[i].Line, recs[i].Line) {
			return Info{}, invalid(path, "verify temp %s: record %d differs on read back", filepath.Base(tmp), i)
		}
	}
	at("verified")

	if err := os.Rename(tmp, path); err != nil {
		return Info{}, ioError(path, "rename temp", err)
	}
	done = true
	at("renamed")
	if err := syncDir(dir); err != nil {
		return Info{}, ioError(path, "fsync folder", err)
	}
	at("dir-synced")
	// The .gz sibling, if any, is shadowed by the .zst now.
	if err := os.Remove(gzipSibling(path)); err == nil {
		at("gz-removed")
		if err := syncDir(dir); err != nil {
			return Info{}, ioError(path, "fsync folder", err)
		}
	}
	s.path = path
	s.size = int64(len(comp))
	return s.info(), nil
}

// tidy finishes what a killed Merge or Remove may have left when there
// is nothing to write: temps, and a .gz sibling shadowed by the .zst s.
func tidy(s *segment) error {
	if !strings.HasSuffix(s.path, Ext) {
		return nil // s is the .gz itself
	}
	dir := filepath.Dir(s.path)
	cleanTemps(dir, filepath.Base(s.path))
	if err := os.Remove(gzipSibling(s.path)); err == nil {
		if err := syncDir(dir); err != nil {
			return ioError(s.path, "fsync folder", err)
		}
	}
	return nil
}

// tempMaxAge is the age past which a temp of another segment is deemed
// left over by a killed writer.
const tempMaxAge = time.Hour

// tempFolder is the folder, inside a conversation's archive folder, where
// segments are written before they are renamed into place. Keeping temps
// apart means cleaning them up lists a folder that is almost always empty,
// not every segment of the conversation: listing thousands of segments on
// every write made long imports quadratic.
const tempFolder = ".tmp"

// sweptLegacy records the folders whose legacy temps (written beside the
// segments by earlier versions) this process has cleaned already.
var sweptLegacy sync.Map

// cleanTemps deletes leftover temps of dir's segments: those of the segment
// base, and those of other segments older than tempMaxAge. Temps live in
// dir's temp folder; temps that earlier versions left beside the segments
// are swept once per folder and process. Best effort.
func cleanTemps(dir, base string) {
	sweepTemps(filepath.Join(dir, tempFolder), base)
	if _, done := sweptLegacy.LoadOrStore(dir, true); !done {
		sweepTemps(dir, base)
	}
}

func sweepTemps(dir, base string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	own := "." + base + ".tmp-"
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, ".") || !strings.Contains(name, Ext+".tmp-") {
			continue
		}
		if !strings.HasPrefix(name, own) {
			fi, err := e.Info()
			if err != nil || time.Since(fi.ModTime()) < tempMaxAge {
				continue
			}
		}
		os.Remove(filepath.Join(dir, name))
	}
}

// ensureDir creates dir and fsyncs the parent of every folder it creates.
func ensureDir(dir string) error {
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
		return nil
	}
	var created []string
	for d := dir; ; {
		if _, err := os.Stat(d); err == nil {
			break
		}
		created = append(created, d)
		p := filepath.Dir(d)
		if p == d {
			break
		}
		d = p
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for i := len(created) - 1; i >= 0; i-- {
		if err := syncDir(filepath.Dir(created[i])); err != nil {
			return err
		}
	}
	return nil
}

// syncDir fsyncs a folder so that renames and deletions in it are durable.
func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil // folders cannot be fsynced there; renames are durable
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTSUP) {
		err = nil // file systems that do not support it
	}
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// locks serializes Merge and Remove on one path within the process
// (striped: unrelated paths rarely share a lock, and holding one briefly
// longer is harmless).
var locks [64]sync.Mutex

func lock(path string) func() {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	h := fnv.New32a()
	h.Write([]byte(path))
	m := &locks[h.Sum32()%uint32(len(locks))]
	m.Lock()
	return m.Unlock
}
