package strata

import (
	"context"
	"fmt"
	"sync"
	"unicode/utf8"
)

// Batch is a run of turns for one conversation, in order.
type Batch struct {
	Conversation string
	Turns        []Turn
}

// IngestResult says what an Ingest did.
type IngestResult struct {
	Conversation string `json:"conversation"`
	Received     int    `json:"received"`
	Added        int    `json:"added"`
	Skipped      int    `json:"skipped"` // already stored (same ext_id)
	Nodes        int    `json:"nodes"`   // nodes made by the rollup that followed
}

// ValidateConversationID reports whether id can name a conversation.
func ValidateConversationID(id string) error {
	switch {
	case id == "":
		return Errorf(EINVALID, "conversation id is empty")
	case len(id) > 256:
		return Errorf(EINVALID, "conversation id is %d bytes long, at most 256", len(id))
	case !utf8.ValidString(id):
		return Errorf(EINVALID, "conversation id is not valid UTF-8")
	}
	return nil
}

// Ingest appends b's turns to the end of the conversation (creating it with
// the configured policy if needed), then rolls up every span the new turns
// complete. It validates every turn before writing any: a bad turn fails the
// whole batch with an EINVALID error naming its index and field, and nothing
// of the batch is stored. Turns whose ext_id is already stored are skipped,
// so ingesting the same batch twice adds nothing. A turn without ext_id gets
// one derived from its content (DeriveExtID); a turn without time is stamped
// with the clock; token counts are always computed with the Tokenizer.
func (m *Memory) Ingest(ctx context.Context, b Batch) (IngestResult, error) {
	res := IngestResult{Conversation: b.Conversation, Received: len(b.Turns)}
	if err := ValidateConversationID(b.Conversation); err != nil {
		return res, err
	}
	turns := make([]Turn, len(b.Turns))
	copy(turns, b.Turns)
	occ := map[string]int{}
	for i := range turns {
		t := &turns[i]
		if err := t.Validate(); err != nil {
			return res, Errorf(EINVALID, "conversation %q turn %d: %s", b.Conversation, i+1, err.Error())
		}
		if t.ExtID == "" {
			base := DeriveExtID(t, 0)
			t.ExtID = DeriveExtID(t, occ[base])
			occ[base]++
		}
		if t.Time.IsZero() {
			t.Time = m.now().UTC()
		}
	}

	lock := m.convLock(b.Conversation)
	lock.Lock()
	defer lock.Unlock()

	conv, err := m.store.EnsureConversation(ctx, Conversation{
		Namespace: m.ns, ID: b.Conversation, Policy: m.policy.Name, Created: m.now().UTC(),
	})
	if err != nil {
		return res, fmt.Errorf("ensure conversation: %w", err)
	}
	policy, err := m.policyFor(conv)
	if err != nil {
		return res, err
	}

	// Drop turns already stored, and repeats within the batch.
	ids := make([]string, len(turns))
	for i := range turns {
		ids[i] = turns[i].ExtID
	}
	have, err := m.store.ExistingExtIDs(ctx, m.ns, b.Conversation, ids)
	if err != nil {
		return res, fmt.Errorf("look up ext ids: %w", err)
	}
	fresh := turns[:0]
	seen := make(map[string]bool, len(turns))
	for _, t := range turns {
		if have[t.ExtID] || seen[t.ExtID] {
			continue
		}
		seen[t.ExtID] = true
		fresh = append(fresh, t)
	}
	res.Skipped = len(turns) - len(fresh)
	if len(fresh) == 0 {
		// Nothing new, but an earlier ingest may have been killed between
		// its append and its rollup: finish that rollup now.
		n, err := m.rollup(ctx, b.Conversation, policy, nil)
		res.Nodes = n
		if err != nil {
			return res, fmt.Errorf("rollup after ingest: %w", err)
		}
		return res, nil
	}

	var prev *Turn
	last, err := m.store.Turns(ctx, TurnFilter{Namespace: m.ns, Conversation: b.Conversation, Newest: true, Limit: 1})
	if err != nil {
		return res, fmt.Errorf("read last turn: %w", err)
	}
	if len(last) == 1 {
		prev = &last[0]
	}
	for i := range fresh {
		t := &fresh[i]
		t.Session = m.sessionOf(prev, t)
		prev = t
	}
	m.countTokens(fresh)

	added, err := m.store.AppendTurns(ctx, m.ns, b.Conversation, fresh)
	if err != nil {
		return res, fmt.Errorf("append turns: %w", err)
	}
	res.Added = len(added)
	res.Skipped += len(fresh) - len(added)

	n, err := m.rollup(ctx, b.Conversation, policy, added)
	res.Nodes = n
	if err != nil {
		return res, fmt.Errorf("rollup after ingest: %w", err)
	}
	return res, nil
}

// sessionOf returns the session number of t, which follows prev.
func (m *Memory) sessionOf(prev, t *Turn) int {
	switch {
	case prev == nil:
		return 1
	case t.SessionLabel != "" || prev.SessionLabel != "":
		if t.SessionLabel == prev.SessionLabel {
			return prev.Session
		}
		return prev.Session + 1
	case t.Time.Sub(prev.Time) > m.gap:
		return prev.Session + 1
	}
	return prev.Session
}

// countTokens sets Tokens on every turn, in parallel.
func (m *Memory) countTokens(turns []Turn) {
	parallel(len(turns), m.workers, func(i int) {
		turns[i].Tokens = m.tok.Count(turns[i].Text())
	})
}

// parallel runs f(0..n-1) on up to workers goroutines.
func parallel(n, workers int, f func(i int)) {
	if n < 64 || workers <= 1 {
		for i := 0; i < n; i++ {
			f(i)
		}
		return
	}
	var wg sync.WaitGroup
	chunk := (n + workers - 1) / workers
	for lo := 0; lo < n; lo += chunk {
		hi := min(lo+chunk, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := lo; i < hi; i++ {
				f(i)
			}
		}()
	}
	wg.Wait()
}
