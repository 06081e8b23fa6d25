// Package storecopy copies what one strata store holds into another (an
// SQLite file into PostgreSQL, or back) through the Store contract alone,
// and verifies the copy.
//
// A copy is resumable: every step is idempotent or all-or-nothing, so a
// copy cut short at any instant (a kill, a lost connection) is finished by
// running it again, and nothing is stored twice. Turns are appended in seq
// order, so each keeps its seq; expired turns are carried as the stubs
// their rows keep and expired again with their audit records; spans move
// to the tier they are in at the source, with the time they went cold.
//
// What a namespace holds beside its conversations is carried whether or
// not it holds any conversation (a namespace of the source is one that
// holds anything, see strata.ConversationStore.Namespaces): its bearer
// tokens, revoked ones revoked from the same time; its watch states (how
// far strata watch has read each file), so a watch against the
// destination goes on where the source's stopped; and its live-compaction
// states, those of conversations memory does not hold included.
//
// Before anything is written, the source is read through once and checked
// against strata's one definition of valid input: a source holding a
// record no store may keep (a NUL in a name, say, which an older SQLite
// store kept and PostgreSQL cannot) is refused with the records named,
// and nothing is copied (see check).
//
// What is not carried: the audit records of deleted conversations (the
// contract has no way to write them; Report.Deletions counts them), and
// the created and updated times of learnings (the destination stamps its
// own).
package storecopy

import (
	"context"
	"fmt"
	"slices"

	"github.com/strata-memory/strata"
)

// Options tunes a copy.
type Options struct {
	// Namespaces to copy; empty copies every namespace of the source.
	Namespaces []string
	// Batch is how many turns, nodes or vectors go in one write (2,000 if
	// zero).
	Batch int
	// Progress, if not nil, is called after each conversation is copied.
	Progress func(ConversationReport)
}

// Report says what a copy wrote.
type Report struct {
	Namespaces    int                  `json:"namespaces"`
	Conversations []ConversationReport `json:"conversations"`
	Tokens        int                  `json:"tokens"`      // bearer tokens added
	Watches       int                  `json:"watches"`     // strata watch file states saved
	Compactions   int                  `json:"compactions"` // live-compaction states saved
	Deletions     int                  `json:"deletions"`   // audit records of deleted conversations left behind
}

// ConversationReport says what a copy wrote for one conversation. Counts
// are of what was written by this run: a resumed copy reports the rest.
type ConversationReport struct {
	Namespace    string `json:"namespace"`
	Conversation string `json:"conversation"`
	Turns        int    `json:"turns"`
	Nodes        int    `json:"nodes"`
	Moves        int    `json:"moves"` // spans moved to their source tier
	Expired      int    `json:"expired"`
	Learnings    int    `json:"learnings"`
	Calls        int    `json:"calls"`
	Vectors      int    `json:"vectors"`
}

// Copy copies the namespaces of src into dst. A conversation dst already
// holds must be a copy of src's in progress (its turns a prefix of src's):
// anything else is an ECONFLICT error naming it, and nothing of it is
// changed.
func Copy(ctx context.Context, src, dst strata.Store, o Options) (Report, error) {
	if o.Batch <= 0 {
		o.Batch = 2000
	}
	var rep Report
	nss, err := namespaces(ctx, src, o.Namespaces)
	if err != nil {
		return rep, err
	}
	rep.Namespaces = len(nss)
	if err := check(ctx, src, nss, o.Batch); err != nil {
		return rep, err
	}
	for _, ns := range nss {
		convs, err := src.Conversations(ctx, ns)
		if err != nil {
			return rep, fmt.Errorf("copy: listing conversations of namespace %q: %w", ns, err)
		}
		for _, c := range convs {
			cr, err := copyConversation(ctx, src, dst, c, o.Batch)
			if err != nil {
				return rep, fmt.Errorf("copy: %s/%s: %w", ns, c.ID, err)
			}
			rep.Conversations = append(rep.Conversations, cr)
			if o.Progress != nil {
				o.Progress(cr)
			}
		}
		w, err := copyWatches(ctx, src, dst, ns)
		rep.Watches += w
		if err != nil {
			return rep, err
		}
		k, err := copyCompactions(ctx, src, dst, ns)
		rep.Compactions += k
		if err != nil {
			return rep, err
		}
		ds, err := src.Deletions(ctx, ns)
		if err != nil {
			return rep, fmt.Errorf("copy: deletions of namespace %q: %w", ns, err)
		}
		rep.Deletions += len(ds)
	}
	n, err := copyTokens(ctx, src, dst, nss)
	rep.Tokens = n
	return rep, err
}

