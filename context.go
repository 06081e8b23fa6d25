package strata

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// AssemblyOptions tunes how a context package spends its budget.
type AssemblyOptions struct {
	// PinnedShare caps milestones (importance >= 0.8). Default 0.15.
	PinnedShare float64
	// FreshShare caps the most recent raw turns. Default 0.30.
	FreshShare float64
	// QueryFreshShare replaces FreshShare when a query has search hits:
	// the budget goes to the evidence the question needs, and the
	// freshest turns come in as hits when the query points at them.
	// Default 0.05 (on LoCoMo's questions, 0.30 cost 11 points of
	// evidence recall at 1,000 tokens).
	QueryFreshShare float64
	// QueryCoverageShare caps, in a package with query hits, the
	// summaries that cover the history no earlier step quotes raw, so
	// that a model sees the whole arc of the conversation before the
	// query's evidence fills the rest. When the coarsest closed summaries
	// do not fit it, they are merged into overview summaries that do (see
	// Memory.Context). Default 0.10; negative means none (every older
	// turn is then left to relevance and listed as omitted).
	QueryCoverageShare float64
	// RelevanceShare is the former way to size a query package's
	// coverage: when QueryCoverageShare is unset, a RelevanceShare set
	// reads as a QueryCoverageShare of 1 - RelevanceShare. Default 0.90.
	RelevanceShare float64
	// SearchK is how many turn hits a query considers at least: a
	// package considers one per 50 tokens of its budget when that is
	// more (80 at 4,000 tokens). It considers summaryDepth times SearchK
	// summary hits. Default 24.
	SearchK int
	// SearchWindow bounds the turns a query searches in a long
	// conversation: its newest SearchWindow turns. Older turns are
	// reached through the summaries above them, as the turns of cold
	// spans are (relevance reads the turns under level-1 summary hits),
	// so the search's cost follows the window, not the history's length.
	// Default 20,000; negative means every turn is searched.
	SearchWindow int
	// Neighbours is how far (in turns, at most 2) a hit's relevance
	// spreads to the turns around it. Default 2; -1 means none.
	Neighbours int
	// ZoomShare caps the raw turns of the periods a query names ("on 25
	// May 2023", "last week"). Default 0.50; unused without a time in the
	// query.
	ZoomShare float64
}

func (o AssemblyOptions) withDefaults() (AssemblyOptions, error) {
	if o.QueryCoverageShare == 0 && o.RelevanceShare > 0 && o.RelevanceShare <= 1 {
		o.QueryCoverageShare = 1 - o.RelevanceShare
		if o.QueryCoverageShare == 0 {
			o.QueryCoverageShare = -1
		}
	}
	switch {
	case o.QueryCoverageShare == 0:
		o.QueryCoverageShare = DefaultQueryCoverageShare
	case o.QueryCoverageShare < 0:
		o.QueryCoverageShare = -1
	case o.QueryCoverageShare > 1:
		return o, Errorf(EINVALID, "assembly: query coverage share %v is outside 0..1 (negative: none)", o.QueryCoverageShare)
	}
	def := func(v *float64, d float64, name string) error {
		if *v == 0 {
			*v = d
		}
		if *v < 0 || *v > 1 {
			return Errorf(EINVALID, "assembly: %s %v is outside 0..1", name, *v)
		}
		return nil
	}
	for _, f := range []struct {
		v    *float64
		d    float64
		name string
	}{{&o.PinnedShare, 0.15, "pinned share"}, {&o.FreshShare, 0.30, "fresh share"}, {&o.RelevanceShare, 0.90, "relevance share"},
		{&o.QueryFreshShare, 0.05, "query fresh share"},
		{&o.ZoomShare, 0.50, "zoom share"}} {
		if err := def(f.v, f.d, f.name); err != nil {
			return o, err
		}
	}
	if o.SearchK == 0 {
		o.SearchK = 24
	}
	if o.SearchK < 0 {
		return o, Errorf(EINVALID, "assembly: search k %d is negative", o.SearchK)
	}
	switch {
	case o.SearchWindow == 0:
		o.SearchWindow = DefaultSearchWindow
	case o.SearchWindow < 0:
		o.SearchWindow = -1
	}
	switch {
	case o.Neighbours == 0:
		o.Neighbours = 2
	case o.Neighbours < 0:
		o.Neighbours = 0
	}
	return o, nil
}

// DefaultQueryCoverageShare is AssemblyOptions.QueryCoverageShare's
// default.
const DefaultQueryCoverageShare = 0.10

// DefaultSearchWindow is AssemblyOptions.SearchWindow's default.
const DefaultSearchWindow = 20000

// Item reasons: why an item is in a package.
const (
	ReasonPinned    = "pinned"
	ReasonFresh     = "fresh"
	ReasonCoverage  = "coverage"
	ReasonRelevance = "relevance"
	ReasonZoom      = "zoom" // the turns of a period the query names
)

// TurnItem is a turn as a context package item, unmeasured (Tokens 0).
func TurnItem(t Turn, reason string) Item {
	return Item{Kind: KindTurn, Reason: reason, ExtID: t.ExtID, LevelName: "turn",
		FirstSeq: t.Seq, LastSeq: t.Seq, Start: t.Time, End: t.Time, Speaker: t.Speaker(), Role: t.Role,
		Text: t.Text()}
}

// Item is one piece of a context package, with its provenance.
type Item struct {
	Kind      string    `json:"kind"`   // KindTurn or KindSummary
	Reason    string    `json:"reason"` // pinned, fresh, coverage, relevance
	ExtID     string    `json:"ext_id"`
	NodeID    string    `json:"node_id"`
	Level     int       `json:"level"`
	LevelName string    `json:"level_name"`
	FirstSeq  int64     `json:"first_seq"`
	LastSeq   int64     `json:"last_seq"`
	Start     time.Time `json:"start"`
	End       time.Time `json:"end"`
	Speaker   string    `json:"speaker,omitempty"`
	Role      Role      `json:"role,omitempty"`
	Tokens    int       `json:"tokens"` // of this item's rendering
	Text      string    `json:"text"`   // the turn's text or the summary

	// Follows is set on a turn that comes right after another turn in the
	// package: renderers may then leave out what that turn's heading
	// already said (its date), and run the two together when they are
	// consecutive (Follows.FirstSeq == FirstSeq-1).
	Follows *Item `json:"-"`

	rendered string
	learning int64   // a learning's id
	prio     int     // lower is dropped last
	stuck    bool    // its children do not fit: refine no more
	parts    []Node  // an overview's tiles, oldest first
	score    float64 // a relevance turn's score: the lowest is dropped first
	tier     Tier    // of a level-1 summary's span
}

// Omission says what older history did not fit the budget.
type Omission struct {
	FirstSeq int64 `json:"first_seq"`
	LastSeq  int64 `json:"last_seq"`
}

// Package is a context package: what strata hands a model.
type Package struct {
	Conversation string     `json:"conversation"`
	Query        string     `json:"query,omitempty"`
	Format       string     `json:"format"`
	Tokenizer    string     `json:"tokenizer"`
	Budget       int        `json:"budget"`
	Tokens       int        `json:"tokens"` // of Rendered, the whole package
	Turns        int64      `json:"turns"`  // in the conversation
	Items        []Item     `json:"items"`
	Omitted      []Omission `json:"omitted"`
	Rendered     string     `json:"rendered"`
}

// Covered counts the conversation's turns the package represents: quoted
// raw, or stood for by a summary that spans them. A learning's span is
// where it was said, not what it shows, and does not count.
func (p *Package) Covered() int64 {
	spans := make([][2]int64, 0, len(p.Items))
	for _, it := range p.Items {
		if it.Kind == KindTurn || it.Kind == KindSummary {
			spans = append(spans, [2]int64{it.FirstSeq, it.LastSeq})
		}
	}
	slices.SortFunc(spans, func(x, y [2]int64) int { return cmpInt64(x[0], y[0]) })
	var n int64
	end := int64(0) // the last seq counted
	for _, sp := range spans {
		lo := max(sp[0], end+1)
		if sp[1] >= lo {
			n += sp[1] - lo + 1
			end = sp[1]
		}
	}
	return n
}

// ContextRequest asks for a context package.
type ContextRequest struct {
	Conversation string
	Query        string
	Budget       int
	// Format is the rendering the budget is counted on: FormatText
	// (default) or FormatMarkdown.
	Format string
	// Renderer, when set, renders the package instead of Format.
	Renderer Renderer
	// Now is what relative time expressions in the query ("yesterday",
	// "last week") count from; zero means the conversation's newest turn.
	Now time.Time
	// Facts asks for a "known facts" section: the current learnings that
	// bear on the query, within FactsShare of the budget (facts.go).
	Facts bool
	// Sections are fixed texts the caller wants at the top of the package
	// (a system prompt, a README), in order, counted against the budget
	// like everything else. A budget they do not fit is an EINVALID error.
	Sections []Section
}

