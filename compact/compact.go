package compact

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/compact/checkpoint"
)

// SummaryPrefix starts the user message that carries a checkpoint in a
// compacted list; Acknowledgement is the assistant's reply to it. The pair
// stands at the head of the history (after OpenAI system messages), so
// roles alternate as each provider requires.
const (
	SummaryPrefix   = "[Previous conversation summary]\n\n"
	Acknowledgement = "I have the context from our previous conversation. Let's continue."
	// TruncatedNotice opens a list whose span was dropped without a
	// checkpoint (the checkpointer failed, and there was none before)
	// when the recent window starts with the assistant's tool round.
	TruncatedNotice = "[Earlier conversation dropped: no summary is available]"
)

// ModeTruncate is Result.Mode when the checkpointer failed and the span
// was dropped without a new checkpoint.
const ModeTruncate = "truncate"

// Why Compact left the history whole (Result.Reason).
const (
	ReasonDisabled       = "compaction disabled"
	ReasonUnderThreshold = "under threshold"
	ReasonFits           = "history fits in keep_recent_tokens"
	ReasonNoBoundary     = "no user-turn boundary to cut at"
)

// Checkpointer writes the checkpoint of a span: a new one when previous is
// "", else previous updated with what the span adds. An error makes
// Compact fall back to truncation.
type Checkpointer interface {
	Checkpoint(ctx context.Context, span []checkpoint.Entry, previous string) (checkpoint.Result, error)
}

// CheckpointFunc adapts a function to a Checkpointer.
type CheckpointFunc func(ctx context.Context, span []checkpoint.Entry, previous string) (checkpoint.Result, error)

// Checkpoint calls f.
func (f CheckpointFunc) Checkpoint(ctx context.Context, span []checkpoint.Entry, previous string) (checkpoint.Result, error) {
	return f(ctx, span, previous)
}

// Hook runs before a span is checkpointed, typically to hand its messages
// to long-term memory (see SpanTurns). An error aborts the compaction:
// Compact returns it and nothing changes. A hook may run again for the
// same span when a compaction is retried, so it must be idempotent.
type Hook func(ctx context.Context, span Span) error

// Options configure a Compactor.
type Options struct {
	// Config sets both layers; the zero Config means DefaultConfig().
	Config Config
	// Tokenizer counts tokens; nil is strata.CharEstimator (chars/4).
	Tokenizer strata.Tokenizer
	// Checkpointer writes checkpoints. Compact returns an EINVALID error
	// if it has to compact and this is nil.
	Checkpointer Checkpointer
	// PreCompact, if set, runs before each checkpoint.
	PreCompact Hook
	// Now stamps State.Updated; nil is time.Now.
	Now func() time.Time
}

// Compactor runs both layers over message lists. It is safe for
// concurrent use.
type Compactor struct {
	cfg  Config
	tok  strata.Tokenizer
	cp   Checkpointer
	hook Hook
	now  func() time.Time
}

