package strata

import (
	"context"
	"regexp"
	"strings"
	"time"
)

// This file turns the key facts of nodes into learnings (000's /learn):
// facts with provenance and a status a person can confirm or reject.
// Learnings are written off the ingest path, by Learn, which rollup
// --wait, the watch loop and `strata learnings` run; confirmed learnings
// are pinned in context packages. A new fact about the subject of an
// active learning supersedes it, keeping the history, rather than piling
// up beside it.

// subjectPatterns find what an attribute-style fact is about: "Caroline's
// job is ...", "Melanie lives in ...", "Jon works at ...", "The deadline
// is ...". The first group is who or what, the second the attribute.
var subjectPatterns = []*regexp.Regexp{
	regexp.MustCompile(`^([\p{L}][\p{L}\p{N} .'-]{0,40}?)'s ((?:favou?rite )?[\p{L}\p{N}-]+(?: [\p{L}\p{N}-]+)?) (?:is|are|was|were|has been|will be)\b`),
	regexp.MustCompile(`^([\p{L}][\p{L}\p{N}'-]*(?: [\p{L}][\p{L}\p{N}'-]*)?) (lives|lived|moved|relocated) (?:in|to)\b`),
	regexp.MustCompile(`^([\p{L}][\p{L}\p{N}'-]*(?: [\p{L}][\p{L}\p{N}'-]*)?) (works|worked|started working|is working) (?:at|for|as)\b`),
	regexp.MustCompile(`^the ([\p{L}\p{N}-]+(?: [\p{L}\p{N}-]+)?) (?:is|are|was|were|has been|will be)\b()`),
}

// leadIn matches what a fact may start with before its sentence: a day
// marker ("[8 May 2023] ") and a speaker label ("Caroline: ").
var leadIn = regexp.MustCompile(`^(?:\[[^\]]{1,40}\]\s*)?(?:[\p{L}][\p{L}\p{N} .'-]{0,30}:\s+)?`)

// FactSubject returns the key learnings of the same subject share: for an
// attribute-style fact, who or what it is about and the attribute
// ("caroline|job", "melanie|lives", "the|deadline"); otherwise the
// normalized fact itself, so that only a repeat of it matches.
func FactSubject(fact string) string {
	s := strings.TrimSpace(leadIn.ReplaceAllString(strings.TrimSpace(fact), ""))
	low := strings.ToLower(s)
	for i, re := range subjectPatterns {
		m := re.FindStringSubmatch(low)
		if m == nil {
			continue
		}
		who, attr := NormalizeLearningText(m[1]), NormalizeLearningText(m[2])
		switch {
		case i == 3:
			return "the|" + who
		case i == 1:
			attr = "lives"
		case i == 2:
			attr = "works"
		}
		if who != "" && attr != "" {
			return who + "|" + attr
		}
	}
	return NormalizeLearningText(low)
}

// LearnResult says what a Learn pass did.
type LearnResult struct {
	Nodes int `json:"nodes"` // level-1 nodes read
	Facts int `json:"facts"` // their facts, new or repeats of known ones
	// With a model: the calls made, and the spans left to the offline
	// rules because the model failed or gave no usable fact.
	Calls     int `json:"calls,omitempty"`
	Fallbacks int `json:"fallbacks,omitempty"`
	// Claimed counts the conversations left to another process that
	// holds their learning claim: it is reading them, or died doing so
	// and they are taken over once its claim ends.
	Claimed int `json:"claimed,omitempty"`
}

// learner reads the facts of closed spans into learnings, with the model
// (learnmodel.go) or by the offline rules (learnextract.go), and answers
// the reads and status changes of learnings.
type learner struct {
	scope
	claims *claims
	llm    LLMOptions
	model  *modelPass // the model calls
}

// Learn records the facts of the conversation's closed level-1 nodes that
// no pass has read yet as learnings with status auto (all conversations of
// the namespace if conversation is ""). It stops before a node whose model
// summary is pending, so that learnings come from the final facts. Each
// pass is idempotent: a fact it meets again is a repeat. A conversation
// with spans to read is claimed first (see ClaimStore), so that processes
// sharing a store read each span once and pay for one model call of it;
// one whose claim another process holds is left to it
// (LearnResult.Claimed).
func (m *Memory) Learn(ctx context.Context, conversation string) (LearnResult, error) {
	return m.learn.learn(ctx, conversation)
}

// learn is Memory.Learn.
func (lr *learner) learn(ctx context.Context, conversation string) (LearnResult, error) {
	var res LearnResult
	convs, err := lr.conversationsOf(ctx, conversation)
	if err != nil {
		return res, err
	}
	for _, c := range convs {
		if err := lr.learnConversation(ctx, c, &res); err != nil {
			return res, err
		}
	}
	return res, nil
}

