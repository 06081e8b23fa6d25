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

	"github.com/strata-memory/strata"
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
	orderStride             = 1 << 20 // order keys: source index * orderStride + position
	maxPinnedBytes          = 4 << 10 // a pinned turn longer than this is never quoted whole
	maxMentionShare         = 0.35    // budget share kept for Mentions while sentences are chosen
	maxMentionShareChildren = 0.2     // the same, when summarizing child nodes
	maxMentionIDs           = 64      // identifiers considered for Mentions
	maxIdentBytes           = 160     // longer identifiers (blobs) are ignored
	maxFactWords            = 30      // facts longer than this are cut at a clause boundary
	minGain                 = 1.0     // a sentence must add at least this much to be chosen
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
	opt  Options
	memo *memo
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
	return &Summarizer{opt: o, memo: newMemo()}
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
	w.memo, w.counting = s.memo, s.memo != nil && cacheable(w.tok)
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
		// A digest of children copies their sentences, identifiers and
		// facts: its words are all indexed already, in the children's
		// summaries or in the turns.
		Derived: len(req.Children) > 0,
	}
	if req.WantIdentifiers {
		sum.Identifiers = w.keptIdents(sum.Text)
	}
	w.remember()
	w.release()
	return sum, nil
}

// unit is one sentence of the span (or a whole pinned turn), the thing
// selection picks.
type unit struct {
	text      string
	speaker   string
	day       string
	src       int // turn or child index
	order     int // chronological sort key
	weight    float64
	first     bool // first sentence of its turn or child
	pinned    bool // a whole pinned turn
	fact      bool // came from a child's Facts
	question  bool
	trivial   bool
	stmt      int  // an "X is/has/likes ..." statement: 2 for I/we/my/a name, 1 for it/the/this
	toYou     bool // opens with you/your: about the listener, often small talk
	labelish  bool // opens with "Word: ": printed after its speaker's label, always
	colon     bool // ends with ":": it introduced something not kept
	noText    bool // a child's fact whose day is unknown: for Facts only
	picked    bool // one of Summary.Facts
	dead      bool
	selected  bool
	words     int
	content   int // content words
	cost      int // tokens; -1 until counted
	lcost     int // tokens of the speaker label
	dcost     int // tokens of the day marker
	gain      float64
	gainBound float64 // at least what gain returns from now on; +Inf until computed
	extra     int     // insertCost, when extraSet, between sel units extraPrev and extraNext
	extraPrev int32
	extraNext int32
	extraSet  bool
	fscore    int
	stemLo    int32 // w.ustems[stemLo:stemHi]: distinct terms
	stemHi    int32
	idLo      int32 // w.uids[idLo:idHi]: distinct identifiers
	idHi      int32
	occLo     int32 // w.occs[occLo:occHi]: identifier occurrences
	occHi     int32
	pinLo     int32 // for a pinned unit: its turn's sentence units
	pinHi     int32
	initTerm  int32 // the term of a capitalized first word, -1 if none
	initNew   bool  // initTerm was added to the unit's terms by that word
	group     int32 // the sentence this unit is a version of (its own index, or its parent's for a head clause)
	alt       bool  // a head clause of the sentence group
	scanned   bool  // scanUnit recorded w.events[evLo:evHi]
	evLo      int32
	evHi      int32
	an        *analysis // the memo's analysis scanUnit replayed
}

// occ is one occurrence of an identifier. unit is -1 for occurrences found
// outside candidate sentences (beyond the scan bound of a huge turn, or in
// a child's Mentions).
type occ struct {
	unit       int32
	start, end int32
	kind       kind
	initial    bool // a single capitalized word opening its sentence
	shadow     bool // a copy in a head clause: not counted again
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
	counted  bool // cost is set
}

type work struct {
	opt    Options
	tok    strata.Tokenizer
	budget int

	units    []unit
	occs     []occ
	ustems   []int32
	ustemOff []int32 // offset in its unit's text of each ustems entry's first word
	uids     []int32
	terms    []term
	termIdx  map[string]int32
	idents   []ident
	identIdx map[string]int32
	speakers map[string]int // speaker name -> first occurrence index
	children bool
	multiDay bool

	toks      []tok
	spans     []span
	buf       []byte
	rank      []int32  // identifiers, best ranked first
	nameWords []string // see isName
	scratch   []int32

	labelCosts map[string]int
	known      map[string]bool // for resolve

	memo      *memo        // nil for a zero Summarizer
	counting  bool         // the memo has counts of w.tok
	keep      []countEntry // counts to leave in the memo; see remember
	keepScans []*analysis
	recording bool        // addTerm records events (see scanUnit)
	events    []termEvent // recorded addTerm calls

	dayY, dayD int // the last day dayOf formatted
	dayM       time.Month
	dayStr     string
}

