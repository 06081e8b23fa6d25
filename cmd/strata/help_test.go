package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runExit runs the command line in-process as the binary would and
// returns stdout, stderr and the exit status main would give.
func runExit(t *testing.T, db string, args ...string) (string, string, int) {
	t.Helper()
	out, errs, err := run(t, db, "", args...)
	var msg bytes.Buffer
	code := exitCode(err, &msg)
	return out, errs + msg.String(), code
}

// TestHelpOfEachCommand: 'strata help CMD' prints that command's help
// (its summary, usage line and flags), not the general help; 'CMD -h'
// and 'CMD --help' print the same and exit 0; none of them opens or
// creates a store.
func TestHelpOfEachCommand(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "sub", "s.db")
	general, _, code := runExit(t, db, "help")
	if code != 0 || !strings.Contains(general, "Commands:") {
		t.Fatalf("strata help: exit %d\n%s", code, general)
	}
	for _, c := range commands() {
		t.Run(c.name, func(t *testing.T) {
			out, errs, code := runExit(t, db, "help", c.name)
			if code != 0 {
				t.Fatalf("strata help %s: exit %d\n%s", c.name, code, errs)
			}
			if c.name != "help" {
				if out == general || !strings.HasPrefix(out, "strata "+c.name+": "+c.summary+"\n") || !strings.Contains(out, "Usage:") || !strings.Contains(strings.ReplaceAll(out, "\n", " "), "strata "+c.name+" ") {
					t.Fatalf("strata help %s printed:\n%s", c.name, out)
				}
			}
			for _, h := range []string{"-h", "--help"} {
				hout, herrs, code := runExit(t, db, c.name, h)
				if code != 0 || hout != out {
					t.Fatalf("strata %s %s: exit %d, stdout differs from 'strata help %s': %v\n%s%s", c.name, h, code, c.name, hout != out, hout, herrs)
				}
			}
			for _, sub := range c.subs {
				out, errs, code := runExit(t, db, "help", c.name, sub)
				if code != 0 || !strings.Contains(out, "Usage: strata "+c.name) {
					t.Fatalf("strata help %s %s: exit %d\n%s%s", c.name, sub, code, out, errs)
				}
				if hout, _, code := runExit(t, db, c.name, sub, "-h"); code != 0 || hout != out {
					t.Fatalf("strata %s %s -h: exit %d\n%s", c.name, sub, code, hout)
				}
			}
		})
	}
	if _, err := os.Stat(filepath.Dir(db)); !os.IsNotExist(err) {
		t.Fatalf("asking for help created %s (%v)", filepath.Dir(db), err)
	}
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"-h"}, 0}, {[]string{"--help"}, 0}, {[]string{"help", "help"}, 0},
		{[]string{}, 2}, {[]string{"help", "nope"}, 2}, {[]string{"help", "tree", "x"}, 2}, {[]string{"help", "token", "nope"}, 2},
		{[]string{"tree", "--nope"}, 2},
	} {
		if _, errs, code := runExit(t, db, tc.args...); code != tc.code {
			t.Errorf("strata %q: exit %d, want %d\n%s", tc.args, code, tc.code, errs)
		}
	}
}

// TestHelpGoesToStdoutMistakesToStderr: asked-for help is on stdout; a
// flag mistake prints the usage on stderr and nothing on stdout.
func TestHelpGoesToStdoutMistakesToStderr(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s.db")
	out, errs, code := runExit(t, db, "tree", "--depht", "2")
	if code != 2 || out != "" || !strings.Contains(errs, "Usage: strata tree") || !strings.Contains(errs, "-depht") {
		t.Fatalf("exit %d\nstdout %q\nstderr %s", code, out, errs)
	}
}

// TestVersionIsListed: the general help lists version, and it prints the
// version.
func TestVersionIsListed(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s.db")
	general := mustRun(t, db, "help")
	for _, name := range []string{"version", "completion", "help"} {
		if !strings.Contains(general, "\n  "+name+" ") {
			t.Errorf("the general help does not list %s:\n%s", name, general)
		}
	}
	for _, args := range [][]string{{"version"}, {"--version"}} {
		if out := mustRun(t, db, args...); out != "strata "+version+"\n" {
			t.Errorf("strata %s: %q", args[0], out)
		}
	}
}

