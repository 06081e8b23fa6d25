package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"

	"github.com/strata-memory/strata"
)

// Vectors are stored one per item (turn or node) and model, in
// turn_vectors and node_vectors, as pgvector values with their model and
// dimension; vector_state keeps each conversation's strata.VectorVersion.
// The engine ranks them in its in-process index, which it loads with
// Vectors and refreshes with VectorVersion, as it does for every store.

// defaultUnembedded is the page size of Unembedded when f.Limit <= 0.
const defaultUnembedded = 1000

// Unembedded returns the conversation's turns and nodes without a vector
// in f.Space, after f.After; see strata.VectorStore.
func (s *Store) Unembedded(ctx context.Context, f strata.EmbedFilter) ([]strata.EmbedSource, error) {
	if err := strata.CheckEmbedFilter(f); err != nil {
		return nil, err
	}
	limit := f.Limit
	if limit <= 0 {
		limit = defaultUnembedded
	}
	after := strata.EmbedRef{Level: -1}
	if f.After != nil {
		after = *f.After
	}
	out := []strata.EmbedSource{}
	err := s.readTx(ctx, func(tx pgx.Tx) error {
		pk, err := conversationPK(ctx, tx, f.Namespace, f.Conversation, false)
		if err != nil {
			return err
		}
		if f.Kind != strata.KindSummary && after.Level <= 0 {
			if out, err = s.unembeddedTurns(ctx, tx, pk, f, after, limit, out); err != nil {
				return err
			}
		}
		if f.Kind != strata.KindTurn && len(out) < limit {
			out, err = unembeddedNodes(ctx, tx, pk, f, after, limit, out)
			return err
		}
		return nil
	})
	if err != nil {
		return nil, wrap(fmt.Sprintf("unembedded of %q", f.Conversation), err)
	}
	return out, nil
}

// unembeddedTurns appends to out the turns of conversation pk after
// after without a vector of f's space, up to limit sources in all.
func (s *Store) unembeddedTurns(ctx context.Context, tx pgx.Tx, pk int64, f strata.EmbedFilter, after strata.EmbedRef, limit int, out []strata.EmbedSource) ([]strata.EmbedSource, error) {
	from := int64(0)
	if after.Level == 0 {
		from = after.Seq
	}
	rows, err := tx.Query(ctx, `SELECT `+turnCols+`, t.tier, t.span FROM turns t
		WHERE t.conversation = $1 AND t.seq > $2 AND t.tier <> $3
		  AND NOT EXISTS (SELECT 1 FROM turn_vectors v WHERE v.conversation = t.conversation AND v.seq = t.seq
		                  AND v.model = $4 AND ($5 = 0 OR v.dim = $5))
		ORDER BY t.seq LIMIT $6`, pk, from, tierExpired, f.Space.Model, f.Space.Dim, limit)
	if err != nil {
		return nil, err
	}
	turns, stubs, err := scanStubbed(rows, false)
	if err != nil {
		return nil, err
	}
	// Warm and cold turns are read whole from their span's copy.
	if turns, err = s.hydrate(ctx, tx, f.Namespace, f.Conversation, turns, stubs); err != nil {
		return nil, err
	}
	for i := range turns {
		out = append(out, strata.EmbedSource{EmbedRef: strata.EmbedRef{Seq: turns[i].Seq}, Text: turns[i].Text()})
	}
	return out, nil
}

// unembeddedNodes appends to out the nodes of conversation pk after after
// without a vector of f's space, up to limit sources in all.
func unembeddedNodes(ctx context.Context, tx pgx.Tx, pk int64, f strata.EmbedFilter, after strata.EmbedRef, limit int, out []strata.EmbedSource) ([]strata.EmbedSource, error) {
	lvl, seq, id := max(after.Level, 0), after.Seq, after.Node
	if after.Level <= 0 {
		seq, id = 0, ""
	}
	rows, err := tx.Query(ctx, `SELECT n.id, n.level, n.first_seq, n.summary FROM nodes n
		WHERE n.conversation = $1 AND NOT n.pending AND (n.level, n.first_seq, n.id COLLATE "C") > ($2, $3, $4)
		  AND NOT EXISTS (SELECT 1 FROM node_vectors v WHERE v.node = n.pk AND v.model = $5 AND ($6 = 0 OR v.dim = $6))
		ORDER BY n.level, n.first_seq, n.id COLLATE "C" LIMIT $7`,
		pk, lvl, seq, id, f.Space.Model, f.Space.Dim, limit-len(out))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var src strata.EmbedSource
		if err := rows.Scan(&src.Node, &src.Level, &src.Seq, &src.Text); err != nil {
			return nil, err
		}
		out = append(out, src)
	}
	return out, rows.Err()
}

