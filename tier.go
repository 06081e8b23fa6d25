package strata

import (
	"context"
	"fmt"
	"time"
)

// Tier is where the raw content of a level-1 span lives.
type Tier string

// The tiers, from the cheapest to read to the cheapest to keep.
const (
	// TierHot: turn rows with their whole content, indexed for search.
	TierHot Tier = "hot"
	// TierWarm: the span's turns packed into one CTF block stored with its
	// node; still indexed for search.
	TierWarm Tier = "warm"
	// TierCold: the turns live in archive segments; the store keeps the
	// summary, the facts and a reference. Search over the span uses its
	// summary.
	TierCold Tier = "cold"
	// TierExpired: the raw content was deleted by a retention rule; the
	// summary, the pinned turns and an audit record remain.
	TierExpired Tier = "expired"
)

// Tiers lists the tiers in order.
var Tiers = []Tier{TierHot, TierWarm, TierCold, TierExpired}

// rank orders tiers: a span only ever moves to a higher rank.
func (t Tier) rank() int {
	switch t {
	case TierHot, "":
		return 0
	case TierWarm:
		return 1
	case TierCold:
		return 2
	case TierExpired:
		return 3
	}
	return -1
}

// ParseTier returns the tier named s, or an EINVALID error.
func ParseTier(s string) (Tier, error) {
	t := Tier(s)
	if t.rank() < 0 || s == "" {
		return "", Errorf(EINVALID, "unknown tier %q (want hot, warm, cold or expired)", s)
	}
	return t, nil
}

// TierPolicy says when level-1 spans move from hot to warm to cold, and
// when cold content expires. Windows count back from the newest turn of
// the conversation; a closed span moves once it lies wholly outside a
// window. Turns not yet under a level-1 node always stay hot.
type TierPolicy struct {
	// Off disables tiering: every span stays hot.
	Off bool `json:"off,omitempty"`
	// HotChunks is how many of the newest closed level-1 spans stay hot.
	// Under a session or calendar level 1, a newest span closed by the
	// clock alone (no turn after it yet) does not count: it may reopen.
	HotChunks int `json:"hot_chunks"`
	// HotMaxTokens, when positive, replaces HotChunks: spans stay hot while
	// the tokens from their first turn to the newest turn are at most this.
	HotMaxTokens int `json:"hot_max_tokens,omitempty"`
	// The warm window: a warm span goes cold once more than WarmMaxTurns
	// turns follow it, once its newest turn is older than WarmMaxAge (by
	// the clock), or once more than WarmMaxTokens tokens follow it,
	// whichever happens first. All zero: spans never go cold.
	WarmMaxTurns  int           `json:"warm_max_turns,omitempty"`
	WarmMaxAge    time.Duration `json:"warm_max_age,omitempty"`
	WarmMaxTokens int           `json:"warm_max_tokens,omitempty"`
	// ColdRetentionDays, when positive, deletes the archived raw content of
	// spans that went cold more than that many days ago (by the clock).
	// Age counts from the archiving, not from the turns' times, so an
	// imported history, however old, is kept that long after it went
	// cold. Zero keeps it forever. Pinned turns are never deleted.
	ColdRetentionDays int `json:"cold_retention_days,omitempty"`
}

// DefaultTierPolicy keeps the newest two closed micro spans hot, packs
// older ones into warm CTF blocks, archives spans followed by more than
// 1,000 turns, and never expires anything.
func DefaultTierPolicy() TierPolicy {
	return TierPolicy{HotChunks: 2, WarmMaxTurns: 1000}
}

