package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/internal/spanfmt"
)

// Tiers as stored in turns.tier and nodes.tier: the codes every store
// shares (spanfmt).
const (
	tierHot     = spanfmt.TierHot
	tierWarm    = spanfmt.TierWarm
	tierCold    = spanfmt.TierCold
	tierExpired = spanfmt.TierExpired
)

var (
	tierCode = spanfmt.TierCode
	tierName = spanfmt.TierName
)

// nodeCols are the columns scanNode reads, for a nodes table aliased n
// joined with its conversations row aliased c.
const nodeCols = `n.id, c.id, n.level, n.first_seq, n.last_seq, n.start, n."end", n.children, n.summary,
	n.facts, n.themes, n.source_tokens, n.tokens, n.method, n.status, n.fallback, n.created, n.derived, n.tier,
	n.key, n.aggregates, n.pending, n.model, n.rejected, n.cold_at`

// upsertNode stores a node of conversation $2, replacing the one of the
// same id, and says whether it was new.
const upsertNode = `INSERT INTO nodes (id, conversation, level, first_seq, last_seq, start, "end",
	children, summary, facts, themes, source_tokens, tokens, method, status, fallback, created, derived,
	key, aggregates, pending, model, rejected)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23)
	ON CONFLICT (conversation, id) DO UPDATE SET
		level = excluded.level, first_seq = excluded.first_seq, last_seq = excluded.last_seq,
		start = excluded.start, "end" = excluded."end", children = excluded.children,
		summary = excluded.summary, facts = excluded.facts, themes = excluded.themes,
		source_tokens = excluded.source_tokens, tokens = excluded.tokens, method = excluded.method,
		status = excluded.status, fallback = excluded.fallback, created = excluded.created,
		derived = excluded.derived, key = excluded.key, aggregates = excluded.aggregates,
		pending = excluded.pending, model = excluded.model, rejected = excluded.rejected
	RETURNING (xmax = 0)`

// indexNode replaces the index rows of node $2 of conversation $1 with
// the parts $3 (none for a derived node) and their lengths in words.
const (
	unindexNode = `DELETE FROM node_index WHERE node = (SELECT pk FROM nodes WHERE conversation = $1 AND id = $2)`
	indexNode   = `INSERT INTO node_index (node, part, conversation, fts, words)
		SELECT n.pk, u.part - 1, $1, to_tsvector('strata_text', u.words), strata_fts_length(u.words)
		FROM nodes n, unnest($3::text[]) WITH ORDINALITY AS u(words, part)
		WHERE n.conversation = $1 AND n.id = $2`
)

// encodedNode holds a node's columns that need encoding.
type encodedNode struct {
	start, end, created                           *int64
	children, facts, themes, aggregates, rejected *string
	index                                         []string
}

// encodeNodes checks nodes and encodes their columns; errors are EINVALID
// and name the node.
func encodeNodes(conversation string, nodes []strata.Node) ([]encodedNode, error) {
	enc := make([]encodedNode, len(nodes))
	for i := range nodes {
		n, e := &nodes[i], &enc[i]
		if n.ID == "" {
			return nil, strata.Errorf(strata.EINVALID, "nodes[%d]: id is empty", i)
		}
		if n.Conversation != "" && n.Conversation != conversation {
			return nil, strata.Errorf(strata.EINVALID, "nodes[%d] (%s): belongs to conversation %q, not %q",
				i, n.ID, n.Conversation, conversation)
		}
		var err error
		if e.start, err = toNanos(n.Start, fmt.Sprintf("nodes[%d].start", i)); err != nil {
			return nil, err
		}
		if e.end, err = toNanos(n.End, fmt.Sprintf("nodes[%d].end", i)); err != nil {
			return nil, err
		}
		if e.created, err = toNanos(n.Created, fmt.Sprintf("nodes[%d].created", i)); err != nil {
			return nil, err
		}
		e.children, e.facts, e.themes = jsonList(n.Children), factsColumn(n.Summary, n.Facts), jsonList(n.Themes)
		if n.Aggregates != nil {
			b, err := json.Marshal(n.Aggregates)
			if err != nil {
				return nil, strata.Errorf(strata.EINVALID, "nodes[%d] (%s): aggregates: %v", i, n.ID, err)
			}
			s := string(b)
			e.aggregates = &s
		}
		if n.Rejected != nil {
			b, err := json.Marshal(n.Rejected)
			if err != nil {
				return nil, strata.Errorf(strata.EINVALID, "nodes[%d] (%s): rejected: %v", i, n.ID, err)
			}
			s := string(b)
			e.rejected = &s
		}
		if !n.Derived {
			e.index = indexParts(n.Summary)
		}
	}
	return enc, nil
}

