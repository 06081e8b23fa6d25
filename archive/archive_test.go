package archive

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

var words = strings.Fields(`the model said that archive segments hold cold turns
of one conversation per day and a reader verifies checksum trailer before any
record is returned to the store which keeps warm blocks compressed in sqlite
while hot rows stay plain so context assembly never waits on disk`)

// line returns a turn-like JSON object of about size bytes for seq,
// tagged with v so that versions of one seq differ.
func line(seq int64, v string, size int) json.RawMessage {
	var b strings.Builder
	for i := int(seq); b.Len() < size-90; i = i*7 + 3 {
		b.WriteString(words[(i&0x7fffffff)%len(words)])
		b.WriteByte(' ')
	}
	out, _ := json.Marshal(map[string]any{
		"role": "user", "v": v, "content": b.String(),
		"ts": time.Date(2023, 5, 8, 0, 0, int(seq%86400), 0, time.UTC), "tokens": seq % 97,
	})
	return out
}

func recs(v string, seqs ...int64) []Record {
	out := make([]Record, len(seqs))
	for i, s := range seqs {
		out[i] = Record{Seq: s, Line: line(s, v, 300)}
	}
	return out
}

func span(from, to int64) []int64 {
	var out []int64
	for s := from; s <= to; s++ {
		out = append(out, s)
	}
	return out
}

var testDay = time.Date(2023, 5, 8, 23, 0, 0, 0, time.UTC)

func segPath(t testing.TB) string {
	return filepath.Join(t.TempDir(), "ns", "conv", Name(testDay))
}

func mustMerge(t testing.TB, path string, rs []Record) Info {
	t.Helper()
	in, err := Merge(path, rs)
	if err != nil {
		t.Fatalf("Merge: %v", err)
	}
	return in
}

func sameRecords(t testing.TB, got, want []Record) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d records %v, want %d %v", len(got), seqsOf(got), len(want), seqsOf(want))
	}
	for i := range got {
		if got[i].Seq != want[i].Seq || !bytes.Equal(got[i].Line, want[i].Line) {
			t.Fatalf("record %d: got seq %d %s, want seq %d %s", i, got[i].Seq, got[i].Line, want[i].Seq, want[i].Line)
		}
	}
}

func seqsOf(rs []Record) []int64 {
	out := make([]int64, len(rs))
	for i, r := range rs {
		out[i] = r.Seq
	}
	return out
}

// TestName: a record goes to the segment of its UTC month; DayPeriod is
// the UTC date earlier versions named segments by.
func TestName(t *testing.T) {
	at := time.Date(2023, 6, 1, 1, 0, 0, 0, time.FixedZone("x", 3*3600)) // 2023-05-31 22:00 UTC
	if got := Name(at); got != "2023-05.jsonl.zst" {
		t.Fatalf("Name = %q", got)
	}
	if got := Period(at); got != "2023-05" {
		t.Fatalf("Period = %q", got)
	}
	if got := DayPeriod(at); got != "2023-05-31" {
		t.Fatalf("DayPeriod = %q", got)
	}
	if got := Period(time.Time{}); got != "0001-01" {
		t.Fatalf("Period of the zero time = %q", got)
	}
}

func TestRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		recs []Record
	}{
		{"one", recs("a", 7)},
		{"hundred", recs("a", span(1, 100)...)},
		{"negative and zero and extremes", recs("a", math.MinInt64, -5, 0, math.MaxInt64)},
		{"unicode and escapes", []Record{
			{Seq: 1, Line: json.RawMessage(`{"content":"héllo 世界 🎉","esc":"a\nb\u2028\"q\""}`)},
			{Seq: 2, Line: json.RawMessage(`  {"nested":{"a":[1,2,{"b":null}]}}	`)},
			{Seq: 3, Line: json.RawMessage(`{}`)},
		}},
		{"big record", []Record{{Seq: 1, Line: line(1, "big", 1<<20)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := segPath(t)
			in := mustMerge(t, path, tt.recs)
			want := slices.Clone(tt.recs)
			for i := range want {
				want[i].Line = bytes.Trim(want[i].Line, " \t")
			}
			got, err := Read(path, math.MinInt64, 0)
			if err != nil {
				t.Fatal(err)
			}
			sameRecords(t, got, want)
			st, err := Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			fi, _ := os.Stat(path)
			if st != in || in.Records != len(want) || in.Bytes != fi.Size() || in.Path != path ||
				in.First != want[0].Seq || in.Last != want[len(want)-1].Seq || in.RawBytes <= 0 {
				t.Fatalf("Merge info %+v, Stat %+v, size %d", in, st, fi.Size())
			}
			for _, r := range got {
				if !json.Valid(r.Line) {
					t.Fatalf("invalid line %s", r.Line)
				}
			}
		})
	}
}

