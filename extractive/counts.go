package extractive

import (
	"reflect"
	"strings"
	"sync"

	"github.com/strata-memory/strata"
)

// memo remembers work across requests. What a summary prints comes back
// one level up: the digest of its children reads again the sentences they
// chose and their facts, counts them, their identifiers and their speaker
// labels. Each request looks these up here and leaves what it printed; the
// rest of its work is not worth keeping.
//
//   - Token counts, of one tokenizer at a time (the last one used, told
//     apart by identity): only tokenizers that are pointers are cached (a
//     value may not even be comparable). A count is a function of the
//     tokenizer and the text.
//   - What scan finds in a sentence (see analysis), a function of the
//     sentence alone.
//
// So the memo changes no output, only how much work is done. It keeps at
// most 2*memoSize counts and 2*maxScanMemo analyses, of texts of at most
// maxMemoText bytes, as copies, forgetting the oldest half at a time. It
// is safe for concurrent use.
type memo struct {
	mu  sync.RWMutex
	tok strata.Tokenizer
	// Two generations of each: new entries go to the first; when it is
	// full, it becomes the second and the old second, emptied, the first.
	counts, oldCounts map[string]int
	scans, oldScans   map[string]*analysis
}

const (
	// memoSize is how many texts a generation holds. Two of them cover
	// what a batch of imported turns leaves (a few hundred level-1 spans
	// of 10 turns, about 20 texts each) until the digests above read it.
	memoSize    = 1 << 13
	maxMemoText = 1 << 10
)

func newMemo() *memo {
	return &memo{
		counts: make(map[string]int, memoSize), oldCounts: make(map[string]int, memoSize),
		scans: make(map[string]*analysis, maxScanMemo), oldScans: make(map[string]*analysis, maxScanMemo),
	}
}

// cacheable reports whether counts of tok may be cached: tok is a pointer.
func cacheable(tok strata.Tokenizer) bool {
	return tok != nil && reflect.TypeOf(tok).Kind() == reflect.Pointer
}

// count returns the count of s by tok, if known. The caller holds c.mu
// for reading.
func (c *memo) count(tok strata.Tokenizer, s string) (int, bool) {
	if len(s) > maxMemoText || c.tok != tok {
		return 0, false
	}
	if n, ok := c.counts[s]; ok {
		return n, true
	}
	n, ok := c.oldCounts[s]
	return n, ok
}

// scan returns the analysis of sentence s, if known.
func (c *memo) scan(s string) *analysis {
	if len(s) > maxMemoText {
		return nil
	}
	c.mu.RLock()
	a := c.scans[s]
	if a == nil {
		a = c.oldScans[s]
	}
	c.mu.RUnlock()
	return a
}

// countEntry is a text and its count.
type countEntry struct {
	text string
	n    int
}

// add remembers the counts of entries by tok (counts of another tokenizer
// are dropped first), unless tok is nil, and analyses.
func (c *memo) add(tok strata.Tokenizer, entries []countEntry, scans []*analysis) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if tok != nil {
		if c.tok != tok {
			clear(c.counts)
			clear(c.oldCounts)
			c.tok = tok
		}
		// The new texts, copied into one string.
		fresh, size := entries[:0], 0
		for _, e := range entries {
			if _, ok := c.count(tok, e.text); ok || len(e.text) > maxMemoText {
				continue
			}
			fresh = append(fresh, e)
			size += len(e.text)
		}
		var b strings.Builder
		b.Grow(size)
		for _, e := range fresh {
			b.WriteString(e.text)
		}
		all := b.String()
		for _, e := range fresh {
			if len(c.counts) >= memoSize {
				clear(c.oldCounts)
				c.counts, c.oldCounts = c.oldCounts, c.counts
			}
			key := all[:len(e.text)]
			all = all[len(e.text):]
			if _, ok := c.count(tok, key); !ok { // entries may repeat a text
				c.counts[key] = e.n
			}
		}
	}
	for _, a := range scans {
		if c.scans[a.text] != nil || c.oldScans[a.text] != nil {
			continue
		}
		if len(c.scans) >= maxScanMemo {
			clear(c.oldScans)
			c.scans, c.oldScans = c.oldScans, c.scans
		}
		c.scans[a.text] = a
	}
}

