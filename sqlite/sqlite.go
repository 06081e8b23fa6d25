package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net/url"
	"os"
	pathpkg "path"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/archive"
)

// Store is a strata.Store in one SQLite file. It is safe for concurrent
// use by multiple goroutines.
type Store struct {
	path string
	seg  archive.Segments // the archive segments of cold spans
	w    *sql.DB          // exactly one connection; every write goes through it
	r    *sql.DB          // read-only connections
	from int              // schema version before Open migrated the file
	text *textCodec       // the node texts' dictionaries (textcodec.go)
	fts  ftsForm          // what the full-text tables are given of a text
	// In-memory indexes of long conversations' summaries (sumindex.go)
	// and newest turns (turnindex.go), unless noMemIndex.
	sums       convIndexes[sumIndex]
	turnIdx    convIndexes[turnIndex]
	noMemIndex bool
	readOnly   bool // opened with ReadOnly: w refuses every write
}

var _ strata.Store = (*Store)(nil)

// BusyTimeout is how long a connection waits for a lock held by another
// process before failing with SQLITE_BUSY. Writers hold the lock for one
// batch at a time, but on a loaded machine several importing processes
// can keep one waiting for more than 10 seconds (it happened in the
// concurrent-process test under the race detector), so it is generous.
const BusyTimeout = 30 * time.Second

// An Option changes how Open opens a store.
type Option func(*options)

type options struct {
	blobs      archive.Blobs
	noMemIndex bool
	readOnly   bool
}

// WithBlobs keeps the store's archive segments in b instead of the files
// of ArchiveRoot(path): another folder, a table of a server database, or
// an in-memory Blobs in tests. The store then reads and writes segments
// only through b.
func WithBlobs(b archive.Blobs) Option {
	return func(o *options) { o.blobs = b }
}

