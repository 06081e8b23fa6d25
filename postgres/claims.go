package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/strata-memory/strata"
)

var _ strata.ClaimStore = (*Store)(nil)

// Claim takes or renews a claim; see strata.ClaimStore. One statement
// inserts the key, or updates it only when the claim is the holder's or
// has ended: of two servers racing for a key, the second waits on the
// first's row lock and then finds its claim.
func (s *Store) Claim(ctx context.Context, key, holder string, now, until time.Time) (bool, error) {
	if err := strata.CheckClaim(key, holder, now, until); err != nil {
		return false, err
	}
	n, err := toNanos(now, "claim now")
	if err != nil {
		return false, err
	}
	u, err := toNanos(until, "claim until")
	if err != nil {
		return false, err
	}
	var got []byte
	err = s.pool.QueryRow(ctx, `INSERT INTO claims (unit, holder, since, until) VALUES ($1, $2, $3, $4)
		ON CONFLICT (unit) DO UPDATE SET
			since = CASE WHEN claims.holder = excluded.holder THEN claims.since ELSE excluded.since END,
			holder = excluded.holder, until = excluded.until
		WHERE claims.holder = excluded.holder OR claims.until <= $3
		RETURNING holder`, []byte(key), []byte(holder), *n, *u).Scan(&got)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil // another holder's claim lasts
	}
	if err != nil {
		return false, fmt.Errorf("postgres: claiming %q: %w", key, err)
	}
	return string(got) == holder, nil
}

// Release ends holder's claim on key; see strata.ClaimStore.
func (s *Store) Release(ctx context.Context, key, holder string) error {
	if key == "" || holder == "" {
		return strata.Errorf(strata.EINVALID, "release: key and holder are required (key %q, holder %q)", key, holder)
	}
	if _, err := s.pool.Exec(ctx, `DELETE FROM claims WHERE unit = $1 AND holder = $2`, []byte(key), []byte(holder)); err != nil {
		return fmt.Errorf("postgres: releasing %q: %w", key, err)
	}
	return nil
}