// New returns a Compactor, or an EINVALID error naming the bad field of
// o.Config.
func New(o Options) (*Compactor, error) {
	if o.Config == (Config{}) {
		o.Config = DefaultConfig()
	}
	if err := o.Config.Validate(); err != nil {
		return nil, err
	}
	if o.Tokenizer == nil {
		o.Tokenizer = strata.CharEstimator{}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Compactor{cfg: o.Config, tok: o.Tokenizer, cp: o.Checkpointer, hook: o.PreCompact, now: o.Now}, nil
}

// Config returns the compactor's configuration.
func (c *Compactor) Config() Config { return c.cfg }

// Request is one call to Compact.
type Request struct {
	// Transcript is the message list; Compact does not modify it.
	Transcript *Transcript
	// State is the conversation's compaction state (the zero State for a
	// conversation never compacted).
	State strata.CompactionState
	// Force compacts whatever the threshold and Config.CompactionEnabled
	// say (it still needs a cut point).
	Force bool
	// SystemTokens are tokens the request carries beside the list (a
	// system prompt or tools the Transcript does not hold).
	SystemTokens int
	// OutputTokens is the output headroom: the call's max_tokens. 0 uses
	// the list's own max_tokens (or max_completion_tokens), else
	// Config.OutputHeadroom.
	OutputTokens int
	// Usage, if set, calibrates the estimate with the provider's count.
	Usage *Usage
}

// Result is what Compact did.
type Result struct {
	// Transcript is the list to send: pruned, and compacted if Compacted.
	Transcript *Transcript
	// State is the conversation's new state, to save. It differs from
	// Request.State only when Compacted.
	State strata.CompactionState
	// Compacted reports that layer 2 ran and a span left the list (with a
	// new checkpoint, or by truncation if Fallback).
	Compacted bool
	// Reason says why layer 2 did not run (one of the Reason constants).
	Reason string
	// TokensBefore and TokensAfter estimate the input (system and
	// history, without output headroom) before layer 1 and after layer 2.
	TokensBefore, TokensAfter int
	// Factor is the calibration applied to the estimates.
	Factor float64
	// Prune is what layer 1 did.
	Prune PruneStats
	// Cut is the index, in the request's list, of the first message kept
	// after the span (0 if nothing was compacted).
	Cut int
	// MessagesCompacted is the span's length.
	MessagesCompacted int
	// Identifiers is the number of identifiers the checkpoint carries.
	Identifiers int
	// Mode is the checkpoint's (checkpoint.ModeLLM or ModeExtractive), or
	// ModeTruncate.
	Mode string
	// Update reports that the checkpoint merged a previous one.
	Update bool
	// Fallback reports that the checkpointer failed (Err says why): the
	// span was dropped, the recent window kept whole, and the previous
	// checkpoint, if any, kept as the summary.
	Fallback bool
	Err      error
	// Checkpoint is the checkpointer's result (its Completion records the
	// model call's cost).
	Checkpoint checkpoint.Result
	// Span is what left the list, when Compacted.
	Span *Span
}

// Estimate returns the token estimate of the request's list as it stands.
func (c *Compactor) Estimate(req Request) (Estimate, error) {
	if err := checkRequest(req); err != nil {
		return Estimate{}, err
	}
	e, _, _, err := counter{tok: c.tok}.estimate(req.Transcript, req.SystemTokens, req.Usage)
	return e, err
}

func checkRequest(req Request) error {
	switch {
	case req.Transcript == nil:
		return strata.Errorf(strata.EINVALID, "transcript: missing")
	case req.SystemTokens < 0:
		return strata.Errorf(strata.EINVALID, "system_tokens: %d is negative", req.SystemTokens)
	case req.OutputTokens < 0:
		return strata.Errorf(strata.EINVALID, "output_tokens: %d is negative", req.OutputTokens)
	case req.State.TurnCount < 0 || req.State.CompactionCount < 0:
		return strata.Errorf(strata.EINVALID, "state: negative counts (turn_count %d, compaction_count %d)", req.State.TurnCount, req.State.CompactionCount)
	}
	return nil
}

// Compact runs layer 1 (if Config.ToolPruningEnabled) and then, if the
// estimated input plus output headroom exceeds Config.CompactionThreshold
// (and Config.CompactionEnabled) or req.Force is set, layer 2:
//
//  1. The cut: walking back from the newest message until about
//     Config.KeepRecentTokens are kept, then forward to the next real
//     user message (not a tool-result message), or back to the previous
//     one if there is none after. A cut never separates a tool call from
//     its result. Leading OpenAI system and developer messages, and a
//     summary pair from an earlier compaction, are never in the span.
//     The cut never passes the tool rounds layer 1 protects (the last
//     Config.KeepLastToolResults tool-result messages and their calls)
//     when the walk reached them: it moves back to the assistant message
//     that opens them, which then follows the summary directly (no
//     Acknowledgement), even if they alone exceed KeepRecentTokens.
//  2. The PreCompact hook, with the span.
//  3. The checkpoint of the span, updating the previous one
//     (req.State.Checkpoint, or the summary pair found in the list). The
//     checkpointer reads the span as req.Transcript holds it, before this
//     call's pruning.
//  4. The rebuild: [system messages] + summary pair + recent window. If
//     the checkpointer failed, the span is dropped all the same and the
//     previous checkpoint, if any, stays as the summary (Result.Fallback).
//
// The new State advances TurnCount by the span's length and sets
// Checkpoint, and on success increments CompactionCount; Updated is Now.
// Compact never modifies req.Transcript. Errors: EINVALID for a bad
// request or a missing Checkpointer; the hook's error; the context's
// error if it ends during the checkpoint. With an error, nothing changed.
// Calling Compact again on its own output is safe: under the threshold it
// only prunes, and a second compaction updates the first checkpoint.
func (c *Compactor) Compact(ctx context.Context, req Request) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	if err := checkRequest(req); err != nil {
		return Result{}, err
	}
	res, toks, cnt, err := c.pruneCopy(req)
	if err != nil {
		return Result{}, err
	}
	if reason, ok := c.due(req, res.TokensAfter); !ok {
		res.Reason = reason
		return res, nil
	}
	t := res.Transcript
	h := findHead(t)
	cut, reason := cutPoint(t.Messages, toks, h.end, c.cfg.KeepRecentTokens, protectedZone(t, c.cfg.KeepLastToolResults))
	if cut < 0 {
		res.Reason = reason
		return res, nil
	}
	if c.cp == nil {
		return Result{}, strata.Errorf(strata.EINVALID, "compact: no checkpointer configured")
	}
	previous := req.State.Checkpoint
	if previous == "" {
		previous = h.previous
	}
	span := newSpan(req, h.end, cut)
	if c.hook != nil {
		if err := c.hook(ctx, *span); err != nil {
			return Result{}, fmt.Errorf("pre-compaction hook: %w", err)
		}
	}
	summary, err := c.checkpoint(ctx, span, previous, &res)
	if err != nil {
		return Result{}, err
	}
	outToks := rebuild(t, h.lead, cut, summary, toks, cnt)
	after := cnt.sum(t, req.SystemTokens, outToks)

	res.Compacted = true
	res.TokensAfter = after.Total()
	res.Cut = cut
	res.MessagesCompacted = len(span.Messages)
	res.Span = span
	res.State = strata.CompactionState{
		Checkpoint:      summary,
		TurnCount:       req.State.TurnCount + len(span.Messages),
		CompactionCount: req.State.CompactionCount,
		Updated:         c.now(),
	}
	if !res.Fallback {
		res.State.CompactionCount++
	}
	return res, nil
}

