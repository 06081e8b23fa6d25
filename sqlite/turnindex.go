package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/strata-memory/strata"
)

// This file holds the in-memory index of the newest turns of a long
// conversation, for the turn search of a query package, which covers the
// newest turns only (strata.AssemblyOptions.SearchWindow: SearchQuery
// FromSeq). FTS5 reads only the window's entries to score them, but its
// bm25 counts each query word's documents over its whole posting list,
// every turn of the file holding the word: at a million turns that count
// is most of the turn search. The index keeps the window's turns (from
// base on) with their terms, and each query word's count of the file's
// indexed turns before base (rows before basePK), asked of FTS5 once and
// kept until one of those turns changes; the collection's size and length
// come from FTS5's averages record. In a file of several conversations,
// the others' turns from basePK on change with every turn they append, so
// FTS5 counts those on each query, over the part of each posting list
// written since the window began. The scores are FTS5's own.
//
// turn_fts_log (schema 19), filled by triggers, names every turn whose
// tier, content or row changed (a turn enters and leaves turns_fts only
// so); turns appended since the index last looked are those of higher row
// keys (a conversation's rows are numbered in seq order).

// turnIndex is the index of one conversation's newest turns.
type turnIndex struct {
	sumIndex         // the turns of seq base on, their terms and lengths (sumDoc.pk: the row key)
	base     int64   // the first seq held
	loadedN  int64   // turns read by the last load
	basePK   int64   // its row key: the conversation's rows before it are its turns before base
	maxPK    int64   // the newest row read
	below    belowDF // FTS5's counts of turns before base, by term
	seqOf    []int64 // by slot
}

// belowDF caches how many indexed turns before base hold each term. It is
// reset under the index's write lock; its own lock is taken after the
// index's, never before.
type belowDF struct {
	mu  sync.Mutex
	gen uint64 // resets so far: a count asked before one is not kept
	n   map[string]int64
}

func (b *belowDF) reset() {
	b.mu.Lock()
	b.gen++
	b.n = nil
	b.mu.Unlock()
}

// searchTurnIndex ranks the turns of conversation pk from seq from on
// against terms with the in-memory index, if the conversation is long
// enough and each term is one token; ok is false otherwise, and the caller
// asks FTS5.
func (s *Store) searchTurnIndex(ctx context.Context, tx querier, namespace, conversation string, pk, from int64, others bool,
	terms []string, k int) (hits []strata.Hit, ok bool, err error) {
	if from <= 1 {
		return nil, false, nil
	}
	toks, ok, err := s.memIndexTokens(ctx, tx, pk, terms)
	if !ok || err != nil {
		return nil, false, err
	}
	ix := s.turnIdx.get(pk)
	if err := ix.refresh(ctx, s, tx, namespace, conversation, pk, from); err != nil {
		return nil, false, err
	}
	file, err := readAverages(ctx, tx, "turns_fts", len(toks))
	if err != nil {
		return nil, false, err
	}
	for i, t := range toks {
		n, err := ix.countBelow(ctx, tx, terms[i])
		if err != nil {
			return nil, false, err
		}
		if others {
			// Other conversations' turns from the index's first row on
			// change with every turn they append: FTS5 counts them, over
			// the part of the posting list written since.
			m, err := ix.countFrom(ctx, tx, terms[i])
			if err != nil {
				return nil, false, err
			}
			n += m
		} else {
			n += int64(ix.liveDF(t))
		}
		file.df[i] = n
	}
	top := ix.searchFrom(toks, k, file, from)
	if len(top) == 0 {
		return []strata.Hit{}, true, nil
	}
	hits, err = s.readTurnHits(ctx, tx, namespace, conversation, top)
	return hits, true, err
}

// singleTokens returns the FTS5 token of each term, and false if a term
// is not exactly one token (a phrase, which FTS5 matches by position).
func singleTokens(terms []string) ([]string, bool) {
	toks := make([]string, len(terms))
	for i, t := range terms {
		n := 0
		ftsTokens(t, func(tok []byte) {
			n++
			toks[i] = string(tok)
		})
		if n != 1 || toks[i] == "" {
			return nil, false
		}
	}
	return toks, true
}

