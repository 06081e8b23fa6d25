package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/strata-memory/strata"
)

// Defaults and bounds of Options.
const (
	// DefaultBudget is the checkpoint's budget in tokens. A span taken
	// out at the default threshold (100K tokens, 20K kept) holds about
	// 300 identifiers that need about 2,800 tokens verbatim; 6,000 keeps
	// 99.9% of them with room for the prose (3,000 kept 77-84%: see
	// TestIdentifierSurvival), and is still small beside the 20K of
	// recent history kept with it.
	DefaultBudget = 6000
	// MinBudget is the smallest budget a Writer accepts: the format's
	// headings alone take about 50 tokens.
	MinBudget = 256
	// DefaultPromptBudget caps the conversation a model is shown, in
	// tokens.
	DefaultPromptBudget = 30000
	// DefaultRetries is how many times a failed model call that a later
	// attempt may not meet (rate limit, server error) is tried again.
	DefaultRetries = 2
	// DefaultBackoff is the wait before the first retry; it doubles.
	DefaultBackoff = time.Second
)

// proseShare is the share of the budget the sections above Critical
// Context may take; the ledger gets the rest, and what the prose leaves.
const proseShare = 0.4

// tightProseShare is the prose's share when the ledger does not fit the
// rest.
const tightProseShare = 0.25

// maxRetryWait caps the wait a provider asks for before a retry.
const maxRetryWait = 30 * time.Second

// Options configure a Writer. The zero Options write extractive
// checkpoints of DefaultBudget tokens counted as characters / 4.
type Options struct {
	// LLM writes the prose; nil writes extractive checkpoints.
	LLM strata.Completer
	// Model is passed to the LLM ("" is its default).
	Model string
	// Tokenizer counts the budget; nil is strata.CharEstimator{}.
	Tokenizer strata.Tokenizer
	// Budget is the checkpoint's size limit in tokens: 0 is
	// DefaultBudget; below MinBudget is invalid.
	Budget int
	// PromptBudget caps the serialized conversation in a model's prompt,
	// in tokens: 0 is DefaultPromptBudget.
	PromptBudget int
	// Retries is how many times a model call failing with a retryable
	// *strata.ProviderError is tried again: 0 is DefaultRetries, negative
	// is none. Backoff is the first wait (0 is DefaultBackoff), doubled
	// each time, or what the provider asks for (at most 30s).
	Retries int
	Backoff time.Duration
}

// Validate reports options a Writer cannot use, as EINVALID errors.
func (o Options) Validate() error {
	switch {
	case o.Budget < 0:
		return strata.Errorf(strata.EINVALID, "checkpoint budget %d is negative", o.Budget)
	case o.Budget > 0 && o.Budget < MinBudget:
		return strata.Errorf(strata.EINVALID, "checkpoint budget %d is below the minimum of %d tokens", o.Budget, MinBudget)
	case o.PromptBudget < 0:
		return strata.Errorf(strata.EINVALID, "checkpoint prompt budget %d is negative", o.PromptBudget)
	case o.PromptBudget > 0 && o.PromptBudget < 1000:
		return strata.Errorf(strata.EINVALID, "checkpoint prompt budget %d is below the minimum of 1000 tokens", o.PromptBudget)
	}
	return nil
}

func (o Options) withDefaults() Options {
	if o.Tokenizer == nil {
		o.Tokenizer = strata.CharEstimator{}
	}
	if o.Budget == 0 {
		o.Budget = DefaultBudget
	}
	if o.PromptBudget == 0 {
		o.PromptBudget = DefaultPromptBudget
	}
	if o.Retries == 0 {
		o.Retries = DefaultRetries
	}
	if o.Retries < 0 {
		o.Retries = 0
	}
	if o.Backoff <= 0 {
		o.Backoff = DefaultBackoff
	}
	return o
}

// Writer writes checkpoints. It is safe for concurrent use.
type Writer struct {
	o Options
}

// New returns a Writer, or the EINVALID error of Options.Validate.
func New(o Options) (*Writer, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	return &Writer{o: o.withDefaults()}, nil
}

