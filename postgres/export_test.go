package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/strata-memory/strata/archive"
	"github.com/strata-memory/strata/storetest"
)

// DaySegments returns what storetest.RunDaySegments needs of s to lay
// its archive out as versions before month segments did.
func DaySegments(s *Store) storetest.Legacy {
	return storetest.Legacy{
		Blobs: s.Blobs(),
		SetPeriods: func(ctx context.Context, ns, conv, id string, periods []string) error {
			pk, err := conversationPK(ctx, s.pool, ns, conv, false)
			if err != nil {
				return err
			}
			_, err = s.pool.Exec(ctx, `UPDATE nodes SET segments = $1 WHERE conversation = $2 AND id = $3`, jsonList(periods), pk, id)
			return err
		},
		PutSegment: func(ctx context.Context, ns, conv, period string, info archive.Info) error {
			pk, err := conversationPK(ctx, s.pool, ns, conv, false)
			if err != nil {
				return err
			}
			tx, err := s.pool.Begin(ctx)
			if err != nil {
				return err
			}
			defer tx.Rollback(ctx)
			if err := putSegment(ctx, tx, pk, period, info); err != nil {
				return err
			}
			return tx.Commit(ctx)
		},
		// A move to cold writes its segments in its own transaction: a
		// kill leaves none.
		Orphans: false,
	}
}

// MigrateAsBefore brings the schema at dsn to version to as versions
// before 8 did: each step run as it is, with the connection's search_path,
// so that the extensions the first step creates land in the store's own
// schema.
func MigrateAsBefore(ctx context.Context, dsn string, to int) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE TABLE schema_migrations (
		version integer PRIMARY KEY,
		name    text    NOT NULL,
		applied bigint  NOT NULL
	)`); err != nil {
		return err
	}
	for _, m := range migrations[:to] {
		if _, err := conn.Exec(ctx, m.sql); err != nil {
			return fmt.Errorf("version %d: %w", m.version, err)
		}
		if m.then != nil {
			if err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error { return m.then(ctx, tx) }); err != nil {
				return fmt.Errorf("version %d: %w", m.version, err)
			}
		}
		if _, err := conn.Exec(ctx, `INSERT INTO schema_migrations (version, name, applied) VALUES ($1, $2, 0)`, m.version, m.name); err != nil {
			return err
		}
	}
	return nil
}
