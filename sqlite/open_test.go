package sqlite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/extractive"
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

// TestPutNodesCountsNew: ReplaceNodes reports the nodes it made, not
// those it replaced, so two rollups of the same spans (two processes
// importing one file) do not both count them.
func TestPutNodesCountsNew(t *testing.T) {
	ctx := context.Background()
	st, err := Open(ctx, filepath.Join(t.TempDir(), "n.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.EnsureConversation(ctx, strata.Conversation{Namespace: "ns", ID: "c", Policy: "chunks"}); err != nil {
		t.Fatal(err)
	}
	node := func(i int) strata.Node {
		return strata.Node{ID: fmt.Sprintf("n%d", i), Level: 1, FirstSeq: int64(10*i + 1), LastSeq: int64(10*i + 10),
			Summary: fmt.Sprintf("summary %d", i)}
	}
	for _, c := range []struct {
		nodes []strata.Node
		want  int
	}{
		{[]strata.Node{node(0), node(1), node(2)}, 3},
		{[]strata.Node{node(0), node(1), node(2)}, 0}, // the same spans again
		{[]strata.Node{node(2), node(3), node(3)}, 1}, // one new, put twice
		{nil, 0},
	} {
		got, err := st.ReplaceNodes(ctx, "ns", "c", nil, c.nodes)
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Fatalf("put %d nodes: %d counted as new, want %d", len(c.nodes), got, c.want)
		}
	}
	ns, err := st.Nodes(ctx, strata.NodeFilter{Namespace: "ns", Conversation: "c"})
	if err != nil {
		t.Fatal(err)
	}
	if len(ns) != 4 {
		t.Fatalf("%d nodes stored, want 4", len(ns))
	}
}
