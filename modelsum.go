package strata

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"
)

// LLMOptions configure summaries written by a model, for the levels whose
// Summarizer is MethodLLM. Rollups never wait for a model: they store the
// extractive summary at once and mark the node pending; SummarizePending
// (run by `strata rollup --wait`, the watch loop or a server's worker)
// writes the model's summary later. Pending work lives in the store, so it
// survives restarts.
type LLMOptions struct {
	// Completer is the model. Nil: llm levels keep extractive summaries.
	Completer Completer
	// Model is the default model ("" is the Completer's); Models overrides
	// it per level name (a small local model for micro chunks, a larger
	// one for months).
	Model  string
	Models map[string]string
	// Concurrency bounds the calls in flight. Default 4.
	Concurrency int
	// Timeout is the first attempt's; each retry waits 50% longer.
	// Default 60s.
	Timeout time.Duration
	// ErrorRetries is how many times a failed call (rate limit, server
	// error, timeout) is tried again, with exponential backoff from
	// Backoff (default 1s, or what the provider asks for), before the node
	// keeps its extractive summary with the reason. Default 3.
	ErrorRetries int
	Backoff      time.Duration
	// Prompts overrides the embedded prompts file by file (see Prompts).
	Prompts fs.FS
	// Defer writes the model summaries of level-1 nodes when their span
	// leaves the hot tier (000's defer_summarization), not at once.
	Defer bool
	// Learnings has the model read the learnings of each closed span too
	// (one call per span, with the same timeout, retries and call log;
	// learnmodel.go), the offline rules reading those it fails on. Off,
	// learnings are the offline rules'. Learning passes claim the
	// conversation (see ClaimStore), so that workers sharing a store ask
	// the model about each span once.
	Learnings bool
}

// DeadEndpointFailures is how many model calls in a row may fail to reach
// the endpoint at all (connection refused, no route to the host, unknown
// host) before a SummarizePending pass stops calling the model. The rest
// of the pass makes no call: its pending nodes keep their extractive
// summaries, stay pending with the reason in Fallback, and the pass says
// so once (PendingResult.Unreachable, and one warning in the log). The
// next pass tries the endpoint again. A call that reaches the endpoint,
// whatever its answer, resets the count.
const DeadEndpointFailures = 3

// maxBudgetTries is how many times a model is asked for a summary within
// budget: once, then twice with a tighter instruction (003).
const maxBudgetTries = 3

func (o LLMOptions) withDefaults() LLMOptions {
	if o.Concurrency <= 0 {
		o.Concurrency = 4
	}
	if o.Timeout <= 0 {
		o.Timeout = 60 * time.Second
	}
	if o.ErrorRetries == 0 {
		o.ErrorRetries = 3
	}
	if o.ErrorRetries < 0 {
		o.ErrorRetries = 0
	}
	if o.Backoff <= 0 {
		o.Backoff = time.Second
	}
	return o
}

// wantsModel reports whether nodes of the level are summarized by a model:
// a model is configured and the level asks for one, or names no strategy.
func (o LLMOptions) wantsModel(l Level) bool {
	return o.Completer != nil && (l.Summarizer == MethodLLM || l.Summarizer == "")
}

// PendingOptions narrow a SummarizePending pass.
type PendingOptions struct {
	Conversation string // "" means every conversation of the namespace
	// RetryFailed first marks pending again the nodes of llm levels that
	// kept their extractive summary because the model failed or answered
	// over budget, and those that serve a model summary over budget.
	RetryFailed bool
}

// PendingResult says what a SummarizePending pass did.
type PendingResult struct {
	Summarized int `json:"summarized"` // nodes now with a model summary within budget
	// OverBudget counts the nodes whose model replies were all over budget:
	// each serves the shorter summary (the extractive one when it fits)
	// and keeps the model's last reply as Node.Rejected.
	OverBudget int `json:"over_budget"`
	Failed     int `json:"failed"` // nodes that kept their extractive summary because the model failed
	Calls      int `json:"calls"`
	Retried    int `json:"retried"` // nodes marked pending again by RetryFailed
	// Skipped counts the nodes left pending because the model's endpoint
	// could not be reached (see DeadEndpointFailures); Unreachable says
	// why, empty when the endpoint answered.
	Skipped     int    `json:"skipped,omitempty"`
	Unreachable string `json:"unreachable,omitempty"`
	// Claimed counts the nodes left to another process that holds their
	// claim (see ClaimStore): it is writing them, or died doing so and
	// they are taken over once its claim ends.
	Claimed int `json:"claimed,omitempty"`
}

