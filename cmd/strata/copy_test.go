package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCopyCommand copies an imported store into a new file and back with
// 'strata copy', and expects the same tree and expanded turns in all
// three; then the errors a user meets.
func TestCopyCommand(t *testing.T) {
	dir := t.TempDir()
	a, b, c := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db"), filepath.Join(dir, "c.db")
	mustRun(t, a, "import", writeJSONL(t, dir, "k", 3000))
	out := mustRun(t, "", "copy", "--from", a, "--to", b)
	if !strings.Contains(out, "copied 1 conversations of 1 namespaces") || !strings.Contains(out, "3000 turns added") || !strings.Contains(out, "verified") {
		t.Errorf("copy printed:\n%s", out)
	}
	mustRun(t, "", "copy", "--from", b, "--to", c)
	tree := mustRun(t, a, "tree", "--conversation", "k", "--json")
	for _, db := range []string{b, c} {
		if got := mustRun(t, db, "tree", "--conversation", "k", "--json"); got != tree {
			t.Errorf("tree of %s differs from the source's", filepath.Base(db))
		}
	}
	// Again: nothing to add, and still verified.
	if out := mustRun(t, "", "copy", "--from", a, "--to", b); !strings.Contains(out, "0 turns added") || !strings.Contains(out, "verified") {
		t.Errorf("a second copy printed:\n%s", out)
	}
	if out := mustRun(t, "", "copy", "--from", a, "--to", c, "--verify-only"); !strings.Contains(out, "verified") || strings.Contains(out, "copied") {
		t.Errorf("--verify-only printed:\n%s", out)
	}
	// A store that differs is reported, with exit status 1.
	mustRun(t, c, "pin", "--conversation", "k", "--seq", "7")
	out, _, err := run(t, "", "", "copy", "--from", a, "--to", c, "--verify-only")
	if err == nil || !strings.Contains(out, "differs: default/k: digest of the turns") {
		t.Errorf("verify of a changed store: %v\n%s", err, out)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"copy", "--from", a}, "--from and --to are required"},
		{[]string{"copy", "--from", a, "--to", a}, "name the same store"},
		{[]string{"copy", "--from", filepath.Join(dir, "nope.db"), "--to", b}, "no such store"},
	} {
		_, _, err := run(t, "", "", tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("strata %s: %v, want an error with %q", strings.Join(tc.args, " "), err, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "nope.db")); err == nil {
		t.Error("copying from a missing file created it")
	}
}

// TestMigrateCommand: a new file is brought from 0 to the newest version,
// then is up to date.
func TestMigrateCommand(t *testing.T) {
	db := filepath.Join(t.TempDir(), "m.db")
	if out := mustRun(t, db, "migrate"); !strings.Contains(out, "schema version 0 -> ") {
		t.Errorf("first migrate: %s", out)
	}
	if out := mustRun(t, db, "migrate"); !strings.Contains(out, "up to date") {
		t.Errorf("second migrate: %s", out)
	}
}
