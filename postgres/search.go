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

// queryCTE makes the query of terms $1: any of them, each stemmed and
// without accents as the index holds it. The searches read it through a
// scalar subquery, (SELECT q FROM q), which the planner computes first and
// passes to the GIN index as a value; joined as a table instead, it would
// be a join condition, and the index would not be used.
const queryCTE = `WITH q AS (SELECT strata_or_agg(plainto_tsquery('strata_text', w)) AS q FROM unnest($1::text[]) AS w)`

// rankNorm is ts_rank's normalization: the rank divided by 1 + the
// logarithm of the part's length, so that a long turn that mentions a
// word once ranks below a short one about it.
const rankNorm = 1

// Search ranks turns and node summaries of the namespace (or of one
// conversation) against the words of q.Text and returns at most q.K hits
// (DefaultK if q.K <= 0), best first; see strata.SearchStore. The words
// are those package textseg finds (as the sqlite store does); any of them
// matches, and the score is ts_rank's, higher is better. ENOTFOUND if
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
			h, err := s.searchTurns(ctx, tx, q.Namespace, terms, convs, k)
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
func (s *Store) searchTurns(ctx context.Context, tx pgx.Tx, namespace string, terms []string, convs []int64, k int) ([]strata.Hit, error) {
	rows, err := tx.Query(ctx, queryCTE+`
		SELECT `+turnCols+`, t.tier, t.span, c.id, f.score
		FROM (SELECT i.conversation, i.seq, max(ts_rank(i.fts, (SELECT q FROM q), `+fmt.Sprint(rankNorm)+`)) AS score
		      FROM turn_index i
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
	var stubs []stub
	for rows.Next() {
		h := strata.Hit{Kind: strata.KindTurn}
		var score float32
		var st stub
		t, err := scanTurn(rows, &st.tier, &st.span, &h.Conversation, &score)
		if err != nil {
			return nil, err
		}
		if st.tier != tierHot {
			st.index = len(hits)
			stubs = append(stubs, st)
		}
		h.Score, h.Turn = float64(score), &t
		hits = append(hits, h)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows.Close()
	for _, st := range stubs {
		h := &hits[st.index]
		ts, err := s.hydrate(ctx, tx, namespace, h.Conversation, []strata.Turn{*h.Turn}, []stub{{index: 0, tier: st.tier, span: st.span}})
		if err != nil {
			return nil, err
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

// searchNodes returns the k best summary hits of conversations convs.
func searchNodes(ctx context.Context, tx pgx.Tx, terms []string, convs []int64, k int) ([]strata.Hit, error) {
	rows, err := tx.Query(ctx, queryCTE+`
		SELECT `+nodeCols+`, f.score
		FROM (SELECT i.node, max(ts_rank(i.fts, (SELECT q FROM q), `+fmt.Sprint(rankNorm)+`)) AS score
		      FROM node_index i
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
		var score float32
		n, err := scanNode(rows, &score)
		if err != nil {
			return nil, err
		}
		h.Score, h.Conversation, h.Node = float64(score), n.Conversation, &n
		hits = append(hits, h)
	}
	return hits, rows.Err()
}
