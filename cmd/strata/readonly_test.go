package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// runWithEnv runs the command line with the environment env.
func runWithEnv(env map[string]string, args ...string) (string, error) {
	var out, errb bytes.Buffer
	m := &Main{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return env[k] }}
	err := m.Run(context.Background(), args)
	return out.String(), err
}

// readCommands runs every command that only reads on conversation c1 of
// the store at db (imported by writeJSONL) and fails the test if one
// fails.
func readCommands(t *testing.T, db string, env map[string]string) {
	t.Helper()
	env["STRATA_DB"] = db
	out, err := runWithEnv(env, "tree", "--conversation", "c1", "--json")
	if err != nil {
		t.Fatalf("tree: %v", err)
	}
	var tree treeJSON
	if err := json.Unmarshal([]byte(out), &tree); err != nil || tree.Turns != 230 {
		t.Fatalf("tree: %d turns (%v)", tree.Turns, err)
	}
	for _, args := range [][]string{
		{"list"},
		{"stats"},
		{"search", "--conversation", "c1", "garden"},
		{"expand", tree.Nodes[0].ID},
		{"context", "--conversation", "c1", "--budget", "1500"},
		{"context", "--conversation", "c1", "--budget", "1500", "--query", "garden"},
		{"zoom", "--conversation", "c1", "--when", "last week"},
		{"export", "primers", "--conversation", "c1", "--dir", t.TempDir()},
	} {
		if out, err := runWithEnv(env, args...); err != nil {
			t.Fatalf("strata %s: %v", strings.Join(args, " "), err)
		} else if out == "" {
			t.Fatalf("strata %s printed nothing", strings.Join(args, " "))
		}
	}
}

// TestReadOnlyFlag: with STRATA_READ_ONLY=1 (or --read-only) the read
// commands read the store without changing its file, and a command that
// writes fails with an error that says read-only.
func TestReadOnlyFlag(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	mustRun(t, db, "import", writeJSONL(t, dir, "c1", 230))
	before, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	readCommands(t, db, map[string]string{"STRATA_READ_ONLY": "1"})
	// Known facts read no learnings of a read-only store: they show those
	// read before, without writing.
	if out, err := runWithEnv(map[string]string{"STRATA_DB": db, "STRATA_READ_ONLY": "1"},
		"context", "--conversation", "c1", "--budget", "1500", "--facts", "--query", "garden"); err != nil || out == "" {
		t.Fatalf("context --facts on a read-only store: %v (%d bytes out)", err, len(out))
	}
	for _, env := range []map[string]string{{"STRATA_DB": db, "STRATA_READ_ONLY": "1"}, {"STRATA_DB": db}} {
		args := []string{"add", "--conversation", "c1", "--role", "user", "one more turn"}
		if env["STRATA_READ_ONLY"] == "" {
			args = append([]string{"add", "--read-only"}, args[1:]...)
		}
		_, err = runWithEnv(env, args...)
		if err == nil || !strings.Contains(err.Error(), "read-only") {
			t.Fatalf("strata %s on a read-only store: %v, want an error saying read-only", strings.Join(args, " "), err)
		}
	}
	after, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Fatal("read-only commands changed the database file")
	}
	if _, err := runWithEnv(map[string]string{"STRATA_DB": db, "STRATA_READ_ONLY": "maybe"}, "list"); err == nil ||
		!strings.Contains(err.Error(), "STRATA_READ_ONLY") {
		t.Fatalf("STRATA_READ_ONLY=maybe: %v", err)
	}
}

// TestReadCommandsOnReadOnlyMedia: a store on a file system mounted
// read-only (a tmpfs remounted so, as root, where chmod stops nothing;
// skipped where this process may not mount) is listed, searched and
// expanded by the read commands without any flag, and a command that
// writes says read-only and names the file.
func TestReadCommandsOnReadOnlyMedia(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	mustRun(t, db, "import", writeJSONL(t, dir, "c1", 230))
	media := t.TempDir()
	if err := syscall.Mount("tmpfs", media, "tmpfs", 0, "size=64m"); err != nil {
		t.Skipf("cannot mount a tmpfs (%v): needs root", err)
	}
	t.Cleanup(func() { syscall.Unmount(media, syscall.MNT_DETACH) })
	b, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	snap := filepath.Join(media, "s.db")
	if err := os.WriteFile(snap, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", media, "tmpfs", syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
		t.Fatal(err)
	}
	readCommands(t, snap, map[string]string{})
	_, err = runWithEnv(map[string]string{"STRATA_DB": snap}, "add", "--conversation", "c1", "--role", "user", "one more turn")
	if err == nil || !strings.Contains(err.Error(), "read-only") || !strings.Contains(err.Error(), snap) {
		t.Fatalf("add on read-only media: %v, want an error saying read-only naming %s", err, snap)
	}
}
