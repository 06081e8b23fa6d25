package postgres

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/archive"
	"github.com/strata-memory/strata/internal/spanfmt"
)

// This file changes what the tier code settled: the importance of one
// turn (which decides whether its row keeps its content), and the nodes
// of a conversation (whose level-1 nodes own the warm and cold copies of
// their spans). Each change is one transaction holding the conversation's
// row lock, archive segments included, so a kill at any instant leaves
// the change made or not made.
//
// A span's copy (warm block or archive records) holds every turn of the
// span, pinned ones included: Demote packs and archives them all. The copy
// of a turn whose row holds its content (tier 0) is never read, so it may
// carry an importance older than the row's; whenever a row gives its
// content up, or changes its importance while its content is in the copy,
// the copy is rewritten with the turn as it is now, because reading a
// stub takes the whole turn, importance included, from the copy.

// SetImportance sets the importance of one turn and returns it, whole;
// see strata.TurnStore.
//
// A row that holds its content (hot, or pinned in any tier) and stays
// pinned, or lies in no warm or cold span, only changes its importance.
// One that stops being pinned in a warm or cold span first writes itself,
// with its new importance, into the span's copy (the warm block rewritten
// and checked, or the record merged into its segment and read back), then
// leaves its row slim, as Demote leaves it (a cold row also leaves the
// full-text index). A stub that becomes pinned takes its whole turn back
// from the copy into its row (and into the full-text index if it was
// cold). A stub that stays unpinned has its copy rewritten with
// the new importance. A stub of an expired span, or unpinning a turn of
// an expired span, is ECONFLICT.
func (s *Store) SetImportance(ctx context.Context, namespace, conversation string, seq int64, importance float64) (strata.Turn, error) {
	if math.IsNaN(importance) || importance < 0 || importance > 1 {
		return strata.Turn{}, strata.Errorf(strata.EINVALID, "importance %v of turn %d is outside 0..1", importance, seq)
	}
	var t strata.Turn
	err := s.tx(ctx, func(tx pgx.Tx) error {
		pk, err := conversationPK(ctx, tx, namespace, conversation, true)
		if err != nil {
			return err
		}
		var st stub
		t, err = scanTurn(tx.QueryRow(ctx, `SELECT `+turnCols+`, t.tier, t.span FROM turns t
			WHERE t.conversation = $1 AND t.seq = $2`, pk, seq), &st.tier, &st.span)
		if errors.Is(err, pgx.ErrNoRows) {
			return strata.Errorf(strata.ENOTFOUND, "turn %d not found in conversation %q", seq, conversation)
		}
		if err != nil {
			return err
		}
		pinned := importance >= strata.PinnedImportance
		setImportance := func() error {
			_, err := tx.Exec(ctx, `UPDATE turns SET importance = $1 WHERE conversation = $2 AND seq = $3`, importance, pk, seq)
			return err
		}

		switch st.tier {
		case tierExpired:
			return strata.Errorf(strata.ECONFLICT, "turn %d of %q expired: only its span's summary is left", seq, conversation)

		case tierHot:
			sp, err := coveringSpan(ctx, tx, pk, conversation, seq)
			if err != nil {
				return err
			}
			t.Importance = importance
			unpinning := sp != nil && !pinned && (sp.Tier == tierWarm || sp.Tier == tierCold)
			if sp != nil && !pinned && sp.Tier == tierExpired {
				return strata.Errorf(strata.ECONFLICT,
					"turn %d of %q cannot be unpinned: its span (node %s) expired, so its row holds the only copy of it",
					seq, conversation, sp.ID)
			}
			if unpinning {
				if sp.Tier == tierWarm {
					err = rewriteBlock(ctx, tx, *sp, t)
				} else {
					err = s.archiveTurn(ctx, tx, namespace, conversation, pk, *sp, t)
				}
				if err != nil {
					return err
				}
			}
			if err := setImportance(); err != nil {
				return err
			}
			if unpinning {
				tag, err := tx.Exec(ctx, slim, sp.Tier, sp.PK, pk, seq, seq)
				if err != nil {
					return err
				}
				if n := tag.RowsAffected(); n != 1 {
					return fmt.Errorf("slimming the row: %d rows changed", n)
				}
			}

		default: // a stub: its content is in the copy of its span
			if st.span == nil {
				return fmt.Errorf("%s row with no span", tierName(st.tier))
			}
			sp, err := scanSpan(tx.QueryRow(ctx, `SELECT `+spanCols+` FROM nodes WHERE pk = $1`, *st.span))
			if err != nil {
				return fmt.Errorf("span of the row: %w", err)
			}
			if sp.Tier != st.tier {
				return fmt.Errorf("the row is %s but its span, node %s, is %s", tierName(st.tier), sp.ID, tierName(sp.Tier))
			}
			whole, err := s.hydrate(ctx, tx, namespace, conversation, []strata.Turn{t}, []stub{{index: 0, tier: st.tier, span: st.span}})
			if err != nil {
				return err
			}
			if len(whole) != 1 {
				return fmt.Errorf("node %s holds no copy of the turn", sp.ID)
			}
			t = whole[0]
			old := t.Importance
			t.Importance = importance
			switch {
			case pinned:
				if err := restoreRows(ctx, tx, pk, []restore{{tier: st.tier, turn: t}}); err != nil {
					return fmt.Errorf("node %s: %w", sp.ID, err)
				}
			case old != importance:
				if st.tier == tierWarm {
					err = rewriteBlock(ctx, tx, sp, t)
				} else {
					err = s.archiveTurn(ctx, tx, namespace, conversation, pk, sp, t)
				}
				if err != nil {
					return err
				}
				fallthrough
			default:
				if err := setImportance(); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return strata.Turn{}, wrap(fmt.Sprintf("setting the importance of turn %d of %q", seq, conversation), err)
	}
	return t, nil
}

// coveringSpan returns the level-1 node beyond the hot tier whose span
// holds seq, or nil if there is none.
func coveringSpan(ctx context.Context, tx pgx.Tx, pk int64, conversation string, seq int64) (*span, error) {
	// Literals, so that the partial index nodes_tiered applies.
	rows, err := tx.Query(ctx, `SELECT `+spanCols+` FROM nodes
		WHERE conversation = $1 AND level = 1 AND tier > 0 AND first_seq <= $2 AND last_seq >= $2
		ORDER BY first_seq`, pk, seq)
	if err != nil {
		return nil, err
	}
	out, err := collectSpans(rows)
	if err != nil {
		return nil, err
	}
	switch len(out) {
	case 0:
		return nil, nil
	case 1:
		return &out[0], nil
	}
	return nil, fmt.Errorf("turn %d of %q lies in two spans beyond the hot tier, nodes %s and %s", seq, conversation, out[0].ID, out[1].ID)
}

// rewriteBlock rewrites the warm block of sp with t in place of the turn
// of the same seq (or added to it), and checks the new block by decoding
// it before storing it.
func rewriteBlock(ctx context.Context, tx pgx.Tx, sp span, t strata.Turn) error {
	turns, err := spanfmt.DecodeBlock(sp.Block)
	if err != nil {
		return fmt.Errorf("warm block of node %s: %w", sp.ID, err)
	}
	i := slices.IndexFunc(turns, func(x strata.Turn) bool { return x.Seq == t.Seq })
	if i >= 0 {
		turns[i] = t
	} else {
		turns = append(turns, t)
		sort.SliceStable(turns, func(a, b int) bool { return turns[a].Seq < turns[b].Seq })
	}
	block, err := spanfmt.EncodeBlock(turns)
	if err != nil {
		return fmt.Errorf("packing node %s: %w", sp.ID, err)
	}
	if err := spanfmt.CheckBlock(block, turns); err != nil {
		return fmt.Errorf("checking the block of node %s: %w", sp.ID, err)
	}
	_, err = tx.Exec(ctx, `UPDATE nodes SET block = $1 WHERE pk = $2`, block, sp.PK)
	return err
}

// archiveTurn merges t into its archive segment as a record of the cold
// span sp (its UTC month's, or its UTC day's if sp names that day: a span
// made cold when segments were days keeps its records there; see
// spanfmt.Period), reads the record back, and records the segment in the
// segments table and, if sp did not name that period yet, in sp's periods.
func (s *Store) archiveTurn(ctx context.Context, tx pgx.Tx, namespace, conversation string, pk int64, sp span, t strata.Turn) error {
	rec, err := spanfmt.Record(&t)
	if err != nil {
		return fmt.Errorf("archiving turn %d: %w", t.Seq, err)
	}
	period := spanfmt.Period(sp.Periods, t.Time)
	key := archive.Key(namespace, conversation, period)
	seg := s.segmentsIn(tx)
	info, err := seg.Merge(ctx, key, []archive.Record{rec})
	if err != nil {
		return fmt.Errorf("node %s: %w", sp.ID, err)
	}
	if err := putSegment(ctx, tx, pk, period, info); err != nil {
		return err
	}
	got, err := seg.Read(ctx, key, t.Seq, t.Seq)
	if err != nil {
		return fmt.Errorf("node %s: %w", sp.ID, err)
	}
	if len(got) != 1 {
		return fmt.Errorf("archive segment %s of node %s: %d records of turn %d after writing it", seg.Blobs.Locate(key), sp.ID, len(got), t.Seq)
	}
	if err := spanfmt.CheckRecord(got[0].Line, &t); err != nil {
		return fmt.Errorf("archive segment %s of node %s: turn %d: %w", seg.Blobs.Locate(key), sp.ID, t.Seq, err)
	}
	if !slices.Contains(sp.Periods, period) {
		periods := append(slices.Clone(sp.Periods), period)
		sort.Strings(periods)
		if _, err := tx.Exec(ctx, `UPDATE nodes SET segments = $1 WHERE pk = $2`, jsonList(periods), sp.PK); err != nil {
			return err
		}
	}
	return nil
}

// restore is a stub row of tier to be made whole again with turn.
type restore struct {
	tier int
	turn strata.Turn
}

// restoreRows writes each whole turn into its row, a stub of its tier,
// and makes it hot, in one round trip: each row must have recorded the
// content size the turn has, and must read back as the turn. Turns that
// were cold are indexed again, which is a no-op unless an earlier version
// took them out of the full-text index (coldindex.go).
func restoreRows(ctx context.Context, tx pgx.Tx, pk int64, rs []restore) error {
	if len(rs) == 0 {
		return nil
	}
	b := &pgx.Batch{}
	var idxSeqs []int64
	var idxParts []int32
	var idxWords []string
	for i := range rs {
		r := &rs[i]
		t := &r.turn
		e, err := encodeTurn(t, 0)
		if err != nil {
			return fmt.Errorf("turn %d: %w", t.Seq, err)
		}
		// The row keeps its seq, ext_id, session, role, time and tokens:
		// its checksum, computed from the copy's, holds only if they are
		// the copy's, which the read back below checks.
		row := encodedRow(t.Seq, t, &e)
		b.Queue(`UPDATE turns t SET tier = $1, span = NULL, session_label = $2, name = $3, content = $4, model = $5,
			tool_calls = $6, tool_results = $7, importance = $8, tags = $9, metadata = $10, crc = $15
			WHERE t.conversation = $11 AND t.seq = $12 AND t.tier = $13 AND t.size = $14
			RETURNING `+turnCols,
			tierHot, t.SessionLabel, t.Name, row.content, t.Model, e.toolCalls, e.toolResults, t.Importance,
			e.tags, e.metadata, pk, t.Seq, r.tier, int64(len(t.Content)), int64(row.sum())).
			QueryRow(func(row pgx.Row) error {
				back, err := scanTurn(row)
				if errors.Is(err, pgx.ErrNoRows) {
					return fmt.Errorf("turn %d: its row is not a %s stub of %d content bytes, as its copy is", t.Seq, tierName(r.tier), len(t.Content))
				}
				if err != nil {
					return fmt.Errorf("turn %d: %w", t.Seq, err)
				}
				if !spanfmt.SameTurn(&back, t) {
					return fmt.Errorf("turn %d: the row does not read back as the copy holds it", t.Seq)
				}
				return nil
			})
		if r.tier == tierCold {
			for p, w := range e.index {
				idxSeqs, idxParts, idxWords = append(idxSeqs, t.Seq), append(idxParts, int32(p)), append(idxWords, w)
			}
		}
	}
	if len(idxSeqs) > 0 {
		b.Queue(indexTurnsAgain, pk, idxSeqs, idxParts, idxWords)
	}
	return tx.SendBatch(ctx, b).Close()
}

// restoreBatch is how many stubs restoreStubs restores per read of their
// copies: segments shared by the batch's spans are read once.
const restoreBatch = 512

// restoreStubs brings every warm and cold turn of conversation pk whose
// seq lies in from..to back into its row, batch by batch in seq order,
// each checked against the fields its row kept.
func (s *Store) restoreStubs(ctx context.Context, tx pgx.Tx, namespace, conversation string, pk, from, to int64) error {
	after := from - 1
	if from == math.MinInt64 {
		after = from
	}
	for {
		rows, err := tx.Query(ctx, `SELECT `+turnCols+`, t.tier, t.span FROM turns t
			WHERE t.conversation = $1 AND t.tier IN ($2, $3) AND t.seq > $4 AND t.seq <= $5 ORDER BY t.seq LIMIT $6`,
			pk, tierWarm, tierCold, after, to, restoreBatch)
		if err != nil {
			return err
		}
		var turns []strata.Turn
		var stubs []stub
		for rows.Next() {
			var st stub
			t, err := scanTurn(rows, &st.tier, &st.span)
			if err != nil {
				rows.Close()
				return err
			}
			st.index = len(turns)
			stubs = append(stubs, st)
			turns = append(turns, t)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if len(turns) == 0 {
			break
		}
		rowsOf := slices.Clone(turns)
		whole, err := s.hydrate(ctx, tx, namespace, conversation, turns, stubs)
		if err != nil {
			return err
		}
		if len(whole) != len(stubs) {
			return fmt.Errorf("%d of %d turns have no copy", len(stubs)-len(whole), len(stubs))
		}
		rs := make([]restore, len(whole))
		for i, t := range whole {
			st := stubs[i]
			if d := stubMismatch(rowsOf[i], t, st.tier); d != "" {
				return fmt.Errorf("turn %d: the %s copy does not match its row: %s", t.Seq, tierName(st.tier), d)
			}
			rs[i] = restore{tier: st.tier, turn: t}
		}
		if err := restoreRows(ctx, tx, pk, rs); err != nil {
			return err
		}
		after = whole[len(whole)-1].Seq
	}
	var left int64
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM turns WHERE conversation = $1 AND tier <> $2 AND seq BETWEEN $3 AND $4`,
		pk, tierHot, from, to).Scan(&left); err != nil {
		return err
	}
	if left != 0 {
		return fmt.Errorf("%d turns are still out of their rows after restoring", left)
	}
	return nil
}

// stubMismatch returns how the copy c of a turn differs from its stub row
// r in the fields the row keeps (a cold row also gave up its speaker name
// and session label), or "".
func stubMismatch(r, c strata.Turn, tier int) string {
	var d []string
	if r.ExtID != c.ExtID {
		d = append(d, fmt.Sprintf("ext_id %q, row %q", c.ExtID, r.ExtID))
	}
	if r.Role != c.Role {
		d = append(d, fmt.Sprintf("role %q, row %q", c.Role, r.Role))
	}
	if r.Session != c.Session {
		d = append(d, fmt.Sprintf("session %d, row %d", c.Session, r.Session))
	}
	if !r.Time.Equal(c.Time) {
		d = append(d, fmt.Sprintf("time %s, row %s", c.Time, r.Time))
	}
	if r.Tokens != c.Tokens {
		d = append(d, fmt.Sprintf("tokens %d, row %d", c.Tokens, r.Tokens))
	}
	if tier == tierWarm && (r.Name != c.Name || r.SessionLabel != c.SessionLabel) {
		d = append(d, fmt.Sprintf("name and session label %q %q, row %q %q", c.Name, c.SessionLabel, r.Name, r.SessionLabel))
	}
	return strings.Join(d, "; ")
}

// ResetPyramid removes every node of the conversation and sets its
// policy; see strata.NodeStore. One transaction, holding the
// conversation's row lock, refuses if any span expired, brings every warm
// and cold turn back into its row (checked against what the row kept, and
// read back byte for byte; cold turns back into the full-text index),
// deletes the nodes (their index entries and vectors go with them), sets
// the policy, and deletes the conversation's archive segments, which no
// span owns any more.
func (s *Store) ResetPyramid(ctx context.Context, namespace, conversation, policy string) (int, error) {
	n := 0
	err := s.tx(ctx, func(tx pgx.Tx) error {
		pk, err := conversationPK(ctx, tx, namespace, conversation, true)
		if err != nil {
			return err
		}
		var id string
		switch err := tx.QueryRow(ctx, `SELECT id FROM nodes WHERE conversation = $1 AND level = 1 AND tier = $2
			ORDER BY first_seq LIMIT 1`, pk, tierExpired).Scan(&id); {
		case err == nil:
			return strata.Errorf(strata.ECONFLICT,
				"the pyramid of %q cannot be reset: node %s expired, and its summary is all that is left of its turns", conversation, id)
		case !errors.Is(err, pgx.ErrNoRows):
			return err
		}
		var seq int64
		switch err := tx.QueryRow(ctx, `SELECT seq FROM turns WHERE conversation = $1 AND tier = $2 LIMIT 1`,
			pk, tierExpired).Scan(&seq); {
		case err == nil:
			return strata.Errorf(strata.ECONFLICT,
				"the pyramid of %q cannot be reset: turn %d expired, and only its span's summary is left", conversation, seq)
		case !errors.Is(err, pgx.ErrNoRows):
			return err
		}
		if err := s.restoreStubs(ctx, tx, namespace, conversation, pk, math.MinInt64, math.MaxInt64); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `DELETE FROM nodes WHERE conversation = $1`, pk)
		if err != nil {
			return err
		}
		n = int(tag.RowsAffected())
		if _, err := tx.Exec(ctx, `UPDATE conversations SET policy = $1 WHERE pk = $2`, policy, pk); err != nil {
			return err
		}
		if err := s.blobsIn(tx).DeletePrefix(ctx, archive.Prefix(namespace, conversation)); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `DELETE FROM segments WHERE conversation = $1`, pk)
		return err
	})
	if err != nil {
		return 0, wrap(fmt.Sprintf("resetting the pyramid of %q", conversation), err)
	}
	return n, nil
}

// ReplaceNodes removes the nodes ids of a conversation and stores nodes,
// in one transaction; see strata.NodeStore. A removed level-1 node beyond
// the hot tier first gives its span back to the rows, as ResetPyramid
// does for every span, and a cold one's records leave its segments. Then
// the nodes are deleted (their index rows and vectors go with them, by
// foreign key) and nodes are put as PutNodes puts them.
func (s *Store) ReplaceNodes(ctx context.Context, namespace, conversation string, ids []string, nodes []strata.Node) (int, error) {
	enc, err := encodeNodes(conversation, nodes)
	if err != nil {
		return 0, err
	}
	made := 0
	err = s.tx(ctx, func(tx pgx.Tx) error {
		pk, err := conversationPK(ctx, tx, namespace, conversation, true)
		if err != nil {
			return err
		}
		var spans []span
		for _, id := range ids {
			sp, err := scanSpan(tx.QueryRow(ctx, `SELECT `+spanCols+` FROM nodes WHERE conversation = $1 AND id = $2`, pk, id))
			if errors.Is(err, pgx.ErrNoRows) {
				return strata.Errorf(strata.ENOTFOUND, "node %q not found in conversation %q", id, conversation)
			}
			if err != nil {
				return err
			}
			if sp.Tier == tierExpired {
				return strata.Errorf(strata.ECONFLICT,
					"node %s of %q cannot be replaced: its span expired, and its summary is all that is left of its turns", id, conversation)
			}
			spans = append(spans, sp)
		}
		if ids, err = withAncestors(ctx, tx, pk, spans, ids, nodes); err != nil {
			return err
		}
		for _, sp := range spans {
			if sp.Level != 1 || (sp.Tier != tierWarm && sp.Tier != tierCold) {
				continue
			}
			if err := s.restoreStubs(ctx, tx, namespace, conversation, pk, sp.First, sp.Last); err != nil {
				return fmt.Errorf("node %s: %w", sp.ID, err)
			}
			if sp.Tier == tierCold {
				if err := s.dropRecords(ctx, tx, namespace, conversation, pk, sp.Periods, sp.First, sp.Last); err != nil {
					return fmt.Errorf("node %s: %w", sp.ID, err)
				}
			}
		}
		if len(ids) > 0 {
			if _, err := tx.Exec(ctx, `DELETE FROM nodes WHERE conversation = $1 AND id = ANY($2)`, pk, ids); err != nil {
				return err
			}
		}
		if err := checkChildren(ctx, tx, pk, conversation, nodes); err != nil {
			return err
		}
		made, err = putNodes(ctx, tx, pk, nodes, enc)
		return err
	})
	if err != nil {
		return 0, wrap(fmt.Sprintf("replacing nodes of %q", conversation), err)
	}
	return made, nil
}

// withAncestors returns ids and, after them, the stored nodes above the
// nodes of spans (those of a higher level whose span meets theirs) that
// nodes does not put back (a node put back keeps its span and its id, so
// its parents stand): a parent never stands over a removed child. Another process may have
// closed a parent over a node after the caller read the pyramid; the
// conversation's row lock orders the two writes.
func withAncestors(ctx context.Context, tx pgx.Tx, pk int64, spans []span, ids []string, nodes []strata.Node) ([]string, error) {
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		seen[id] = true
	}
	back := make(map[string]bool, len(nodes))
	for i := range nodes {
		back[nodes[i].ID] = true
	}
	out := ids
	for _, sp := range spans {
		if back[sp.ID] {
			continue
		}
		rows, err := tx.Query(ctx, `SELECT id FROM nodes WHERE conversation = $1 AND level > $2 AND last_seq >= $3 AND first_seq <= $4`,
			pk, sp.Level, sp.First, sp.Last)
		if err != nil {
			return nil, err
		}
		above, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return nil, err
		}
		for _, id := range above {
			if !seen[id] {
				seen[id] = true
				out = append(out[:len(out):len(out)], id)
			}
		}
	}
	return out, nil
}

// checkChildren refuses, with ECONFLICT, a node whose child is neither in
// nodes nor stored: another process replaced the child (a session or
// period that reopened) after the caller read it, and the caller must read
// the pyramid again rather than stand a parent over a span no child tiles.
func checkChildren(ctx context.Context, tx pgx.Tx, pk int64, conversation string, nodes []strata.Node) error {
	have := make(map[string]bool, len(nodes))
	for i := range nodes {
		have[nodes[i].ID] = true
	}
	parent := map[string]string{} // a child to look up -> a node over it
	var want []string
	for i := range nodes {
		for _, c := range nodes[i].Children {
			if _, ok := parent[c]; !ok && !have[c] {
				parent[c] = nodes[i].ID
				want = append(want, c)
			}
		}
	}
	if len(want) == 0 {
		return nil
	}
	rows, err := tx.Query(ctx, `SELECT id FROM nodes WHERE conversation = $1 AND id = ANY($2)`, pk, want)
	if err != nil {
		return err
	}
	stored, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	for _, id := range stored {
		have[id] = true
	}
	for _, c := range want {
		if !have[c] {
			return strata.Errorf(strata.ECONFLICT, "node %s of %q: child %s is not stored (another writer replaced it)", parent[c], conversation, c)
		}
	}
	return nil
}
