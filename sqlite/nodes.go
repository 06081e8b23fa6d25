package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/strata-memory/strata"
)

// nodeCols are the columns scanNode reads, for a nodes table aliased n
// joined with its conversations row aliased c.
const nodeCols = `n.id, c.id, n.level, n.first_seq, n.last_seq, n.start, n."end", n.children, n.summary,
	n.facts, n.themes, n.source_tokens, n.tokens, n.method, n.status, n.fallback, n.created, n.derived, n.tier,
	n.key, n.aggregates, n.pending, n.model, n.rejected,
	n.cold_at, n.conversation`

// upsertNode stores a node, replacing the conversation's node of the same
// id, and returns its row key.
const upsertNode = `INSERT INTO nodes (id, conversation, level, first_seq, last_seq, start, "end",
	children, summary, facts, themes, source_tokens, tokens, method, status, fallback, created, derived,
	key, aggregates, pending, model, rejected)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
	ON CONFLICT (conversation, id) DO UPDATE SET
		level = excluded.level, first_seq = excluded.first_seq, last_seq = excluded.last_seq,
		start = excluded.start, "end" = excluded."end", children = excluded.children,
		summary = excluded.summary, facts = excluded.facts, themes = excluded.themes,
		source_tokens = excluded.source_tokens, tokens = excluded.tokens, method = excluded.method,
		status = excluded.status, fallback = excluded.fallback, created = excluded.created,
		derived = excluded.derived, key = excluded.key, aggregates = excluded.aggregates,
		pending = excluded.pending, model = excluded.model, rejected = excluded.rejected
	RETURNING pk`

