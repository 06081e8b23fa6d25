//go:build linux

package httpapi

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/extractive"
	"github.com/strata-memory/strata/sqlite"
)

// TestDiskFullIs503 fills, for real, the small file system a server's
// store lives on: the append that no longer fits answers 503 saying the
// disk is full, without the store's path, and the log names the file.
// Before, it answered 500 with SQLite's own message ("database or disk is
// full" or "disk I/O error") and the path in it. It needs to mount a
// tmpfs, so it runs as root only.
func TestDiskFullIs503(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=4m"); err != nil {
		t.Skipf("cannot mount a tmpfs (%v): needs root", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	ctx := context.Background()
	path := filepath.Join(dir, "strata.db")
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m, err := strata.New(strata.Config{Store: st, Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New()})
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	s, err := New(m, Options{Anonymous: true, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	s.SetReady(true)
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	// Leave less room than the next append needs.
	var fs syscall.Statfs_t
	if err := syscall.Statfs(dir, &fs); err != nil {
		t.Fatal(err)
	}
	filler := int64(fs.Bavail)*int64(fs.Bsize) - 64<<10
	if err := os.WriteFile(filepath.Join(dir, "filler"), make([]byte, filler), 0o644); err != nil {
		t.Fatal(err)
	}
	turn := strings.Repeat("a turn that does not fit any more ", 8000)
	body := fmt.Sprintf(`{"turns":[{"role":"user","content":%q}]}`, turn)
	var status int
	var answer []byte
	for i := range 8 { // the WAL may take a few appends before it meets the end of the disk
		status, answer = call(t, ts, http.MethodPost, fmt.Sprintf("/v1/conversations/full-%d/turns", i), body, nil)
		if status != http.StatusOK {
			break
		}
	}
	if status != http.StatusServiceUnavailable || !strings.Contains(string(answer), "disk full") || strings.Contains(string(answer), dir) {
		t.Fatalf("append on a full disk: %d %s; want 503 saying disk full, without the store's path", status, answer)
	}
	if !strings.Contains(logs.String(), "disk full") || !strings.Contains(logs.String(), path) {
		t.Errorf("the log does not say disk full naming the file:\n%s", logs.String())
	}
}