func TestReadRange(t *testing.T) {
	path := segPath(t)
	all := recs("a", 2, 4, 6, 8, 10)
	mustMerge(t, path, all)
	tests := []struct {
		from, to int64
		want     []int64
	}{
		{0, 0, []int64{2, 4, 6, 8, 10}},
		{4, 8, []int64{4, 6, 8}},
		{3, 7, []int64{4, 6}},
		{5, 5, nil},
		{6, 6, []int64{6}},
		{9, 0, []int64{10}},
		{11, 0, nil},
		{8, 4, nil},
		{-100, 1, nil},
	}
	for _, tt := range tests {
		got, err := Read(path, tt.from, tt.to)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(seqsOf(got), tt.want) {
			t.Errorf("Read(%d, %d) = %v, want %v", tt.from, tt.to, seqsOf(got), tt.want)
		}
	}
	// Lines do not share capacity: appending to one leaves the next intact.
	got, _ := Read(path, 0, 0)
	_ = append(got[0].Line, "xxxxxxxx"...)
	sameRecords(t, got[1:], all[1:])
}

func TestMerge(t *testing.T) {
	tests := []struct {
		name     string
		existing []Record
		add      []Record
		want     []Record
	}{
		{"into empty, unsorted", nil, recs("n", 5, 1, 3), recs("n", 1, 3, 5)},
		{"disjoint interleaved", recs("o", 1, 3, 5), recs("n", 2, 4, 6), append(append(recs("o", 1), recs("n", 2)...), append(append(recs("o", 3), recs("n", 4)...), append(recs("o", 5), recs("n", 6)...)...)...)},
		{"replace stored", recs("o", 1, 2, 3), recs("n", 2), append(append(recs("o", 1), recs("n", 2)...), recs("o", 3)...)},
		{"replace all plus more", recs("o", 1, 2), recs("n", 0, 1, 2, 3), recs("n", 0, 1, 2, 3)},
		{"duplicates in recs: last wins", nil, append(recs("x", 1, 2), append(recs("y", 2, 1), recs("z", 2)...)...), append(recs("y", 1), recs("z", 2)...)},
		{"nothing to add", recs("o", 1, 2), nil, recs("o", 1, 2)},
		{"same again", recs("o", 1, 2), recs("o", 1, 2), recs("o", 1, 2)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := segPath(t)
			if tt.existing != nil {
				mustMerge(t, path, tt.existing)
			}
			in := mustMerge(t, path, tt.add)
			got, err := Read(path, math.MinInt64, 0)
			if err != nil {
				t.Fatal(err)
			}
			sameRecords(t, got, tt.want)
			if in.Records != len(tt.want) || in.First != tt.want[0].Seq || in.Last != tt.want[len(tt.want)-1].Seq {
				t.Fatalf("info %+v", in)
			}
		})
	}
}

func TestMergeNothingIntoMissing(t *testing.T) {
	path := segPath(t)
	in, err := Merge(path, nil)
	if err != nil || in != (Info{Path: path}) {
		t.Fatalf("Merge(nil) = %+v, %v", in, err)
	}
	if _, err := os.Stat(filepath.Dir(path)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("folder created for nothing: %v", err)
	}
}

