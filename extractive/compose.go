package extractive

import (
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

const (
	maxCandidates = 256 // sentences counted by the tokenizer per request
	mentionsLabel = "Mentions: "
)

// compose chooses sentences and Mentions within the budget and returns the
// summary text.
func (w *work) compose() string {
	live := w.candidates()
	w.countUnits(live)
	w.priceLabels(live)
	defer func() { w.scratch = live[:0] }()
	c := w.newChoice(live)
	c.choosePins()
	c.chooseGreedy()
	if len(c.sel) == 0 && c.uncov > 0 {
		if text, ok := c.mentionsAlone(); ok {
			return text
		}
	}
	if len(c.sel) == 0 {
		c.chooseBestOne()
	}
	return c.fit()
}

// candidates returns the units compose may choose from: non-trivial
// sentences, or every sentence when all are trivial, at most maxCandidates
// of them. It marks the others dead and sets multiDay: day markers are
// printed only when the span covers several days.
func (w *work) candidates() []int32 {
	hasReal := false
	firstDay := ""
	for i := range w.units {
		u := &w.units[i]
		if !u.trivial {
			hasReal = true
		}
		if u.day != "" {
			if firstDay == "" {
				firstDay = u.day
			} else if u.day != firstDay {
				w.multiDay = true
			}
		}
	}
	live := w.scratch[:0]
	for i := range w.units {
		u := &w.units[i]
		if u.trivial && hasReal || u.noText {
			u.dead = true
			continue
		}
		live = append(live, int32(i))
	}
	if len(live) > maxCandidates {
		// Keep the candidates of best gain per byte; the rest are never
		// counted.
		slices.SortStableFunc(live, func(a, b int32) int {
			x, y := w.units[a].density(w), w.units[b].density(w)
			switch {
			case x > y:
				return -1
			case x < y:
				return 1
			}
			return 0
		})
		for _, i := range live[maxCandidates:] {
			w.units[i].dead = true
		}
		live = live[:maxCandidates]
		slices.Sort(live)
	}
	return live
}

// priceLabels sets the cost of the speaker label and day marker each live
// unit would bring.
func (w *work) priceLabels(live []int32) {
	for k, i := range live {
		u := &w.units[i]
		if p := &w.units[live[max(k-1, 0)]]; k > 0 && p.speaker == u.speaker && p.day == u.day {
			u.lcost, u.dcost = p.lcost, p.dcost // the same turn, mostly
			continue
		}
		u.lcost, u.dcost = w.labelCost(u.speaker), w.dayCost(u.day)
	}
}

// A choice is compose's state: the sentences chosen so far, in order, the
// tokens they take, and what they cover.
type choice struct {
	w            *work
	live         []int32
	sel          []int32
	used         int
	covered      []bool // by term
	srcSeen      []bool // by source
	uncov        int    // tokens the Mentions of every uncovered identifier would take
	mentionLabel int    // tokens of the Mentions label, if any Mentions may be needed
	maxReserve   int    // most tokens the greedy pass keeps for Mentions
}

func (w *work) newChoice(live []int32) *choice {
	c := &choice{w: w, live: live, sel: make([]int32, 0, 16)}
	covered := make([]bool, len(w.terms)+w.sources())
	c.covered, c.srcSeen = covered[:len(w.terms)], covered[len(w.terms):]
	for i := range w.idents {
		if id := &w.idents[i]; id.eligible {
			c.uncov += id.cost + 1
		}
	}
	if c.uncov > 0 {
		c.mentionLabel = w.countKeep(strings.TrimSpace(mentionsLabel))
	}
	share := maxMentionShare
	if w.children {
		// A digest first covers every child; the children's identifiers
		// were already listed one level down.
		share = maxMentionShareChildren
	}
	c.maxReserve = int(float64(w.budget) * share)
	return c
}

// choose adds unit ui, which takes extra tokens and gains g, and marks what
// it covers; its other versions, and the sentences of a pinned turn, die.
func (c *choice) choose(ui int32, extra int, g float64) {
	w := c.w
	u := &w.units[ui]
	u.selected, u.gain = true, g
	c.sel = slices.Insert(c.sel, w.selPos(c.sel, u.order), ui)
	c.used += extra
	c.srcSeen[u.src] = true
	for _, t := range w.ustems[u.stemLo:u.stemHi] {
		c.covered[t] = true
	}
	for _, i := range w.uids[u.idLo:u.idHi] {
		if id := &w.idents[i]; !id.covered {
			id.covered = true
			if id.eligible {
				c.uncov -= id.cost + 1
			}
		}
	}
	for i := range w.idents {
		if id := &w.idents[i]; id.speaker != "" && id.speaker == u.speaker {
			id.covered = true
		}
	}
	if u.pinned {
		for j := u.pinLo; j < u.pinHi; j++ {
			w.units[j].dead = true
		}
	}
	// Other versions of the same sentence.
	for j := u.group; j < int32(len(w.units)) && w.units[j].group == u.group; j++ {
		if j != ui {
			w.units[j].dead = true
		}
	}
}

// choosePins chooses the pinned turns first, whole, heaviest first, each
// if it fits.
func (c *choice) choosePins() {
	w := c.w
	var pins []int32
	for _, i := range c.live {
		if w.units[i].pinned {
			pins = append(pins, i)
		}
	}
	slices.SortStableFunc(pins, func(a, b int32) int {
		x, y := &w.units[a], &w.units[b]
		if x.weight != y.weight {
			if x.weight > y.weight {
				return -1
			}
			return 1
		}
		return x.order - y.order
	})
	for _, i := range pins {
		if extra := w.insertCost(c.sel, i); c.used+extra <= w.budget {
			c.choose(i, extra, w.gain(&w.units[i], c.covered, c.srcSeen))
		}
	}
}

// chooseGreedy chooses, again and again, the sentence adding the most
// uncovered weight per token, while the Mentions of what stays uncovered
// still fit.
func (c *choice) chooseGreedy() {
	w := c.w
	for _, i := range c.live {
		w.units[i].gainBound = math.Inf(1)
	}
	for {
		best, bestExtra, bestGain := c.bestNext()
		if best < 0 {
			break
		}
		if w.similar(best, c.sel) {
			w.units[best].dead = true
			continue
		}
		c.choose(best, bestExtra, bestGain)
	}
}

// bestNext returns the unit of best gain per token that fits, with its
// extra tokens and gain, or -1.
func (c *choice) bestNext() (best int32, bestExtra int, bestGain float64) {
	w := c.w
	best = -1
	bestRatio := 0.0
	for _, i := range c.live {
		u := &w.units[i]
		if u.dead || u.selected || u.pinned {
			continue
		}
		extra := w.insertCostAt(c.sel, i)
		if c.used+extra > w.budget {
			continue
		}
		if extra+3 > 0 && u.gainBound/float64(extra+3) <= bestRatio {
			continue // cannot beat the best: gains only decrease
		}
		newly := 0
		for _, id := range w.uids[u.idLo:u.idHi] {
			if x := &w.idents[id]; x.eligible && !x.covered {
				newly += x.cost + 1
			}
		}
		if after := c.uncov - newly; after > 0 {
			if c.used+extra+min(after+c.mentionLabel, c.maxReserve) > w.budget {
				continue
			}
		}
		g := w.gain(u, c.covered, c.srcSeen)
		u.gainBound = g
		if g < minGain {
			continue
		}
		if r := g / float64(extra+3); r > bestRatio {
			best, bestExtra, bestRatio, bestGain = i, extra, r, g
		}
	}
	return best, bestExtra, bestGain
}

// mentionsAlone returns, when no sentence fits, the identifiers alone, as
// many as fit, and whether there were any.
func (c *choice) mentionsAlone() (string, bool) {
	w := c.w
	ments := w.mentions("", c.used, c.mentionLabel)
	if len(ments) == 0 {
		return "", false
	}
	text := w.render(nil, ments, -1, "")
	for n := w.tok.Count(text); n > w.budget && len(ments) > 1; n = w.tok.Count(text) {
		ments = ments[:len(ments)-1]
		text = w.render(nil, ments, -1, "")
	}
	return text, true
}

// chooseBestOne chooses the single unpinned sentence of best gain, to be
// cut to the budget by fit.
func (c *choice) chooseBestOne() {
	w := c.w
	best, bestGain := int32(-1), -1.0
	for _, i := range c.live {
		if g := w.gain(&w.units[i], c.covered, c.srcSeen); g > bestGain && !w.units[i].pinned {
			best, bestGain = i, g
		}
	}
	if best >= 0 {
		c.choose(best, w.insertCost(c.sel, best), bestGain)
	}
}

// fit renders the chosen sentences and the Mentions of the identifiers no
// chosen sentence carries, best ranked first, as far as the budget allows.
// One exact count decides; it trims if the sum of the parts was
// optimistic.
func (c *choice) fit() string {
	w := c.w
	sel := c.sel
	body := w.render(sel, nil, -1, "")
	var ments []int32
	if c.uncov > 0 {
		ments = w.mentions(body, c.used, c.mentionLabel)
	}
	text := body
	if len(ments) > 0 {
		text = w.render(sel, ments, -1, "")
	}
	n := w.tok.Count(text)
	for iter := 0; n > w.budget && iter < 16 && (len(ments) > 0 || len(sel) > 1); iter++ {
		if len(ments) > 0 {
			saved := 0
			for len(ments) > 0 && saved < n-w.budget {
				saved += w.idents[ments[len(ments)-1]].cost + 1
				ments = ments[:len(ments)-1]
			}
		} else {
			worst := 0
			for k := range sel {
				if w.units[sel[k]].gain <= w.units[sel[worst]].gain {
					worst = k
				}
			}
			sel = slices.Delete(sel, worst, worst+1)
		}
		text = w.render(sel, ments, -1, "")
		n = w.tok.Count(text)
	}
	if n > w.budget && len(sel) == 1 {
		text = w.trimUnit(sel)
	}
	return text
}

// mentions returns the eligible identifiers that body does not carry,
// best ranked first, as many as fit the budget after used tokens.
func (w *work) mentions(body string, used, label int) []int32 {
	var ments []int32
	cost := used + label
	for _, i := range w.rankedIdents() {
		id := &w.idents[i]
		if !id.eligible || id.covered || cost+id.cost+1 > w.budget || containsWord(body, id.text) {
			continue
		}
		ments = append(ments, i)
		cost += id.cost + 1
	}
	return ments
}

// sources returns one more than the highest source index.
func (w *work) sources() int {
	n := 0
	for i := range w.units {
		n = max(n, w.units[i].src+1)
	}
	return n
}

// density estimates gain per byte, to pick which sentences of a very
// large span are worth counting.
func (u *unit) density(w *work) float64 {
	g := 0.0
	for _, t := range w.ustems[u.stemLo:u.stemHi] {
		g += w.terms[t].weight
	}
	for _, i := range w.uids[u.idLo:u.idHi] {
		g += w.idents[i].weight
	}
	return g * u.weight / float64(len(u.text)+16)
}

// gain is what choosing u adds: the weight of its uncovered content words
// and identifiers, scaled by turn importance and position.
func (w *work) gain(u *unit, covered, srcSeen []bool) float64 {
	g := 0.0
	for _, t := range w.ustems[u.stemLo:u.stemHi] {
		if !covered[t] {
			g += w.terms[t].weight
		}
	}
	for _, i := range w.uids[u.idLo:u.idHi] {
		if !w.idents[i].covered {
			g += w.idents[i].weight
		}
	}
	g *= u.weight
	if u.first {
		g *= 1.15
	}
	if u.question {
		g *= 0.6
	}
	if u.colon {
		g *= 0.5 // "Here's the table:" without the table
	}
	switch {
	case u.stmt == 2:
		g *= 1.25 // I/we/my/Name + verb: what a memory is asked about
	case u.toYou:
		g *= 0.8
	}
	if u.fact {
		g *= 1.1
	}
	if w.children && !srcSeen[u.src] {
		g *= 2 // a digest of every child, not of the first
	}
	return g
}

// similar reports whether unit ui nearly repeats a chosen one: the same
// words, or a Jaccard overlap of terms and identifiers of 0.75 or more.
func (w *work) similar(ui int32, sel []int32) bool {
	u := &w.units[ui]
	us, uid := w.ustems[u.stemLo:u.stemHi], w.uids[u.idLo:u.idHi]
	for _, j := range sel {
		v := &w.units[j]
		if v.pinned && ui >= v.pinLo && ui < v.pinHi {
			return true
		}
		vs, vid := w.ustems[v.stemLo:v.stemHi], w.uids[v.idLo:v.idHi]
		inter := 0
		for _, t := range us {
			if slices.Contains(vs, t) {
				inter++
			}
		}
		for _, t := range uid {
			if slices.Contains(vid, t) {
				inter++
			}
		}
		union := len(us) + len(uid) + len(vs) + len(vid) - inter
		if union == 0 {
			if strings.EqualFold(u.text, v.text) {
				return true
			}
			continue
		}
		if union >= 2 && float64(inter) >= 0.75*float64(union) {
			return true
		}
	}
	return false
}

// headCost is the cost of what is printed before b when a precedes it: a
// day marker when the day changes, a speaker label when the speaker does.
func (w *work) headCost(a, b *unit) int {
	c := 0
	newDay := w.multiDay && b.day != "" && (a == nil || a.day != b.day)
	if newDay {
		c += b.dcost
	}
	if newDay || a == nil || a.speaker != b.speaker || b.labelish {
		c += b.lcost
	}
	return c
}

// insertCost is how many tokens inserting unit ui into sel, in
// chronological order, adds to the text.
func (w *work) insertCost(sel []int32, ui int32) int {
	u := &w.units[ui]
	p := w.selPos(sel, u.order)
	var prev, next *unit
	if p > 0 {
		prev = &w.units[sel[p-1]]
	}
	if p < len(sel) {
		next = &w.units[sel[p]]
	}
	c := u.cost + w.headCost(prev, u)
	if next != nil {
		c += w.headCost(u, next) - w.headCost(prev, next)
	}
	return c
}

// insertCostAt is insertCost, remembered for the unit's neighbours in
// sel: it depends on nothing else while compose chooses.
func (w *work) insertCostAt(sel []int32, ui int32) int {
	u := &w.units[ui]
	p := w.selPos(sel, u.order)
	prev, next := int32(-1), int32(-1)
	if p > 0 {
		prev = sel[p-1]
	}
	if p < len(sel) {
		next = sel[p]
	}
	if !u.extraSet || u.extraPrev != prev || u.extraNext != next {
		u.extra, u.extraPrev, u.extraNext, u.extraSet = w.insertCost(sel, ui), prev, next, true
	}
	return u.extra
}

// selPos returns where a unit of the given order goes in sel, which is in
// chronological order: before the first unit of that order or later.
func (w *work) selPos(sel []int32, order int) int {
	lo, hi := 0, len(sel)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if w.units[sel[m]].order < order {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// render prints the chosen units in order, grouped by day and speaker,
// then the Mentions. Unit sel[override] is printed as text when override
// is not -1.
func (w *work) render(sel, ments []int32, override int, text string) string {
	var b strings.Builder
	n := len(text) + 16
	for _, i := range sel {
		n += len(w.units[i].text) + len(w.units[i].speaker) + 16
	}
	for _, i := range ments {
		n += len(w.idents[i].text) + 2
	}
	b.Grow(n)
	var prev *unit
	for k, i := range sel {
		u := &w.units[i]
		newDay := w.multiDay && u.day != "" && (prev == nil || prev.day != u.day)
		if newDay {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString("[" + u.day + "] ")
		} else if b.Len() > 0 {
			b.WriteByte(' ')
		}
		if (newDay || prev == nil || prev.speaker != u.speaker || u.labelish) && u.speaker != "" {
			b.WriteString(u.speaker)
			b.WriteString(": ")
		}
		if k == override {
			b.WriteString(text)
		} else {
			b.WriteString(u.text)
		}
		prev = u
	}
	if len(ments) > 0 {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(mentionsLabel)
		for k, i := range ments {
			if k > 0 {
				b.WriteString("; ")
			}
			b.WriteString(w.idents[i].text)
		}
	}
	return b.String()
}

// boundaries returns the places where the unit's text may be cut: before
// a space, or between characters of a spaceless script, never inside an
// identifier.
func (w *work) boundaries(u *unit) []int {
	var out []int
	inside := func(i int) bool {
		for _, o := range w.occs[u.occLo:u.occHi] {
			if o.kind != kNone && int(o.start) < i && i < int(o.end) {
				return true
			}
		}
		return false
	}
	prevWide := false
	for i, r := range u.text {
		wide := isSpaceless(r)
		if i > 0 && (r == ' ' || wide || prevWide) && !inside(i) {
			out = append(out, i)
		}
		prevWide = wide
	}
	return out
}

// trimUnit cuts the single chosen unit at the last boundary where the text
// fits the budget, marking the cut with "…". When not even one word fits
// it returns the first word: the shortest useful text, over budget. A
// first "word" longer than any identifier is a blob and is cut anywhere.
func (w *work) trimUnit(sel []int32) string {
	u := &w.units[sel[0]]
	cuts := w.boundaries(u)
	render := func(end int) string {
		return w.render(sel, nil, 0, strings.TrimRight(u.text[:end], " ,;:-")+"…")
	}
	lo, hi := 0, len(cuts)-1 // find the last cut that fits
	best := -1
	for lo <= hi {
		mid := (lo + hi) / 2
		if w.tok.Count(render(cuts[mid])) <= w.budget {
			best, lo = mid, mid+1
		} else {
			hi = mid - 1
		}
	}
	if best >= 0 {
		return render(cuts[best])
	}
	if w.multiDay {
		w.multiDay = false // no room for a day marker
		return w.trimUnit(sel)
	}
	first := len(u.text)
	if len(cuts) > 0 {
		first = cuts[0]
	}
	if first > maxIdentBytes {
		// A blob, not a word: cut it at a rune boundary that fits.
		end := 0
		lo, hi := 1, first
		for lo <= hi {
			mid := (lo + hi) / 2
			m := mid
			for m > 0 && !utf8.RuneStart(u.text[m]) {
				m--
			}
			if w.tok.Count(render(m)) <= w.budget {
				end, lo = m, mid+1
			} else {
				hi = mid - 1
			}
		}
		if end > 0 {
			return render(end)
		}
		return render(min(first, 16))
	}
	if first == len(u.text) {
		return w.render(sel, nil, -1, "")
	}
	return render(first)
}

// facts returns up to MaxFacts short statements, each attributed to its
// speaker, in chronological order: sentences with a name and a number or
// date, "X is/has/likes ..." statements, children's facts.
func (w *work) facts() []string {
	cands := w.scratch[:0]
	for i := range w.units {
		if u := &w.units[i]; u.fscore >= 2 {
			cands = append(cands, int32(i))
		}
	}
	slices.SortStableFunc(cands, func(a, b int32) int {
		x, y := &w.units[a], &w.units[b]
		if x.fscore != y.fscore {
			return y.fscore - x.fscore
		}
		return x.order - y.order
	})
	picked := make([]int32, 0, w.opt.MaxFacts)
	for _, i := range cands {
		if len(picked) >= w.opt.MaxFacts {
			break
		}
		dup := false
		a := strings.TrimRight(w.units[i].text, ".!?…")
		for _, j := range picked {
			// The same sentence, or one a head clause of the other.
			b := strings.TrimRight(w.units[j].text, ".!?…")
			if hasPrefixFold(a, b) || hasPrefixFold(b, a) {
				dup = true
				break
			}
		}
		if !dup {
			picked = append(picked, i)
		}
	}
	w.scratch = cands[:0]
	slices.SortFunc(picked, func(a, b int32) int { return w.units[a].order - w.units[b].order })
	out := make([]string, 0, len(picked))
	for _, i := range picked {
		u := &w.units[i]
		u.picked = true
		s := w.shorten(u)
		if u.speaker != "" {
			s = u.speaker + ": " + s
		}
		out = append(out, s)
	}
	return out
}

// shorten cuts a sentence of more than maxFactWords words at its last
// clause boundary (", ", "; ", " - ") within the limit, else at the last
// space within it, never inside an identifier.
func (w *work) shorten(u *unit) string {
	if u.words <= maxFactWords {
		return u.text
	}
	cuts := w.boundaries(u)
	limit := -1
	for k, c := range cuts {
		if k+1 >= maxFactWords {
			break
		}
		limit = c
	}
	if limit < 0 {
		return u.text
	}
	best := limit
	for _, c := range cuts {
		if c > limit {
			break
		}
		if c > len(u.text)/4 && c > 0 && strings.ContainsRune(",;-–—", rune(u.text[c-1])) {
			best = c - 1
		}
	}
	return strings.TrimRight(u.text[:best], " ,;:-") + "…"
}

// themes returns the span's top keywords, lower case, best first, ties
// alphabetical: content words by frequency (plus children's themes),
// acronyms, never names.
func (w *work) themes() []string {
	type cand struct {
		text  string
		score int
	}
	cands := make([]cand, 0, 32)
	var weak []string // themes of score 1, used only when fewer than 3 are better
	strong := 0
	for i := range w.terms {
		if t := &w.terms[i]; t.tf+t.theme >= 2 {
			strong++
		}
	}
	for i := range w.terms {
		t := &w.terms[i]
		if t.tf+t.theme <= 0 || t.forms[0].n == 0 || (strong >= 3 && t.tf+t.theme < 2) {
			continue
		}
		f := t.forms[0]
		for _, g := range t.forms[1:] {
			if g.n > f.n || (g.n > 0 && g.n == f.n && g.text < f.text) {
				f = g
			}
		}
		r, _ := utf8.DecodeRuneInString(f.text)
		if isSpaceless(r) && !unicode.In(r, unicode.Han, unicode.Katakana) {
			continue // Thai, Lao...: character pairs are no keywords
		}
		if themeStopSet.has(f.text) || (!isSpaceless(r) && utf8.RuneCountInString(f.text) < 3) || !unicode.IsLetter(r) {
			continue
		}
		if sc := t.tf + t.theme; sc >= 2 {
			cands = append(cands, cand{f.text, sc})
		} else {
			weak = append(weak, f.text)
		}
	}
	for i := range w.idents {
		if id := &w.idents[i]; id.kind == kName && id.speaker == "" && isAcronym(id.text) {
			cands = append(cands, cand{strings.ToLower(id.text), id.freq})
		}
	}
	slices.SortFunc(cands, func(a, b cand) int {
		if a.score != b.score {
			return b.score - a.score
		}
		return strings.Compare(a.text, b.text)
	})
	if len(cands) < 3 {
		slices.Sort(weak)
		for _, t := range weak {
			cands = append(cands, cand{t, 1})
		}
	}
	var out []string
	var names []string // see isName
	for _, c := range cands {
		if len(out) >= w.opt.MaxThemes || (c.score < 2 && len(out) >= 3) {
			break
		}
		if !slices.Contains(out, c.text) && !w.isName(c.text, &names) {
			out = append(out, c.text)
		}
	}
	return out
}

// isName reports whether the lower-case word s is a word of a name. The
// words of names are gathered into *names on the first call.
func (w *work) isName(s string, names *[]string) bool {
	if *names == nil {
		ws := w.nameWords[:0]
		for i := range w.idents {
			if id := &w.idents[i]; id.kind == kName && !isAcronym(id.text) {
				ws = slices.AppendSeq(ws, strings.FieldsSeq(id.text))
			}
		}
		w.nameWords = ws
		*names = ws[:len(ws):len(ws)]
	}
	for _, f := range *names {
		if strings.EqualFold(f, s) {
			return true
		}
	}
	return false
}

func isAcronym(s string) bool {
	letters := 0
	for _, r := range s {
		if unicode.IsLower(r) || r == ' ' {
			return false
		}
		if unicode.IsLetter(r) {
			letters++
		}
	}
	return letters >= 2
}
