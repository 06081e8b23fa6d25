package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCopyCommand copies an imported store into a new file and back with
// 'strata copy', and expects the same tree and expanded turns in all
// three; then the errors a user meets.
func TestCopyCommand(t *testing.T) {
	// 300 turns copied in batches of 200 are the two batches that 3000
	// turns make at storecopy's default of 2000, and with spans going
	// cold once 100 turns follow them (not the default 1000) the store
	// holds hot, warm and cold spans as 3000 turns do under the defaults.
	defer func(n int) { copyBatch = n }(copyBatch)
	copyBatch = 200
	dir := t.TempDir()
	cfg := writeFile(t, dir, "strata.yaml", "tiers:\n  warm_max_turns: 100\n")
	a, b, c := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db"), filepath.Join(dir, "c.db")
	mustCfg(t, a, cfg, "import", writeJSONL(t, dir, "k", 300))
	out := mustRun(t, "", "copy", "--from", a, "--to", b)
	if !strings.Contains(out, "copied 1 conversations of 1 namespaces") || !strings.Contains(out, "300 turns added") || !strings.Contains(out, "verified") {
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

// TestCopyCommandTokens: the tokens of a namespace that holds no
// conversation are copied, and --verify-only against a store that lacks
// them, or holds one revoked, fails naming the token.
func TestCopyCommandTokens(t *testing.T) {
	dir := t.TempDir()
	a, b, c := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db"), filepath.Join(dir, "c.db")
	mustRun(t, a, "import", writeJSONL(t, dir, "k", 10))
	mustRun(t, a, "token", "create", "--namespace", "keys", "--label", "ci")
	var list struct{ Tokens []struct{ ID string } }
	if err := json.Unmarshal([]byte(mustRun(t, a, "token", "list", "--json")), &list); err != nil || len(list.Tokens) != 1 {
		t.Fatalf("token list: %v %+v", err, list)
	}
	toks := list.Tokens
	mustRun(t, "", "copy", "--from", a, "--to", b, "--namespaces", "default")
	out, _, err := run(t, "", "", "copy", "--from", a, "--to", b, "--verify-only")
	if err == nil || !strings.Contains(out, "differs: keys: token "+toks[0].ID+` ("ci") only in the source`) || strings.Contains(out, "verified") {
		t.Errorf("--verify-only against a store without the token: %v\n%s", err, out)
	}
	if out := mustRun(t, "", "copy", "--from", a, "--to", c); !strings.Contains(out, "copied 1 conversations of 2 namespaces") || !strings.Contains(out, "1 tokens") || !strings.Contains(out, "verified") {
		t.Errorf("copy printed:\n%s", out)
	}
	if got := mustRun(t, c, "token", "list", "--namespace", "keys"); !strings.Contains(got, toks[0].ID) {
		t.Errorf("tokens of keys in the copy:\n%s", got)
	}
	mustRun(t, c, "token", "revoke", toks[0].ID)
	out, _, err = run(t, "", "", "copy", "--from", a, "--to", c, "--verify-only")
	if err == nil || !strings.Contains(out, "differs: keys: token "+toks[0].ID+": not revoked in the source, revoked at ") {
		t.Errorf("--verify-only against a store with the token revoked: %v\n%s", err, out)
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
