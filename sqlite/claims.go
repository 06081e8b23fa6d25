package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/strata-memory/strata"
)

var _ strata.ClaimStore = (*Store)(nil)

// claimTimes checks a claim's arguments and returns its times in unix
// nanoseconds.
func claimTimes(key, holder string, now, until time.Time) (int64, int64, error) {
	if err := strata.CheckClaim(key, holder, now, until); err != nil {
		return 0, 0, err
	}
	n, err := toNanos(now, "claim now")
	if err != nil {
		return 0, 0, err
	}
	u, err := toNanos(until, "claim until")
	if err != nil {
		return 0, 0, err
	}
	return n.(int64), u.(int64), nil
}

// Claim takes or renews a claim; see strata.ClaimStore. One statement
// inserts the key, or updates it only when the claim is the holder's or
// has ended, so that two processes racing for a key serialize on the
// write lock and the second finds the first's row.
func (s *Store) Claim(ctx context.Context, key, holder string, now, until time.Time) (bool, error) {
	n, u, err := claimTimes(key, holder, now, until)
	if err != nil {
		return false, err
	}
	var got string
	err = s.w.QueryRowContext(ctx, `INSERT INTO claims (unit, holder, since, until) VALUES (?, ?, ?, ?)
		ON CONFLICT (unit) DO UPDATE SET
			since = CASE WHEN claims.holder = excluded.holder THEN claims.since ELSE excluded.since END,
			holder = excluded.holder, until = excluded.until
		WHERE claims.holder = excluded.holder OR claims.until <= ?
		RETURNING holder`, key, holder, n, u, n).Scan(&got)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil // another holder's claim lasts
	}
	if err != nil {
		return false, fmt.Errorf("sqlite: claiming %q: %w", key, err)
	}
	return got == holder, nil
}

// Release ends holder's claim on key; see strata.ClaimStore.
func (s *Store) Release(ctx context.Context, key, holder string) error {
	if key == "" || holder == "" {
		return strata.Errorf(strata.EINVALID, "release: key and holder are required (key %q, holder %q)", key, holder)
	}
	if _, err := s.w.ExecContext(ctx, `DELETE FROM claims WHERE unit = ? AND holder = ?`, key, holder); err != nil {
		return fmt.Errorf("sqlite: releasing %q: %w", key, err)
	}
	return nil
}
