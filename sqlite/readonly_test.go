package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/extractive"
	"github.com/strata-memory/strata/internal/race"
)

// fillStore writes a conversation "c" of n turns into a new store at path
// and closes it.
func fillStore(t *testing.T, path string, n int) {
	t.Helper()
	ctx := context.Background()
	st, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	ingestTurns(t, st, "c", 0, n)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
}

// ingestTurns appends turns from..from+n-1 of conversation conv through
// the engine.
func ingestTurns(t *testing.T, st *Store, conv string, from, n int) {
	t.Helper()
	m, err := strata.New(strata.Config{Store: st, Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New()})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2024, 3, 1, 9, 0, 0, 0, time.UTC)
	var turns []strata.Turn
	for i := from; i < from+n; i++ {
		turns = append(turns, strata.Turn{ExtID: fmt.Sprint(i), Role: strata.RoleUser,
			Content: fmt.Sprintf("turn %d about the otter by the weir", i), Time: start.Add(time.Duration(i) * time.Minute)})
	}
	if _, err := m.Ingest(context.Background(), strata.Batch{Conversation: conv, Turns: turns}); err != nil {
		t.Fatal(err)
	}
}

// checkReads lists, reads and searches conversation "c" of st, which
// holds n turns.
func checkReads(t *testing.T, st *Store, n int) {
	t.Helper()
	ctx := context.Background()
	convs, err := st.Conversations(ctx, strata.DefaultNamespace)
	if err != nil || len(convs) != 1 {
		t.Fatalf("list: %d conversations (%v)", len(convs), err)
	}
	turns, err := st.Turns(ctx, strata.TurnFilter{Namespace: strata.DefaultNamespace, Conversation: "c"})
	if err != nil || len(turns) != n {
		t.Fatalf("turns: %d of %d (%v)", len(turns), n, err)
	}
	hits, err := st.Search(ctx, strata.SearchQuery{Namespace: strata.DefaultNamespace, Conversation: "c", Text: "otter", K: 3})
	if err != nil || len(hits) == 0 {
		t.Fatalf("search: %d hits (%v)", len(hits), err)
	}
}