func TestMergeInvalid(t *testing.T) {
	path := segPath(t)
	tests := []struct {
		name string
		path string
		recs []Record
		want string
	}{
		{"newline", path, []Record{{Seq: 1, Line: json.RawMessage("{\"a\":\n1}")}}, "line break"},
		{"carriage return", path, []Record{{Seq: 1, Line: json.RawMessage("{\"a\":1}\r")}}, "line break"},
		{"not json", path, []Record{{Seq: 1, Line: json.RawMessage(`{"a":`)}}, "not a JSON array or object"},
		{"bad array", path, []Record{{Seq: 1, Line: json.RawMessage(`[1,]`)}}, "not a JSON array or object"},
		{"string", path, []Record{{Seq: 1, Line: json.RawMessage(`"turn"`)}}, "not a JSON array or object"},
		{"empty", path, []Record{{Seq: 1}}, "not a JSON array or object"},
		{"bad name", filepath.Join(t.TempDir(), "x.jsonl.gz"), recs("a", 1), "must end in .jsonl.zst"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Merge(tt.path, tt.recs)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), tt.path) {
				t.Fatalf("err = %v, want %q naming %s", err, tt.want, tt.path)
			}
			if _, err := os.Stat(tt.path); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("segment written despite error")
			}
		})
	}
}

func TestRemove(t *testing.T) {
	tests := []struct {
		name     string
		from, to int64
		want     []int64 // nil: file deleted
	}{
		{"middle", 4, 6, []int64{1, 2, 3, 7, 8, 9, 10}},
		{"head", math.MinInt64, 3, []int64{4, 5, 6, 7, 8, 9, 10}},
		{"tail", 9, math.MaxInt64, span(1, 8)},
		{"one", 5, 5, []int64{1, 2, 3, 4, 6, 7, 8, 9, 10}},
		{"all", 1, 10, nil},
		{"all, wider", -1, 100, nil},
		{"none", 11, 20, span(1, 10)},
		{"empty range", 6, 4, span(1, 10)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := segPath(t)
			mustMerge(t, path, recs("a", span(1, 10)...))
			before, _ := os.ReadFile(path)
			in, err := Remove(path, tt.from, tt.to)
			if err != nil {
				t.Fatal(err)
			}
			if tt.want == nil {
				if in != (Info{Path: path}) {
					t.Fatalf("info %+v", in)
				}
				if _, err := Read(path, 0, 0); !errors.Is(err, fs.ErrNotExist) {
					t.Fatalf("Read after removing all: %v", err)
				}
				return
			}
			got, err := Read(path, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			sameRecords(t, got, recs("a", tt.want...))
			if in.Records != len(tt.want) {
				t.Fatalf("info %+v", in)
			}
			if len(tt.want) == 10 {
				after, _ := os.ReadFile(path)
				if !bytes.Equal(before, after) {
					t.Fatal("segment rewritten though nothing was removed")
				}
			}
		})
	}
	t.Run("missing", func(t *testing.T) {
		path := segPath(t)
		in, err := Remove(path, 0, 10)
		if err != nil || in != (Info{Path: path}) {
			t.Fatalf("Remove on missing = %+v, %v", in, err)
		}
	})
}

// zstdRaw writes raw, compressed, as the segment at path.
func zstdRaw(t *testing.T, path string, raw []byte) {
	t.Helper()
	os.MkdirAll(filepath.Dir(path), 0o700)
	if err := os.WriteFile(path, Compress(raw), 0o600); err != nil {
		t.Fatal(err)
	}
}

// withTrailer appends a correct format 1 trailer for n records to body.
func withTrailer(body string, n int) []byte {
	sum := sha256.Sum256([]byte(body))
	return []byte(body + `{"checksum":"sha256:` + hex.EncodeToString(sum[:]) + `","records":` + strconv.Itoa(n) + "}\n")
}

// format1 returns rs as the lines of a format 1 segment, without trailer.
func format1(rs []Record) string {
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, `{"seq":%d,"rec":%s}`+"\n", r.Seq, r.Line)
	}
	return b.String()
}

