package postgres

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/internal/spanfmt"
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

// statsQuery returns the statistics that rank the terms $1 over the
// index of kind $3 in conversations $2: avgdl, the mean length of a
// document in words, and the query's lexemes (each term stemmed and
// without accents as the index holds it) found in the scope, with their
// inverse document frequencies, idf[i] for lexemes[i], as FTS5 computes
// them: the logarithm of (N - n + 0.5) / (n + 0.5) for N documents of
// which n hold the lexeme, at least 1e-6 (a lexeme in more than half of
// them still counts a little). No row when no lexeme is in the scope.
const statsQuery = `WITH st AS (SELECT sum(docs)::float8 AS n, sum(words)::float8 / greatest(sum(docs), 1) AS avgdl
		FROM fts_docs WHERE kind = $3 AND conversation = ANY($2))
	SELECT greatest(st.avgdl, 1), array_agg(t.lexeme ORDER BY t.lexeme),
		array_agg(greatest(ln((st.n - t.docs + 0.5) / (t.docs + 0.5)), 1e-6) ORDER BY t.lexeme)
	FROM st, (SELECT f.lexeme, sum(f.docs)::float8 AS docs FROM fts_terms f
		WHERE f.kind = $3 AND f.conversation = ANY($2) AND f.lexeme = ANY(ARRAY(
			SELECT u.lexeme FROM unnest(to_tsvector('strata_text', array_to_string($1::text[], ' '))) AS u))
		GROUP BY f.lexeme HAVING sum(f.docs) > 0) t
	GROUP BY st.avgdl`

// queryStats reads statsQuery; no lexemes when none is in the scope.
func queryStats(ctx context.Context, tx pgx.Tx, kind int, terms []string, convs []int64) (avgdl float64, lexemes []string, idf []float64, err error) {
	err = tx.QueryRow(ctx, statsQuery, terms, convs, kind).Scan(&avgdl, &lexemes, &idf)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil, nil, nil
	}
	return avgdl, lexemes, idf, err
}

// rankedRows makes the CTE rr of the best rows of an index table (key
// names a row's item: its columns, as i.col, ...) in conversations $2, for
// the n lexemes $1 with inverse document frequencies $4 and mean document
// length $5. A row's score is BM25's: the sum over the lexemes it holds of
// idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * words / avgdl)), tf being
// the lexeme's count in the row, which ts_rank_cd with unit weights gives
// for a one-lexeme query (each occurrence is a cover of weight 1). The GIN
// index gives the rows holding any lexeme: q is their OR, read through a
// scalar subquery, (SELECT q FROM q), which the planner computes first and
// passes to the index as a value (joined as a table, it would be a join
// condition, and the index would not be used). An item's score is its
// best row's; rr holds the $3 best rows and as many more as the scope has
// rows that are not an item's first part, so it holds the best row of
// each of the $3 best items.
func rankedRows(table, key string, n int, filter string) string {
	var tf, sum strings.Builder
	for j := 1; j <= n; j++ {
		fmt.Fprintf(&tf, `,
			CASE WHEN i.fts @@ x.lq[%[1]d] THEN ts_rank_cd('{1,1,1,1}', i.fts, x.lq[%[1]d])::float8 ELSE 0 END AS tf%[1]d`, j)
		if j > 1 {
			sum.WriteString(" + ")
		}
		fmt.Fprintf(&sum, `($4::float8[])[%[1]d] * r.tf%[1]d * %[2]g::float8 / (r.tf%[1]d + r.k)`, j, bm25K1+1)
	}
	return `WITH x AS (SELECT array_agg(` + lexemeQuery("u.l") + ` ORDER BY u.o) AS lq
		FROM unnest($1::text[]) WITH ORDINALITY AS u(l, o)),
	q AS (SELECT strata_or_agg(l) AS q FROM x, unnest(x.lq) AS l),
	rr AS (SELECT r.*, ` + sum.String() + ` AS score
		FROM (SELECT ` + key + `, i.part,
			` + fmt.Sprintf("%g::float8 * (%g::float8 + %g::float8 * i.words / $5::float8)", bm25K1, 1-bm25B, bm25B) + ` AS k` + tf.String() + `
		      FROM ` + table + ` i, x
		      WHERE i.fts @@ (SELECT q FROM q) AND i.conversation = ANY($2)` + filter + ` OFFSET 0) r
		ORDER BY score DESC, ` + strings.ReplaceAll(key, "i.", "r.") + `, r.part
		LIMIT $3 + (SELECT count(*) FROM ` + table + ` WHERE part > 0 AND conversation = ANY($2)))`
}

