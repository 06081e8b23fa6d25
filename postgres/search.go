package postgres

import (
	"context"
	"fmt"
	"sort"

	"github.com/jackc/pgx/v5"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/internal/textseg"
)

// DefaultK is the number of hits Search returns when the query's K is not
// positive.
const DefaultK = 10

// BM25's parameters, those of SQLite's FTS5 bm25().
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// Index kinds: the kind column of fts_docs and fts_terms.
const (
	kindTurns = 0 // turn_index
	kindNodes = 1 // node_index
)

// rankCTE makes the query of terms $1 over the index of kind in
// conversations $2, and the statistics that rank it. q is any of the
// terms, each stemmed and without accents as the index holds it; the
// searches read it through a scalar subquery, (SELECT q FROM q), which the
// planner computes first and passes to the GIN index as a value (joined as
// a table instead, it would be a join condition, and the index would not
// be used). x is one row: avgdl, the mean length of a document in words,
// and the query's lexemes found in the scope with their inverse document
// frequencies, idf[i] for lexemes[i], as FTS5 computes them: the logarithm
// of (N - n + 0.5) / (n + 0.5) for N documents of which n hold the lexeme,
// at least 1e-6 (a lexeme in more than half of them still counts a
// little). x has no row when no lexeme of the query is in the scope.
func rankCTE(kind int) string {
	k := fmt.Sprint(kind)
	return `WITH q AS (SELECT strata_or_agg(plainto_tsquery('strata_text', w)) AS q FROM unnest($1::text[]) AS w),
	st AS (SELECT sum(docs)::float8 AS n, sum(words)::float8 / greatest(sum(docs), 1) AS avgdl
	       FROM fts_docs WHERE kind = ` + k + ` AND conversation = ANY($2)),
	x AS (SELECT greatest(st.avgdl, 1) AS avgdl, array_agg(t.lexeme) AS lexemes,
	             array_agg(greatest(ln((st.n - t.docs + 0.5) / (t.docs + 0.5)), 1e-6)) AS idf
	      FROM st, (SELECT f.lexeme, sum(f.docs)::float8 AS docs FROM fts_terms f
	                WHERE f.kind = ` + k + ` AND f.conversation = ANY($2) AND f.lexeme = ANY(ARRAY(
	                      SELECT u.lexeme FROM unnest(to_tsvector('strata_text', array_to_string($1::text[], ' '))) AS u))
	                GROUP BY f.lexeme HAVING sum(f.docs) > 0) t
	      GROUP BY st.avgdl)`
}

// bm25Score is the BM25 score of the index row i (its tsvector fts and
// its length words) for the query of x: over the query's lexemes the row
// holds, the sum of idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b *
// words / avgdl)), tf being the lexeme's count in the row (its positions).
// setweight and ts_filter keep only the query's lexemes of the row before
// they are unnested.
var bm25Score = fmt.Sprintf(`(SELECT sum(x.idf[array_position(x.lexemes, u.lexeme)] * cardinality(u.positions) * %[1]g
		/ (cardinality(u.positions) + %[2]g * (%[3]g + %[4]g * i.words / x.avgdl)))
	FROM unnest(ts_filter(setweight(i.fts, 'A', x.lexemes), '{a}')) AS u)`,
	bm25K1+1, bm25K1, 1-bm25B, bm25B)