// SummarizePending writes the model summaries that are due, finest level
// first (a parent is summarized from its children's model summaries), at
// most LLMOptions.Concurrency calls at once, and returns when none is
// left. A node whose model fails keeps its extractive summary with the
// reason in Fallback, and is no longer pending (RetryFailed asks again).
// A node whose model answers over budget on every try serves the shorter
// summary (the extractive one whenever it fits) and keeps the last reply
// in Rejected, with the reason in Fallback.
// Each node is claimed before its model is called (see ClaimStore), so
// that processes sharing the store summarize it once: a node another
// process holds is left to it (PendingResult.Claimed), and so are the
// levels above it until the next pass.
// Cancelling ctx stops the pass; what it did not finish stays pending.
func (m *Memory) SummarizePending(ctx context.Context, o PendingOptions) (PendingResult, error) {
	return m.model.pending(ctx, o)
}

// modelPass runs the summarizers outside a rollup: the model over the
// nodes whose model summary is pending (SummarizePending), the model
// calls of the learnings, and the configured Summarizer on request
// (Summarize, summarize.go).
type modelPass struct {
	scope
	claims  *claims
	tok     Tokenizer
	sum     Summarizer // the extractive summary a model summary starts from
	llm     LLMOptions
	prompts *Prompts
}

func (mp *modelPass) pending(ctx context.Context, o PendingOptions) (res PendingResult, err error) {
	if mp.llm.Completer == nil {
		return res, Errorf(EINVALID, "no model is configured (set STRATA_LLM_PROVIDER and STRATA_LLM_MODEL, or llm in strata.yaml)")
	}
	convs, err := mp.conversationsOf(ctx, o.Conversation)
	if err != nil {
		return res, err
	}
	g := &endpointGuard{down: make(chan struct{})}
	l := mp.claims.newLease()
	defer l.close(ctx)
	defer func() {
		if reason, down := g.isDown(); down {
			res.Unreachable = reason
			mp.log.Warn("model endpoint unreachable: pending summaries wait for the next pass",
				"reason", reason, "pending", res.Skipped)
		}
	}()
	for _, c := range convs {
		p, err := mp.policyFor(c)
		if err != nil {
			return res, err
		}
		if reason, down := g.isDown(); down {
			// The endpoint is down: no call, the reason on every node due.
			n, err := mp.holdPending(ctx, c, reason, l)
			res.Skipped += n
			if err != nil {
				return res, fmt.Errorf("%s: %w", c.ID, err)
			}
			continue
		}
		if o.RetryFailed {
			n, err := mp.markFailedPending(ctx, c, p)
			res.Retried += n
			if err != nil {
				return res, err
			}
		}
		if err := mp.summarizeConversation(ctx, c, p, &res, g, l); err != nil {
			return res, fmt.Errorf("%s: %w", c.ID, err)
		}
	}
	return res, nil
}

// markFailedPending marks pending the nodes of llm levels whose model
// summary failed or came back over budget.
func (mp *modelPass) markFailedPending(ctx context.Context, c Conversation, p Policy) (int, error) {
	n := 0
	for lvl, l := range p.Levels {
		if !mp.llm.wantsModel(l) {
			continue
		}
		ns, err := mp.store.Nodes(ctx, NodeFilter{Namespace: mp.ns, Conversation: c.ID, Level: lvl + 1})
		if err != nil {
			return n, err
		}
		var again []Node
		for _, nd := range ns {
			failed := nd.Method != MethodLLM && nd.Fallback != ""
			long := nd.Method == MethodLLM && nd.Status == StatusOverBudget
			if (failed || long) && !nd.Pending {
				nd.Pending = true
				again = append(again, nd)
			}
		}
		if len(again) > 0 {
			if err := mp.store.PutNodes(ctx, mp.ns, c.ID, again); err != nil {
				return n, err
			}
			n += len(again)
		}
	}
	return n, nil
}

