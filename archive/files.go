package archive

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Files is the Blobs of a folder: the blob at key is the file
// <root>/<key> (slashes as the system's separators), so segments lie at
// Dir(root, namespace, conversation)/<period>.jsonl.zst.
//
// Put writes a temp file in the temp folder of the blob's folder,
// <folder>/.tmp/.<name>.tmp-<random digits>, fsyncs it, reads it back for
// the check, renames it over the blob and fsyncs the folder. Before
// writing, it deletes the temps of the same blob (left by a killed write)
// and those of other blobs older than an hour; temps that earlier
// versions wrote beside the segments are swept once per folder and
// process. Temp names start with a dot, and List never returns a name
// that does, so a temp is never taken for a blob.
//
// Puts of one file within a process are serialized and each succeeds;
// across processes, a Put may fail with an error when another process
// writes the same file (one deletes the other's temp), but the file stays
// whole.
//
// Files are created 0600 and folders 0700: they hold private
// conversations. Files does not wait on anything, so it ignores its
// methods' contexts.
type Files struct {
	root string
}

// NewFiles returns the Blobs of the folder root, which is created on the
// first write.
func NewFiles(root string) *Files { return &Files{root: root} }

// Root returns the folder the blobs are kept in.
func (f *Files) Root() string { return f.root }

// Locate returns the path of the file of key (root for "").
func (f *Files) Locate(key string) string {
	if key == "" {
		return f.root
	}
	return filepath.Join(f.root, filepath.FromSlash(key))
}

// path returns the path of the file of key, or an error if key is not a
// valid key (see Blobs).
func (f *Files) path(key string) (string, error) {
	if err := checkKey(key); err != nil {
		return "", &segError{path: f.Locate(key), msg: err.Error()}
	}
	return f.Locate(key), nil
}

func checkKey(key string) error {
	if key == "" {
		return errors.New("empty key")
	}
	if strings.ContainsAny(key, "\\\x00") {
		return fmt.Errorf("key %q holds a backslash or a NUL byte", key)
	}
	for _, c := range strings.Split(key, "/") {
		if c == "" || c[0] == '.' {
			return fmt.Errorf("key %q has an empty component or one that starts with a dot", key)
		}
	}
	return nil
}

// Get reads the file of key.
func (f *Files) Get(_ context.Context, key string) ([]byte, error) {
	path, err := f.path(key)
	if err != nil {
		return nil, err
	}
	return os.ReadFile(path)
}

// Stat returns the size of the file of key.
func (f *Files) Stat(_ context.Context, key string) (int64, error) {
	path, err := f.path(key)
	if err != nil {
		return 0, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	if !fi.Mode().IsRegular() {
		return 0, &fs.PathError{Op: "stat", Path: path, Err: fs.ErrNotExist}
	}
	return fi.Size(), nil
}

// Put writes the file of key by temp file, check and rename (see Files).
func (f *Files) Put(_ context.Context, key string, data []byte, check func(back []byte) error) error {
	path, err := f.path(key)
	if err != nil {
		return err
	}
	// A write deletes the temps of its own file, which a concurrent write
	// of the same file in this process would still be writing.
	lockName := path
	if abs, err := filepath.Abs(path); err == nil {
		lockName = abs
	}
	unlock := lockPath(&putLocks, lockName)
	defer unlock()
	dir, base := filepath.Dir(path), filepath.Base(path)
	if err := ensureDir(dir); err != nil {
		return ioError(path, "create folder", err)
	}
	cleanTemps(dir, base)

	tmpDir := filepath.Join(dir, tempFolder)
	if err := ensureDir(tmpDir); err != nil {
		return ioError(path, "create temp folder", err)
	}
	w, err := os.CreateTemp(tmpDir, "."+base+".tmp-*")
	if err != nil {
		return ioError(path, "create temp", err)
	}
	tmp := w.Name()
	done := false
	defer func() {
		if !done {
			w.Close()
			os.Remove(tmp)
		}
	}()
	half := len(data) / 2
	if _, err := w.Write(data[:half]); err != nil {
		return ioError(path, "write temp "+filepath.Base(tmp), err)
	}
	at("temp-partial")
	if _, err := w.Write(data[half:]); err != nil {
		return ioError(path, "write temp "+filepath.Base(tmp), err)
	}
	at("temp-written")
	if err := w.Sync(); err != nil {
		return ioError(path, "fsync temp "+filepath.Base(tmp), err)
	}
	if err := w.Close(); err != nil {
		return ioError(path, "close temp "+filepath.Base(tmp), err)
	}
	at("temp-synced")

	if check != nil {
		back, err := os.ReadFile(tmp)
		if err != nil {
			return ioError(path, "read back temp "+filepath.Base(tmp), err)
		}
		if err := check(back); err != nil {
			return &segError{path: path, msg: fmt.Sprintf("verify temp %s: %v", filepath.Base(tmp), err), err: err}
		}
	}
	at("verified")

	if err := os.Rename(tmp, path); err != nil {
		return ioError(path, "rename temp", err)
	}
	done = true
	at("renamed")
	if err := syncDir(dir); err != nil {
		return ioError(path, "fsync folder", err)
	}
	at("dir-synced")
	return nil
}

// Delete removes the file of key and fsyncs its folder.
func (f *Files) Delete(_ context.Context, key string) error {
	path, err := f.path(key)
	if err != nil {
		return err
	}
	if fi, err := os.Lstat(path); err != nil {
		return err
	} else if !fi.Mode().IsRegular() {
		return &fs.PathError{Op: "remove", Path: path, Err: fs.ErrNotExist}
	}
	if err := os.Remove(path); err != nil {
		return err
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		return ioError(path, "fsync folder", err)
	}
	return nil
}

// DeletePrefix removes the folder of a prefix that ends in "/" (or the
// root folder, for ""), temps included; for any other prefix, the files
// List returns.
func (f *Files) DeletePrefix(ctx context.Context, prefix string) error {
	if prefix == "" {
		return os.RemoveAll(f.root)
	}
	if folder, ok := strings.CutSuffix(prefix, "/"); ok {
		path, err := f.path(folder)
		if err != nil {
			return err
		}
		return os.RemoveAll(path)
	}
	keys, err := f.List(ctx, prefix)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if err := f.Delete(ctx, k); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// List walks the folders the prefix may lie in, skipping names that start
// with a dot (temps and temp folders).
func (f *Files) List(_ context.Context, prefix string) ([]string, error) {
	start := f.root
	if i := strings.LastIndexByte(prefix, '/'); i > 0 {
		start = f.Locate(prefix[:i])
	}
	var keys []string
	err := filepath.WalkDir(start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == start && errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		rel, err := filepath.Rel(f.root, p)
		if err != nil {
			return err
		}
		if rel == "." {
			return nil
		}
		key := filepath.ToSlash(rel)
		if strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if !strings.HasPrefix(key+"/", prefix) && !strings.HasPrefix(prefix, key+"/") {
				return fs.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() && strings.HasPrefix(key, prefix) {
			keys = append(keys, key)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(keys)
	return keys, nil
}

// sweep deletes what killed writes of key left: its temps, and other
// blobs' temps older than an hour.
func (f *Files) sweep(key string) {
	if path, err := f.path(key); err == nil {
		cleanTemps(filepath.Dir(path), filepath.Base(path))
	}
}

// putLocks serializes Files.Put calls on one file within the process. It
// is not the lock of package archive's Merge and Remove (locks), which
// hold that one while they call Put.
var putLocks [64]sync.Mutex

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