// Section is a fixed, named text carried at the top of a context package.
type Section struct {
	Title string `json:"title"`
	Text  string `json:"text"`
}

// renderSections writes sections as the package's rendering shows them:
// markdown headings, or bracketed titles in plain text.
func renderSections(markdown bool, secs []Section) string {
	var b strings.Builder
	for _, s := range secs {
		if markdown {
			b.WriteString("## " + s.Title + "\n\n")
		} else {
			b.WriteString("[" + s.Title + "]\n")
		}
		b.WriteString(strings.TrimRight(s.Text, "\n"))
		b.WriteString("\n\n")
	}
	return b.String()
}

// Context assembles the most useful context for the next prompt within
// req.Budget tokens, in priority order: milestones, the freshest raw turns,
// summaries covering all older history (coarsest first, refined toward finer
// levels and raw turns where the budget allows and the query points), and the
// query's best search hits with their neighbouring turns. When the query has
// hits, the summaries keep to AssemblyOptions.QueryCoverageShare of the
// budget: if the coarsest closed nodes do not fit it, runs of them are merged
// into overview summaries (OverviewLevelName) written for the package, so
// that the whole history is still represented. The rendered
// package, headers and separators included, never exceeds the budget as
// counted by the Tokenizer; a budget too small for the package header is an
// EINVALID error.
func (m *Memory) Context(ctx context.Context, req ContextRequest) (*Package, error) {
	return m.assembly.context(ctx, req)
}

// assembly writes context packages and upload packages (upload.go) from
// what a conversation holds: its turns, its pyramid's nodes, its
// learnings and the hits of hybrid search.
type assembly struct {
	scope
	tok Tokenizer
	sum Summarizer
	asm AssemblyOptions
	vec *vectors // hybrid search

	overviews summaryCache // overviews written for packages lately
	counts    *countCache  // token counts of items rendered lately
}

// context is Memory.Context.
func (as *assembly) context(ctx context.Context, req ContextRequest) (*Package, error) {
	if err := ValidateConversationID(req.Conversation); err != nil {
		return nil, err
	}
	if req.Budget <= 0 {
		return nil, Errorf(EINVALID, "budget %d: must be a positive number of tokens", req.Budget)
	}
	r, err := NewRenderer(req.Format)
	if req.Renderer != nil {
		r, err = req.Renderer, nil
	}
	if err != nil {
		return nil, err
	}
	conv, err := as.conversation(ctx, req.Conversation)
	if err != nil {
		return nil, err
	}
	p, err := as.policyFor(conv)
	if err != nil {
		return nil, err
	}
	a := &assembler{as: as, ctx: ctx, req: req, conv: conv, policy: p, r: r,
		turns: map[int64]bool{}, turnAt: map[int64]*Item{}, nodes: map[string]bool{}}
	return a.run()
}

// assembler holds the state of one Context call.
type assembler struct {
	as     *assembly
	ctx    context.Context
	req    ContextRequest
	conv   Conversation
	policy Policy
	r      Renderer

	items    []*Item
	used     int
	turns    map[int64]bool  // seqs present raw
	turnAt   map[int64]*Item // the items of those seqs
	seqs     []int64         // those seqs, sorted
	nodes    map[string]bool // node ids present
	fresh    int64           // first seq of the fresh run (conv.Turns+1 if none)
	omit     []Omission
	hits     []Hit
	header   string
	sections string   // the rendered Sections, before the header
	periods  []Period // named by the query
	coldOK   bool     // refine may read cold spans no hit points into
	seed     *relevanceSeed
}

func (a *assembler) run() (*Package, error) {
	B := a.req.Budget
	a.header = a.r.Header(a.conv, nil)
	for i, sec := range a.req.Sections {
		if sec.Title == "" || strings.ContainsAny(sec.Title, "\n\r") {
			return nil, Errorf(EINVALID, "section %d: a title is one line of text, and not empty", i+1)
		}
	}
	a.sections = renderSections(a.r.Name() == FormatMarkdown, a.req.Sections)
	// The header is recounted with the final omission note; reserve room
	// for that note now so the final check rarely has to drop anything.
	a.used = a.as.tok.Count(a.sections+a.header) + 24
	if a.used > B {
		if a.sections != "" {
			return nil, Errorf(EINVALID, "budget %d is too small: the %d sections alone take %d tokens, with the header %d",
				B, len(a.req.Sections), a.as.tok.Count(a.sections), a.used)
		}
		return nil, Errorf(EINVALID, "budget %d is too small: a package of this conversation needs at least %d tokens for its header", B, a.used)
	}
	if a.req.Query != "" && a.as.asm.SearchK > 0 {
		// Turns and summaries are ranked apart: each kind's scores only
		// compare among themselves, and relevance wants enough of both.
		// The two searches run at once (each on its own read connection).
		kinds := []string{KindTurn, KindSummary}
		hits := make([][]Hit, len(kinds))
		errs := make([]error, len(kinds))
		var wg sync.WaitGroup
		for i, kind := range kinds {
			q := SearchQuery{Namespace: a.as.ns, Conversation: a.req.Conversation, Text: a.req.Query, K: a.searchK(), Kind: kind}
			if kind == KindSummary {
				// Summary hits do not grow with the budget: each brings
				// the turns of its span, and reading them is most of a
				// query's cost.
				q.K = a.as.asm.SearchK * summaryDepth
			} else if from := a.searchedFrom(); from > 1 {
				q.FromSeq = from
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				hits[i], errs[i] = a.as.vec.hybridQuery(a.ctx, q)
			}()
		}
		wg.Wait()
		for i := range kinds {
			if errs[i] != nil {
				return nil, fmt.Errorf("search: %w", errs[i])
			}
			a.hits = append(a.hits, hits[i]...)
		}
	}
	if len(a.hits) > 0 {
		// The turns the hits point at are read while the steps before
		// relevance run: the reads depend on the hits alone, and they
		// are most of a query's cost.
		a.seed = a.seedRelevance()
		defer a.seed.wait()
	}
	steps := []func() error{a.pinned, a.knownFacts, a.zoom, a.freshTurns, a.coverage, a.relevance, a.refine}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, err
		}
	}
	return a.finish()
}

// searchedFrom is the first turn the turn search covers: 1, or the first
// of the search window in a longer conversation (see
// AssemblyOptions.SearchWindow).
func (a *assembler) searchedFrom() int64 {
	if w := int64(a.as.asm.SearchWindow); w > 0 && a.conv.Turns > w {
		return a.conv.Turns - w + 1
	}
	return 1
}

// share returns the tokens a phase may use: its share of the budget,
// capped by what is left.
func (a *assembler) share(f float64) int {
	return min(int(f*float64(a.req.Budget)), a.req.Budget-a.used)
}

// add appends it if it fits within limit more tokens; it reports whether it did.
func (a *assembler) add(it *Item, limit int) bool {
	if it.Kind == KindTurn {
		a.link(it, a.turnBefore(it.FirstSeq))
	}
	a.measure(it)
	if it.Tokens > limit || a.used+it.Tokens > a.req.Budget {
		return false
	}
	a.used += it.Tokens
	a.items = append(a.items, it)
	switch it.Kind {
	case KindTurn:
		a.turns[it.FirstSeq] = true
		a.turnAt[it.FirstSeq] = it
		if i, found := slices.BinarySearch(a.seqs, it.FirstSeq); !found {
			a.seqs = slices.Insert(a.seqs, i, it.FirstSeq)
		}
		// The next turn, if present, now follows this one.
		if next := a.turnAfter(it.FirstSeq); next != nil {
			a.used -= next.Tokens
			a.link(next, it)
			a.measure(next)
			a.used += next.Tokens
		}
	case KindSummary:
		if it.NodeID != "" {
			a.nodes[it.NodeID] = true
		}
	}
	return true
}

// turnBefore and turnAfter return the present turn nearest before or
// after seq, or nil.
func (a *assembler) turnBefore(seq int64) *Item {
	i, _ := slices.BinarySearch(a.seqs, seq)
	if i == 0 {
		return nil
	}
	return a.turnAt[a.seqs[i-1]]
}

func (a *assembler) turnAfter(seq int64) *Item {
	i, found := slices.BinarySearch(a.seqs, seq)
	if found {
		i++
	}
	if i >= len(a.seqs) {
		return nil
	}
	return a.turnAt[a.seqs[i]]
}