// holdPending records reason on the conversation's pending nodes that do
// not carry it yet, and returns how many nodes are pending. They keep their
// extractive summaries and stay pending for the next pass. A node another
// process holds is left as it is: it may be writing its summary.
func (mp *modelPass) holdPending(ctx context.Context, c Conversation, reason string, l *lease) (int, error) {
	lock := mp.rollLock(c.ID)
	lock.Lock()
	defer lock.Unlock()
	ns, err := mp.store.Nodes(ctx, NodeFilter{Namespace: mp.ns, Conversation: c.ID, Pending: true})
	if err != nil {
		return 0, err
	}
	var ids []string
	for _, n := range ns {
		if n.Fallback == reason {
			continue
		}
		key := claimKey(claimSummary, mp.ns, c.ID, n.ID)
		ok, err := l.take(ctx, key)
		if err != nil {
			return 0, err
		}
		if ok {
			defer l.release(ctx, key)
			ids = append(ids, n.ID)
		}
	}
	if len(ids) == 0 {
		return len(ns), nil
	}
	// Read again under the claims: another process may have written some
	// before they were taken.
	cur, err := mp.store.Nodes(ctx, NodeFilter{Namespace: mp.ns, Conversation: c.ID, IDs: ids})
	if err != nil {
		return 0, err
	}
	var put []Node
	for _, n := range cur {
		if n.Pending && n.Fallback != reason {
			n.Fallback = reason
			put = append(put, n)
		}
	}
	if len(put) > 0 {
		if err := mp.store.PutNodes(context.WithoutCancel(ctx), mp.ns, c.ID, put); err != nil {
			return 0, err
		}
	}
	return len(ns), nil
}

// summarizeConversation writes the conversation's pending summaries,
// finest level first, in batches: each node of a batch is claimed, read
// again (another process may have written it before the claim), sent to
// the model, and stored while its claim still holds; the claims are
// released once the batch is stored. It stops when nothing is pending, or
// when every pending node of the finest level is held by another process.
func (mp *modelPass) summarizeConversation(ctx context.Context, c Conversation, p Policy, res *PendingResult, g *endpointGuard, l *lease) error {
	others := map[string]bool{} // nodes another process holds, left to it
	for {
		batch, err := mp.store.Nodes(ctx, NodeFilter{Namespace: mp.ns, Conversation: c.ID, Pending: true, Limit: 4*mp.llm.Concurrency + len(others)})
		if err != nil || len(batch) == 0 {
			return err
		}
		// Only the finest level of the batch: its children are done.
		lvl := batch[0].Level
		var work []Node
		for _, n := range batch {
			if n.Level == lvl && !others[n.ID] {
				work = append(work, n)
			}
		}
		if len(work) == 0 {
			// The batch holds every pending node of this level (it has room
			// for more than those left to others), and all are held
			// elsewhere: the levels above wait for them.
			return nil
		}
		b := mp.summarizeBatch(ctx, c, p, work, g, l)
		if err := mp.storeBatch(ctx, c, b, res, others, l); err != nil {
			return err
		}
		if reason, down := g.isDown(); down {
			n, err := mp.holdPending(ctx, c, reason, l)
			res.Skipped += n
			return err
		}
	}
}

// summaryBatch is what became of each node of a batch of pending nodes
// (work): its claim, whether another process wrote it first, the node to
// store, the model calls made, and the error met.
type summaryBatch struct {
	work    []Node
	keys    []string
	claimed []bool
	gone    []bool // written by another process before the claim
	done    []Node
	calls   [][]Call
	errs    []error
}

// summarizeBatch claims each node of work, reads it again and asks the
// model for its summary, LLMOptions.Concurrency nodes at once.
func (mp *modelPass) summarizeBatch(ctx context.Context, c Conversation, p Policy, work []Node, g *endpointGuard, l *lease) *summaryBatch {
	b := &summaryBatch{work: work, keys: make([]string, len(work)), claimed: make([]bool, len(work)),
		gone: make([]bool, len(work)), done: make([]Node, len(work)), calls: make([][]Call, len(work)),
		errs: make([]error, len(work))}
	var wg sync.WaitGroup
	sem := make(chan struct{}, mp.llm.Concurrency)
	for i := range work {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			b.keys[i] = claimKey(claimSummary, mp.ns, c.ID, work[i].ID)
			b.claimed[i], b.errs[i] = l.take(ctx, b.keys[i])
			if !b.claimed[i] || b.errs[i] != nil {
				return
			}
			// Another process may have written it before the claim.
			cur, err := mp.store.Nodes(ctx, NodeFilter{Namespace: mp.ns, Conversation: c.ID, IDs: []string{work[i].ID}})
			if err != nil || len(cur) == 0 || !cur[0].Pending {
				b.gone[i], b.errs[i] = true, err
				return
			}
			b.done[i], b.calls[i], b.errs[i] = mp.modelSummary(ctx, c, p, cur[0], g)
		}()
	}
	wg.Wait()
	return b
}

