package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestForget deletes an imported conversation whose old spans are cold:
// without --yes nothing goes; with it the conversation, its search hits
// and its archive folder are gone, the other conversation stays whole, and
// importing the same file again brings it back from empty.
func TestForget(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	if err := os.WriteFile(filepath.Join(dir, "strata.yaml"), []byte("tiers: {hot_chunks: 1, warm_max_turns: 20}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "strata.yaml")
	a, b := writeJSONL(t, dir, "a", 120), writeJSONL(t, dir, "b", 60)
	mustRun(t, db, "import", "--config", cfg, a, b)
	before := mustRun(t, db, "search", "--config", cfg, "--conversation", "b", "--json", "the")

	folder := filepath.Join(dir, "archive", "s", "default", "a")
	if _, err := os.Stat(folder); err != nil {
		t.Fatalf("the archive folder before forget: %v", err)
	}
	if _, _, err := run(t, db, "", "forget", "--config", cfg, "--conversation", "a"); err == nil || !strings.Contains(err.Error(), "--yes") {
		t.Fatalf("forget without --yes: %v, want a refusal naming --yes", err)
	}
	if out := mustRun(t, db, "list", "--config", cfg); !strings.Contains(out, "a ") {
		t.Fatalf("a refused forget removed the conversation:\n%s", out)
	}
	out := mustRun(t, db, "forget", "--config", cfg, "--conversation", "a", "--yes", "--reason", "test", "--json")
	var d struct {
		Turns, Segments int64
		Reason          string
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil || d.Turns != 120 || d.Segments == 0 || d.Reason != "test" {
		t.Fatalf("forget --json = %s (%v), want 120 turns, some segments and the reason", out, err)
	}
	if out := mustRun(t, db, "list", "--config", cfg); strings.Contains(out, "a ") || !strings.Contains(out, "b ") {
		t.Errorf("list after forget:\n%s", out)
	}
	if _, _, err := run(t, db, "", "search", "--config", cfg, "--conversation", "a", "the"); err == nil {
		t.Errorf("search of the forgotten conversation succeeded")
	}
	if after := mustRun(t, db, "search", "--config", cfg, "--conversation", "b", "--json", "the"); after != before {
		t.Errorf("the other conversation's search changed:\n%s\nwas\n%s", after, before)
	}
	if _, err := os.Stat(folder); !os.IsNotExist(err) {
		t.Errorf("the archive folder of the forgotten conversation: %v, want it gone", err)
	}
	out = mustRun(t, db, "import", "--config", cfg, a)
	if !strings.Contains(out, "120 turns added") {
		t.Errorf("importing the forgotten conversation again:\n%s", out)
	}
}
