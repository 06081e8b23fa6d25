// Package blobtest checks an implementation of archive.Blobs against the
// contract that interface states, the way storetest checks a
// strata.Store: any implementation runs Run in its own tests. It also
// offers Memory, a Blobs in a map, for tests that want segments without a
// folder.
package blobtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/strata-memory/strata/archive"
)

// Run runs the contract tests on Blobs made by open, which must return
// an empty set each time it is called.
func Run(t *testing.T, open func(t *testing.T) archive.Blobs) {
	for _, c := range []struct {
		name string
		run  func(t *testing.T, b archive.Blobs)
	}{
		{"Missing", testMissing},
		{"PutGet", testPutGet},
		{"Replace", testReplace},
		{"FailedCheck", testFailedCheck},
		{"Delete", testDelete},
		{"List", testList},
		{"DeletePrefix", testDeletePrefix},
		{"Locate", testLocate},
		{"Concurrent", testConcurrent},
	} {
		t.Run(c.name, func(t *testing.T) { c.run(t, open(t)) })
	}
}

var ctx = context.Background()

// keys are shaped like the archive's: escaped ids and period file names,
// a month as written now (keyB) beside days as earlier versions wrote.
var (
	keyA = archive.Key("default", "conv-1", "2023-05-08")
	keyB = archive.Key("default", "conv-1", "2023-05")
	keyC = archive.Key("default", "conv-2", "2023-05-08")
	keyD = archive.Key("Team A", "conv-1", "2023-05-08") // escaped namespace
)

func put(t *testing.T, b archive.Blobs, key string, data []byte) {
	t.Helper()
	if err := b.Put(ctx, key, data, nil); err != nil {
		t.Fatalf("Put %s: %v", key, err)
	}
}

// holds fails unless the blob at key is exactly want.
func holds(t *testing.T, b archive.Blobs, key string, want []byte) {
	t.Helper()
	got, err := b.Get(ctx, key)
	if err != nil {
		t.Fatalf("Get %s: %v", key, err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("Get %s: %d bytes %.40q, want %d bytes %.40q", key, len(got), got, len(want), want)
	}
	n, err := b.Stat(ctx, key)
	if err != nil || n != int64(len(want)) {
		t.Fatalf("Stat %s = %d, %v; want %d", key, n, err, len(want))
	}
}

// missing fails unless every read of key says it does not exist.
func missing(t *testing.T, b archive.Blobs, key string) {
	t.Helper()
	if got, err := b.Get(ctx, key); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Get %s = %d bytes, %v; want an error wrapping fs.ErrNotExist", key, len(got), err)
	}
	if n, err := b.Stat(ctx, key); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Stat %s = %d, %v; want an error wrapping fs.ErrNotExist", key, n, err)
	}
}

func list(t *testing.T, b archive.Blobs, prefix string) []string {
	t.Helper()
	keys, err := b.List(ctx, prefix)
	if err != nil {
		t.Fatalf("List %q: %v", prefix, err)
	}
	return keys
}

func sameKeys(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !slices.Equal(got, want) {
		t.Fatalf("%s = %q, want %q", what, got, want)
	}
}

func testMissing(t *testing.T, b archive.Blobs) {
	missing(t, b, keyA)
	if err := b.Delete(ctx, keyA); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Delete of a missing blob = %v, want an error wrapping fs.ErrNotExist", err)
	}
	sameKeys(t, `List("") of an empty set`, list(t, b, ""))
	sameKeys(t, "List of a missing prefix", list(t, b, archive.Prefix("default", "conv-1")))
	if err := b.DeletePrefix(ctx, archive.Prefix("default", "conv-1")); err != nil {
		t.Fatalf("DeletePrefix of a missing prefix: %v", err)
	}
	// A blob next to the key is not the key.
	put(t, b, keyB, []byte("b"))
	missing(t, b, keyA)
}