// storeBatch records the calls of b and stores the summaries whose claims
// still hold, counting them in res; nodes another process holds join
// others. The batch's claims are released once it is stored. It returns
// the first error met.
func (mp *modelPass) storeBatch(ctx context.Context, c Conversation, b *summaryBatch, res *PendingResult, others map[string]bool, l *lease) error {
	// What was paid for is kept, even when ctx has just ended.
	keep := context.WithoutCancel(ctx)
	var all []Call
	var put []Node
	var firstErr error
	for i, n := range b.work {
		all = append(all, b.calls[i]...)
		if b.errs[i] != nil {
			if firstErr == nil {
				firstErr = b.errs[i]
			}
			continue
		}
		if !b.claimed[i] {
			others[n.ID] = true
			res.Claimed++
			continue
		}
		if b.gone[i] || b.done[i].Pending {
			continue // written elsewhere, or the endpoint is down (holdPending after)
		}
		// A claim that ended while the model wrote (this process
		// stalled) may belong to another process now: its summary wins.
		if ok, err := l.holds(keep, b.keys[i]); err != nil || !ok {
			if err != nil && firstErr == nil {
				firstErr = err
			}
			others[n.ID] = true
			continue
		}
		put = append(put, b.done[i])
		res.count(b.done[i])
	}
	res.Calls += len(all)
	if len(all) > 0 {
		if err := mp.store.RecordCalls(keep, mp.ns, c.ID, all); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	if len(put) > 0 {
		lock := mp.rollLock(c.ID)
		lock.Lock()
		err := mp.putStillStored(keep, c.ID, put)
		lock.Unlock()
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	// Stored (or abandoned): the claims go, so that the next pass of
	// any process finds the nodes free.
	for i := range b.work {
		if b.claimed[i] {
			l.release(ctx, b.keys[i])
		}
	}
	return firstErr
}

// count counts a node written by a pass as over budget, failed (kept
// extractive) or summarized.
func (res *PendingResult) count(n Node) {
	switch {
	case n.Rejected != nil || (n.Method == MethodLLM && n.Status == StatusOverBudget):
		res.OverBudget++
	case n.Method != MethodLLM:
		res.Failed++
	default:
		res.Summarized++
	}
}

// modelSummary asks the model for a node's summary. It returns the node to
// store (with the model's summary, or its extractive one and the reason the
// model failed) and the calls made. Only ctx's end and store failures are
// errors: the node then stays pending. When g finds the endpoint down, the
// node is returned unchanged and still pending.
func (mp *modelPass) modelSummary(ctx context.Context, c Conversation, p Policy, n Node, g *endpointGuard) (Node, []Call, error) {
	if _, down := g.isDown(); down {
		return n, nil, nil
	}
	level := p.Levels[n.Level-1]
	budget := level.BudgetFor(c.IsImportant(n.Key))
	req, ext, err := mp.extractive(ctx, c, n, level, budget)
	if err != nil {
		return n, nil, err
	}
	data := promptData(c.ID, level, n.Key, budget, req.Turns, req.Children, c.Location())
	data.Identifiers = ext.Identifiers
	who, err := mp.spanSpeakers(ctx, c, n, req.Turns, ext.Text)
	if err != nil {
		return n, nil, err
	}
	when := spanDates(n, c.Location())
	model := mp.llm.Model
	if mm := mp.llm.Models[level.Name]; mm != "" {
		model = mm
	}
	var calls []Call
	fallback := func(reason string) (Node, []Call, error) {
		return mp.extractiveNode(n, ext, budget, reason), calls, nil
	}
	var best *reply
	for try := 0; try < maxBudgetTries; try++ {
		system, user, err := mp.prompts.Render(level.Name, data)
		if err != nil {
			return fallback("prompt: " + err.Error())
		}
		timeout := mp.llm.Timeout + time.Duration(try)*mp.llm.Timeout/2
		comp, more, err := mp.complete(ctx, CompletionRequest{Model: model, System: system, User: user, MaxTokens: 2*budget + 400},
			timeout, n, len(calls), g)
		calls = append(calls, more...)
		if err != nil {
			if ctx.Err() != nil {
				return n, calls, ctx.Err()
			}
			if _, down := g.isDown(); down && unreachable(err) {
				return n, calls, nil // stays pending for the next pass
			}
			return fallback("model failed: " + err.Error())
		}
		r := parseReply(comp.Text)
		if r.summary == "" {
			calls[len(calls)-1].Outcome = "empty"
			return fallback("model gave an empty summary")
		}
		r.summary = keepIdentifiers(r.summary, who, when, ext.Identifiers, budget, mp.tok)
		r.tokens = mp.tok.Count(r.summary)
		r.model = comp.Model
		if r.tokens <= budget && comp.FinishReason != "length" {
			best = &r
			break
		}
		calls[len(calls)-1].Outcome = StatusOverBudget
		best = &r
		data.Tighter = tighter(try, r.tokens, budget)
	}
	if best.model == "" {
		best.model = model
	}
	if best.tokens > budget {
		// Every try came back over budget. The node serves the shorter of
		// the two summaries, the extractive one whenever it fits, and keeps
		// the model's reply for review and for a retry.
		rejected := &RejectedReply{Summary: best.summary, Tokens: best.tokens, Budget: budget, Model: best.model, Status: StatusOverBudget}
		if mp.tok.Count(ext.Text) <= best.tokens {
			out, calls, err := fallback(fmt.Sprintf("model reply over budget: %d tokens for a budget of %d after %d tries",
				best.tokens, budget, maxBudgetTries))
			out.Rejected = rejected
			return out, calls, err
		}
	}
	return modelNode(n, best, ext, budget), calls, nil
}

// extractive reads the span of pending node n (its turns at level 1, its
// children above) and returns the request of its summary and the
// Summarizer's summary of it.
func (mp *modelPass) extractive(ctx context.Context, c Conversation, n Node, level Level, budget int) (SummaryRequest, Summary, error) {
	req := SummaryRequest{Conversation: c.ID, Level: n.Level, LevelName: level.Name, Budget: budget, Tokenizer: mp.tok, WantIdentifiers: true}
	var err error
	if n.Level == 1 {
		req.Turns, err = mp.store.Turns(ctx, TurnFilter{Namespace: mp.ns, Conversation: c.ID, FromSeq: n.FirstSeq, ToSeq: n.LastSeq})
	} else {
		req.Children, err = mp.store.Nodes(ctx, NodeFilter{Namespace: mp.ns, Conversation: c.ID, Level: n.Level - 1, FromSeq: n.FirstSeq, ToSeq: n.LastSeq})
	}
	if err != nil {
		return req, Summary{}, err
	}
	ext, err := mp.sum.Summarize(ctx, req)
	return req, ext, err
}

// extractiveNode is n written with its extractive summary ext, the model
// having failed for reason.
func (mp *modelPass) extractiveNode(n Node, ext Summary, budget int, reason string) Node {
	out := n
	out.Summary, out.Facts, out.Themes, out.Method = ext.Text, ext.Facts, ext.Themes, MethodExtractive
	out.Derived = ext.Derived && n.Level > 1
	out.Tokens = mp.tok.Count(out.Summary)
	out.Status = StatusOK
	if out.Tokens > budget {
		out.Status = StatusOverBudget
	}
	out.Pending, out.Model, out.Fallback, out.Rejected = false, "", reason, nil
	return out
}

// modelNode is n written with the model's reply r; the facts and themes
// of the extractive summary ext stand in for those the reply lacks.
func modelNode(n Node, r *reply, ext Summary, budget int) Node {
	out := n
	out.Summary, out.Tokens, out.Method, out.Model = r.summary, r.tokens, MethodLLM, r.model
	out.Rejected = nil
	out.Facts, out.Themes = r.facts, r.themes
	if len(out.Facts) == 0 {
		out.Facts = ext.Facts
	}
	if len(out.Themes) == 0 {
		out.Themes = ext.Themes
	}
	out.Derived = false // a model's words are its own: index them
	out.Pending, out.Fallback, out.Status = false, "", StatusOK
	if out.Tokens > budget {
		out.Status = StatusOverBudget
	}
	return out
}

// tighter is the instruction of the retry after an answer over budget
// (003: two retries, each stricter).
func tighter(try, got, budget int) string {
	if try == 0 {
		return fmt.Sprintf("Your last summary was %d tokens; the limit is %d. Write it again in under %d tokens: drop detail, keep names, numbers, dates and identifiers.", got, budget, budget*9/10)
	}
	return fmt.Sprintf("CRITICAL: the summary must be under %d tokens (your last one was %d). Keep only the most important facts and identifiers.", budget*3/4, got)
}

// complete calls the model, retrying failures a later attempt may not
// meet with exponential backoff (or the wait the provider asks for), each
// retry with a 50% longer timeout. It returns every call made.
func (mp *modelPass) complete(ctx context.Context, req CompletionRequest, timeout time.Duration, n Node, before int, g *endpointGuard) (Completion, []Call, error) {
	var calls []Call
	wait := mp.llm.Backoff
	for attempt := 0; ; attempt++ {
		// A slow model gets more time on each retry, as on each tighter try.
		cctx, cancel := context.WithTimeout(ctx, timeout+time.Duration(attempt)*timeout/2)
		start := time.Now()
		comp, err := mp.llm.Completer.Complete(cctx, req)
		cancel()
		// What a model answers is stored (summaries, call records): it is
		// made storable, as a user's input would be refused if it were not.
		comp.Text, comp.Model = Storable(comp.Text), Storable(comp.Model)
		call := Call{Conversation: n.Conversation, Node: n.ID, Level: n.Level, Provider: mp.llm.Completer.Name(), Model: req.Model,
			Attempt: before + len(calls) + 1, TokensIn: comp.InputTokens, TokensOut: comp.OutputTokens,
			Elapsed: time.Since(start), Outcome: "ok", At: mp.now().UTC()}
		if comp.Model != "" {
			call.Model = comp.Model
		}
		if err != nil {
			call.Outcome = Storable(oneLineError(err))
		}
		calls = append(calls, call)
		down := g.observe(err)
		if err == nil {
			return comp, calls, nil
		}
		if down {
			return comp, calls, err // the pass calls the endpoint no more
		}
		var pe *ProviderError
		retry := errors.As(err, &pe) && pe.Retryable
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			retry = true // our per-call timeout, not the caller's
		}
		if !retry || attempt >= mp.llm.ErrorRetries || ctx.Err() != nil {
			return comp, calls, err
		}
		d := wait
		if pe != nil && pe.RetryAfter > 0 {
			d = min(pe.RetryAfter, 5*time.Minute)
		}
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return comp, calls, ctx.Err()
		case <-g.down:
			t.Stop()
			return comp, calls, err
		case <-t.C:
		}
		wait *= 2
	}
}