// link sets the turn that it follows (nil: none), dropping its rendering
// if that changes it.
func (a *assembler) link(it, prev *Item) {
	if it.Follows != prev {
		it.Follows = prev
		it.rendered = ""
	}
}

// measure renders it and counts its tokens, once per rendering.
func (a *assembler) measure(it *Item) {
	if it.rendered == "" {
		it.rendered = a.r.Item(it)
		it.Tokens = a.as.counts.count(a.as.tok, it.rendered)
	}
}

func (a *assembler) remove(it *Item) {
	i := slices.Index(a.items, it)
	if i < 0 {
		return
	}
	a.items = slices.Delete(a.items, i, i+1)
	a.used -= it.Tokens
	switch it.Kind {
	case KindTurn:
		delete(a.turns, it.FirstSeq)
		delete(a.turnAt, it.FirstSeq)
		if i, found := slices.BinarySearch(a.seqs, it.FirstSeq); found {
			a.seqs = slices.Delete(a.seqs, i, i+1)
		}
		if next := a.turnAfter(it.FirstSeq); next != nil {
			a.used -= next.Tokens
			a.link(next, a.turnBefore(next.FirstSeq))
			a.measure(next)
			a.used += next.Tokens
		}
	case KindSummary:
		delete(a.nodes, it.NodeID)
	}
}

func (a *assembler) turnItem(t Turn, reason string, prio int) *Item {
	it := TurnItem(t, reason)
	it.prio = prio
	return &it
}

func (a *assembler) nodeItem(n Node, reason string, prio int) *Item {
	return &Item{Kind: KindSummary, Reason: reason, NodeID: n.ID, Level: n.Level, LevelName: a.policy.LevelName(n.Level),
		FirstSeq: n.FirstSeq, LastSeq: n.LastSeq, Start: n.Start, End: n.End, Text: n.Summary, prio: prio, tier: n.Tier}
}

// Drop priorities: the final budget check removes the highest first.
const (
	prioPinned = iota
	prioZoom
	prioFresh
	prioCoverage
	prioRefine
	prioRelevance
)

// pinned adds milestones, newest first, within the pinned share.
func (a *assembler) pinned() error {
	limit := a.share(a.as.asm.PinnedShare)
	ts, err := a.as.store.Turns(a.ctx, TurnFilter{Namespace: a.as.ns, Conversation: a.req.Conversation,
		PinnedOnly: true, Newest: true, Limit: 64})
	if err != nil {
		return err
	}
	spent := 0
	// Confirmed learnings first, newest first: a person said they hold.
	ls, err := a.as.store.Learnings(a.ctx, LearningFilter{Namespace: a.as.ns, Conversation: a.req.Conversation,
		Statuses: []string{LearningConfirmed}, Newest: true, Limit: 64})
	if err != nil {
		return err
	}
	for _, l := range ls {
		it := &Item{Kind: KindLearning, Reason: ReasonPinned, NodeID: l.Node, LevelName: "learning",
			FirstSeq: l.FirstSeq, LastSeq: l.LastSeq, Text: l.Text, prio: prioPinned, learning: l.ID}
		if a.add(it, limit-spent) {
			spent += it.Tokens
		}
	}
	for _, t := range ts {
		it := a.turnItem(t, ReasonPinned, prioPinned)
		if a.add(it, limit-spent) {
			spent += it.Tokens
		}
	}
	return nil
}

// ref is the package's "now": req.Now, else the newest turn's time.
func (a *assembler) ref() time.Time {
	if !a.req.Now.IsZero() {
		return a.req.Now
	}
	return a.conv.Last
}

// zoomTurnLimit bounds the turns read for one period a query names.
const zoomTurnLimit = 4096

// zoom adds the raw turns of the periods the query names (001's zoom-in:
// "what did she say on 25 May 2023?"), in order, within the zoom share.
// Relative expressions count from req.Now or the newest turn. A period
// whose turns do not all fit is shown from its start as far as they go;
// coverage summarizes the rest.
func (a *assembler) zoom() error {
	if a.req.Query == "" {
		return nil
	}
	ref := a.ref()
	if ref.IsZero() {
		return nil // no turns
	}
	ms := FindTimes(a.req.Query, ref, a.conv.Location())
	if len(ms) == 0 {
		return nil
	}
	limit := a.share(a.as.asm.ZoomShare)
	spent := 0
	for _, mt := range ms {
		a.periods = append(a.periods, mt.Period)
		ts, err := a.as.store.Turns(a.ctx, TurnFilter{Namespace: a.as.ns, Conversation: a.req.Conversation,
			Since: mt.Period.Start, Until: mt.Period.End, Limit: zoomTurnLimit})
		if err != nil {
			a.as.log.Warn("context: cannot read the turns of a period the query names", "conversation", a.req.Conversation,
				"period", mt.Period.Label(), "error", err)
			continue
		}
		for _, t := range ts {
			if a.turns[t.Seq] {
				continue
			}
			it := a.turnItem(t, ReasonZoom, prioZoom)
			if !a.add(it, limit-spent) {
				break
			}
			spent += it.Tokens
		}
	}
	return nil
}

// freshTurns adds the most recent raw turns, newest first, until the fresh
// share is spent or a turn does not fit.
func (a *assembler) freshTurns() error {
	a.fresh = a.conv.Turns + 1
	share := a.as.asm.FreshShare
	if a.req.Query != "" && len(a.hits) > 0 {
		share = a.as.asm.QueryFreshShare
	}
	limit := a.share(share)
	spent := 0
	to := a.conv.Turns
	for to >= 1 {
		ts, err := a.as.store.Turns(a.ctx, TurnFilter{Namespace: a.as.ns, Conversation: a.req.Conversation,
			FromSeq: max(1, to-31), ToSeq: to, Newest: true})
		if err != nil {
			return err
		}
		if len(ts) == 0 {
			return nil
		}
		for _, t := range ts {
			if a.turns[t.Seq] { // pinned already
				a.fresh = t.Seq
				continue
			}
			it := a.turnItem(t, ReasonFresh, prioFresh)
			if !a.add(it, limit-spent) {
				return nil
			}
			spent += it.Tokens
			a.fresh = t.Seq
		}
		to -= 32
	}
	return nil
}

// coverage covers turns 1..fresh-1 with the coarsest closed nodes, newest
// first, and the open turns (in no closed node) raw. Without query hits it
// may use all that is left of the budget; with them, the query coverage
// share, and when the nodes and open turns do not all fit that share the
// nodes are merged into overview summaries that do (overview). What is
// not covered is noted as omitted.
func (a *assembler) coverage() error {
	end := a.fresh - 1
	if end < 1 {
		return nil
	}
	query := a.req.Query != "" && len(a.hits) > 0
	limit := a.req.Budget - a.used
	if query {
		if a.as.asm.QueryCoverageShare < 0 {
			a.noteOmitted(1, end)
			return nil
		}
		limit = a.share(a.as.asm.QueryCoverageShare)
	}
	tiles, boundary, err := a.coverTiles(end)
	if err != nil {
		return err
	}
	spent := 0
	// With query hits the turns before the fresh run stay open turns: a
	// summary of them alone can take the whole coverage share.
	if boundary < end && !query {
		if spent, boundary, err = a.straddling(boundary, end, limit); err != nil {
			return err
		}
	}
	// Open turns, in no closed node: raw, they cover the fewest turns per
	// token, so they come after the nodes.
	var open []Turn
	if boundary < end {
		if open, err = a.openTurns(boundary, end); err != nil {
			return err
		}
	}
	tiles = slices.DeleteFunc(tiles, func(n Node) bool {
		return int64(len(a.turns)) >= n.Turns() && a.spanRaw(n.FirstSeq, n.LastSeq) // shown raw already (zoomed or pinned)
	})
	// Tiles that do not all fit are merged into overviews that do, with
	// or without a query: a package covers the whole history, and
	// refinement then spends what is left on finer levels.
	if openCost, fits := a.fitsAll(tiles, open, limit-spent); !fits {
		n, merged, err := a.mergeTiles(tiles, open, openCost, limit-spent)
		if err != nil {
			return err
		}
		if spent += n; merged && n > 0 {
			open = nil // summarized (or declared omitted) by the overviews
		}
		tiles = nil
	}
	spent = a.addTiles(tiles, limit, spent)
	a.addOpen(open, limit, spent)
	return nil
}