// works recycles the scratch state of requests: its maps and slices are
// the bulk of a request's allocations.
var works = sync.Pool{New: func() any {
	return &work{
		termIdx:    make(map[string]int32, 128),
		identIdx:   make(map[string]int32, 32),
		speakers:   make(map[string]int, 4),
		labelCosts: make(map[string]int, 8),
		known:      make(map[string]bool, 16),
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
	w.ustemOff = w.ustemOff[:0]
	clear(w.termIdx)
	clear(w.identIdx)
	clear(w.speakers)
	clear(w.labelCosts)
	clear(w.known)
	w.tok, w.memo, w.counting, w.recording = nil, nil, false, false
	clear(w.keep)
	w.keep = w.keep[:0]
	clear(w.nameWords)
	w.nameWords = w.nameWords[:0]
	clear(w.events)
	w.events = w.events[:0]
	w.children, w.multiDay = false, false
	works.Put(w)
}

// dayOf returns the day of t as day markers print it ("8 May 2023"), ""
// for the zero time. It remembers the last day formatted: the turns of a
// span mostly share it.
func (w *work) dayOf(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	y, m, d := t.Date()
	if w.dayStr == "" || y != w.dayY || m != w.dayM || d != w.dayD {
		w.dayY, w.dayM, w.dayD, w.dayStr = y, m, d, t.Format("2 Jan 2006")
	}
	return w.dayStr
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
		day := w.dayOf(t.Time)
		weight := 1 + t.Importance
		head := text[:cutAt(text, w.opt.SentenceScanBytes)]
		lo := int32(len(w.units))
		pos := 1
		forSegments(head, func(part string, code bool) {
			if code {
				w.scanOnly(part, true)
				return
			}
			w.spans = splitSentences(part, w.spans[:0])
			for _, sp := range w.spans {
				sent := part[sp.start:sp.end]
				if codeLike(sent) || indented(part, sp.start) {
					w.scan(sent, -1, nil, true)
					continue
				}
				w.addSentence(sent, spk, day, ti, ti*orderStride+pos, weight, pos == 1, false)
				pos++
			}
		})
		hi := int32(len(w.units))
		if t.Pinned() && len(text) <= maxPinnedBytes && hi > lo {
			w.addPinned(text, spk, day, ti, weight, lo, hi)
		}
		if len(head) < len(text) {
			rest := text[len(head):]
			mid := rest[:cutAt(rest, w.opt.IdentScanBytes-len(head))]
			w.scanOnly(mid, false)
			if end := len(head) + len(mid); len(text)-end > 0 {
				if from := tailAt(text, w.opt.IdentTailBytes); from >= end {
					w.scanOnly(text[from:], false)
				} else {
					w.scanOnly(text[end:], false)
				}
			}
		}
	}
}

// scanOnly collects the identifiers of text that is not split into
// candidate sentences.
// In code (fenced blocks, code-like lines) only URLs, e-mail addresses,
// paths and code identifiers count: capitalized keywords and numbers there
// are not names and amounts.
func (w *work) scanOnly(text string, code bool) {
	var spans []span
	spans = splitSentences(text, spans)
	for _, sp := range spans {
		w.scan(text[sp.start:sp.end], -1, nil, code)
	}
}

// forSegments calls fn for the prose and the fenced code blocks (``` or
// ~~~ lines) of text, in order.
func forSegments(text string, fn func(part string, code bool)) {
	if (strings.IndexByte(text, '`') < 0 || !strings.Contains(text, "```")) &&
		(strings.IndexByte(text, '~') < 0 || !strings.Contains(text, "~~~")) {
		fn(text, false)
		return
	}
	start, code := 0, false
	for i := 0; i < len(text); {
		end := strings.IndexByte(text[i:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += i + 1
		}
		line := strings.TrimLeft(text[i:end], " \t")
		if strings.HasPrefix(line, "```") || strings.HasPrefix(line, "~~~") {
			if code {
				fn(text[start:end], true) // the block with its fences
				start = end
			} else {
				if i > start {
					fn(text[start:i], false)
				}
				start = i
			}
			code = !code
		}
		i = end
	}
	if start < len(text) {
		fn(text[start:], code)
	}
}

// indented reports whether the line holding byte i of text starts with
// four spaces or a tab: a Markdown code block.
func indented(text string, i int) bool {
	j := i
	for j > 0 && (text[j-1] == ' ' || text[j-1] == '\t') {
		j--
	}
	if j > 0 && text[j-1] != '\n' {
		return false
	}
	return i-j >= 4 || (i > j && text[j] == '\t')
}

// codePrefixes open lines of code, shell sessions, SQL, diffs, test output
// and stack traces.
var codePrefixes = []string{"func ", "def ", "class ", "import ", "package ", "return ", "const ", "let ",
	"var ", "type ", "if (", "for (", "while (", "} ", "#!", "$ ", "--- ", "=== ", "+++ ", "@@ ", ">>> ",
	"//", "/*", "SELECT ", "INSERT ", "UPDATE ", "DELETE ", "CREATE ", "ALTER ", "DROP ", "PRAGMA ",
	"FROM ", "WHERE ", "panic:", "goroutine ", "Traceback ", "\tat ", "<?", "<!"}

// codeLike reports whether a line outside fences is code rather than
// prose: it opens like code, ends in { } ; ( [, its first word is
// key=value, or brackets and operators are over a quarter as many as its
// letters.
func codeLike(s string) bool {
	if strings.HasPrefix(s, "[tool ") {
		return false
	}
	for _, p := range codePrefixesBy[s[0]] {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	switch s[len(s)-1] {
	case '{', '}', ';', '(', '[':
		return true
	}
	first := s
	if sp := strings.IndexByte(s, ' '); sp > 0 {
		first = s[:sp]
	}
	if strings.IndexByte(first, '=') > 0 {
		return true
	}
	// Letters count in the low half, brackets and operators in the high.
	var n uint64
	for i := 0; i < len(s); i++ {
		n += codeCount[s[i]]
	}
	return (n>>32)*4 > n&0xffffffff
}

// codePrefixesBy lists codePrefixes by first byte; codeCount is 1 for
// letters (and bytes of other scripts) and 1<<32 for brackets and
// operators.
var codePrefixesBy, codeCount = func() (by [256][]string, count [256]uint64) {
	for _, p := range codePrefixes {
		by[p[0]] = append(by[p[0]], p)
	}
	for c := 0; c < 256; c++ {
		if isASCIILetter(byte(c)) || c >= utf8.RuneSelf {
			count[c] = 1
		}
	}
	for _, c := range []byte("{}[]()<>=;|&*$#@\\") {
		count[c] = 1 << 32
	}
	return
}()

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
	ui := int32(len(w.units))
	u := unit{text: s, speaker: spk, day: day, src: src, order: order, weight: weight,
		first: first, fact: fact, cost: -1, initTerm: -1, group: ui}
	if i := strings.Index(s, ": "); i > 0 && i <= 40 {
		_, _, u.labelish = cutLabel(s)
	}
	u.colon = strings.HasSuffix(s, ":")
	u.stemLo, u.occLo = int32(len(w.ustems)), int32(len(w.occs))
	w.scanUnit(s, ui, &u)
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
	if !u.question && !fact && u.words >= 10 {
		w.addHeads(ui)
	}
}

// clauseMarks open a trailing clause that a sentence can do without.
var clauseMarks = []string{", which ", ", who ", ", but ", ", and ", ", so ", ", because ",
	", since ", ", although ", ", though ", ", while ", ", where ", ", when ", " - ", " – ", " — ", "; "}

// addHeads adds the head clauses of long sentence pi as alternative,
// shorter versions of it: up to the first and up to the last clause mark
// that leave at least 5 words before and 3 after. Selection takes at most
// one version of a sentence.
func (w *work) addHeads(pi int32) {
	s := w.units[pi].text
	if strings.IndexByte(s, ',') < 0 && strings.IndexByte(s, ';') < 0 &&
		!spaceBefore(s, '-') && !spaceBefore(s, 0xE2) {
		return // no clause mark can start anywhere
	}
	var cuts []int
	words := 1
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == ' ':
			words++
			if i+1 >= len(s) || (s[i+1] != '-' && s[i+1] != 0xE2) { // "-", "–", "—"
				continue
			}
		case c != ',' && c != ';':
			continue
		}
		if words < 5 {
			continue
		}
		for _, m := range clauseMarks {
			if !strings.HasPrefix(s[i:], m) {
				continue
			}
			if strings.Count(s[i+len(m):], " ") < 2 || w.insideOcc(pi, i) {
				break
			}
			if len(cuts) < 2 {
				cuts = append(cuts, i)
			} else {
				cuts[1] = i
			}
			break
		}
	}
	for _, c := range cuts {
		p := w.units[pi]
		ai := int32(len(w.units))
		a := unit{text: strings.TrimRight(s[:c], " ,;:-–—") + ".", speaker: p.speaker, day: p.day, src: p.src,
			order: p.order, weight: p.weight, first: p.first, cost: -1, initTerm: -1, group: pi, alt: true, stmt: p.stmt,
			toYou: p.toYou, labelish: p.labelish, noText: p.noText}
		a.stemLo = int32(len(w.ustems))
		for k := p.stemLo; k < p.stemHi; k++ {
			if int(w.ustemOff[k]) < c {
				w.ustems = append(w.ustems, w.ustems[k])
				w.ustemOff = append(w.ustemOff, w.ustemOff[k])
			}
		}
		a.stemHi = int32(len(w.ustems))
		a.content = int(a.stemHi - a.stemLo)
		if p.initTerm >= 0 && a.stemHi > a.stemLo && w.ustems[a.stemLo] == p.initTerm {
			a.initTerm, a.initNew = p.initTerm, p.initNew
		}
		a.occLo = int32(len(w.occs))
		for k := p.occLo; k < p.occHi; k++ {
			if o := w.occs[k]; int(o.end) <= c {
				o.unit, o.shadow = ai, true
				w.occs = append(w.occs, o)
			}
		}
		a.occHi = int32(len(w.occs))
		a.words = strings.Count(a.text, " ") + 1
		w.units = append(w.units, a)
	}
}