// count returns the token count of s, from the memo when it has it.
func (w *work) count(s string) int {
	if c := w.memo; c != nil && w.counting {
		c.mu.RLock()
		n, ok := c.count(w.tok, s)
		c.mu.RUnlock()
		if ok {
			return n
		}
	}
	return w.tok.Count(s)
}

// countKeep is count for a text the memo should keep: a label or marker.
func (w *work) countKeep(s string) int {
	n := w.count(s)
	if w.memo != nil && w.counting {
		w.keep = append(w.keep, countEntry{s, n})
	}
	return n
}

// countIdents sets the cost of the eligible identifiers of ids, from the
// memo when it has them. Those of turns are mostly new: only a digest's
// are looked up.
func (w *work) countIdents(ids []int32) {
	if c := w.memo; c != nil && w.counting && w.children {
		c.mu.RLock()
		for _, i := range ids {
			if id := &w.idents[i]; id.eligible {
				if n, ok := c.count(w.tok, id.text); ok {
					id.cost, id.counted = n, true
				}
			}
		}
		c.mu.RUnlock()
	}
	for _, i := range ids {
		if id := &w.idents[i]; id.eligible && !id.counted {
			id.cost, id.counted = w.tok.Count(id.text), true
		}
	}
}

// countUnits sets the cost of units, from the memo when it has them: from
// the analysis a unit was replayed from, else from the memo's counts.
// Sentences of turns are new: only those of a digest, its children's, are
// looked up.
func (w *work) countUnits(units []int32) {
	if c := w.memo; c != nil && w.counting && w.children {
		rest := 0
		for _, i := range units {
			if u := &w.units[i]; u.an != nil && u.an.tok == w.tok {
				u.cost = u.an.cost
			} else {
				rest++
			}
		}
		if rest > 0 {
			c.mu.RLock()
			for _, i := range units {
				if u := &w.units[i]; u.cost < 0 {
					if n, ok := c.count(w.tok, u.text); ok {
						u.cost = n
					}
				}
			}
			c.mu.RUnlock()
		}
	}
	for _, i := range units {
		if u := &w.units[i]; u.cost < 0 {
			u.cost = w.tok.Count(u.text)
		}
	}
}

// remember leaves in the memo what the summary printed and the level
// above will read: the counts and analyses of chosen sentences (and the
// counts of the other versions of them), of facts, of identifiers that
// may be listed, of speaker labels and day markers.
func (w *work) remember() {
	if w.memo == nil {
		return
	}
	keep := w.keep // labels and markers, from countKeep
	read := w.scratch[:0]
	for i := range w.units {
		u := &w.units[i]
		if !(u.selected || u.picked) {
			continue
		}
		analyzed := !u.alt && !u.pinned && (u.scanned || u.an != nil)
		if analyzed {
			read = append(read, int32(i)) // its analysis carries its count
		}
		if u.cost < 0 || !w.counting {
			continue
		}
		for j := u.group; j < int32(len(w.units)) && w.units[j].group == u.group; j++ {
			if v := &w.units[j]; v.cost >= 0 && !(j == int32(i) && analyzed) {
				keep = append(keep, countEntry{v.text, v.cost})
			}
		}
	}
	scans := w.analyze(read, w.keepScans[:0])
	w.scratch = read[:0]
	if w.counting {
		for i := range w.idents {
			if id := &w.idents[i]; id.eligible {
				keep = append(keep, countEntry{id.text, id.cost})
			}
		}
	}
	if len(keep) > 0 || len(scans) > 0 {
		tok := w.tok
		if !w.counting {
			tok = nil
		}
		w.memo.add(tok, keep, scans)
	}
	clear(keep)
	w.keep = keep[:0]
	clear(scans)
	w.keepScans = scans[:0]
}
