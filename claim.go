package strata

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"time"
)

// Units of background work are claimed in the store (see ClaimStore)
// before they are done, so that processes sharing a store do each once:
//
//   - a pending model summary, per node, before the model is called;
//   - a conversation's tier pass (tier moves and retention), when it has
//     spans to move or expire;
//   - a conversation's missing embeddings, while Embed computes them;
//   - a conversation's learning pass, when it has closed spans no pass
//     has read (one claim for them all: the pass reads them in order).
//
// A unit claimed by another process is left to it: the pass goes on with
// the rest, and the next pass finds the unit done, or its claim ended (its
// holder died) and takes it over. A claim lasts Config.ClaimTTL and is
// renewed every third of it while its work runs; it is released as soon
// as the work is stored.

// MinClaimTTL is the shortest claim: the default TTL is the model's
// timeout plus a minute, and never less than this.
const MinClaimTTL = 2 * time.Minute

// claimKind names the kinds of units in claim keys.
const (
	claimSummary = "summary"
	claimTiers   = "tiers"
	claimEmbed   = "embed"
	claimLearn   = "learn"
)

// claimKey is the key of a unit: its kind, namespace, conversation and
// parts, each quoted, so that no two units share a key.
func claimKey(kind, ns, conv string, parts ...string) string {
	k := kind + " " + strconv.Quote(ns) + " " + strconv.Quote(conv)
	for _, p := range parts {
		k += " " + strconv.Quote(p)
	}
	return k
}

// newHolder names a process in its claims: host, process id and a random
// suffix, so that two Memories of one process are two holders too.
func newHolder() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown"
	}
	var b [6]byte
	_, _ = rand.Read(b[:]) // crypto/rand does not fail on supported systems
	return fmt.Sprintf("%s:%d:%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

// Holder returns the name this Memory's claims carry (Config.Holder, or
// one made at New).
func (m *Memory) Holder() string { return m.claims.holder }

// ClaimTTL returns how long this Memory's claims last unless renewed: a
// claim left by a process that died ends after at most this long.
func (m *Memory) ClaimTTL() time.Duration { return m.claims.ttl }

// claims takes a holder's claims on units of background work, and keeps
// track of those it holds. The Memories ForNamespace makes share one.
type claims struct {
	store  Store
	log    *slog.Logger
	now    func() time.Time
	holder string        // names this process in its claims
	ttl    time.Duration // how long a claim lasts unless renewed
	held   *heldClaims   // the claims this holder holds now
}

// heldClaims are the keys a holder's Memories hold at the moment (shared
// by ForNamespace): the store lets a holder renew its own claim, so two
// goroutines of one holder keep each other out here.
type heldClaims struct {
	mu   sync.Mutex
	keys map[string]bool
}

// reserve marks key held, and reports false if it already was.
func (h *heldClaims) reserve(key string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.keys[key] {
		return false
	}
	h.keys[key] = true
	return true
}

func (h *heldClaims) drop(key string) {
	h.mu.Lock()
	delete(h.keys, key)
	h.mu.Unlock()
}

// lease is the claims one piece of work holds. They are renewed in the
// background every third of the TTL until close, which releases those
// still held. It is safe for concurrent use.
type lease struct {
	c    *claims
	mu   sync.Mutex
	keys map[string]bool // held, renewed
	stop chan struct{}
	done chan struct{}
}

// newLease starts an empty lease; the caller closes it.
func (c *claims) newLease() *lease {
	l := &lease{c: c, keys: map[string]bool{}, stop: make(chan struct{}), done: make(chan struct{})}
	go l.renewLoop()
	return l
}

// take claims key for this lease. It reports false when another holder's
// claim lasts, or when another piece of work of this holder holds it.
func (l *lease) take(ctx context.Context, key string) (bool, error) {
	c := l.c
	if !c.held.reserve(key) {
		return false, nil
	}
	now := c.now()
	ok, err := c.store.Claim(ctx, key, c.holder, now, now.Add(c.ttl))
	if err != nil || !ok {
		c.held.drop(key)
		if err != nil {
			return false, fmt.Errorf("claiming %s: %w", key, err)
		}
		return false, nil
	}
	l.mu.Lock()
	l.keys[key] = true
	l.mu.Unlock()
	return true, nil
}

// holds renews key now and reports whether the lease still holds it: a
// claim that ended while its holder stalled may have been taken over,
// and then the work done under it is not stored.
func (l *lease) holds(ctx context.Context, key string) (bool, error) {
	return l.renew(ctx, key)
}

// renew extends key's claim by the TTL from now, if the lease holds it;
// a claim found taken over leaves the lease. The lease's lock is held
// across the store call, so that a renewal never takes back a claim
// release has just ended.
func (l *lease) renew(ctx context.Context, key string) (bool, error) {
	c := l.c
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.keys[key] {
		return false, nil
	}
	now := c.now()
	ok, err := c.store.Claim(ctx, key, c.holder, now, now.Add(c.ttl))
	if err != nil {
		return false, fmt.Errorf("renewing the claim %s: %w", key, err)
	}
	if !ok {
		c.log.Warn("a claim ended before its work was done, and another process took it over; its work is left to that process",
			"claim", key, "holder", c.holder)
		delete(l.keys, key)
		c.held.drop(key)
	}
	return ok, nil
}

// release ends key's claim, once its work is stored (or abandoned).
func (l *lease) release(ctx context.Context, key string) {
	l.mu.Lock()
	ok := l.keys[key]
	delete(l.keys, key)
	l.mu.Unlock()
	if !ok {
		return
	}
	c := l.c
	// A claim is released even when ctx has just ended; it would end by
	// itself, but only after its TTL.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := c.store.Release(rctx, key, c.holder); err != nil {
		c.log.Warn("releasing a claim failed; it ends by itself", "claim", key, "ttl", c.ttl, "error", err)
	}
	c.held.drop(key)
}

// close stops the renewals and releases the claims still held.
func (l *lease) close(ctx context.Context) {
	close(l.stop)
	<-l.done
	l.mu.Lock()
	keys := make([]string, 0, len(l.keys))
	for k := range l.keys {
		keys = append(keys, k)
	}
	l.mu.Unlock()
	for _, k := range keys {
		l.release(ctx, k)
	}
}

func (l *lease) renewLoop() {
	defer close(l.done)
	every := max(l.c.ttl/3, time.Millisecond)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		l.mu.Lock()
		keys := make([]string, 0, len(l.keys))
		for k := range l.keys {
			keys = append(keys, k)
		}
		l.mu.Unlock()
		for _, k := range keys {
			ctx, cancel := context.WithTimeout(context.Background(), every)
			if _, err := l.renew(ctx, k); err != nil {
				// The claim lasts until its end; the next tick tries again.
				l.c.log.Warn("renewing a claim failed", "claim", k, "error", err)
			}
			cancel()
		}
	}
}
