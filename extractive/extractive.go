package extractive

import (
	"bytes"
	"context"
	"math"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"strata"
)

// DefaultBudget is the token budget used when a request gives none.
const DefaultBudget = 120

// Default work bounds; see Options.
const (
	DefaultSentenceScanBytes = 8 << 10
	DefaultIdentScanBytes    = 64 << 10
	DefaultIdentTailBytes    = 8 << 10
	DefaultMaxFacts          = 10
	DefaultMaxThemes         = 6
)

const (
	orderStride     = 1 << 20 // order keys: source index * orderStride + position
	maxPinnedBytes  = 4 << 10 // a pinned turn longer than this is never quoted whole
	maxMentionShare = 0.35    // budget share kept for Mentions while sentences are chosen
	maxMentionIDs   = 64      // identifiers considered for Mentions
	maxIdentBytes   = 160     // longer identifiers (blobs) are ignored
	maxFactWords    = 30      // facts longer than this are cut at a clause boundary
	minGain         = 1.0     // a sentence must add at least this much to be chosen
)

// Options bound the work done per request. Zero fields take the defaults.
type Options struct {
	// SentenceScanBytes is how much of each turn, from its start, is split
	// into candidate sentences. Default 8 KiB.
	SentenceScanBytes int
	// IdentScanBytes is how much of each turn, from its start, is scanned
	// for identifiers; IdentTailBytes more are scanned at its end. Defaults
	// 64 KiB and 8 KiB: a 10 MB turn costs about as much as a 72 KiB one.
	IdentScanBytes int
	IdentTailBytes int
	// MaxFacts and MaxThemes cap Summary.Facts and Summary.Themes.
	// Defaults 10 and 6.
	MaxFacts  int
	MaxThemes int
}

// Summarizer is the offline, deterministic extractive summarizer. It is
// safe for concurrent use.
type Summarizer struct {
	opt Options
}

var _ strata.Summarizer = (*Summarizer)(nil)

// New returns a Summarizer with the default options.
func New() *Summarizer { return NewWithOptions(Options{}) }

// NewWithOptions returns a Summarizer with the given bounds.
func NewWithOptions(o Options) *Summarizer {
	if o.SentenceScanBytes <= 0 {
		o.SentenceScanBytes = DefaultSentenceScanBytes
	}
	if o.IdentScanBytes <= 0 {
		o.IdentScanBytes = DefaultIdentScanBytes
	}
	if o.IdentScanBytes < o.SentenceScanBytes {
		o.IdentScanBytes = o.SentenceScanBytes
	}
	if o.IdentTailBytes <= 0 {
		o.IdentTailBytes = DefaultIdentTailBytes
	}
	if o.MaxFacts <= 0 {
		o.MaxFacts = DefaultMaxFacts
	}
	if o.MaxThemes <= 0 {
		o.MaxThemes = DefaultMaxThemes
	}
	return &Summarizer{opt: o}
}

// Summarize writes the summary of one node: from req.Turns when there are
// no req.Children, else from the children. The text is at most req.Budget
// tokens as counted by req.Tokenizer (strata.CharEstimator when nil)
// whenever any text fits; otherwise it is the shortest useful text and the
// engine marks the node over budget. It returns only ctx's error.
func (s *Summarizer) Summarize(ctx context.Context, req strata.SummaryRequest) (strata.Summary, error) {
	if err := ctx.Err(); err != nil {
		return strata.Summary{}, err
	}
	w := newWork(s.opt, req)
	if len(req.Children) > 0 {
		w.addChildren(req.Children)
	} else {
		w.addTurns(req.Turns)
	}
	if err := ctx.Err(); err != nil {
		return strata.Summary{}, err
	}
	w.resolve()
	sum := strata.Summary{
		Text:   w.compose(),
		Facts:  w.facts(),
		Themes: w.themes(),
		Method: strata.MethodExtractive,
	}
	w.release()
	return sum, nil
}