// factsColumn is a node's facts as stored: a JSON array whose elements are
// the facts, except that a fact found in the summary (extractive facts are
// its sentences) is stored as its byte range there, [offset, length],
// instead of a second copy of the text.
func factsColumn(summary string, facts []string) *string {
	if len(facts) == 0 {
		return nil
	}
	out := make([]any, len(facts))
	for i, f := range facts {
		if at := strings.Index(summary, f); at >= 0 && f != "" {
			out[i] = [2]int{at, len(f)}
		} else {
			out[i] = f
		}
	}
	b, _ := json.Marshal(out) // strings and int pairs always marshal
	s := string(b)
	return &s
}

// decodeFacts reverses factsColumn.
func decodeFacts(summary string, col *string) ([]string, error) {
	if col == nil {
		return nil, nil
	}
	var elems []json.RawMessage
	if err := json.Unmarshal([]byte(*col), &elems); err != nil {
		return nil, err
	}
	facts := make([]string, len(elems))
	for i, e := range elems {
		if len(e) > 0 && e[0] == '"' {
			if err := json.Unmarshal(e, &facts[i]); err != nil {
				return nil, err
			}
			continue
		}
		var r [2]int
		if err := json.Unmarshal(e, &r); err != nil {
			return nil, err
		}
		if r[0] < 0 || r[1] <= 0 || r[0]+r[1] > len(summary) {
			return nil, fmt.Errorf("range %v lies outside the summary (%d bytes)", r, len(summary))
		}
		facts[i] = summary[r[0] : r[0]+r[1]]
	}
	return facts, nil
}

// PutNodes stores nodes of one conversation in one transaction, replacing
// any node of the conversation with the same ID (and its index entries);
// see strata.NodeStore.
func (s *Store) PutNodes(ctx context.Context, namespace, conversation string, nodes []strata.Node) error {
	enc, err := encodeNodes(conversation, nodes)
	if err != nil {
		return err
	}
	err = s.tx(ctx, func(tx pgx.Tx) error {
		pk, err := conversationPK(ctx, tx, namespace, conversation, true)
		if err != nil {
			return err
		}
		_, err = putNodes(ctx, tx, pk, nodes, enc)
		return err
	})
	return wrap(fmt.Sprintf("put nodes of %q", conversation), err)
}

// putNodes writes nodes of conversation pk in tx, replacing those of the
// same ID, with their index rows, in one round trip. It returns how many
// distinct IDs were not stored before.
func putNodes(ctx context.Context, tx pgx.Tx, pk int64, nodes []strata.Node, enc []encodedNode) (int, error) {
	if len(nodes) == 0 {
		return 0, nil
	}
	if err := checkOverlaps(ctx, tx, pk, nodes); err != nil {
		return 0, err
	}
	b := &pgx.Batch{}
	made := 0
	for i := range nodes {
		n, e := &nodes[i], &enc[i]
		b.Queue(upsertNode, n.ID, pk, n.Level, n.FirstSeq, n.LastSeq, e.start, e.end,
			e.children, n.Summary, e.facts, e.themes, n.SourceTokens, n.Tokens, n.Method, n.Status,
			n.Fallback, e.created, n.Derived, n.Key, e.aggregates, n.Pending, n.Model, e.rejected).
			QueryRow(func(row pgx.Row) error {
				var isNew bool
				if err := row.Scan(&isNew); err != nil {
					return fmt.Errorf("node %q: %w", n.ID, err)
				}
				if isNew {
					made++
				}
				return nil
			})
		b.Queue(unindexNode, pk, n.ID)
		if len(e.index) > 0 {
			b.Queue(indexNode, pk, n.ID, e.index)
		}
	}
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return 0, err
	}
	return made, nil
}

