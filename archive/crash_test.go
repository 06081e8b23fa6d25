//go:build unix

package archive

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// The crash test re-executes the test binary to run one Merge or Remove
// (TestCrashChild) that SIGKILLs itself at an injected point, then checks
// what the parent finds on disk.

const (
	envPoint = "ARCHIVE_CRASH_POINT"
	envOp    = "ARCHIVE_CRASH_OP"
	envPath  = "ARCHIVE_CRASH_PATH"
)

// The contents involved: old is on disk before, the child applies op.
func crashOld() []Record { return recs("old", span(1, 10)...) }

func crashAdd() []Record { return recs("new", span(6, 15)...) }

func crashMerged() []Record {
	return append(recs("old", span(1, 5)...), recs("new", span(6, 15)...)...)
}

func crashOp(op, path string) error {
	var err error
	switch op {
	case "merge":
		_, err = Merge(path, crashAdd())
	case "remove":
		_, err = Remove(path, 3, 7)
	case "remove-all":
		_, err = Remove(path, 0, 100)
	default:
		err = errors.New("unknown op " + op)
	}
	return err
}

func TestCrashChild(t *testing.T) {
	point := os.Getenv(envPoint)
	if point == "" {
		t.Skip("run by TestCrash")
	}
	crashHook = func(p string) {
		if p == point {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		}
	}
	if err := crashOp(os.Getenv(envOp), os.Getenv(envPath)); err != nil {
		t.Fatal(err)
	}
	// Point not reached: exit normally; the parent reports it.
}

func TestCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	tests := []struct {
		op     string
		gz     bool // old content is a .jsonl.gz only
		points []string
		want   []Record // after the op completes; nil: segment gone
	}{
		{"merge", false, []string{"temp-partial", "temp-written", "temp-synced", "verified", "renamed", "dir-synced"}, crashMerged()},
		{"merge", true, []string{"temp-partial", "verified", "renamed", "dir-synced", "gz-removed"}, crashMerged()},
		{"remove", false, []string{"temp-partial", "temp-synced", "verified", "renamed"}, append(recs("old", 1, 2), recs("old", span(8, 10)...)...)},
		{"remove", true, []string{"temp-written", "renamed", "gz-removed"}, append(recs("old", 1, 2), recs("old", span(8, 10)...)...)},
		{"remove-all", false, []string{"removed"}, nil},
		{"remove-all", true, []string{"gz-removed", "removed"}, nil},
	}
	for _, tt := range tests {
		for _, point := range tt.points {
			name := tt.op + "/" + point
			if tt.gz {
				name = tt.op + "-from-gz/" + point
			}
			t.Run(name, func(t *testing.T) {
				path := segPath(t)
				if tt.gz {
					writeGzip(t, gzipSibling(path), encode(crashOld()))
				} else {
					mustMerge(t, path, crashOld())
				}
				cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
				cmd.Env = append(os.Environ(), envPoint+"="+point, envOp+"="+tt.op, envPath+"="+path)
				out, err := cmd.CombinedOutput()
				ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
				if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
					t.Fatalf("child not killed at %s: %v\n%s", point, err, out)
				}

				// Old or new, never a mix.
				got, err := Read(path, 0, 0)
				switch {
				case tt.want == nil && errors.Is(err, fs.ErrNotExist):
				case err != nil:
					t.Fatalf("after kill at %s: %v", point, err)
				case equalRecords(got, crashOld()):
				case equalRecords(got, tt.want):
				default:
					t.Fatalf("after kill at %s: segment holds %v, neither old nor new", point, seqsOf(got))
				}

				// Running the op again completes it, each record once.
				if err := crashOp(tt.op, path); err != nil {
					t.Fatal(err)
				}
				got, err = Read(path, 0, 0)
				if tt.want == nil {
					if !errors.Is(err, fs.ErrNotExist) {
						t.Fatalf("after redo: %v", err)
					}
				} else {
					if err != nil {
						t.Fatal(err)
					}
					sameRecords(t, got, tt.want)
				}
				if _, err := os.Stat(gzipSibling(path)); tt.op != "remove-all" && !errors.Is(err, fs.ErrNotExist) {
					t.Errorf(".gz still there after redo")
				}
				for _, dir := range []string{filepath.Dir(path), filepath.Join(filepath.Dir(path), tempFolder)} {
					entries, _ := os.ReadDir(dir)
					for _, e := range entries {
						if strings.Contains(e.Name(), ".tmp-") {
							t.Errorf("temp %s left after redo", e.Name())
						}
					}
				}
			})
		}
	}
}

func equalRecords(a, b []Record) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Seq != b[i].Seq || string(a[i].Line) != string(b[i].Line) {
			return false
		}
	}
	return true
}