// namespaces returns want, or every namespace of src: each that holds
// anything, a conversation or not.
func namespaces(ctx context.Context, src strata.Store, want []string) ([]string, error) {
	if len(want) > 0 {
		return want, nil
	}
	nss, err := src.Namespaces(ctx)
	if err != nil {
		return nil, fmt.Errorf("copy: listing namespaces: %w", err)
	}
	return nss, nil
}

func copyConversation(ctx context.Context, src, dst strata.Store, c strata.Conversation, batch int) (ConversationReport, error) {
	ns, id := c.Namespace, c.ID
	cr := ConversationReport{Namespace: ns, Conversation: id}
	d, err := dst.EnsureConversation(ctx, strata.Conversation{Namespace: ns, ID: id, Policy: c.Policy, TimeZone: c.TimeZone, Created: c.Created})
	if err != nil {
		return cr, err
	}
	if d.Policy != c.Policy {
		return cr, strata.Errorf(strata.ECONFLICT, "the destination holds this conversation with policy %q, the source with %q", d.Policy, c.Policy)
	}
	if d.Turns > c.Turns {
		return cr, strata.Errorf(strata.ECONFLICT, "the destination holds %d turns of this conversation, the source %d", d.Turns, c.Turns)
	}
	if d.Turns > 0 {
		if err := checkResume(ctx, src, dst, ns, id, d.Turns); err != nil {
			return cr, err
		}
	}
	if err := copyTurns(ctx, src, dst, ns, id, d.Turns+1, c.Turns, batch, &cr); err != nil {
		return cr, err
	}
	nodes, held, err := copyNodes(ctx, src, dst, ns, id, batch, &cr)
	if err != nil {
		return cr, err
	}

	// Tiers: each span to where it is at the source, cold ones with the
	// time they went cold, expired ones expired with their audit record.
	if err := copyTiers(ctx, src, dst, ns, id, nodes, held, &cr); err != nil {
		return cr, err
	}

	// Learnings and the call log: one write each, so all or nothing.
	if err := copyLearnings(ctx, src, dst, ns, id, &cr); err != nil {
		return cr, err
	}
	if err := copyCalls(ctx, src, dst, ns, id, &cr); err != nil {
		return cr, err
	}
	// The compaction state goes with the namespace's others (copyCompactions).
	if err := copyVectors(ctx, src, dst, ns, id, batch, &cr); err != nil {
		return cr, err
	}
	// Settings last: LearnedSeq says learning is done up to a turn, which
	// is only true once the learnings are in.
	imp := slices.Clone(c.Important)
	tz, learned := c.TimeZone, c.LearnedSeq
	if _, err := dst.UpdateConversation(ctx, ns, id, strata.ConversationUpdate{TimeZone: &tz, Important: &imp, LearnedSeq: &learned}); err != nil {
		return cr, err
	}
	return cr, nil
}

// checkResume checks, when the destination holds n turns of the
// conversation already, that they are the source's first ones: its first
// and its last have the source's ext_ids.
func checkResume(ctx context.Context, src, dst strata.Store, ns, id string, n int64) error {
	for _, seq := range []int64{1, n} {
		a, err := src.Turns(ctx, strata.TurnFilter{Namespace: ns, Conversation: id, Seqs: []int64{seq}, WithExpired: true})
		if err != nil {
			return err
		}
		b, err := dst.Turns(ctx, strata.TurnFilter{Namespace: ns, Conversation: id, Seqs: []int64{seq}, WithExpired: true})
		if err != nil {
			return err
		}
		if len(a) != 1 || len(b) != 1 || a[0].ExtID != b[0].ExtID {
			return strata.Errorf(strata.ECONFLICT, "the destination's turn %d is not the source's: it is not a copy of this conversation", seq)
		}
	}
	return nil
}

