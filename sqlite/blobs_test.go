package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/archive"
	"github.com/strata-memory/strata/archive/blobtest"
	"github.com/strata-memory/strata/extractive"
	"github.com/strata-memory/strata/sqlite"
	"github.com/strata-memory/strata/storetest"
)

// TestConformanceMemoryBlobs runs the store suite with the archive
// segments in memory: every segment the store reads or writes goes
// through the Blobs it was given.
func TestConformanceMemoryBlobs(t *testing.T) {
	if testing.Short() || !runVariants {
		t.Skip("the suite runs once in TestConformance (and the variants without the race detector)")
	}
	storetest.Run(t, func(t *testing.T) strata.Store {
		s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "t.db"), sqlite.WithBlobs(blobtest.NewMemory()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// coldConversation ingests 60 turns over two days into conversation c of
// a memory on st with every closed span demoted to cold, and returns the
// turns as the store reads them.
func coldConversation(t *testing.T, st strata.Store) []strata.Turn {
	t.Helper()
	ctx := t.Context()
	m, err := strata.New(strata.Config{Store: st, Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New(),
		Tiers: &strata.TierPolicy{WarmMaxAge: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2024, 2, 29, 22, 0, 0, 0, time.UTC) // over a month's end
	var turns []strata.Turn
	for i := range 60 {
		turns = append(turns, strata.Turn{ExtID: fmt.Sprint(i), Role: strata.RoleUser, Name: "Ana",
			Content: fmt.Sprintf("turn %d about the archive", i), Time: start.Add(time.Duration(i) * 5 * time.Minute)})
	}
	if _, err := m.Ingest(ctx, strata.Batch{Conversation: "c", Turns: turns}); err != nil {
		t.Fatal(err)
	}
	got, err := st.Turns(ctx, strata.TurnFilter{Namespace: strata.DefaultNamespace, Conversation: "c"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 60 {
		t.Fatalf("%d turns stored, want 60", len(got))
	}
	return got
}

// TestWithBlobs: a store opened with other Blobs keeps its segments there
// and nowhere else, reads cold turns back from them, names them in
// errors, removes them with their conversation, and refuses to start a
// new database over them.
func TestWithBlobs(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	mem := blobtest.NewMemory()
	path := filepath.Join(dir, "m.db")
	st, err := sqlite.Open(ctx, path, sqlite.WithBlobs(mem))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	want := coldConversation(t, st)

	// The same turns through the default files.
	ref, err := sqlite.Open(ctx, filepath.Join(dir, "f.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	if fromFiles := coldConversation(t, ref); !reflect.DeepEqual(fromFiles, want) {
		t.Fatal("turns read back from memory blobs differ from those read from files")
	}

	prefix := archive.Prefix(strata.DefaultNamespace, "c")
	keys, _ := mem.List(ctx, "")
	if len(keys) != 2 || keys[0] != prefix+"2024-02.jsonl.zst" || keys[1] != prefix+"2024-03.jsonl.zst" {
		t.Fatalf("blobs = %q, want the two months' segments", keys)
	}
	fileKeys, _ := archive.NewFiles(sqlite.ArchiveRoot(filepath.Join(dir, "f.db"))).List(ctx, "")
	if !reflect.DeepEqual(fileKeys, keys) {
		t.Fatalf("files hold %q, memory %q: the keys should be the same", fileKeys, keys)
	}
	// Byte for byte the same segments.
	for _, k := range keys {
		a, _ := mem.Get(ctx, k)
		b, err := os.ReadFile(filepath.Join(sqlite.ArchiveRoot(filepath.Join(dir, "f.db")), filepath.FromSlash(k)))
		if err != nil || string(a) != string(b) {
			t.Fatalf("segment %s differs between memory and files (%v)", k, err)
		}
	}
	if _, err := os.Stat(sqlite.ArchiveRoot(path)); !os.IsNotExist(err) {
		t.Fatalf("the store wrote an archive folder beside its file: %v", err)
	}
	stats, err := st.Stats(ctx, strata.DefaultNamespace)
	if err != nil || stats.Archive.Segments != 2 || stats.Archive.Records == 0 {
		t.Fatalf("Stats.Archive = %+v, %v", stats.Archive, err)
	}

	// A missing segment is an error naming it as the Blobs locate it.
	saved, _ := mem.Get(ctx, keys[0])
	mem.Delete(ctx, keys[0])
	_, err = st.Turns(ctx, strata.TurnFilter{Namespace: strata.DefaultNamespace, Conversation: "c"})
	if strata.ErrorCode(err) != strata.ENOTFOUND || !strings.Contains(err.Error(), "memory:"+keys[0]) {
		t.Fatalf("Turns with a segment missing: %v", err)
	}
	mem.Put(ctx, keys[0], saved, nil)

	// A new database over blobs that hold segments is refused.
	if s, err := sqlite.Open(ctx, filepath.Join(dir, "new.db"), sqlite.WithBlobs(mem)); err == nil {
		s.Close()
		t.Fatal("a new database opened over blobs holding segments")
	} else if strata.ErrorCode(err) != strata.ECONFLICT || !strings.Contains(err.Error(), "memory:") {
		t.Fatalf("new database over used blobs: %v", err)
	}

	// Deleting the conversation deletes its segments.
	if _, err := st.DeleteConversation(ctx, strata.DefaultNamespace, "c", "test", time.Now()); err != nil {
		t.Fatal(err)
	}
	if keys, _ := mem.List(ctx, ""); len(keys) != 0 {
		t.Fatalf("blobs left after deleting the conversation: %q", keys)
	}
}