// endpointGuard counts, over one SummarizePending pass, the model calls in
// a row that could not reach the endpoint, and declares it down at
// DeadEndpointFailures. It is safe for concurrent use.
type endpointGuard struct {
	mu     sync.Mutex
	streak int
	reason string
	down   chan struct{} // closed when the endpoint is declared down
}

// observe records a call's outcome and reports whether the endpoint is
// down.
func (g *endpointGuard) observe(err error) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.reason != "" {
		return true
	}
	if err == nil || !unreachable(err) {
		g.streak = 0
		return false
	}
	g.streak++
	if g.streak < DeadEndpointFailures {
		return false
	}
	g.reason = fmt.Sprintf("model endpoint unreachable (%d calls in a row could not connect); waiting for the next pass: %s",
		g.streak, oneLineError(err))
	close(g.down)
	return true
}

// isDown returns the reason the endpoint was declared down, if it was.
func (g *endpointGuard) isDown() (string, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.reason, g.reason != ""
}

// unreachable reports whether err says the model's endpoint could not be
// reached at all: the connection was refused, or dialling it failed (no
// route, unknown host). A reply of any kind, or a timeout waiting for one,
// is not.
func unreachable(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	return errors.As(err, &dns) || errors.Is(err, syscall.ECONNREFUSED)
}