// unit is one sentence of the span (or a whole pinned turn), the thing
// selection picks.
type unit struct {
	text     string
	speaker  string
	day      string
	src      int // turn or child index
	order    int // chronological sort key
	weight   float64
	first    bool // first sentence of its turn or child
	pinned   bool // a whole pinned turn
	fact     bool // came from a child's Facts
	question bool
	trivial  bool
	stmt     int  // an "X is/has/likes ..." statement: 2 for I/we/my/a name, 1 for it/the/this
	dead     bool
	selected bool
	words    int
	content  int // content words
	cost     int // tokens; -1 until counted
	lcost    int // tokens of the speaker label
	dcost    int // tokens of the day marker
	gain     float64
	fscore   int
	stemLo   int32 // w.ustems[stemLo:stemHi]: distinct terms
	stemHi   int32
	idLo     int32 // w.uids[idLo:idHi]: distinct identifiers
	idHi     int32
	occLo    int32 // w.occs[occLo:occHi]: identifier occurrences
	occHi    int32
	pinLo    int32 // for a pinned unit: its turn's sentence units
	pinHi    int32
	initTerm int32 // the term of a capitalized first word, -1 if none
	initNew  bool  // initTerm was added to the unit's terms by that word
}

// occ is one occurrence of an identifier. unit is -1 for occurrences found
// outside candidate sentences (beyond the scan bound of a huge turn, or in
// a child's Mentions).
type occ struct {
	unit       int32
	start, end int32
	kind       kind
	initial    bool // a single capitalized word opening its sentence
	text       string
}

type form struct {
	text string
	n    int
}

type term struct {
	tf     int
	weight float64
	forms  [3]form // the first surface forms seen, with counts
	theme  int     // extra theme score from children's themes
}

type ident struct {
	text     string
	kind     kind
	freq     int
	first    int
	speaker  string // a speaker's name or nickname: that speaker's label covers it
	cost     int
	weight   float64
	eligible bool // may be listed under Mentions
	covered  bool
}

type work struct {
	opt    Options
	tok    strata.Tokenizer
	budget int

	units    []unit
	occs     []occ
	ustems   []int32
	uids     []int32
	terms    []term
	termIdx  map[string]int32
	idents   []ident
	identIdx map[string]int32
	speakers map[string]int // speaker name -> first occurrence index
	children bool
	multiDay bool

	toks  []tok
	spans []span
	buf   []byte
	rank  []int32 // identifiers, best ranked first

	labelCosts map[string]int
}

// works recycles the scratch state of requests: its maps and slices are
// the bulk of a request's allocations.
var works = sync.Pool{New: func() any {
	return &work{
		termIdx:    make(map[string]int32, 128),
		identIdx:   make(map[string]int32, 32),
		speakers:   make(map[string]int, 4),
		labelCosts: make(map[string]int, 8),
	}
}}

func newWork(o Options, req strata.SummaryRequest) *work {
	w := works.Get().(*work)
	w.opt, w.tok, w.budget = o, req.Tokenizer, req.Budget
	if w.tok == nil {
		w.tok = strata.CharEstimator{}
	}
	if w.budget <= 0 {
		w.budget = DefaultBudget
	}
	return w
}

// release clears w, keeping its capacity, and returns it to the pool.
// Nothing of w may be used afterwards.
func (w *work) release() {
	if cap(w.units) > 4096 || cap(w.occs) > 16384 || len(w.termIdx) > 4096 {
		return // after a huge request: let the GC have it
	}
	clear(w.units)
	clear(w.occs)
	clear(w.terms)
	clear(w.idents)
	w.units, w.occs, w.terms, w.idents = w.units[:0], w.occs[:0], w.terms[:0], w.idents[:0]
	w.ustems, w.uids, w.toks, w.spans, w.rank = w.ustems[:0], w.uids[:0], w.toks[:0], w.spans[:0], w.rank[:0]
	clear(w.termIdx)
	clear(w.identIdx)
	clear(w.speakers)
	clear(w.labelCosts)
	w.tok = nil
	w.children, w.multiDay = false, false
	works.Put(w)
}

