package strata

import (
	"context"
	"fmt"
	"time"
)

// Pass is what one rollup pass over a namespace did.
type Pass struct {
	At    time.Time      `json:"at"`
	Made  map[string]int `json:"made"`  // nodes made, by conversation
	Moved map[string]int `json:"moved"` // spans that changed tier, by conversation
	// Summaries is what the model wrote in the pass (Watch, with a model).
	Summaries *PendingResult `json:"summaries,omitempty"`
	// Embedded is what the pass embedded (with an embedder).
	Embedded *EmbedResult `json:"embedded,omitempty"`
}

// RollupAll runs one rollup pass, followed by tiering, over every
// conversation of the namespace: it closes every span that is complete
// by now, such as a day that ended at midnight while nobody wrote. It is
// idempotent, and safe to run from several processes at once (a node's
// id derives from its span, so two passes write the same nodes). The
// first error stops the pass.
func (m *Memory) RollupAll(ctx context.Context) (Pass, error) {
	return m.pyramid.rollupAll(ctx)
}

func (py *pyramid) rollupAll(ctx context.Context) (Pass, error) {
	pass := Pass{At: py.now(), Made: map[string]int{}, Moved: map[string]int{}}
	cs, err := py.store.Conversations(ctx, py.ns)
	if err != nil {
		return pass, err
	}
	for _, c := range cs {
		p, err := py.policyFor(c)
		if err != nil {
			return pass, err
		}
		made, moved, err := py.rollupThenTier(ctx, c.ID, p, nil, true)
		if made > 0 {
			pass.Made[c.ID] = made
		}
		if moved > 0 {
			pass.Moved[c.ID] = moved
		}
		if err != nil {
			return pass, fmt.Errorf("%s: %w", c.ID, err)
		}
	}
	return pass, nil
}

// Pass runs one pass of the background work over the namespace:
// RollupAll (periods the clock closed, then tier moves and retention),
// with a model SummarizePending, with an embedder Embed (the missing
// vectors, summaries' once written), and Learn. Each step is idempotent,
// so a pass killed part-way is finished by the next, and each unit of it
// is claimed (see ClaimStore), so that passes of several processes over
// one store do it once.
func (m *Memory) Pass(ctx context.Context) (Pass, error) {
	pass, err := m.RollupAll(ctx)
	if err == nil && m.llm.Completer != nil {
		var res PendingResult
		res, err = m.SummarizePending(ctx, PendingOptions{})
		pass.Summaries = &res
	}
	if err == nil && m.vec.emb != nil {
		var res EmbedResult
		res, err = m.Embed(ctx, EmbedRequest{})
		pass.Embedded = &res
	}
	if err == nil {
		_, err = m.Learn(ctx, "")
	}
	return pass, err
}

// Watch runs Pass at once and then every interval until ctx is done, so
// that periods close and model summaries get written while nobody
// imports; it returns ctx's error. A failed pass is logged and reported
// to onPass, and the next one runs on time. onPass, if not nil, is called
// after every pass.
func (m *Memory) Watch(ctx context.Context, every time.Duration, onPass func(Pass, error)) error {
	if every <= 0 {
		return Errorf(EINVALID, "watch: interval %v must be positive", every)
	}
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
		}
		pass, err := m.Pass(ctx)
		if ctx.Err() != nil {
			return ctx.Err() // a pass cut short by the end of ctx is no failure
		}
		if err != nil {
			m.log.Warn("rollup pass failed", "error", err)
		}
		if onPass != nil {
			onPass(pass, err)
		}
		timer.Reset(every)
	}
}