// pruneCopy estimates the request's tokens and runs layer 1 on a copy of its
// transcript: the result holds the copy and the counts before and after,
// and toks the copy's tokens a message.
func (c *Compactor) pruneCopy(req Request) (res Result, toks []int, cnt counter, err error) {
	in := req.Transcript
	before, inToks, cnt, err := counter{tok: c.tok}.estimate(in, req.SystemTokens, req.Usage)
	if err != nil {
		return Result{}, nil, cnt, err
	}
	res = Result{State: req.State, TokensBefore: before.Total(), TokensAfter: before.Total(), Factor: cnt.factor}
	t := in.Clone()
	res.Transcript = t
	toks = inToks
	if c.cfg.ToolPruningEnabled {
		res.Prune = prune(t, c.cfg)
		var after Estimate
		after, toks = cnt.reestimate(t, req.SystemTokens, in, inToks)
		res.TokensAfter = after.Total()
	}
	return res, toks, cnt, nil
}

// due says whether a transcript of tokens (after pruning) is to be
// compacted, and if not, why: a forced request always is.
func (c *Compactor) due(req Request, tokens int) (string, bool) {
	output := req.OutputTokens
	if output == 0 {
		output = req.Transcript.maxTokens
	}
	if output == 0 {
		output = c.cfg.OutputHeadroom
	}
	switch {
	case req.Force:
	case !c.cfg.CompactionEnabled:
		return ReasonDisabled, false
	case !c.cfg.ShouldCompact(tokens, output):
		return ReasonUnderThreshold, false
	}
	return "", true
}

// newSpan is the span of the request's messages from first up to cut, as
// the caller sent them.
func newSpan(req Request, first, cut int) *Span {
	in := req.Transcript
	names := toolNames(in.Messages)
	span := &Span{
		Provider:  in.Provider,
		Number:    req.State.CompactionCount + 1,
		FirstTurn: req.State.TurnCount,
		Messages:  append([]*Message(nil), in.Messages[first:cut]...),
		names:     names,
	}
	span.Entries = entries(span.Messages, names)
	return span
}