// TestReadOnlyOpen: a store opened with ReadOnly reads as a writable one
// does, refuses every write with an error that says it is read-only, and
// leaves the file as it was.
func TestReadOnlyOpen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	fillStore(t, path, 40)
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := Open(ctx, path, ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	if !st.ReadOnly() {
		t.Fatal("ReadOnly() is false")
	}
	checkReads(t, st, 40)
	_, err = st.AppendTurns(ctx, strata.DefaultNamespace, "c", []strata.Turn{{Role: strata.RoleUser, Content: "x"}})
	if err == nil || strata.ErrorCode(err) != strata.ECONFLICT || !strings.Contains(err.Error(), "read-only") {
		t.Fatalf("append to a read-only store: %v, want an ECONFLICT saying read-only", err)
	}
	if _, err := st.EnsureConversation(ctx, strata.Conversation{Namespace: strata.DefaultNamespace, ID: "d", Policy: "chunks"}); err == nil ||
		!strings.Contains(err.Error(), "read-only") {
		t.Fatalf("create in a read-only store: %v", err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Fatal("a read-only open changed the file")
	}

	if _, err := Open(ctx, filepath.Join(t.TempDir(), "missing.db"), ReadOnly()); strata.ErrorCode(err) != strata.ENOTFOUND {
		t.Fatalf("read-only open of a missing file: %v, want ENOTFOUND", err)
	}
}

// TestReadOnlyOlderSchema: a file of an older schema is refused read-only
// with a message that says to open it writable once (a read-only open
// cannot migrate it), and is not changed.
func TestReadOnlyOlderSchema(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	fillStore(t, path, 10)
	st, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	// The file as the previous version left it, as far as the version
	// check sees.
	if _, err := st.w.Exec(`DELETE FROM schema_migrations WHERE version = ?`, SchemaVersion()); err != nil {
		t.Fatal(err)
	}
	st.Close()
	_, err = Open(ctx, path, ReadOnly())
	if err == nil || strata.ErrorCode(err) != strata.ECONFLICT || !strings.Contains(err.Error(), "open it writable once") {
		t.Fatalf("read-only open of an older schema: %v", err)
	}
	// The refused open left the version as it was. (A writable open would
	// migrate it; here it would run the last step again, so the row goes
	// back by hand.)
	db, err := sql.Open("sqlite", dsn(path, nil, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v int
	if err := db.QueryRow(`SELECT max(version) FROM schema_migrations`).Scan(&v); err != nil || v != SchemaVersion()-1 {
		t.Fatalf("after the refused open the schema is version %d (%v), want %d", v, err, SchemaVersion()-1)
	}
	if _, err := db.Exec(`INSERT INTO schema_migrations (version, name, applied) VALUES (?, 'restored', 0)`, SchemaVersion()); err != nil {
		t.Fatal(err)
	}
	db.Close()
	st, err = Open(ctx, path, ReadOnly())
	if err != nil {
		t.Fatalf("read-only open of the current schema: %v", err)
	}
	st.Close()
}

// TestFullDatabaseSaysDiskFull: SQLite's SQLITE_FULL, produced for real
// with a page limit, comes out of Explain saying "disk full" and naming
// the file, and a read-only open of the full store still reads it.
func TestFullDatabaseSaysDiskFull(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	fillStore(t, path, 10)
	st, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var pages int
	if err := st.w.QueryRow(`PRAGMA page_count`).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := st.w.Exec(fmt.Sprintf(`PRAGMA max_page_count = %d`, pages)); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("a long turn that does not fit ", 4000)
	_, err = st.AppendTurns(ctx, strata.DefaultNamespace, "c", []strata.Turn{{Role: strata.RoleUser, Content: big}})
	if err == nil {
		t.Fatal("append past max_page_count succeeded")
	}
	err = st.Explain(err)
	if !strings.Contains(err.Error(), "disk full") || !strings.Contains(err.Error(), path) {
		t.Fatalf("explained: %v, want disk full naming %s", err, path)
	}
	ro, err := Open(ctx, path, ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	checkReads(t, ro, 10)
}

// mountTmpfs mounts a tmpfs of size bytes at a new folder, or skips the
// test where this process may not mount (it needs root).
func mountTmpfs(t *testing.T, size int) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d", size)); err != nil {
		t.Skipf("cannot mount a tmpfs (%v): needs root", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// remountReadOnly makes the tmpfs at dir read-only.
func remountReadOnly(t *testing.T, dir string) {
	t.Helper()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
		t.Fatalf("remount %s read-only: %v", dir, err)
	}
}

// TestReadOnlyMedia: a store on a file system mounted read-only (a
// tmpfs remounted so; as root, where chmod stops nothing) cannot be
// opened writable, and the error says read-only and names the file; it
// opens read-only and is listed, read and searched. A snapshot whose
// write-ahead log holds changes opens read-only when its -shm file came
// with it, and is refused with a message that says why when it did not.
func TestReadOnlyMedia(t *testing.T) {
	ctx := context.Background()
	src := filepath.Join(t.TempDir(), "s.db")
	fillStore(t, src, 30)
	// A snapshot taken while a writer holds the file open: the newest
	// turns are in the -wal file only.
	live, err := Open(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	ingestTurns(t, live, "c", 30, 5)

	dir := mountTmpfs(t, 64<<20)
	copyFile := func(from, to string) {
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	clean := filepath.Join(dir, "clean", "s.db")
	fillStore(t, clean, 30)
	withShm := filepath.Join(dir, "shm", "s.db")
	noShm := filepath.Join(dir, "noshm", "s.db")
	for _, suffix := range []string{"", "-wal", "-shm"} {
		copyFile(src+suffix, withShm+suffix)
		if suffix != "-shm" {
			copyFile(src+suffix, noShm+suffix)
		}
	}
	remountReadOnly(t, dir)

	_, err = Open(ctx, clean)
	if err == nil || !strings.Contains(err.Error(), "read-only") || !strings.Contains(err.Error(), clean) {
		t.Fatalf("writable open on read-only media: %v, want read-only naming %s", err, clean)
	}
	for _, c := range []struct {
		path string
		n    int
	}{{clean, 30}, {withShm, 35}} {
		st, err := Open(ctx, c.path, ReadOnly())
		if err != nil {
			t.Fatalf("read-only open of %s: %v", c.path, err)
		}
		checkReads(t, st, c.n)
		_, err = st.AppendTurns(ctx, strata.DefaultNamespace, "c", []strata.Turn{{Role: strata.RoleUser, Content: "x"}})
		if err == nil || !strings.Contains(err.Error(), "read-only") {
			t.Fatalf("append: %v", err)
		}
		st.Close()
	}
	_, err = Open(ctx, noShm, ReadOnly())
	var se *storageError
	if !errors.As(err, &se) || se.kind != "read-only" || !strings.Contains(err.Error(), noShm+"-wal") {
		t.Fatalf("read-only open of a snapshot without its -shm: %v", err)
	}
}

// TestFullDiskSaysDiskFull: on a full disk (a small tmpfs filled up) a
// write fails, and so does a writable open of a store closed cleanly
// (SQLite cannot create its -shm file: "disk I/O error (4874)"); both
// errors say "disk full" and name the file, and a read-only open reads
// the store.
func TestFullDiskSaysDiskFull(t *testing.T) {
	ctx := context.Background()
	dir := mountTmpfs(t, 8<<20)
	path := filepath.Join(dir, "s.db")
	fillStore(t, path, 20)
	st, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	// Fill the disk; again after Close, which gives back the space of
	// the -wal and -shm files.
	fills := 0
	fill := func() {
		fills++
		f, err := os.Create(filepath.Join(dir, fmt.Sprint("filler", fills)))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		for _, n := range []int{64 << 10, 512, 1} {
			for {
				if _, err := f.Write(make([]byte, n)); err != nil {
					break
				}
			}
		}
	}
	fill()
	big := strings.Repeat("a long turn on a full disk ", 40000)
	_, err = st.AppendTurns(ctx, strata.DefaultNamespace, "c", []strata.Turn{{Role: strata.RoleUser, Content: big}})
	if err == nil {
		t.Fatal("append on a full disk succeeded")
	}
	if err := st.Explain(err); !strings.Contains(err.Error(), "disk full") || !strings.Contains(err.Error(), path) {
		t.Fatalf("append on a full disk: %v", err)
	}
	st.Close()
	if _, err := os.Stat(path + "-shm"); err == nil {
		t.Fatalf("%s-shm is still there after Close", path)
	}
	fill()
	_, err = Open(ctx, path)
	if err == nil || !strings.Contains(err.Error(), "disk full") || !strings.Contains(err.Error(), path) {
		t.Fatalf("writable open on a full disk: %v", err)
	}
	ro, err := Open(ctx, path, ReadOnly())
	if err != nil {
		t.Fatalf("read-only open on a full disk: %v", err)
	}
	checkReads(t, ro, 20)
	ro.Close()
}

// TestHotRowChecksum: a byte changed in a hot turn's row behind the
// store's back (with SQL, as a flipped bit on disk would) is an error
// that names the conversation and the turn on every read, where it was
// served silently (integrity_check finds nothing wrong with such a row).
func TestHotRowChecksum(t *testing.T) {
	race.SkipOneGoroutine(t)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	fillStore(t, path, 40)
	st, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var nulls int
	if err := st.w.QueryRow(`SELECT count(*) FROM turns WHERE tier = 0 AND crc IS NULL`).Scan(&nulls); err != nil || nulls != 0 {
		t.Fatalf("%d hot rows without a checksum (%v)", nulls, err)
	}
	checkReads(t, st, 40)
	var hot int
	if err := st.w.QueryRow(`SELECT count(*) FROM turns WHERE tier = 0 AND seq = 37`).Scan(&hot); err != nil || hot != 1 {
		t.Fatalf("turn 37 is not hot (%v)", err)
	}
	if _, err := st.w.Exec(`UPDATE turns SET content = replace(content, 'otter', 'otteR') WHERE seq = 37`); err != nil {
		t.Fatal(err)
	}
	var ok string
	if err := st.w.QueryRow(`PRAGMA integrity_check`).Scan(&ok); err != nil || ok != "ok" {
		t.Fatalf("integrity_check: %s (%v)", ok, err)
	}
	want := func(what string, err error) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), "checksum") || !strings.Contains(err.Error(), "turn 37") ||
			!strings.Contains(err.Error(), `"c"`) {
			t.Fatalf("%s of a corrupt row: %v, want a checksum error naming turn 37 of \"c\"", what, err)
		}
	}
	_, err = st.Turns(ctx, strata.TurnFilter{Namespace: strata.DefaultNamespace, Conversation: "c"})
	want("Turns", err)
	_, err = st.Search(ctx, strata.SearchQuery{Namespace: strata.DefaultNamespace, Conversation: "c", Text: "otter", K: 50})
	want("Search", err)
	// Every other column of the checksum, each in a store of its own.
	for _, set := range []string{"ext_id = 'x'", "session = 9", "session_label = 'x'", "role = 'assistant'", "name = 'x'",
		"time = time + 1", "model = 'x'", "tool_calls = '[]'", "tool_results = '[]'", "tokens = tokens + 1",
		"tags = '[]'", "metadata = '{}'", "seq = 1000"} {
		path := filepath.Join(t.TempDir(), "s.db")
		fillStore(t, path, 10)
		st, err := Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.w.Exec(`UPDATE turns SET ` + set + ` WHERE seq = 9`); err != nil {
			t.Fatal(err)
		}
		_, err = st.Turns(ctx, strata.TurnFilter{Namespace: strata.DefaultNamespace, Conversation: "c"})
		st.Close()
		if err == nil || !strings.Contains(err.Error(), "checksum") {
			t.Fatalf("%s: %v, want a checksum error", set, err)
		}
	}
}

// TestHotRowChecksumMigration: migration 22 gives the hot rows of a store
// written before it their checksums, which reads then check.
func TestHotRowChecksumMigration(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	fillStore(t, path, 40)
	db, err := sql.Open("sqlite", dsn(path, nil, ""))
	if err != nil {
		t.Fatal(err)
	}
	// Back to the store as migration 21 left it: undo 23 as well.
	if _, err := db.Exec(`ALTER TABLE turns DROP COLUMN crc;
		ALTER TABLE learnings DROP COLUMN about; ALTER TABLE learnings DROP COLUMN attribute;
		ALTER TABLE learnings DROP COLUMN value; ALTER TABLE learnings DROP COLUMN fact_when;
		ALTER TABLE learnings DROP COLUMN sources;
		DELETE FROM schema_migrations WHERE version >= 22`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	st, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if st.MigratedFrom() != 21 {
		t.Fatalf("migrated from %d, want 21", st.MigratedFrom())
	}
	var hot, summed int
	if err := st.w.QueryRow(`SELECT count(*), count(crc) FROM turns WHERE tier = 0`).Scan(&hot, &summed); err != nil || hot == 0 || summed != hot {
		t.Fatalf("%d of %d hot rows have a checksum (%v)", summed, hot, err)
	}
	checkReads(t, st, 40)
	if _, err := st.w.Exec(`UPDATE turns SET content = content || ' ' WHERE seq = 38`); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Turns(ctx, strata.TurnFilter{Namespace: strata.DefaultNamespace, Conversation: "c"}); err == nil ||
		!strings.Contains(err.Error(), "checksum") {
		t.Fatalf("read of a corrupt migrated row: %v", err)
	}
}

// BenchmarkTurnSum is the checksum of one hot row of 1,000 content bytes,
// the cost each append and each read of a row pays for it.
func BenchmarkTurnSum(b *testing.B) {
	r := turnRow{seq: 12345, extID: sql.NullString{String: "msg-0001", Valid: true}, session: 3, label: "s3",
		role: "assistant", content: strings.Repeat("the otter crossed the weir ", 37), time: sql.NullInt64{Int64: 1, Valid: true},
		model: "m", tokens: 250, metadata: sql.NullString{String: `{"k":"v"}`, Valid: true}}
	b.SetBytes(int64(len(r.content)))
	for b.Loop() {
		r.sum()
	}
}
