package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/klauspost/compress/zstd"

	"github.com/strata-memory/strata"
)

// A derived node (strata.Node.Derived: a level above the first whose
// summary repeats its children's sentences) holds little text of its own:
// its summary, facts and themes are mostly copies of its children's. At a
// million synthetic turns, levels 2 and 3 hold 66 MB of such text, 32 MB
// with the store's trained dictionary, 6 MB when each node's texts are
// compressed against its children's. So Vacuum (and a server's worker)
// rewrites the texts of derived nodes as zstd frames made with a raw
// dictionary: the plain texts of the node's children, in the order of its
// children list (childrenDict). Such a frame names
// childrenDictID, which no trained dictionary takes (their ids are below
// 2^30 + 2^15), and carries its checksum like any frame.
//
// A frame against the children holds only while their texts do: before a
// node's texts change or the node is deleted, the derived nodes framed
// against it are written back with the store's own codec (unframeParents).
// Texts are compared as plain text, so re-compressing a child (Vacuum)
// changes nothing its parents depend on. Table derived_frames says whether
// a store holds any such frame, so that stores that do not pay nothing.

// childrenDictID is the dictionary id of frames made against a node's
// children.
const childrenDictID = 0x7fff_fff0

// maxChildrenDict bounds the dictionary of one node: a derived node whose
// children hold more text keeps the store's own frames.
const maxChildrenDict = 1 << 20

// nodeRef is what reading a derived node's frame needs: its conversation
// and its children column.
type nodeRef struct {
	conv     int64
	children sql.NullString
}

// frameDictID returns the dictionary id a frame names, 0 for none.
func frameDictID(v string) uint32 {
	if !compressed(v) {
		return 0
	}
	var h zstd.Header
	if err := h.Decode([]byte(v[:min(len(v), zstd.HeaderMaxSize)])); err != nil {
		return 0
	}
	return h.DictionaryID
}

// againstChildren reports whether a stored value is a frame made against
// its node's children.
func againstChildren(v string) bool { return frameDictID(v) == childrenDictID }

// nodeText returns the text a stored value of node ref holds: text for
// every frame but one made against the node's children, which it expands
// with their texts (read through q).
func (c *textCodec) nodeText(ctx context.Context, q querier, v string, ref nodeRef) (string, error) {
	if !againstChildren(v) {
		return c.text(ctx, q, v)
	}
	// The same frame under other children would be other text: the key
	// holds both.
	key := v + "\x00" + strconv.FormatInt(ref.conv, 10) + "\x00" + ref.children.String
	if t, ok := c.cached(key); ok {
		return t, nil
	}
	dict, _, err := c.childrenDict(ctx, q, ref)
	if err != nil {
		return "", err
	}
	out, err := c.raw.decode(dict, []byte(v))
	if err != nil {
		return "", strata.Errorf(strata.EINTERNAL, "a node text compressed against its children does not decode: %v", err)
	}
	t := string(out)
	c.keep(key, t)
	return t, nil
}

// nullNodeText is nodeText for a column that may be NULL.
func (c *textCodec) nullNodeText(ctx context.Context, q querier, v sql.NullString, ref nodeRef) (sql.NullString, error) {
	if !v.Valid {
		return v, nil
	}
	s, err := c.nodeText(ctx, q, v.String, ref)
	return sql.NullString{String: s, Valid: true}, err
}

// childrenDict returns the raw dictionary of a node's frames: for each of
// its children, in order, its summary, facts and themes columns as plain
// text, each followed by a NUL byte. A child that is not stored is an
// error. spans are the children's levels and seq ranges, in the same
// order.
func (c *textCodec) childrenDict(ctx context.Context, q querier, ref nodeRef) (dict []byte, spans []childSpan, err error) {
	if !ref.children.Valid || ref.children.String == "" {
		return nil, nil, fmt.Errorf("a node text compressed against its children, on a node with no children")
	}
	ids, ok := fastStrings(ref.children.String)
	if !ok {
		if err := json.Unmarshal([]byte(ref.children.String), &ids); err != nil {
			return nil, nil, fmt.Errorf("children: %w", err)
		}
	}
	type child struct {
		span                childSpan
		summary             string
		facts, themes, kids sql.NullString
	}
	// The form of storedNodes' query, which SQLite answers from
	// nodes_conversation_id; the rows come in any order.
	rows, err := q.QueryContext(ctx, `SELECT id, level, first_seq, last_seq, summary, facts, themes, children FROM nodes
		WHERE conversation = ? AND id IN (SELECT value FROM json_each(?))`, ref.conv, ref.children.String)
	if err != nil {
		return nil, nil, fmt.Errorf("children: %w", err)
	}
	byID := make(map[string]child, len(ids))
	for rows.Next() {
		var k child
		var id string
		if err := rows.Scan(&id, &k.span.level, &k.span.first, &k.span.last, &k.summary, &k.facts, &k.themes, &k.kids); err != nil {
			rows.Close()
			return nil, nil, fmt.Errorf("children: %w", err)
		}
		byID[id] = k
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		return nil, nil, fmt.Errorf("children: %w", err)
	}
	for _, id := range ids {
		k, ok := byID[id]
		if !ok {
			return nil, nil, strata.Errorf(strata.EINTERNAL, "a node text compressed against its children: child %s is not stored", id)
		}
		sub := nodeRef{conv: ref.conv, children: k.kids}
		for _, v := range []sql.NullString{{String: k.summary, Valid: true}, k.facts, k.themes} {
			t, err := c.nullNodeText(ctx, q, v, sub)
			if err != nil {
				return nil, nil, fmt.Errorf("child %s: %w", id, err)
			}
			dict = append(append(dict, t.String...), 0)
		}
		if len(dict) > maxChildrenDict {
			return nil, nil, strata.Errorf(strata.EINTERNAL, "the children of a node hold more than %d bytes of text", maxChildrenDict)
		}
		spans = append(spans, k.span)
	}
	return dict, spans, nil
}