// spaceBefore reports whether byte c follows a space somewhere in s.
func spaceBefore(s string, c byte) bool {
	for i := 0; i < len(s); {
		j := strings.IndexByte(s[i:], c)
		if j < 0 {
			return false
		}
		if i+j > 0 && s[i+j-1] == ' ' {
			return true
		}
		i += j + 1
	}
	return false
}

// insideOcc reports whether byte i of unit ui's text lies inside one of
// its identifiers.
func (w *work) insideOcc(ui int32, i int) bool {
	u := &w.units[ui]
	for _, o := range w.occs[u.occLo:u.occHi] {
		if int(o.start) < i && i < int(o.end) {
			return true
		}
	}
	return false
}

func (w *work) addPinned(text, spk, day string, src int, weight float64, lo, hi int32) {
	s := collapseSpace(text)
	if needsPeriod(s) {
		s += "."
	}
	s, labelish := attribute(s, spk)
	u := unit{text: s, speaker: spk, day: day, src: src, order: src * orderStride, weight: weight,
		pinned: true, cost: -1, pinLo: lo, pinHi: hi, initTerm: -1, group: int32(len(w.units)), labelish: labelish}
	u.stemLo = int32(len(w.ustems))
	for i := lo; i < hi; i++ {
		if w.units[i].alt {
			continue
		}
		for _, t := range w.ustems[w.units[i].stemLo:w.units[i].stemHi] {
			if !slices.Contains(w.ustems[u.stemLo:], t) {
				w.ustems = append(w.ustems, t)
				w.ustemOff = append(w.ustemOff, 0)
			}
		}
		u.words += w.units[i].words
		u.content += w.units[i].content
	}
	u.stemHi = int32(len(w.ustems))
	u.occLo, u.occHi = int32(len(w.occs)), int32(len(w.occs))
	w.units = append(w.units, u)
}

