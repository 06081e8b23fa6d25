package sqlite

import (
	"container/heap"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/strata-memory/strata"
)

// This file holds the in-memory index of a long conversation's summaries.
//
// FTS5 ranks summaries with BM25 by scoring every row that holds a query
// word: at a million turns a two-word query matches about 15,000 of the
// 100,000 level-1 summaries, and scoring them (one B-tree search of
// nodes_fts_docsize per match for its length) is most of a query's
// cost. A process that keeps the same statistics in memory scores those
// matches in a fraction of a millisecond. The index holds, per
// conversation of at least sumIndexMinTurns turns, every indexed summary's
// terms (ftstoken.go: FTS5's own tokens) with their counts and the
// summary's length, and ranks exactly as FTS5's bm25 does: the scores are
// FTS5's own. In a file of one conversation the index holds every
// statistic BM25 needs; in a file of several, the collection's size and
// length come from FTS5's averages record and each word's document count
// from nodes_fts_vocab, as FTS5 counts them over the whole file.
//
// It is kept in step with the file, whichever process writes it, by
// node_fts_log: triggers append the row key of every indexed node
// inserted, changed or deleted, and keep the newest 32,768 entries. A
// search reads the log's newest entry in its own read transaction; the
// index then reads the nodes named by the entries it has not seen, or
// loads the conversation again when the log no longer holds them.

// sumIndexMinTurns is the conversation length from which summary
// searches use the in-memory index: below it FTS5 ranks in a few
// milliseconds, and loading would cost more than it saves.
// (Tests lower it.)
var sumIndexMinTurns atomic.Int64

func init() { sumIndexMinTurns.Store(20000) }

// BM25's parameters, FTS5's.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// scopeTokens is the number of tokens of an indexed row's scope column
// (conversation and namespace), which FTS5 counts in the row's length.
const scopeTokens = 2

type sumPost struct{ slot, tf int32 }

type sumDoc struct {
	pk     int64
	length int32 // tokens of text and scope, as FTS5 counts them
	dead   bool
}

// sumIndex is the index of one conversation's indexed summaries.
type sumIndex struct {
	load sync.Mutex // one refresh at a time

	mu      sync.RWMutex
	loaded  bool
	ver     int64 // the node_fts_log entry the index has seen last
	terms   map[string]int32
	post    [][]sumPost // per term, in slot order
	docs    []sumDoc
	slotOf  map[int64]int32 // live documents by node row key
	total   int64           // length of the live documents
	dead    int             // dead documents still in posting lists
	scratch []int32         // add's term ids
}

// convIndexes holds a store's in-memory indexes of one kind, by
// conversation row key: those of the maxConvIndexes conversations searched
// last, so that a server of many long conversations holds a bounded number.
type convIndexes[T any] struct {
	mu     sync.Mutex
	tick   uint64
	byConv map[int64]*convEntry[T]
}

type convEntry[T any] struct {
	ix   *T
	used uint64
}

// maxConvIndexes bounds the indexes of each kind a store keeps.
const maxConvIndexes = 16

func (x *convIndexes[T]) get(conv int64) *T {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.byConv == nil {
		x.byConv = map[int64]*convEntry[T]{}
	}
	x.tick++
	e := x.byConv[conv]
	if e == nil {
		if len(x.byConv) >= maxConvIndexes {
			var oldest int64
			var at uint64 = math.MaxUint64
			for c, e := range x.byConv {
				if e.used < at {
					oldest, at = c, e.used
				}
			}
			delete(x.byConv, oldest) // a search still using it finishes with it
		}
		e = &convEntry[T]{ix: new(T)}
		x.byConv[conv] = e
	}
	e.used = x.tick
	return e.ix
}

// WithSummaryIndex sets whether the store ranks the summaries of long
// conversations, and the newest turns a query package searches, in memory
// (on by default; see turnindex.go). A process that answers one query and
// exits pays for loading the indexes and gains nothing from them: the
// command-line tool's one-shot commands turn them off.
func WithSummaryIndex(on bool) Option {
	return func(o *options) { o.noMemIndex = !on }
}

// searchSummaryIndex ranks the indexed summaries of conversation pk
// against terms with the in-memory index, if the conversation is long
// enough to have one and each term is one token; ok is false otherwise,
// and the caller asks FTS5.
func (s *Store) searchSummaryIndex(ctx context.Context, tx querier, pk int64, others bool, terms []string, k int) (hits []strata.Hit, ok bool, err error) {
	toks, ok, err := s.memIndexTokens(ctx, tx, pk, terms)
	if !ok || err != nil {
		return nil, false, err
	}
	ix := s.sums.get(pk)
	if err := ix.refresh(ctx, s, tx, pk); err != nil {
		return nil, false, err
	}
	var file *fileStats
	if others {
		if file, err = readFileStats(ctx, tx, toks); err != nil {
			return nil, false, err
		}
	}
	top := ix.search(toks, k, file, nil)
	if len(top) == 0 {
		return []strata.Hit{}, true, nil
	}
	hits, err = s.readHits(ctx, tx, top)
	return hits, true, err
}