// insertNode stores a node known to be new.
const insertNode = `INSERT INTO nodes (id, conversation, level, first_seq, last_seq, start, "end",
	children, summary, facts, themes, source_tokens, tokens, method, status, fallback, created, derived,
	key, aggregates, pending, model, rejected)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// PutNodes stores nodes of one conversation in one transaction, replacing
// any node of the conversation with the same ID (and its index entry).
// ENOTFOUND if the conversation does not exist; a node without an ID, or
// whose Conversation names another conversation, is EINVALID (an empty
// Conversation is the conversation argument).
func (s *Store) PutNodes(ctx context.Context, namespace, conversation string, nodes []strata.Node) error {
	enc, err := encodeNodes(conversation, nodes)
	if err != nil {
		return err
	}
	fail := func(err error) error { return fmt.Errorf("sqlite: put nodes of %q: %w", conversation, err) }
	tx, pk, err := s.beginIn(ctx, s.w, namespace, conversation, fail)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if len(nodes) == 0 {
		return nil
	}
	if _, err := putNodes(ctx, tx, s.text, s.fts, namespace, pk, nodes, enc); err != nil {
		return fail(err)
	}
	if err := tx.Commit(); err != nil {
		return fail(err)
	}
	return nil
}

// encodedNode holds a node's columns that need encoding.
type encodedNode struct{ start, end, created, children, facts, themes, aggregates, rejected any }

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
			e.aggregates = string(b)
		}
		if n.Rejected != nil {
			b, err := json.Marshal(n.Rejected)
			if err != nil {
				return nil, strata.Errorf(strata.EINVALID, "nodes[%d] (%s): rejected: %v", i, n.ID, err)
			}
			e.rejected = string(b)
		}
	}
	return enc, nil
}

// putNodes writes nodes of conversation pk in tx, replacing those of the
// same ID, and keeps the index of summaries in step. It returns how many
// distinct IDs were not stored before. Texts are written through codec (see
// textcodec.go); a node whose summary changes loses its vectors.
func putNodes(ctx context.Context, tx *sql.Tx, codec *textCodec, form ftsForm, namespace string, pk int64, nodes []strata.Node, enc []encodedNode) (int, error) {
	up, err := tx.PrepareContext(ctx, upsertNode)
	if err != nil {
		return 0, err
	}
	defer up.Close()
	ins, err := tx.PrepareContext(ctx, insertNode)
	if err != nil {
		return 0, err
	}
	defer ins.Close()
	// A node being replaced is unindexed first, with the FTS5 'delete'
	// command and the values it was indexed with (the index is
	// contentless: it cannot look them up itself). The rows being
	// replaced are read in one query.
	olds, err := storedNodes(ctx, tx, codec, pk, nodes)
	if err != nil {
		return 0, err
	}
	replaced := make([]string, 0, len(olds))
	for id := range olds {
		replaced = append(replaced, id)
	}
	if err := unframeParents(ctx, tx, codec, pk, replaced); err != nil {
		return 0, err
	}
	if err := checkOverlaps(ctx, tx, pk, nodes); err != nil {
		return 0, err
	}
	del, err := tx.PrepareContext(ctx, `INSERT INTO nodes_fts (nodes_fts, rowid, text, scope) VALUES ('delete', ?, ?, ?)`)
	if err != nil {
		return 0, err
	}
	defer del.Close()
	fts, err := tx.PrepareContext(ctx, `INSERT INTO nodes_fts (rowid, text, scope) VALUES (?, ?, ?)`)
	if err != nil {
		return 0, err
	}
	defer fts.Close()
	sc := scope(pk, namespace)
	// Rows first, index changes after: an upsert opens a savepoint, and a
	// savepoint makes FTS5 flush its pending entries, so interleaving them
	// would flush the index once per node.
	rowCtx := context.WithoutCancel(ctx) // see AppendTurns
	made, unindex, index, err := writeNodeRows(ctx, tx, up, ins, codec, pk, nodes, enc, olds)
	if err != nil {
		return 0, err
	}
	for _, c := range unindex {
		if _, err := del.ExecContext(rowCtx, c.rowid, form.text(c.text), sc); err != nil {
			return 0, fmt.Errorf("unindexing node %q: %w", c.id, err)
		}
	}
	for _, c := range index {
		if c.id == "" {
			continue
		}
		if _, err := fts.ExecContext(rowCtx, c.rowid, form.text(c.text), sc); err != nil {
			return 0, fmt.Errorf("indexing node %q: %w", c.id, err)
		}
	}
	return made, nil
}

// An ftsChange is a summary to add to nodes_fts or remove from it; one of
// id "" is dropped.
type ftsChange struct {
	rowid int64
	text  string
	id    string
}

// writeNodeRows writes the rows of nodes of conversation pk with the
// statements up (replacing the stored ones in olds) and ins (new ones),
// and returns how many IDs were new and the index changes to make.
func writeNodeRows(ctx context.Context, tx *sql.Tx, up, ins *sql.Stmt, codec *textCodec, pk int64, nodes []strata.Node, enc []encodedNode, olds map[string]storedNode) (made int, unindex, index []ftsChange, err error) {
	pending := map[int64]int{}           // rowid -> its entry in index, for a node put twice in one call
	rowCtx := context.WithoutCancel(ctx) // see AppendTurns
	for i := range nodes {
		if err := ctx.Err(); err != nil {
			return 0, nil, nil, err
		}
		n, e := &nodes[i], &enc[i]
		if o, ok := olds[n.ID]; ok && !o.derived {
			if j, ok := pending[o.pk]; ok {
				index[j].id = "" // put earlier in this call, never indexed: drop that entry
				delete(pending, o.pk)
			} else {
				unindex = append(unindex, ftsChange{o.pk, o.summary, n.ID})
			}
		}
		args := []any{n.ID, pk, n.Level, n.FirstSeq, n.LastSeq, e.start, e.end,
			e.children, codec.column(n.Summary), codec.nullable(e.facts, false), codec.nullable(e.themes, false), n.SourceTokens, n.Tokens, n.Method, n.Status,
			n.Fallback, e.created, n.Derived, n.Key, e.aggregates, n.Pending, n.Model, e.rejected}
		var rowid int64
		if _, ok := olds[n.ID]; !ok {
			made++
		}
		if _, ok := olds[n.ID]; ok {
			err = up.QueryRowContext(rowCtx, args...).Scan(&rowid)
		} else {
			// A new node, the common case: a plain insert costs less
			// than the upsert's RETURNING.
			var res sql.Result
			if res, err = ins.ExecContext(rowCtx, args...); err == nil {
				rowid, err = res.LastInsertId()
			}
		}
		if err != nil {
			return 0, nil, nil, fmt.Errorf("node %q: %w", n.ID, err)
		}
		if o, ok := olds[n.ID]; ok && o.summary != n.Summary {
			// A vector goes with its summary's words.
			if _, err := tx.ExecContext(rowCtx, `DELETE FROM node_vectors WHERE node = ?`, rowid); err != nil {
				return 0, nil, nil, fmt.Errorf("node %q: %w", n.ID, err)
			}
		}
		olds[n.ID] = storedNode{pk: rowid, summary: n.Summary, derived: n.Derived} // what a second put of the ID in this call replaces
		if !n.Derived {
			pending[rowid] = len(index)
			index = append(index, ftsChange{rowid, n.Summary, n.ID})
		}
	}
	return made, unindex, index, nil
}

// checkOverlaps refuses, with ECONFLICT, a node whose span meets that of
// a stored node of its level with another id: two nodes would then cover
// one turn. A rollup that read the pyramid before another process changed
// it gets this error instead of writing a second node for a span, and
// reads again. Per level it reads the stored nodes that end at or after the
// batch's first turn, which are few: nodes are written at the end.
func checkOverlaps(ctx context.Context, tx *sql.Tx, pk int64, nodes []strata.Node) error {
	type bounds struct{ first, last int64 }
	levels := map[int]*bounds{}
	ids := make(map[string]bool, len(nodes))
	for i := range nodes {
		n := &nodes[i]
		ids[n.ID] = true
		b, ok := levels[n.Level]
		if !ok {
			levels[n.Level] = &bounds{n.FirstSeq, n.LastSeq}
			continue
		}
		b.first, b.last = min(b.first, n.FirstSeq), max(b.last, n.LastSeq)
	}
	for lvl, b := range levels {
		rows, err := tx.QueryContext(ctx, `SELECT id, first_seq, last_seq FROM nodes INDEXED BY nodes_conversation_level_last
			WHERE conversation = ? AND level = ? AND last_seq >= ? AND first_seq <= ?`, pk, lvl, b.first, b.last)
		if err != nil {
			return err
		}
		type stored struct {
			id          string
			first, last int64
		}
		var hit []stored
		for rows.Next() {
			var x stored
			if err := rows.Scan(&x.id, &x.first, &x.last); err != nil {
				rows.Close()
				return err
			}
			if !ids[x.id] {
				hit = append(hit, x)
			}
		}
		err = rows.Err()
		rows.Close()
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

// storedNode is what PutNodes needs of a node row it replaces.
type storedNode struct {
	pk      int64
	summary string // as written (and indexed, unless derived)
	derived bool
}

// storedNodes returns the stored rows of the conversation's nodes that
// share an ID with nodes, by ID, their summaries read through c.
func storedNodes(ctx context.Context, tx *sql.Tx, c *textCodec, conv int64, nodes []strata.Node) (map[string]storedNode, error) {
	out := make(map[string]storedNode, len(nodes))
	// IDs go to SQLite as a JSON array, which cannot carry invalid UTF-8
	// exactly: those few are looked up one by one.
	ids := make([]string, 0, len(nodes))
	for i := range nodes {
		id := nodes[i].ID
		if utf8.ValidString(id) {
			ids = append(ids, id)
			continue
		}
		var n storedNode
		ref := nodeRef{conv: conv}
		switch err := tx.QueryRowContext(ctx, `SELECT pk, summary, derived, children FROM nodes WHERE conversation = ? AND id = ?`,
			conv, id).Scan(&n.pk, &n.summary, &n.derived, &ref.children); {
		case err == sql.ErrNoRows:
		case err != nil:
			return nil, fmt.Errorf("node %q: %w", id, err)
		default:
			if n.summary, err = c.nodeText(ctx, tx, n.summary, ref); err != nil {
				return nil, fmt.Errorf("node %q: %w", id, err)
			}
			out[id] = n
		}
	}
	b, err := json.Marshal(ids)
	if err != nil {
		return nil, strata.Errorf(strata.EINVALID, "node ids: %v", err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT id, pk, summary, derived, children FROM nodes
		WHERE conversation = ? AND id IN (SELECT value FROM json_each(?))`, conv, string(b))
	if err != nil {
		return nil, err
	}
	type read struct {
		id  string
		n   storedNode
		ref nodeRef
	}
	var got []read
	for rows.Next() {
		r := read{ref: nodeRef{conv: conv}}
		if err := rows.Scan(&r.id, &r.n.pk, &r.n.summary, &r.n.derived, &r.ref.children); err != nil {
			rows.Close()
			return nil, err
		}
		got = append(got, r)
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		return nil, err
	}
	// Expanded once every row is read: a frame against its children
	// reads them.
	for _, r := range got {
		if r.n.summary, err = c.nodeText(ctx, tx, r.n.summary, r.ref); err != nil {
			return nil, fmt.Errorf("node %q: %w", r.id, err)
		}
		out[r.id] = r.n
	}
	return out, nil
}