// attribute returns s with "spk: " before every sentence but the first
// that would read as a speaker label ("Decision: we ship"), so that a
// summary read back one level up keeps those words with their speaker. It
// also reports whether the first sentence reads as a label.
func attribute(s, spk string) (string, bool) {
	if spk == "" {
		return s, false
	}
	var b strings.Builder
	last, first := 0, false
	for k, sp := range splitSentences(s, nil) {
		if _, _, ok := cutLabel(s[sp.start:sp.end]); !ok {
			continue
		}
		if k == 0 {
			first = true
			continue
		}
		b.WriteString(s[last:sp.start])
		b.WriteString(spk + ": ")
		last = sp.start
	}
	if last == 0 {
		return s, first
	}
	b.WriteString(s[last:])
	return b.String(), first
}

// scan tokenizes one sentence, records its identifier occurrences and, when
// u is not nil, its content words and statement shape.
func (w *work) scan(s string, ui int32, u *unit, code bool) {
	w.toks = tokenize(s, w.toks[:0])
	sc := sentence{w: w, s: s, toks: w.toks, ui: ui, code: code}
	sc.skipToolMarker(u)
	if !code && strings.IndexByte(s, '`') >= 0 {
		sc.ticks = true
		w.backticks(s, ui)
	}
	sc.identifiers()
	if u == nil {
		return
	}
	sc.contentWords(u)
}