// Validate returns an EINVALID error naming the first bad field.
func (p TierPolicy) Validate() error {
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"hot_chunks", int64(p.HotChunks)}, {"hot_max_tokens", int64(p.HotMaxTokens)},
		{"warm_max_turns", int64(p.WarmMaxTurns)}, {"warm_max_age", int64(p.WarmMaxAge)},
		{"warm_max_tokens", int64(p.WarmMaxTokens)}, {"cold_retention_days", int64(p.ColdRetentionDays)},
	} {
		if f.v < 0 {
			return Errorf(EINVALID, "tiers: %s is negative", f.name)
		}
	}
	if p.ColdRetentionDays > 0 && p.WarmMaxTurns == 0 && p.WarmMaxAge == 0 && p.WarmMaxTokens == 0 {
		return Errorf(EINVALID, "tiers: cold_retention_days is set but nothing ever goes cold (set warm_max_turns, warm_max_age or warm_max_tokens)")
	}
	return nil
}

// Move is one span's change of tier.
type Move struct {
	NodeID   string `json:"node_id"`
	FirstSeq int64  `json:"first_seq"`
	LastSeq  int64  `json:"last_seq"`
	From     Tier   `json:"from"`
	To       Tier   `json:"to"`
	Turns    int64  `json:"turns"`
	Bytes    int64  `json:"bytes"` // content bytes moved (or deleted, for expiry)
}

// TierResult says what a tiering pass did to one conversation.
type TierResult struct {
	Conversation string   `json:"conversation"`
	Moves        []Move   `json:"moves"`
	Expired      []Expiry `json:"expired"`
	DryRun       bool     `json:"dry_run,omitempty"`
}

// Expiry is the audit record of a retention deletion: what went, when, by
// which rule. Pinned turns of the span are kept and not counted.
type Expiry struct {
	Conversation string `json:"conversation"`
	NodeID       string `json:"node_id"`
	FirstSeq     int64  `json:"first_seq"`
	LastSeq      int64  `json:"last_seq"`
	Turns        int64  `json:"turns"` // raw turns deleted
	Bytes        int64  `json:"bytes"` // content bytes deleted
	// Segments are the periods of the archive segments the turns were
	// removed from: UTC months ("YYYY-MM"), or UTC days ("YYYY-MM-DD")
	// for a span made cold when segments were days.
	Segments []string  `json:"segments,omitempty"`
	Rule     string    `json:"rule"`
	At       time.Time `json:"at"` // when the content was deleted
	// ColdAt is when the span went cold: the age the rule measures counts
	// from it. Zero for records written before strata kept it.
	ColdAt time.Time `json:"cold_at,omitzero"`
	// NewestTurn is the time of the span's newest turn.
	NewestTurn time.Time `json:"newest_turn,omitzero"`
}

// Tier applies the tier policy to a conversation: spans outside the hot
// window become warm, spans outside the warm window become cold, and cold
// spans past the retention age expire. Every move writes and verifies the
// new copy before it drops the old one, so a kill at any point loses
// nothing; running Tier again finishes the work. The pass takes the
// conversation's tier claim (see ClaimStore) if it is free, so that
// background passes leave the conversation alone meanwhile; if another
// process holds it, Tier runs anyway: the store serializes the moves of a
// span, and the second finds it moved.
func (m *Memory) Tier(ctx context.Context, conversation string) (TierResult, error) {
	return m.tiers.locked(ctx, conversation, false)
}

// TierPlan reports what Tier would do, changing nothing.
func (m *Memory) TierPlan(ctx context.Context, conversation string) (TierResult, error) {
	return m.tiers.locked(ctx, conversation, true)
}

// tiering moves a conversation's level-1 spans from hot to warm to cold
// under a TierPolicy, and expires cold content past its retention.
type tiering struct {
	scope
	claims *claims
	rules  TierPolicy
	llm    LLMOptions // a move to warm may hand the span to the model pass
}

// locked runs tier under the conversation's roll lock: what Tier and
// TierPlan do.
func (t *tiering) locked(ctx context.Context, conversation string, dryRun bool) (TierResult, error) {
	lock := t.rollLock(conversation)
	lock.Lock()
	defer lock.Unlock()
	return t.tier(ctx, conversation, dryRun, false)
}