// liveDF is the number of live documents holding term.
func (ix *turnIndex) liveDF(term string) int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	id, ok := ix.terms[term]
	if !ok {
		return 0
	}
	n := 0
	for _, p := range ix.post[id] {
		if !ix.docs[p.slot].dead {
			n++
		}
	}
	return n
}

// countBelow is the number of indexed turns before the index's base that
// hold the query term, asked of FTS5 the first time.
func (ix *turnIndex) countBelow(ctx context.Context, q querier, term string) (int64, error) {
	// basePK and the cache's generation are read together, under the
	// index's read lock (a reload changes both under its write lock); FTS5
	// is asked holding no lock, and its count kept only if no reset came
	// meanwhile.
	b := &ix.below
	ix.mu.RLock()
	basePK := ix.basePK
	b.mu.Lock()
	n, ok := b.n[term]
	gen := b.gen
	b.mu.Unlock()
	ix.mu.RUnlock()
	if ok {
		return n, nil
	}
	err := q.QueryRowContext(ctx, `SELECT count(*) FROM turns_fts WHERE turns_fts MATCH ? AND rowid < ?`,
		matchExpr("", []string{term}), basePK).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("sqlite: turn index: %w", err)
	}
	b.mu.Lock()
	if b.gen == gen {
		if b.n == nil {
			b.n = map[string]int64{}
		}
		b.n[term] = n
	}
	b.mu.Unlock()
	return n, nil
}

// countFrom is the number of indexed turns of the file from the index's
// first row on that hold the query term, asked of FTS5.
func (ix *turnIndex) countFrom(ctx context.Context, q querier, term string) (int64, error) {
	ix.mu.RLock()
	basePK := ix.basePK
	ix.mu.RUnlock()
	var n int64
	err := q.QueryRowContext(ctx, `SELECT count(*) FROM turns_fts WHERE turns_fts MATCH ? AND rowid >= ?`,
		matchExpr("", []string{term}), basePK).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("sqlite: turn index: %w", err)
	}
	return n, nil
}