// Open opens the SQLite store at path, creating the file and its parent
// directory if they are missing, and migrates its schema to the newest
// version this build knows (unless the ReadOnly option is given). Its
// archive segments are the files of ArchiveRoot(path) unless an option
// gives other Blobs. It returns an ECONFLICT error if the file's schema is
// newer than that, and an EINVALID error for an empty path, an in-memory
// database name or a URI (a Store needs a file path: its reads and writes
// use separate connections, and it sets the connection options itself).
// A full disk or a read-only file or folder is said so in words (see
// Store.Explain).
func Open(ctx context.Context, path string, opts ...Option) (*Store, error) {
	if path == "" || path == ":memory:" || strings.HasPrefix(path, "file:") {
		return nil, strata.Errorf(strata.EINVALID, "sqlite: path %q: want a file path", path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %s: %w", path, err)
	}
	o := options{}
	for _, opt := range opts {
		opt(&o)
	}
	if o.blobs == nil {
		o.blobs = archive.NewFiles(ArchiveRoot(abs))
	}
	var s *Store
	if o.readOnly {
		s, err = openReadOnly(ctx, path, abs, o)
	} else {
		s, err = openWritable(ctx, path, abs, o)
	}
	if err != nil {
		return nil, explain(err, path, o.readOnly)
	}
	return s, nil
}

// openWritable opens the store at path for reading and writing, creating
// and migrating it as Open says.
func openWritable(ctx context.Context, path, abs string, o options) (*Store, error) {
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return nil, fmt.Errorf("sqlite: creating the directory of %s: %w", path, err)
	}
	if err := checkOrphanArchive(ctx, path, abs, o.blobs); err != nil {
		return nil, err
	}

	common := []string{
		"busy_timeout(" + fmt.Sprint(BusyTimeout.Milliseconds()) + ")",
		"foreign_keys(ON)",
		"synchronous(NORMAL)",
		"temp_store(MEMORY)",
	}
	w, err := sql.Open("sqlite", dsn(abs, append(common, "journal_mode(WAL)", "cache_size(-65536)"), "immediate"))
	if err != nil {
		return nil, fmt.Errorf("sqlite: opening %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)

	s := &Store{path: path, seg: archive.Segments{Blobs: o.blobs}, w: w, text: newTextCodec(minCompressed),
		noMemIndex: o.noMemIndex}
	if err := s.migrate(ctx); err != nil {
		w.Close()
		return nil, err
	}
	if err := s.text.load(ctx, w); err != nil {
		w.Close()
		return nil, fmt.Errorf("sqlite: opening %s: %w", path, err)
	}
	if err := s.loadFTSForm(ctx, w); err != nil {
		w.Close()
		return nil, fmt.Errorf("sqlite: opening %s: %w", path, err)
	}
	if _, err := s.indexCold(ctx); err != nil {
		w.Close()
		return nil, fmt.Errorf("sqlite: opening %s: %w", path, err)
	}

	r, err := sql.Open("sqlite", dsn(abs, append(common, "query_only(ON)", "cache_size(-16384)"), ""))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("sqlite: opening %s: %w", path, err)
	}
	n := max(4, runtime.GOMAXPROCS(0))
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	r.SetConnMaxIdleTime(5 * time.Minute)
	if err := r.PingContext(ctx); err != nil {
		r.Close()
		w.Close()
		return nil, fmt.Errorf("sqlite: opening %s: %w", path, err)
	}
	s.r = r
	return s, nil
}

// ReadOnly opens the store for reading only, as a backup, a snapshot or a
// file on read-only media can be: Open creates, migrates and indexes
// nothing and writes nothing, not even SQLite's -wal and -shm files when
// it cannot (a read-only folder, a full disk). The file must exist and
// have this build's schema: an older one is refused with an ECONFLICT
// error that says to open it writable once (a read-only open cannot
// migrate it, and this build's queries need the newest schema). Every
// write to the store fails with an ECONFLICT error that says it is open
// read-only.
//
// SQLite reads a file in WAL mode through its -shm file. Where that
// cannot be created and the file has no write-ahead log to replay (it was
// closed cleanly), the store opens it as immutable: SQLite then takes no
// locks, so another process writing to it meanwhile is not seen, and can
// make a read fail. Where the -wal file holds changes but no -shm can be
// made beside it, Open fails and says so: copy the files to a writable
// folder.
func ReadOnly() Option {
	return func(o *options) { o.readOnly = true }
}

// ReadOnly reports whether the store was opened with the ReadOnly option.
func (s *Store) ReadOnly() bool { return s.readOnly }

// openReadOnly opens the store at path as ReadOnly says.
func openReadOnly(ctx context.Context, path, abs string, o options) (*Store, error) {
	if _, err := os.Stat(abs); errors.Is(err, os.ErrNotExist) {
		return nil, strata.Errorf(strata.ENOTFOUND, "sqlite: %s does not exist (a read-only open creates nothing)", path)
	} else if err != nil {
		return nil, fmt.Errorf("sqlite: %s: %w", path, err)
	}
	pragmas := []string{
		"busy_timeout(" + fmt.Sprint(BusyTimeout.Milliseconds()) + ")",
		"temp_store(MEMORY)",
		"query_only(ON)",
		"cache_size(-16384)",
	}
	r, err := openReader(ctx, path, abs, pragmas)
	if err != nil {
		return nil, err
	}
	s := &Store{path: path, seg: archive.Segments{Blobs: o.blobs}, r: r, text: newTextCodec(minCompressed),
		noMemIndex: o.noMemIndex, readOnly: true,
		w: sql.OpenDB(refuseWrites{path: path})}
	fail := func(err error) (*Store, error) {
		s.Close()
		return nil, err
	}
	var tables int
	if err := r.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name = 'schema_migrations'`).Scan(&tables); err != nil {
		return fail(fmt.Errorf("sqlite: opening %s: %w", path, err))
	}
	if tables == 0 {
		return fail(strata.Errorf(strata.EINVALID, "sqlite: %s is not a strata store (it has no schema_migrations table)", path))
	}
	if err := r.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&s.from); err != nil {
		return fail(fmt.Errorf("sqlite: opening %s: %w", path, err))
	}
	switch {
	case s.from > SchemaVersion():
		return fail(strata.Errorf(strata.ECONFLICT,
			"sqlite: %s has schema version %d, newer than this build of strata knows (%d); use a newer strata",
			path, s.from, SchemaVersion()))
	case s.from < SchemaVersion():
		return fail(strata.Errorf(strata.ECONFLICT,
			"sqlite: %s has schema version %d, older than this build's %d, and a read-only open does not migrate it: "+
				"open it writable once (strata migrate --db %s) on a copy that can be written, then read it",
			path, s.from, SchemaVersion(), path))
	}
	if err := s.text.load(ctx, r); err != nil {
		return fail(fmt.Errorf("sqlite: opening %s: %w", path, err))
	}
	if err := s.loadFTSForm(ctx, r); err != nil {
		return fail(fmt.Errorf("sqlite: opening %s: %w", path, err))
	}
	return s, nil
}

// openReader opens the read-only connections of a ReadOnly store: mode=ro
// if SQLite can open the file so (it needs to create or map the -shm
// file beside it), else immutable if the file has no write-ahead log that
// would be ignored.
func openReader(ctx context.Context, path, abs string, pragmas []string) (*sql.DB, error) {
	try := func(params ...string) (*sql.DB, error) {
		r, err := sql.Open("sqlite", dsn(abs, pragmas, "", params...))
		if err != nil {
			return nil, err
		}
		n := max(4, runtime.GOMAXPROCS(0))
		r.SetMaxOpenConns(n)
		r.SetMaxIdleConns(n)
		r.SetConnMaxIdleTime(5 * time.Minute)
		// Reading the schema opens the -wal and -shm files if there are
		// any: a ping alone opens only the database file.
		var objects int
		if err := r.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master`).Scan(&objects); err != nil {
			r.Close()
			return nil, err
		}
		return r, nil
	}
	r, err := try("mode=ro")
	if err == nil {
		return r, nil
	}
	if !cannotOpen(err) {
		return nil, fmt.Errorf("sqlite: opening %s read-only: %w", path, err)
	}
	if st, serr := os.Stat(abs + "-wal"); serr == nil && st.Size() > 0 {
		return nil, &storageError{kind: "read-only", err: fmt.Errorf("sqlite: cannot open %s read-only: its write-ahead log %s-wal "+
			"holds changes, which SQLite reads only through a %s-shm file it cannot create or open here "+
			"(the folder is read-only or the disk is full); copy the files to a writable folder and open the copy: %w",
			path, path, path, err)}
	}
	r, err2 := try("mode=ro", "immutable=1")
	if err2 != nil {
		return nil, fmt.Errorf("sqlite: opening %s read-only: %w", path, errors.Join(err, err2))
	}
	return r, nil
}