// Checkpoint writes the checkpoint of span: a new one when previous is
// "", else previous updated with what the span adds. The text is within
// the budget as counted by the tokenizer, and in the six-section format
// whatever the model replies; its Critical Context carries the identifier
// ledger (see the package documentation).
//
// A model that cannot be reached or fails (after the retries Options
// allow) gives the extractive checkpoint, with Result.Fallback saying why
// and the calls made in Result.Calls: the span is never lost for want of
// a model. Only cancelling ctx returns an error, ctx's. Without a model,
// Checkpoint does no I/O and cannot fail.
//
// An entry of span that is itself a checkpoint (the summary message of an
// earlier compaction) is not read as conversation; when previous is "",
// the last such entry serves as the previous checkpoint.
func (w *Writer) Checkpoint(ctx context.Context, span []Entry, previous string) (Result, error) {
	o := w.o
	si := analyze(span)
	if strings.TrimSpace(previous) == "" {
		previous = si.earlier
	}
	previous = strings.TrimSpace(previous)
	c := collect(si)

	prev, prevIDs := readPrevious(previous)
	cands := ledger(si, c, prevIDs)
	sec := extract(si)
	if previous != "" {
		sec = merge(prev, sec, si)
	}
	res := Result{Mode: ModeExtractive, Update: previous != ""}
	if o.LLM != nil {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		ms, extra, calls, fallback, err := w.withModel(ctx, si, previous, sec)
		res.Calls = calls
		if len(calls) > 0 {
			last := calls[len(calls)-1]
			res.Completion = &last
		}
		if err != nil && ctx.Err() != nil {
			return res, ctx.Err()
		}
		if err != nil {
			fallback = "the model call failed: " + strings.TrimPrefix(err.Error(), "checkpoint model: ")
		}
		if fallback != "" {
			res.Fallback = fallback
		} else {
			sec, res.Mode = ms, ModeLLM
			cands = withExtra(cands, extra)
		}
	}
	if !spareFits(cands, o.Budget/2, o.Tokenizer) {
		// Not everything fits: the names only a read or a listing showed
		// are left out; the error lines past the first few of an output
		// still fill what room is left.
		cands = withoutSpare(cands, true)
		// What passing outputs show ranks last; a small share of the
		// budget keeps the latest of it.
		cands = reservePassing(cands, int(float64(o.Budget)*passingShare), o.Tokenizer)
		// Whole error lines take at most their share: past it, their
		// identifiers speak for them. What only a failure reported in
		// words names follows the first tier.
		cands = capErrorLines(cands, int(float64(o.Budget)*errorLineShare), o.Tokenizer)
	}
	// Many reads of one pattern are one line.
	cands = collapseReads(cands)
	full := sec
	fitProse(&sec, int(float64(o.Budget)*proseShare), o.Tokenizer)
	res.Text, res.Ledger, res.Omitted, res.Tokens = fitLedger(sec, cands, o.Budget, o.Tokenizer)
	if res.Omitted > 0 {
		// The ledger did not fit: give it more of the budget, and keep
		// the variant that carries more identifiers.
		fitProse(&full, int(float64(o.Budget)*tightProseShare), o.Tokenizer)
		text, led, omitted, tokens := fitLedger(full, cands, o.Budget, o.Tokenizer)
		if len(led) > len(res.Ledger) {
			res.Text, res.Ledger, res.Omitted, res.Tokens = text, led, omitted, tokens
		}
	}
	return res, nil
}