// childSpan is where a child sits in the pyramid.
type childSpan struct {
	level       int
	first, last int64
}

// rawCodec compresses and expands texts against a raw dictionary that
// changes with every node. One encoder, reset for each text (making one
// costs about 120 us, resetting it a few); decoders are pooled.
type rawCodec struct {
	mu   sync.Mutex
	enc  *zstd.Encoder
	decs sync.Pool
}

func (r *rawCodec) encode(dict, text []byte) ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	opt := zstd.WithEncoderDictRaw(childrenDictID, dict)
	if r.enc == nil {
		enc, err := zstd.NewWriter(nil, opt, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderCRC(true),
			zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(2*maxChildrenDict), zstd.WithZeroFrames(true))
		if err != nil {
			return nil, err
		}
		r.enc = enc
	} else if err := r.enc.ResetWithOptions(nil, opt); err != nil {
		return nil, err
	}
	return r.enc.EncodeAll(text, make([]byte, 0, len(text)/4+32)), nil
}

func (r *rawCodec) decode(dict, frame []byte) ([]byte, error) {
	opt := zstd.WithDecoderDictRaw(childrenDictID, dict)
	dec, _ := r.decs.Get().(*zstd.Decoder)
	if dec == nil {
		var err error
		if dec, err = zstd.NewReader(nil, opt, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(1<<26)); err != nil {
			return nil, err
		}
	} else if err := dec.ResetWithOptions(nil, opt); err != nil {
		return nil, err
	}
	out, err := dec.DecodeAll(frame, nil)
	r.decs.Put(dec)
	return out, err
}