// PutEmbeddings stores vectors of the conversation's turns and nodes in
// one transaction; see strata.VectorStore.
func (s *Store) PutEmbeddings(ctx context.Context, namespace, conversation string, space strata.EmbedSpace, es []strata.Embedding) error {
	if err := strata.CheckEmbeddings(space, es); err != nil {
		return err
	}
	var seqs []int64
	var ids []string
	for _, e := range es {
		if e.Node == "" {
			seqs = append(seqs, e.Seq)
		} else {
			ids = append(ids, e.Node)
		}
	}
	err := s.tx(ctx, func(tx pgx.Tx) error {
		pk, err := conversationPK(ctx, tx, namespace, conversation, true)
		if err != nil {
			return err
		}
		if len(es) == 0 {
			return nil
		}
		turns, nodes, err := embeddingTargets(ctx, tx, pk, seqs, ids)
		if err != nil {
			return err
		}
		for i, e := range es {
			if e.Node == "" && !turns[e.Seq] {
				return strata.Errorf(strata.EINVALID, "put embeddings: embeddings[%d].seq: conversation %q has no turn %d", i, conversation, e.Seq)
			}
			if _, ok := nodes[e.Node]; e.Node != "" && !ok {
				return strata.Errorf(strata.EINVALID, "put embeddings: embeddings[%d].node: conversation %q has no node %q", i, conversation, e.Node)
			}
		}
		var version int64
		if err := tx.QueryRow(ctx, `INSERT INTO vector_state (conversation, version) VALUES ($1, 1)
			ON CONFLICT (conversation) DO UPDATE SET version = vector_state.version + 1 RETURNING version`, pk).Scan(&version); err != nil {
			return err
		}
		b := &pgx.Batch{}
		for _, e := range es {
			v := pgvector.NewVector(e.Vector)
			if e.Node == "" {
				b.Queue(`INSERT INTO turn_vectors (conversation, seq, model, dim, version, vec)
					VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (conversation, seq, model) DO UPDATE SET
					dim = excluded.dim, version = excluded.version, vec = excluded.vec`,
					pk, e.Seq, space.Model, space.Dim, version, v)
				continue
			}
			b.Queue(`INSERT INTO node_vectors (node, conversation, model, dim, version, vec)
				VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (node, model) DO UPDATE SET
				dim = excluded.dim, version = excluded.version, vec = excluded.vec`,
				nodes[e.Node], pk, space.Model, space.Dim, version, v)
		}
		return tx.SendBatch(ctx, b).Close()
	})
	return wrap(fmt.Sprintf("put embeddings of %q", conversation), err)
}

// embeddingTargets returns which of seqs are turns of conversation pk,
// and the keys of its nodes among ids.
func embeddingTargets(ctx context.Context, tx pgx.Tx, pk int64, seqs []int64, ids []string) (map[int64]bool, map[string]int64, error) {
	turns := map[int64]bool{}
	if len(seqs) > 0 {
		rows, err := tx.Query(ctx, `SELECT seq FROM turns WHERE conversation = $1 AND seq = ANY($2)`, pk, seqs)
		if err != nil {
			return nil, nil, err
		}
		have, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return nil, nil, err
		}
		for _, s := range have {
			turns[s] = true
		}
	}
	nodes := map[string]int64{}
	if len(ids) > 0 {
		rows, err := tx.Query(ctx, `SELECT id, pk FROM nodes WHERE conversation = $1 AND id = ANY($2)`, pk, ids)
		if err != nil {
			return nil, nil, err
		}
		for rows.Next() {
			var id string
			var npk int64
			if err := rows.Scan(&id, &npk); err != nil {
				rows.Close()
				return nil, nil, err
			}
			nodes[id] = npk
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, nil, err
		}
	}
	return turns, nodes, nil
}