// withModel asks the model for the prose. It returns the sections (those
// the reply left out taken from ext), the identifiers the reply listed in
// Critical Context, the calls made, and a reason when the reply was not a
// checkpoint even after a repair (the extractive sections are then used).
func (w *Writer) withModel(ctx context.Context, si *spanInfo, previous string, ext Sections) (Sections, []Identifier, []strata.Completion, string, error) {
	o := w.o
	prose := int(float64(o.Budget) * proseShare)
	conv := fitConversation(si, o.PromptBudget, o.Tokenizer.Count)
	system := checkpointSystem
	if previous != "" {
		system = updateSystem
	}
	req := strata.CompletionRequest{Model: o.Model, System: fmt.Sprintf(system, prose), User: userPrompt(previous, conv), MaxTokens: o.Budget}
	var calls []strata.Completion
	comp, err := w.complete(ctx, req)
	if err != nil {
		return ext, nil, calls, "", err
	}
	calls = append(calls, comp)
	sec, info := parse(comp.Text)
	if info.headings == 0 {
		if strings.TrimSpace(comp.Text) == "" {
			return ext, nil, calls, "the model's reply was empty", nil
		}
		// One repair: the reply, put into the format.
		rep := strata.CompletionRequest{Model: o.Model, System: fmt.Sprintf(repairSystem, prose), User: comp.Text, MaxTokens: o.Budget}
		comp, err = w.complete(ctx, rep)
		if err != nil {
			return ext, nil, calls, "", err
		}
		calls = append(calls, comp)
		sec, info = parse(comp.Text)
		if info.headings == 0 {
			return ext, nil, calls, "the model's reply was not a checkpoint, even after a repair", nil
		}
	}
	// Sections the reply left out come from the extractive checkpoint.
	if !info.seen[secGoal] || sec.Goal == "" && ext.Goal != "" {
		sec.Goal = ext.Goal
	}
	if !info.seen[secConstraints] {
		sec.Constraints = ext.Constraints
	}
	if !info.seen[secProgress] && !info.seen[secDone] {
		sec.Done = ext.Done
	}
	if !info.seen[secProgress] && !info.seen[secInProgress] {
		sec.InProgress = ext.InProgress
	}
	if !info.seen[secDecisions] {
		sec.Decisions = ext.Decisions
	}
	if !info.seen[secNext] {
		sec.NextSteps = ext.NextSteps
	}
	if !info.seen[secCritical] {
		sec.Notes = ext.Notes
	}
	// Identifiers the model listed count only if the span or the previous
	// checkpoint has them; notes that only list identifiers go to the
	// ledger, which says them anyway.
	known := strings.ToLower(conv + "\n" + previous)
	var extra []Identifier
	for _, id := range sec.Ledger {
		if strings.Contains(known, strings.ToLower(id.Text)) {
			extra = append(extra, id)
		}
	}
	var notes []string
	for _, n := range sec.Notes {
		if identifierOnly(n) {
			for _, id := range scanIdentifiers(n) {
				if strings.Contains(known, strings.ToLower(id.Text)) {
					extra = append(extra, id)
				}
			}
			continue
		}
		notes = append(notes, n)
	}
	sec.Notes, sec.Ledger = notes, nil
	return sec, extra, calls, "", nil
}

// identifierOnly reports whether a note is little more than identifiers:
// fewer than three words that are not.
func identifierOnly(note string) bool {
	words := 0
	for _, f := range strings.Fields(note) {
		t := trimToken(f)
		if t == "" {
			continue
		}
		if k, _ := classify(t, false, false); k != kNone {
			continue
		}
		if strings.ContainsAny(t, "`/") || strings.HasSuffix(f, ":") {
			continue
		}
		words++
	}
	return words < 3
}

// withExtra puts identifiers the model listed, that the ledger lacks,
// after the span's identifiers and before the older ones.
func withExtra(cands []cand, extra []Identifier) []cand {
	if len(extra) == 0 {
		return cands
	}
	have := make(map[string]bool, len(cands))
	split := len(cands)
	for i, d := range cands {
		have[d.key] = true
		if d.first < 0 && split == len(cands) {
			split = i
		}
	}
	var add []cand
	for _, id := range extra {
		k := kindOf(id.Kind)
		if k == kNone {
			continue
		}
		key := keyOf(k, id.Text)
		if key == "" || have[key] {
			continue
		}
		have[key] = true
		add = append(add, cand{key: key, text: strings.TrimSpace(id.Text), kind: k, first: int32(split), last: int32(split)})
	}
	out := make([]cand, 0, len(cands)+len(add))
	out = append(out, cands[:split]...)
	out = append(out, add...)
	return append(out, cands[split:]...)
}