// coverTiles returns the closed nodes that tile 1..end from the top level
// down, newest first, each level covering what lies after the level
// above it, and the last turn they cover.
func (a *assembler) coverTiles(end int64) ([]Node, int64, error) {
	var tiles []Node // newest first within each level; levels top first
	boundary := int64(0)
	top := len(a.policy.Levels)
	for lvl := top; lvl >= 1; lvl-- {
		f := NodeFilter{Namespace: a.as.ns, Conversation: a.req.Conversation, Level: lvl,
			FromSeq: boundary + 1, ToSeq: end, Newest: true}
		if lvl == top {
			f.Limit = maxTopTiles
		}
		ns, err := a.as.store.Nodes(a.ctx, f)
		if err != nil {
			return nil, 0, err
		}
		// The level below keeps its window of recent history (001: days
		// for the last 7 days, weeks for the last 30): this level covers
		// only what ends before it.
		if lvl > 1 {
			if w := time.Duration(a.policy.Levels[lvl-2].Window); w > 0 {
				cutoff := a.ref().Add(-w)
				for len(ns) > 0 && !ns[0].End.Before(cutoff) {
					ns = ns[1:]
				}
			}
		}
		if len(ns) > 0 {
			tiles = append(ns, tiles...) // finer, newer tiles go first
			boundary = ns[0].LastSeq
		}
	}
	// tiles holds, newest first: finer levels' nodes, then the top level's.
	slices.SortStableFunc(tiles, func(x, y Node) int { return cmpInt64(y.LastSeq, x.LastSeq) })
	if len(tiles) > 0 && tiles[len(tiles)-1].FirstSeq > 1 {
		// More top-level nodes exist than were fetched.
		a.noteOmitted(1, tiles[len(tiles)-1].FirstSeq-1)
	}
	return tiles, boundary, nil
}

// straddling handles a fresh run that starts inside a closed level-1 node
// after boundary: the node's summary then stands for the turns
// boundary+1..end when it is cheaper than those turns raw (it overlaps
// the fresh run; nothing is lost). It returns the tokens spent and the
// new boundary.
func (a *assembler) straddling(boundary, end int64, limit int) (int, int64, error) {
	ns, err := a.as.store.Nodes(a.ctx, NodeFilter{Namespace: a.as.ns, Conversation: a.req.Conversation,
		Level: 1, FromSeq: boundary + 1, Limit: 1})
	if err != nil {
		return 0, boundary, err
	}
	if len(ns) != 1 || ns[0].FirstSeq != boundary+1 || ns[0].LastSeq <= end {
		return 0, boundary, nil
	}
	ts, err := a.as.store.Turns(a.ctx, TurnFilter{Namespace: a.as.ns, Conversation: a.req.Conversation,
		FromSeq: boundary + 1, ToSeq: end})
	if err != nil {
		return 0, boundary, err
	}
	raw := 0
	for _, t := range ts {
		ti := a.turnItem(t, ReasonCoverage, prioCoverage)
		a.measure(ti)
		raw += ti.Tokens
	}
	it := a.nodeItem(ns[0], ReasonCoverage, prioCoverage)
	if a.measure(it); it.Tokens < raw && a.add(it, limit) {
		return it.Tokens, end, nil
	}
	return 0, boundary, nil
}

// openTurns reads the turns boundary+1..end, in no closed node, newest
// first; those past what one read fetches are noted as omitted.
func (a *assembler) openTurns(boundary, end int64) ([]Turn, error) {
	ts, err := a.as.store.Turns(a.ctx, TurnFilter{Namespace: a.as.ns, Conversation: a.req.Conversation,
		FromSeq: boundary + 1, ToSeq: end, Newest: true, Limit: 512})
	if err != nil {
		return nil, err
	}
	if n := int64(len(ts)); n < end-boundary {
		// More open turns than one call fetches: declare the rest.
		a.noteOmitted(boundary+1, end-n)
	}
	return ts, nil
}

// mergeTiles merges tiles that do not all fit room into overviews that
// do. The open turns keep their room raw when they take at most half of
// it (openCost); otherwise a summary of them joins the tiles, and merged
// reports so. It returns the tokens the overviews took.
func (a *assembler) mergeTiles(tiles []Node, open []Turn, openCost, room int) (n int, merged bool, err error) {
	if openCost <= room/2 {
		room -= openCost
	} else if t, err := a.openTile(open); err != nil {
		return 0, false, err
	} else if t != nil {
		tiles = append([]Node{*t}, tiles...)
		merged = true
	}
	n, err = a.overview(tiles, room)
	return n, merged, err
}

// addTiles adds the closed nodes, newest first: coarse summaries cover
// the most history per token. What does not fit is noted as omitted, and
// after 8 misses in a row the rest is. It returns spent with the tokens
// added.
func (a *assembler) addTiles(tiles []Node, limit, spent int) int {
	misses := 0
	for _, n := range tiles {
		if misses >= 8 {
			a.noteOmitted(n.FirstSeq, n.LastSeq)
			continue
		}
		it := a.nodeItem(n, ReasonCoverage, prioCoverage)
		if a.add(it, limit-spent) {
			spent += it.Tokens
			misses = 0
		} else {
			a.noteOmitted(n.FirstSeq, n.LastSeq)
			misses++
		}
	}
	return spent
}

// addOpen adds the open turns not present yet raw; what does not fit is
// declared omitted, never silently left out.
func (a *assembler) addOpen(open []Turn, limit, spent int) {
	for _, t := range open {
		if a.turns[t.Seq] {
			continue
		}
		it := a.turnItem(t, ReasonCoverage, prioCoverage)
		if a.add(it, limit-spent) {
			spent += it.Tokens
		} else {
			a.noteOmitted(t.Seq, t.Seq)
		}
	}
}

// openTile summarizes the open turns not present yet (newest first, as
// read) as a level-1 node would, for an overview to merge; nil if none. The
// tile is not stored and has no id.
func (a *assembler) openTile(open []Turn) (*Node, error) {
	var ts []Turn
	for i := len(open) - 1; i >= 0; i-- {
		if !a.turns[open[i].Seq] {
			ts = append(ts, open[i])
		}
	}
	if len(ts) == 0 {
		return nil, nil
	}
	first, last := ts[0], ts[len(ts)-1]
	// Turns do not change once stored: their seqs name what the summary
	// is written from.
	h := sha256.New()
	fmt.Fprintf(h, "open\x00%s\x00%s\x00%d\x00", a.as.ns, a.req.Conversation, a.policy.Levels[0].Budget)
	for _, t := range ts {
		fmt.Fprintf(h, "%d,", t.Seq)
	}
	var key [sha256.Size]byte
	h.Sum(key[:0])
	s, ok := a.as.overviews.get(key)
	if !ok {
		var err error
		s, err = a.as.sum.Summarize(a.ctx, SummaryRequest{Conversation: a.req.Conversation, Level: 1,
			LevelName: a.policy.LevelName(1), Budget: a.policy.Levels[0].Budget, Turns: ts, Tokenizer: a.as.tok})
		if err != nil {
			return nil, fmt.Errorf("summary of open turns %d-%d: %w", first.Seq, last.Seq, err)
		}
		a.as.overviews.put(key, s)
	}
	return &Node{Conversation: a.req.Conversation, Level: 1, FirstSeq: first.Seq, LastSeq: last.Seq,
		Start: first.Time, End: last.Time, Summary: s.Text, Facts: s.Facts, Themes: s.Themes, Method: s.Method}, nil
}

// maxTopTiles bounds the top-level nodes coverage reads: the newest ones;
// the history before them is listed as omitted. It keeps the work of one
// package bounded however long the history (see overview).
const maxTopTiles = 256

// fitsAll reports whether the tiles and the open turns not present yet,
// each measured as an item alone, fit within limit tokens; it returns the
// cost of those open turns.
func (a *assembler) fitsAll(tiles []Node, open []Turn, limit int) (int, bool) {
	openCost := 0
	for _, t := range open {
		if a.turns[t.Seq] {
			continue
		}
		it := a.turnItem(t, ReasonCoverage, prioCoverage)
		a.measure(it)
		openCost += it.Tokens
	}
	total := openCost
	for _, n := range tiles {
		if total > limit {
			break
		}
		it := a.nodeItem(n, ReasonCoverage, prioCoverage)
		a.measure(it)
		total += it.Tokens
	}
	return openCost, total <= limit
}

// Overview summaries: a level above the policy's top, made while a
// package is assembled and never stored.
const (
	// OverviewLevelName is the level name of an overview item.
	OverviewLevelName = "overview"
	// minOverviewTokens is the smallest summary text an overview is
	// written at: below it, a few words would stand for a whole history.
	minOverviewTokens = 40
)

