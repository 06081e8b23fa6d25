// Package postgres is a strata.Store in a PostgreSQL database, for
// memory shared by several processes and machines.
//
// It needs PostgreSQL 15 or newer with the pgvector and unaccent
// extensions available (Migrate creates a missing one in public, which
// takes a role allowed to; create them beforehand otherwise, in any
// schema). Its tables live in the first schema of the connection's
// search_path, so one database can hold several stores, one per schema;
// the extensions, shared by all of them, live outside every store's
// schema, and each store's connections search its own schema and the
// extensions' whatever the search_path they were given.
//
// Full-text search runs on tsvector columns with GIN indexes over text
// split into words by package textseg, as the sqlite store splits it, so
// that scripts written without spaces are found by any substring; ranks
// come from ts_rank, not BM25. Vectors are pgvector columns; ranking by
// vector stays in the engine's in-process index, which reads them with
// Vectors.
//
// Storage tiers are those of the sqlite store, in the formats of package
// spanfmt: a warm span's turns are a block on its node, a cold span's are
// records of archive segments kept in the archive table (Blobs), so that
// every process reads the same archive. Each move is one transaction
// under the conversation's row lock.
package postgres

import (
	"context"
	"crypto/rand"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	pgxvec "github.com/pgvector/pgvector-go/pgx"

	"github.com/strata-memory/strata"
)

// Store is a strata.Store in a PostgreSQL database. It is safe for
// concurrent use by multiple goroutines and by several processes sharing
// the database.
type Store struct {
	pool     *pgxpool.Pool
	location string // the DSN without its password
	archive  string // the archive table, schema-qualified, for messages
}

var _ strata.Store = (*Store)(nil)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one step of the schema, from migrations/NNNN_name.sql. A
// step, once released, is never edited: changes are new files.
type migration struct {
	version int
	name    string
	sql     string
	// then, if not nil, runs after sql in the same transaction: the part
	// of a step that only Go can do.
	then func(ctx context.Context, tx pgx.Tx) error
}

// goSteps are the Go parts of the steps that have one, by version.
var goSteps = map[int]func(ctx context.Context, tx pgx.Tx) error{
	9: fillTurnSums,
}

var migrationName = regexp.MustCompile(`^(\d{4})_([a-z0-9_]+)\.sql$`)

// loadMigrations reads the embedded steps in version order; their numbers
// must run 1, 2, 3... without a gap.
func loadMigrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, e := range entries {
		m := migrationName.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("migrations/%s: want a name like 0001_initial.sql", e.Name())
		}
		b, err := migrationFiles.ReadFile("migrations/" + e.Name())
		if err != nil {
			return nil, err
		}
		v, _ := strconv.Atoi(m[1])
		out = append(out, migration{version: v, name: strings.ReplaceAll(m[2], "_", " "), sql: string(b), then: goSteps[v]})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	for i, m := range out {
		if m.version != i+1 {
			return nil, fmt.Errorf("migrations: version %d follows version %d", m.version, i)
		}
	}
	return out, nil
}

var migrations = func() []migration {
	m, err := loadMigrations()
	if err != nil {
		panic("postgres: " + err.Error()) // the embedded files are part of the build
	}
	return m
}()

// SchemaVersion is the newest schema version this build knows.
func SchemaVersion() int { return migrations[len(migrations)-1].version }

// migrateLock is the key of the advisory lock that serializes migrations
// of one schema (hashed with the schema's name).
const migrateLock = "strata migrate "

// Migrate brings the schema of the database at dsn up to SchemaVersion
// and returns the versions before and after. Pending steps are applied in
// one transaction under an advisory lock, so that several processes
// starting at once migrate it once, and a failed step leaves the schema
// as it was. A schema newer than this build is ECONFLICT.
//
// The store's schema is the first of the connection's search_path that
// exists. The extensions the schema needs are created in public if the
// database has none of them, and left where they are otherwise; the
// steps run with the store's schema, the extensions' and public as their
// search_path, whatever the DSN's.
func Migrate(ctx context.Context, dsn string) (from, to int, err error) {
	from, to, _, err = migrateAt(ctx, dsn)
	return from, to, err
}