// Retention reports (dryRun) or performs the expiry of cold spans past the
// retention age, counted from when each went cold, without moving
// anything else. Like Tier, it takes the conversation's tier claim if it
// is free, and runs either way.
func (m *Memory) Retention(ctx context.Context, conversation string, dryRun bool) (TierResult, error) {
	return m.tiers.retention(ctx, conversation, dryRun)
}

func (t *tiering) retention(ctx context.Context, conversation string, dryRun bool) (TierResult, error) {
	lock := t.rollLock(conversation)
	lock.Lock()
	defer lock.Unlock()
	res := TierResult{Conversation: conversation, Moves: []Move{}, Expired: []Expiry{}, DryRun: dryRun}
	plan, err := t.planTiers(ctx, conversation)
	if err != nil {
		return res, err
	}
	if !dryRun {
		plan.warm, plan.cold = nil, nil
		var l *lease
		if plan, l, err = t.claimTiers(ctx, conversation, plan, false); err != nil {
			return res, err
		}
		if l != nil {
			defer l.close(ctx)
		}
	}
	return t.expire(ctx, res, plan.expire, dryRun)
}

// tierPlan is what a policy asks of a conversation's level-1 spans.
type tierPlan struct {
	warm, cold, expire []Node
}

// planTiers reads the conversation's unsettled level-1 spans (hot and
// warm, newest first) and decides where each belongs; with a retention
// rule it also lists the spans already cold that are past it (a span this
// pass archives goes cold now, so it is never past the rule yet). Windows are measured from the
// newest turn over the spans read, so tokens that follow a span are the
// open turns' plus those of the newer unsettled spans (exact while spans
// settle oldest first, as they do unless the policy changes).
func (t *tiering) planTiers(ctx context.Context, conversation string) (tierPlan, error) {
	var plan tierPlan
	p := t.rules
	if p.Off {
		return plan, nil
	}
	conv, err := t.conversation(ctx, conversation)
	if err != nil {
		return plan, err
	}
	nodes, err := t.store.Nodes(ctx, NodeFilter{Namespace: t.ns, Conversation: conversation, Level: 1,
		Tiers: []Tier{TierHot, TierWarm}, Newest: true})
	if err != nil {
		return plan, err
	}
	var after int64 // tokens that follow the span being looked at
	if len(nodes) > 0 && nodes[0].LastSeq < conv.Turns {
		if after, err = t.tokensFrom(ctx, conversation, nodes[0].LastSeq+1); err != nil {
			return plan, err
		}
	}
	// A newest span of a session or calendar level-1 that no turn follows
	// yet was closed by the clock alone, and a late turn of its session or
	// period would reopen it (group.go): it does not push an older span
	// out of the hot chunks until a turn follows it. Moving that older
	// span now would leave it cold where one import of the same turns,
	// with the span reopened, keeps it hot. Turns after the newest span
	// count the same way: another process may have appended them and not
	// rolled them up yet, and they may close into such a span. A move is
	// never undone, so the pass keeps one span more hot than the final
	// state may need (the next pass moves it) rather than one less.
	shift := 0
	if len(nodes) > 0 {
		if pol, err := t.policyFor(conv); err == nil && len(pol.Levels) > 0 && pol.Levels[0].Kind != KindCount {
			shift = 1
		}
	}
	now := t.now()
	for i, n := range nodes { // newest first
		span := after + int64(n.SourceTokens) // from the span's first turn to the end
		hot := i < p.HotChunks
		if i > 0 {
			hot = i-shift < p.HotChunks
		}
		if p.HotMaxTokens > 0 {
			hot = span <= int64(p.HotMaxTokens)
		}
		cold := p.WarmMaxTurns > 0 && conv.Turns-n.LastSeq > int64(p.WarmMaxTurns) ||
			p.WarmMaxTokens > 0 && after > int64(p.WarmMaxTokens) ||
			p.WarmMaxAge > 0 && !n.End.IsZero() && now.Sub(n.End) > p.WarmMaxAge
		after = span
		switch {
		case hot:
		case cold:
			plan.cold = append(plan.cold, n)
		case n.Tier.rank() < TierWarm.rank():
			plan.warm = append(plan.warm, n)
		}
	}
	if p.ColdRetentionDays > 0 {
		if plan.expire, err = t.pastRetentionIn(ctx, conversation, now); err != nil {
			return plan, err
		}
	}
	// Oldest first: a kill part-way leaves the oldest spans moved.
	reverse(plan.warm)
	reverse(plan.cold)
	reverse(plan.expire)
	return plan, nil
}

