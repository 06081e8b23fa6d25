package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"
)

// TestMain lets a test run the CLI in a child process (the test binary
// itself), so that the child can be killed mid-import.
func TestMain(m *testing.M) {
	if os.Getenv("STRATA_TEST_CHILD") == "1" {
		if err := NewMain().Run(context.Background(), os.Args[1:]); err != nil {
			fmt.Fprintln(os.Stderr, "strata:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// childEnv is the environment of a child process that runs the test
// binary as strata (see TestMain): the test's own, with
// STRATA_TEST_CHILD=1 and kv. A binary built with the race detector
// sleeps a second before it exits (GORACE's atexit_sleep_ms, 1000 by
// default) in case a thread still running is about to report a race;
// every child here has done its work when it exits, unless it is killed,
// and the tests start many, so the sleep is skipped unless GORACE sets
// it. A race a child ran into is reported, and makes it exit with an
// error, as before.
func childEnv(kv ...string) []string {
	env := append(append(os.Environ(), "STRATA_TEST_CHILD=1"), kv...)
	if g := os.Getenv("GORACE"); !strings.Contains(g, "atexit_sleep_ms") {
		env = append(env, "GORACE="+strings.TrimSpace(g+" atexit_sleep_ms=0"))
	}
	return env
}

// TestKilledImportLosesNothing kills `strata import` at several instants,
// resumes it each time, and expects exactly the pyramid of an import that
// was never interrupted, and a store that passes SQLite's integrity check.
func TestKilledImportLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	file := writeJSONL(t, dir, "k", killedImportTurns)
	clean := filepath.Join(dir, "clean.db")
	mustRun(t, clean, "import", file)

	db := filepath.Join(dir, "killed.db")
	kills := 0
	for _, after := range []time.Duration{150 * time.Millisecond, 400 * time.Millisecond, 700 * time.Millisecond, 1100 * time.Millisecond} {
		cmd := exec.Command(os.Args[0], "import", file)
		cmd.Env = childEnv("STRATA_DB=" + db)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(after):
			cmd.Process.Kill()
			<-done
			kills++
		}
	}
	if kills == 0 {
		t.Log("every import finished before its kill; the machine is fast")
	}
	mustRun(t, db, "import", file)

	var a, b treeJSON
	json.Unmarshal([]byte(mustRun(t, clean, "tree", "--conversation", "k", "--json")), &a)
	json.Unmarshal([]byte(mustRun(t, db, "tree", "--conversation", "k", "--json")), &b)
	if a.Turns != killedImportTurns || b.Turns != a.Turns || len(b.Nodes) != len(a.Nodes) {
		t.Fatalf("after %d kills: %d turns and %d nodes, want %d and %d", kills, b.Turns, len(b.Nodes), a.Turns, len(a.Nodes))
	}
	for i := range a.Nodes {
		if a.Nodes[i].ID != b.Nodes[i].ID || a.Nodes[i].Summary != b.Nodes[i].Summary {
			t.Fatalf("node %d differs after kills: %s vs %s", i, a.Nodes[i].ID, b.Nodes[i].ID)
		}
	}
	sdb, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	defer sdb.Close()
	var ok string
	if err := sdb.QueryRow(`PRAGMA integrity_check`).Scan(&ok); err != nil || ok != "ok" {
		t.Fatalf("integrity check: %q %v", ok, err)
	}
	var dup int
	sdb.QueryRow(`SELECT count(*) FROM (SELECT seq FROM turns GROUP BY conversation, seq HAVING count(*) > 1)`).Scan(&dup)
	if dup != 0 {
		t.Fatalf("%d duplicate seqs", dup)
	}
	t.Logf("%d kills", kills)
}

// TestConcurrentProcesses imports into one store from several processes
// at once: each finishes, and nothing is lost or doubled.
func TestConcurrentProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	a := writeJSONL(t, dir, "a", 3000)
	b := writeJSONL(t, dir, "b", 3000)
	var cmds []*exec.Cmd
	var errs []*bytes.Buffer
	for _, f := range []string{a, b, a, b} { // the same file twice: idempotent under races
		cmd := exec.Command(os.Args[0], "import", f)
		cmd.Env = childEnv("STRATA_DB=" + db)
		var e bytes.Buffer
		cmd.Stderr = &e
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
		errs = append(errs, &e)
	}
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("import: %v\n%s", err, errs[i])
		}
	}
	for _, conv := range []string{"a", "b"} {
		var tr treeJSON
		json.Unmarshal([]byte(mustRun(t, db, "tree", "--conversation", conv, "--json")), &tr)
		if tr.Turns != 3000 || tr.Levels[0].Nodes != 30 || tr.Levels[2].Nodes != 300 {
			t.Fatalf("%s: %d turns, levels %+v", conv, tr.Turns, tr.Levels)
		}
	}
}