// checkpoint writes the span's checkpoint over previous and records it in
// res; it returns the summary that leads the rebuilt list. A checkpointer
// that fails leaves previous as the summary (res.Fallback); only the end
// of the context is an error.
func (c *Compactor) checkpoint(ctx context.Context, span *Span, previous string, res *Result) (string, error) {
	// The checkpointer reads the span as the caller sent it, before this
	// call's pruning: what layer 1 has just cleared is not lost to the
	// checkpoint. (Results cleared by an earlier call carry their digest.)
	cr, err := c.cp.Checkpoint(ctx, span.Entries, previous)
	if err == nil && strings.TrimSpace(cr.Text) == "" {
		err = errors.New("the checkpointer returned an empty checkpoint")
	}
	if err != nil && ctx.Err() != nil {
		return "", fmt.Errorf("checkpoint: %w", err)
	}
	if err != nil {
		res.Fallback, res.Err, res.Mode = true, err, ModeTruncate
		return previous, nil
	}
	res.Checkpoint, res.Mode, res.Update = cr, cr.Mode, cr.Update || previous != ""
	res.Identifiers = len(cr.Ledger)
	return cr.Text, nil
}

// rebuild makes t's messages its first lead ones, the summary pair (or a
// notice of what is missing) and the recent window from cut; it returns
// the new list's tokens a message.
func rebuild(t *Transcript, lead, cut int, summary string, toks []int, cnt counter) []int {
	out := make([]*Message, 0, lead+2+len(t.Messages)-cut)
	outToks := make([]int, 0, cap(out))
	out = append(out, t.Messages[:lead]...)
	outToks = append(outToks, toks[:lead]...)
	if summary != "" {
		pair := summaryPair(t.Provider, summary)
		if t.Messages[cut].role == "assistant" {
			// The recent window opens with the assistant's tool round: the
			// summary alone keeps roles alternating.
			pair = pair[:1]
		}
		for _, m := range pair {
			out = append(out, m)
			outToks = append(outToks, cnt.scale(cnt.message(m)))
		}
	} else if t.Messages[cut].role == "assistant" {
		// No checkpoint to lead with: a user message says what is missing,
		// so that the history still opens with a user turn.
		m := userMessage(t.Provider, TruncatedNotice)
		out = append(out, m)
		outToks = append(outToks, cnt.scale(cnt.message(m)))
	}
	out = append(out, t.Messages[cut:]...)
	t.Messages = out
	return append(outToks, toks[cut:]...)
}

// head describes the start of a list: lead system messages, then perhaps
// a summary pair from an earlier compaction.
type head struct {
	lead     int    // leading OpenAI system/developer messages
	end      int    // first message after the lead and the summary pair
	previous string // the checkpoint the summary pair carries, if any
}

func findHead(t *Transcript) head {
	h := head{lead: leadEnd(t)}
	i := h.lead
	ms := t.Messages
	if i < len(ms) && ms[i].realUser() {
		if text := ms[i].Text(); strings.HasPrefix(text, SummaryPrefix) {
			h.previous = strings.TrimPrefix(text, SummaryPrefix)
			i++
			if i < len(ms) && ms[i].role == "assistant" && ms[i].Text() == Acknowledgement {
				i++
			}
		}
	}
	h.end = i
	return h
}

// summaryPair returns the synthetic user/assistant pair that carries a
// checkpoint.
func summaryPair(p Provider, checkpointText string) []*Message {
	return []*Message{textMessage(p, "user", SummaryPrefix+checkpointText), textMessage(p, "assistant", Acknowledgement)}
}

// userMessage returns a synthetic user message of text.
func userMessage(p Provider, text string) *Message { return textMessage(p, "user", text) }

func textMessage(p Provider, role, text string) *Message {
	raw := []byte(`{"role":"` + role + `","content":`)
	raw = appendString(raw, text)
	raw = append(raw, '}')
	m, err := parseMessage(p, 0, raw)
	if err != nil {
		panic("compact: synthetic message does not parse: " + err.Error())
	}
	return m
}

// zone is the part of a list layer 1 never prunes: from the assistant
// message that made the calls the last KeepLastToolResults tool-result
// messages answer (a run of OpenAI tool messages is one) to the newest
// tool-result message. from is -1 when there is none.
type zone struct{ from, end int }