// migrateAt is Migrate that returns, as well, the search_path the store's
// connections are to use.
func migrateAt(ctx context.Context, dsn string) (from, to int, path string, err error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return 0, 0, "", strata.Errorf(strata.EINVALID, "postgres: %v", err)
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return 0, 0, "", fmt.Errorf("postgres: connecting to %s: %w", Redact(dsn), err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	return migrate(ctx, conn, Redact(dsn))
}

// extensions are the extensions the schema uses. They belong to the
// database: one copy serves every store in it.
var extensions = []string{"vector", "unaccent"}

// extensionsLock is the key of the advisory lock that serializes, across
// the stores of one database, the creation and moves of extensions.
const extensionsLock = "strata extensions"

func migrate(ctx context.Context, conn *pgx.Conn, where string) (from, to int, path string, err error) {
	fail := func(err error) (int, int, string, error) {
		if strata.ErrorCode(err) != strata.EINTERNAL {
			return 0, 0, "", err
		}
		return 0, 0, "", fmt.Errorf("postgres: migrating %s: %w", where, err)
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		return fail(err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1 || current_schema(), 0))`, migrateLock); err != nil {
		return fail(err)
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version integer PRIMARY KEY,
		name    text    NOT NULL,
		applied bigint  NOT NULL -- unix nanoseconds
	)`); err != nil {
		return fail(err)
	}
	if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&from); err != nil {
		return fail(err)
	}
	if from > SchemaVersion() {
		return 0, 0, "", strata.Errorf(strata.ECONFLICT,
			"postgres: %s has schema version %d, newer than this build of strata knows (%d); use a newer strata",
			where, from, SchemaVersion())
	}
	var schema string
	if err := tx.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		return fail(err)
	}
	if from < SchemaVersion() {
		// Creating an extension, and step 8's moves, are serialized with
		// the other stores of the database doing the same.
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, extensionsLock); err != nil {
			return fail(err)
		}
		if err := createExtensions(ctx, tx); err != nil {
			return fail(err)
		}
		// The steps find the extensions' types and dictionaries through
		// the search_path: the extensions' schemas, wherever they are,
		// and public, where step 8 moves those it finds in a store's
		// schema.
		p, err := searchPath(ctx, tx, schema, true)
		if err != nil {
			return fail(err)
		}
		if _, err := tx.Exec(ctx, `SELECT set_config('search_path', $1, true)`, p); err != nil {
			return fail(err)
		}
	}
	for _, m := range migrations[from:] {
		if _, err := tx.Exec(ctx, m.sql); err != nil {
			return fail(fmt.Errorf("version %d (%s): %w%s", m.version, m.name, err, hint(err)))
		}
		if m.then != nil {
			if err := m.then(ctx, tx); err != nil {
				return fail(fmt.Errorf("version %d (%s): %w", m.version, m.name, err))
			}
		}
		if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name, applied) VALUES ($1, $2, $3)`,
			m.version, m.name, time.Now().UnixNano()); err != nil {
			return fail(err)
		}
	}
	if path, err = searchPath(ctx, tx, schema, false); err != nil {
		return fail(err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fail(err)
	}
	return from, SchemaVersion(), path, nil
}

// createExtensions creates in public each extension the database lacks.
// One it has stays in its schema, whichever: a database's owner may keep
// its extensions in a schema of their own.
func createExtensions(ctx context.Context, tx pgx.Tx) error {
	for _, e := range extensions {
		var have bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_extension WHERE extname = $1)`, e).Scan(&have); err != nil {
			return err
		}
		if have {
			continue
		}
		if _, err := tx.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS `+pgx.Identifier{e}.Sanitize()+` SCHEMA public`); err != nil {
			return fmt.Errorf("creating extension %s in schema public: %w%s", e, err, hint(err))
		}
	}
	return nil
}

// searchPath returns the search_path of a store in schema: the schema,
// then the schemas of the extensions (the database's, not the caller's
// search_path, says where they are), then, with public, the schema
// public if it exists. A store's objects are found through it whatever
// search_path its DSN gives.
func searchPath(ctx context.Context, q querier, schema string, public bool) (string, error) {
	rows, err := q.Query(ctx, `SELECT n.nspname::text FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
		WHERE e.extname = ANY($1) ORDER BY e.extname`, extensions)
	if err != nil {
		return "", err
	}
	schemas, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return "", err
	}
	if public {
		var ok bool
		if err := q.QueryRow(ctx, `SELECT to_regnamespace('public') IS NOT NULL`).Scan(&ok); err != nil {
			return "", err
		}
		if ok {
			schemas = append(schemas, "public")
		}
	}
	path := []string{pgx.Identifier{schema}.Sanitize()}
	seen := map[string]bool{schema: true}
	for _, s := range schemas {
		if !seen[s] {
			seen[s] = true
			path = append(path, pgx.Identifier{s}.Sanitize())
		}
	}
	return strings.Join(path, ", "), nil
}

// hint explains the errors a new database commonly gives.
func hint(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "42501" && strings.Contains(pe.Message, "extension") {
		return " (a superuser can create the extensions once: CREATE EXTENSION vector SCHEMA public; CREATE EXTENSION unaccent SCHEMA public)"
	}
	if errors.As(err, &pe) && pe.Code == "3F000" {
		return " (create the schema first, or the extensions yourself in a schema of your choice)"
	}
	if errors.As(err, &pe) && pe.Code == "0A000" && strings.Contains(pe.Message, "vector") {
		return " (pgvector is not installed on the server)"
	}
	return ""
}

// Open connects to the PostgreSQL database at dsn (a postgres:// URL or
// key=value string, as libpq takes), migrates its schema to the newest
// version this build knows, and returns the store. ECONFLICT if the
// schema is newer than that; EINVALID for a DSN that does not parse.
func Open(ctx context.Context, dsn string) (*Store, error) {
	_, _, path, err := migrateAt(ctx, dsn)
	if err != nil {
		return nil, err
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, strata.Errorf(strata.EINVALID, "postgres: %v", err)
	}
	// The store's schema first, then the extensions': the DSN's
	// search_path need not name the extensions' schema, and another
	// schema it names must not stand in for the store's tables.
	cfg.ConnConfig.RuntimeParams["search_path"] = path
	cfg.AfterConnect = func(ctx context.Context, conn *pgx.Conn) error {
		return pgxvec.RegisterTypes(ctx, conn)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: connecting to %s: %w", Redact(dsn), err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: connecting to %s: %w", Redact(dsn), err)
	}
	var schema string
	if err := pool.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: connecting to %s: %w", Redact(dsn), err)
	}
	s := &Store{pool: pool, location: Redact(dsn), archive: schema + ".archive"}
	if err := s.indexCold(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return s, nil
}

// Version returns the schema version of the store's database.
func (s *Store) Version(ctx context.Context) (int, error) {
	var v int
	if err := s.pool.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("postgres: schema version: %w", err)
	}
	return v, nil
}

// Location returns where the store is: its DSN without the password.
func (s *Store) Location() string { return s.location }

// Close closes the store's connections.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

// Redact returns dsn with its password masked, for messages and logs.
func Redact(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.Scheme != "" {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
		return u.String()
	}
	return regexp.MustCompile(`(?i)(password\s*=\s*)('(\\'|[^'])*'|\S+)`).ReplaceAllString(dsn, "${1}xxxxx")
}

// tx runs fn in a transaction, committing if it returns nil.
func (s *Store) tx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, s.pool, fn)
}

// readTx runs fn in a read-only transaction that sees one snapshot.
func (s *Store) readTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, fn)
}

// querier is what the pool and a transaction have in common.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// toNanos returns t as unix nanoseconds, or NULL for the zero time. Times
// outside the range of int64 nanoseconds (years 1678 to 2262) are EINVALID.
func toNanos(t time.Time, field string) (*int64, error) {
	if t.IsZero() {
		return nil, nil
	}
	if t.Before(minTime) || t.After(maxTime) {
		return nil, strata.Errorf(strata.EINVALID, "%s: %s is outside the storable range (years 1678 to 2262)", field, t.Format(time.RFC3339))
	}
	n := t.UnixNano()
	return &n, nil
}

var (
	minTime = time.Unix(0, -1<<63)
	maxTime = time.Unix(0, 1<<63-1)
)

// fromNanos is the inverse of toNanos; times come back in UTC.
func fromNanos(n *int64) time.Time {
	if n == nil {
		return time.Time{}
	}
	return time.Unix(0, *n).UTC()
}

// nullString returns s, or NULL if it is empty.
func nullString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// notFound is the error for a missing conversation.
func notFound(namespace, id string) error {
	return strata.Errorf(strata.ENOTFOUND, "conversation %q not found in namespace %q", id, namespace)
}

// conversationPK returns the key of a conversation, ENOTFOUND if it does
// not exist. With lock, the row is locked until the transaction ends: the
// writes to one conversation take their turns.
func conversationPK(ctx context.Context, q querier, namespace, id string, lock bool) (int64, error) {
	sql := `SELECT pk FROM conversations WHERE namespace = $1 AND id = $2`
	if lock {
		sql += ` FOR UPDATE`
	}
	var pk int64
	err := q.QueryRow(ctx, sql, namespace, id).Scan(&pk)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, notFound(namespace, id)
	}
	if err != nil {
		return 0, fmt.Errorf("postgres: conversation %q: %w", id, err)
	}
	return pk, nil
}

// wrap returns err as is if it is coded, wrapped with what otherwise.
func wrap(what string, err error) error {
	if err == nil || strata.ErrorCode(err) != strata.EINTERNAL {
		return err
	}
	return fmt.Errorf("postgres: %s: %w", what, err)
}

// OpenScratch opens a store in a new schema of the database at dsn, named
// prefix and a random suffix, for a measure or a test that must not touch
// the database's own store; drop removes the schema and everything in it.
func OpenScratch(ctx context.Context, dsn, prefix string) (st *Store, drop func(), err error) {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, nil, err
	}
	schema := prefix + "_" + hex.EncodeToString(b[:])
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, nil, fmt.Errorf("postgres: connecting to %s: %w", Redact(dsn), err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, `CREATE SCHEMA `+pgx.Identifier{schema}.Sanitize()); err != nil {
		return nil, nil, fmt.Errorf("postgres: creating schema %s: %w", schema, err)
	}
	drop = func() {
		c, err := pgx.Connect(context.Background(), dsn)
		if err != nil {
			return
		}
		defer c.Close(context.Background())
		c.Exec(context.Background(), `DROP SCHEMA `+pgx.Identifier{schema}.Sanitize()+` CASCADE`)
	}
	// The schema first on the search path, public after it for the
	// extensions' types and functions.
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme == "" {
		drop()
		return nil, nil, strata.Errorf(strata.EINVALID, "postgres: a scratch store needs a postgres:// URL")
	}
	q := u.Query()
	q.Set("search_path", schema+",public")
	u.RawQuery = q.Encode()
	st, err = Open(ctx, u.String())
	if err != nil {
		drop()
		return nil, nil, err
	}
	return st, drop, nil
}