func dayOf(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format("2 Jan 2006")
}

// addTurns splits each turn into sentences and scans them.
func (w *work) addTurns(turns []strata.Turn) {
	for ti := range turns {
		t := &turns[ti]
		text := t.Text()
		spk := t.Speaker()
		if t.Name != "" {
			if _, ok := w.speakers[t.Name]; !ok {
				w.speakers[t.Name] = len(w.occs)
			}
		}
		day := dayOf(t.Time)
		weight := 1 + t.Importance
		head := text[:cutAt(text, w.opt.SentenceScanBytes)]
		w.spans = splitSentences(head, w.spans[:0])
		lo := int32(len(w.units))
		for si, sp := range w.spans {
			w.addSentence(head[sp.start:sp.end], spk, day, ti, ti*orderStride+1+si, weight, si == 0, false)
		}
		hi := int32(len(w.units))
		if t.Pinned() && len(text) <= maxPinnedBytes && hi > lo {
			w.addPinned(text, spk, day, ti, weight, lo, hi)
		}
		if len(head) < len(text) {
			rest := text[len(head):]
			mid := rest[:cutAt(rest, w.opt.IdentScanBytes-len(head))]
			w.scanOnly(mid)
			if end := len(head) + len(mid); len(text)-end > 0 {
				if from := tailAt(text, w.opt.IdentTailBytes); from >= end {
					w.scanOnly(text[from:])
				} else {
					w.scanOnly(text[end:])
				}
			}
		}
	}
}

// scanOnly collects the identifiers of text that is not split into
// candidate sentences.
func (w *work) scanOnly(text string) {
	var spans []span
	spans = splitSentences(text, spans)
	for _, sp := range spans {
		w.scan(text[sp.start:sp.end], -1, nil)
	}
}

// needsPeriod reports whether s ends in a letter or digit of a spaced
// script, so that printing another sentence after it would run them
// together.
func needsPeriod(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return (unicode.IsLetter(r) || unicode.IsDigit(r)) && !isSpaceless(r)
}

func (w *work) addSentence(raw, spk, day string, src, order int, weight float64, first, fact bool) {
	s := elideBlobs(stripFillers(collapseSpace(raw)))
	if s == "" {
		return
	}
	if needsPeriod(s) {
		s += "."
	}
	u := unit{text: s, speaker: spk, day: day, src: src, order: order, weight: weight,
		first: first, fact: fact, cost: -1, initTerm: -1}
	ui := int32(len(w.units))
	u.stemLo, u.occLo = int32(len(w.ustems)), int32(len(w.occs))
	w.scan(s, ui, &u)
	u.stemHi, u.occHi = int32(len(w.ustems)), int32(len(w.occs))
	e := len(s)
	for e > 0 {
		r, sz := utf8.DecodeLastRuneInString(s[:e])
		if !isCloser(r) {
			u.question = r == '?' || r == '？' || r == '؟'
			break
		}
		e -= sz
	}
	w.units = append(w.units, u)
}

func (w *work) addPinned(text, spk, day string, src int, weight float64, lo, hi int32) {
	s := collapseSpace(text)
	if needsPeriod(s) {
		s += "."
	}
	u := unit{text: s, speaker: spk, day: day, src: src, order: src * orderStride, weight: weight,
		pinned: true, cost: -1, pinLo: lo, pinHi: hi, initTerm: -1}
	u.stemLo = int32(len(w.ustems))
	for i := lo; i < hi; i++ {
		for _, t := range w.ustems[w.units[i].stemLo:w.units[i].stemHi] {
			if !slices.Contains(w.ustems[u.stemLo:], t) {
				w.ustems = append(w.ustems, t)
			}
		}
		u.words += w.units[i].words
		u.content += w.units[i].content
	}
	u.stemHi = int32(len(w.ustems))
	u.occLo, u.occHi = int32(len(w.occs)), int32(len(w.occs))
	w.units = append(w.units, u)
}