func testPutGet(t *testing.T, b archive.Blobs) {
	big := make([]byte, 3<<20)
	for i := range big {
		big[i] = byte(i*7 + i>>9)
	}
	for _, c := range []struct {
		key  string
		data []byte
	}{
		{keyA, []byte("one segment")},
		{keyB, []byte{0, 1, 2, 0xff, '\n', 0}},
		{keyC, big},
		{keyD, []byte{}},
	} {
		data := bytes.Clone(c.data)
		var seen []byte
		if err := b.Put(ctx, c.key, data, func(back []byte) error { seen = bytes.Clone(back); return nil }); err != nil {
			t.Fatalf("Put %s: %v", c.key, err)
		}
		if !bytes.Equal(seen, c.data) {
			t.Fatalf("Put %s: check saw %d bytes, wrote %d", c.key, len(seen), len(c.data))
		}
		// The blob is a copy: changing the caller's slice changes nothing.
		for i := range data {
			data[i] ^= 0x55
		}
		holds(t, b, c.key, c.data)
		got, _ := b.Get(ctx, c.key)
		for i := range got {
			got[i] ^= 0x55
		}
		holds(t, b, c.key, c.data)
	}
}

func testReplace(t *testing.T, b archive.Blobs) {
	put(t, b, keyA, []byte("first, a longer version"))
	put(t, b, keyA, []byte("second"))
	holds(t, b, keyA, []byte("second"))
	sameKeys(t, "List after replacing", list(t, b, ""), keyA)
}

// testFailedCheck: a write that fails after the data went out (its
// read-back check fails) leaves the old blob whole, or no blob, and no
// trace that List shows.
func testFailedCheck(t *testing.T, b archive.Blobs) {
	put(t, b, keyA, []byte("old"))
	bad := errors.New("read back differs")
	err := b.Put(ctx, keyA, []byte("new and longer"), func(back []byte) error {
		if string(back) != "new and longer" {
			return fmt.Errorf("check saw %q", back)
		}
		return bad
	})
	if !errors.Is(err, bad) {
		t.Fatalf("Put with a failing check = %v, want an error wrapping the check's", err)
	}
	holds(t, b, keyA, []byte("old"))
	if err := b.Put(ctx, keyB, []byte("never"), func([]byte) error { return bad }); !errors.Is(err, bad) {
		t.Fatalf("Put of a new blob with a failing check = %v", err)
	}
	missing(t, b, keyB)
	sameKeys(t, "List after failed writes", list(t, b, ""), keyA)
	// The next write succeeds.
	put(t, b, keyA, []byte("newer"))
	holds(t, b, keyA, []byte("newer"))
}

func testDelete(t *testing.T, b archive.Blobs) {
	put(t, b, keyA, []byte("a"))
	put(t, b, keyB, []byte("b"))
	if err := b.Delete(ctx, keyA); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	missing(t, b, keyA)
	holds(t, b, keyB, []byte("b"))
	if err := b.Delete(ctx, keyA); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("second Delete = %v, want an error wrapping fs.ErrNotExist", err)
	}
	sameKeys(t, "List after Delete", list(t, b, ""), keyB)
	put(t, b, keyA, []byte("again"))
	holds(t, b, keyA, []byte("again"))
}

func testList(t *testing.T, b archive.Blobs) {
	gz := strings.TrimSuffix(keyA, archive.Ext) + archive.GzipExt
	other := archive.Key("default", "conv-10", "2023-05-08")
	for _, k := range []string{keyD, keyC, keyB, keyA, gz, other} {
		put(t, b, k, []byte(k))
	}
	all := []string{keyA, keyB, keyC, keyD, gz, other}
	slices.Sort(all)
	sameKeys(t, `List("")`, list(t, b, ""), all...)
	sameKeys(t, "List of conv-1's prefix", list(t, b, archive.Prefix("default", "conv-1")), gz, keyA, keyB)
	// A prefix is a string prefix, not a folder: "default/conv-1" also
	// matches conv-10.
	sameKeys(t, `List("default/conv-1")`, list(t, b, "default/conv-1"), gz, keyA, keyB, other)
	sameKeys(t, "List of one day's stem", list(t, b, strings.TrimSuffix(keyA, archive.Ext)), gz, keyA)
	sameKeys(t, "List of the escaped namespace", list(t, b, archive.Prefix("Team A", "conv-1")), keyD)
	sameKeys(t, "List of a prefix that holds nothing", list(t, b, "nothing/"))
	periods, err := archive.Periods(ctx, b, "default", "conv-1")
	if err != nil || !slices.Equal(periods, []string{"2023-05", "2023-05-08"}) {
		t.Fatalf("Periods = %q, %v", periods, err)
	}
}