// complete calls the model, retrying failures a later attempt may not
// meet, with exponential backoff or the wait the provider asks for.
func (w *Writer) complete(ctx context.Context, req strata.CompletionRequest) (strata.Completion, error) {
	wait := w.o.Backoff
	for attempt := 0; ; attempt++ {
		comp, err := w.o.LLM.Complete(ctx, req)
		if err == nil {
			return comp, nil
		}
		var pe *strata.ProviderError
		if !errors.As(err, &pe) || !pe.Retryable || attempt >= w.o.Retries || ctx.Err() != nil {
			if ctx.Err() != nil {
				return comp, ctx.Err()
			}
			return comp, fmt.Errorf("checkpoint model: %w", err)
		}
		d := wait
		if pe.RetryAfter > 0 {
			d = min(pe.RetryAfter, maxRetryWait)
		}
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return comp, ctx.Err()
		case <-t.C:
		}
		wait *= 2
	}
}

// trimList is a prose list that fitProse may shorten.
type trimList struct {
	items *[]string
	costs []int
	keep  [3]int // items kept in each pass
	front bool   // drop the oldest (first) items rather than the last
}

// fitProse shortens the sections above Critical Context to limit tokens.
// It drops items in three passes, each allowed to go further (keeping at
// first 4 Done, 4 Constraints, 3 Decisions, 3 Next Steps, 2 In Progress
// and 2 notes; then one of each; then none), each time from the list that
// costs most: the oldest Done items and decisions, the last constraints,
// steps and notes. Then it cuts the Goal.
func fitProse(s *Sections, limit int, tok strata.Tokenizer) {
	prose := *s
	prose.Ledger = nil
	est := tok.Count(prose.Format())
	if est <= limit {
		return
	}
	lists := []*trimList{
		{items: &s.Done, keep: [3]int{4, 1, 0}, front: true},
		{items: &s.Decisions, keep: [3]int{3, 1, 0}, front: true},
		{items: &s.Notes, keep: [3]int{2, 1, 0}},
		{items: &s.Constraints, keep: [3]int{4, 1, 0}},
		{items: &s.NextSteps, keep: [3]int{3, 1, 0}},
		{items: &s.InProgress, keep: [3]int{2, 1, 0}},
	}
	for _, l := range lists {
		for _, it := range *l.items {
			l.costs = append(l.costs, tok.Count(it)+3)
		}
	}
	for pass := 0; pass < 3; pass++ {
		for est > limit {
			var best *trimList
			bestCost := 0
			for _, l := range lists {
				if len(*l.items) <= l.keep[pass] {
					continue
				}
				sum := 0
				for _, c := range l.costs {
					sum += c
				}
				if best == nil || sum > bestCost {
					best, bestCost = l, sum
				}
			}
			if best == nil {
				break
			}
			if best.front {
				est -= best.costs[0]
				*best.items, best.costs = (*best.items)[1:], best.costs[1:]
			} else {
				n := len(best.costs) - 1
				est -= best.costs[n]
				*best.items, best.costs = (*best.items)[:n], best.costs[:n]
			}
			if est <= limit {
				prose = *s
				prose.Ledger = nil
				est = tok.Count(prose.Format())
			}
		}
	}
	// Last, the goal, cut at a word.
	for est > limit && s.Goal != "" {
		n := len(s.Goal) * 3 / 4
		if n < 8 {
			s.Goal = ""
		} else {
			s.Goal = cutWords(strings.TrimSuffix(s.Goal, "…"), n)
		}
		prose = *s
		prose.Ledger = nil
		est = tok.Count(prose.Format())
	}
}

