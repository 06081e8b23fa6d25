package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/strata-memory/strata"
)

var _ strata.WatchStore = (*Store)(nil)

// WatchState returns how far a watch has read the file path, zero if no
// state was saved; see strata.WatchStore.
func (s *Store) WatchState(ctx context.Context, namespace, path string) (strata.WatchState, error) {
	var st strata.WatchState
	var updated int64
	err := s.r.QueryRowContext(ctx, `SELECT byte_offset, lines, head_len, head, updated FROM watch_state
		WHERE namespace = ? AND path = ?`, namespace, []byte(path)).
		Scan(&st.Offset, &st.Lines, &st.HeadLen, &st.Head, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return strata.WatchState{}, nil
	}
	if err != nil {
		return st, fmt.Errorf("sqlite: watch state of %q: %w", path, err)
	}
	st.Updated = time.Unix(0, updated).UTC()
	return st, nil
}

// SaveWatchState replaces the watch state of (namespace, path); see
// strata.WatchStore.
func (s *Store) SaveWatchState(ctx context.Context, namespace, path string, st strata.WatchState) error {
	if err := strata.CheckWatchState(path, st); err != nil {
		return err
	}
	updated, err := toNanos(st.Updated, "watch state: updated")
	if err != nil {
		return err
	}
	if updated == nil {
		updated = time.Now().UnixNano()
	}
	if _, err := s.w.ExecContext(ctx, `INSERT INTO watch_state (namespace, path, byte_offset, lines, head_len, head, updated)
		VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (namespace, path) DO UPDATE SET byte_offset = excluded.byte_offset, lines = excluded.lines,
		head_len = excluded.head_len, head = excluded.head, updated = excluded.updated`,
		namespace, []byte(path), st.Offset, st.Lines, st.HeadLen, st.Head, updated); err != nil {
		return fmt.Errorf("sqlite: save watch state of %q: %w", path, err)
	}
	return nil
}

// WatchStates returns the namespace's watch states by path; see
// strata.WatchStore.
func (s *Store) WatchStates(ctx context.Context, namespace string) ([]strata.WatchFile, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT path, byte_offset, lines, head_len, head, updated FROM watch_state
		WHERE namespace = ? ORDER BY path`, namespace)
	if err != nil {
		return nil, fmt.Errorf("sqlite: watch states: %w", err)
	}
	defer rows.Close()
	out := []strata.WatchFile{}
	for rows.Next() {
		var f strata.WatchFile
		var path []byte
		var updated int64
		if err := rows.Scan(&path, &f.Offset, &f.Lines, &f.HeadLen, &f.Head, &updated); err != nil {
			return nil, fmt.Errorf("sqlite: watch states: %w", err)
		}
		f.Path, f.Updated = string(path), time.Unix(0, updated).UTC()
		out = append(out, f)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: watch states: %w", err)
	}
	return out, nil
}