// copyTurns copies turns first to last, in seq order, batch at a time.
func copyTurns(ctx context.Context, src, dst strata.Store, ns, id string, first, last int64, batch int, cr *ConversationReport) error {
	for from := first; from <= last; {
		ts, err := src.Turns(ctx, strata.TurnFilter{Namespace: ns, Conversation: id, FromSeq: from, Limit: batch, WithExpired: true})
		if err != nil {
			return err
		}
		if len(ts) == 0 {
			break
		}
		for i, t := range ts {
			if t.Seq != from+int64(i) {
				return fmt.Errorf("the source has no turn %d (its turns jump to %d)", from+int64(i), t.Seq)
			}
		}
		added, err := dst.AppendTurns(ctx, ns, id, ts)
		if err != nil {
			return err
		}
		if len(added) != len(ts) || added[0].Seq != ts[0].Seq {
			return strata.Errorf(strata.ECONFLICT, "the destination took turns %d-%d as %d turns: it holds some of their ext_ids under other seqs", ts[0].Seq, ts[len(ts)-1].Seq, len(added))
		}
		cr.Turns += len(added)
		from = ts[len(ts)-1].Seq + 1
	}
	return nil
}

// copyNodes puts the nodes the destination lacks or holds otherwise, batch
// at a time; putting a node again replaces it and leaves its tier alone.
// It returns the source's nodes and those the destination held, by id.
func copyNodes(ctx context.Context, src, dst strata.Store, ns, id string, batch int, cr *ConversationReport) ([]strata.Node, map[string]strata.Node, error) {
	nodes, err := src.Nodes(ctx, strata.NodeFilter{Namespace: ns, Conversation: id})
	if err != nil {
		return nil, nil, err
	}
	have, err := dst.Nodes(ctx, strata.NodeFilter{Namespace: ns, Conversation: id})
	if err != nil {
		return nil, nil, err
	}
	held := make(map[string]strata.Node, len(have))
	for _, n := range have {
		held[n.ID] = n
	}
	var put []strata.Node
	for _, n := range nodes {
		if h, ok := held[n.ID]; !ok || !sameNode(h, n) {
			put = append(put, n)
		}
	}
	for len(put) > 0 {
		k := min(batch, len(put))
		if err := dst.PutNodes(ctx, ns, id, put[:k]); err != nil {
			return nil, nil, err
		}
		cr.Nodes += k
		put = put[k:]
	}
	return nodes, held, nil
}

// sameNode reports whether a node as stored in the destination is the
// source's, tiers aside.
func sameNode(a, b strata.Node) bool {
	return a.Level == b.Level && a.FirstSeq == b.FirstSeq && a.LastSeq == b.LastSeq && a.Summary == b.Summary &&
		a.Status == b.Status && a.Pending == b.Pending && a.Method == b.Method && a.Model == b.Model &&
		a.Tokens == b.Tokens && a.Key == b.Key && slices.Equal(a.Facts, b.Facts)
}

func copyTiers(ctx context.Context, src, dst strata.Store, ns, id string, nodes []strata.Node, held map[string]strata.Node, cr *ConversationReport) error {
	var expiries map[string]strata.Expiry
	for _, n := range nodes {
		if n.Level != 1 || n.Tier == "" || n.Tier == strata.TierHot {
			continue
		}
		now := held[n.ID].Tier
		if now == n.Tier {
			continue
		}
		switch n.Tier {
		case strata.TierWarm:
			if now != "" && now != strata.TierHot {
				return strata.Errorf(strata.ECONFLICT, "node %s is %s at the destination and warm at the source", n.ID, now)
			}
			if _, err := dst.Demote(ctx, ns, id, []string{n.ID}, strata.TierWarm, n.ColdAt); err != nil {
				return err
			}
			cr.Moves++
		case strata.TierCold, strata.TierExpired:
			if now != strata.TierCold {
				if n.ColdAt.IsZero() {
					return fmt.Errorf("node %s is %s at the source with no time it went cold", n.ID, n.Tier)
				}
				if _, err := dst.Demote(ctx, ns, id, []string{n.ID}, strata.TierCold, n.ColdAt); err != nil {
					return err
				}
				cr.Moves++
			}
			if n.Tier != strata.TierExpired {
				continue
			}
			if expiries == nil {
				es, err := src.Expiries(ctx, ns, id)
				if err != nil {
					return err
				}
				expiries = map[string]strata.Expiry{}
				for _, e := range es {
					expiries[e.NodeID] = e
				}
			}
			e, ok := expiries[n.ID]
			if !ok {
				return fmt.Errorf("node %s expired at the source without an audit record", n.ID)
			}
			if _, err := dst.Expire(ctx, ns, id, []string{n.ID}, e.Rule, e.At, false); err != nil {
				return err
			}
			cr.Expired++
		default:
			return fmt.Errorf("node %s is in tier %q, which this copy does not know", n.ID, n.Tier)
		}
	}
	return nil
}