// fitLedger adds the ledger to the sections within budget. An
// identifier the text already says (the sections quote it, or an
// identifier listed before contains it, as a whole word and in the same
// case: invoice.go in internal/billing/invoice.go, but not RATE_LIMITED
// in a URL's #rate_limited) is carried and not listed again. The others
// are listed in rank order, each if its line or list entry still fits (a
// smaller one further down may fit where a larger one did not).
// The assembled text is counted once more and the last listed
// identifiers dropped until it fits. It returns the text, the
// identifiers it carries (quoted or listed, in rank order), how many did
// not fit, and the text's tokens.
func fitLedger(s Sections, cands []cand, budget int, tok strata.Tokenizer) (string, []Identifier, int, int) {
	s.Ledger = nil
	prose := s.Format()
	remaining := budget - tok.Count(prose)
	var seen strings.Builder
	seen.WriteString(prose)
	seen.WriteByte('\n')
	// The words of seen: an identifier can only be said where each of
	// its words is one of them, which most are not.
	words := map[string]bool{}
	addWords(words, prose)
	var listedIdx, said []int
	var started [kID + 1]bool
	est, omitted := 0, 0
	for i := range cands {
		d := &cands[i]
		if hasWords(words, d.text) && containsWord(seen.String(), d.text) {
			said = append(said, i)
			continue
		}
		if remaining-est < 3 {
			omitted++
			continue
		}
		cost := tok.Count(d.text) + 1
		switch {
		case !listed(d.kind) || strings.Contains(d.text, ", "):
			cost += tok.Count("- " + kindNames[d.kind] + ": ")
		case !started[d.kind]:
			cost += tok.Count("- " + pluralLabel[d.kind] + ": ")
		}
		if est+cost > remaining {
			omitted++
			continue
		}
		est += cost
		if listed(d.kind) && !strings.Contains(d.text, ", ") {
			started[d.kind] = true
		}
		listedIdx = append(listedIdx, i)
		seen.WriteString(d.text)
		seen.WriteByte('\n')
		addWords(words, d.text)
	}
	for {
		s.Ledger = make([]Identifier, len(listedIdx))
		for j, i := range listedIdx {
			s.Ledger[j] = Identifier{Kind: kindNames[cands[i].kind], Text: cands[i].text}
		}
		text := s.Format()
		n := tok.Count(text)
		if n <= budget || len(listedIdx) == 0 {
			// What the text carries: the listed identifiers, and those it
			// says otherwise (checked again: a dropped line may have
			// said one).
			carried := make([]Identifier, 0, len(listedIdx)+len(said))
			li, si := 0, 0
			for li < len(listedIdx) || si < len(said) {
				var i int
				if si >= len(said) || li < len(listedIdx) && listedIdx[li] < said[si] {
					i, li = listedIdx[li], li+1
				} else {
					i, si = said[si], si+1
					if !containsWord(text, cands[i].text) {
						omitted++
						continue
					}
				}
				carried = append(carried, Identifier{Kind: kindNames[cands[i].kind], Text: cands[i].text})
			}
			return text, carried, omitted, n
		}
		drop := min(1+(n-budget)/8, len(listedIdx))
		listedIdx = listedIdx[:len(listedIdx)-drop]
		omitted += drop
	}
}

// addWords adds the words of s (its runs of word bytes) to m.
func addWords(m map[string]bool, s string) {
	for i, j := wordAt(s, 0); i < j; i, j = wordAt(s, j) {
		m[s[i:j]] = true
	}
}

// hasWords reports whether every word of s (every run of word bytes) is
// in m. Where containsWord(hay, s) holds, each is a whole word of hay: a
// run inside s is bounded by bytes that are no word's, and the first and
// last, where they open or close s, by the word boundaries containsWord
// asks for.
func hasWords(m map[string]bool, s string) bool {
	for i, j := wordAt(s, 0); i < j; i, j = wordAt(s, j) {
		if !m[s[i:j]] {
			return false
		}
	}
	return true
}

// wordAt returns the bounds of the first run of word bytes of s at or
// after i, empty at the end of s when there is none.
func wordAt(s string, i int) (start, end int) {
	for i < len(s) && !isWordByte(s[i]) {
		i++
	}
	j := i
	for j < len(s) && isWordByte(s[j]) {
		j++
	}
	return i, j
}

// containsWord reports whether needle occurs in hay where it does not
// continue a word on either side.
func containsWord(hay, needle string) bool {
	if needle == "" {
		return false
	}
	wordStart := isWordByte(needle[0])
	wordEnd := isWordByte(needle[len(needle)-1])
	for from := 0; ; {
		i := strings.Index(hay[from:], needle)
		if i < 0 {
			return false
		}
		i += from
		j := i + len(needle)
		// A number does not start after a decimal point (30s in 1.30s).
		num := i >= 2 && isDigit(needle[0]) && (hay[i-1] == '.' || hay[i-1] == ',') && isDigit(hay[i-2])
		if (!wordStart || i == 0 || !isWordByte(hay[i-1])) && !num && (!wordEnd || j == len(hay) || !isWordByte(hay[j])) {
			return true
		}
		from = i + 1
	}
}

func isWordByte(c byte) bool { return isLetter(c) || isDigit(c) || c == '_' }