// Search ranks turns and node summaries of the namespace (or of one
// conversation) against the words of q.Text and returns at most q.K hits
// (DefaultK if q.K <= 0), best first; see strata.SearchStore. The words
// are those package textseg finds (as the sqlite store does); any of them
// matches, and the score is BM25's with FTS5's parameters (k1 1.2, b 0.75),
// higher is better, over the statistics of the scope searched (the
// conversation, or the namespace); see rankCTE. ENOTFOUND if
// q.Conversation names a conversation that does not exist; EINVALID for
// an unknown Kind.
func (s *Store) Search(ctx context.Context, q strata.SearchQuery) ([]strata.Hit, error) {
	switch q.Kind {
	case "", strata.KindTurn, strata.KindSummary:
	default:
		return nil, strata.Errorf(strata.EINVALID, "search: unknown kind %q (want %q, %q or empty)",
			q.Kind, strata.KindTurn, strata.KindSummary)
	}
	k := q.K
	if k <= 0 {
		k = DefaultK
	}
	terms := textseg.QueryTerms(q.Text)
	hits := []strata.Hit{}
	err := s.readTx(ctx, func(tx pgx.Tx) error {
		var convs []int64
		if q.Conversation != "" {
			pk, err := conversationPK(ctx, tx, q.Namespace, q.Conversation, false)
			if err != nil {
				return err
			}
			convs = []int64{pk}
		}
		if len(terms) == 0 {
			return nil
		}
		if q.Conversation == "" {
			rows, err := tx.Query(ctx, `SELECT pk FROM conversations WHERE namespace = $1`, q.Namespace)
			if err != nil {
				return err
			}
			if convs, err = pgx.CollectRows(rows, pgx.RowTo[int64]); err != nil {
				return err
			}
			if len(convs) == 0 {
				return nil
			}
		}
		if q.Kind != strata.KindSummary {
			h, err := searchTurns(ctx, tx, terms, convs, k)
			if err != nil {
				return fmt.Errorf("turns: %w", err)
			}
			hits = append(hits, h...)
		}
		if q.Kind != strata.KindTurn {
			h, err := searchNodes(ctx, tx, terms, convs, k)
			if err != nil {
				return fmt.Errorf("summaries: %w", err)
			}
			hits = append(hits, h...)
		}
		return nil
	})
	if err != nil {
		return nil, wrap("search", err)
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].Score > hits[j].Score })
	if len(hits) > k {
		hits = hits[:k]
	}
	return hits, nil
}

// searchTurns returns the k best turn hits of conversations convs. It
// ranks the index rows in a LIMITed subquery (a turn's best part is its
// score) and reads only the k turns it keeps.
func searchTurns(ctx context.Context, tx pgx.Tx, terms []string, convs []int64, k int) ([]strata.Hit, error) {
	rows, err := tx.Query(ctx, rankCTE(kindTurns)+`
		SELECT `+turnCols+`, c.id, f.score
		FROM (SELECT i.conversation, i.seq, max(`+bm25Score+`) AS score
		      FROM turn_index i, x
		      WHERE i.fts @@ (SELECT q FROM q) AND i.conversation = ANY($2)
		      GROUP BY i.conversation, i.seq
		      ORDER BY score DESC, i.conversation, i.seq LIMIT $3) f
		JOIN turns t ON t.conversation = f.conversation AND t.seq = f.seq
		JOIN conversations c ON c.pk = t.conversation
		ORDER BY f.score DESC, t.pk`, terms, convs, k)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var hits []strata.Hit
	for rows.Next() {
		h := strata.Hit{Kind: strata.KindTurn}
		t, err := scanTurn(rows, &h.Conversation, &h.Score)
		if err != nil {
			return nil, err
		}
		h.Turn = &t
		hits = append(hits, h)
	}
	return hits, rows.Err()
}

// searchNodes returns the k best summary hits of conversations convs.
func searchNodes(ctx context.Context, tx pgx.Tx, terms []string, convs []int64, k int) ([]strata.Hit, error) {
	rows, err := tx.Query(ctx, rankCTE(kindNodes)+`
		SELECT `+nodeCols+`, f.score
		FROM (SELECT i.node, max(`+bm25Score+`) AS score
		      FROM node_index i, x
		      WHERE i.fts @@ (SELECT q FROM q) AND i.conversation = ANY($2)
		      GROUP BY i.node
		      ORDER BY score DESC, i.node LIMIT $3) f
		JOIN nodes n ON n.pk = f.node
		JOIN conversations c ON c.pk = n.conversation
		ORDER BY f.score DESC, n.pk`, terms, convs, k)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var hits []strata.Hit
	for rows.Next() {
		h := strata.Hit{Kind: strata.KindSummary}
		n, err := scanNode(rows, &h.Score)
		if err != nil {
			return nil, err
		}
		h.Conversation, h.Node = n.Conversation, &n
		hits = append(hits, h)
	}
	return hits, rows.Err()
}