// memIndexTokens returns the FTS5 token of each term if an in-memory
// index serves the searches of conversation pk: the store keeps them, the
// conversation has sumIndexMinTurns turns, and each term is one token (a
// phrase is matched by position, which the indexes do not keep).
func (s *Store) memIndexTokens(ctx context.Context, tx querier, pk int64, terms []string) ([]string, bool, error) {
	if s.noMemIndex || pk == 0 || len(terms) == 0 {
		return nil, false, nil
	}
	toks, ok := singleTokens(terms)
	if !ok {
		return nil, false, nil
	}
	var turns int64
	if err := tx.QueryRowContext(ctx, `SELECT turns FROM conversations WHERE pk = ?`, pk).Scan(&turns); err != nil {
		return nil, false, err
	}
	return toks, turns >= sumIndexMinTurns.Load(), nil
}

// readHits reads the nodes of top, best first, with their scores.
func (s *Store) readHits(ctx context.Context, q querier, top []sumScore) ([]strata.Hit, error) {
	pks := make([]int64, len(top))
	for i, t := range top {
		pks[i] = t.pk
	}
	b, _ := json.Marshal(pks)
	rows, err := q.QueryContext(ctx, `SELECT `+nodeCols+`, n.pk FROM nodes n JOIN conversations c ON c.pk = n.conversation
		WHERE n.pk IN (SELECT value FROM json_each(?))`, string(b))
	if err != nil {
		return nil, fmt.Errorf("sqlite: search summaries: %w", err)
	}
	defer rows.Close()
	byPK := make(map[int64]strata.Node, len(top))
	for rows.Next() {
		var rowid int64
		n, err := scanNode(ctx, s.text, q, rows, &rowid)
		if err != nil {
			return nil, fmt.Errorf("sqlite: search summaries: %w", err)
		}
		byPK[rowid] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: search summaries: %w", err)
	}
	hits := make([]strata.Hit, 0, len(top))
	for _, t := range top {
		n, ok := byPK[t.pk]
		if !ok {
			continue // deleted by a write the index has seen and this read has not
		}
		hits = append(hits, strata.Hit{Kind: strata.KindSummary, Conversation: n.Conversation, Node: &n, Score: t.score})
	}
	return hits, nil
}

