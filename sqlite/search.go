package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"sort"

	"github.com/strata-memory/strata"
)

// DefaultK is the number of hits Search returns when the query's K is not
// positive.
const DefaultK = 10

// Search ranks turns and node summaries of the namespace (or of one
// conversation) against the words of q.Text with BM25, and returns at most
// q.K hits (DefaultK if q.K <= 0), best first. With q.Kind "" turn and
// summary hits are merged by score. Score is -bm25: higher is better.
// q.Text is never parsed as FTS5 syntax; a text with no searchable word (empty,
// punctuation, stop words only) has no hits. ENOTFOUND if q.Conversation
// names a conversation that does not exist; EINVALID for an unknown Kind.
func (s *Store) Search(ctx context.Context, q strata.SearchQuery) ([]strata.Hit, error) {
	if err := strata.CheckSearch(q); err != nil {
		return nil, err
	}
	k := q.K
	if k <= 0 {
		k = DefaultK
	}
	terms := queryTerms(q.Text)

	// One read transaction: the scope check and both searches see the same
	// snapshot.
	tx, err := s.r.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("sqlite: search: %w", err)
	}
	defer tx.Rollback()
	var (
		pk     int64 // 0: the whole namespace
		sc     string
		others bool
	)
	if q.Conversation != "" {
		if pk, err = conversationPK(ctx, tx, q.Namespace, q.Conversation); err != nil {
			return nil, err
		}
		sc = conversationScope(pk)
		err = tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM conversations WHERE pk <> ?)`, pk).Scan(&others)
	} else {
		sc = namespaceScope(q.Namespace)
		err = tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM conversations WHERE namespace <> ?)`,
			q.Namespace).Scan(&others)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: search: %w", err)
	}
	if len(terms) == 0 || q.Ranges != nil && len(q.Ranges) == 0 {
		return []strata.Hit{}, nil
	}
	if !others {
		sc = "" // the scope is the whole file: intersecting with it would only cost time
	}
	match := matchExpr(sc, terms)

	hits := []strata.Hit{}
	if q.Kind != strata.KindSummary {
		var h []strata.Hit
		if q.Ranges != nil {
			h, err = s.searchTurnRanges(ctx, tx, q.Namespace, pk, match, k, strata.MergeRanges(q.Ranges))
		} else {
			h, err = s.searchTurns(ctx, tx, q.Namespace, pk, match, k)
		}
		if err != nil {
			return nil, err
		}
		hits = append(hits, h...)
	}
	if q.Kind != strata.KindTurn {
		nmatch := match
		if q.Level > 0 {
			nmatch = `scope : "` + levelScope(q.Level) + `" AND ` + match
		}
		var h []strata.Hit
		if q.Ranges != nil {
			h, err = searchNodeRanges(ctx, tx, pk, q.Level, nmatch, k, strata.MergeRanges(q.Ranges))
		} else {
			h, err = searchNodes(ctx, tx, q.Namespace, pk, nmatch, k)
		}
		if err != nil {
			return nil, err
		}
		hits = append(hits, h...)
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].Score > hits[j].Score })
	if len(hits) > k {
		hits = hits[:k]
	}
	return hits, nil
}

// searchTurns returns the k best turn hits for an FTS5 expression, of the
// namespace and, if conversation is not 0, of that conversation. It ranks
// inside a LIMITed subquery and joins the base rows afterwards, so only k
// turns are read; the scope token in the expression has already limited
// the ranking to the namespace or conversation, and the join checks it.
func (s *Store) searchTurns(ctx context.Context, q querier, namespace string, conversation int64, match string, k int) ([]strata.Hit, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+turnCols+`, t.tier, t.span, c.id, -f.score
		FROM (SELECT rowid, bm25(turns_fts, 1.0, 0.0) AS score FROM turns_fts
		      WHERE turns_fts MATCH ? ORDER BY score LIMIT ?) f
		JOIN turns t ON t.pk = f.rowid
		JOIN conversations c ON c.pk = t.conversation
		WHERE c.namespace = ? AND (? = 0 OR c.pk = ?)
		ORDER BY f.score, t.pk`, match, k, namespace, conversation, conversation)
	if err != nil {
		return nil, fmt.Errorf("sqlite: search turns: %w", err)
	}
	return s.scanTurnHits(ctx, q, namespace, rows)
}