// factsColumn is a node's facts as stored: a JSON array whose elements are
// the facts, except that a fact found in the summary (extractive facts are
// its sentences) is stored as its byte range there, [offset, length],
// instead of a second copy of the text.
func factsColumn(summary string, facts []string) any {
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
	return string(b)
}

// decodeFacts reverses factsColumn.
func decodeFacts(summary string, col sql.NullString) ([]string, error) {
	if !col.Valid {
		return nil, nil
	}
	if facts, ok := fastFacts(summary, col.String); ok {
		return facts, nil
	}
	var elems []json.RawMessage
	if err := json.Unmarshal([]byte(col.String), &elems); err != nil {
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

// jsonList returns a string list as JSON text, or NULL if it is empty.
func jsonList(l []string) any {
	if len(l) == 0 {
		return nil
	}
	b, _ := json.Marshal(l) // a []string always marshals
	return string(b)
}

// Nodes returns the nodes that match f, ordered by level, then by first
// seq (the whole order reversed if f.Newest). f.Conversation may be empty
// only when f.IDs is set (EINVALID otherwise); ENOTFOUND if it names a
// conversation that does not exist.
func (s *Store) Nodes(ctx context.Context, f strata.NodeFilter) ([]strata.Node, error) {
	q, args, err := s.nodesQuery(ctx, f)
	if err != nil {
		return nil, err
	}
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: nodes: %w", err)
	}
	defer rows.Close()
	var raw []nodeRow
	for rows.Next() {
		r, err := scanNodeRow(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: nodes: %w", err)
		}
		raw = append(raw, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: nodes: %w", err)
	}
	// Texts are expanded once the rows are closed: a frame against a
	// node's children reads them, and with every connection of the read
	// pool held by a read like this one, it would wait for ever.
	rows.Close()
	out := make([]strata.Node, len(raw))
	for i, r := range raw {
		if out[i], err = finishNode(ctx, s.text, s.r, r); err != nil {
			return nil, fmt.Errorf("sqlite: nodes: %w", err)
		}
	}
	return out, nil
}

// nodesQuery returns the query of Nodes for f and its arguments.
func (s *Store) nodesQuery(ctx context.Context, f strata.NodeFilter) (string, []any, error) {
	var q strings.Builder
	var args []any
	switch {
	case f.Conversation != "":
		pk, err := conversationPK(ctx, s.r, f.Namespace, f.Conversation)
		if err != nil {
			return "", nil, err
		}
		q.WriteString(`SELECT ` + nodeCols + ` FROM nodes n JOIN conversations c ON c.pk = n.conversation
			WHERE n.conversation = ?`)
		args = append(args, pk)
	case len(f.IDs) > 0:
		q.WriteString(`SELECT ` + nodeCols + ` FROM nodes n JOIN conversations c ON c.pk = n.conversation
			WHERE c.namespace = ?`)
		args = append(args, f.Namespace)
	default:
		return "", nil, strata.Errorf(strata.EINVALID, "nodes: a conversation or node ids are required")
	}
	if len(f.IDs) > 0 {
		b, err := json.Marshal(f.IDs)
		if err != nil {
			return "", nil, strata.Errorf(strata.EINVALID, "node ids: %v", err)
		}
		q.WriteString(` AND n.id IN (SELECT value FROM json_each(?))`)
		args = append(args, string(b))
	}
	args, err := nodeConds(&q, args, f)
	if err != nil {
		return "", nil, err
	}
	// Both orders follow the index nodes_span, forwards or backwards, so a
	// LIMIT stops early instead of sorting a whole level.
	if f.Newest {
		q.WriteString(` ORDER BY n.level DESC, n.first_seq DESC, n.last_seq DESC, n.id DESC`)
	} else {
		q.WriteString(` ORDER BY n.level, n.first_seq, n.last_seq, n.id`)
	}
	if f.Limit > 0 {
		q.WriteString(` LIMIT ?`)
		args = append(args, f.Limit)
	}
	return q.String(), args, nil
}

// nodeConds writes to q the conditions of f on a node's level, tier,
// span, key and state, and returns args with their arguments.
func nodeConds(q *strings.Builder, args []any, f strata.NodeFilter) ([]any, error) {
	if f.Level > 0 {
		q.WriteString(` AND n.level = ?`)
		args = append(args, f.Level)
	}
	if len(f.Tiers) > 0 {
		codes := make([]int, 0, len(f.Tiers))
		for _, t := range f.Tiers {
			if _, err := strata.ParseTier(string(t)); err != nil {
				return nil, err
			}
			codes = append(codes, tierCode(t))
		}
		sort.Ints(codes)
		if len(codes) == 2 && codes[0] == tierHot && codes[1] == tierWarm {
			q.WriteString(` AND n.tier < 2`) // the condition of the partial index nodes_unsettled
		} else {
			b, _ := json.Marshal(codes)
			q.WriteString(` AND n.level = 1 AND n.tier IN (SELECT value FROM json_each(?))`)
			args = append(args, string(b))
		}
	}
	// Each bound is also written on the other column it implies (a span's
	// first seq is at most its last), so that the index on (level,
	// first_seq) is bounded on both sides and no query scans a whole level.
	if f.FromSeq > 0 {
		q.WriteString(` AND n.first_seq >= ? AND n.last_seq >= ?`)
		args = append(args, f.FromSeq, f.FromSeq)
	}
	if f.ToSeq > 0 {
		q.WriteString(` AND n.last_seq <= ? AND n.first_seq <= ?`)
		args = append(args, f.ToSeq, f.ToSeq)
	}
	if !f.Overlaps.Start.IsZero() || !f.Overlaps.End.IsZero() {
		// Nodes whose [start, end] meets [Overlaps.Start, Overlaps.End).
		if !f.Overlaps.End.IsZero() {
			q.WriteString(` AND n.start < ?`)
			args = append(args, f.Overlaps.End.UnixNano())
		}
		if !f.Overlaps.Start.IsZero() {
			q.WriteString(` AND n."end" >= ?`)
			args = append(args, f.Overlaps.Start.UnixNano())
		}
	}
	if f.Key != "" {
		q.WriteString(` AND n.key = ?`)
		args = append(args, f.Key)
	}
	if f.Pending {
		q.WriteString(` AND n.pending = 1`) // the condition of the partial index nodes_pending
	}
	if f.Covers > 0 {
		q.WriteString(` AND n.first_seq <= ? AND n.last_seq >= ?`)
		args = append(args, f.Covers, f.Covers)
	}
	return args, nil
}

// scanNode reads a row of nodeCols followed by extra, its texts through c
// (which reads dictionaries it lacks through q). It reads other rows for a
// frame against the node's children (derivedtext.go): a caller that may
// meet one on a connection of the read pool uses scanNodeRow and
// finishNode after closing its rows.
func scanNode(ctx context.Context, c *textCodec, q querier, row interface{ Scan(...any) error }, extra ...any) (strata.Node, error) {
	r, err := scanNodeRow(row, extra...)
	if err != nil {
		return r.n, err
	}
	return finishNode(ctx, c, q, r)
}

// nodeRow is a row of nodeCols as stored.
type nodeRow struct {
	n                       strata.Node
	start, end, created     sql.NullInt64
	children, facts, themes sql.NullString
	aggregates, rejected    sql.NullString
	ref                     nodeRef
}

// scanNodeRow reads a row of nodeCols followed by extra, leaving its
// texts and lists as stored.
func scanNodeRow(row interface{ Scan(...any) error }, extra ...any) (nodeRow, error) {
	var (
		r      nodeRow
		n      = &r.n
		tier   int
		coldAt sql.NullInt64
	)
	dest := append([]any{&n.ID, &n.Conversation, &n.Level, &n.FirstSeq, &n.LastSeq, &r.start, &r.end, &r.children, &n.Summary,
		&r.facts, &r.themes, &n.SourceTokens, &n.Tokens, &n.Method, &n.Status, &n.Fallback, &r.created, &n.Derived, &tier,
		&n.Key, &r.aggregates, &n.Pending, &n.Model, &r.rejected,
		&coldAt, &r.ref.conv}, extra...)
	if err := row.Scan(dest...); err != nil {
		return r, err
	}
	if n.Level == 1 {
		n.Tier = tierName(tier)
		n.ColdAt = fromNanos(coldAt)
	}
	r.ref.children = r.children
	return r, nil
}

// finishNode expands a node row's texts through c and decodes its lists.
func finishNode(ctx context.Context, c *textCodec, q querier, r nodeRow) (strata.Node, error) {
	n := r.n
	start, end, created := r.start, r.end, r.created
	children, facts, themes := r.children, r.facts, r.themes
	aggregates, rejected := r.aggregates, r.rejected
	var err error
	if n.Summary, err = c.nodeText(ctx, q, n.Summary, r.ref); err != nil {
		return n, fmt.Errorf("node %q: summary: %w", n.ID, err)
	}
	if facts, err = c.nullNodeText(ctx, q, facts, r.ref); err != nil {
		return n, fmt.Errorf("node %q: facts: %w", n.ID, err)
	}
	if themes, err = c.nullNodeText(ctx, q, themes, r.ref); err != nil {
		return n, fmt.Errorf("node %q: themes: %w", n.ID, err)
	}
	n.Start, n.End, n.Created = fromNanos(start), fromNanos(end), fromNanos(created)
	for _, c := range []struct {
		col  sql.NullString
		dst  *[]string
		name string
	}{{children, &n.Children, "children"}, {themes, &n.Themes, "themes"}} {
		if c.col.Valid {
			if l, ok := fastStrings(c.col.String); ok {
				*c.dst = l
				continue
			}
		}
		if err := unmarshalColumn(c.col, c.dst); err != nil {
			return n, fmt.Errorf("node %q: %s: %w", n.ID, c.name, err)
		}
	}
	if aggregates.Valid {
		n.Aggregates = &strata.Aggregates{}
		if err := json.Unmarshal([]byte(aggregates.String), n.Aggregates); err != nil {
			return n, fmt.Errorf("node %q: aggregates: %w", n.ID, err)
		}
	}
	if rejected.Valid {
		n.Rejected = &strata.RejectedReply{}
		if err := json.Unmarshal([]byte(rejected.String), n.Rejected); err != nil {
			return n, fmt.Errorf("node %q: rejected: %w", n.ID, err)
		}
	}
	if n.Facts, err = decodeFacts(n.Summary, facts); err != nil {
		return n, fmt.Errorf("node %q: facts: %w", n.ID, err)
	}
	return n, nil
}