func TestCorrupt(t *testing.T) {
	good := encode(recs("a", span(1, 20)...))
	v1 := format1(recs("a", span(1, 20)...))
	tests := []struct {
		name  string
		write func(t *testing.T, path string) // start: a good 20-record segment at path
		want  string
	}{
		{"flip middle byte", func(t *testing.T, path string) {
			b, _ := os.ReadFile(path)
			b[len(b)/2] ^= 0x40
			os.WriteFile(path, b, 0o600)
		}, ""},
		{"flip last byte (frame checksum)", func(t *testing.T, path string) {
			b, _ := os.ReadFile(path)
			b[len(b)-1] ^= 1
			os.WriteFile(path, b, 0o600)
		}, ""},
		{"truncate half", func(t *testing.T, path string) {
			b, _ := os.ReadFile(path)
			os.WriteFile(path, b[:len(b)/2], 0o600)
		}, "zstd"},
		{"truncate 1 byte", func(t *testing.T, path string) {
			b, _ := os.ReadFile(path)
			os.WriteFile(path, b[:len(b)-1], 0o600)
		}, "zstd"},
		{"truncate to empty", func(t *testing.T, path string) { os.WriteFile(path, nil, 0o600) }, "empty file"},
		{"garbage", func(t *testing.T, path string) { os.WriteFile(path, []byte("hello, not zstd at all"), 0o600) }, "zstd"},
		{"garbage appended", func(t *testing.T, path string) {
			b, _ := os.ReadFile(path)
			os.WriteFile(path, append(b, "junk"...), 0o600)
		}, "zstd"},
		{"decompressed truncated mid-line", func(t *testing.T, path string) { zstdRaw(t, path, good[:len(good)-10]) }, "newline"},
		{"format 1 truncated mid-trailer", func(t *testing.T, path string) { zstdRaw(t, path, withTrailer(v1, 20)[:len(v1)+30]) }, "newline"},
		{"format 1 checksum mismatch", func(t *testing.T, path string) {
			bad := []byte(strings.Replace(v1, `"seq":5,`, `"seq":5 ,`, 1))
			zstdRaw(t, path, append(bad, withTrailer(v1, 20)[len(v1):]...))
		}, "checksum mismatch"},
		{"format 1 record count mismatch", func(t *testing.T, path string) { zstdRaw(t, path, withTrailer(v1, 19)) }, "trailer says 19 records, found 20"},
		{"format 1 bad trailer", func(t *testing.T, path string) {
			zstdRaw(t, path, []byte(v1+`{"checksum":"md5:abc","records":20}`+"\n"))
		}, "bad trailer"},
		{"out of order", func(t *testing.T, path string) {
			zstdRaw(t, path, []byte(`[2,{}]`+"\n"+`[1,{}]`+"\n"))
		}, "seq 1 after seq 2"},
		{"duplicate seq", func(t *testing.T, path string) {
			zstdRaw(t, path, []byte(`[2,{}]`+"\n"+`{"seq":2,"rec":{}}`+"\n"))
		}, "seq 2 after seq 2"},
		{"not a record", func(t *testing.T, path string) {
			zstdRaw(t, path, []byte(`[2,{}]`+"\n"+`{"hello":1}`+"\n"))
		}, "line 2"},
		{"array without value", func(t *testing.T, path string) {
			zstdRaw(t, path, []byte(`[2,{}]`+"\n"+`[3]`+"\n"))
		}, "line 2: not a [seq,value] record"},
		{"blank line", func(t *testing.T, path string) {
			zstdRaw(t, path, []byte(`[2,{}]`+"\n\n"))
		}, "line 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := segPath(t)
			mustMerge(t, path, recs("a", span(1, 20)...))
			tt.write(t, path)
			check := func(op string, err error) {
				t.Helper()
				if err == nil {
					t.Fatalf("%s: no error", op)
				}
				msg := err.Error()
				if !strings.HasPrefix(msg, "archive segment "+path+": ") || !errors.Is(err, ErrCorrupt) ||
					!strings.Contains(msg, tt.want) || !strings.HasSuffix(msg, "(corrupt)") {
					t.Fatalf("%s: err = %v, want ErrCorrupt naming %s and saying %q", op, err, path, tt.want)
				}
			}
			_, err := Read(path, 0, 0)
			check("Read", err)
			_, err = Stat(path)
			check("Stat", err)
			before, _ := os.ReadFile(path)
			_, err = Merge(path, recs("b", 100))
			check("Merge", err)
			_, err = Remove(path, 1, 1)
			check("Remove", err)
			after, _ := os.ReadFile(path)
			if !bytes.Equal(before, after) {
				t.Fatal("corrupt segment was overwritten")
			}
		})
	}
}