// scanTurnHits reads turn hits (turnCols, tier, span, conversation id,
// score) and closes rows. Warm turns are indexed but their content is in
// their span's block: it is read from there; expired ones are dropped.
func (s *Store) scanTurnHits(ctx context.Context, q querier, namespace string, rows *sql.Rows) ([]strata.Hit, error) {
	defer rows.Close()
	var hits []strata.Hit
	var stubs []stub
	for rows.Next() {
		h := strata.Hit{Kind: strata.KindTurn}
		var st stub
		t, err := scanTurn(rows, &st.tier, &st.span, &h.Conversation, &h.Score)
		if err != nil {
			return nil, fmt.Errorf("sqlite: search turns: %w", err)
		}
		if st.tier != tierHot {
			st.index = len(hits)
			stubs = append(stubs, st)
		}
		h.Turn = &t
		hits = append(hits, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: search turns: %w", err)
	}
	rows.Close()
	for _, st := range stubs {
		h := &hits[st.index]
		ts, err := s.hydrate(ctx, q, namespace, h.Conversation, []strata.Turn{*h.Turn}, []stub{{index: 0, tier: st.tier, span: st.span}})
		if err != nil {
			return nil, fmt.Errorf("sqlite: search turns: %w", err)
		}
		if len(ts) == 1 {
			*h.Turn = ts[0]
		} else {
			h.Turn = nil // expired: dropped below
		}
	}
	kept := hits[:0]
	for _, h := range hits {
		if h.Turn != nil {
			kept = append(kept, h)
		}
	}
	return kept, nil
}

// searchNodes returns the k best summary hits for an FTS5 expression.
func searchNodes(ctx context.Context, q querier, namespace string, conversation int64, match string, k int) ([]strata.Hit, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+nodeCols+`, -f.score
		FROM (SELECT rowid, bm25(nodes_fts, 1.0, 0.0) AS score FROM nodes_fts
		      WHERE nodes_fts MATCH ? ORDER BY score LIMIT ?) f
		JOIN nodes n ON n.pk = f.rowid
		JOIN conversations c ON c.pk = n.conversation
		WHERE c.namespace = ? AND (? = 0 OR c.pk = ?)
		ORDER BY f.score, n.pk`, match, k, namespace, conversation, conversation)
	if err != nil {
		return nil, fmt.Errorf("sqlite: search summaries: %w", err)
	}
	return scanNodeHits(rows)
}