// lexemeQuery is the SQL expression of the tsquery of the one lexeme
// expr, quoted as tsquery input wants it (quotes and backslashes doubled).
func lexemeQuery(expr string) string {
	return `('''' || replace(replace(` + expr + `, '\', '\\'), '''', '''''') || '''')::tsquery`
}

// Search ranks turns and node summaries of the namespace (or of one
// conversation) against the words of q.Text and returns at most q.K hits
// (DefaultK if q.K <= 0), best first; see strata.SearchStore. The words
// are those package textseg finds (as the sqlite store does); any of them
// matches, and the score is BM25's with FTS5's parameters (k1 1.2, b 0.75),
// higher is better, over the statistics of the scope searched (the
// conversation, or the namespace); see statsQuery and rankedRows. ENOTFOUND if
// q.Conversation names a conversation that does not exist; EINVALID for
// an unknown Kind.
func (s *Store) Search(ctx context.Context, q strata.SearchQuery) ([]strata.Hit, error) {
	if err := strata.CheckSearch(q); err != nil {
		return nil, err
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
			h, err := s.searchTurns(ctx, tx, q.Namespace, terms, convs, k, q.FromSeq)
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

// searchTurns returns the k best turn hits of conversations convs of
// namespace. It ranks the index rows in a LIMITed subquery (a turn's best
// part is its score) and reads only the k turns it keeps. Warm turns are
// indexed, their content in their span's block; cold ones left the index.
func (s *Store) searchTurns(ctx context.Context, tx pgx.Tx, namespace string, terms []string, convs []int64, k int, fromSeq int64) ([]strata.Hit, error) {
	avgdl, lexemes, idf, err := queryStats(ctx, tx, kindTurns, terms, convs)
	if err != nil || len(lexemes) == 0 {
		return nil, err
	}
	rows, err := tx.Query(ctx, rankedRows("turn_index", "i.conversation, i.seq", len(lexemes), " AND i.seq >= $6")+`
		SELECT `+turnCols+`, t.tier, t.span, c.id, f.score
		FROM (SELECT rr.conversation, rr.seq, max(rr.score) AS score FROM rr
		      GROUP BY rr.conversation, rr.seq ORDER BY score DESC, rr.conversation, rr.seq LIMIT $3) f
		JOIN turns t ON t.conversation = f.conversation AND t.seq = f.seq
		JOIN conversations c ON c.pk = t.conversation
		ORDER BY f.score DESC, t.pk`, lexemes, convs, k, idf, avgdl, fromSeq)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var hits []strata.Hit
	var stubs []stub
	for rows.Next() {
		h := strata.Hit{Kind: strata.KindTurn}
		var st stub
		t, err := scanTurn(rows, &st.tier, &st.span, &h.Conversation, &h.Score)
		if err != nil {
			return nil, fmt.Errorf("search turns of %q: %w", h.Conversation, err)
		}
		if st.tier != tierHot {
			st.index = len(hits)
			stubs = append(stubs, st)
		}
		h.Turn = &t
		hits = append(hits, h)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows.Close()
	// Warm and cold turns are indexed but their content is in their
	// span's block or segments.
	return spanfmt.HydrateHits(hits, fmtStubs(stubs), func(c string, ts []strata.Turn, sts []spanfmt.Stub) ([]strata.Turn, error) {
		return spanfmt.HydrateReadable(ctx, ts, sts, func(ts []strata.Turn, sts []spanfmt.Stub) ([]strata.Turn, error) {
			return s.hydrateStubs(ctx, tx, namespace, c, ts, sts)
		})
	})
}

// searchNodes returns the k best summary hits of conversations convs.
func searchNodes(ctx context.Context, tx pgx.Tx, terms []string, convs []int64, k int) ([]strata.Hit, error) {
	avgdl, lexemes, idf, err := queryStats(ctx, tx, kindNodes, terms, convs)
	if err != nil || len(lexemes) == 0 {
		return nil, err
	}
	rows, err := tx.Query(ctx, rankedRows("node_index", "i.node", len(lexemes), "")+`
		SELECT `+nodeCols+`, f.score
		FROM (SELECT rr.node, max(rr.score) AS score FROM rr
		      GROUP BY rr.node ORDER BY score DESC, rr.node LIMIT $3) f
		JOIN nodes n ON n.pk = f.node
		JOIN conversations c ON c.pk = n.conversation
		ORDER BY f.score DESC, n.pk`, lexemes, convs, k, idf, avgdl)
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