// overview covers the tiles (the coarsest closed nodes, newest first)
// within limit tokens when they do not fit it as they are: it merges runs
// of consecutive tiles into overview summaries, written by the Memory's
// summarizer over those tiles as a rollup writes a node over its
// children. There are as many overviews as limit holds at the top level's
// summary budget each (at least one), of about equal turn counts, and they
// share limit evenly. An overview that still does not fit, or a limit too
// small for one, leaves its span omitted. Refinement can later replace an
// overview by its tiles. It returns the tokens it added.
func (a *assembler) overview(tiles []Node, limit int) (int, error) {
	if len(tiles) == 0 {
		return 0, nil
	}
	slices.Reverse(tiles) // oldest first
	first, last := tiles[0].FirstSeq, tiles[len(tiles)-1].LastSeq
	top := len(a.policy.Levels)
	probe := &Item{Kind: KindSummary, Reason: ReasonCoverage, Level: top + 1, LevelName: OverviewLevelName,
		FirstSeq: first, LastSeq: last, Start: tiles[0].Start, End: tiles[len(tiles)-1].End}
	a.measure(probe)
	head := probe.Tokens // the heading of an overview, about
	per := a.policy.Levels[top-1].Budget + head
	k := min(limit/per, (len(tiles)+1)/2) // each overview merges two tiles or more
	if k < 1 {
		k = 1
	}
	if limit/k-head < minOverviewTokens {
		for _, n := range tiles {
			a.noteOmitted(n.FirstSeq, n.LastSeq)
		}
		return 0, nil
	}
	spent := 0
	for gi, group := range splitTiles(tiles, k) {
		// Each overview gets its share of what is left, so that one that
		// came out short leaves its room to the next.
		room := (limit - spent) / (k - gi)
		it, err := a.overviewItem(group, room)
		if err != nil {
			return spent, err
		}
		if it != nil && a.add(it, room) {
			spent += it.Tokens
			continue
		}
		for _, n := range group {
			a.noteOmitted(n.FirstSeq, n.LastSeq)
		}
	}
	return spent, nil
}

// overviewItem writes the overview of group (tiles, oldest first) in a
// rendering of at most limit tokens. If its rendering comes out over,
// it is written once more, tighter by the excess, and if it is still
// over it is cut to fit (cutToFit); nil means the summarizer had nothing
// to say, or not one word of it fits.
func (a *assembler) overviewItem(group []Node, limit int) (*Item, error) {
	g0, gn := group[0], group[len(group)-1]
	it := &Item{Kind: KindSummary, Reason: ReasonCoverage, Level: len(a.policy.Levels) + 1, LevelName: OverviewLevelName,
		FirstSeq: g0.FirstSeq, LastSeq: gn.LastSeq, Start: g0.Start, End: gn.End, prio: prioCoverage, parts: group}
	probe := *it
	a.measure(&probe)
	head := probe.Tokens
	budget := limit - head
	for try := 0; try < 2 && budget >= minOverviewTokens; try++ {
		key := overviewKey(a.as.ns, a.req.Conversation, it.Level, budget, group)
		s, ok := a.as.overviews.get(key)
		if !ok {
			var err error
			s, err = a.as.sum.Summarize(a.ctx, SummaryRequest{Conversation: a.req.Conversation, Level: it.Level,
				LevelName: OverviewLevelName, Budget: budget, Children: group, Tokenizer: a.as.tok})
			if err != nil {
				return nil, fmt.Errorf("overview of turns %d-%d: %w", it.FirstSeq, it.LastSeq, err)
			}
			a.as.overviews.put(key, s)
		}
		if strings.TrimSpace(s.Text) == "" {
			return nil, nil
		}
		it.Text, it.rendered = s.Text, ""
		a.measure(it)
		over := it.Tokens - limit
		if over <= 0 {
			break
		}
		budget -= over
	}
	if it.Text == "" || it.Tokens > limit && !a.cutToFit(it, limit) {
		return nil, nil
	}
	return it, nil
}

// cutToFit shortens the item's text at a word boundary, marked with an
// ellipsis, to the most words whose rendering takes at most limit tokens:
// a summarizer that cannot write an overview short enough (its shortest
// sentence too long) would otherwise leave the overview's whole span
// omitted. It reports false if not even one word fits.
func (a *assembler) cutToFit(it *Item, limit int) bool {
	text := it.Text
	var cuts []int // byte offsets where a cut keeps whole words
	for i := 1; i < len(text); i++ {
		if text[i] == ' ' || text[i] == '\n' {
			if text[i-1] != ' ' && text[i-1] != '\n' {
				cuts = append(cuts, i)
			}
		}
	}
	fits := func(n int) bool {
		it.Text, it.rendered = strings.TrimRight(text[:n], " \n,;:")+" …", ""
		a.measure(it)
		return it.Tokens <= limit
	}
	// The most words that fit: cuts[lo-1] fits (lo 0: none known to).
	lo, hi := 0, len(cuts)
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if fits(cuts[mid-1]) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	if lo == 0 {
		it.Text, it.rendered = text, ""
		a.measure(it)
		return false
	}
	return fits(cuts[lo-1])
}

// resplit replaces an overview whose nodes do not fit by more, finer
// overviews of the same nodes, when what the budget has left holds at
// least two; otherwise, or if one of them cannot be written, the overview
// stays as it was and is refined no more.
func (a *assembler) resplit(it *Item) (bool, error) {
	room := a.req.Budget - a.used + it.Tokens
	per := a.policy.Levels[len(a.policy.Levels)-1].Budget
	if len(it.parts) < 4 || room/per < 2 {
		it.stuck = true
		return false, nil
	}
	items, omit := len(a.items), slices.Clone(a.omit)
	a.remove(it)
	tiles := slices.Clone(it.parts)
	slices.Reverse(tiles) // newest first, as overview takes them
	if _, err := a.overview(tiles, room); err != nil {
		return false, err
	}
	added := a.items[items-1:]
	if slices.Equal(a.omit, omit) && len(added) >= 2 {
		return true, nil
	}
	// Roll back: the overview as it was covers more.
	for _, x := range slices.Clone(added) {
		a.remove(x)
	}
	a.omit = omit
	a.add(it, it.Tokens)
	it.stuck = true
	return false, nil
}

// summaryCache keeps the latest summaries written for context packages,
// by a digest of what they were written from: the packages of one
// conversation ask for the same overviews again and again while its
// history stands still, and writing one reads every node it merges. Safe
// for concurrent use; the zero value is empty.
type summaryCache struct {
	mu      sync.Mutex
	entries []cachedSummary // oldest first
}

type cachedSummary struct {
	key [sha256.Size]byte
	sum Summary
}

// summaryCacheSize bounds a summaryCache's entries.
const summaryCacheSize = 64

func (c *summaryCache) get(key [sha256.Size]byte) (Summary, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.entries {
		if e.key == key {
			return e.sum, true
		}
	}
	return Summary{}, false
}

func (c *summaryCache) put(key [sha256.Size]byte, s Summary) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= summaryCacheSize {
		c.entries = slices.Delete(c.entries, 0, 1)
	}
	c.entries = append(c.entries, cachedSummary{key, s})
}

// overviewKey digests what an overview is written from: its conversation,
// level and budget, and every merged node's id, span and summary, so that
// a node rewritten (a model's summary in place of the extractive one, a
// span reopened) makes a new key.
func overviewKey(ns, conv string, level, budget int, group []Node) [sha256.Size]byte {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%d\x00%d\x00", ns, conv, level, budget)
	for _, n := range group {
		fmt.Fprintf(h, "%s\x00%d\x00%d\x00%d\x00%s\x00%s\x00%s\x00", n.ID, n.Level, n.FirstSeq, n.LastSeq, n.Summary,
			strings.Join(n.Facts, "\x01"), strings.Join(n.Themes, "\x01"))
	}
	var k [sha256.Size]byte
	h.Sum(k[:0])
	return k
}

// splitTiles cuts tiles (oldest first) into k runs of consecutive tiles
// holding about equal numbers of turns, none empty.
func splitTiles(tiles []Node, k int) [][]Node {
	k = min(k, len(tiles))
	var total int64
	for _, n := range tiles {
		total += n.Turns()
	}
	out := make([][]Node, 0, k)
	var seen int64
	start := 0
	for i, n := range tiles {
		seen += n.Turns()
		g := len(out)
		left := len(tiles) - i - 1 // tiles after this one
		// Close the run when it holds its share of the turns, as long
		// as every later run can still get a tile.
		if g < k-1 && (seen*int64(k) >= total*int64(g+1) || left == k-1-g) {
			out = append(out, tiles[start:i+1])
			start = i + 1
		}
	}
	return append(out, tiles[start:])
}

