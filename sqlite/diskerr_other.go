//go:build !unix

package sqlite

import (
	"errors"
	"os"
	"path/filepath"
)

var (
	errROFS    = errors.New("read-only file system")
	errNoSpace = errors.New("no space left on device")
)

// freeBytes is unknown on this system.
func freeBytes(path string) (int64, bool) { return 0, false }

// writable reports whether this process can create files in dir, by
// creating one.
func writable(dir string) bool {
	f, err := os.CreateTemp(dir, ".strata-probe-*")
	if err != nil {
		return false
	}
	f.Close()
	os.Remove(filepath.Join(dir, filepath.Base(f.Name())))
	return true
}
