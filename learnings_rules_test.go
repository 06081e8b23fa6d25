package strata_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"pgregory.net/rapid"
)

// learningRows is the learnings table of one conversation as a store keeps
// it, in memory: the rows PlanLearnings and Apply tell it to write.
type learningRows struct {
	conv string
	rows []strata.Learning // by ID, from 1
}

// add adds ls as a store's AddLearnings does, at now.
func (r *learningRows) add(ls []strata.Learning, now time.Time) ([]strata.Learning, error) {
	if err := strata.CheckLearnings(r.conv, ls); err != nil {
		return nil, err
	}
	var stored []strata.Learning
	for _, l := range r.rows {
		if l.Status != strata.LearningSuperseded {
			stored = append(stored, l)
		}
	}
	plan := strata.PlanLearnings(r.conv, stored, ls, now)
	return plan.Apply(func(l strata.Learning) (int64, error) {
		l.ID = int64(len(r.rows) + 1)
		r.rows = append(r.rows, l)
		return l.ID, nil
	}, func(ids []int64, by int64, at time.Time) error {
		for _, id := range ids {
			l := &r.rows[id-1]
			if l.Status != strata.LearningAuto && l.Status != strata.LearningConfirmed {
				return fmt.Errorf("learning %d (%s) is not active, and cannot be superseded", id, l.Status)
			}
			l.Status, l.SupersededBy, l.Updated = strata.LearningSuperseded, by, at
		}
		return nil
	})
}

var t0 = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

// lf is a learning of subject with text and status.
func lf(subject, text, status string) strata.Learning {
	return strata.Learning{Subject: subject, Text: text, Status: status}
}

// describePlan says what each step of p does: "add", "add supersedes
// #1 step0" or "repeat #2" / "repeat step1".
func describePlan(p strata.LearningPlan) []string {
	ref := func(r strata.LearningRef) string {
		if r.ID != 0 {
			return fmt.Sprintf("#%d", r.ID)
		}
		return fmt.Sprintf("step%d", r.Step)
	}
	var out []string
	for _, st := range p.Steps {
		if !st.Add {
			out = append(out, "repeat "+ref(st.Repeats))
			continue
		}
		s := "add"
		if len(st.Supersedes) > 0 {
			var refs []string
			for _, r := range st.Supersedes {
				refs = append(refs, ref(r))
			}
			s += " supersedes " + strings.Join(refs, " ")
		}
		out = append(out, s)
	}
	return out
}

