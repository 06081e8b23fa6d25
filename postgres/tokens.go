package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/strata-memory/strata"
)

var _ strata.TokenStore = (*Store)(nil)

const tokenCols = `id, hash, namespace, label, created, revoked`

func scanToken(row pgx.Row) (strata.Token, error) {
	var t strata.Token
	var created int64
	var revoked *int64
	if err := row.Scan(&t.ID, &t.Hash, &t.Namespace, &t.Label, &created, &revoked); err != nil {
		return t, err
	}
	t.Created = time.Unix(0, created).UTC()
	if revoked != nil {
		t.Revoked = time.Unix(0, *revoked).UTC()
	}
	return t, nil
}

// PutToken stores a new token; see strata.TokenStore.
func (s *Store) PutToken(ctx context.Context, t strata.Token) error {
	if t.ID == "" || t.Hash == "" || t.Namespace == "" {
		return strata.Errorf(strata.EINVALID, "token: id, hash and namespace are required")
	}
	created, err := toNanos(t.Created, "token created")
	if err != nil {
		return err
	}
	if created == nil {
		return strata.Errorf(strata.EINVALID, "token %s: its creation time is required", t.ID)
	}
	_, err = s.pool.Exec(ctx, `INSERT INTO tokens (id, hash, namespace, label, created) VALUES ($1, $2, $3, $4, $5)`,
		t.ID, t.Hash, t.Namespace, t.Label, *created)
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23505" { // unique_violation
		return strata.Errorf(strata.ECONFLICT, "token %s: its id or secret is taken", t.ID)
	}
	if err != nil {
		return fmt.Errorf("postgres: storing token %s: %w", t.ID, err)
	}
	return nil
}

// TokenByHash returns the token of a secret's hash; see strata.TokenStore.
func (s *Store) TokenByHash(ctx context.Context, hash string) (strata.Token, error) {
	t, err := scanToken(s.pool.QueryRow(ctx, `SELECT `+tokenCols+` FROM tokens WHERE hash = $1`, hash))
	if errors.Is(err, pgx.ErrNoRows) {
		return t, strata.Errorf(strata.ENOTFOUND, "no such token")
	}
	if err != nil {
		return t, fmt.Errorf("postgres: looking up a token: %w", err)
	}
	return t, nil
}

// Tokens lists tokens; see strata.TokenStore.
func (s *Store) Tokens(ctx context.Context, namespace string) ([]strata.Token, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+tokenCols+` FROM tokens WHERE $1 = '' OR namespace = $1 ORDER BY pk`, namespace)
	if err != nil {
		return nil, fmt.Errorf("postgres: listing tokens: %w", err)
	}
	defer rows.Close()
	var out []strata.Token
	for rows.Next() {
		t, err := scanToken(rows)
		if err != nil {
			return nil, fmt.Errorf("postgres: listing tokens: %w", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: listing tokens: %w", err)
	}
	return out, nil
}

// RevokeToken revokes a token; see strata.TokenStore.
func (s *Store) RevokeToken(ctx context.Context, id string, at time.Time) (strata.Token, error) {
	nanos, err := toNanos(at, "revocation time")
	if err != nil {
		return strata.Token{}, err
	}
	if nanos == nil {
		return strata.Token{}, strata.Errorf(strata.EINVALID, "revoking token %s: the time is required", id)
	}
	t, err := scanToken(s.pool.QueryRow(ctx, `UPDATE tokens SET revoked = coalesce(revoked, $1) WHERE id = $2
		RETURNING `+tokenCols, *nanos, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return t, strata.Errorf(strata.ENOTFOUND, "token %q not found", id)
	}
	if err != nil {
		return t, fmt.Errorf("postgres: revoking token %s: %w", id, err)
	}
	return t, nil
}