// scanNodeHits reads summary hits (nodeCols, score) and closes rows.
func scanNodeHits(rows *sql.Rows) ([]strata.Hit, error) {
	defer rows.Close()
	var hits []strata.Hit
	for rows.Next() {
		h := strata.Hit{Kind: strata.KindSummary}
		n, err := scanNode(rows, &h.Score)
		if err != nil {
			return nil, fmt.Errorf("sqlite: search summaries: %w", err)
		}
		h.Conversation, h.Node = n.Conversation, &n
		hits = append(hits, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: search summaries: %w", err)
	}
	return hits, nil
}

// searchTurnRanges returns the k best turn hits of conversation pk whose
// seq lies in one of ranges (merged). Each range is searched apart, the
// index read only between the row ids of its first and last turns (rows
// of a conversation are numbered in seq order), so the cost follows the
// ranges, not the conversation's length; bm25 takes its statistics from
// the whole index, so scores compare with an unrestricted search's.
func (s *Store) searchTurnRanges(ctx context.Context, q querier, namespace string, pk int64, match string, k int, ranges []strata.SeqRange) ([]strata.Hit, error) {
	var all []strata.Hit
	for _, r := range ranges {
		var lo, hi sql.NullInt64
		if err := q.QueryRowContext(ctx, `SELECT min(pk), max(pk) FROM turns WHERE conversation = ? AND seq BETWEEN ? AND ?`,
			pk, r.First, r.Last).Scan(&lo, &hi); err != nil {
			return nil, fmt.Errorf("sqlite: search turns: %w", err)
		}
		if !lo.Valid {
			continue
		}
		rows, err := q.QueryContext(ctx, `SELECT `+turnCols+`, t.tier, t.span, c.id, -bm25(turns_fts, 1.0, 0.0) AS score
			FROM turns_fts f
			JOIN turns t ON t.pk = f.rowid
			JOIN conversations c ON c.pk = t.conversation
			WHERE turns_fts MATCH ? AND f.rowid BETWEEN ? AND ? AND t.conversation = ? AND t.seq BETWEEN ? AND ?
			ORDER BY score DESC, t.pk LIMIT ?`, match, lo.Int64, hi.Int64, pk, r.First, r.Last, k)
		if err != nil {
			return nil, fmt.Errorf("sqlite: search turns: %w", err)
		}
		h, err := s.scanTurnHits(ctx, q, namespace, rows)
		if err != nil {
			return nil, err
		}
		all = append(all, h...)
	}
	return bestHits(all, k), nil
}

// searchNodeRanges returns the k best summary hits of conversation pk
// (of level, if positive) whose span lies in one of ranges, reading the
// index only between the row ids of the nodes each range holds.
func searchNodeRanges(ctx context.Context, q querier, pk int64, level int, match string, k int, ranges []strata.SeqRange) ([]strata.Hit, error) {
	levels := []int{level}
	if level <= 0 {
		var top sql.NullInt64
		if err := q.QueryRowContext(ctx, `SELECT max(level) FROM nodes WHERE conversation = ?`, pk).Scan(&top); err != nil {
			return nil, fmt.Errorf("sqlite: search summaries: %w", err)
		}
		levels = levels[:0]
		for l := 1; l <= int(top.Int64); l++ {
			levels = append(levels, l)
		}
	}
	var all []strata.Hit
	for _, r := range ranges {
		// The row ids of the range's nodes, level by level (each a short
		// walk of the (conversation, level, last_seq) index).
		var lo, hi int64
		for _, l := range levels {
			var a, b sql.NullInt64
			if err := q.QueryRowContext(ctx, `SELECT min(pk), max(pk) FROM nodes
				WHERE conversation = ? AND level = ? AND last_seq BETWEEN ? AND ? AND first_seq >= ?`,
				pk, l, r.First, r.Last, r.First).Scan(&a, &b); err != nil {
				return nil, fmt.Errorf("sqlite: search summaries: %w", err)
			}
			if !a.Valid {
				continue
			}
			if lo == 0 || a.Int64 < lo {
				lo = a.Int64
			}
			hi = max(hi, b.Int64)
		}
		if lo == 0 {
			continue
		}
		rows, err := q.QueryContext(ctx, `SELECT `+nodeCols+`, -bm25(nodes_fts, 1.0, 0.0) AS score
			FROM nodes_fts f
			JOIN nodes n ON n.pk = f.rowid
			JOIN conversations c ON c.pk = n.conversation
			WHERE nodes_fts MATCH ? AND f.rowid BETWEEN ? AND ? AND n.conversation = ?
			  AND n.first_seq >= ? AND n.last_seq <= ? AND (? = 0 OR n.level = ?)
			ORDER BY score DESC, n.pk LIMIT ?`, match, lo, hi, pk, r.First, r.Last, level, level, k)
		if err != nil {
			return nil, fmt.Errorf("sqlite: search summaries: %w", err)
		}
		h, err := scanNodeHits(rows)
		if err != nil {
			return nil, err
		}
		all = append(all, h...)
	}
	return bestHits(all, k), nil
}

// bestHits returns the k best of hits, best first (ties by order found).
func bestHits(hits []strata.Hit, k int) []strata.Hit {
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].Score > hits[j].Score })
	if len(hits) > k {
		hits = hits[:k]
	}
	return hits
}