// scan tokenizes one sentence, records its identifier occurrences and, when
// u is not nil, its content words and statement shape.
func (w *work) scan(s string, ui int32, u *unit) {
	w.toks = tokenize(s, w.toks[:0])
	toks := w.toks
	// "[tool call NAME id=X] {...}" and "[tool result NAME id=X] ...", as
	// strata.Turn.Text prints them: of the marker keep only the tool name.
	if strings.HasPrefix(s, "[tool ") {
		if end := strings.IndexByte(s, ']'); end > 0 {
			k := 0
			for k < len(toks) && toks[k].end <= end {
				k++
			}
			if k >= 3 && (s[toks[1].start:toks[1].end] == "call" || s[toks[1].start:toks[1].end] == "result") &&
				toks[2].kind == kCode {
				w.occs = append(w.occs, occ{unit: ui, start: int32(toks[2].start), end: int32(toks[2].end), kind: kCode, text: s[toks[2].start:toks[2].end]})
			}
			toks = toks[k:]
			if u != nil {
				u.words += k
			}
		}
	}
	if strings.IndexByte(s, '`') >= 0 {
		w.backticks(s, ui)
	}
	add := func(a, b int, k kind, initial bool) {
		if b-a > maxIdentBytes {
			return
		}
		w.occs = append(w.occs, occ{unit: ui, start: int32(a), end: int32(b), kind: k, initial: initial, text: s[a:b]})
	}
	gap := func(k int) string { return s[toks[k-1].end:toks[k].start] }
	str := func(k int) string { return s[toks[k].start:toks[k].end] }
	for k := 0; k < len(toks); k++ {
		t := toks[k]
		ts := s[t.start:t.end]
		switch t.kind {
		case kURL, kEmail, kPath, kCode:
			add(t.start, t.end, t.kind, false)
		case kDate:
			add(t.start, t.end, kDate, false)
		case kTime:
			end := t.end
			if k+1 < len(toks) && gap(k+1) == " " && isMeridiem(str(k+1)) {
				k++
				end = toks[k].end
			}
			add(t.start, end, kTime, false)
		case kNumber:
			// 7 May [2023]
			if k+1 < len(toks) && dayNumber(ts) && gap(k+1) == " " && isMonth(s[toks[k+1].start:toks[k+1].end]) {
				end := toks[k+1].end
				k++
				if k+1 < len(toks) && isYear(s[toks[k+1].start:toks[k+1].end]) && (gap(k+1) == " " || gap(k+1) == ", ") {
					k++
					end = toks[k].end
				}
				add(t.start, end, kDate, false)
				continue
			}
			// 10 am
			if k+1 < len(toks) && allDigits(ts) && len(ts) <= 2 && gap(k+1) == " " && isMeridiem(str(k+1)) {
				k++
				add(t.start, toks[k].end, kTime, false)
				continue
			}
			// 5 miles, $4,500 deposit
			end := t.end
			if k+1 < len(toks) && toks[k+1].kind == kWord && gap(k+1) == " " {
				if nw := str(k + 1); len(nw) <= 15 && !inSet(stopWords, nw) && isLetters(nw) {
					end = toks[k+1].end
				}
			}
			if end > t.end || len(ts) >= 2 {
				add(t.start, end, kNumber, false)
			}
		case kCap, kAcronym:
			if isMonth(ts) {
				// May 7[, 2023] / May 2023 / March
				end := -1
				if k+1 < len(toks) && gap(k+1) == " " && dayNumber(s[toks[k+1].start:toks[k+1].end]) {
					k++
					end = toks[k].end
					if k+1 < len(toks) && isYear(s[toks[k+1].start:toks[k+1].end]) && (gap(k+1) == " " || gap(k+1) == ", ") {
						k++
						end = toks[k].end
					}
				} else if k+1 < len(toks) && gap(k+1) == " " && isYear(s[toks[k+1].start:toks[k+1].end]) {
					k++
					end = toks[k].end
				} else if !strings.EqualFold(ts, "may") && !strings.EqualFold(ts, "march") && len(ts) > 3 {
					end = t.end
				}
				if end > 0 {
					add(t.start, end, kDate, false)
				}
				continue
			}
			if inSet(weekdays, ts) {
				add(t.start, t.end, kDate, false)
				continue
			}
			// A name: consecutive capitalized words, joined by single
			// spaces, "Dr. " or a connector ("Bank of America").
			j := k
			for j+1 < len(toks) {
				nk := toks[j+1].kind
				g := gap(j + 1)
				if (nk == kCap || nk == kAcronym) && !isMonth(s[toks[j+1].start:toks[j+1].end]) &&
					(g == " " || (g == ". " && inSet(titles, str(j)))) {
					j++
					continue
				}
				if nk == kWord && g == " " && j+2 < len(toks) && inSet(nameConnectors, str(j+1)) &&
					toks[j+2].kind == kCap && gap(j+2) == " " {
					j += 2
					continue
				}
				break
			}
			first := k
			for first <= j {
				fw := str(first)
				if !inSet(stopWords, fw) && !inSet(fillers, fw) && !hasPrefixFold(fw, "i'") && !hasPrefixFold(fw, "i’") {
					break
				}
				first++
			}
			if first <= j {
				initial := first == 0 && j == 0 && toks[0].kind == kCap
				add(toks[first].start, toks[j].end, kName, initial)
			}
			k = j
		}
	}
	if u == nil {
		return
	}
	// Content words, and the statement shape.
	subj, strength := -1, 0
	for k, t := range toks {
		u.words++
		if k < 8 && u.stmt == 0 && len(str(k)) <= 24 {
			var a [32]byte
			lw := foldKey(a[:0], str(k))
			st := factSubjects[string(lw)]
			if st == 0 && t.kind == kCap && !stopWords[string(lw)] {
				st = 2 // a name
			}
			if subj < 0 && k < 4 && st > 0 {
				subj, strength = k, st
				if q := bytes.IndexByte(lw, '\''); q > 0 && factVerbs[string(lw[q:])] {
					u.stmt = strength // I'm, we've, she's
				}
			} else if subj >= 0 && k-subj <= 3 && factVerbs[string(lw)] {
				u.stmt = strength
			}
		}
		if t.kind == kWord {
			w.addWord(s[t.start:t.end], u)
		} else if t.kind == kCap && k == 0 {
			// Counted as a word unless resolve finds it is a name.
			n := len(w.ustems)
			if ti := w.addWord(s[t.start:t.end], u); ti >= 0 {
				u.initTerm, u.initNew = ti, len(w.ustems) > n
			}
		}
	}
}