// A sentence is the state of one scan: the text, its tokens and where its
// identifier occurrences go.
type sentence struct {
	w     *work
	s     string
	toks  []tok
	ui    int32
	code  bool // the whole sentence is code
	ticks bool // the sentence has backticks
}

// skipToolMarker drops the marker of "[tool call NAME id=X] {...}" and
// "[tool result NAME id=X] ...", as strata.Turn.Text prints them, from the
// tokens, keeping only the tool name as an occurrence.
func (sc *sentence) skipToolMarker(u *unit) {
	s, toks := sc.s, sc.toks
	if !strings.HasPrefix(s, "[tool ") {
		return
	}
	end := strings.IndexByte(s, ']')
	if end <= 0 {
		return
	}
	k := 0
	for k < len(toks) && toks[k].end <= end {
		k++
	}
	if k >= 3 && (s[toks[1].start:toks[1].end] == "call" || s[toks[1].start:toks[1].end] == "result") &&
		toks[2].kind == kCode {
		sc.w.occs = append(sc.w.occs, occ{unit: sc.ui, start: int32(toks[2].start), end: int32(toks[2].end), kind: kCode, text: s[toks[2].start:toks[2].end]})
	}
	sc.toks = toks[k:]
	if u != nil {
		u.words += k
	}
}

// add records an occurrence of kind k over s[a:b], unless it is too long,
// a keyword or number of code, or a single letter.
func (sc *sentence) add(a, b int, k kind, initial bool) {
	if b-a > maxIdentBytes {
		return
	}
	if (sc.code || sc.ticks && inTicks(sc.s, a)) && k != kURL && k != kEmail && k != kPath && k != kCode {
		return // keywords and numbers of code are no names or amounts
	}
	if k == kName && b-a == 1 {
		return // a single letter
	}
	sc.w.occs = append(sc.w.occs, occ{unit: sc.ui, start: int32(a), end: int32(b), kind: k, initial: initial, text: sc.s[a:b]})
}

// gap returns the text between token k-1 and token k.
func (sc *sentence) gap(k int) string { return sc.s[sc.toks[k-1].end:sc.toks[k].start] }

// str returns the text of token k.
func (sc *sentence) str(k int) string { return sc.s[sc.toks[k].start:sc.toks[k].end] }

// flags returns the word lists token k is in (see wordFlags), looked up
// once.
func (sc *sentence) flags(k int) uint16 {
	if t := &sc.toks[k]; t.flags == flagsUnknown {
		if t.plain {
			t.flags = plainWordFlags(sc.s[t.start:t.end])
		} else {
			t.flags = wordFlags(sc.s[t.start:t.end])
		}
	}
	return sc.toks[k].flags
}

// month reports whether token k is a month name.
func (sc *sentence) month(k int) bool { return monthShape(sc.str(k)) && sc.flags(k)&fMonth != 0 }

// yearAfter reports whether token k+1 exists and is a year following a
// date part: "7 May 2023", "May 7, 2023".
func (sc *sentence) yearAfter(k int) bool {
	return k+1 < len(sc.toks) && isYear(sc.str(k+1)) && (sc.gap(k+1) == " " || sc.gap(k+1) == ", ")
}

// identifiers records the occurrences of names, dates, times, amounts and
// code in the tokens.
func (sc *sentence) identifiers() {
	toks := sc.toks
	for k := 0; k < len(toks); k++ {
		t := toks[k]
		switch t.kind {
		case kURL, kEmail, kPath, kCode:
			sc.add(t.start, t.end, t.kind, false)
		case kDate:
			sc.add(t.start, t.end, kDate, false)
		case kTime:
			end := t.end
			if k+1 < len(toks) && sc.gap(k+1) == " " && isMeridiem(sc.str(k+1)) {
				k++
				end = toks[k].end
			}
			sc.add(t.start, end, kTime, false)
		case kNumber:
			k = sc.number(k)
		case kCap, kAcronym:
			k = sc.capitalized(k)
		}
	}
}

