package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/strata-memory/strata"
)

// Stats reports counts for the namespace; see strata.Store. Bytes is the
// size of the store's tables with their indexes and TOAST data (its
// schema's), shared by every namespace; FreeBytes is 0: PostgreSQL reuses
// free space inside its tables itself.
func (s *Store) Stats(ctx context.Context, namespace string) (strata.Stats, error) {
	st := strata.Stats{Location: s.location, Levels: []strata.LevelStats{}, PerConversation: []strata.ConversationStats{}}
	err := s.readTx(ctx, func(tx pgx.Tx) error {
		var oldest, newest *int64
		if err := tx.QueryRow(ctx, `
			SELECT count(*), coalesce(sum(turns), 0), coalesce(sum(content_bytes), 0),
			       coalesce(sum(tokens), 0), min(first_time), max(last_time)
			FROM conversations WHERE namespace = $1`, namespace).
			Scan(&st.Conversations, &st.Turns, &st.ContentBytes, &st.TurnTokens, &oldest, &newest); err != nil {
			return err
		}
		st.Oldest, st.Newest = fromNanos(oldest), fromNanos(newest)

		rows, err := tx.Query(ctx, `
			SELECT n.level, count(*), coalesce(sum(n.tokens), 0), coalesce(sum(n.source_tokens), 0)
			FROM nodes n JOIN conversations c ON c.pk = n.conversation
			WHERE c.namespace = $1 GROUP BY n.level ORDER BY n.level`, namespace)
		if err != nil {
			return err
		}
		for rows.Next() {
			var l strata.LevelStats
			if err := rows.Scan(&l.Level, &l.Nodes, &l.SummaryTokens, &l.SourceTokens); err != nil {
				rows.Close()
				return err
			}
			st.Levels = append(st.Levels, l)
			st.SummaryTokens += l.SummaryTokens
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}

		rows, err = tx.Query(ctx, `
			SELECT c.id, c.turns, c.sessions, c.content_bytes, c.tokens,
			       (SELECT coalesce(sum(n.tokens), 0) FROM nodes n WHERE n.conversation = c.pk)
			FROM conversations c WHERE c.namespace = $1 ORDER BY c.id COLLATE "C"`, namespace)
		if err != nil {
			return err
		}
		for rows.Next() {
			var c strata.ConversationStats
			if err := rows.Scan(&c.ID, &c.Turns, &c.Sessions, &c.ContentBytes, &c.TurnTokens, &c.SummaryTokens); err != nil {
				rows.Close()
				return err
			}
			st.PerConversation = append(st.PerConversation, c)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if err := tierStats(ctx, tx, namespace, &st); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint
			FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
			WHERE n.nspname = current_schema() AND c.relkind = 'r'`).Scan(&st.Bytes)
	})
	if err != nil {
		return strata.Stats{}, fmt.Errorf("postgres: stats: %w", err)
	}
	return st, nil
}

// tierStats fills the tier and archive figures of st, per conversation
// and in total. Pinned turns count where their content is: in their
// rows, hot.
func tierStats(ctx context.Context, tx pgx.Tx, namespace string, st *strata.Stats) error {
	per := map[string]*strata.ConversationStats{}
	for i := range st.PerConversation {
		c := &st.PerConversation[i]
		c.Tiers = emptyTiers()
		per[c.ID] = c
	}
	st.Tiers = emptyTiers()
	add := func(id string, tier int, f func(*strata.TierStats)) {
		if tier < tierHot || tier > tierExpired {
			return
		}
		if c := per[id]; c != nil {
			f(&c.Tiers[tier])
		}
		f(&st.Tiers[tier])
	}
	rows, err := tx.Query(ctx, `SELECT c.id, t.tier, count(*), coalesce(sum(t.size), 0)::bigint
		FROM turns t JOIN conversations c ON c.pk = t.conversation
		WHERE c.namespace = $1 GROUP BY c.id, t.tier`, namespace)
	if err != nil {
		return err
	}
	for rows.Next() {
		var id string
		var tier int
		var n, b int64
		if err := rows.Scan(&id, &tier, &n, &b); err != nil {
			rows.Close()
			return err
		}
		add(id, tier, func(x *strata.TierStats) {
			x.Turns += n
			x.Bytes += b
			if tier == tierHot {
				x.StoredBytes += b
			}
		})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	rows, err = tx.Query(ctx, `SELECT c.id, n.tier, count(*), coalesce(sum(length(n.block)), 0)::bigint
		FROM nodes n JOIN conversations c ON c.pk = n.conversation
		WHERE c.namespace = $1 AND n.level = 1 GROUP BY c.id, n.tier`, namespace)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var tier int
		var n, b int64
		if err := rows.Scan(&id, &tier, &n, &b); err != nil {
			return err
		}
		add(id, tier, func(x *strata.TierStats) {
			x.Spans += n
			if tier == tierWarm {
				x.StoredBytes += b
			}
		})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	return archiveStats(ctx, tx, namespace, st, per)
}

// archiveStats adds to st, and to the conversations of per, what the
// segments rows say each segment holds; the segments' bytes are stored
// bytes of the cold tier.
func archiveStats(ctx context.Context, tx pgx.Tx, namespace string, st *strata.Stats, per map[string]*strata.ConversationStats) error {
	rows, err := tx.Query(ctx, `SELECT c.id, count(*), sum(g.records)::bigint, sum(g.bytes)::bigint, sum(g.raw_bytes)::bigint
		FROM segments g JOIN conversations c ON c.pk = g.conversation WHERE c.namespace = $1 GROUP BY c.id`, namespace)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var a strata.ArchiveStats
		if err := rows.Scan(&id, &a.Segments, &a.Records, &a.Bytes, &a.RawBytes); err != nil {
			return err
		}
		if c := per[id]; c != nil {
			c.Archive = withRatio(a)
			c.Tiers[tierCold].StoredBytes += a.Bytes
		}
		st.Archive.Segments += a.Segments
		st.Archive.Records += a.Records
		st.Archive.Bytes += a.Bytes
		st.Archive.RawBytes += a.RawBytes
		st.Tiers[tierCold].StoredBytes += a.Bytes
	}
	st.Archive = withRatio(st.Archive)
	return rows.Err()
}

func withRatio(a strata.ArchiveStats) strata.ArchiveStats {
	if a.Bytes > 0 {
		a.Ratio = float64(a.RawBytes) / float64(a.Bytes)
	}
	return a
}

func emptyTiers() []strata.TierStats {
	out := make([]strata.TierStats, len(strata.Tiers))
	for i, t := range strata.Tiers {
		out[i].Tier = t
	}
	return out
}