func TestMissing(t *testing.T) {
	path := segPath(t)
	mustMerge(t, path, recs("a", 1))
	os.Remove(path)
	for name, f := range map[string]func() error{
		"Read": func() error { _, err := Read(path, 0, 0); return err },
		"Stat": func() error { _, err := Stat(path); return err },
		"Read gz path": func() error {
			_, err := Read(gzipSibling(path), 0, 0)
			if err != nil && !strings.Contains(err.Error(), gzipSibling(path)) {
				t.Errorf("error %v does not name %s", err, gzipSibling(path))
			}
			return err
		},
		"Read no folder": func() error { _, err := Read(filepath.Join(t.TempDir(), "x", Name(time.Now())), 0, 0); return err },
	} {
		err := f()
		if !errors.Is(err, fs.ErrNotExist) || !strings.HasPrefix(err.Error(), "archive segment ") || errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: err = %v, want fs.ErrNotExist naming the segment", name, err)
		}
		if name == "Read" && !strings.Contains(err.Error(), path) {
			t.Errorf("%s: err = %v does not name %s", name, err, path)
		}
	}
}

func writeGzip(t *testing.T, path string, raw []byte) {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(raw)
	zw.Close()
	os.MkdirAll(filepath.Dir(path), 0o700)
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestGzip(t *testing.T) {
	rs := recs("g", span(1, 5)...)
	full := encode(rs)
	v1 := format1(rs)
	tests := []struct {
		name string
		raw  []byte
		want string // error substring; "" for success
	}{
		{"format 2", full, ""},
		{"format 2 without final newline", full[:len(full)-1], ""},
		{"format 1 with trailer", withTrailer(v1, 5), ""},
		{"format 1 without trailer", []byte(v1), ""},
		{"format 1 without trailer or final newline", []byte(v1[:len(v1)-1]), ""},
		{"format 1 bad trailer checksum", []byte(v1[:len(v1)-3] + "} }\n" + string(withTrailer(v1, 5)[len(v1):])), "checksum mismatch"},
		{"format 2, invalid JSON inside", []byte(strings.Replace(string(full), `"v":"g"`, `"v":g`, 1)), "line 1"},
		{"foreign but valid form", []byte(`{ "rec": {"a":1}, "seq": 1 }` + "\n" + `[ 2 , {"b":2} ]` + "\n"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := segPath(t)
			gz := gzipSibling(path)
			writeGzip(t, gz, tt.raw)
			got, err := Read(path, 0, 0)
			if tt.want != "" {
				if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), gz) || !errors.Is(err, ErrCorrupt) {
					t.Fatalf("err = %v, want %q naming %s", err, tt.want, gz)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.name == "foreign but valid form" {
				if !slices.Equal(seqsOf(got), []int64{1, 2}) || string(got[0].Line) != `{"a":1}` || string(got[1].Line) != `{"b":2}` {
					t.Fatalf("got %v", got)
				}
				return
			}
			sameRecords(t, got, rs)
			if st, err := Stat(path); err != nil || st.Path != gz || st.Records != 5 {
				t.Fatalf("Stat = %+v, %v", st, err)
			}
			// Merge carries the gzip records over into the .zst and drops the .gz.
			mustMerge(t, path, recs("z", 3, 6))
			if _, err := os.Stat(gz); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf(".gz left after Merge: %v", err)
			}
			got, err = Read(path, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			sameRecords(t, got, append(append(recs("g", 1, 2), recs("z", 3)...), append(recs("g", 4, 5), recs("z", 6)...)...))
		})
	}
	t.Run("gzip crc", func(t *testing.T) {
		path := segPath(t)
		gz := gzipSibling(path)
		writeGzip(t, gz, full)
		b, _ := os.ReadFile(gz)
		b[len(b)-6] ^= 1 // inside the CRC-32
		os.WriteFile(gz, b, 0o600)
		if _, err := Read(path, 0, 0); err == nil || !strings.Contains(err.Error(), gz) || !errors.Is(err, ErrCorrupt) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("remove all from gzip", func(t *testing.T) {
		path := segPath(t)
		gz := gzipSibling(path)
		writeGzip(t, gz, full)
		if _, err := Remove(path, 0, 100); err != nil {
			t.Fatal(err)
		}
		if _, err := Read(path, 0, 0); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("Read after removing all: %v", err)
		}
	})
	t.Run("zst shadows gz", func(t *testing.T) {
		path := segPath(t)
		writeGzip(t, gzipSibling(path), encode(recs("old", 1, 2)))
		zstdRaw(t, path, encode(recs("new", 2)))
		got, err := Read(path, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		sameRecords(t, got, recs("new", 2))
		// Removing every record of the .zst must not bring the .gz back.
		if _, err := Remove(path, 2, 2); err != nil {
			t.Fatal(err)
		}
		if _, err := Read(path, 0, 0); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("Read after removing all: %v", err)
		}
	})
}

func TestTempCleanup(t *testing.T) {
	path := segPath(t)
	dir := filepath.Dir(path)
	tmpDir := filepath.Join(dir, tempFolder)
	// Temps beside the segments, as earlier versions wrote them, are swept
	// by the first write to the folder.
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	legacyOwn := filepath.Join(dir, "."+filepath.Base(path)+".tmp-1")
	legacyOld := filepath.Join(dir, ".2023-01-01.jsonl.zst.tmp-2")
	legacyFresh := filepath.Join(dir, ".2023-01-02.jsonl.zst.tmp-3")
	for _, p := range []string{legacyOwn, legacyOld, legacyFresh} {
		os.WriteFile(p, []byte("half a segment"), 0o600)
	}
	past := time.Now().Add(-2 * time.Hour)
	os.Chtimes(legacyOld, past, past)
	mustMerge(t, path, recs("a", 1))
	// Temps in the temp folder are cleaned on every write of the folder.
	own := filepath.Join(tmpDir, "."+filepath.Base(path)+".tmp-123")
	oldOther := filepath.Join(tmpDir, ".2023-01-01.jsonl.zst.tmp-456")
	freshOther := filepath.Join(tmpDir, ".2023-01-02.jsonl.zst.tmp-789")
	unrelated := filepath.Join(tmpDir, ".notes.tmp-1")
	for _, p := range []string{own, oldOther, freshOther, unrelated} {
		os.WriteFile(p, []byte("half a segment"), 0o600)
	}
	os.Chtimes(oldOther, past, past)
	os.Chtimes(unrelated, past, past)
	mustMerge(t, path, recs("a", 2))
	for p, want := range map[string]bool{own: false, oldOther: false, freshOther: true, unrelated: true,
		legacyOwn: false, legacyOld: false, legacyFresh: true} {
		if _, err := os.Stat(p); (err == nil) != want {
			t.Errorf("%s: exists=%v, want %v", p[len(dir):], err == nil, want)
		}
	}
	entries, _ := os.ReadDir(dir)
	var segs []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), Ext) {
			segs = append(segs, e.Name())
		}
	}
	if !slices.Equal(segs, []string{filepath.Base(path)}) {
		t.Fatalf("segments in folder: %v", segs)
	}
}

