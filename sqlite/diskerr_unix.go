//go:build unix

package sqlite

import (
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

var (
	errROFS    error = syscall.EROFS
	errNoSpace error = syscall.ENOSPC
)

// freeBytes returns the space free to an unprivileged writer on the disk
// holding path (or its folder, if path does not exist).
func freeBytes(path string) (int64, bool) {
	var st unix.Statfs_t
	p := absPath(path)
	if err := unix.Statfs(p, &st); err != nil {
		if err := unix.Statfs(filepath.Dir(p), &st); err != nil {
			return 0, false
		}
	}
	return int64(st.Bavail) * int64(st.Bsize), true
}

// writable reports whether this process can create files in dir.
func writable(dir string) bool {
	return unix.Access(dir, unix.W_OK) == nil
}