// refresh brings the index up to q's snapshot for a search from seq from
// (the newest row is the last by seq: a conversation's rows are numbered
// in seq order):
// it loads the turns from from on the first time or when from has moved
// past twice the window the index holds, and otherwise reads the turns
// appended and those the log names.
func (ix *turnIndex) refresh(ctx context.Context, s *Store, q querier, namespace, conversation string, conv, from int64) error {
	var newest, oldest, maxPK int64
	if err := q.QueryRowContext(ctx, `SELECT coalesce((SELECT max(seq) FROM turn_fts_log), 0),
		coalesce((SELECT min(seq) FROM turn_fts_log), 0),
		coalesce((SELECT pk FROM turns WHERE conversation = ? ORDER BY seq DESC LIMIT 1), 0)`, conv).Scan(&newest, &oldest, &maxPK); err != nil {
		return fmt.Errorf("sqlite: turn index: %w", err)
	}
	ix.load.Lock()
	defer ix.load.Unlock()
	ix.mu.RLock()
	loaded, ver, base, seen, loadedN := ix.loaded, ix.ver, ix.base, ix.maxPK, ix.loadedN
	ix.mu.RUnlock()
	// Loaded again: the first time, when the window starts before the
	// index, when the log no longer holds what the index missed, and when
	// more than half the turns it loaded have left the window (so that it
	// does not grow with the conversation).
	if !loaded || from < base || oldest > ver+1 || from-base > loadedN/2 {
		return ix.reload(ctx, s, q, namespace, conversation, conv, from, newest)
	}
	if ver >= newest && seen >= maxPK {
		return nil
	}
	// Turns the log names, and turns appended. A change to any turn before
	// the index's first row, of any conversation, changes the counts of
	// documents before it.
	ix.mu.RLock()
	basePK := ix.basePK
	ix.mu.RUnlock()
	pks, resetBelow, err := loggedChanges(ctx, q, conv, basePK, ver, newest)
	if err != nil {
		return err
	}
	var read []indexedTurn
	if len(pks) > 0 {
		b, _ := json.Marshal(pks)
		if read, err = s.readIndexed(ctx, q, namespace, conversation, `t.pk IN (SELECT value FROM json_each(?))`, string(b)); err != nil {
			return err
		}
	}
	appended, err := s.readIndexed(ctx, q, namespace, conversation, `t.conversation = ? AND t.pk > ? AND t.pk <= ?`, conv, seen, maxPK)
	if err != nil {
		return err
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	for _, pk := range pks {
		ix.remove(pk)
	}
	for _, t := range append(read, appended...) {
		if t.seq < ix.base {
			resetBelow = true // (cannot be: its row is before basePK)
			continue
		}
		ix.remove(t.pk)
		if t.indexed {
			ix.addTurn(t)
		}
	}
	if resetBelow {
		ix.below.reset()
	}
	ix.ver, ix.maxPK = newest, max(seen, maxPK)
	ix.compact()
	return nil
}

// loggedChanges returns the turns of conversation conv that the log names
// after version ver up to newest, and whether it names a turn of any
// conversation before basePK.
func loggedChanges(ctx context.Context, q querier, conv, basePK, ver, newest int64) ([]int64, bool, error) {
	changed := map[int64]bool{}
	resetBelow := false
	rows, err := q.QueryContext(ctx, `SELECT conversation, turn FROM turn_fts_log WHERE seq > ? AND seq <= ?`, ver, newest)
	if err != nil {
		return nil, false, fmt.Errorf("sqlite: turn index: %w", err)
	}
	for rows.Next() {
		var c, pk int64
		if err := rows.Scan(&c, &pk); err != nil {
			rows.Close()
			return nil, false, fmt.Errorf("sqlite: turn index: %w", err)
		}
		switch {
		case pk < basePK:
			resetBelow = true
		case c == conv:
			changed[pk] = true
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, false, fmt.Errorf("sqlite: turn index: %w", err)
	}
	var pks []int64
	for pk := range changed {
		pks = append(pks, pk)
	}
	return pks, resetBelow, nil
}

// reload builds the index of the turns of seq from on, aside, and swaps
// it in.
func (ix *turnIndex) reload(ctx context.Context, s *Store, q querier, namespace, conversation string, conv, from, ver int64) error {
	var maxPK, basePK int64
	if err := q.QueryRowContext(ctx, `SELECT coalesce((SELECT pk FROM turns WHERE conversation = ?1 ORDER BY seq DESC LIMIT 1), 0),
		coalesce((SELECT pk FROM turns WHERE conversation = ?1 AND seq >= ?2 ORDER BY seq LIMIT 1), 0)`, conv, from).Scan(&maxPK, &basePK); err != nil {
		return fmt.Errorf("sqlite: turn index: %w", err)
	}
	ts, err := s.readIndexed(ctx, q, namespace, conversation, `t.conversation = ? AND t.seq >= ? AND t.pk <= ?`, conv, from, maxPK)
	if err != nil {
		return err
	}
	fresh := &turnIndex{sumIndex: sumIndex{terms: map[string]int32{}, slotOf: map[int64]int32{}}}
	for _, t := range ts {
		if t.indexed {
			fresh.addTurn(t)
		}
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.terms, ix.post, ix.docs, ix.slotOf, ix.seqOf = fresh.terms, fresh.post, fresh.docs, fresh.slotOf, fresh.seqOf
	ix.total, ix.dead = fresh.total, 0
	ix.base, ix.basePK, ix.maxPK, ix.loadedN = from, basePK, maxPK, int64(len(ts))
	ix.ver, ix.loaded = ver, true
	ix.below.reset()
	return nil
}

func (ix *turnIndex) addTurn(t indexedTurn) {
	ix.add(t.pk, t.text)
	ix.seqOf = append(ix.seqOf, t.seq)
}

// searchFrom is search over the documents of seq from on.
func (ix *turnIndex) searchFrom(toks []string, k int, file *fileStats, from int64) []sumScore {
	// keep runs under search's read lock, which refresh's appends wait for.
	return ix.search(toks, k, file, func(slot int32) bool { return ix.seqOf[slot] >= from })
}

// indexedTurn is a turn as the index reads it.
type indexedTurn struct {
	pk, seq int64
	indexed bool   // in turns_fts: hot, warm or cold (coldfts.go)
	text    string // what turns_fts holds of it, if indexed
}

// readIndexed reads the turns where matches (a condition on turns t),
// with the text of those the full-text index holds (warm ones from their
// blocks, cold ones from their segments).
func (s *Store) readIndexed(ctx context.Context, q querier, namespace, conversation, where string, args ...any) ([]indexedTurn, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+turnCols+`, t.tier, t.span, t.pk FROM turns t WHERE `+where+` ORDER BY t.seq`, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: turn index: %w", err)
	}
	defer rows.Close()
	var out []indexedTurn
	var ts []strata.Turn
	var stubs []stub
	listed, err := unindexedSpans(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("sqlite: turn index: %w", err)
	}
	for rows.Next() {
		var st stub
		var pk int64
		t, err := scanTurn(rows, &st.tier, &st.span, &pk)
		if err != nil {
			return nil, fmt.Errorf("sqlite: turn index: %w", err)
		}
		x := indexedTurn{pk: pk, seq: t.Seq, indexed: st.tier == tierHot || st.tier == tierWarm ||
			st.tier == tierCold && !listed[st.span.Int64]}
		if !x.indexed {
			out = append(out, x)
			continue
		}
		if st.tier != tierHot {
			st.index = len(ts)
			stubs = append(stubs, st)
		}
		ts = append(ts, t)
		out = append(out, x)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: turn index: %w", err)
	}
	rows.Close()
	// The turns of a span whose copy cannot be read are left out, as
	// search leaves out their hits.
	whole, err := s.hydrateReadable(ctx, q, namespace, conversation, ts, stubs)
	if err != nil {
		return nil, fmt.Errorf("sqlite: turn index: %w", err)
	}
	ts = whole
	text := make(map[int64]string, len(ts))
	for _, t := range ts {
		text[t.Seq] = s.fts.text(t.Text())
	}
	for i := range out {
		if out[i].indexed {
			t, ok := text[out[i].seq]
			out[i].text, out[i].indexed = t, ok
		}
	}
	return out, nil
}

// readTurnHits reads the turns of top, best first, with their scores.
func (s *Store) readTurnHits(ctx context.Context, q querier, namespace, conversation string, top []sumScore) ([]strata.Hit, error) {
	pks := make([]int64, len(top))
	for i, t := range top {
		pks[i] = t.pk
	}
	b, _ := json.Marshal(pks)
	rows, err := q.QueryContext(ctx, `SELECT `+turnCols+`, t.tier, t.span, t.pk FROM turns t WHERE t.pk IN (SELECT value FROM json_each(?))`, string(b))
	if err != nil {
		return nil, fmt.Errorf("sqlite: search turns: %w", err)
	}
	defer rows.Close()
	type row struct {
		t  strata.Turn
		st stub
	}
	byPK := map[int64]row{}
	for rows.Next() {
		var r row
		var pk int64
		if r.t, err = scanTurn(rows, &r.st.tier, &r.st.span, &pk); err != nil {
			return nil, fmt.Errorf("sqlite: search turns: %w", err)
		}
		byPK[pk] = r
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: search turns: %w", err)
	}
	rows.Close()
	var ts []strata.Turn
	var stubs []stub
	score := make(map[int64]float64, len(top)) // by seq: hydrate drops expired turns
	for _, t := range top {
		r, ok := byPK[t.pk]
		if !ok {
			continue
		}
		if r.st.tier != tierHot {
			r.st.index = len(ts)
			stubs = append(stubs, r.st)
		}
		ts = append(ts, r.t)
		score[r.t.Seq] = t.score
	}
	whole, err := s.hydrateReadable(ctx, q, namespace, conversation, ts, stubs)
	if err != nil {
		return nil, fmt.Errorf("sqlite: search turns: %w", err)
	}
	ts = whole
	hits := make([]strata.Hit, 0, len(ts))
	for _, t := range ts {
		hits = append(hits, strata.Hit{Kind: strata.KindTurn, Conversation: conversation, Turn: &t, Score: score[t.Seq]})
	}
	return hits, nil
}