// frameDerivedTexts rewrites the texts of derived nodes as frames against
// their children, where that is shorter than what is stored, in batches
// of one transaction each. It returns how many nodes it rewrote.
func (s *Store) frameDerivedTexts(ctx context.Context) (int, error) {
	return s.rewriteNodeTexts(ctx, "derived = 1 AND children IS NOT NULL", 1000,
		func(tx *sql.Tx, r textRow) ([3]any, bool, error) {
			if againstChildren(r.summary) || againstChildren(r.facts.String) || againstChildren(r.themes.String) {
				return [3]any{}, false, nil
			}
			return s.text.frameAgainstChildren(ctx, tx, r.ref, r.span, r.summary, r.facts, r.themes)
		},
		func(tx *sql.Tx) error {
			// In the transaction of the first frames: writes look for
			// framed parents from then on (unframeParents).
			_, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO derived_frames (id) VALUES (1)`)
			return err
		})
}

// frameAgainstChildren returns the stored values of a derived node's
// three text columns with each one that a frame against the node's
// children shortens replaced by that frame, checked by expanding it, and
// whether any was. A node whose children hold too much text, are not all
// stored, or do not all lie inside its span below it (unframeParents finds
// parents by span) is left as it is.
func (c *textCodec) frameAgainstChildren(ctx context.Context, q querier, ref nodeRef, own childSpan, summary string, facts, themes sql.NullString) ([3]any, bool, error) {
	vals := [3]any{summary, nullValue(facts), nullValue(themes)}
	dict, spans, err := c.childrenDict(ctx, q, ref)
	if err != nil {
		if strata.ErrorCode(err) == strata.EINTERNAL {
			return vals, false, nil
		}
		return vals, false, err
	}
	for _, k := range spans {
		if k.level >= own.level || k.first < own.first || k.last > own.last {
			return vals, false, nil
		}
	}
	changed := false
	for i, v := range []sql.NullString{{String: summary, Valid: true}, facts, themes} {
		if !v.Valid || len(v.String) < max(c.min, 1) {
			continue
		}
		plain, err := c.text(ctx, q, v.String)
		if err != nil {
			return vals, false, err
		}
		frame, err := c.raw.encode(dict, []byte(plain))
		if err != nil {
			return vals, false, err
		}
		if len(frame) >= len(v.String) {
			continue
		}
		back, err := c.raw.decode(dict, frame)
		if err != nil || string(back) != plain {
			return vals, false, fmt.Errorf("a frame against the children does not give the text back (%v)", err)
		}
		vals[i], changed = frame, true
	}
	return vals, changed, nil
}

// unframeParents writes back, with the store's own codec, the texts of
// every derived node of conversation conv framed against one of the nodes
// ids, which are about to change or go. It runs in the transaction that
// changes them, before any of them is written.
func unframeParents(ctx context.Context, tx *sql.Tx, c *textCodec, conv int64, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	// A store that never framed a text against children (most, until
	// their first Vacuum) has nothing to look for.
	var framed bool
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM derived_frames)`).Scan(&framed); err != nil || !framed {
		return err
	}
	kids, err := changingNodes(ctx, tx, conv, ids)
	if err != nil || len(kids) == 0 {
		return err
	}
	ps, err := framedParents(ctx, tx, conv, kids)
	if err != nil {
		return err
	}
	for _, p := range ps {
		var vals [3]any
		for i, v := range []sql.NullString{{String: p.summary, Valid: true}, p.facts, p.themes} {
			t, err := c.nullNodeText(ctx, tx, v, p.ref)
			if err != nil {
				return fmt.Errorf("node %s: %w", p.id, err)
			}
			vals[i] = c.nullable(nullValue(t), false)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE nodes SET summary = ?, facts = ?, themes = ? WHERE pk = ?`,
			vals[0], vals[1], vals[2], p.pk); err != nil {
			return fmt.Errorf("node %s: %w", p.id, err)
		}
	}
	return nil
}

// A changingNode is a stored node about to be replaced or removed.
type changingNode struct {
	id   string
	span childSpan
}

// changingNodes reads the spans of the stored nodes of conversation conv
// among ids.
func changingNodes(ctx context.Context, tx *sql.Tx, conv int64, ids []string) ([]changingNode, error) {
	b, err := json.Marshal(ids)
	if err != nil {
		return nil, strata.Errorf(strata.EINVALID, "node ids: %v", err)
	}
	var kids []changingNode
	rows, err := tx.QueryContext(ctx, `SELECT id, level, first_seq, last_seq FROM nodes
		WHERE conversation = ? AND id IN (SELECT value FROM json_each(?))`, conv, string(b))
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var k changingNode
		if err := rows.Scan(&k.id, &k.span.level, &k.span.first, &k.span.last); err != nil {
			rows.Close()
			return nil, err
		}
		kids = append(kids, k)
	}
	err = rows.Err()
	rows.Close()
	return kids, err
}

// A framedParent is a derived node with a text framed against its
// children.
type framedParent struct {
	pk            int64
	id            string
	ref           nodeRef
	summary       string
	facts, themes sql.NullString
}

// framedParents returns the derived nodes of conversation conv that list
// one of kids among their children and have a text framed against them.
func framedParents(ctx context.Context, tx *sql.Tx, conv int64, kids []changingNode) ([]framedParent, error) {
	var top int
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(level), 0) FROM nodes WHERE conversation = ?`, conv).Scan(&top); err != nil {
		return nil, err
	}
	var ps []framedParent
	seen := map[int64]bool{}
	// A parent covers its children's spans and sits above them (only such
	// nodes are framed): for each changing node and each level above it,
	// the first node of that level ending at or after the node's last turn
	// is the only one that can list it.
	for _, k := range kids {
		for lvl := k.span.level + 1; lvl <= top; lvl++ {
			p := framedParent{ref: nodeRef{conv: conv}}
			var first int64
			var derived bool
			err := tx.QueryRowContext(ctx, `SELECT pk, id, first_seq, derived, children, summary, facts, themes
				FROM nodes INDEXED BY nodes_conversation_level_last
				WHERE conversation = ? AND level = ? AND last_seq >= ? ORDER BY last_seq LIMIT 1`, conv, lvl, k.span.last).
				Scan(&p.pk, &p.id, &first, &derived, &p.ref.children, &p.summary, &p.facts, &p.themes)
			if errors.Is(err, sql.ErrNoRows) {
				continue
			}
			if err != nil {
				return nil, err
			}
			if seen[p.pk] || !derived || first > k.span.first {
				continue
			}
			if !againstChildren(p.summary) && !againstChildren(p.facts.String) && !againstChildren(p.themes.String) {
				continue
			}
			l, ok := fastStrings(p.ref.children.String)
			if !ok && json.Unmarshal([]byte(p.ref.children.String), &l) != nil {
				continue // a list that does not read was never framed against (childrenDict reads it alike)
			}
			if !slices.Contains(l, k.id) {
				continue
			}
			seen[p.pk] = true
			ps = append(ps, p)
		}
	}
	return ps, nil
}