func oneLineError(err error) string {
	s := strings.Join(strings.Fields(err.Error()), " ")
	if len(s) > 300 {
		s = s[:300]
	}
	return s
}

// reply is a model's answer, parsed.
type reply struct {
	summary string
	facts   []string
	themes  []string
	tokens  int
	model   string
}

// parseReply reads the SUMMARY / FACTS / THEMES form the prompts ask for.
// A reply that ignores the form is all summary.
func parseReply(text string) reply {
	var r reply
	text = strings.TrimSpace(text)
	section := "summary"
	var sum []string
	found := false
	for _, line := range strings.Split(text, "\n") {
		head := strings.ToUpper(strings.TrimSpace(strings.TrimLeft(line, "#* ")))
		switch {
		case strings.HasPrefix(head, "SUMMARY:"):
			section, found = "summary", true
			if rest := strings.TrimSpace(line[strings.Index(strings.ToUpper(line), "SUMMARY:")+8:]); rest != "" {
				sum = append(sum, rest)
			}
			continue
		case strings.HasPrefix(head, "FACTS:"):
			section, found = "facts", true
			continue
		case strings.HasPrefix(head, "THEMES:"):
			found = true
			rest := line[strings.Index(strings.ToUpper(line), "THEMES:")+7:]
			for _, th := range strings.Split(rest, ",") {
				if th = strings.TrimSpace(strings.Trim(th, ".")); th != "" && len(r.themes) < 8 {
					r.themes = append(r.themes, th)
				}
			}
			section = "done"
			continue
		}
		switch section {
		case "summary":
			sum = append(sum, line)
		case "facts":
			f := strings.TrimSpace(strings.TrimLeftFunc(line, func(c rune) bool { return c == '-' || c == '*' || unicode.IsSpace(c) }))
			if f != "" && len(r.facts) < 10 {
				r.facts = append(r.facts, f)
			}
		}
	}
	if !found {
		return reply{summary: text}
	}
	r.summary = strings.TrimSpace(strings.Join(sum, "\n"))
	return r
}