// TestCompletionScripts: each shell's script names every command and the
// flags each command really has, parses in its shell (where installed),
// and, run there, completes a command, a subcommand and a flag.
func TestCompletionScripts(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s.db")
	spec, err := completionSpec(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var tree completeCommand
	for _, c := range spec.commands {
		if c.name == "tree" {
			tree = c
		}
	}
	// The flags come from the command's own flag set.
	names := map[string]bool{}
	for _, f := range tree.flags {
		names[f.name] = f.value
	}
	if v, ok := names["depth"]; !ok || !v || names["json"] || len(names) < 10 {
		t.Fatalf("tree's flags: %v", names)
	}
	dir := t.TempDir()
	for _, sh := range completionShells {
		t.Run(sh, func(t *testing.T) {
			script := mustRun(t, db, "completion", sh)
			for _, c := range commands() {
				if !strings.Contains(script, c.name) {
					t.Fatalf("the %s script lacks command %s", sh, c.name)
				}
			}
			for _, f := range []string{"--depth", "--skip-invalid", "-k"} {
				if !strings.Contains(script, f) && !strings.Contains(script, strings.TrimLeft(f, "-")) {
					t.Fatalf("the %s script lacks flag %s", sh, f)
				}
			}
			path := filepath.Join(dir, "strata."+sh)
			if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := exec.LookPath(sh); err != nil {
				t.Skipf("%s is not installed: the script's syntax is not checked", sh)
			}
			if out, err := exec.Command(sh, "-n", path).CombinedOutput(); err != nil {
				t.Fatalf("%s -n: %v\n%s", sh, err, out)
			}
			switch sh {
			case "bash":
				probe := `source "$1"; complete() { :; }
ask() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _strata; echo "${COMPREPLY[*]}"; }
ask strata tre; ask strata token ""; ask strata tree --dep; ask strata tree --depth ""; ask strata help exp`
				out, err := exec.Command("bash", "-c", probe, "bash", path).CombinedOutput()
				want := "tree\ncreate list revoke\n--depth\n\nexpand export\n"
				if err != nil || string(out) != want {
					t.Fatalf("bash completes %q (%v), want %q", out, err, want)
				}
			case "fish":
				probe := `source $argv[1]; for l in 'strata tre' 'strata token ' 'strata tree --dep' 'strata completion z'; complete -C $l | string replace -r '\t.*' ''; echo /; end`
				out, err := exec.Command("fish", "-c", probe, path).CombinedOutput()
				want := "tree\n/\ncreate\nlist\nrevoke\n/\n--depth\n/\nzsh\n/\n"
				if err != nil || string(out) != want {
					t.Fatalf("fish completes %q (%v), want %q", out, err, want)
				}
			}
		})
	}
	if _, _, err := run(t, db, "", "completion", "tcsh"); err == nil || !strings.Contains(err.Error(), "tcsh") {
		t.Fatalf("completion tcsh: %v", err)
	}
}

// TestReadCommandsNeedAStore: a command that only reads, given a --db
// that does not exist, says so, names it and exits 1, creating nothing;
// a command that writes creates the store and says so on stderr, once.
func TestReadCommandsNeedAStore(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "new", "s.db")
	for _, args := range [][]string{
		{"list"}, {"stats"}, {"tree", "--conversation", "c1"}, {"search", "garden"}, {"expand", "n1"},
		{"context", "--conversation", "c1", "--budget", "100"}, {"context", "--conversation", "c1", "--facts"}, {"zoom", "--conversation", "c1", "--when", "last week"},
		{"export", "primers", "--conversation", "c1", "--dir", filepath.Join(dir, "primers")},
		{"review"}, {"policy", "show"}, {"token", "list"},
	} {
		out, errs, code := runExit(t, db, args...)
		if code != 1 || !strings.Contains(errs, "no store at "+db) || out != "" {
			t.Errorf("strata %s on a missing store: exit %d\nstdout %q\nstderr %s", strings.Join(args, " "), code, out, errs)
		}
	}
	if _, err := os.Stat(filepath.Dir(db)); !os.IsNotExist(err) {
		t.Fatalf("read commands created %s (%v)", filepath.Dir(db), err)
	}
	_, errs, err := run(t, db, "", "add", "--conversation", "c1", "--role", "user", "hello")
	if err != nil || strings.Count(errs, "created a new store at "+db) != 1 {
		t.Fatalf("first add: %v\n%s", err, errs)
	}
	_, errs, err = run(t, db, "", "add", "--conversation", "c1", "--role", "user", "again")
	if err != nil || strings.Contains(errs, "created") {
		t.Fatalf("second add: %v\n%s", err, errs)
	}
	if out := mustRun(t, db, "list"); !strings.Contains(out, "c1") {
		t.Fatalf("list after add: %s", out)
	}
}