func copyLearnings(ctx context.Context, src, dst strata.Store, ns, id string, cr *ConversationReport) error {
	ls, err := src.Learnings(ctx, strata.LearningFilter{Namespace: ns, Conversation: id})
	if err != nil {
		return err
	}
	if len(ls) == 0 {
		return nil
	}
	have, err := dst.Learnings(ctx, strata.LearningFilter{Namespace: ns, Conversation: id})
	if err != nil {
		return err
	}
	switch {
	case len(have) == len(ls):
		return nil
	case len(have) != 0:
		return strata.Errorf(strata.ECONFLICT, "the destination holds %d learnings of this conversation, the source %d", len(have), len(ls))
	}
	// Added oldest first in one call, a superseded learning as the auto
	// one it was: the one that superseded it at the source does so again.
	slices.SortFunc(ls, func(a, b strata.Learning) int { return int(a.ID - b.ID) })
	in := make([]strata.Learning, len(ls))
	for i, l := range ls {
		l.ID, l.SupersededBy = 0, 0
		if l.Status == strata.LearningSuperseded {
			l.Status = strata.LearningAuto
		}
		in[i] = l
	}
	out, err := dst.AddLearnings(ctx, ns, id, in)
	if err != nil {
		return err
	}
	cr.Learnings = len(out)
	return nil
}

func copyCalls(ctx context.Context, src, dst strata.Store, ns, id string, cr *ConversationReport) error {
	calls, err := src.Calls(ctx, ns, id)
	if err != nil || len(calls) == 0 {
		return err
	}
	have, err := dst.Calls(ctx, ns, id)
	if err != nil {
		return err
	}
	switch {
	case len(have) == len(calls):
		return nil
	case len(have) != 0:
		return strata.Errorf(strata.ECONFLICT, "the destination logs %d model calls of this conversation, the source %d", len(have), len(calls))
	}
	if err := dst.RecordCalls(ctx, ns, id, calls); err != nil {
		return err
	}
	cr.Calls = len(calls)
	return nil
}