// refuseWrites is the write pool of a ReadOnly store: it never connects,
// so every write fails with an error that says why.
type refuseWrites struct{ path string }

func (c refuseWrites) Connect(context.Context) (driver.Conn, error) { return nil, c.err() }
func (c refuseWrites) Driver() driver.Driver                        { return c }
func (c refuseWrites) Open(string) (driver.Conn, error)             { return nil, c.err() }

func (c refuseWrites) err() error {
	return strata.Errorf(strata.ECONFLICT, "sqlite: %s is open read-only: it cannot be changed "+
		"(open it without the read-only option to write)", c.path)
}

// checkOrphanArchive refuses to start a new store (a missing or empty
// file) over the archive segments of an earlier one: those segments are
// the raw content of cold spans, which only the lost file indexes, and a
// new store would write its own segments at the same keys (one per
// conversation and month), mixing or replacing them. A warning would go
// unseen by a program that opens the store, so it is an ECONFLICT error
// and the user decides: restore the file from a backup, or move the
// archive folder away.
func checkOrphanArchive(ctx context.Context, path, abs string, blobs archive.Blobs) error {
	if st, err := os.Stat(abs); err == nil && st.Size() > 0 {
		return nil
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("sqlite: %s: %w", path, err)
	}
	if st, err := os.Stat(abs + "-wal"); err == nil && st.Size() > 0 {
		return nil // a store never checkpointed: SQLite recovers it from its log
	}
	root := blobs.Locate("")
	keys, err := blobs.List(ctx, "")
	if err != nil {
		return fmt.Errorf("sqlite: %s: reading the archive %s: %w", path, root, err)
	}
	if len(keys) == 0 {
		return nil
	}
	state := "is empty (0 bytes)"
	if _, err := os.Stat(abs); err != nil {
		state = "does not exist"
	}
	return strata.Errorf(strata.ECONFLICT, "sqlite: %s %s, but %s holds archive segments of a store (%s): "+
		"refusing to start a new store over them; restore the database file from a backup, "+
		"or move that folder away to start afresh", path, state, root, pathpkg.Base(keys[0]))
}

// dsn builds a modernc.org/sqlite data source name for the file at abs: a
// file: URI (so any character in the path is safe) with the driver's
// _pragma and _txlock parameters.
func dsn(abs string, pragmas []string, txlock string, params ...string) string {
	p := filepath.ToSlash(abs)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // Windows: C:/x becomes /C:/x
	}
	q := url.Values{}
	for _, pr := range pragmas {
		q.Add("_pragma", pr)
	}
	if txlock != "" {
		q.Set("_txlock", txlock)
	}
	for _, p := range params {
		k, v, _ := strings.Cut(p, "=")
		q.Set(k, v)
	}
	return "file:" + (&url.URL{Path: p}).EscapedPath() + "?" + q.Encode()
}

// ArchiveRoot is the folder that holds the archive segments of the store
// at path: archive/ beside the file, in a folder named after the file (so
// that two stores in one folder never share segments).
func ArchiveRoot(path string) string {
	base := filepath.Base(path)
	return filepath.Join(filepath.Dir(path), "archive", strings.TrimSuffix(base, filepath.Ext(base)))
}

// Path returns the path the store was opened with.
func (s *Store) Path() string { return s.path }

// Close closes the store's connections. The last one to close checkpoints
// the write-ahead log into the database file.
func (s *Store) Close() error {
	var errs []error
	if s.r != nil {
		errs = append(errs, s.r.Close())
	}
	errs = append(errs, s.w.Close())
	return errors.Join(errs...)
}