func TestCheckLearnings(t *testing.T) {
	ok := lf("caroline|job", "Caroline works at Acme.", "")
	with := func(f func(l *strata.Learning)) strata.Learning {
		l := lf("melanie|city", "Melanie lives in Oslo.", strata.LearningConfirmed)
		f(&l)
		return l
	}
	for _, tc := range []struct {
		name string
		l    strata.Learning
		want string // "" or what the error says
	}{
		{"valid", with(func(l *strata.Learning) {}), ""},
		{"auto", with(func(l *strata.Learning) { l.Status = strata.LearningAuto }), ""},
		{"rejected", with(func(l *strata.Learning) { l.Status = strata.LearningRejected }), ""},
		{"no status", with(func(l *strata.Learning) { l.Status = "" }), ""},
		{"its conversation", with(func(l *strata.Learning) { l.Conversation = "c" }), ""},
		{"another conversation", with(func(l *strata.Learning) { l.Conversation = "d" }), `learnings[1]: belongs to conversation "d"`},
		{"empty subject", with(func(l *strata.Learning) { l.Subject = "" }), "learnings[1]: subject is empty"},
		{"blank subject", with(func(l *strata.Learning) { l.Subject = " \t" }), "learnings[1]: subject is empty"},
		{"empty text", with(func(l *strata.Learning) { l.Text = "" }), "learnings[1]: text is empty"},
		{"blank text", with(func(l *strata.Learning) { l.Text = "  \n" }), "learnings[1]: text is empty"},
		{"punctuation only", with(func(l *strata.Learning) { l.Text = " ?!." }), "learnings[1]: text is empty"},
		{"status superseded", with(func(l *strata.Learning) { l.Status = strata.LearningSuperseded }), `learnings[1]: status "superseded"`},
		{"unknown status", with(func(l *strata.Learning) { l.Status = "maybe" }), `learnings[1]: status "maybe"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := strata.CheckLearnings("c", []strata.Learning{ok, tc.l})
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("CheckLearnings = %v, want nil", err)
			case tc.want != "" && (strata.ErrorCode(err) != strata.EINVALID || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("CheckLearnings = %v (code %q), want EINVALID saying %q", err, strata.ErrorCode(err), tc.want)
			}
		})
	}
}

func TestPlanLearnings(t *testing.T) {
	stored := func(id int64, subject, text, status string) strata.Learning {
		l := lf(subject, text, status)
		l.ID, l.Conversation, l.Created, l.Updated = id, "c", t0.Add(-time.Hour), t0.Add(-time.Hour)
		return l
	}
	acme := stored(1, "caroline|job", "Caroline works at Acme.", strata.LearningAuto)
	for _, tc := range []struct {
		name   string
		stored []strata.Learning
		in     []strata.Learning
		want   []string
	}{
		{"first learning", nil, []strata.Learning{lf("caroline|job", "Caroline works at Acme.", "")}, []string{"add"}},
		{"repeat, same text", []strata.Learning{acme},
			[]strata.Learning{lf("caroline|job", "Caroline works at Acme.", "")}, []string{"repeat #1"}},
		{"repeat ignoring case, spaces and final punctuation", []strata.Learning{acme},
			[]strata.Learning{lf("caroline|job", "\tcaroline WORKS  at acme ?! ", "")}, []string{"repeat #1"}},
		{"inner punctuation counts", []strata.Learning{acme},
			[]strata.Learning{lf("caroline|job", "Caroline works at Acme, Inc.", "")}, []string{"add supersedes #1"}},
		{"repeat of a confirmed learning",
			[]strata.Learning{stored(4, "caroline|job", "Caroline works at Acme.", strata.LearningConfirmed)},
			[]strata.Learning{lf("caroline|job", "caroline works at acme", strata.LearningAuto)}, []string{"repeat #4"}},
		{"a rejected fact found again stays rejected",
			[]strata.Learning{stored(2, "caroline|job", "Caroline works at Acme.", strata.LearningRejected),
				stored(3, "caroline|job", "Caroline works at Globex.", strata.LearningAuto)},
			[]strata.Learning{lf("caroline|job", "Caroline works at Acme", "")}, []string{"repeat #2"}},
		{"a superseded text is new again",
			[]strata.Learning{stored(1, "caroline|job", "Caroline works at Acme.", strata.LearningSuperseded),
				stored(2, "caroline|job", "Caroline works at Globex.", strata.LearningAuto)},
			[]strata.Learning{lf("caroline|job", "Caroline works at Acme.", "")}, []string{"add supersedes #2"}},
		{"the same text under another subject", []strata.Learning{acme},
			[]strata.Learning{lf("acme|staff", "Caroline works at Acme.", "")}, []string{"add"}},
		{"subjects compare as they are", []strata.Learning{acme},
			[]strata.Learning{lf("Caroline|job", "Caroline works at Acme.", "")}, []string{"add"}},
		{"supersedes auto and confirmed, never rejected",
			[]strata.Learning{stored(1, "caroline|job", "Caroline works at Acme.", strata.LearningRejected),
				stored(2, "caroline|job", "Caroline works at Globex.", strata.LearningConfirmed),
				stored(3, "caroline|job", "Caroline is a welder.", strata.LearningAuto),
				stored(4, "caroline|pet", "Caroline has a dog.", strata.LearningAuto)},
			[]strata.Learning{lf("caroline|job", "Caroline is a teacher.", "")}, []string{"add supersedes #2 #3"}},
		{"a learning added rejected supersedes too", []strata.Learning{acme},
			[]strata.Learning{lf("caroline|job", "Caroline works at Globex.", strata.LearningRejected)}, []string{"add supersedes #1"}},
		{"a chain in one call", []strata.Learning{acme},
			[]strata.Learning{lf("caroline|job", "Caroline works at Globex.", ""), lf("caroline|job", "Caroline is a welder.", "")},
			[]string{"add supersedes #1", "add supersedes step0"}},
		{"a repeat in one call", nil,
			[]strata.Learning{lf("caroline|job", "Caroline works at Acme.", ""), lf("caroline|job", "caroline works at acme", "")},
			[]string{"add", "repeat step0"}},
		{"a text superseded earlier in the call is new", nil,
			[]strata.Learning{lf("caroline|job", "Caroline works at Acme.", ""), lf("caroline|job", "Caroline works at Globex.", ""),
				lf("caroline|job", "Caroline works at Acme.", "")},
			[]string{"add", "add supersedes step0", "add supersedes step1"}},
		{"a repeat of a stored learning is not superseded by itself", []strata.Learning{acme},
			[]strata.Learning{lf("caroline|job", "Caroline works at Acme.", ""), lf("caroline|job", "Caroline works at Globex.", ""),
				lf("caroline|job", "Caroline works at Acme", "")},
			[]string{"repeat #1", "add supersedes #1", "add supersedes step1"}},
		{"the oldest of two equal learnings is repeated",
			[]strata.Learning{stored(5, "caroline|job", "Caroline works at Acme.", strata.LearningRejected),
				stored(7, "caroline|job", "caroline works at acme", strata.LearningAuto)},
			[]strata.Learning{lf("caroline|job", "Caroline works at Acme!", "")}, []string{"repeat #5"}},
		{"two active learnings of a subject are both superseded",
			[]strata.Learning{stored(1, "caroline|job", "Caroline works at Acme.", strata.LearningAuto),
				stored(2, "caroline|job", "Caroline works at Globex.", strata.LearningAuto)},
			[]strata.Learning{lf("caroline|job", "Caroline is a welder.", "")}, []string{"add supersedes #1 #2"}},
		{"learnings of other subjects are ignored",
			[]strata.Learning{stored(1, "melanie|city", "Caroline works at Acme.", strata.LearningAuto)},
			[]strata.Learning{lf("caroline|job", "Caroline works at Acme.", "")}, []string{"add"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := strata.PlanLearnings("c", tc.stored, tc.in, t0)
			if got := describePlan(p); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("plan %q, want %q", got, tc.want)
			}
		})
	}
}

// TestPlanLearningsNew: an added learning is the one given with its
// conversation, status and times set; what was set is kept.
func TestPlanLearningsNew(t *testing.T) {
	given := []strata.Learning{
		{ID: 99, Conversation: "", Subject: "a", Text: "A is one.", Node: "L1-0001", FirstSeq: 3, LastSeq: 9, SupersededBy: 5},
		{Subject: "b", Text: "B is two.", Status: strata.LearningConfirmed, Created: t0.Add(-time.Hour)},
		{Conversation: "c", Subject: "c", Text: "C is three.", Status: strata.LearningRejected,
			Created: t0.Add(-2 * time.Hour), Updated: t0.Add(-time.Minute)},
	}
	p := strata.PlanLearnings("c", nil, given, t0)
	want := []strata.Learning{
		{Conversation: "c", Subject: "a", Text: "A is one.", Node: "L1-0001", FirstSeq: 3, LastSeq: 9,
			Status: strata.LearningAuto, Created: t0, Updated: t0},
		{Conversation: "c", Subject: "b", Text: "B is two.", Status: strata.LearningConfirmed,
			Created: t0.Add(-time.Hour), Updated: t0.Add(-time.Hour)},
		given[2],
	}
	for i, st := range p.Steps {
		if !st.Add || !reflect.DeepEqual(st.Learning, want[i]) {
			t.Errorf("step %d: add %v %+v, want add %+v", i, st.Add, st.Learning, want[i])
		}
	}
}

// TestLearningPlanApply: Apply writes in the plan's order, resolves the
// learnings of the call to the IDs add returned, supersedes at the new
// learning's creation, returns the stored learning a step repeats as it
// was, and stops at the first error.
func TestLearningPlanApply(t *testing.T) {
	acme := strata.Learning{ID: 10, Conversation: "c", Subject: "job", Text: "Acme.", Status: strata.LearningConfirmed,
		Created: t0.Add(-time.Hour), Updated: t0.Add(-time.Hour)}
	in := []strata.Learning{
		lf("job", "acme", ""), // repeats 10
		{Subject: "job", Text: "Globex", Created: t0.Add(-30 * time.Minute), Updated: t0.Add(-10 * time.Minute)}, // supersedes 10
		lf("job", "Initech", ""),
		lf("job", "globex.", ""), // not a repeat: Globex is superseded
		lf("pet", "A dog.", ""),
		lf("pet", "a dog", ""), // repeats the one before
	}
	p := strata.PlanLearnings("c", []strata.Learning{acme}, in, t0)
	var log []string
	next := int64(100)
	out, err := p.Apply(func(l strata.Learning) (int64, error) {
		next++
		log = append(log, fmt.Sprintf("add %d %s", next, l.Text))
		return next, nil
	}, func(ids []int64, by int64, at time.Time) error {
		log = append(log, fmt.Sprintf("supersede %v by %d at %s", ids, by, at.Sub(t0)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	wantLog := []string{"add 101 Globex", "supersede [10] by 101 at -30m0s", "add 102 Initech", "supersede [101] by 102 at 0s",
		"add 103 globex.", "supersede [102] by 103 at 0s", "add 104 A dog."}
	if !reflect.DeepEqual(log, wantLog) {
		t.Errorf("writes %q, want %q", log, wantLog)
	}
	var ids []int64
	for _, l := range out {
		ids = append(ids, l.ID)
	}
	if want := []int64{10, 101, 102, 103, 104, 104}; !reflect.DeepEqual(ids, want) {
		t.Errorf("returned ids %v, want %v", ids, want)
	}
	if !reflect.DeepEqual(out[0], acme) {
		t.Errorf("a repeat returned %+v, want the stored learning %+v", out[0], acme)
	}
	if out[1].Status != strata.LearningAuto || out[1].SupersededBy != 0 || !reflect.DeepEqual(out[5], out[4]) {
		t.Errorf("returned %+v: want added learnings as added, and a repeat of one the one added", out)
	}

	boom := errors.New("disk full")
	calls := 0
	_, err = p.Apply(func(l strata.Learning) (int64, error) {
		if calls++; calls == 2 {
			return 0, boom
		}
		return int64(calls), nil
	}, func([]int64, int64, time.Time) error { return nil })
	if !errors.Is(err, boom) || calls != 2 {
		t.Errorf("Apply with a failing add: %v after %d adds, want %v after 2", err, calls, boom)
	}
	_, err = p.Apply(func(strata.Learning) (int64, error) { return 1, nil },
		func([]int64, int64, time.Time) error { return boom })
	if !errors.Is(err, boom) {
		t.Errorf("Apply with a failing supersede: %v, want %v", err, boom)
	}
}

func TestChangeLearningStatus(t *testing.T) {
	base := strata.Learning{ID: 3, Subject: "job", Text: "Acme.", Created: t0.Add(-time.Hour), Updated: t0.Add(-time.Hour)}
	for _, tc := range []struct {
		from, to string
		changed  bool
		code     string
	}{
		{strata.LearningAuto, strata.LearningConfirmed, true, ""},
		{strata.LearningAuto, strata.LearningRejected, true, ""},
		{strata.LearningConfirmed, strata.LearningAuto, true, ""},
		{strata.LearningRejected, strata.LearningAuto, true, ""},
		{strata.LearningRejected, strata.LearningRejected, false, ""},
		{strata.LearningConfirmed, strata.LearningConfirmed, false, ""},
		{strata.LearningSuperseded, strata.LearningConfirmed, false, strata.EINVALID},
		{strata.LearningSuperseded, strata.LearningAuto, false, strata.EINVALID},
		{strata.LearningAuto, strata.LearningSuperseded, false, strata.EINVALID},
		{strata.LearningAuto, "", false, strata.EINVALID},
		{strata.LearningAuto, "maybe", false, strata.EINVALID},
	} {
		l := base
		l.Status = tc.from
		got, changed, err := strata.ChangeLearningStatus(l, tc.to, t0)
		if strata.ErrorCode(err) != tc.code || changed != tc.changed {
			t.Errorf("%s -> %q: changed %v, error %v; want changed %v, code %q", tc.from, tc.to, changed, err, tc.changed, tc.code)
			continue
		}
		want := l
		if changed {
			want.Status, want.Updated = tc.to, t0
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Errorf("%s -> %q: %+v, want %+v", tc.from, tc.to, got, want)
		}
	}
	if err := strata.CheckLearningStatus(3, "superseded"); strata.ErrorCode(err) != strata.EINVALID ||
		!strings.Contains(err.Error(), "learning 3") {
		t.Errorf("CheckLearningStatus(3, superseded) = %v, want EINVALID naming learning 3", err)
	}
}

// genLearnings draws learnings over few subjects and texts, spelled in
// several ways, so that repeats and supersessions are frequent; their
// times are set and increasing.
func genLearnings(t *rapid.T) []strata.Learning {
	subjects := []string{"jon|job", "jon|lives", "the|deadline"}
	texts := []string{"Acme", "Globex", "Initech", "a welder"}
	spell := []func(string) string{
		func(s string) string { return s + "." },
		strings.ToLower,
		func(s string) string { return "  " + strings.ToUpper(s) + " !" },
		func(s string) string { return strings.ReplaceAll(s, " ", "\t ") },
	}
	n := rapid.IntRange(1, 24).Draw(t, "n")
	out := make([]strata.Learning, n)
	for i := range out {
		text := rapid.SampledFrom(texts).Draw(t, "text")
		out[i] = strata.Learning{
			Subject: rapid.SampledFrom(subjects).Draw(t, "subject"),
			Text:    spell[rapid.IntRange(0, len(spell)-1).Draw(t, "spelling")](text),
			Status:  rapid.SampledFrom([]string{"", "", strata.LearningAuto, strata.LearningConfirmed, strata.LearningRejected}).Draw(t, "status"),
			Created: t0.Add(time.Duration(i) * time.Minute),
		}
	}
	return out
}

// TestPlanLearningsProperties: adding learnings in one call, one at a time
// or in any split leaves the same rows and returns the same learnings;
// after every call a subject has at most one active learning, no two
// learnings that are not superseded repeat each other, each learning
// returned has the subject and normalized text given, a superseded
// learning points at a newer one of its subject, and only active
// learnings are superseded (learningRows refuses any other).
func TestPlanLearningsProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ls := genLearnings(t)
		whole := &learningRows{conv: "c"}
		wantOut, err := whole.add(ls, t0)
		if err != nil {
			t.Fatal(err)
		}
		checkLearningRows(t, whole.rows, ls, wantOut)

		for _, split := range []string{"one at a time", "drawn"} {
			r := &learningRows{conv: "c"}
			var out []strata.Learning
			for i := 0; i < len(ls); {
				k := 1
				if split == "drawn" {
					k = rapid.IntRange(1, len(ls)-i).Draw(t, "call")
				}
				got, err := r.add(ls[i:i+k], t0)
				if err != nil {
					t.Fatal(err)
				}
				checkLearningRows(t, r.rows, ls[i:i+k], got)
				out = append(out, got...)
				i += k
			}
			if !reflect.DeepEqual(r.rows, whole.rows) {
				t.Fatalf("%s: rows\n%+v\nwant, as added in one call,\n%+v", split, r.rows, whole.rows)
			}
			if !reflect.DeepEqual(out, wantOut) {
				t.Fatalf("%s: returned\n%+v\nwant, as added in one call,\n%+v", split, out, wantOut)
			}
		}
	})
}

// checkLearningRows checks the invariants of rows after a call that added
// in and returned out.
func checkLearningRows(t *rapid.T, rows, in, out []strata.Learning) {
	active := map[string]int64{}
	live := map[[2]string]int64{}
	for _, l := range rows {
		key := [2]string{l.Subject, strata.NormalizeLearningText(l.Text)}
		switch l.Status {
		case strata.LearningSuperseded:
			if l.SupersededBy <= l.ID || int(l.SupersededBy) > len(rows) || rows[l.SupersededBy-1].Subject != l.Subject {
				t.Fatalf("learning %d (%s) is superseded by %d, not a newer learning of its subject", l.ID, l.Subject, l.SupersededBy)
			}
			continue
		case strata.LearningAuto, strata.LearningConfirmed:
			if id, ok := active[l.Subject]; ok {
				t.Fatalf("subject %s has two active learnings, %d and %d", l.Subject, id, l.ID)
			}
			active[l.Subject] = l.ID
		}
		if l.SupersededBy != 0 {
			t.Fatalf("learning %d is %s, superseded by %d", l.ID, l.Status, l.SupersededBy)
		}
		if id, ok := live[key]; ok {
			t.Fatalf("learnings %d and %d repeat each other and neither is superseded", id, l.ID)
		}
		live[key] = l.ID
	}
	if len(out) != len(in) {
		t.Fatalf("%d learnings returned for %d", len(out), len(in))
	}
	for i := range in {
		if out[i].Subject != in[i].Subject || strata.NormalizeLearningText(out[i].Text) != strata.NormalizeLearningText(in[i].Text) {
			t.Fatalf("learning %q of %s returned %q of %s", in[i].Text, in[i].Subject, out[i].Text, out[i].Subject)
		}
	}
}
