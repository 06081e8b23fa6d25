package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestContextFacts: 'strata context --facts' reads the learnings not yet
// read and carries the current one that bears on the query, from its
// turn, and not the superseded one; without --facts, no known facts; with
// --format upload, a usage error.
func TestContextFacts(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	base := time.Date(2023, 5, 8, 9, 0, 0, 0, time.UTC)
	var b strings.Builder
	for i := range 40 {
		content := []string{"Ok.", "Sure, sounds good.", "Right.", "Thanks!"}[i%4]
		role, name := "user", "Ana"
		if i%2 == 1 {
			role, name = "assistant", "Bo"
		}
		switch i {
		case 2:
			content = "I live in Lisbon near the river."
		case 33:
			content, role, name = "I moved to Porto for the new lab.", "user", "Ana"
		}
		line, _ := json.Marshal(map[string]any{"conversation": "c", "ext_id": fmt.Sprintf("t%d", i), "role": role,
			"name": name, "content": content, "time": base.Add(time.Duration(i) * time.Hour)})
		b.Write(append(line, '\n'))
	}
	file := filepath.Join(dir, "c.jsonl")
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, db, "import", file)
	args := []string{"context", "--conversation", "c", "--budget", "600", "--query", "Where does Ana live, Lisbon or Porto?"}
	if out := mustRun(t, db, args...); strings.Contains(out, "[known fact") {
		t.Errorf("context without --facts carries known facts:\n%s", out)
	}
	out := mustRun(t, db, append(args, "--facts")...)
	if !strings.Contains(out, "[known fact, from turn 34] Ana moved to Porto") || strings.Contains(out, "[known fact, from turn 3]") {
		t.Errorf("context --facts: want the fact that Ana moved to Porto and not the superseded one:\n%s", out)
	}
	if _, _, err := run(t, db, "", "context", "--conversation", "c", "--format", "upload", "--facts"); err == nil ||
		!strings.Contains(err.Error(), "--facts does not apply") {
		t.Errorf("context --format upload --facts: %v, want a usage error naming --facts", err)
	}
}
