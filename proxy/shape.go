package proxy

import (
	"context"
	"fmt"
	"strconv"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/compact"
	"github.com/strata-memory/strata/compact/checkpoint"
)

// MemoryPrefix starts the user message that carries a context package in
// memory mode; MemoryAck is the assistant's reply to it, so that roles
// still alternate before the newest turn.
const (
	MemoryPrefix = "[Conversation memory from strata: summaries of the earlier history and the turns most relevant to the next message]\n\n"
	MemoryAck    = "I have the earlier conversation from memory. Let's continue."
)

// shaped is what goes upstream, and what the proxy says about it.
type shaped struct {
	body     []byte
	mode     Mode
	reshaped bool
	received int // tokens of the request's system prompt, tools and messages
	upstream int // the same, of what goes upstream
	coverage string
}

// shape returns the body to send upstream for c's mode.
func (p *Proxy) shape(ctx context.Context, c *call) (shaped, error) {
	cp, err := p.compactor(c.mem.Tokenizer())
	if err != nil {
		return shaped{}, err
	}
	est, err := cp.Estimate(compact.Request{Transcript: c.t})
	if err != nil {
		return shaped{}, err
	}
	sh := shaped{body: c.t.JSON(), mode: c.mode, received: est.Total(), upstream: est.Total()}
	switch c.mode {
	case ModeMemory:
		return p.shapeMemory(ctx, c, cp, est, sh)
	case ModeCompact:
		return p.shapeCompact(ctx, c, cp, sh)
	}
	return sh, nil
}

// compactor returns a Compactor counting with tok, made once per
// tokenizer.
func (p *Proxy) compactor(tok strata.Tokenizer) (*compact.Compactor, error) {
	if c, ok := p.cps.Load(tok.Name()); ok {
		return c.(*compact.Compactor), nil
	}
	tok = newCountCache(tok)
	cp := p.opt.Checkpointer
	if cp == nil {
		ex, err := checkpoint.New(checkpoint.Options{Tokenizer: tok})
		if err != nil {
			return nil, err
		}
		cp = ex
	}
	c, err := compact.New(compact.Options{Config: p.opt.Compact, Tokenizer: tok, Checkpointer: cp, Now: p.opt.Now})
	if err != nil {
		return nil, err
	}
	p.cps.Store(tok.Name(), c)
	return c, nil
}

// shapeMemory replaces the history before the newest turn by a context
// package for the newest user message when the list is over the budget:
// [system messages] + package + acknowledgement + the newest turn as sent.
// The newest turn starts at a real user message, so every tool call and
// its result stay together on one side of the cut.
func (p *Proxy) shapeMemory(ctx context.Context, c *call, cp *compact.Compactor, est compact.Estimate, sh shaped) (shaped, error) {
	if est.Total() <= p.opt.Budget || c.tail <= c.lead {
		return sh, nil
	}
	ack := compact.TextMessage(c.prov, "assistant", MemoryAck)
	budget := p.opt.Budget - est.System - c.mem.Tokenizer().Count(MemoryPrefix+MemoryAck) - 8
	budget = max(budget, MinPackage)
	query := c.t.Messages[c.tail].Text()
	pkg, err := c.mem.Context(ctx, strata.ContextRequest{Conversation: c.conv, Query: query, Budget: budget})
	if strata.ErrorCode(err) == strata.ENOTFOUND {
		// Nothing stored to draw on (X-Strata-Remember: false on a new
		// conversation): the list goes as it came.
		return sh, nil
	}
	if err != nil {
		return sh, fmt.Errorf("context package: %w", err)
	}
	out := c.t.Clone()
	ms := make([]*compact.Message, 0, c.lead+2+len(c.t.Messages)-c.tail)
	ms = append(ms, c.t.Messages[:c.lead]...)
	ms = append(ms, compact.TextMessage(c.prov, "user", MemoryPrefix+pkg.Rendered), ack)
	ms = append(ms, c.t.Messages[c.tail:]...)
	out.Messages = ms
	after, err := cp.Estimate(compact.Request{Transcript: out})
	if err != nil {
		return sh, err
	}
	sh.body = out.JSON()
	sh.reshaped = true
	sh.upstream = after.Total()
	sh.coverage = strconv.FormatInt(pkg.Covered(), 10) + "/" + strconv.FormatInt(pkg.Turns, 10)
	return sh, nil
}

// shapeCompact compacts the list with the conversation's compaction
// state. The client keeps sending its whole list: the messages an earlier
// compaction took out (the state's TurnCount, after the system messages)
// are replaced by its checkpoint before this call's compaction, which then
// only adds what is new.
func (p *Proxy) shapeCompact(ctx context.Context, c *call, cp *compact.Compactor, sh shaped) (shaped, error) {
	st := compact.StoreState{Store: c.mem.Store(), Namespace: storeNamespace(c.mem)}
	state, err := st.Load(ctx, c.conv)
	if err != nil {
		return sh, fmt.Errorf("load compaction state: %w", err)
	}
	t := resume(c, state)
	if t == nil {
		// The list is shorter than what the state covers: a new list under
		// the same name. It is compacted from scratch.
		state = strata.CompactionState{}
		t = c.t
	}
	res, err := cp.Compact(ctx, compact.Request{Transcript: t, State: state})
	if err != nil {
		return sh, err
	}
	if res.Compacted && !c.forget {
		if err := st.Save(ctx, c.conv, res.State); err != nil {
			return sh, fmt.Errorf("save compaction state: %w", err)
		}
	}
	sh.body = res.Transcript.JSON()
	sh.upstream = res.TokensAfter
	sh.reshaped = t != c.t || res.Compacted || res.Prune != (compact.PruneStats{})
	if state.TurnCount > 0 || res.Compacted {
		sh.coverage = "checkpoint " + strconv.Itoa(res.State.TurnCount) + "/" + strconv.Itoa(len(c.t.Messages)-c.lead)
	}
	return sh, nil
}

// resume returns c's list with the messages the state's compactions took
// out replaced by its checkpoint (the list itself when there is no
// state), or nil if the list holds fewer messages than the state covers.
func resume(c *call, st strata.CompactionState) *compact.Transcript {
	if st.TurnCount == 0 && st.Checkpoint == "" {
		return c.t
	}
	ms := c.t.Messages
	if c.lead+st.TurnCount >= len(ms) {
		return nil
	}
	rest := ms[c.lead+st.TurnCount:]
	out := c.t.Clone()
	list := append([]*compact.Message(nil), ms[:c.lead]...)
	if st.Checkpoint != "" {
		list = append(list, compact.TextMessage(c.prov, "user", compact.SummaryPrefix+st.Checkpoint))
		if rest[0].Role() != "assistant" {
			list = append(list, compact.TextMessage(c.prov, "assistant", compact.Acknowledgement))
		}
	} else if rest[0].Role() == "assistant" {
		list = append(list, compact.TextMessage(c.prov, "user", compact.TruncatedNotice))
	}
	out.Messages = append(list, rest...)
	return out
}