func (lr *learner) learnConversation(ctx context.Context, c Conversation, res *LearnResult) error {
	loc, err := LoadTimeZone(c.TimeZone)
	if err != nil {
		return err
	}
	// Only a conversation with a closed span left to read is claimed.
	next, err := lr.store.Nodes(ctx, NodeFilter{Namespace: lr.ns, Conversation: c.ID, Level: 1, FromSeq: c.LearnedSeq + 1, Limit: 1})
	if err != nil || len(next) == 0 || next[0].Pending {
		return err
	}
	l := lr.claims.newLease()
	defer l.close(ctx)
	key := claimKey(claimLearn, lr.ns, c.ID)
	ok, err := l.take(ctx, key)
	if err != nil {
		return err
	}
	if !ok {
		res.Claimed++
		lr.log.Debug("learnings left to the process that holds their claim", "conversation", c.ID)
		return nil
	}
	// Read again under the claim: another process may have read some.
	c, err = lr.store.Conversation(ctx, lr.ns, c.ID)
	if ErrorCode(err) == ENOTFOUND {
		return nil // deleted meanwhile
	}
	if err != nil {
		return err
	}
	from := c.LearnedSeq + 1
	guard := &endpointGuard{down: make(chan struct{})}
	for {
		ns, err := lr.store.Nodes(ctx, NodeFilter{Namespace: lr.ns, Conversation: c.ID, Level: 1, FromSeq: from, Limit: 256})
		if err != nil || len(ns) == 0 {
			return err
		}
		var ls []Learning
		upTo := from - 1
		for _, n := range ns {
			if n.Pending {
				break
			}
			res.Nodes++
			got, err := lr.nodeLearnings(ctx, c, n, loc, guard, res)
			if err != nil {
				return err
			}
			for _, l := range got {
				l.Conversation, l.Node, l.Status = c.ID, n.ID, LearningAuto
				ls = append(ls, l)
			}
			upTo = n.LastSeq
		}
		// A claim that ended while the model read (this process stalled)
		// may have been taken over: the new holder stores these spans.
		if held, err := l.holds(ctx, key); err != nil || !held {
			return err
		}
		if len(ls) > 0 {
			if _, err := lr.store.AddLearnings(ctx, lr.ns, c.ID, ls); err != nil {
				return err
			}
			res.Facts += len(ls)
		}
		if upTo < from {
			return nil // a pending node first
		}
		if _, err := lr.store.UpdateConversation(ctx, lr.ns, c.ID, ConversationUpdate{LearnedSeq: &upTo}); err != nil {
			return err
		}
		if upTo != ns[len(ns)-1].LastSeq {
			return nil // stopped at a pending node
		}
		from = upTo + 1
	}
}

// nodeLearnings returns the facts of closed node n of c: the model's, with
// a model configured for learnings, else or when it fails the offline
// rules'. The model's calls are recorded and counted in res.
func (lr *learner) nodeLearnings(ctx context.Context, c Conversation, n Node, loc *time.Location, guard *endpointGuard, res *LearnResult) ([]Learning, error) {
	ts, err := lr.store.Turns(ctx, TurnFilter{Namespace: lr.ns, Conversation: c.ID, FromSeq: n.FirstSeq, ToSeq: n.LastSeq})
	if err != nil {
		return nil, err
	}
	var got []Learning
	if lr.llm.Completer != nil && lr.llm.Learnings {
		// The model first; the offline rules when it fails.
		var calls []Call
		var merr error
		got, calls, merr = lr.modelLearnings(ctx, n, ts, loc, guard)
		if len(calls) > 0 {
			if err := lr.store.RecordCalls(ctx, lr.ns, c.ID, calls); err != nil {
				return nil, err
			}
			res.Calls += len(calls)
		}
		if merr != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			got = nil
			res.Fallbacks++
		}
	}
	if got == nil {
		got = ExtractLearnings(ts, loc)
	}
	return got, nil
}

// Learnings lists the learnings that match f (its Namespace is this
// Memory's).
func (m *Memory) Learnings(ctx context.Context, f LearningFilter) ([]Learning, error) {
	return m.learn.learnings(ctx, f)
}

// learnings is Memory.Learnings.
func (lr *learner) learnings(ctx context.Context, f LearningFilter) ([]Learning, error) {
	f.Namespace = lr.ns
	if f.Conversation != "" {
		if err := lookupID(lr.ns, f.Conversation); err != nil {
			return nil, err
		}
	}
	if CheckText("subject", f.Subject) != nil {
		return nil, nil // no store holds a learning about it
	}
	return lr.store.Learnings(ctx, f)
}

// SetLearningStatus confirms, rejects or reopens (auto) a learning.
func (m *Memory) SetLearningStatus(ctx context.Context, id int64, status string) (Learning, error) {
	return m.learn.setLearningStatus(ctx, id, status)
}

// setLearningStatus is Memory.SetLearningStatus.
func (lr *learner) setLearningStatus(ctx context.Context, id int64, status string) (Learning, error) {
	return lr.store.SetLearningStatus(ctx, lr.ns, id, status)
}

// ExpandLearning returns learning id and the turns it came from, in
// order: its sources, or, for a learning that names none, the turns its
// node covers. A source turn whose content expired is left out.
func (m *Memory) ExpandLearning(ctx context.Context, id int64) (Learning, []Turn, error) {
	return m.learn.expandLearning(ctx, id)
}

// expandLearning is Memory.ExpandLearning.
func (lr *learner) expandLearning(ctx context.Context, id int64) (Learning, []Turn, error) {
	ls, err := lr.store.Learnings(ctx, LearningFilter{Namespace: lr.ns, IDs: []int64{id}})
	if err != nil {
		return Learning{}, nil, err
	}
	if len(ls) == 0 {
		return Learning{}, nil, Errorf(ENOTFOUND, "learning %d not found in namespace %q", id, lr.ns)
	}
	l := ls[0]
	f := TurnFilter{Namespace: lr.ns, Conversation: l.Conversation}
	if len(l.Sources) > 0 {
		for _, s := range l.Sources {
			f.Seqs = append(f.Seqs, s.Seq)
		}
	} else if l.FirstSeq > 0 {
		f.FromSeq, f.ToSeq = l.FirstSeq, l.LastSeq
	} else {
		return l, nil, nil
	}
	ts, err := lr.store.Turns(ctx, f)
	return l, ts, err
}