// number records what the number at token k starts: a date (7 May 2023),
// a time (10 am) or an amount (5 miles, $4,500 deposit). It returns the
// last token used.
func (sc *sentence) number(k int) int {
	toks := sc.toks
	t := toks[k]
	ts := sc.s[t.start:t.end]
	// 7 May [2023]
	if k+1 < len(toks) && dayNumber(ts) && sc.gap(k+1) == " " && sc.month(k+1) {
		end := toks[k+1].end
		k++
		if sc.yearAfter(k) {
			k++
			end = toks[k].end
		}
		sc.add(t.start, end, kDate, false)
		return k
	}
	// 10 am
	if k+1 < len(toks) && allDigits(ts) && len(ts) <= 2 && sc.gap(k+1) == " " && isMeridiem(sc.str(k+1)) {
		k++
		sc.add(t.start, toks[k].end, kTime, false)
		return k
	}
	// 5 miles, $4,500 deposit
	end := t.end
	if k+1 < len(toks) && sc.gap(k+1) == " " {
		nw := sc.str(k + 1)
		if toks[k+1].kind == kWord && len(nw) <= 15 && isLetters(nw) && sc.flags(k+1)&fStop == 0 &&
			(sc.flags(k+1)&fUnit != 0 || nw[len(nw)-1] == 's' || ts == "1") ||
			toks[k+1].kind == kAcronym && sc.flags(k+1)&fUnit != 0 {
			end = toks[k+1].end // 5 miles, 3.5 GB, 1 cat; not "18 safety"
		}
	}
	next := k
	if end > t.end && toks[k+1].kind == kAcronym {
		next++ // the unit is no name
	}
	if end > t.end || len(ts) >= 2 {
		kd := kNumber
		if end == t.end && isDigit(ts[0]) && strings.Trim(ts, "0123456789.,") == "" {
			kd = kBare // a count or decimal without its noun or unit: no Mention
		}
		sc.add(t.start, end, kd, false)
	}
	return next
}

// capitalized records what the capitalized word at token k starts: a date
// (May 7, 2023), a weekday or a name. It returns the last token used.
func (sc *sentence) capitalized(k int) int {
	toks := sc.toks
	t := toks[k]
	ts := sc.s[t.start:t.end]
	if sc.month(k) {
		// May 7[, 2023] / May 2023 / March
		end := -1
		if k+1 < len(toks) && sc.gap(k+1) == " " && dayNumber(sc.str(k+1)) {
			k++
			end = toks[k].end
			if sc.yearAfter(k) {
				k++
				end = toks[k].end
			}
		} else if k+1 < len(toks) && sc.gap(k+1) == " " && isYear(sc.str(k+1)) {
			k++
			end = toks[k].end
		} else if !strings.EqualFold(ts, "may") && !strings.EqualFold(ts, "march") && len(ts) > 3 {
			end = t.end
		}
		if end > 0 {
			sc.add(t.start, end, kDate, false)
		}
		return k
	}
	if sc.flags(k)&fWeekday != 0 {
		sc.add(t.start, t.end, kDate, false)
		return k
	}
	if sc.flags(k)&fWeekdayAbbrev != 0 {
		return k // "Sat 30, Sun 12": tabular, not a name
	}
	return sc.name(k)
}

// name records the name starting at token k: consecutive capitalized
// words, joined by single spaces, "Dr. " or a connector ("Bank of
// America"), less leading stop words. It returns the last token used.
func (sc *sentence) name(k int) int {
	toks := sc.toks
	j := k
	for j+1 < len(toks) {
		nk := toks[j+1].kind
		g := sc.gap(j + 1)
		if (nk == kCap || nk == kAcronym) && !sc.month(j+1) && sc.flags(j+1)&fStop == 0 &&
			(g == " " || g == " & " || (g == ". " && sc.flags(j)&fTitle != 0)) {
			j++
			continue
		}
		if nk == kWord && g == " " && j+2 < len(toks) && sc.flags(j+1)&fConnector != 0 &&
			toks[j+2].kind == kCap && sc.gap(j+2) == " " {
			j += 2
			continue
		}
		break
	}
	first := k
	for first <= j {
		fw := sc.str(first)
		if sc.flags(first)&(fStop|fFiller|fStarter) == 0 &&
			!hasPrefixFold(fw, "i'") && !hasPrefixFold(fw, "i’") {
			break
		}
		first++
	}
	if first <= j {
		// A single capitalized word opening the sentence or a
		// clause ("...: Mark the order") may be any word.
		initial := first == j && toks[j].kind == kCap &&
			(j == 0 || strings.ContainsAny(sc.gap(j), ":(\"“—–-•*"))
		sc.add(toks[first].start, toks[j].end, kName, initial)
	}
	return j
}