// Limits of who-and-when restoration: the speakers named at most, and the
// turns read to find the speakers of a node above level 1.
const (
	maxRestoredSpeakers = 4
	maxSpeakerScan      = 2000
)

// spanSpeakers returns the speakers of a node's span a model summary must
// name, most turns first: those the extractive summary names, or, if it
// names none, the span's most active ones; at most maxRestoredSpeakers.
// Level-1 nodes give their turns; above, the first maxSpeakerScan turns of
// the span are read.
func (mp *modelPass) spanSpeakers(ctx context.Context, c Conversation, n Node, turns []Turn, extractive string) ([]string, error) {
	if n.Level > 1 {
		var err error
		turns, err = mp.store.Turns(ctx, TurnFilter{Namespace: mp.ns, Conversation: c.ID, FromSeq: n.FirstSeq, ToSeq: n.LastSeq, Limit: maxSpeakerScan})
		if err != nil {
			return nil, err
		}
	}
	count := map[string]int{}
	var order []string
	for i := range turns {
		s := strings.TrimSpace(turns[i].Speaker())
		if s == "" {
			continue
		}
		if count[s] == 0 {
			order = append(order, s)
		}
		count[s]++
	}
	sort.SliceStable(order, func(i, j int) bool { return count[order[i]] > count[order[j]] })
	var named []string
	for _, s := range order {
		if strings.Contains(extractive, s) {
			named = append(named, s)
		}
	}
	if len(named) == 0 {
		named = order
	}
	return named[:min(len(named), maxRestoredSpeakers)], nil
}

// spanDates returns the forms of a node's dates: Mentions shows the first
// (the span's day, or its first and last days), and a summary that holds
// any of them names its time. Empty when the span has no times.
func spanDates(n Node, loc *time.Location) []string {
	if n.Start.IsZero() || n.End.IsZero() {
		return nil
	}
	first, last := n.Start.In(loc), n.End.In(loc)
	shown := first.Format("2 Jan 2006")
	if day(last) != day(first) {
		shown += " to " + last.Format("2 Jan 2006")
	}
	out := []string{shown}
	if n.Key != "" && n.Key[0] >= '0' && n.Key[0] <= '9' {
		out = append(out, n.Key) // a calendar period: 2023-05-08, 2023-W19, 2023-05
	}
	// Every day of the span, in the usual ways of writing a date, up to
	// three months of them; a longer span is named by its months.
	d := time.Date(first.Year(), first.Month(), first.Day(), 0, 0, 0, 0, loc)
	long := last.Sub(first) > 7*24*time.Hour
	for i := 0; !d.After(last) && i < 92; i++ {
		out = append(out, d.Format("2 Jan 2006"), d.Format("2 January 2006"), d.Format("January 2, 2006"),
			d.Format("Jan 2, 2006"), d.Format(time.DateOnly))
		d = d.AddDate(0, 0, 1)
	}
	if long {
		for d := time.Date(first.Year(), first.Month(), 1, 0, 0, 0, 0, loc); !d.After(last); d = d.AddDate(0, 1, 0) {
			out = append(out, d.Format("January 2006"), d.Format("Jan 2006"), d.Format("2006-01"))
		}
	}
	return out
}