// vectorsIn selects the vectors of conversation $1 in model $2 and
// dimension $3 (0: any) written after version $4, from the table aliased
// v; the space index (conversation, model, dim, version) answers it.
const vectorsIn = `v.conversation = $1 AND v.model = $2 AND ($3 = 0 OR v.dim = $3) AND v.version > $4`

// CountVectors is the number of vectors Vectors would stream for f; see
// strata.VectorCounter.
func (s *Store) CountVectors(ctx context.Context, f strata.VectorFilter) (int, error) {
	if err := strata.CheckVectorFilter(f); err != nil {
		return 0, err
	}
	pk, err := conversationPK(ctx, s.pool, f.Namespace, f.Conversation, false)
	if err != nil {
		return 0, err
	}
	var turns, nodes int
	if err := s.pool.QueryRow(ctx, `SELECT
			CASE WHEN $5 IN ('', 'turn') THEN (SELECT count(*) FROM turn_vectors v WHERE `+vectorsIn+`) ELSE 0 END,
			CASE WHEN $5 IN ('', 'summary') THEN (SELECT count(*) FROM node_vectors v WHERE `+vectorsIn+`) ELSE 0 END`,
		pk, f.Space.Model, f.Space.Dim, f.Since, f.Kind).Scan(&turns, &nodes); err != nil {
		return 0, fmt.Errorf("postgres: count vectors of %q: %w", f.Conversation, err)
	}
	return turns + nodes, nil
}