func testDeletePrefix(t *testing.T, b archive.Blobs) {
	other := archive.Key("default", "conv-10", "2023-05-08")
	for _, k := range []string{keyA, keyB, keyC, keyD, other} {
		put(t, b, k, []byte(k))
	}
	if err := b.DeletePrefix(ctx, archive.Prefix("default", "conv-1")); err != nil {
		t.Fatalf("DeletePrefix: %v", err)
	}
	missing(t, b, keyA)
	missing(t, b, keyB)
	want := []string{keyC, keyD, other}
	slices.Sort(want)
	sameKeys(t, "List after DeletePrefix", list(t, b, ""), want...)
	// The conversation can be written again.
	put(t, b, keyA, []byte("back"))
	holds(t, b, keyA, []byte("back"))
}

func testLocate(t *testing.T, b archive.Blobs) {
	seen := map[string]string{}
	for _, k := range []string{keyA, keyB, keyC, keyD, ""} {
		loc := b.Locate(k)
		if loc == "" {
			t.Fatalf("Locate(%q) is empty", k)
		}
		if prev, ok := seen[loc]; ok {
			t.Fatalf("Locate(%q) = Locate(%q) = %q", k, prev, loc)
		}
		seen[loc] = k
	}
}

// testConcurrent: writers of one key and readers of it at the same time;
// every read sees one whole version, and writers of other keys do not
// disturb them.
func testConcurrent(t *testing.T, b archive.Blobs) {
	version := func(w, i int) []byte {
		return bytes.Repeat([]byte(fmt.Sprintf("<writer %d version %d>", w, i)), 200+w*37+i)
	}
	put(t, b, keyA, version(0, 0))
	var wg sync.WaitGroup
	errs := make(chan error, 100)
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
				got, err := b.Get(ctx, keyA)
				if err != nil {
					errs <- err
					return
				}
				var w, i int
				if _, err := fmt.Sscanf(string(got), "<writer %d version %d>", &w, &i); err != nil || !bytes.Equal(got, version(w, i)) {
					errs <- fmt.Errorf("read a blob that no writer wrote whole (%d bytes)", len(got))
					return
				}
			}
		})
	}
	for w := range 4 {
		wg.Go(func() {
			for i := range 5 {
				if err := b.Put(ctx, keyA, version(w, i), nil); err != nil {
					errs <- err
				}
				other := archive.Key("default", fmt.Sprintf("conv-%d", 100+w), fmt.Sprintf("2024-01-%02d", 1+i))
				if err := b.Put(ctx, other, version(w, i), nil); err != nil {
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
	if n := len(list(t, b, "")); n != 1+4*5 {
		t.Fatalf("%d blobs after the concurrent writes, want %d", n, 1+4*5)
	}
}

// Memory is a Blobs in a map, for tests. Its Locate names a key
// "memory:<key>".
type Memory struct {
	mu    sync.Mutex
	blobs map[string][]byte
}

// NewMemory returns an empty Memory.
func NewMemory() *Memory { return &Memory{blobs: map[string][]byte{}} }

func notExist(op, key string) error {
	return &fs.PathError{Op: op, Path: "memory:" + key, Err: fs.ErrNotExist}
}

// Get returns a copy of the blob at key.
func (m *Memory) Get(_ context.Context, key string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.blobs[key]
	if !ok {
		return nil, notExist("get", key)
	}
	return bytes.Clone(b), nil
}

// Put stores a copy of data after check accepts it.
func (m *Memory) Put(_ context.Context, key string, data []byte, check func(back []byte) error) error {
	data = bytes.Clone(data)
	if data == nil {
		data = []byte{}
	}
	if check != nil {
		if err := check(bytes.Clone(data)); err != nil {
			return fmt.Errorf("memory:%s: check: %w", key, err)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.blobs[key] = data
	return nil
}

// Delete removes the blob at key.
func (m *Memory) Delete(_ context.Context, key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.blobs[key]; !ok {
		return notExist("delete", key)
	}
	delete(m.blobs, key)
	return nil
}

// DeletePrefix removes the blobs whose key starts with prefix.
func (m *Memory) DeletePrefix(_ context.Context, prefix string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.blobs {
		if strings.HasPrefix(k, prefix) {
			delete(m.blobs, k)
		}
	}
	return nil
}

// Stat returns the size of the blob at key.
func (m *Memory) Stat(_ context.Context, key string) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.blobs[key]
	if !ok {
		return 0, notExist("stat", key)
	}
	return int64(len(b)), nil
}

// List returns the keys that start with prefix, sorted.
func (m *Memory) List(_ context.Context, prefix string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var keys []string
	for k := range m.blobs {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys, nil
}

// Locate returns "memory:" + key.
func (m *Memory) Locate(key string) string { return "memory:" + key }