func TestConcurrent(t *testing.T) {
	path := segPath(t)
	mustMerge(t, path, recs("a", 0))
	const writers, each = 8, 10
	var wg sync.WaitGroup
	errs := make(chan error, writers*each*2)
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for range 2 {
		readers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := Read(path, 0, 0); err != nil {
					errs <- err
				}
			}
		})
	}
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				if _, err := Merge(path, recs("a", int64(1+w*each+i))); err != nil {
					errs <- err
				}
			}
		})
	}
	// Other paths at the same time.
	for w := range 4 {
		wg.Go(func() {
			p := filepath.Join(filepath.Dir(path), Name(time.Date(2024, time.Month(1+w), 1, 0, 0, 0, 0, time.UTC)))
			for i := range each {
				if _, err := Merge(p, recs("b", int64(i))); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	got, err := Read(path, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	sameRecords(t, got, recs("a", span(0, writers*each)...))
}

func TestCompress(t *testing.T) {
	for _, in := range [][]byte{{}, []byte("x"), bytes.Repeat([]byte("warm block "), 10000), line(1, "a", 5000)} {
		c := Compress(in)
		out, err := Decompress(c)
		if err != nil || !bytes.Equal(out, in) {
			t.Fatalf("round trip of %d bytes: %v", len(in), err)
		}
	}
	c := Compress(bytes.Repeat([]byte("warm block "), 100))
	bad := slices.Clone(c)
	bad[len(bad)-2] ^= 1 // frame checksum
	for name, b := range map[string][]byte{"empty": nil, "garbage": []byte("nope"), "truncated": c[:len(c)-3], "checksum": bad} {
		if _, err := Decompress(b); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: err = %v, want ErrCorrupt", name, err)
		}
	}
}

// unescape inverts escape for results without "~~" (tests injectivity).
func unescape(s string) (string, error) {
	if s == "~" {
		return "", nil
	}
	var b []byte
	for i := 0; i < len(s); i++ {
		if s[i] != '~' {
			b = append(b, s[i])
			continue
		}
		if i+2 >= len(s) {
			return "", fmt.Errorf("short escape in %q", s)
		}
		v, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
		if err != nil {
			return "", err
		}
		b = append(b, byte(v))
		i += 2
	}
	return string(b), nil
}

func TestDir(t *testing.T) {
	long := strings.Repeat("x", 300)
	ids := []string{
		"a/b", "a\\b", "..", ".", "", "A", "a", "ab", "aB", "AB", long, long + "y", strings.Repeat("Ω", 200),
		"con", "CON", "Con", "nul", "com1", "lpt9", "aux", "con.txt", "x\x00y", "\x00", "~", "~41", "~~", "~63on",
		"a b", "a:b", "a*b?c", "trailing.", "trailing ", "日本語", "e\u0301", "é", "-", "_", "--help", " ", "\n",
		"cOn", "c0n", "com", "com10",
	}
	seen := map[string]string{}
	for _, id := range ids {
		e := escape(id)
		if e != escape(id) {
			t.Fatalf("%q: unstable", id)
		}
		if e == "" || e == "." || e == ".." || len(e) > maxComponent {
			t.Errorf("%q -> %q: unsafe", id, e)
		}
		for _, c := range []byte(e) {
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '~') {
				t.Errorf("%q -> %q: byte %q", id, e, c)
			}
		}
		if reserved(e) {
			t.Errorf("%q -> %q: reserved name", id, e)
		}
		folded := strings.ToLower(e)
		if prev, ok := seen[folded]; ok {
			t.Errorf("%q and %q both -> %q", prev, id, e)
		}
		seen[folded] = id
		if !strings.Contains(e, "~~") {
			if back, err := unescape(e); err != nil || back != id {
				t.Errorf("%q -> %q -> %q, %v", id, e, back, err)
			}
		} else if len(id)*3 <= maxComponent {
			t.Errorf("%q -> %q: hashed though short", id, e)
		}
		d := Dir("/root", id, "conv")
		if filepath.Dir(filepath.Dir(d)) != filepath.Clean("/root") || filepath.Base(filepath.Dir(d)) != e {
			t.Errorf("Dir(%q) = %q", id, d)
		}
	}
	for id, want := range map[string]string{"a/b": "a~2fb", "..": "~2e~2e", "": "~", "A": "~41", "con": "~63on", "conv-1_x": "conv-1_x"} {
		if got := escape(id); got != want {
			t.Errorf("escape(%q) = %q, want %q", id, got, want)
		}
	}
	// Nasty ids make real, distinct folders.
	root := t.TempDir()
	for _, id := range ids {
		path := filepath.Join(Dir(root, id, id), Name(time.Unix(0, 0)))
		if _, err := Merge(path, []Record{{Seq: 1, Line: mustJSON(map[string]string{"id": id})}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range ids {
		got, err := Read(filepath.Join(Dir(root, id, id), Name(time.Unix(0, 0))), 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		var v map[string]string
		json.Unmarshal(got[0].Line, &v)
		if len(got) != 1 || v["id"] != id {
			t.Fatalf("id %q: read back %s", id, got[0].Line)
		}
	}
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