// noteOmitted records that turns first..last are neither shown nor
// summarized, merging with an adjacent omitted range.
func (a *assembler) noteOmitted(first, last int64) {
	if last < first {
		return
	}
	for i := range a.omit {
		o := &a.omit[i]
		if first == o.LastSeq+1 || last+1 == o.FirstSeq {
			o.FirstSeq, o.LastSeq = min(o.FirstSeq, first), max(o.LastSeq, last)
			return
		}
	}
	a.omit = append(a.omit, Omission{FirstSeq: first, LastSeq: last})
}

func cmpInt64(x, y int64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// relevance spends what is left on the raw turns the query's evidence is
// most likely in. Every turn near a hit gets a score:
//
//   - its own BM25 score, over the best turn hit's (every turn is in the
//     index, whatever its tier);
//   - a share of its neighbours' (relevanceSpread, by distance; from the
//     best 2 x SearchK hits): an answer sits next to the question it
//     answers, and a fact next to the turn that names its topic;
//   - a share of its level-1 span's score when that span's summary is a
//     hit (coarse to fine: a strong summary leads to the turns under it,
//     which is how the turns before the search window are found);
//   - for a turn under such a hit that lies before the window or in a
//     cold span, the score a hit of its own would have earned, and its
//     share of that to its neighbours (scoreCold). Cold turns were out of
//     the index when this was written; they are searched now, so a cold
//     turn that is a hit counts its words twice. The measures in
//     docs/context.md were taken so;
//   - when it opens a session, half the value of the session's best
//     turn hit among the best 24 (lendToOpeners; less under 4,000
//     tokens): the opener says what the thread is about, in words the
//     question rarely repeats;
//   - twice the above when it opens its session (relevanceOpener);
//   - a small bonus when its speaker is named in the query, and one per
//     query word it holds (ties within a summary hit's span).
//
// The turns are then added by score per token of their size (at least
// relevanceCostFloor), each where it fits; one that does not fit leaves
// room for shorter ones after it.
// relevanceSeed is what the query's hits alone decide for relevance: a
// score for each turn they point at (turn hits, their neighbours and the
// turns back to their sessions' openers, the spans of summary hits), the
// turns of cold spans or before the search window, the leads, and the
// read of those turns, started at once.
type relevanceSeed struct {
	score  map[int64]float64
	cold   map[int64]bool
	leads  []lead // the best turn hits, to lend to their sessions' openers
	spread []float64
	done   chan struct{}
	ts     []Turn  // after done: the turns of score, in seq order
	held   [][]int // and per turn, the query words it holds (see wordsIn)
	err    error
}

// wait returns when the seed's read is over.
func (r *relevanceSeed) wait() {
	if r.done != nil {
		<-r.done
	}
}

func (a *assembler) seedRelevance() *relevanceSeed {
	score := map[int64]float64{}
	var topTurn, topNode float64
	for _, h := range a.hits {
		switch {
		case h.Turn != nil:
			topTurn = max(topTurn, h.Score)
		case h.Node != nil && h.Node.Level == 1:
			topNode = max(topNode, h.Score)
		}
	}
	spread := relevanceSpread[:min(len(relevanceSpread), a.as.asm.Neighbours+1)]
	// Turns under a summary hit scored by their own words (scoreCold):
	// those before the search window (see AssemblyOptions.SearchWindow),
	// which the turn search did not see, and those of cold spans.
	cold := map[int64]bool{}
	searched := a.searchedFrom()
	turnHits := 0 // turn hits seen, best first
	var leads []lead
	for _, h := range a.hits {
		switch {
		case h.Turn != nil && topTurn > 0:
			v := h.Score / topTurn
			v *= v // squared: a weak hit yields to the neighbours of a strong one
			score[h.Turn.Seq] += spread[0] * v
			// The best 2 x SearchK hits lend to their neighbours;
			// deeper ones, from a pool grown with the budget, stand
			// alone, so that the turns read grow by one per hit, not
			// five.
			if turnHits++; turnHits > 2*a.as.asm.SearchK {
				continue
			}
			if turnHits <= leadHits {
				// Read the turns back to leadReach, to find the
				// session's opener among them.
				leads = append(leads, lead{h.Turn.Seq, v})
				for d := int64(len(spread)); d <= leadReach; d++ {
					if s := h.Turn.Seq - d; s >= 1 {
						score[s] += 0
					}
				}
			}
			for d := 1; d < len(spread); d++ {
				for _, s := range []int64{h.Turn.Seq - int64(d), h.Turn.Seq + int64(d)} {
					if s >= 1 && s <= a.conv.Turns {
						score[s] += spread[d] * v
					}
				}
			}
		case h.Node != nil && h.Node.Level == 1 && topNode > 0 && h.Node.Tier != TierExpired:
			v := relevanceSpan * h.Score / topNode
			for s := h.Node.FirstSeq; s <= h.Node.LastSeq; s++ {
				score[s] += v
				if h.Node.Tier == TierCold || s < searched {
					cold[s] = true
				}
			}
		}
	}
	r := &relevanceSeed{score: score, cold: cold, leads: leads, spread: spread}
	if len(score) > 0 {
		a.startSeedRead(r)
	}
	return r
}

// startSeedRead starts the read of the turns r scores, and the count of
// the query words each holds; r.wait waits for it.
func (a *assembler) startSeedRead(r *relevanceSeed) {
	// The turn hits came whole with the search: only the others
	// are read.
	var have []Turn
	for _, h := range a.hits {
		if h.Turn != nil {
			have = append(have, *h.Turn)
		}
	}
	slices.SortFunc(have, func(x, y Turn) int { return cmpInt64(x.Seq, y.Seq) })
	have = slices.CompactFunc(have, func(x, y Turn) bool { return x.Seq == y.Seq })
	seqs := make([]int64, 0, len(r.score))
	for s := range r.score {
		if _, ok := slices.BinarySearchFunc(have, s, func(t Turn, s int64) int { return cmpInt64(t.Seq, s) }); !ok {
			seqs = append(seqs, s)
		}
	}
	slices.Sort(seqs)
	r.done = make(chan struct{})
	go func() {
		defer close(r.done)
		var read []Turn
		if len(seqs) > 0 { // no Seqs in a filter reads every turn
			read, r.err = a.readSeqs(seqs)
		}
		r.ts = slices.Concat(read, have)
		slices.SortFunc(r.ts, func(x, y Turn) int { return cmpInt64(x.Seq, y.Seq) })
		words := queryWords(a.req.Query)
		r.held = make([][]int, len(r.ts))
		for i, t := range r.ts {
			r.held[i] = wordsIn(words, t.Text())
		}
	}()
}

func (a *assembler) relevance() error {
	if a.seed == nil || a.used >= a.req.Budget {
		return nil
	}
	score, cold, leads, spread := a.seed.score, a.seed.cold, a.seed.leads, a.seed.spread
	for s := range a.turns {
		delete(score, s)
	}
	if len(score) == 0 {
		return nil
	}
	a.seed.wait()
	if a.seed.err != nil {
		return a.seed.err
	}
	// The read began before the steps that added turns: those turns are
	// not candidates.
	var ts []Turn
	var held [][]int // per turn read, the query words it holds
	for i, t := range a.seed.ts {
		if _, ok := score[t.Seq]; ok {
			ts = append(ts, t)
			held = append(held, a.seed.held[i])
		}
	}
	words := queryWords(a.req.Query)
	if len(cold) > 0 {
		scoreCold(ts, held, len(words), cold, score, spread)
	}
	named := map[string]bool{}
	for _, w := range words {
		named[w] = true
	}
	cands := make([]relevanceCand, 0, len(ts))
	sessionOf := make(map[int64]int, len(ts))
	for _, t := range ts {
		sessionOf[t.Seq] = t.Session
	}
	lendToOpeners(leads, sessionOf, score, relevanceLead*min(1, float64(a.req.Budget)/leadFullBudget))
	for i, t := range ts {
		v := score[t.Seq]
		if prev, ok := sessionOf[t.Seq-1]; ok && prev != t.Session || t.Seq == 1 {
			v *= relevanceOpener
		}
		if sp := strings.ToLower(t.Speaker()); sp != "" && named[sp] {
			v += relevanceSpeaker
		}
		v += relevanceWord * float64(len(held[i]))
		cands = append(cands, relevanceCand{t, v})
	}
	for _, i := range byValue(cands) {
		room := a.req.Budget - a.used
		if room < minTurnTokens {
			break
		}
		if cands[i].t.Tokens > room+fitSlack {
			// Its text alone is over the room: not worth rendering
			// and counting (most candidates of a full package).
			continue
		}
		it := a.turnItem(cands[i].t, ReasonRelevance, prioRelevance)
		it.score = cands[i].score
		a.add(it, a.req.Budget-a.used)
	}
	return nil
}

// relevanceCand is a turn relevance may add, and its score.
type relevanceCand struct {
	t     Turn
	score float64
}

// byValue orders cands best value per token first: a turn longer than a
// paragraph (relevanceCostFloor) must be worth its room, so long turns
// that match many words by their length alone no longer crowd out short
// ones that answer. A turn's size is its stored token count: rendering
// and counting every candidate would cost more than the ranking is
// worth. It returns the indexes of cands in that order.
func byValue(cands []relevanceCand) []int {
	keys := make([]float64, len(cands))
	for i, c := range cands {
		keys[i] = c.score / float64(max(c.t.Tokens, relevanceCostFloor))
	}
	order := make([]int, len(cands))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(x, y int) bool {
		i, j := order[x], order[y]
		if keys[i] != keys[j] {
			return keys[i] > keys[j]
		}
		return cands[i].t.Seq > cands[j].t.Seq
	})
	return order
}

