package strata

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// scope is what every part of a Memory shares: the store, the namespace
// read and written, the policies conversations are made with, the logger,
// the clock and the per-conversation locks. Each part holds a copy; the
// locks are shared by pointer.
type scope struct {
	store  Store
	ns     string
	policy Policy            // the policy of new conversations
	custom map[string]Policy // by name: the configuration's policies
	log    *slog.Logger
	now    func() time.Time
	locks  *convLocks
}

// convLocks are a Memory's per-conversation locks.
type convLocks struct {
	mu      sync.Mutex
	appends map[string]*sync.Mutex // one appender at a time
	rollups map[string]*sync.Mutex // one rollup at a time
}

func newConvLocks() *convLocks {
	return &convLocks{appends: map[string]*sync.Mutex{}, rollups: map[string]*sync.Mutex{}}
}

// convLock serializes appends to a conversation within this process, so
// that sessions are assigned against the true last turn.
func (s scope) convLock(conv string) *sync.Mutex { return s.locks.in(s.locks.appends, conv) }

// rollLock serializes rollups of a conversation within this process. It is
// separate from convLock so that a rollup can run while the next batch is
// appended (see Importer); neither is held while taking the other.
func (s scope) rollLock(conv string) *sync.Mutex { return s.locks.in(s.locks.rollups, conv) }

func (c *convLocks) in(locks map[string]*sync.Mutex, conv string) *sync.Mutex {
	c.mu.Lock()
	defer c.mu.Unlock()
	l, ok := locks[conv]
	if !ok {
		l = &sync.Mutex{}
		locks[conv] = l
	}
	return l
}

// policyFor returns the policy a conversation was created with.
func (s scope) policyFor(c Conversation) (Policy, error) {
	if c.Policy == "" {
		return s.policy, nil
	}
	p, err := s.policyNamed(c.Policy)
	if err != nil {
		return Policy{}, fmt.Errorf("conversation %q: %w", c.ID, err)
	}
	return p, nil
}

// policyNamed returns the policy of that name: one of the
// configuration's, or a preset.
func (s scope) policyNamed(name string) (Policy, error) {
	if p, ok := s.custom[name]; ok {
		return p, nil
	}
	return Preset(name)
}

// conversation reads conversation id of the namespace; an id no store
// can hold is not found, without asking the store.
func (s scope) conversation(ctx context.Context, id string) (Conversation, error) {
	if err := lookupID(s.ns, id); err != nil {
		return Conversation{}, err
	}
	return s.store.Conversation(ctx, s.ns, id)
}

// conversationsOf returns the conversation id, or every conversation of
// the namespace if id is "".
func (s scope) conversationsOf(ctx context.Context, id string) ([]Conversation, error) {
	if id == "" {
		return s.store.Conversations(ctx, s.ns)
	}
	c, err := s.conversation(ctx, id)
	if err != nil {
		return nil, err
	}
	return []Conversation{c}, nil
}

// policyOf returns the policy of a conversation.
func (s scope) policyOf(ctx context.Context, conversation string) (Policy, error) {
	c, err := s.conversation(ctx, conversation)
	if err != nil {
		return Policy{}, err
	}
	return s.policyFor(c)
}
