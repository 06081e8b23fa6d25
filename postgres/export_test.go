package postgres

import (
	"context"

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
