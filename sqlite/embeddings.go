package sqlite

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/strata-memory/strata"
)

// Vectors are stored one per item (turn or node) and model, in
// turn_vectors and node_vectors, as little-endian float32 BLOBs with their
// model and dimension; vector_state keeps each conversation's
// strata.VectorVersion (see migration 10).

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
	fail := func(err error) error { return unembeddedErr(f.Conversation, err) }
	tx, pk, err := s.beginIn(ctx, s.r, f.Namespace, f.Conversation, fail)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	after := strata.EmbedRef{Level: -1}
	if f.After != nil {
		after = *f.After
	}
	out := []strata.EmbedSource{}
	if f.Kind != strata.KindSummary && after.Level <= 0 {
		if out, err = s.unembeddedTurns(ctx, tx, pk, f, after, limit, out); err != nil {
			return nil, err
		}
	}
	if f.Kind != strata.KindTurn && len(out) < limit {
		if out, err = s.unembeddedNodes(ctx, tx, pk, f, after, limit, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// unembeddedErr wraps an internal error of Unembedded.
func unembeddedErr(conversation string, err error) error {
	return fmt.Errorf("sqlite: unembedded of %q: %w", conversation, err)
}

// unembeddedTurns appends to out the turns of conversation pk after
// after without a vector of f's space, up to limit sources in all.
func (s *Store) unembeddedTurns(ctx context.Context, tx *sql.Tx, pk int64, f strata.EmbedFilter, after strata.EmbedRef, limit int, out []strata.EmbedSource) ([]strata.EmbedSource, error) {
	from := int64(0)
	if after.Level == 0 {
		from = after.Seq
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+turnCols+`, t.tier, t.span FROM turns t
		WHERE t.conversation = ? AND t.seq > ? AND t.tier <> ?
		  AND NOT EXISTS (SELECT 1 FROM turn_vectors v WHERE v.conversation = t.conversation AND v.seq = t.seq
		                  AND v.model = ? AND (? = 0 OR v.dim = ?))
		ORDER BY t.seq LIMIT ?`, pk, from, tierExpired, f.Space.Model, f.Space.Dim, f.Space.Dim, limit)
	if err != nil {
		return nil, unembeddedErr(f.Conversation, err)
	}
	turns, stubs, err := scanStubbed(rows, false)
	if err != nil {
		return nil, unembeddedErr(f.Conversation, err)
	}
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
func (s *Store) unembeddedNodes(ctx context.Context, tx *sql.Tx, pk int64, f strata.EmbedFilter, after strata.EmbedRef, limit int, out []strata.EmbedSource) ([]strata.EmbedSource, error) {
	lvl, seq, id := max(after.Level, 0), after.Seq, after.Node
	if after.Level <= 0 {
		seq, id = 0, ""
	}
	rows, err := tx.QueryContext(ctx, `SELECT n.id, n.level, n.first_seq, n.summary, n.children FROM nodes n
		WHERE n.conversation = ? AND n.pending = 0 AND (n.level, n.first_seq, n.id) > (?, ?, ?)
		  AND NOT EXISTS (SELECT 1 FROM node_vectors v WHERE v.node = n.pk AND v.model = ? AND (? = 0 OR v.dim = ?))
		ORDER BY n.level, n.first_seq, n.id LIMIT ?`,
		pk, lvl, seq, id, f.Space.Model, f.Space.Dim, f.Space.Dim, limit-len(out))
	if err != nil {
		return nil, unembeddedErr(f.Conversation, err)
	}
	defer rows.Close()
	var srcs []strata.EmbedSource
	var refs []nodeRef
	for rows.Next() {
		var src strata.EmbedSource
		ref := nodeRef{conv: pk}
		if err := rows.Scan(&src.Node, &src.Level, &src.Seq, &src.Text, &ref.children); err != nil {
			return nil, unembeddedErr(f.Conversation, err)
		}
		srcs, refs = append(srcs, src), append(refs, ref)
	}
	if err := rows.Err(); err != nil {
		return nil, unembeddedErr(f.Conversation, err)
	}
	rows.Close()
	// Expanded once every row is read: a frame against its children
	// reads them.
	for i, src := range srcs {
		if src.Text, err = s.text.nodeText(ctx, tx, src.Text, refs[i]); err != nil {
			return nil, unembeddedErr(f.Conversation, err)
		}
		out = append(out, src)
	}
	return out, nil
}

// PutEmbeddings stores vectors of the conversation's turns and nodes in
// one transaction; see strata.VectorStore.
func (s *Store) PutEmbeddings(ctx context.Context, namespace, conversation string, space strata.EmbedSpace, es []strata.Embedding) error {
	if err := strata.CheckEmbeddings(space, es); err != nil {
		return err
	}
	blobs := make([][]byte, len(es))
	for i, e := range es {
		blobs[i] = encodeVector(e.Vector)
	}
	fail := func(err error) error { return fmt.Errorf("sqlite: put embeddings of %q: %w", conversation, err) }

	tx, pk, err := s.beginIn(ctx, s.w, namespace, conversation, fail)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if len(es) == 0 {
		return nil
	}
	var version int64
	if err := tx.QueryRowContext(ctx, `INSERT INTO vector_state (conversation, version) VALUES (?, 1)
		ON CONFLICT (conversation) DO UPDATE SET version = version + 1 RETURNING version`, pk).Scan(&version); err != nil {
		return fail(err)
	}
	turn, err := tx.PrepareContext(ctx, `SELECT 1 FROM turns WHERE conversation = ? AND seq = ?`)
	if err != nil {
		return fail(err)
	}
	defer turn.Close()
	node, err := tx.PrepareContext(ctx, `SELECT pk FROM nodes WHERE conversation = ? AND id = ?`)
	if err != nil {
		return fail(err)
	}
	defer node.Close()
	putTurn, err := tx.PrepareContext(ctx, `INSERT INTO turn_vectors (conversation, seq, model, dim, version, vec)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (conversation, seq, model) DO UPDATE SET
		dim = excluded.dim, version = excluded.version, vec = excluded.vec`)
	if err != nil {
		return fail(err)
	}
	defer putTurn.Close()
	putNode, err := tx.PrepareContext(ctx, `INSERT INTO node_vectors (node, conversation, model, dim, version, vec)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (node, model) DO UPDATE SET
		dim = excluded.dim, version = excluded.version, vec = excluded.vec`)
	if err != nil {
		return fail(err)
	}
	defer putNode.Close()
	for i, e := range es {
		if e.Node == "" {
			var one int
			switch err := turn.QueryRowContext(ctx, pk, e.Seq).Scan(&one); {
			case errors.Is(err, sql.ErrNoRows):
				return strata.Errorf(strata.EINVALID, "put embeddings: embeddings[%d].seq: conversation %q has no turn %d", i, conversation, e.Seq)
			case err != nil:
				return fail(err)
			}
			if _, err := putTurn.ExecContext(ctx, pk, e.Seq, space.Model, space.Dim, version, blobs[i]); err != nil {
				return fail(fmt.Errorf("turn %d: %w", e.Seq, err))
			}
			continue
		}
		var npk int64
		switch err := node.QueryRowContext(ctx, pk, e.Node).Scan(&npk); {
		case errors.Is(err, sql.ErrNoRows):
			return strata.Errorf(strata.EINVALID, "put embeddings: embeddings[%d].node: conversation %q has no node %q", i, conversation, e.Node)
		case err != nil:
			return fail(err)
		}
		if _, err := putNode.ExecContext(ctx, npk, pk, space.Model, space.Dim, version, blobs[i]); err != nil {
			return fail(fmt.Errorf("node %q: %w", e.Node, err))
		}
	}
	if err := tx.Commit(); err != nil {
		return fail(err)
	}
	return nil
}

// vectorsIn selects the vectors of conversation ?1 in model ?2 and
// dimension ?3 (0: any) written after version ?4, from the table aliased
// v; the space index (conversation, model, dim, version) answers it.
const vectorsIn = `v.conversation = ?1 AND v.model = ?2 AND (?3 = 0 OR v.dim = ?3) AND v.version > ?4`

// CountVectors is the number of vectors Vectors would stream for f, read
// from the space index alone; see strata.VectorCounter.
func (s *Store) CountVectors(ctx context.Context, f strata.VectorFilter) (int, error) {
	if err := strata.CheckVectorFilter(f); err != nil {
		return 0, err
	}
	pk, err := conversationPK(ctx, s.r, f.Namespace, f.Conversation)
	if err != nil {
		return 0, err
	}
	total := 0
	for _, t := range []struct{ kind, table string }{{strata.KindTurn, "turn_vectors"}, {strata.KindSummary, "node_vectors"}} {
		if f.Kind != "" && f.Kind != t.kind {
			continue
		}
		var n int
		if err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM `+t.table+` v WHERE `+vectorsIn,
			pk, f.Space.Model, f.Space.Dim, f.Since).Scan(&n); err != nil {
			return 0, fmt.Errorf("sqlite: count vectors of %q: %w", f.Conversation, err)
		}
		total += n
	}
	return total, nil
}

// Vectors streams the conversation's vectors that match f from one read
// transaction; see strata.VectorStore.
func (s *Store) Vectors(ctx context.Context, f strata.VectorFilter, fn func(strata.Vector) error) error {
	if err := strata.CheckVectorFilter(f); err != nil {
		return err
	}
	fail := func(err error) error { return fmt.Errorf("sqlite: vectors of %q: %w", f.Conversation, err) }
	tx, pk, err := s.beginIn(ctx, s.r, f.Namespace, f.Conversation, fail)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	// In each table, the space index selects the rows; they come in the
	// order they were written.
	queries := []struct {
		kind, sql string
	}{
		{strata.KindTurn, `SELECT v.seq, 0, v.seq, '', v.dim, v.version, v.vec FROM turn_vectors v WHERE ` + vectorsIn},
		{strata.KindSummary, `SELECT n.first_seq, n.level, n.last_seq, n.id, v.dim, v.version, v.vec FROM node_vectors v
			JOIN nodes n ON n.pk = v.node WHERE ` + vectorsIn},
	}
	var buf []float32
	for _, q := range queries {
		if f.Kind != "" && f.Kind != q.kind {
			continue
		}
		rows, err := tx.QueryContext(ctx, q.sql, pk, f.Space.Model, f.Space.Dim, f.Since)
		if err != nil {
			return fail(err)
		}
		for rows.Next() {
			var x strata.Vector
			var raw sql.RawBytes
			if err := rows.Scan(&x.Seq, &x.Level, &x.LastSeq, &x.Node, &x.Dim, &x.Version, &raw); err != nil {
				rows.Close()
				return fail(err)
			}
			if len(raw) != 4*x.Dim {
				rows.Close()
				return fail(fmt.Errorf("a vector of %d bytes is stored with dimension %d", len(raw), x.Dim))
			}
			buf = decodeVector(buf[:0], raw)
			x.Values = buf
			if err := fn(x); err != nil {
				rows.Close()
				return err
			}
		}
		if err := rows.Err(); err != nil {
			rows.Close()
			return fail(err)
		}
		rows.Close()
	}
	return nil
}

// VectorVersion returns how far the conversation's vectors have changed;
// see strata.VectorStore.
func (s *Store) VectorVersion(ctx context.Context, namespace, conversation string) (strata.VectorVersion, error) {
	var v strata.VectorVersion
	err := s.r.QueryRowContext(ctx, `SELECT coalesce(v.version, 0), coalesce(v.turns_removed, 0), coalesce(v.nodes_removed, 0)
		FROM conversations c LEFT JOIN vector_state v ON v.conversation = c.pk
		WHERE c.namespace = ? AND c.id = ?`, namespace, conversation).Scan(&v.Version, &v.TurnsRemoved, &v.NodesRemoved)
	if errors.Is(err, sql.ErrNoRows) {
		return v, notFound(namespace, conversation)
	}
	if err != nil {
		return v, fmt.Errorf("sqlite: vector version of %q: %w", conversation, err)
	}
	return v, nil
}

// DeleteEmbeddings removes vectors outside keep; see strata.VectorStore.
func (s *Store) DeleteEmbeddings(ctx context.Context, namespace, conversation string, keep strata.EmbedSpace) (int64, error) {
	fail := func(err error) (int64, error) { return 0, fmt.Errorf("sqlite: delete embeddings: %w", err) }
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fail(err)
	}
	defer tx.Rollback()
	var pks []int64
	if conversation != "" {
		pk, err := conversationPK(ctx, tx, namespace, conversation)
		if err != nil {
			return 0, err
		}
		pks = append(pks, pk)
	} else {
		rows, err := tx.QueryContext(ctx, `SELECT pk FROM conversations WHERE namespace = ? ORDER BY pk`, namespace)
		if err != nil {
			return fail(err)
		}
		for rows.Next() {
			var pk int64
			if err := rows.Scan(&pk); err != nil {
				rows.Close()
				return fail(err)
			}
			pks = append(pks, pk)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fail(err)
		}
	}
	// A kept vector has keep's model and, unless keep.Dim is 0, its
	// dimension; with no model nothing is kept (models are never empty).
	const others = ` WHERE conversation = ? AND NOT (model = ? AND (? = 0 OR dim = ?))`
	var total int64
	for _, pk := range pks {
		res, err := tx.ExecContext(ctx, `DELETE FROM turn_vectors`+others, pk, keep.Model, keep.Dim, keep.Dim)
		if err != nil {
			return fail(err)
		}
		turns, err := res.RowsAffected()
		if err != nil {
			return fail(err)
		}
		// node_vectors has a trigger that records its removals; turn
		// vectors, a hundred times as many, are recorded once here.
		res, err = tx.ExecContext(ctx, `DELETE FROM node_vectors`+others, pk, keep.Model, keep.Dim, keep.Dim)
		if err != nil {
			return fail(err)
		}
		nodes, err := res.RowsAffected()
		if err != nil {
			return fail(err)
		}
		if turns > 0 {
			if _, err := tx.ExecContext(ctx, `UPDATE vector_state SET version = version + 1, turns_removed = version + 1
				WHERE conversation = ?`, pk); err != nil {
				return fail(err)
			}
		}
		total += turns + nodes
	}
	if err := tx.Commit(); err != nil {
		return fail(err)
	}
	return total, nil
}

// VectorCounts counts embeddable items and stored vectors per
// conversation and space; see strata.VectorStore.
func (s *Store) VectorCounts(ctx context.Context, namespace, conversation string) ([]strata.VectorCounts, error) {
	fail := func(err error) ([]strata.VectorCounts, error) {
		return nil, fmt.Errorf("sqlite: vector counts: %w", err)
	}
	tx, err := s.r.BeginTx(ctx, nil)
	if err != nil {
		return fail(err)
	}
	defer tx.Rollback()
	if conversation != "" {
		if _, err := conversationPK(ctx, tx, namespace, conversation); err != nil {
			return nil, err
		}
	}
	// Expired turns are the turns of the expiry records; pinned turns of
	// an expired span keep their content and are not among them.
	rows, err := tx.QueryContext(ctx, `SELECT c.pk, c.id,
			c.turns - (SELECT coalesce(sum(e.turns), 0) FROM expiries e WHERE e.conversation = c.pk),
			(SELECT count(*) FROM nodes n WHERE n.conversation = c.pk)
			- (SELECT count(*) FROM nodes n WHERE n.conversation = c.pk AND n.pending = 1)
		FROM conversations c WHERE c.namespace = ? AND (? = '' OR c.id = ?) ORDER BY c.id`,
		namespace, conversation, conversation)
	if err != nil {
		return fail(err)
	}
	var out []strata.VectorCounts
	var pks []int64
	for rows.Next() {
		var vc strata.VectorCounts
		var pk int64
		if err := rows.Scan(&pk, &vc.Conversation, &vc.Turns, &vc.Nodes); err != nil {
			rows.Close()
			return fail(err)
		}
		vc.Spaces = []strata.SpaceCount{}
		out = append(out, vc)
		pks = append(pks, pk)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fail(err)
	}
	for i, pk := range pks {
		rows, err := tx.QueryContext(ctx, `SELECT model, dim, sum(turns), sum(nodes) FROM (
				SELECT model, dim, count(*) AS turns, 0 AS nodes FROM turn_vectors WHERE conversation = ? GROUP BY model, dim
				UNION ALL
				SELECT model, dim, 0, count(*) FROM node_vectors WHERE conversation = ? GROUP BY model, dim)
			GROUP BY model, dim ORDER BY model, dim`, pk, pk)
		if err != nil {
			return fail(err)
		}
		for rows.Next() {
			var sc strata.SpaceCount
			if err := rows.Scan(&sc.Space.Model, &sc.Space.Dim, &sc.Turns, &sc.Nodes); err != nil {
				rows.Close()
				return fail(err)
			}
			out[i].Spaces = append(out[i].Spaces, sc)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fail(err)
		}
	}
	if out == nil {
		out = []strata.VectorCounts{}
	}
	return out, nil
}

// encodeVector returns v as little-endian float32 bytes.
func encodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// decodeVector appends the float32 values of little-endian bytes b to dst.
func decodeVector(dst []float32, b []byte) []float32 {
	for i := 0; i+4 <= len(b); i += 4 {
		dst = append(dst, math.Float32frombits(binary.LittleEndian.Uint32(b[i:])))
	}
	return dst
}