// containsWord reports whether w occurs in s between non-letters, so
// that a speaker "Al" is not found in "talked".
func containsWord(s, w string) bool {
	for i := 0; w != ""; {
		j := strings.Index(s[i:], w)
		if j < 0 {
			return false
		}
		at, end := i+j, i+j+len(w)
		before, _ := utf8.DecodeLastRuneInString(s[:at])
		after, _ := utf8.DecodeRuneInString(s[end:])
		if (at == 0 || !unicode.IsLetter(before)) && (end == len(s) || !unicode.IsLetter(after)) {
			return true
		}
		i = at + 1
	}
	return false
}

func day(t time.Time) string { return t.Format(time.DateOnly) }

// keepIdentifiers appends to a model's summary, under "Mentions:", what
// the extractive pass kept and the model dropped, so that summarizing
// never loses who, when or a name, number, date, path or identifier:
// first the span's speakers it does not name, then the span's dates
// (when[0]) if it names none of when, then the identifiers ids it lacks.
// The Mentions stay within budget tokens by dropping identifiers, the
// lowest ranked first; speakers and dates are never dropped, so a reply
// that leaves them no room is over budget.
func keepIdentifiers(summary string, who, when, ids []string, budget int, tok Tokenizer) string {
	lower := strings.ToLower(summary)
	has := func(s string) bool { return strings.Contains(lower, strings.ToLower(s)) }
	var must, missing []string
	seen := map[string]bool{}
	add := func(list *[]string, s string) {
		if k := strings.ToLower(s); !seen[k] && !has(s) {
			seen[k] = true
			*list = append(*list, s)
		}
	}
	for _, s := range who {
		if k := strings.ToLower(s); !seen[k] && !containsWord(lower, k) {
			seen[k] = true
			must = append(must, s)
		}
	}
	if len(when) > 0 && !slices.ContainsFunc(when, has) {
		add(&must, when[0])
	}
	for _, id := range ids {
		add(&missing, id)
	}
	for {
		all := append(slices.Clip(must), missing...)
		if len(all) == 0 {
			return summary
		}
		out := summary + "\nMentions: " + strings.Join(all, "; ")
		if len(missing) == 0 || tok == nil || tok.Count(out) <= budget {
			return out
		}
		missing = missing[:len(missing)-1]
	}
}

// putStillStored writes the model summaries of nodes that are still
// stored: a rollup may have replaced one while the model was writing (its
// period reopened), and putting it back would give that period a second
// node. The replacement is pending already and gets its own summary. The
// caller holds the conversation's roll lock; another process may still
// replace a node between the check and the write, and then the store
// refuses the overlap (ECONFLICT) and the next pass finds the replacement.
func (mp *modelPass) putStillStored(ctx context.Context, conv string, nodes []Node) error {
	ids := make([]string, len(nodes))
	for i := range nodes {
		ids[i] = nodes[i].ID
	}
	have, err := mp.store.Nodes(ctx, NodeFilter{Namespace: mp.ns, Conversation: conv, IDs: ids})
	if err != nil {
		return err
	}
	stored := make(map[string]bool, len(have))
	for _, n := range have {
		stored[n.ID] = true
	}
	put := nodes[:0:0]
	for _, n := range nodes {
		if stored[n.ID] {
			put = append(put, n)
		} else {
			mp.log.Debug("a node was replaced while its model summary was written; dropping the summary", "conversation", conv, "node", n.ID)
		}
	}
	if len(put) == 0 {
		return nil
	}
	return mp.store.PutNodes(ctx, mp.ns, conv, put)
}