// Vectors streams the conversation's vectors that match f from one read
// transaction; see strata.VectorStore.
func (s *Store) Vectors(ctx context.Context, f strata.VectorFilter, fn func(strata.Vector) error) error {
	if err := strata.CheckVectorFilter(f); err != nil {
		return err
	}
	var fnErr error
	err := s.readTx(ctx, func(tx pgx.Tx) error {
		pk, err := conversationPK(ctx, tx, f.Namespace, f.Conversation, false)
		if err != nil {
			return err
		}
		queries := []struct{ kind, sql string }{
			{strata.KindTurn, `SELECT v.seq, 0, v.seq, '', v.dim, v.version, v.vec FROM turn_vectors v WHERE ` + vectorsIn},
			{strata.KindSummary, `SELECT n.first_seq, n.level, n.last_seq, n.id, v.dim, v.version, v.vec FROM node_vectors v
				JOIN nodes n ON n.pk = v.node WHERE ` + vectorsIn},
		}
		for _, q := range queries {
			if f.Kind != "" && f.Kind != q.kind {
				continue
			}
			rows, err := tx.Query(ctx, q.sql, pk, f.Space.Model, f.Space.Dim, f.Since)
			if err != nil {
				return err
			}
			for rows.Next() {
				var x strata.Vector
				var v pgvector.Vector
				if err := rows.Scan(&x.Seq, &x.Level, &x.LastSeq, &x.Node, &x.Dim, &x.Version, &v); err != nil {
					rows.Close()
					return err
				}
				x.Values = v.Slice()
				if len(x.Values) != x.Dim {
					rows.Close()
					return fmt.Errorf("a vector of %d values is stored with dimension %d", len(x.Values), x.Dim)
				}
				if err := fn(x); err != nil {
					rows.Close()
					fnErr = err
					return err
				}
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil && fnErr != nil && errors.Is(err, fnErr) {
		return fnErr
	}
	return wrap(fmt.Sprintf("vectors of %q", f.Conversation), err)
}

// VectorVersion returns how far the conversation's vectors have changed;
// see strata.VectorStore.
func (s *Store) VectorVersion(ctx context.Context, namespace, conversation string) (strata.VectorVersion, error) {
	var v strata.VectorVersion
	err := s.pool.QueryRow(ctx, `SELECT coalesce(v.version, 0), coalesce(v.turns_removed, 0), coalesce(v.nodes_removed, 0)
		FROM conversations c LEFT JOIN vector_state v ON v.conversation = c.pk
		WHERE c.namespace = $1 AND c.id = $2`, namespace, conversation).Scan(&v.Version, &v.TurnsRemoved, &v.NodesRemoved)
	if errors.Is(err, pgx.ErrNoRows) {
		return v, notFound(namespace, conversation)
	}
	if err != nil {
		return v, fmt.Errorf("postgres: vector version of %q: %w", conversation, err)
	}
	return v, nil
}

// DeleteEmbeddings removes vectors outside keep; see strata.VectorStore.
func (s *Store) DeleteEmbeddings(ctx context.Context, namespace, conversation string, keep strata.EmbedSpace) (int64, error) {
	var total int64
	err := s.tx(ctx, func(tx pgx.Tx) error {
		var pks []int64
		if conversation != "" {
			pk, err := conversationPK(ctx, tx, namespace, conversation, true)
			if err != nil {
				return err
			}
			pks = append(pks, pk)
		} else {
			rows, err := tx.Query(ctx, `SELECT pk FROM conversations WHERE namespace = $1 ORDER BY pk FOR UPDATE`, namespace)
			if err != nil {
				return err
			}
			if pks, err = pgx.CollectRows(rows, pgx.RowTo[int64]); err != nil {
				return err
			}
		}
		// A kept vector has keep's model and, unless keep.Dim is 0, its
		// dimension; with no model nothing is kept (models are never empty).
		const others = ` WHERE conversation = $1 AND NOT (model = $2 AND ($3 = 0 OR dim = $3))`
		for _, pk := range pks {
			tag, err := tx.Exec(ctx, `DELETE FROM turn_vectors`+others, pk, keep.Model, keep.Dim)
			if err != nil {
				return err
			}
			turns := tag.RowsAffected()
			// node_vectors has a trigger that records its removals; turn
			// vectors, a hundred times as many, are recorded once here.
			tag, err = tx.Exec(ctx, `DELETE FROM node_vectors`+others, pk, keep.Model, keep.Dim)
			if err != nil {
				return err
			}
			if turns > 0 {
				if _, err := tx.Exec(ctx, `UPDATE vector_state SET version = version + 1, turns_removed = version + 1
					WHERE conversation = $1`, pk); err != nil {
					return err
				}
			}
			total += turns + tag.RowsAffected()
		}
		return nil
	})
	if err != nil {
		return 0, wrap("delete embeddings", err)
	}
	return total, nil
}

// VectorCounts counts embeddable items and stored vectors per
// conversation and space; see strata.VectorStore.
func (s *Store) VectorCounts(ctx context.Context, namespace, conversation string) ([]strata.VectorCounts, error) {
	out := []strata.VectorCounts{}
	err := s.readTx(ctx, func(tx pgx.Tx) error {
		if conversation != "" {
			if _, err := conversationPK(ctx, tx, namespace, conversation, false); err != nil {
				return err
			}
		}
		// Expired turns are the turns of the expiry records; pinned turns of
		// an expired span keep their content and are not among them.
		rows, err := tx.Query(ctx, `SELECT c.pk, c.id,
				c.turns - (SELECT coalesce(sum(e.turns), 0) FROM expiries e WHERE e.conversation = c.pk),
				(SELECT count(*) FROM nodes n WHERE n.conversation = c.pk AND NOT n.pending)
			FROM conversations c WHERE c.namespace = $1 AND ($2 = '' OR c.id = $2) ORDER BY c.id COLLATE "C"`,
			namespace, conversation)
		if err != nil {
			return err
		}
		var pks []int64
		for rows.Next() {
			var vc strata.VectorCounts
			var pk int64
			if err := rows.Scan(&pk, &vc.Conversation, &vc.Turns, &vc.Nodes); err != nil {
				rows.Close()
				return err
			}
			vc.Spaces = []strata.SpaceCount{}
			out = append(out, vc)
			pks = append(pks, pk)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for i, pk := range pks {
			rows, err := tx.Query(ctx, `SELECT model, dim, sum(turns), sum(nodes) FROM (
					SELECT model, dim, count(*) AS turns, 0 AS nodes FROM turn_vectors WHERE conversation = $1 GROUP BY model, dim
					UNION ALL
					SELECT model, dim, 0, count(*) FROM node_vectors WHERE conversation = $1 GROUP BY model, dim) x
				GROUP BY model, dim ORDER BY model COLLATE "C", dim`, pk)
			if err != nil {
				return err
			}
			for rows.Next() {
				var sc strata.SpaceCount
				if err := rows.Scan(&sc.Space.Model, &sc.Space.Dim, &sc.Turns, &sc.Nodes); err != nil {
					rows.Close()
					return err
				}
				out[i].Spaces = append(out[i].Spaces, sc)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, wrap("vector counts", err)
	}
	return out, nil
}