// contentWords records the content words of u and its statement shape.
func (sc *sentence) contentWords(u *unit) {
	w, s := sc.w, sc.s
	subj, strength := -1, 0
	for k, t := range sc.toks {
		u.words++
		if u.stmt == 0 && (subj < 0 && k < 4 || subj >= 0 && k-subj <= 3) && len(sc.str(k)) <= 24 {
			if k == 0 {
				var a [32]byte
				lw := foldKey(a[:0], sc.str(k))
				u.toYou = bytes.HasPrefix(lw, []byte("you")) && (len(lw) == 3 || lw[3] == '\'' || lw[3] == 'r')
			}
			if subj < 0 {
				st := 0 // factSubject of the word lower-cased
				if f := sc.flags(k); f&fSubject2 != 0 {
					st = 2
				} else if f&fSubject1 != 0 {
					st = 1
				}
				if st == 0 && t.kind == kCap && sc.flags(k)&fStop == 0 {
					st = 2 // a name
				}
				if st > 0 {
					subj, strength = k, st
					var a [32]byte
					lw := foldKey(a[:0], sc.str(k))
					if q := bytes.IndexByte(lw, '\''); q > 0 && factVerbSet.hasBytes(lw[q:]) {
						u.stmt = strength // I'm, we've, she's
					}
				}
			} else if sc.flags(k)&fFactVerb != 0 {
				u.stmt = strength
			}
		}
		if t.kind == kWord && t.plain {
			w.addPlainWord(s[t.start:t.end], t.start, u)
		} else if t.kind == kWord {
			w.addWord(s[t.start:t.end], t.start, u)
		} else if t.kind == kCap && k == 0 {
			// Counted as a word unless resolve finds it is a name.
			n := len(w.ustems)
			if ti := w.addWord(s[t.start:t.end], t.start, u); ti >= 0 {
				u.initTerm, u.initNew = ti, len(w.ustems) > n
				if w.recording {
					w.events[len(w.events)-1].init = true
				}
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

// inTicks reports whether byte i of s lies inside a `code span`.
func inTicks(s string, i int) bool {
	return strings.Count(s[:i], "`")%2 == 1
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
func (w *work) addWord(word string, off int, u *unit) int32 {
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
				w.addTerm(word[prevStart:i+sz], word[prevStart:i+sz], off+prevStart, u)
			}
			prevStart, prevEnd = i, i+sz
		}
		return -1
	}
	if len(word) < 3 || isStop(word) || !isLetters(word) {
		return -1
	}
	lw := lowerWord(word)
	return w.addTerm(stem(lw), lw, off, u)
}

// addPlainWord is addWord for a word of lower-case ASCII letters.
func (w *work) addPlainWord(word string, off int, u *unit) int32 {
	if n := len(word); n < 3 || n <= maxStopLen && stopFilter[n][word[0]-'a'][word[n-1]-'a'] && stopSet.has(word) {
		return -1 // as isStop: lower case needs no folding
	}
	return w.addTerm(stem(word), word, off, u)
}

func (w *work) addTerm(key, surface string, off int, u *unit) int32 {
	ti, ok := w.termIdx[key]
	if !ok {
		ti = int32(len(w.terms))
		w.termIdx[key] = ti
		w.terms = append(w.terms, term{})
	}
	if w.recording {
		w.events = append(w.events, termEvent{key: key, surface: surface, off: int32(off)})
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
		w.ustemOff = append(w.ustemOff, int32(off))
	}
	return ti
}

// resolve turns occurrences into identifiers: it drops sentence-initial
// capitalized words that are not known names, counts identifiers, links
// them to units, and scores units.
func (w *work) resolve() {
	w.resolveOccs()
	w.speakerIdents()
	w.linkUnitIdents()
	w.weigh()
	w.markEligible()
	w.scoreUnits()
}

// resolveOccs counts the identifier of each occurrence, but drops the
// sentence-initial capitalized words that are not known names; those
// that are names are no content words of their sentence.
func (w *work) resolveOccs() {
	known := w.known
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
		id := w.identFor(o.text, o.kind, i)
		if !o.shadow {
			id.freq++
		}
		if o.initial && o.unit >= 0 {
			// A name after all: it is not a content word of its sentence.
			u := &w.units[o.unit]
			if u.initTerm >= 0 {
				u.content--
				if !o.shadow {
					w.terms[u.initTerm].tf--
				}
				if u.initNew && u.stemHi > u.stemLo && w.ustems[u.stemLo] == u.initTerm {
					copy(w.ustems[u.stemLo:u.stemHi], w.ustems[u.stemLo+1:u.stemHi])
					copy(w.ustemOff[u.stemLo:u.stemHi], w.ustemOff[u.stemLo+1:u.stemHi])
					u.stemHi--
				}
				u.initTerm = -1
			}
		}
	}
}

// speakerIdents adds the speakers as identifiers, which their label
// covers, and links nicknames to them.
func (w *work) speakerIdents() {
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
}

// linkUnitIdents lists the identifiers of each unit in uids; a pinned
// turn has those of its sentences.
func (w *work) linkUnitIdents() {
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
}

// weigh sets the weights of terms and identifiers.
func (w *work) weigh() {
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
}

// markEligible marks which identifiers may be listed under Mentions: the
// best ranked, minus those contained in a longer eligible one.
func (w *work) markEligible() {
	var elig [maxMentionIDs]int32
	n := 0
	for _, i := range w.rankedIdents() {
		if n == maxMentionIDs {
			break
		}
		if id := &w.idents[i]; id.speaker == "" && id.kind != kBare {
			id.eligible = true
			elig[n] = i
			n++
		}
	}
	// A text contained in another has none but bytes of the other: masks
	// of the bytes each holds rule out most pairs before the search.
	var masks [maxMentionIDs]uint64
	var lens [maxMentionIDs]int
	var still [maxMentionIDs]bool // eligible, as it stands
	for k, i := range elig[:n] {
		t := w.idents[i].text
		masks[k], lens[k], still[k] = byteMask(t), len(t), true
	}
	// Only a longer one can contain an identifier: byLen orders them,
	// longest first.
	var byLen [maxMentionIDs]int
	for k := range n {
		byLen[k] = k
	}
	slices.SortFunc(byLen[:n], func(x, y int) int { return lens[y] - lens[x] })
	for ka, i := range elig[:n] {
		a := &w.idents[i]
		for _, kb := range byLen[:n] {
			if lens[kb] <= lens[ka] {
				break
			}
			if still[kb] && masks[ka]&^masks[kb] == 0 && containsWord(w.idents[elig[kb]].text, a.text) {
				a.eligible, still[ka] = false, false
				break
			}
		}
	}
	w.countIdents(elig[:n])
}

// scoreUnits marks the trivial units and scores the others as facts.
func (w *work) scoreUnits() {
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
			case kNumber, kDate, kTime, kBare:
				nonName++
				hasND = true
			default:
				nonName++
				hasEnt = true
			}
		}
		if !u.pinned {
			if len(u.text) <= 40 && alnumBytes(u.text) <= maxTrivialLen {
				w.buf = normalizeTrivial(u.text, w.buf)
				u.trivial = trivialSet.hasBytes(w.buf)
			}
			u.trivial = u.trivial || (u.content == 0 && nonName == 0) || (u.content == 0 && u.words <= 2) ||
				(u.content <= 1 && ids == 0 && u.words <= 4)
		}
		if u.trivial || u.question || u.pinned || u.alt || u.words < 4 {
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

// byteMask has bit c%64 set for every byte c of s.
func byteMask(s string) uint64 {
	var m uint64
	for i := 0; i < len(s); i++ {
		m |= 1 << (s[i] & 63)
	}
	return m
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

// keptIdents returns the identifiers of the span that text holds, best
// ranked first, at most maxMentionIDs: those a rewrite of the summary must
// keep too. A speaker's name is kept by its label and is not listed.
func (w *work) keptIdents(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, i := range w.rankedIdents() {
		id := &w.idents[i]
		if id.speaker != "" || id.kind == kCarried && !strings.Contains(text, id.text) {
			continue
		}
		if seen[id.text] || !strings.Contains(text, id.text) {
			continue
		}
		seen[id.text] = true
		out = append(out, id.text)
		if len(out) == maxMentionIDs {
			break
		}
	}
	return out
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
		c = w.countKeep(speaker + ":")
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
		c = w.countKeep("[" + day + "]")
		w.labelCosts[key] = c
	}
	return c
}
