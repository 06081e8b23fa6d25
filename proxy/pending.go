package proxy

import (
	"context"
	"sync"
)

// The newest turn and the reply are appended before the reply's last
// bytes go out, and the rollup that follows an append (summaries, tier
// moves) runs after the answer is complete, so that the client does not
// wait on it. pending keeps track of those rollups: a call that builds on
// the pyramid (memory and compact modes) first waits for its
// conversation's, and Proxy.Wait for all of them.
type pending struct {
	mu sync.Mutex
	m  map[[2]string]*convRollups
	wg sync.WaitGroup
}

// convRollups are the rollups running for one conversation; done is
// closed when the last of them ends.
type convRollups struct {
	n    int
	done chan struct{}
}

// start runs fn in the background, counted under the conversation.
func (p *pending) start(ns, conv string, fn func()) {
	k := [2]string{ns, conv}
	p.mu.Lock()
	if p.m == nil {
		p.m = map[[2]string]*convRollups{}
	}
	c := p.m[k]
	if c == nil {
		c = &convRollups{done: make(chan struct{})}
		p.m[k] = c
	}
	c.n++
	p.mu.Unlock()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer func() {
			p.mu.Lock()
			defer p.mu.Unlock()
			if c.n--; c.n == 0 {
				close(c.done)
				delete(p.m, k)
			}
		}()
		fn()
	}()
}

// wait returns once the conversation has no rollup running, or ctx ends.
func (p *pending) wait(ctx context.Context, ns, conv string) error {
	p.mu.Lock()
	c := p.m[[2]string{ns, conv}]
	p.mu.Unlock()
	if c == nil {
		return nil
	}
	select {
	case <-c.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Wait blocks until every rollup started after a reply has ended. Call it
// once the server has stopped serving, before the store is closed.
func (p *Proxy) Wait() { p.rollups.wg.Wait() }
