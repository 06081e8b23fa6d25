package archive

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFilesPutFailsMidway: a Put that stops at any point before its
// rename (here: a panic from the crash hook, as a failing disk or a
// kill would stop it) leaves the old blob whole, and the next Put of the
// blob removes the temp it left.
func TestFilesPutFailsMidway(t *testing.T) {
	ctx := context.Background()
	for _, point := range []string{"temp-partial", "temp-written", "temp-synced", "verified"} {
		t.Run(point, func(t *testing.T) {
			f := NewFiles(t.TempDir())
			key := Key("ns", "c", "2024-01-02")
			old := bytes.Repeat([]byte("old "), 1000)
			if err := f.Put(ctx, key, old, nil); err != nil {
				t.Fatal(err)
			}
			func() {
				defer func() {
					if recover() == nil {
						t.Fatalf("the write did not reach %s", point)
					}
				}()
				crashHook = func(p string) {
					if p == point {
						panic("stopped at " + p)
					}
				}
				defer func() { crashHook = nil }()
				f.Put(ctx, key, bytes.Repeat([]byte("new "), 3000), func([]byte) error { return nil })
			}()
			got, err := f.Get(ctx, key)
			if err != nil || !bytes.Equal(got, old) {
				t.Fatalf("after a write stopped at %s: %d bytes, %v; want the old %d", point, len(got), err, len(old))
			}
			if err := f.Put(ctx, key, []byte("newer"), nil); err != nil {
				t.Fatal(err)
			}
			entries, _ := os.ReadDir(filepath.Join(Dir(f.Root(), "ns", "c"), tempFolder))
			for _, e := range entries {
				if strings.Contains(e.Name(), ".tmp-") {
					t.Errorf("temp %s left after the next write", e.Name())
				}
			}
		})
	}
}
