package strata

import (
	"strings"
	"time"
)

// This file holds the rules of learnings that every Store follows, so that
// a store only reads and writes rows: which learnings AddLearnings may add
// (CheckLearnings: a non-empty subject and text, a known status, a When
// that is a date or a range of dates, sources with a seq), which of them repeat or supersede others
// (PlanLearnings, carried out by LearningPlan.Apply), and how
// SetLearningStatus changes a learning (ChangeLearningStatus).

// CheckLearnings returns an EINVALID error naming the first learning of ls
// that AddLearnings cannot add to conversation: one that belongs to
// another conversation, or has an empty subject or text (blank, or only
// final punctuation), or a status other than auto, confirmed or rejected
// (empty is auto).
func CheckLearnings(conversation string, ls []Learning) error {
	for i := range ls {
		l := &ls[i]
		if l.Conversation != "" && l.Conversation != conversation {
			return Errorf(EINVALID, "learnings[%d]: belongs to conversation %q, not %q", i, l.Conversation, conversation)
		}
		if strings.TrimSpace(l.Subject) == "" {
			return Errorf(EINVALID, "learnings[%d]: subject is empty", i)
		}
		if NormalizeLearningText(l.Text) == "" {
			return Errorf(EINVALID, "learnings[%d]: text is empty", i)
		}
		if !checkLearningWhen(l.When) {
			return Errorf(EINVALID, "learnings[%d]: when %q: want a date (2006-01-02) or two joined by \"..\", in order", i, l.When)
		}
		for j, s := range l.Sources {
			if s.Seq < 1 {
				return Errorf(EINVALID, "learnings[%d].sources[%d]: seq %d: want a turn's seq, 1 or more", i, j, s.Seq)
			}
		}
		switch l.Status {
		case "", LearningAuto, LearningConfirmed, LearningRejected:
		default:
			return Errorf(EINVALID, "learnings[%d]: status %q: want auto, confirmed or rejected", i, l.Status)
		}
	}
	return nil
}

// LearningRef names a learning in a LearningPlan: a stored one by its ID,
// or one the plan adds by the index of its step.
type LearningRef struct {
	ID   int64 // the ID of a stored learning; 0 for a learning of the call
	Step int   // when ID is 0, the index of the step that adds it
}

// LearningStep is what AddLearnings does with one learning given.
type LearningStep struct {
	// Add is true for a new learning: Learning is then the row to store
	// (without ID, its conversation, status and times set) and Supersedes
	// the learnings it replaces, oldest first. Otherwise the learning given
	// repeats Repeats, and nothing is written for it.
	Add        bool
	Learning   Learning
	Repeats    LearningRef
	Supersedes []LearningRef
}

// LearningPlan is what AddLearnings does with the learnings of one call:
// PlanLearnings decides it, and a store carries it out in its transaction
// with Apply.
type LearningPlan struct {
	Steps []LearningStep // one per learning given, in order

	stored map[int64]Learning // the stored learnings a step may repeat, by ID
}