// refresh brings the index up to the snapshot of q: it loads the
// conversation's indexed summaries the first time, and afterwards
// applies the log entries written since, or loads again if the log no
// longer holds them all.
func (ix *sumIndex) refresh(ctx context.Context, s *Store, q querier, conv int64) error {
	var newest, oldest int64
	// Two subqueries: each is one seek, where min and max in one query
	// read the whole log.
	if err := q.QueryRowContext(ctx, `SELECT coalesce((SELECT max(seq) FROM node_fts_log), 0),
		coalesce((SELECT min(seq) FROM node_fts_log), 0)`).Scan(&newest, &oldest); err != nil {
		return fmt.Errorf("sqlite: summary index: %w", err)
	}
	ix.mu.RLock()
	fresh := ix.loaded && ix.ver >= newest
	ix.mu.RUnlock()
	if fresh {
		return nil // (an index ahead of this snapshot answers all the same: readHits drops what it cannot read)
	}
	ix.load.Lock()
	defer ix.load.Unlock()
	ix.mu.RLock()
	loaded, ver := ix.loaded, ix.ver
	ix.mu.RUnlock()
	if loaded && ver >= newest {
		return nil
	}
	if !loaded || oldest > ver+1 {
		return ix.reload(ctx, s, q, conv, newest)
	}
	rows, err := q.QueryContext(ctx, `SELECT DISTINCT node FROM node_fts_log WHERE seq > ? AND seq <= ? AND conversation = ?`, ver, newest, conv)
	if err != nil {
		return fmt.Errorf("sqlite: summary index: %w", err)
	}
	var pks []int64
	for rows.Next() {
		var pk int64
		if err := rows.Scan(&pk); err != nil {
			rows.Close()
			return fmt.Errorf("sqlite: summary index: %w", err)
		}
		pks = append(pks, pk)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sqlite: summary index: %w", err)
	}
	texts := map[int64]string{}
	b, _ := json.Marshal(pks)
	err = s.indexedSummaries(ctx, q, `conversation = ? AND pk IN (SELECT value FROM json_each(?))`, []any{conv, string(b)},
		func(pk int64, summary string) { texts[pk] = summary })
	if err != nil {
		return err
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	for _, pk := range pks {
		ix.remove(pk)
		if text, ok := texts[pk]; ok {
			ix.add(pk, text)
		}
	}
	ix.ver = newest
	ix.compact()
	return nil
}

// reload builds the index of conversation conv from q's snapshot, whose
// newest log entry is ver, aside, and swaps it in.
func (ix *sumIndex) reload(ctx context.Context, s *Store, q querier, conv, ver int64) error {
	fresh := &sumIndex{terms: map[string]int32{}, slotOf: map[int64]int32{}}
	if err := s.indexedSummaries(ctx, q, `conversation = ?`, []any{conv}, fresh.add); err != nil {
		return err
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.terms, ix.post, ix.docs, ix.slotOf = fresh.terms, fresh.post, fresh.docs, fresh.slotOf
	ix.total, ix.dead = fresh.total, 0
	ix.ver, ix.loaded = ver, true
	return nil
}

// indexedSummaries calls each with the row key and text of every node
// where cond holds (a condition on nodes, with args) that nodes_fts
// indexes (derived nodes are not).
func (s *Store) indexedSummaries(ctx context.Context, q querier, cond string, args []any, each func(pk int64, summary string)) error {
	rows, err := q.QueryContext(ctx, `SELECT pk, summary FROM nodes WHERE derived = 0 AND `+cond, args...)
	if err != nil {
		return fmt.Errorf("sqlite: summary index: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var pk int64
		var summary string
		if err := rows.Scan(&pk, &summary); err != nil {
			return fmt.Errorf("sqlite: summary index: %w", err)
		}
		if summary, err = s.text.text(ctx, q, summary); err != nil {
			return fmt.Errorf("sqlite: summary index: node #%d: %w", pk, err)
		}
		each(pk, s.fts.text(summary))
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sqlite: summary index: %w", err)
	}
	return nil
}

// add indexes the document pk (a summary, or a turn for turnIndex) whose
// text as the store gives it to FTS5 is text (ftsForm.text).
func (ix *sumIndex) add(pk int64, text string) {
	slot := int32(len(ix.docs))
	length := int32(scopeTokens)
	ids := ix.scratch[:0]
	ftsTokens(text, func(tok []byte) {
		length++
		if len(tok) == 0 {
			return
		}
		id, ok := ix.terms[string(tok)] // (a lookup by string(tok) does not copy it)
		if !ok {
			id = int32(len(ix.post))
			ix.terms[string(tok)] = id
			ix.post = append(ix.post, nil)
		}
		ids = append(ids, id)
	})
	// The document's terms with their counts, from its sorted term ids.
	slices.Sort(ids)
	for i := 0; i < len(ids); {
		j := i + 1
		for j < len(ids) && ids[j] == ids[i] {
			j++
		}
		ix.post[ids[i]] = append(ix.post[ids[i]], sumPost{slot, int32(j - i)})
		i = j
	}
	ix.scratch = ids
	ix.docs = append(ix.docs, sumDoc{pk: pk, length: length})
	ix.slotOf[pk] = slot
	ix.total += int64(length)
}

// remove drops node pk from the index if it is there.
func (ix *sumIndex) remove(pk int64) {
	slot, ok := ix.slotOf[pk]
	if !ok {
		return
	}
	delete(ix.slotOf, pk)
	d := &ix.docs[slot]
	d.dead = true
	ix.total -= int64(d.length)
	ix.dead++
}

// compact drops dead documents from the posting lists once there are
// more than 1,024 and a third as many as live ones.
func (ix *sumIndex) compact() {
	if ix.dead < 1024 || ix.dead < len(ix.slotOf)/3 {
		return
	}
	for id, list := range ix.post {
		kept := list[:0]
		for _, p := range list {
			if !ix.docs[p.slot].dead {
				kept = append(kept, p)
			}
		}
		ix.post[id] = kept
	}
	ix.dead = 0
}

// fileStats are BM25's statistics over every conversation's indexed
// summaries, for a file of several: the number of rows, their mean
// length, and how many rows hold each query term.
type fileStats struct {
	rows  float64
	avgdl float64
	df    []int64
}

// readFileStats reads fileStats from FTS5's own records: nodes_fts's
// averages and nodes_fts_vocab.
func readFileStats(ctx context.Context, q querier, toks []string) (*fileStats, error) {
	st, err := readAverages(ctx, q, "nodes_fts", len(toks))
	if err != nil {
		return nil, err
	}
	for i, t := range toks {
		err := q.QueryRowContext(ctx, `SELECT doc FROM nodes_fts_vocab WHERE term = ? AND col = 'text'`, t).Scan(&st.df[i])
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("sqlite: summary index: %w", err)
		}
	}
	return st, nil
}

// readAverages reads the row count and mean row length of the FTS5 table
// from its averages record (the row count, then each column's total
// tokens), with room for n document counts.
func readAverages(ctx context.Context, q querier, table string, n int) (*fileStats, error) {
	var rec []byte
	err := q.QueryRowContext(ctx, `SELECT block FROM `+table+`_data WHERE id = 1`).Scan(&rec)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("sqlite: %s averages: %w", table, err)
	}
	rows, k := ftsVarint(rec)
	rec = rec[k:]
	var tokens int64
	for len(rec) > 0 {
		v, n := ftsVarint(rec)
		tokens += v
		rec = rec[n:]
	}
	st := &fileStats{rows: float64(rows), df: make([]int64, n)}
	if rows > 0 {
		st.avgdl = float64(tokens) / float64(rows)
	}
	return st, nil
}

// ftsVarint decodes one of SQLite's variable-length integers (7 bits a
// byte, high bit set on all but the last, the ninth byte whole) and
// returns it with its length; 0, len(b) for a truncated one.
func ftsVarint(b []byte) (int64, int) {
	var v uint64
	for i := 0; i < len(b); i++ {
		if i == 8 {
			return int64(v<<8 | uint64(b[i])), 9
		}
		v = v<<7 | uint64(b[i]&0x7f)
		if b[i]&0x80 == 0 {
			return int64(v), i + 1
		}
	}
	return 0, len(b)
}

type sumScore struct {
	pk    int64
	score float64
}

// search returns the k best documents for the query tokens (FTS5's
// terms), best first: score as FTS5's bm25 computes it (negated: higher is
// better), ties by row key. The statistics are the index's own, or file's
// if it is not nil. With keep, only the documents it keeps are ranked.
func (ix *sumIndex) search(toks []string, k int, file *fileStats, keep func(slot int32) bool) []sumScore {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	n := len(ix.slotOf)
	if n == 0 || k <= 0 {
		return nil
	}
	N := float64(n)
	avgdl := float64(ix.total) / N
	if file != nil {
		N, avgdl = file.rows, file.avgdl
	}
	lists := make([][]sumPost, len(toks))
	idf := make([]float64, len(toks))
	for i, t := range toks {
		id, ok := ix.terms[t]
		if !ok {
			continue
		}
		lists[i] = ix.post[id]
		hits := 0
		if file != nil {
			hits = int(file.df[i])
		} else {
			for _, p := range lists[i] {
				if !ix.docs[p.slot].dead {
					hits++
				}
			}
		}
		// Two query words with one stem are two phrases to FTS5, each
		// scored: so they are here.
		v := math.Log((N - float64(hits) + 0.5) / (float64(hits) + 0.5))
		if v <= 0 {
			v = 1e-6
		}
		idf[i] = v
	}
	// Merge the posting lists in slot order, scoring each document once
	// with its terms in the query's order (as FTS5 sums its phrases).
	pos := make([]int, len(lists))
	best := &scoreHeap{}
	for {
		slot := int32(math.MaxInt32)
		for i, l := range lists {
			if pos[i] < len(l) && l[pos[i]].slot < slot {
				slot = l[pos[i]].slot
			}
		}
		if slot == math.MaxInt32 {
			break
		}
		d := ix.docs[slot]
		var score float64
		for i, l := range lists {
			if pos[i] < len(l) && l[pos[i]].slot == slot {
				if !d.dead {
					f := float64(l[pos[i]].tf)
					score += idf[i] * (f * (bm25K1 + 1)) / (f + bm25K1*(1-bm25B+bm25B*float64(d.length)/avgdl))
				}
				pos[i]++
			}
		}
		if d.dead || keep != nil && !keep(slot) {
			continue
		}
		s := sumScore{d.pk, score}
		if best.Len() < k {
			heap.Push(best, s)
		} else if better(s, (*best)[0]) {
			(*best)[0] = s
			heap.Fix(best, 0)
		}
	}
	out := make([]sumScore, best.Len())
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = heap.Pop(best).(sumScore)
	}
	return out
}

// better orders scores best first: higher score, then lower row key.
func better(a, b sumScore) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return a.pk < b.pk
}

// scoreHeap is a min-heap by better: its root is the worst kept.
type scoreHeap []sumScore

func (h scoreHeap) Len() int           { return len(h) }
func (h scoreHeap) Less(i, j int) bool { return better(h[j], h[i]) }
func (h scoreHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *scoreHeap) Push(x any)        { *h = append(*h, x.(sumScore)) }
func (h *scoreHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
