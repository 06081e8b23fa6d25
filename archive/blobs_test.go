package archive_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-memory/strata/archive"
	"github.com/strata-memory/strata/archive/blobtest"
)

func TestFilesContract(t *testing.T) {
	blobtest.Run(t, func(t *testing.T) archive.Blobs {
		return archive.NewFiles(filepath.Join(t.TempDir(), "archive"))
	})
}

// TestMemoryContract runs the contract on the in-memory Blobs too, so the
// contract assumes nothing about files and Memory is fit for tests.
func TestMemoryContract(t *testing.T) {
	blobtest.Run(t, func(t *testing.T) archive.Blobs { return blobtest.NewMemory() })
}

func rec(seq int64, v string) archive.Record {
	return archive.Record{Seq: seq, Line: []byte(`{"v":"` + v + `"}`)}
}

// TestSegmentsOverMemory runs Merge, Read, Stat and Remove over a Blobs
// that is not a folder: the segment layer needs nothing but the contract.
func TestSegmentsOverMemory(t *testing.T) {
	ctx := context.Background()
	mem := blobtest.NewMemory()
	g := archive.Segments{Blobs: mem}
	key := archive.Key("ns", "Conv", "2023-05-08")
	if key != "ns/~43onv/2023-05-08.jsonl.zst" {
		t.Fatalf("Key = %q", key)
	}
	in, err := g.Merge(ctx, key, []archive.Record{rec(3, "c"), rec(1, "a"), rec(2, "b")})
	if err != nil {
		t.Fatal(err)
	}
	if in.Path != "memory:"+key || in.Records != 3 || in.First != 1 || in.Last != 3 {
		t.Fatalf("Merge = %+v", in)
	}
	if n, _ := mem.Stat(ctx, key); n != in.Bytes {
		t.Fatalf("Merge says %d bytes, the blob has %d", in.Bytes, n)
	}
	if _, err := g.Merge(ctx, key, []archive.Record{rec(2, "B")}); err != nil {
		t.Fatal(err)
	}
	got, err := g.Read(ctx, key, 2, 3)
	if err != nil || len(got) != 2 || string(got[0].Line) != `{"v":"B"}` || got[1].Seq != 3 {
		t.Fatalf("Read = %v, %v", got, err)
	}
	// A damaged blob is ErrCorrupt naming it, and is not overwritten.
	data, _ := mem.Get(ctx, key)
	bad := append([]byte(nil), data...)
	bad[len(bad)-1] ^= 1
	mem.Put(ctx, key, bad, nil)
	if _, err := g.Merge(ctx, key, []archive.Record{rec(4, "d")}); !errors.Is(err, archive.ErrCorrupt) ||
		!strings.HasPrefix(err.Error(), "archive segment memory:"+key+": ") {
		t.Fatalf("Merge into a damaged blob = %v", err)
	}
	if now, _ := mem.Get(ctx, key); string(now) != string(bad) {
		t.Fatal("the damaged blob was overwritten")
	}
	mem.Put(ctx, key, data, nil)
	if in, err := g.Remove(ctx, key, 0, 100); err != nil || in.Records != 0 {
		t.Fatalf("Remove all = %+v, %v", in, err)
	}
	if _, err := g.Read(ctx, key, 0, 0); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "memory:"+key) {
		t.Fatalf("Read after removing all = %v", err)
	}
	if keys, _ := mem.List(ctx, ""); len(keys) != 0 {
		t.Fatalf("blobs left: %q", keys)
	}
}

// TestFilesLayout: the key of a segment is the file Dir names, and the
// path functions and Segments over Files read and write the same files.
func TestFilesLayout(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	f := archive.NewFiles(root)
	key := archive.Key("Team", "a/b", "2024-01-02")
	path := filepath.Join(archive.Dir(root, "Team", "a/b"), "2024-01-02"+archive.Ext)
	if f.Locate(key) != path {
		t.Fatalf("Locate = %s, want %s", f.Locate(key), path)
	}
	if _, err := (archive.Segments{Blobs: f}).Merge(ctx, key, []archive.Record{rec(1, "x")}); err != nil {
		t.Fatal(err)
	}
	recs, err := archive.Read(path, 0, 0)
	if err != nil || len(recs) != 1 {
		t.Fatalf("Read %s = %v, %v", path, recs, err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("segment file: %v, %v", st, err)
	}
	if st, err := os.Stat(filepath.Dir(path)); err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("segment folder: %v, %v", st, err)
	}
}

// TestFilesKeys: Files refuses keys that would leave its root or collide
// with its temps, naming the key.
func TestFilesKeys(t *testing.T) {
	ctx := context.Background()
	root := filepath.Join(t.TempDir(), "root")
	f := archive.NewFiles(root)
	for _, k := range []string{"", "/abs/x.jsonl.zst", "../x.jsonl.zst", "a/../../x", "a//b", ".tmp/x", "a/.x.jsonl.zst", `a\b`} {
		if err := f.Put(ctx, k, []byte("x"), nil); err == nil || !strings.Contains(err.Error(), "key") {
			t.Errorf("Put %q = %v, want an error about the key", k, err)
		}
		if _, err := f.Get(ctx, k); err == nil || errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Get %q = %v, want an error about the key", k, err)
		}
	}
	if _, err := os.Stat(filepath.Dir(root)); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(root)); len(entries) != 0 {
		t.Fatalf("bad keys wrote %v", entries)
	}
}

// TestFilesTemps: temps and the temp folder are not blobs; DeletePrefix of
// a conversation removes its temps too (they hold its content).
func TestFilesTemps(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	f := archive.NewFiles(root)
	key := archive.Key("ns", "c", "2024-01-02")
	if err := f.Put(ctx, key, []byte("x"), nil); err != nil {
		t.Fatal(err)
	}
	dir := archive.Dir(root, "ns", "c")
	temp := filepath.Join(dir, ".tmp", ".2024-01-03.jsonl.zst.tmp-1")
	legacy := filepath.Join(dir, ".2024-01-04.jsonl.zst.tmp-2")
	for _, p := range []string{temp, legacy} {
		if err := os.WriteFile(p, []byte("half"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	keys, err := f.List(ctx, "")
	if err != nil || len(keys) != 1 || keys[0] != key {
		t.Fatalf("List = %q, %v; want only %s", keys, err, key)
	}
	if err := f.DeletePrefix(ctx, archive.Prefix("ns", "c")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the conversation folder is still there: %v", err)
	}
}
