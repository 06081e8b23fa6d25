package postgres

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/strata-memory/strata/archive"
)

// Blobs is an archive.Blobs in the store's archive table: each blob is a
// row, its key the primary key and its bytes a bytea, so that every
// process sharing the database reads the same archive segments.
//
// A Blobs is bound either to the store's connection pool (Store.Blobs),
// where each write is a transaction of its own, committed before Put
// returns; or, inside the store, to a transaction, where a write becomes
// durable and visible to others when that transaction commits, together
// with the rows that point at it. Put writes the row, reads it back in
// the same transaction and calls the check on what it read, under a
// savepoint that a failed check rolls back, so the old blob stays.
type Blobs struct {
	db    blobDB
	table string // for messages: the schema-qualified table name
}

// blobDB is what the pool and a transaction offer a Blobs: statements, and
// a nested transaction (a transaction of the pool, a savepoint of a
// transaction).
type blobDB interface {
	querier
	Begin(ctx context.Context) (pgx.Tx, error)
}

var _ archive.Blobs = (*Blobs)(nil)

// Blobs returns the archive segments of the store as an archive.Blobs
// over its connection pool, for reading them, or writing them where no
// server uses the store: its writes do not take the conversations' row
// locks that the store's own moves take.
func (s *Store) Blobs() *Blobs { return &Blobs{db: s.pool, table: s.archive} }

// blobsIn returns the store's archive bound to tx.
func (s *Store) blobsIn(tx pgx.Tx) *Blobs { return &Blobs{db: tx, table: s.archive} }

// segmentsIn returns the store's archive segments read and written in tx.
func (s *Store) segmentsIn(tx pgx.Tx) archive.Segments { return archive.Segments{Blobs: s.blobsIn(tx)} }

// notExist is the error for a missing blob.
func (b *Blobs) notExist(op, key string) error {
	return &fs.PathError{Op: op, Path: b.Locate(key), Err: fs.ErrNotExist}
}

// Get returns the content of the blob at key.
func (b *Blobs) Get(ctx context.Context, key string) ([]byte, error) {
	var data []byte
	err := b.db.QueryRow(ctx, `SELECT data FROM archive WHERE key = $1`, key).Scan(&data)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, b.notExist("get", key)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: reading %s: %w", b.Locate(key), err)
	}
	if data == nil {
		data = []byte{}
	}
	return data, nil
}

// Put stores data as the blob at key, replacing any blob there; see
// archive.Blobs. The row is written, read back and checked in one
// transaction (a savepoint of the caller's), which a failed check rolls
// back.
func (b *Blobs) Put(ctx context.Context, key string, data []byte, check func(back []byte) error) error {
	if data == nil {
		data = []byte{} // an empty blob, not NULL
	}
	const upsert = `INSERT INTO archive (key, data, updated) VALUES ($1, $2, $3)
		ON CONFLICT (key) DO UPDATE SET data = excluded.data, updated = excluded.updated`
	now := time.Now().UnixNano()
	if check == nil {
		if _, err := b.db.Exec(ctx, upsert, key, data, now); err != nil {
			return fmt.Errorf("postgres: writing %s: %w", b.Locate(key), err)
		}
		return nil
	}
	err := pgx.BeginFunc(ctx, b.db, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, upsert, key, data, now); err != nil {
			return fmt.Errorf("postgres: writing %s: %w", b.Locate(key), err)
		}
		var back []byte
		if err := tx.QueryRow(ctx, `SELECT data FROM archive WHERE key = $1`, key).Scan(&back); err != nil {
			return fmt.Errorf("postgres: reading %s back: %w", b.Locate(key), err)
		}
		if back == nil {
			back = []byte{}
		}
		if err := check(back); err != nil {
			return fmt.Errorf("postgres: %s: check: %w", b.Locate(key), err)
		}
		return nil
	})
	return err
}

// Delete removes the blob at key.
func (b *Blobs) Delete(ctx context.Context, key string) error {
	tag, err := b.db.Exec(ctx, `DELETE FROM archive WHERE key = $1`, key)
	if err != nil {
		return fmt.Errorf("postgres: deleting %s: %w", b.Locate(key), err)
	}
	if tag.RowsAffected() == 0 {
		return b.notExist("delete", key)
	}
	return nil
}

// DeletePrefix removes every blob whose key starts with prefix.
func (b *Blobs) DeletePrefix(ctx context.Context, prefix string) error {
	where, args := prefixRange(prefix)
	if _, err := b.db.Exec(ctx, `DELETE FROM archive`+where, args...); err != nil {
		return fmt.Errorf("postgres: deleting %s*: %w", b.Locate(prefix), err)
	}
	return nil
}

// Stat returns the size of the blob at key.
func (b *Blobs) Stat(ctx context.Context, key string) (int64, error) {
	var n int64
	err := b.db.QueryRow(ctx, `SELECT octet_length(data) FROM archive WHERE key = $1`, key).Scan(&n)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, b.notExist("stat", key)
	}
	if err != nil {
		return 0, fmt.Errorf("postgres: size of %s: %w", b.Locate(key), err)
	}
	return n, nil
}

// List returns the keys that start with prefix, sorted byte by byte.
func (b *Blobs) List(ctx context.Context, prefix string) ([]string, error) {
	where, args := prefixRange(prefix)
	rows, err := b.db.Query(ctx, `SELECT key FROM archive`+where+` ORDER BY key`, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: listing %s*: %w", b.Locate(prefix), err)
	}
	keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("postgres: listing %s*: %w", b.Locate(prefix), err)
	}
	return keys, nil
}

// Locate names the blob at key for messages: "postgresql:<schema>.archive/<key>".
func (b *Blobs) Locate(key string) string {
	if key == "" {
		return "postgresql:" + b.table
	}
	return "postgresql:" + b.table + "/" + key
}

// prefixRange returns the condition selecting the keys that start with
// prefix as a range of the primary key (keys compare byte by byte): from
// prefix up to, not including, the smallest string above every string that
// starts with it. An empty prefix selects every key.
func prefixRange(prefix string) (string, []any) {
	if prefix == "" {
		return "", nil
	}
	end := []byte(prefix)
	end[len(end)-1]++
	if prefix[len(prefix)-1] >= 0x7f || !utf8.Valid(end) {
		// Keys are ASCII; any other prefix is matched by a scan.
		return ` WHERE starts_with(key, $1)`, []any{prefix}
	}
	return ` WHERE key >= $1 AND key < $2`, []any{prefix, string(end)}
}
