package extractive

import (
	"strings"

	"github.com/strata-memory/strata"
)

// analysis is what scan finds in one sentence, to be replayed when the
// sentence comes back one level up (see memo): its identifier
// occurrences, its word count and statement shape, and the content words
// it gives addTerm, in order. It depends on the sentence alone, and is
// never changed once made.
type analysis struct {
	text  string // the sentence: blob[:len(text)]
	blob  string // the sentence, then words that are not part of it as they are
	words int
	stmt  int
	toYou bool
	occs  []occRec
	terms []termRec
	// The token count of text by tok, when tok is a tokenizer the memo
	// counts for (see cacheable); else tok is nil.
	tok  strata.Tokenizer
	cost int
}

type occRec struct {
	start, end int32
	kind       kind
	initial    bool
}

// termRec is one call of addTerm: key and surface are blob[off:off+len].
type termRec struct {
	keyOff, keyLen   int32
	surfOff, surfLen int32
	off              int32 // the word's offset in the sentence
	init             bool  // the capitalized first word, kept as initTerm
}

// termEvent is an addTerm call as scan makes it, recorded for analyze.
type termEvent struct {
	key, surface string
	off          int32
	init         bool
}

// maxScanMemo bounds the analyses of a memo generation.
const maxScanMemo = memoSize / 2

// scanUnit scans sentence s of unit u (index ui): from the memo when it
// has the sentence (a digest reading its children), else with scan,
// recording what analyze needs.
func (w *work) scanUnit(s string, ui int32, u *unit) {
	if w.memo == nil {
		w.scan(s, ui, u, false)
		return
	}
	if w.children {
		if a := w.memo.scan(s); a != nil {
			w.replay(a, s, ui, u)
			u.an = a
			return
		}
	}
	lo := len(w.events)
	w.recording = true
	w.scan(s, ui, u, false)
	w.recording = false
	u.evLo, u.evHi, u.scanned = int32(lo), int32(len(w.events)), true
}

// replay does what scan did to sentence s, as a records it.
func (w *work) replay(a *analysis, s string, ui int32, u *unit) {
	for _, o := range a.occs {
		w.occs = append(w.occs, occ{unit: ui, start: o.start, end: o.end, kind: o.kind, initial: o.initial, text: s[o.start:o.end]})
	}
	u.words, u.stmt, u.toYou = a.words, a.stmt, a.toYou
	for _, e := range a.terms {
		key, surface := a.blob[e.keyOff:e.keyOff+e.keyLen], a.blob[e.surfOff:e.surfOff+e.surfLen]
		n := len(w.ustems)
		ti := w.addTerm(key, surface, int(e.off), u)
		if e.init {
			u.initTerm, u.initNew = ti, len(w.ustems) > n
		}
	}
}

// analyze returns the analyses of units, which scanUnit scanned (or
// replayed: those it has). resolve may have turned initial names into
// kNone since; analyze turns them back. The new analyses share three
// allocations: their texts, their terms and their occurrences.
func (w *work) analyze(units []int32, out []*analysis) []*analysis {
	nTerms, nOccs, nNew, size := 0, 0, 0, 0
	for _, ui := range units {
		if u := &w.units[ui]; u.an == nil {
			nTerms += int(u.evHi - u.evLo)
			nOccs += int(u.occHi - u.occLo)
			size += len(u.text) + 8
			nNew++
		}
	}
	var blob strings.Builder
	blob.Grow(size)
	terms := make([]termRec, 0, nTerms)
	occs := make([]occRec, 0, nOccs)
	as := make([]analysis, 0, nNew)
	type rng struct{ lo, hi int }
	spans := make([]rng, 0, nNew)
	for _, ui := range units {
		u := &w.units[ui]
		if u.an != nil {
			out = append(out, u.an)
			continue
		}
		// The blob: the sentence, then the keys and surfaces that are not
		// in it where the word is. Offsets are from its start.
		s := u.text
		lo := blob.Len()
		blob.WriteString(s)
		t0 := len(terms)
		for _, e := range w.events[u.evLo:u.evHi] {
			r := termRec{off: e.off, init: e.init, surfLen: int32(len(e.surface)), keyLen: int32(len(e.key))}
			if end := int(e.off) + len(e.surface); end <= len(s) && s[e.off:end] == e.surface {
				r.surfOff = e.off
			} else {
				r.surfOff = int32(blob.Len() - lo)
				blob.WriteString(e.surface)
			}
			if len(e.key) <= len(e.surface) && e.surface[:len(e.key)] == e.key {
				r.keyOff = r.surfOff
			} else {
				r.keyOff = int32(blob.Len() - lo)
				blob.WriteString(e.key)
			}
			terms = append(terms, r)
		}
		o0 := len(occs)
		for _, o := range w.occs[u.occLo:u.occHi] {
			k := o.kind
			if k == kNone && o.initial {
				k = kName // as scan found it, before resolve
			}
			occs = append(occs, occRec{start: o.start, end: o.end, kind: k, initial: o.initial})
		}
		a := analysis{words: u.words, stmt: u.stmt, toYou: u.toYou,
			terms: terms[t0:len(terms):len(terms)], occs: occs[o0:len(occs):len(occs)]}
		if w.counting && u.cost >= 0 {
			a.tok, a.cost = w.tok, u.cost
		}
		as = append(as, a)
		spans = append(spans, rng{lo, blob.Len()})
	}
	all := blob.String()
	k := 0
	for _, ui := range units {
		if w.units[ui].an != nil {
			continue
		}
		a := &as[k]
		a.blob = all[spans[k].lo:spans[k].hi]
		a.text = a.blob[:len(w.units[ui].text)]
		out = append(out, a)
		k++
	}
	return out
}