// tokensFrom sums the tokens of the conversation's turns from seq from.
func (t *tiering) tokensFrom(ctx context.Context, conversation string, from int64) (int64, error) {
	open, err := t.store.Turns(ctx, TurnFilter{Namespace: t.ns, Conversation: conversation, FromSeq: from})
	if err != nil {
		return 0, err
	}
	var n int64
	for _, turn := range open {
		n += int64(turn.Tokens)
	}
	return n, nil
}

// pastRetentionIn returns the conversation's cold level-1 spans past the
// retention rule at now, newest first.
func (t *tiering) pastRetentionIn(ctx context.Context, conversation string, now time.Time) ([]Node, error) {
	cold, err := t.store.Nodes(ctx, NodeFilter{Namespace: t.ns, Conversation: conversation, Level: 1,
		Tiers: []Tier{TierCold}, Newest: true})
	if err != nil {
		return nil, err
	}
	var out []Node
	for _, n := range cold {
		if t.pastRetention(n, now) {
			out = append(out, n)
		}
	}
	return out, nil
}

// pastRetention reports whether a cold span went cold longer ago than the
// retention age. A span with no recorded time is kept.
func (t *tiering) pastRetention(n Node, now time.Time) bool {
	days := t.rules.ColdRetentionDays
	return days > 0 && !n.ColdAt.IsZero() && now.Sub(n.ColdAt) > time.Duration(days)*24*time.Hour
}

func reverse(ns []Node) {
	for i, j := 0, len(ns)-1; i < j; i, j = i+1, j-1 {
		ns[i], ns[j] = ns[j], ns[i]
	}
}

// tierBatch is how many spans one store call moves: each call is one
// transaction (and, for cold moves, one rewrite per archive segment).
const tierBatch = 256

// errTiersClaimed is the error of a background tier pass over a
// conversation whose tiers another process is moving.
var errTiersClaimed = Errorf(ECONFLICT, "another process is moving its spans between tiers (it holds the claim)")

// empty reports whether the plan has nothing to do.
func (p tierPlan) empty() bool { return len(p.warm)+len(p.cold)+len(p.expire) == 0 }

// claimTiers claims the conversation's tier pass when plan has work, and
// plans again under the claim (another process may have just done it).
// It returns the plan and the lease to close (nil when there is no work
// or no claim). When another process holds the claim, a background pass
// (leave) gets errTiersClaimed; an explicit one goes on without the
// claim: the store serializes the moves of a span, and the second finds
// it moved, so a claim left by a killed process never blocks `strata
// tier`.
func (t *tiering) claimTiers(ctx context.Context, conversation string, plan tierPlan, leave bool) (tierPlan, *lease, error) {
	if plan.empty() {
		return plan, nil, nil
	}
	l := t.claims.newLease()
	ok, err := l.take(ctx, claimKey(claimTiers, t.ns, conversation))
	if err != nil || !ok {
		l.close(ctx)
		if err == nil && leave {
			err = fmt.Errorf("conversation %q: %w", conversation, errTiersClaimed)
		}
		return plan, nil, err
	}
	plan, err = t.planTiers(ctx, conversation)
	if err != nil {
		l.close(ctx)
		return plan, nil, err
	}
	return plan, l, nil
}