// checkOverlaps refuses, with ECONFLICT, a node whose span meets that of
// a stored node of its level with another id: two nodes would then cover
// one turn. A rollup that read the pyramid before another process changed
// it gets this error instead of writing a second node for a span, and
// reads again.
func checkOverlaps(ctx context.Context, tx pgx.Tx, pk int64, nodes []strata.Node) error {
	type bounds struct{ first, last int64 }
	levels := map[int]*bounds{}
	ids := make([]string, 0, len(nodes))
	for i := range nodes {
		n := &nodes[i]
		ids = append(ids, n.ID)
		b, ok := levels[n.Level]
		if !ok {
			levels[n.Level] = &bounds{n.FirstSeq, n.LastSeq}
			continue
		}
		b.first, b.last = min(b.first, n.FirstSeq), max(b.last, n.LastSeq)
	}
	for lvl, b := range levels {
		rows, err := tx.Query(ctx, `SELECT id, first_seq, last_seq FROM nodes
			WHERE conversation = $1 AND level = $2 AND last_seq >= $3 AND first_seq <= $4 AND NOT (id = ANY($5))`,
			pk, lvl, b.first, b.last, ids)
		if err != nil {
			return err
		}
		type stored struct {
			id          string
			first, last int64
		}
		hit, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (stored, error) {
			var x stored
			err := r.Scan(&x.id, &x.first, &x.last)
			return x, err
		})
		if err != nil {
			return err
		}
		for _, x := range hit {
			for i := range nodes {
				n := &nodes[i]
				if n.Level == lvl && n.FirstSeq <= x.last && n.LastSeq >= x.first {
					return strata.Errorf(strata.ECONFLICT, "node %s (level %d, turns %d-%d) overlaps stored node %s (turns %d-%d)",
						n.ID, lvl, n.FirstSeq, n.LastSeq, x.id, x.first, x.last)
				}
			}
		}
	}
	return nil
}

// Nodes returns the nodes that match f, ordered by level, then by first
// seq (the whole order reversed if f.Newest); see strata.NodeStore.
func (s *Store) Nodes(ctx context.Context, f strata.NodeFilter) ([]strata.Node, error) {
	q, args, err := s.nodesQuery(ctx, f)
	if err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: nodes: %w", err)
	}
	defer rows.Close()
	out := []strata.Node{}
	for rows.Next() {
		n, err := scanNode(rows)
		if err != nil {
			return nil, fmt.Errorf("postgres: nodes: %w", err)
		}
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: nodes: %w", err)
	}
	return out, nil
}