// searchK is how many turn hits a query considers at this budget:
// AssemblyOptions.SearchK, or one per searchTokens of the budget when
// that is more, so that a bigger package draws on a deeper pool.
func (a *assembler) searchK() int {
	return max(a.as.asm.SearchK, a.req.Budget/searchTokens)
}

// scoreCold scores the turns of cold spans as if the index had found them.
// Search cannot see them (a cold span's turns are out of the index; its
// summary stands for them), so they would all share their summary's score
// and yield to every warm hit, however well they match. Each read turn's
// match is the idf mass of the query words it holds (held[i], indexes
// into the nwords query words), the idf taken over the turns read (the
// BM25 form); a cold turn's match over the best of all read turns, squared
// as a turn hit's is, is added to it and spread to its read neighbours.
func scoreCold(ts []Turn, held [][]int, nwords int, cold map[int64]bool, score map[int64]float64, spread []float64) {
	if nwords == 0 {
		return
	}
	df := make([]int, nwords)
	for i := range ts {
		for _, w := range held[i] {
			df[w]++
		}
	}
	n := float64(len(ts))
	idf := make([]float64, nwords)
	for w, d := range df {
		idf[w] = math.Log(1 + (n-float64(d)+0.5)/(float64(d)+0.5))
	}
	mass := make([]float64, len(ts))
	var best float64
	for i := range ts {
		for _, w := range held[i] {
			mass[i] += idf[w]
		}
		best = max(best, mass[i])
	}
	if best == 0 {
		return
	}
	for i, t := range ts {
		if !cold[t.Seq] || mass[i] == 0 {
			continue
		}
		v := mass[i] / best
		v *= v
		score[t.Seq] += spread[0] * v
		for d := 1; d < len(spread); d++ {
			for _, s := range []int64{t.Seq - int64(d), t.Seq + int64(d)} {
				if _, ok := score[s]; ok {
					score[s] += spread[d] * v
				}
			}
		}
	}
}

// lead is a turn hit and its value (its score over the best hit's,
// squared), which it lends to the turn that opens its session.
type lead struct {
	seq int64
	v   float64
}

// lendToOpeners adds to the score of the turn that opens each lead's
// session weight times the lead's value, the best lead of a session only.
// sessionOf holds the session of each turn read; an opener is found when
// the turns from it to its lead were read and the turn before it was read
// and is of another session (or it is turn 1). A lead that opens its own
// session lends nothing.
func lendToOpeners(leads []lead, sessionOf map[int64]int, score map[int64]float64, weight float64) {
	if weight <= 0 {
		return
	}
	lent := map[int64]float64{} // by opener: the best lead's share so far
	for _, l := range leads {
		k, ok := sessionOf[l.seq]
		if !ok {
			continue
		}
		s := l.seq
		for s > 1 {
			p, ok := sessionOf[s-1]
			if !ok {
				s = 0 // the session begins before the turns read
				break
			}
			if p != k {
				break
			}
			s--
		}
		if s < 1 || s == l.seq {
			continue
		}
		if w := weight * l.v; w > lent[s] {
			score[s] += w - lent[s]
			lent[s] = w
		}
	}
}

// How relevance scores turns; see relevance. The weights were set on
// LoCoMo's questions (evidence recall at 1,000 to 4,000 tokens) and are
// general: nothing in them depends on a topic or a wording.
var relevanceSpread = []float64{1, 0.7, 0.2} // by distance from a turn hit: itself, 1, 2 turns away

// summaryDepth multiplies SearchK for summary hits. On LoCoMo with most
// spans cold (warm_max_turns 100), 2 raised recall at 4,000 tokens from
// 84.5% to 88.8% (3: 90.3%, at about a fifth more time per question); with
// every span warm, from 90.5% to 91.0%, at 2 to 3 ms more per question.
const summaryDepth = 2

// searchTokens is the budget per turn hit a query considers beyond
// AssemblyOptions.SearchK (see searchK): 80 hits at 4,000 tokens, 320 at
// 16,000. On long histories the evidence a lexical search finds ranks
// deep: of the misses on 100k-token conversations, 62% ranked 25 to 200.
const searchTokens = 50

const (
	// relevanceOpener multiplies the score of a turn that opens its
	// session: the turn where a speaker says what the session is about
	// or what happened since the last. On LoCoMo such turns are 4.6% of
	// the turns and 13.8% of the evidence; on RealMem 14% and 57%.
	relevanceOpener = 2
	// relevanceCostFloor is the size, in tokens, under which a turn's
	// length does not count against it: relevance ranks turns by score
	// per token of their size or this floor, whichever is more.
	relevanceCostFloor = 100
	// relevanceLead is the share of a turn hit's value that goes to the
	// turn opening its session (the best hit of the session's only),
	// at leadFullBudget tokens and more, and in proportion below: a small
	// package has room for the hits themselves first. The opener says
	// what the session is about, which a later turn of the thread
	// rarely repeats: on RealMem most evidence is such openers, whose
	// own words match no word of the question.
	relevanceLead    = 0.5
	leadFullBudget   = 4000
	leadHits         = 24   // the best turn hits lend to their openers
	leadReach        = 6    // how far back from a hit its opener is looked for, in turns
	relevanceSpan    = 0.5  // a level-1 summary hit, over the best one, to each turn of its span
	relevanceSpeaker = 0.4  // the turn's speaker is named in the query
	relevanceWord    = 0.02 // per query word the turn holds
	minTurnTokens    = 8    // below this much room no turn fits
	// fitSlack is how far a turn's stored token count (of its text) may
	// exceed the room before relevance skips it without rendering: a
	// rendering adds a heading, and joining text to it changes the
	// count of the text by a token or two at most.
	fitSlack = 4
)

// readSeqs reads the turns of seqs (sorted), in one read (two at once,
// each of half the seqs, when there are many: a query at a million turns
// reads about 600, and reading is most of relevance's time). If that
// fails (an unreadable cold span, say), it reads them again in ranges,
// seqs closer than a few turns sharing one, and skips a range that cannot
// be read with a warning.
func (a *assembler) readSeqs(seqs []int64) ([]Turn, error) {
	parts := [][]int64{seqs}
	if len(seqs) >= splitRead {
		parts = [][]int64{seqs[:len(seqs)/2], seqs[len(seqs)/2:]}
	}
	read := make([][]Turn, len(parts))
	errs := make([]error, len(parts))
	var wg sync.WaitGroup
	for i, part := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			read[i], errs[i] = a.as.store.Turns(a.ctx, TurnFilter{Namespace: a.as.ns, Conversation: a.req.Conversation, Seqs: part})
		}()
	}
	wg.Wait()
	err := errors.Join(errs...)
	if err == nil {
		return slices.Concat(read...), nil
	}
	if a.ctx.Err() != nil {
		return nil, err
	}
	var out []Turn
	for i := 0; i < len(seqs); {
		j := i
		for j+1 < len(seqs) && seqs[j+1]-seqs[j] <= 4 {
			j++
		}
		ts, err := a.as.store.Turns(a.ctx, TurnFilter{Namespace: a.as.ns, Conversation: a.req.Conversation,
			FromSeq: seqs[i], ToSeq: seqs[j]})
		if err != nil {
			if a.ctx.Err() != nil {
				return nil, err
			}
			a.as.log.Warn("context: cannot read turns the query points at", "conversation", a.req.Conversation,
				"from", seqs[i], "to", seqs[j], "error", err)
		}
		for _, t := range ts {
			if _, ok := slices.BinarySearch(seqs, t.Seq); ok {
				out = append(out, t)
			}
		}
		i = j + 1
	}
	return out, nil
}

// splitRead is the number of turns from which readSeqs reads in two
// halves at once.
const splitRead = 128