// PlanLearnings decides what AddLearnings does with ls, learnings of
// conversation that CheckLearnings accepts, given stored, the stored
// learnings of the conversation that are not superseded, oldest first. It
// needs only those of the subjects of ls (stored may hold more, and
// superseded ones, which it ignores). now is the time of adding.
//
// The learnings are taken in order, each seeing the stored ones and those
// added before it in the call:
//   - one whose subject equals, and whose text equals as
//     NormalizeLearningText returns it, that of a learning that is not
//     superseded (auto, confirmed or rejected: a rejected fact found again
//     stays rejected) is a repeat of the oldest such learning: nothing is
//     added, and the existing learning is returned for it;
//   - any other is added, with status auto unless set, Created now unless
//     set and Updated Created unless set, and supersedes every active
//     learning (auto or confirmed) of its subject: they become
//     superseded, pointing at it, updated at its creation, and stay as
//     history. Rejected learnings are never superseded.
func PlanLearnings(conversation string, stored, ls []Learning, now time.Time) LearningPlan {
	// live is every learning not superseded so far, oldest first: the
	// stored ones, then those the plan adds.
	type live struct {
		ref     LearningRef
		subject string
		norm    string
		status  string
	}
	var lives []live
	p := LearningPlan{Steps: make([]LearningStep, len(ls)), stored: map[int64]Learning{}}
	subjects := make(map[string]bool, len(ls))
	for _, l := range ls {
		subjects[l.Subject] = true
	}
	for _, l := range stored {
		if l.Status == LearningSuperseded || !subjects[l.Subject] {
			continue
		}
		p.stored[l.ID] = l
		lives = append(lives, live{LearningRef{ID: l.ID}, l.Subject, NormalizeLearningText(l.Text), l.Status})
	}
	for i, l := range ls {
		norm := NormalizeLearningText(l.Text)
		step := &p.Steps[i]
		repeat := -1
		for j := range lives {
			if x := &lives[j]; x.status != LearningSuperseded && x.subject == l.Subject && x.norm == norm {
				repeat = j
				break
			}
		}
		if repeat >= 0 {
			step.Repeats = lives[repeat].ref
			continue
		}
		step.Add = true
		if l.Status == "" {
			l.Status = LearningAuto
		}
		if l.Created.IsZero() {
			l.Created = now
		}
		if l.Updated.IsZero() {
			l.Updated = l.Created
		}
		l.ID, l.Conversation, l.SupersededBy = 0, conversation, 0
		step.Learning = l
		for j := range lives {
			if x := &lives[j]; x.subject == l.Subject && (x.status == LearningAuto || x.status == LearningConfirmed) {
				step.Supersedes = append(step.Supersedes, x.ref)
				x.status = LearningSuperseded
			}
		}
		lives = append(lives, live{LearningRef{Step: i}, l.Subject, norm, l.Status})
	}
	return p
}

// Apply carries out p with a store's two writes, called in order inside
// the store's transaction: add stores a new learning and returns its ID;
// supersede marks the learnings ids superseded by the learning by, updated
// at at. It returns one learning per step: the one added, with its ID, or
// the one repeated as it was when it was repeated. An error of add or
// supersede stops it and is returned as it is.
func (p LearningPlan) Apply(add func(Learning) (int64, error), supersede func(ids []int64, by int64, at time.Time) error) ([]Learning, error) {
	out := make([]Learning, len(p.Steps))
	id := func(r LearningRef) int64 {
		if r.ID != 0 {
			return r.ID
		}
		return out[r.Step].ID
	}
	for i, st := range p.Steps {
		if !st.Add {
			if st.Repeats.ID != 0 {
				out[i] = p.stored[st.Repeats.ID]
			} else {
				out[i] = out[st.Repeats.Step]
			}
			continue
		}
		l := st.Learning
		var err error
		if l.ID, err = add(l); err != nil {
			return nil, err
		}
		out[i] = l
		if len(st.Supersedes) == 0 {
			continue
		}
		ids := make([]int64, len(st.Supersedes))
		for j, r := range st.Supersedes {
			ids[j] = id(r)
		}
		if err := supersede(ids, l.ID, l.Created); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// CheckLearningStatus returns an EINVALID error for a status that
// SetLearningStatus cannot set on learning id: only auto, confirmed and
// rejected can be set.
func CheckLearningStatus(id int64, status string) error {
	switch status {
	case LearningAuto, LearningConfirmed, LearningRejected:
		return nil
	}
	return Errorf(EINVALID, "learning %d: status %q: want auto, confirmed or rejected", id, status)
}

// ChangeLearningStatus returns l with its status set to status at now,
// and whether that changes it (a learning that has the status already is
// returned as it is). It is EINVALID for a status CheckLearningStatus
// refuses, and for a superseded learning: its history is fixed.
func ChangeLearningStatus(l Learning, status string, now time.Time) (Learning, bool, error) {
	if err := CheckLearningStatus(l.ID, status); err != nil {
		return l, false, err
	}
	switch l.Status {
	case LearningSuperseded:
		return l, false, Errorf(EINVALID, "learning %d is superseded by learning %d: its history is fixed", l.ID, l.SupersededBy)
	case status:
		return l, false, nil
	}
	l.Status, l.Updated = status, now
	return l, true, nil
}
