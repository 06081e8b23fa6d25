package sqlite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"strata"
	"strata/extractive"
)

// TestEmptiedFileBesideArchiveRefused: a database file emptied to 0 bytes
// (or deleted) whose archive segments remain is not opened as a new store,
// and the segments are left as they were.
func TestEmptiedFileBesideArchiveRefused(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "e.db")
	st, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := strata.New(strata.Config{Store: st, Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New(),
		Tiers: &strata.TierPolicy{WarmMaxAge: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2024, 3, 1, 9, 0, 0, 0, time.UTC)
	var turns []strata.Turn
	for i := range 60 {
		turns = append(turns, strata.Turn{ExtID: fmt.Sprint(i), Role: strata.RoleUser, Content: fmt.Sprintf("turn %d", i),
			Time: start.Add(time.Duration(i) * time.Hour)})
	}
	if _, err := m.Ingest(ctx, strata.Batch{Conversation: "c", Turns: turns}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	segments := func() []string {
		var list []string
		filepath.WalkDir(ArchiveRoot(path), func(p string, d os.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				list = append(list, p)
			}
			return nil
		})
		return list
	}
	before := segments()
	if len(before) == 0 {
		t.Fatal("the test made no archive segment")
	}
	for _, c := range []struct {
		name  string
		empty func() error
		want  string
	}{
		{"emptied", func() error { return os.Truncate(path, 0) }, "is empty"},
		{"deleted", func() error { return os.Remove(path) }, "does not exist"},
	} {
		if err := c.empty(); err != nil {
			t.Fatal(err)
		}
		s, err := Open(ctx, path)
		if err == nil {
			s.Close()
			t.Fatalf("%s: Open succeeded beside %d archive segments", c.name, len(before))
		}
		if strata.ErrorCode(err) != strata.ECONFLICT || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "archive") {
			t.Fatalf("%s: err = %v, want an ECONFLICT that names the archive", c.name, err)
		}
		if after := segments(); len(after) != len(before) {
			t.Fatalf("%s: %d segments before, %d after", c.name, len(before), len(after))
		}
	}
}