func copyVectors(ctx context.Context, src, dst strata.Store, ns, id string, batch int, cr *ConversationReport) error {
	counts, err := src.VectorCounts(ctx, ns, id)
	if err != nil {
		return err
	}
	for _, vc := range counts {
		for _, sc := range vc.Spaces {
			var buf []strata.Embedding
			flush := func() error {
				if len(buf) == 0 {
					return nil
				}
				if err := dst.PutEmbeddings(ctx, ns, id, sc.Space, buf); err != nil {
					return err
				}
				cr.Vectors += len(buf)
				buf = buf[:0]
				return nil
			}
			err := src.Vectors(ctx, strata.VectorFilter{Namespace: ns, Conversation: id, Space: sc.Space}, func(v strata.Vector) error {
				if v.Dim != sc.Space.Dim {
					return nil // another dimension of the same model: its own space
				}
				buf = append(buf, strata.Embedding{EmbedRef: v.EmbedRef, Vector: slices.Clone(v.Values)})
				if len(buf) >= batch {
					return flush()
				}
				return nil
			})
			if err != nil {
				return err
			}
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

// copyWatches saves at dst each watch state of the namespace that dst
// does not hold as it is: how far strata watch has read each file, so
// that a watch against dst goes on where the source's stopped.
func copyWatches(ctx context.Context, src, dst strata.Store, ns string) (int, error) {
	from, err := src.WatchStates(ctx, ns)
	if err != nil {
		return 0, fmt.Errorf("copy: watch states of namespace %q: %w", ns, err)
	}
	to, err := dst.WatchStates(ctx, ns)
	if err != nil {
		return 0, fmt.Errorf("copy: watch states of namespace %q: %w", ns, err)
	}
	held := map[string]strata.WatchState{}
	for _, f := range to {
		held[f.Path] = f.WatchState
	}
	n := 0
	for _, f := range from {
		if h, ok := held[f.Path]; ok && sameWatch(h, f.WatchState) {
			continue
		}
		if err := dst.SaveWatchState(ctx, ns, f.Path, f.WatchState); err != nil {
			return n, fmt.Errorf("copy: watch state of %q: %w", f.Path, err)
		}
		n++
	}
	return n, nil
}

func sameWatch(a, b strata.WatchState) bool {
	return a.Offset == b.Offset && a.Lines == b.Lines && a.HeadLen == b.HeadLen && a.Head == b.Head && a.Updated.Equal(b.Updated)
}

// copyCompactions saves at dst each live-compaction state of the
// namespace that dst does not hold as it is, whether or not memory holds
// its conversation: compaction can run without appending to memory.
func copyCompactions(ctx context.Context, src, dst strata.Store, ns string) (int, error) {
	from, err := src.CompactionStates(ctx, ns)
	if err != nil {
		return 0, fmt.Errorf("copy: compaction states of namespace %q: %w", ns, err)
	}
	to, err := dst.CompactionStates(ctx, ns)
	if err != nil {
		return 0, fmt.Errorf("copy: compaction states of namespace %q: %w", ns, err)
	}
	held := map[string]strata.CompactionState{}
	for _, c := range to {
		held[c.Conversation] = c.CompactionState
	}
	n := 0
	for _, c := range from {
		if h, ok := held[c.Conversation]; ok && sameCompaction(h, c.CompactionState) {
			continue
		}
		if err := dst.SaveCompactionState(ctx, ns, c.Conversation, c.CompactionState); err != nil {
			return n, fmt.Errorf("copy: compaction state of %s/%s: %w", ns, c.Conversation, err)
		}
		n++
	}
	return n, nil
}

func sameCompaction(a, b strata.CompactionState) bool {
	return a.Checkpoint == b.Checkpoint && a.TurnCount == b.TurnCount && a.CompactionCount == b.CompactionCount && a.Updated.Equal(b.Updated)
}

// copyTokens adds the bearer tokens of nss that dst lacks, when both
// stores keep tokens. A token dst holds under the same id must be the
// source's (same secret, namespace, label and creation): anything else is
// an ECONFLICT error naming it, and nothing of it is changed.
func copyTokens(ctx context.Context, src, dst strata.Store, nss []string) (int, error) {
	from, ok1 := src.(strata.TokenStore)
	to, ok2 := dst.(strata.TokenStore)
	if !ok1 || !ok2 {
		return 0, nil
	}
	have, err := to.Tokens(ctx, "")
	if err != nil {
		return 0, fmt.Errorf("copy: tokens: %w", err)
	}
	held := map[string]strata.Token{}
	for _, t := range have {
		held[t.ID] = t
	}
	n := 0
	for _, ns := range nss {
		ts, err := from.Tokens(ctx, ns)
		if err != nil {
			return n, fmt.Errorf("copy: tokens: %w", err)
		}
		for _, t := range ts {
			if h, ok := held[t.ID]; !ok {
				if err := to.PutToken(ctx, t); err != nil {
					return n, fmt.Errorf("copy: token %s: %w", t.ID, err)
				}
				n++
			} else if d := tokenDiff(t, h); d != "" {
				return n, strata.Errorf(strata.ECONFLICT, "copy: token %s: the destination holds another token under this id (%s)", t.ID, d)
			}
			// A revoked token stays revoked, from the same time.
			if !t.Revoked.IsZero() {
				if _, err := to.RevokeToken(ctx, t.ID, t.Revoked); err != nil {
					return n, fmt.Errorf("copy: revoking token %s: %w", t.ID, err)
				}
			}
		}
	}
	return n, nil
}
