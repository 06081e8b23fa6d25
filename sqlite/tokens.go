package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/strata-memory/strata"
)

var _ strata.TokenStore = (*Store)(nil)

const tokenCols = `id, hash, namespace, label, created, revoked`

func scanToken(row interface{ Scan(...any) error }) (strata.Token, error) {
	var t strata.Token
	var created int64
	var revoked sql.NullInt64
	if err := row.Scan(&t.ID, &t.Hash, &t.Namespace, &t.Label, &created, &revoked); err != nil {
		return t, err
	}
	t.Created = time.Unix(0, created).UTC()
	if revoked.Valid {
		t.Revoked = time.Unix(0, revoked.Int64).UTC()
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
	_, err = s.w.ExecContext(ctx, `INSERT INTO tokens (id, hash, namespace, label, created) VALUES (?, ?, ?, ?, ?)`,
		t.ID, t.Hash, t.Namespace, t.Label, created)
	if err != nil && strings.Contains(err.Error(), "UNIQUE") {
		return strata.Errorf(strata.ECONFLICT, "token %s: its id or secret is taken", t.ID)
	}
	if err != nil {
		return fmt.Errorf("sqlite: storing token %s: %w", t.ID, err)
	}
	return nil
}

// TokenByHash returns the token of a secret's hash; see strata.TokenStore.
func (s *Store) TokenByHash(ctx context.Context, hash string) (strata.Token, error) {
	t, err := scanToken(s.r.QueryRowContext(ctx, `SELECT `+tokenCols+` FROM tokens WHERE hash = ?`, hash))
	if errors.Is(err, sql.ErrNoRows) {
		return t, strata.Errorf(strata.ENOTFOUND, "no such token")
	}
	if err != nil {
		return t, fmt.Errorf("sqlite: looking up a token: %w", err)
	}
	return t, nil
}

// Tokens lists tokens; see strata.TokenStore.
func (s *Store) Tokens(ctx context.Context, namespace string) ([]strata.Token, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+tokenCols+` FROM tokens WHERE ? = '' OR namespace = ? ORDER BY pk`, namespace, namespace)
	if err != nil {
		return nil, fmt.Errorf("sqlite: listing tokens: %w", err)
	}
	defer rows.Close()
	var out []strata.Token
	for rows.Next() {
		t, err := scanToken(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: listing tokens: %w", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: listing tokens: %w", err)
	}
	return out, nil
}

// RevokeToken revokes a token; see strata.TokenStore.
func (s *Store) RevokeToken(ctx context.Context, id string, at time.Time) (strata.Token, error) {
	nanos, err := toNanos(at, "revocation time")
	if err != nil {
		return strata.Token{}, err
	}
	t, err := scanToken(s.w.QueryRowContext(ctx, `UPDATE tokens SET revoked = coalesce(revoked, ?) WHERE id = ?
		RETURNING `+tokenCols, nanos, id))
	if errors.Is(err, sql.ErrNoRows) {
		return t, strata.Errorf(strata.ENOTFOUND, "token %q not found", id)
	}
	if err != nil {
		return t, fmt.Errorf("sqlite: revoking token %s: %w", id, err)
	}
	return t, nil
}