func protectedZone(t *Transcript, keep int) zone {
	ms := t.Messages
	n := len(ms)
	z := zone{from: n, end: -1}
	if keep <= 0 {
		return zone{-1, -1}
	}
	callAt := map[string]int{}
	var ids []string
	for i, m := range ms {
		ids = m.callIDs(ids[:0])
		for _, id := range ids {
			callAt[id] = i
		}
	}
	age := 0
	for i := n - 1; i >= 0; i-- {
		m := ms[i]
		if !m.toolResult {
			continue
		}
		if !(t.Provider == OpenAI && i+1 < n && ms[i+1].role == "tool") {
			age++
		}
		if age > keep {
			break
		}
		if z.end < 0 {
			z.end = i
		}
		z.from = min(z.from, i)
		ids = m.resultIDs(ids[:0])
		for _, id := range ids {
			if a, ok := callAt[id]; ok && a < z.from {
				z.from = a
			}
		}
	}
	if z.end < 0 {
		return zone{-1, -1}
	}
	return z
}

// cutPoint returns the index of the first message to keep, or -1 and why
// there is none. start is the first message that may be compacted;
// protect is the zone layer 1 protects. When the token walk ends in it or
// before it, the cut never passes its first message: if the user turn it
// would cut at lies beyond, the cut moves back to the zone's first
// message (an assistant message that makes tool calls) or the last
// boundary before it, so the newest tool calls and results stay whole
// even when they alone exceed keep. A zone older than keep tokens of
// later history is compacted like the rest.
func cutPoint(ms []*Message, toks []int, start, keep int, protect zone) (int, string) {
	n := len(ms)
	// split[j] > 0: a tool call before j has its result at or after j.
	split := make([]int, n+2)
	callAt := map[string]int{}
	var ids []string
	for i, m := range ms {
		ids = m.resultIDs(ids[:0])
		for _, id := range ids {
			if a, ok := callAt[id]; ok && a < i {
				split[a+1]++
				split[i+1]--
			}
		}
		ids = m.callIDs(ids[:0])
		for _, id := range ids {
			callAt[id] = i
		}
	}
	for j := 1; j <= n; j++ {
		split[j] += split[j-1]
	}
	boundary := func(j int) bool { return j > start && ms[j].realUser() && split[j] == 0 }

	target, acc := -1, 0
	for i := n - 1; i >= start; i-- {
		acc += toks[i]
		if acc >= keep {
			target = i
			break
		}
	}
	if target < 0 {
		return -1, ReasonFits
	}
	cut := -1
	for j := target; j < n; j++ {
		if boundary(j) {
			cut = j
			break
		}
	}
	if cut < 0 {
		for j := target - 1; j > start; j-- {
			if boundary(j) {
				cut = j
				break
			}
		}
	}
	if cut < 0 {
		return -1, ReasonNoBoundary
	}
	if protect.from >= 0 && target <= protect.end && cut > protect.from {
		// The last place at or before the protected zone where a user
		// turn or an assistant's tool round starts, with no call open.
		cut = -1
		for j := protect.from; j > start; j-- {
			if split[j] == 0 && (ms[j].realUser() || ms[j].role == "assistant" && len(ms[j].callIDs(nil)) > 0) {
				cut = j
				break
			}
		}
		if cut < 0 {
			return -1, ReasonNoBoundary
		}
	}
	return cut, ""
}

// StateStore keeps each conversation's CompactionState, so that a
// restarted agent resumes with its checkpoint and counts.
type StateStore interface {
	// Load returns the conversation's state: the zero state if none was
	// saved.
	Load(ctx context.Context, conversation string) (strata.CompactionState, error)
	// Save replaces the conversation's state.
	Save(ctx context.Context, conversation string, s strata.CompactionState) error
}

// CompactConversation is Compact with the state kept in st: it loads the
// conversation's state (req.State is ignored), compacts, and saves the new
// state if the list was compacted. A failed load or save is returned as
// an error, and the result must then not be used.
func (c *Compactor) CompactConversation(ctx context.Context, st StateStore, conversation string, req Request) (Result, error) {
	s, err := st.Load(ctx, conversation)
	if err != nil {
		return Result{}, fmt.Errorf("load compaction state: %w", err)
	}
	req.State = s
	res, err := c.Compact(ctx, req)
	if err != nil {
		return Result{}, err
	}
	if res.Compacted {
		if err := st.Save(ctx, conversation, res.State); err != nil {
			return Result{}, fmt.Errorf("save compaction state: %w", err)
		}
	}
	return res, nil
}