// tier runs a tiering pass; the caller holds the conversation's roll lock.
// The pass is claimed (see ClaimStore) when it has spans to move or
// expire; with leave (the background passes), errTiersClaimed if another
// process holds the claim.
func (t *tiering) tier(ctx context.Context, conversation string, dryRun, leave bool) (TierResult, error) {
	res := TierResult{Conversation: conversation, Moves: []Move{}, Expired: []Expiry{}, DryRun: dryRun}
	plan, err := t.planTiers(ctx, conversation)
	if err != nil {
		return res, err
	}
	if !dryRun {
		var l *lease
		if plan, l, err = t.claimTiers(ctx, conversation, plan, leave); err != nil {
			return res, err
		}
		if l != nil {
			defer l.close(ctx)
		}
	}
	now := t.now()
	for _, step := range []struct {
		to    Tier
		nodes []Node
	}{{TierWarm, plan.warm}, {TierCold, plan.cold}} {
		for len(step.nodes) > 0 {
			n := min(len(step.nodes), tierBatch)
			ids := make([]string, n)
			for i := range ids {
				ids[i] = step.nodes[i].ID
			}
			if dryRun {
				for _, x := range step.nodes[:n] {
					res.Moves = append(res.Moves, Move{NodeID: x.ID, FirstSeq: x.FirstSeq, LastSeq: x.LastSeq,
						From: x.tier(), To: step.to, Turns: x.Turns()})
				}
				step.nodes = step.nodes[n:]
				continue
			}
			step.nodes = step.nodes[n:]
			moves, err := t.store.Demote(ctx, t.ns, conversation, ids, step.to, now)
			res.Moves = append(res.Moves, moves...)
			if err != nil {
				return res, fmt.Errorf("moving spans of %q to %s: %w", conversation, step.to, err)
			}
			if err := t.deferredPending(ctx, conversation, moves); err != nil {
				return res, err
			}
		}
	}
	return t.expire(ctx, res, plan.expire, dryRun)
}

// expire deletes (or, dry, reports) the raw content of spans past
// retention.
func (t *tiering) expire(ctx context.Context, res TierResult, nodes []Node, dryRun bool) (TierResult, error) {
	rule := fmt.Sprintf("cold_retention_days=%d", t.rules.ColdRetentionDays)
	now := t.now().UTC()
	for len(nodes) > 0 {
		n := min(len(nodes), tierBatch)
		ids := make([]string, n)
		for i, x := range nodes[:n] {
			ids[i] = x.ID
		}
		nodes = nodes[n:]
		ex, err := t.store.Expire(ctx, t.ns, res.Conversation, ids, rule, now, dryRun)
		res.Expired = append(res.Expired, ex...)
		if err != nil {
			return res, fmt.Errorf("expiring spans of %q: %w", res.Conversation, err)
		}
	}
	return res, nil
}

// tier is the node's tier, hot when unset.
func (n *Node) tier() Tier {
	if n.Tier == "" {
		return TierHot
	}
	return n.Tier
}

// deferredPending marks pending the level-1 nodes whose spans just left the
// hot tier, when their model summaries are deferred until then (000's
// defer_summarization).
func (t *tiering) deferredPending(ctx context.Context, conversation string, moves []Move) error {
	if !t.llm.Defer || t.llm.Completer == nil {
		return nil
	}
	p, err := t.policyOf(ctx, conversation)
	if err != nil || !t.llm.wantsModel(p.Levels[0]) {
		return err
	}
	var ids []string
	for _, mv := range moves {
		if mv.From == TierHot {
			ids = append(ids, mv.NodeID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	ns, err := t.store.Nodes(ctx, NodeFilter{Namespace: t.ns, Conversation: conversation, IDs: ids})
	if err != nil {
		return err
	}
	var due []Node
	for _, n := range ns {
		if n.Method != MethodLLM && !n.Pending {
			n.Pending = true
			due = append(due, n)
		}
	}
	if len(due) == 0 {
		return nil
	}
	return t.store.PutNodes(ctx, t.ns, conversation, due)
}