// spanRaw reports whether every turn of first..last is present raw.
func (a *assembler) spanRaw(first, last int64) bool {
	for s := first; s <= last; s++ {
		if !a.turns[s] {
			return false
		}
	}
	return true
}

// refine spends what is left replacing coverage nodes by their children
// (nodes of the level below, or raw turns under a level-1 node): first the
// nodes the query's hits point into, then the newest.
func (a *assembler) refine() error {
	for {
		cands := a.refinable()
		if len(cands) == 0 {
			return nil
		}
		progressed := false
		for _, it := range cands {
			ok, err := a.expand(it)
			if err != nil {
				return err
			}
			if ok {
				progressed = true
				break // recompute candidates: children may refine further
			}
		}
		if !progressed {
			// The budget still has room once every span a hit points
			// into and every hot or warm one is refined: cold spans are
			// read from the archive too, so that the package fills.
			if a.coldOK {
				return nil
			}
			a.coldOK = true
		}
	}
}

// refinable lists coverage summaries in refinement order.
func (a *assembler) refinable() []*Item {
	var out []*Item
	for _, it := range a.items {
		if it.Kind == KindSummary && (it.Reason == ReasonCoverage || it.Reason == ReasonRelevance) && !it.stuck {
			out = append(out, it)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		hi, hj := a.hitIn(out[i]), a.hitIn(out[j])
		if hi != hj {
			return hi
		}
		return out[i].LastSeq > out[j].LastSeq
	})
	return out
}

// hitIn reports whether one of the query's hits lies in the item's span.
func (a *assembler) hitIn(it *Item) bool {
	for _, h := range a.hits {
		var s int64
		if h.Turn != nil {
			s = h.Turn.Seq
		} else if h.Node != nil {
			s = h.Node.FirstSeq
		}
		if s >= it.FirstSeq && s <= it.LastSeq {
			return true
		}
	}
	return false
}

// expand replaces a summary item by its children if they fit in what the
// budget has left plus what the summary frees. It marks items it cannot
// expand so they are not tried again.
func (a *assembler) expand(it *Item) (bool, error) {
	var kids []*Item
	if it.parts != nil {
		for _, n := range it.parts {
			if !a.nodes[n.ID] {
				kids = append(kids, a.nodeItem(n, it.Reason, prioRefine))
			}
		}
	} else if it.Level > 1 {
		ns, err := a.as.store.Nodes(a.ctx, NodeFilter{Namespace: a.as.ns, Conversation: a.req.Conversation,
			Level: it.Level - 1, FromSeq: it.FirstSeq, ToSeq: it.LastSeq})
		if err != nil {
			return false, err
		}
		for _, n := range ns {
			if !a.nodes[n.ID] {
				kids = append(kids, a.nodeItem(n, it.Reason, prioRefine))
			}
		}
	} else {
		// Raw turns of a warm span are a block decode away; those of a cold
		// span are read from the archive only when the query points into
		// it; an expired span has none.
		switch it.tier {
		case TierExpired:
			it.stuck = true
			return false, nil
		case TierCold:
			if !a.hitIn(it) && !a.coldOK {
				return false, nil
			}
		}
		ts, err := a.as.store.Turns(a.ctx, TurnFilter{Namespace: a.as.ns, Conversation: a.req.Conversation,
			FromSeq: it.FirstSeq, ToSeq: it.LastSeq})
		if err != nil && it.tier == TierCold {
			// A missing or corrupt segment costs the expansion, not the
			// package: the summary stays.
			a.as.log.Warn("context: cannot expand a cold span", "conversation", a.req.Conversation,
				"node", it.NodeID, "error", err)
			it.stuck = true
			return false, nil
		}
		if err != nil {
			return false, err
		}
		for _, t := range ts {
			if !a.turns[t.Seq] {
				kids = append(kids, a.turnItem(t, it.Reason, prioRefine))
			}
		}
	}
	cost := 0
	for _, k := range kids {
		a.measure(k)
		cost += k.Tokens
	}
	if a.used-it.Tokens+cost > a.req.Budget {
		if it.parts != nil {
			return a.resplit(it)
		}
		it.stuck = true
		return false, nil
	}
	a.remove(it)
	for _, k := range kids {
		a.add(k, k.Tokens)
	}
	return true, nil
}

// finish orders the items by time, renders the package and checks the
// budget on the whole rendering, dropping the least important items until
// it holds.
func (a *assembler) finish() (*Package, error) {
	for {
		sort.SliceStable(a.items, func(i, j int) bool { return itemBefore(a.items[i], a.items[j]) })
		// A turn follows the item before it only if that is a turn (a
		// summary may sit between two turns).
		for i, it := range a.items {
			if it.Kind != KindTurn {
				continue
			}
			var prev *Item
			if i > 0 && a.items[i-1].Kind == KindTurn {
				prev = a.items[i-1]
			}
			if it.Follows != prev {
				a.used -= it.Tokens
				a.link(it, prev)
				a.measure(it)
				a.used += it.Tokens
			}
		}
		a.header = a.r.Header(a.conv, a.omittedSorted())
		text := a.sections + a.r.Join(a.header, a.items)
		n := a.as.tok.Count(text)
		if n <= a.req.Budget {
			pkg := &Package{Conversation: a.req.Conversation, Query: a.req.Query, Format: a.r.Name(),
				Tokenizer: a.as.tok.Name(), Budget: a.req.Budget, Tokens: n, Turns: a.conv.Turns,
				Omitted: a.omittedSorted(), Rendered: text, Items: make([]Item, len(a.items))}
			for i, it := range a.items {
				pkg.Items[i] = *it
				if it.Follows != nil {
					pkg.Items[i].Follows = &pkg.Items[i-1]
				}
			}
			return pkg, nil
		}
		if len(a.items) == 0 {
			return nil, Errorf(EINVALID, "budget %d is too small: a package of this conversation needs at least %d tokens for its header", a.req.Budget, n)
		}
		// Drop the item the package can best spare: of the lowest
		// priority, the least relevant.
		worst := 0
		for i, it := range a.items {
			if w := a.items[worst]; it.prio > w.prio || it.prio == w.prio && it.score < w.score {
				worst = i
			}
		}
		// What it stood for is declared omitted, unless another item
		// still shows or summarizes it (omittedSorted).
		if w := a.items[worst]; w.Kind != KindLearning {
			a.noteOmitted(w.FirstSeq, w.LastSeq)
		}
		a.remove(a.items[worst])
	}
}

// omittedSorted returns the omitted ranges in order, minus the turns that
// items show or summarize after all (a relevance hit inside an omitted
// range, say).
func (a *assembler) omittedSorted() []Omission {
	spans := make([][2]int64, 0, len(a.items))
	for _, it := range a.items {
		if it.Kind == KindLearning {
			continue // a learning's span is its provenance, not what it shows
		}
		spans = append(spans, [2]int64{it.FirstSeq, it.LastSeq})
	}
	slices.SortFunc(spans, func(x, y [2]int64) int { return cmpInt64(x[0], y[0]) })
	out := []Omission{}
	for _, o := range a.omit {
		lo := o.FirstSeq
		for _, sp := range spans {
			if sp[1] < lo || sp[0] > o.LastSeq {
				continue
			}
			if sp[0] > lo {
				out = append(out, Omission{FirstSeq: lo, LastSeq: sp[0] - 1})
			}
			lo = max(lo, sp[1]+1)
		}
		if lo <= o.LastSeq {
			out = append(out, Omission{FirstSeq: lo, LastSeq: o.LastSeq})
		}
	}
	slices.SortFunc(out, func(x, y Omission) int { return cmpInt64(x.FirstSeq, y.FirstSeq) })
	// Omissions of neighbouring spans read as one range.
	merged := out[:0]
	for _, o := range out {
		if n := len(merged); n > 0 && merged[n-1].LastSeq+1 >= o.FirstSeq {
			merged[n-1].LastSeq = max(merged[n-1].LastSeq, o.LastSeq)
			continue
		}
		merged = append(merged, o)
	}
	return merged
}

// itemBefore orders items chronologically; a summary comes before the raw
// turns inside its span, a coarser summary before a finer one.
func itemBefore(x, y *Item) bool {
	if xl, yl := x.Kind == KindLearning, y.Kind == KindLearning; xl || yl {
		if xl != yl {
			return xl // confirmed learnings open the package
		}
		return x.learning < y.learning
	}
	if x.FirstSeq != y.FirstSeq {
		return x.FirstSeq < y.FirstSeq
	}
	if x.Kind != y.Kind {
		return x.Kind == KindSummary
	}
	return x.Level > y.Level
}