// Stats reports counts and bytes on disk for the namespace. Bytes is the
// size of the whole file plus its write-ahead log, shared by every
// namespace.
func (s *Store) Stats(ctx context.Context, namespace string) (strata.Stats, error) {
	st := strata.Stats{Location: s.path, Levels: []strata.LevelStats{}}
	var oldest, newest sql.NullInt64
	err := s.r.QueryRowContext(ctx, `
		SELECT count(*), coalesce(sum(turns), 0), coalesce(sum(content_bytes), 0),
		       coalesce(sum(tokens), 0), min(first_time), max(last_time)
		FROM conversations WHERE namespace = ?`, namespace).
		Scan(&st.Conversations, &st.Turns, &st.ContentBytes, &st.TurnTokens, &oldest, &newest)
	if err != nil {
		return strata.Stats{}, fmt.Errorf("sqlite: stats: %w", err)
	}
	st.Oldest, st.Newest = fromNanos(oldest), fromNanos(newest)

	rows, err := s.r.QueryContext(ctx, `
		SELECT n.level, count(*), coalesce(sum(n.tokens), 0), coalesce(sum(n.source_tokens), 0)
		FROM nodes n JOIN conversations c ON c.pk = n.conversation
		WHERE c.namespace = ? GROUP BY n.level ORDER BY n.level`, namespace)
	if err != nil {
		return strata.Stats{}, fmt.Errorf("sqlite: stats: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var l strata.LevelStats
		if err := rows.Scan(&l.Level, &l.Nodes, &l.SummaryTokens, &l.SourceTokens); err != nil {
			return strata.Stats{}, fmt.Errorf("sqlite: stats: %w", err)
		}
		st.Levels = append(st.Levels, l)
		st.SummaryTokens += l.SummaryTokens
	}
	if err := rows.Err(); err != nil {
		return strata.Stats{}, fmt.Errorf("sqlite: stats: %w", err)
	}
	rows.Close()

	st.PerConversation = []strata.ConversationStats{}
	crows, err := s.r.QueryContext(ctx, `
		SELECT c.id, c.turns, c.sessions, c.content_bytes, c.tokens,
		       (SELECT coalesce(sum(n.tokens), 0) FROM nodes n WHERE n.conversation = c.pk)
		FROM conversations c WHERE c.namespace = ? ORDER BY c.id`, namespace)
	if err != nil {
		return strata.Stats{}, fmt.Errorf("sqlite: stats: %w", err)
	}
	defer crows.Close()
	for crows.Next() {
		var c strata.ConversationStats
		if err := crows.Scan(&c.ID, &c.Turns, &c.Sessions, &c.ContentBytes, &c.TurnTokens, &c.SummaryTokens); err != nil {
			return strata.Stats{}, fmt.Errorf("sqlite: stats: %w", err)
		}
		st.PerConversation = append(st.PerConversation, c)
	}
	if err := crows.Err(); err != nil {
		return strata.Stats{}, fmt.Errorf("sqlite: stats: %w", err)
	}
	crows.Close()
	if err := s.tierStats(ctx, namespace, &st); err != nil {
		return strata.Stats{}, err
	}

	for _, p := range []string{s.path, s.path + "-wal"} {
		if fi, err := os.Stat(p); err == nil {
			st.Bytes += fi.Size()
		}
	}
	ab, err := s.archiveBytes(ctx)
	if err != nil {
		return strata.Stats{}, fmt.Errorf("sqlite: stats: %w", err)
	}
	st.Bytes += ab
	var free, page int64
	if err := s.r.QueryRowContext(ctx, `SELECT freelist_count, page_size FROM pragma_freelist_count, pragma_page_size`).
		Scan(&free, &page); err != nil {
		return strata.Stats{}, fmt.Errorf("sqlite: stats: %w", err)
	}
	st.FreeBytes = free * page
	return st, nil
}

// toNanos returns t as unix nanoseconds, or NULL for the zero time. Times
// outside the range of int64 nanoseconds (years 1678 to 2262) are EINVALID.
func toNanos(t time.Time, field string) (any, error) {
	if t.IsZero() {
		return nil, nil
	}
	if t.Before(minTime) || t.After(maxTime) {
		return nil, strata.Errorf(strata.EINVALID, "%s: %s is outside the storable range (years 1678 to 2262)", field, t.Format(time.RFC3339))
	}
	return t.UnixNano(), nil
}

var (
	minTime = time.Unix(0, -1<<63)
	maxTime = time.Unix(0, 1<<63-1)
)

// fromNanos is the inverse of toNanos; times come back in UTC.
func fromNanos(n sql.NullInt64) time.Time {
	if !n.Valid {
		return time.Time{}
	}
	return time.Unix(0, n.Int64).UTC()
}

// nullString returns s, or NULL if it is empty.
func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}