func isMeridiem(s string) bool {
	return strings.EqualFold(s, "am") || strings.EqualFold(s, "pm") || strings.EqualFold(s, "a.m") || strings.EqualFold(s, "p.m")
}

func isLetters(s string) bool {
	for _, r := range s {
		if !unicode.IsLetter(r) && r != '-' && r != '\'' {
			return false
		}
	}
	return true
}

// backticks records `code spans` that hold spaces (single words inside
// backticks are tokens of their own).
func (w *work) backticks(s string, ui int32) {
	for i := 0; i < len(s); {
		a := strings.IndexByte(s[i:], '`')
		if a < 0 {
			return
		}
		a += i
		b := strings.IndexByte(s[a+1:], '`')
		if b < 0 {
			return
		}
		b += a + 1
		inner := s[a+1 : b]
		if strings.TrimSpace(inner) != "" && strings.IndexByte(inner, ' ') >= 0 && b+1-a <= maxIdentBytes {
			w.occs = append(w.occs, occ{unit: ui, start: int32(a), end: int32(b + 1), kind: kCode, text: s[a : b+1]})
		}
		i = b + 1
	}
}

// addWord counts a content word of unit u. Words of spaceless scripts are
// counted as overlapping character pairs.
func (w *work) addWord(word string, u *unit) int32 {
	spaceless := false
	for i := 0; i < len(word); i++ {
		if word[i] >= 0xE0 { // a rune of 3 bytes or more: maybe spaceless
			r, _ := utf8.DecodeRuneInString(word[i:])
			if isSpaceless(r) {
				spaceless = true
				break
			}
		}
	}
	if spaceless {
		prevStart, prevEnd := -1, -1
		for i, r := range word {
			sz := utf8.RuneLen(r)
			if !isSpaceless(r) || !unicode.IsLetter(r) || unicode.Is(unicode.Hiragana, r) {
				prevEnd = -1 // Hiragana is mostly grammar
				continue
			}
			if prevEnd == i {
				w.addTerm(word[prevStart:i+sz], word[prevStart:i+sz], u)
			}
			prevStart, prevEnd = i, i+sz
		}
		return -1
	}
	if len(word) < 3 || inSet(stopWords, word) {
		return -1
	}
	lw := lowerWord(word)
	return w.addTerm(stem(lw), lw, u)
}

