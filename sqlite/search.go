package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/internal/spanfmt"
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
	if len(terms) == 0 {
		return []strata.Hit{}, nil
	}
	if !others {
		sc = "" // the scope is the whole file: intersecting with it would only cost time
	}
	match := matchExpr(sc, terms)

	hits := []strata.Hit{}
	if q.Kind != strata.KindSummary {
		// A long conversation's window of newest turns is ranked in
		// memory (turnindex.go); FTS5 ranks the others.
		h, ok, err := s.searchTurnIndex(ctx, tx, q.Namespace, q.Conversation, pk, q.FromSeq, others, terms, k)
		if err == nil && !ok {
			h, err = s.searchTurns(ctx, tx, q.Namespace, pk, q.FromSeq, match, k)
		}
		if err != nil {
			return nil, err
		}
		hits = append(hits, h...)
	}
	if q.Kind != strata.KindTurn {
		// A long conversation's summaries are ranked in memory
		// (sumindex.go); FTS5 ranks the others.
		h, ok, err := s.searchSummaryIndex(ctx, tx, pk, others, terms, k)
		if err == nil && !ok {
			h, err = s.searchNodes(ctx, tx, q.Namespace, pk, match, k)
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
//
// With fromSeq (and a conversation), the ranking reads only the index
// entries from the row id of the conversation's turn fromSeq on: a
// conversation's rows are numbered in seq order, and the scope token (or
// the file holding one conversation) keeps other conversations' out. The
// join checks the seq all the same.
func (s *Store) searchTurns(ctx context.Context, q querier, namespace string, conversation, fromSeq int64, match string, k int) ([]strata.Hit, error) {
	from := int64(0)
	if fromSeq > 0 {
		// The first row at or after fromSeq is the least row id: one seek
		// of the (conversation, seq) index, where min(pk) over the range
		// read every entry of the window.
		err := q.QueryRowContext(ctx, `SELECT pk FROM turns WHERE conversation = ? AND seq >= ? ORDER BY seq LIMIT 1`,
			conversation, fromSeq).Scan(&from)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("sqlite: search turns: %w", err)
		}
	}
	rows, err := q.QueryContext(ctx, `SELECT `+turnCols+`, t.tier, t.span, c.id, -f.score
		FROM (SELECT rowid, bm25(turns_fts, 1.0, 0.0) AS score FROM turns_fts
		      WHERE turns_fts MATCH ? AND rowid >= ? ORDER BY score LIMIT ?) f
		JOIN turns t ON t.pk = f.rowid
		JOIN conversations c ON c.pk = t.conversation
		WHERE c.namespace = ? AND (? = 0 OR c.pk = ?) AND t.seq >= ?
		ORDER BY f.score, t.pk`, match, from, k, namespace, conversation, conversation, fromSeq)
	if err != nil {
		return nil, fmt.Errorf("sqlite: search turns: %w", err)
	}
	defer rows.Close()
	var hits []strata.Hit
	var stubs []stub
	for rows.Next() {
		h := strata.Hit{Kind: strata.KindTurn}
		var st stub
		t, err := scanTurn(rows, &st.tier, &st.span, &h.Conversation, &h.Score)
		if err != nil {
			return nil, fmt.Errorf("sqlite: search turns of %q: %w", h.Conversation, err)
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
	// Warm and cold turns are indexed but their content is in their
	// span's block or segments.
	kept, err := spanfmt.HydrateHits(hits, fmtStubs(stubs), func(c string, ts []strata.Turn, sts []spanfmt.Stub) ([]strata.Turn, error) {
		whole, err := spanfmt.HydrateReadable(ctx, ts, sts, func(ts []strata.Turn, sts []spanfmt.Stub) ([]strata.Turn, error) {
			return s.hydrateStubs(ctx, q, namespace, c, ts, sts)
		})
		if err != nil {
			return nil, fmt.Errorf("sqlite: search turns: %w", err)
		}
		return whole, nil
	})
	return kept, err
}

// searchNodes returns the k best summary hits for an FTS5 expression.
func (s *Store) searchNodes(ctx context.Context, q querier, namespace string, conversation int64, match string, k int) ([]strata.Hit, error) {
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
	defer rows.Close()
	var hits []strata.Hit
	for rows.Next() {
		h := strata.Hit{Kind: strata.KindSummary}
		n, err := scanNode(ctx, s.text, q, rows, &h.Score)
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

// hydrateReadable is hydrate for search (spanfmt.HydrateReadable): a
// span whose copy cannot be read loses its turns, not the search.
func (s *Store) hydrateReadable(ctx context.Context, q querier, namespace, conversation string, ts []strata.Turn, stubs []stub) ([]strata.Turn, error) {
	return spanfmt.HydrateReadable(ctx, ts, fmtStubs(stubs), func(ts []strata.Turn, sts []spanfmt.Stub) ([]strata.Turn, error) {
		return s.hydrateStubs(ctx, q, namespace, conversation, ts, sts)
	})
}