// nodesQuery returns the query of Nodes for f and its arguments.
func (s *Store) nodesQuery(ctx context.Context, f strata.NodeFilter) (string, []any, error) {
	var q strings.Builder
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	switch {
	case f.Conversation != "":
		pk, err := conversationPK(ctx, s.pool, f.Namespace, f.Conversation, false)
		if err != nil {
			return "", nil, err
		}
		q.WriteString(`SELECT ` + nodeCols + ` FROM nodes n JOIN conversations c ON c.pk = n.conversation
			WHERE n.conversation = ` + arg(pk))
	case len(f.IDs) > 0:
		q.WriteString(`SELECT ` + nodeCols + ` FROM nodes n JOIN conversations c ON c.pk = n.conversation
			WHERE c.namespace = ` + arg(f.Namespace))
	default:
		return "", nil, strata.Errorf(strata.EINVALID, "nodes: a conversation or node ids are required")
	}
	if len(f.IDs) > 0 {
		q.WriteString(` AND n.id = ANY(` + arg(f.IDs) + `)`)
	}
	if f.Level > 0 {
		q.WriteString(` AND n.level = ` + arg(f.Level))
	}
	if len(f.Tiers) > 0 {
		codes := make([]int32, 0, len(f.Tiers))
		for _, t := range f.Tiers {
			if _, err := strata.ParseTier(string(t)); err != nil {
				return "", nil, err
			}
			codes = append(codes, int32(tierCode(t)))
		}
		slices.Sort(codes)
		q.WriteString(` AND n.level = 1 AND n.tier = ANY(` + arg(codes) + `)`)
	}
	if f.FromSeq > 0 {
		q.WriteString(` AND n.first_seq >= ` + arg(f.FromSeq))
	}
	if f.ToSeq > 0 {
		q.WriteString(` AND n.last_seq <= ` + arg(f.ToSeq))
	}
	if !f.Overlaps.End.IsZero() {
		q.WriteString(` AND n.start < ` + arg(f.Overlaps.End.UnixNano()))
	}
	if !f.Overlaps.Start.IsZero() {
		q.WriteString(` AND n."end" >= ` + arg(f.Overlaps.Start.UnixNano()))
	}
	if f.Key != "" {
		q.WriteString(` AND n.key = ` + arg(f.Key))
	}
	if f.Pending {
		q.WriteString(` AND n.pending`) // the condition of the partial index nodes_pending
	}
	if f.Covers > 0 {
		c := arg(f.Covers)
		q.WriteString(` AND n.first_seq <= ` + c + ` AND n.last_seq >= ` + c)
	}
	if f.Newest {
		q.WriteString(` ORDER BY n.level DESC, n.first_seq DESC, n.last_seq DESC, n.id COLLATE "C" DESC`)
	} else {
		q.WriteString(` ORDER BY n.level, n.first_seq, n.last_seq, n.id COLLATE "C"`)
	}
	if f.Limit > 0 {
		q.WriteString(` LIMIT ` + arg(f.Limit))
	}
	return q.String(), args, nil
}

// scanNode reads a row of nodeCols followed by extra.
func scanNode(row pgx.Row, extra ...any) (strata.Node, error) {
	var (
		n                       strata.Node
		start, end, created     *int64
		children, facts, themes *string
		aggregates, rejected    *string
		tier                    int
		coldAt                  *int64
	)
	dest := append([]any{&n.ID, &n.Conversation, &n.Level, &n.FirstSeq, &n.LastSeq, &start, &end, &children, &n.Summary,
		&facts, &themes, &n.SourceTokens, &n.Tokens, &n.Method, &n.Status, &n.Fallback, &created, &n.Derived, &tier,
		&n.Key, &aggregates, &n.Pending, &n.Model, &rejected, &coldAt}, extra...)
	if err := row.Scan(dest...); err != nil {
		return n, err
	}
	if n.Level == 1 {
		n.Tier = tierName(tier)
		n.ColdAt = fromNanos(coldAt)
	}
	n.Start, n.End, n.Created = fromNanos(start), fromNanos(end), fromNanos(created)
	if err := unmarshalColumn(children, &n.Children); err != nil {
		return n, fmt.Errorf("node %q: children: %w", n.ID, err)
	}
	if err := unmarshalColumn(themes, &n.Themes); err != nil {
		return n, fmt.Errorf("node %q: themes: %w", n.ID, err)
	}
	if aggregates != nil {
		n.Aggregates = &strata.Aggregates{}
		if err := json.Unmarshal([]byte(*aggregates), n.Aggregates); err != nil {
			return n, fmt.Errorf("node %q: aggregates: %w", n.ID, err)
		}
	}
	if rejected != nil {
		n.Rejected = &strata.RejectedReply{}
		if err := json.Unmarshal([]byte(*rejected), n.Rejected); err != nil {
			return n, fmt.Errorf("node %q: rejected: %w", n.ID, err)
		}
	}
	var err error
	if n.Facts, err = decodeFacts(n.Summary, facts); err != nil {
		return n, fmt.Errorf("node %q: facts: %w", n.ID, err)
	}
	return n, nil
}