func (w *work) addTerm(key, surface string, u *unit) int32 {
	ti, ok := w.termIdx[key]
	if !ok {
		ti = int32(len(w.terms))
		w.termIdx[key] = ti
		w.terms = append(w.terms, term{})
	}
	t := &w.terms[ti]
	t.tf++
	for i := range t.forms {
		if f := &t.forms[i]; f.n == 0 || f.text == surface {
			f.text = surface
			f.n++
			break
		}
	}
	u.content++
	if !slices.Contains(w.ustems[u.stemLo:], ti) {
		w.ustems = append(w.ustems, ti)
	}
	return ti
}

// resolve turns occurrences into identifiers: it drops sentence-initial
// capitalized words that are not known names, counts identifiers, links
// them to units, and scores units.
func (w *work) resolve() {
	known := make(map[string]bool, 16)
	for i := range w.occs {
		if o := &w.occs[i]; o.kind == kName && !o.initial {
			known[o.text] = true
		}
	}
	for name := range w.speakers {
		known[name] = true
	}
	for i := range w.occs {
		o := &w.occs[i]
		if o.kind == kName && o.initial && !known[o.text] {
			o.kind = kNone
			continue
		}
		w.identFor(o.text, o.kind, i).freq++
		if o.initial && o.unit >= 0 {
			// A name after all: it is not a content word of its sentence.
			u := &w.units[o.unit]
			if u.initTerm >= 0 {
				u.content--
				w.terms[u.initTerm].tf--
				if u.initNew && u.stemHi > u.stemLo && w.ustems[u.stemLo] == u.initTerm {
					copy(w.ustems[u.stemLo:u.stemHi], w.ustems[u.stemLo+1:u.stemHi])
					u.stemHi--
				}
				u.initTerm = -1
			}
		}
	}
	// Speakers are identifiers too; their label covers them.
	names := make([]string, 0, len(w.speakers))
	for name := range w.speakers {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		id := w.identFor(name, kName, w.speakers[name])
		id.freq++
		id.speaker = name
	}
	for i := range w.idents {
		id := &w.idents[i]
		if id.speaker != "" || id.kind != kName || len(id.text) < 3 {
			continue
		}
		for _, name := range names {
			if len(name) > len(id.text) && strings.HasPrefix(name, id.text) {
				id.speaker = name // a nickname: "Mel" for "Melanie"
				break
			}
		}
	}
	// Unit identifiers.
	for ui := range w.units {
		u := &w.units[ui]
		u.idLo = int32(len(w.uids))
		if u.pinned {
			for j := u.pinLo; j < u.pinHi; j++ {
				v := &w.units[j]
				for _, id := range w.uids[v.idLo:v.idHi] {
					if !slices.Contains(w.uids[u.idLo:], id) {
						w.uids = append(w.uids, id)
					}
				}
			}
		} else {
			for _, o := range w.occs[u.occLo:u.occHi] {
				if o.kind == kNone {
					continue
				}
				id := w.identIdx[o.text]
				if !slices.Contains(w.uids[u.idLo:], id) {
					w.uids = append(w.uids, id)
				}
			}
		}
		u.idHi = int32(len(w.uids))
	}
	// Weights.
	for i := range w.terms {
		w.terms[i].weight = 1 + math.Log(float64(w.terms[i].tf))
	}
	for i := range w.idents {
		id := &w.idents[i]
		id.weight = kindWeight[id.kind] * (1 + 0.5*float64(min(id.freq-1, 4)))
		if id.speaker != "" {
			id.weight = 0.5
		}
	}
	// Which identifiers may be listed under Mentions: the best ranked,
	// minus those contained in a longer eligible one.
	rank := w.rankedIdents()
	n := 0
	for _, i := range rank {
		id := &w.idents[i]
		if n >= maxMentionIDs {
			break
		}
		if id.speaker != "" {
			continue
		}
		id.eligible = true
		n++
	}
	for _, i := range rank {
		a := &w.idents[i]
		if !a.eligible {
			continue
		}
		for _, j := range rank {
			b := &w.idents[j]
			if i != j && b.eligible && len(b.text) > len(a.text) && containsWord(b.text, a.text) {
				a.eligible = false
				break
			}
		}
	}
	for _, i := range rank {
		if id := &w.idents[i]; id.eligible {
			id.cost = w.tok.Count(id.text)
		}
	}
	// Units: trivial, facts.
	for ui := range w.units {
		u := &w.units[ui]
		ids, nonName, hasEnt, hasND := 0, 0, false, false
		for _, i := range w.uids[u.idLo:u.idHi] {
			id := &w.idents[i]
			ids++
			switch id.kind {
			case kName, kAcronym, kCap:
				if id.speaker == "" {
					hasEnt = true
				}
			case kNumber, kDate, kTime:
				nonName++
				hasND = true
			default:
				nonName++
				hasEnt = true
			}
		}
		if !u.pinned {
			if len(u.text) <= 40 {
				w.buf = normalizeTrivial(u.text, w.buf)
				u.trivial = trivialSentences[string(w.buf)]
			}
			u.trivial = u.trivial || (u.content == 0 && nonName == 0) ||
				(u.content <= 1 && ids == 0 && u.words <= 4)
		}
		if u.trivial || u.question || u.pinned || u.words < 4 {
			continue
		}
		switch {
		case hasEnt && hasND:
			u.fscore = 3
		case hasND:
			u.fscore = 2
		case hasEnt:
			u.fscore = 1
		}
		u.fscore += u.stmt
		if u.fact {
			u.fscore += 2
		}
		if u.weight >= 1+strata.PinnedImportance {
			u.fscore += 2
		}
	}
}

func (w *work) identFor(text string, k kind, first int) *ident {
	i, ok := w.identIdx[text]
	if !ok {
		i = int32(len(w.idents))
		w.identIdx[text] = i
		w.idents = append(w.idents, ident{text: text, kind: k, first: first})
	}
	return &w.idents[i]
}

// rankedIdents returns identifier indexes by frequency, then first
// occurrence.
func (w *work) rankedIdents() []int32 {
	if len(w.rank) == len(w.idents) {
		return w.rank
	}
	r := w.rank[:0]
	for i := range w.idents {
		r = append(r, int32(i))
	}
	w.rank = r
	slices.SortFunc(r, func(a, b int32) int {
		x, y := &w.idents[a], &w.idents[b]
		if x.freq != y.freq {
			return y.freq - x.freq
		}
		if x.first != y.first {
			return x.first - y.first
		}
		return strings.Compare(x.text, y.text)
	})
	return r
}

func (w *work) labelCost(speaker string) int {
	if speaker == "" {
		return 0
	}
	c, ok := w.labelCosts[speaker]
	if !ok {
		c = w.tok.Count(speaker + ":")
		w.labelCosts[speaker] = c
	}
	return c
}

func (w *work) dayCost(day string) int {
	if !w.multiDay || day == "" {
		return 0
	}
	key := "\x00" + day
	c, ok := w.labelCosts[key]
	if !ok {
		c = w.tok.Count("[" + day + "]")
		w.labelCosts[key] = c
	}
	return c
}
