package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"pgregory.net/rapid"
)

// addLearnings adds learnings to a conversation and fails the test on
// error.
func addLearnings(t *testing.T, s strata.Store, ns, conv string, ls ...strata.Learning) []strata.Learning {
	t.Helper()
	got, err := s.AddLearnings(ctx(t), ns, conv, ls)
	if err != nil {
		t.Fatalf("AddLearnings(%q, %q, %d learnings): %v", ns, conv, len(ls), err)
	}
	if len(got) != len(ls) {
		t.Fatalf("AddLearnings(%q, %q) returned %d learnings for %d", ns, conv, len(got), len(ls))
	}
	return got
}

// learnings returns the learnings that match f and fails the test on
// error.
func learnings(t *testing.T, s strata.Store, f strata.LearningFilter) []strata.Learning {
	t.Helper()
	got, err := s.Learnings(ctx(t), f)
	if err != nil {
		t.Fatalf("Learnings(%+v): %v", f, err)
	}
	return got
}

// fact is a learning of subject with text, at base.
func fact(subject, text string) strata.Learning {
	return strata.Learning{Subject: subject, Text: text, Created: base, Updated: base}
}

// learningIDs returns the ids of ls.
func learningIDs(ls []strata.Learning) []int64 {
	out := []int64{}
	for _, l := range ls {
		out = append(out, l.ID)
	}
	return out
}

// diffLearning returns how got differs from want, field by field, or "".
func diffLearning(want, got strata.Learning) string {
	var d []string
	add := func(field string, w, g any) { d = append(d, fmt.Sprintf("%s: got %#v, want %#v", field, g, w)) }
	if got.ID != want.ID {
		add("ID", want.ID, got.ID)
	}
	if got.Conversation != want.Conversation {
		add("Conversation", want.Conversation, got.Conversation)
	}
	if got.Subject != want.Subject {
		add("Subject", want.Subject, got.Subject)
	}
	if got.Text != want.Text {
		add("Text", want.Text, got.Text)
	}
	if got.Node != want.Node || got.FirstSeq != want.FirstSeq || got.LastSeq != want.LastSeq {
		add("provenance", fmt.Sprintf("%s %d-%d", want.Node, want.FirstSeq, want.LastSeq),
			fmt.Sprintf("%s %d-%d", got.Node, got.FirstSeq, got.LastSeq))
	}
	if got.About != want.About || got.Attribute != want.Attribute || got.Value != want.Value || got.When != want.When {
		add("parts", fmt.Sprintf("%q %q %q %q", want.About, want.Attribute, want.Value, want.When),
			fmt.Sprintf("%q %q %q %q", got.About, got.Attribute, got.Value, got.When))
	}
	if !slices.Equal(got.Sources, want.Sources) {
		add("Sources", want.Sources, got.Sources)
	}
	if got.Status != want.Status {
		add("Status", want.Status, got.Status)
	}
	if got.SupersededBy != want.SupersededBy {
		add("SupersededBy", want.SupersededBy, got.SupersededBy)
	}
	for _, tm := range []struct {
		name string
		w, g time.Time
	}{{"Created", want.Created, got.Created}, {"Updated", want.Updated, got.Updated}} {
		if !sameTime(tm.w, tm.g) {
			add(tm.name, tm.w.Format(time.RFC3339Nano), tm.g.Format(time.RFC3339Nano))
		}
	}
	if len(d) == 0 {
		return ""
	}
	return fmt.Sprintf("learning %d (%q): %v", want.ID, want.Text, d)
}

// testLearningsRoundTrip: every field of a learning comes back as added,
// from AddLearnings and from Learnings; IDs are unique in the store; the
// status defaults to auto and the times to the time of adding.
func testLearningsRoundTrip(t *testing.T, s strata.Store) {
	ensure(t, s, "ns", "a")
	ensure(t, s, "ns", "b")
	ensure(t, s, "other", "a")
	in := []strata.Learning{
		{Subject: "caroline|job", Text: "Caroline works at Acme as a welder.", Node: "L1-0001", FirstSeq: 3, LastSeq: 17,
			Created: base, Updated: base.Add(time.Minute)},
		{Conversation: "a", Subject: "caroline|pet", Text: "Caroline has a dog named Rex.", Node: "L2-0001", FirstSeq: 1,
			LastSeq: 40, Status: strata.LearningConfirmed, Created: base.Add(time.Second)},
		{Subject: "caroline|went to", Text: "Caroline went to a support group (yesterday: 2023-05-07).", Node: "L1-0001",
			FirstSeq: 3, LastSeq: 17, About: "Caroline", Attribute: "went to", Value: "a support group", When: "2023-05-07",
			Sources: []strata.LearningSource{{Seq: 3, ExtID: "D1:3"}, {Seq: 5}}, Created: base, Updated: base},
	}
	before := time.Now()
	got := addLearnings(t, s, "ns", "a", in...)
	want := slices.Clone(in)
	for i := range want {
		want[i].ID, want[i].Conversation = got[i].ID, "a"
	}
	want[0].Status, want[2].Status = strata.LearningAuto, strata.LearningAuto
	want[1].Updated = want[1].Created // Updated defaults to Created
	for i := range want {
		if d := diffLearning(want[i], got[i]); d != "" {
			t.Errorf("AddLearnings returned %s", d)
		}
	}
	back := learnings(t, s, strata.LearningFilter{Namespace: "ns", Conversation: "a"})
	if len(back) != len(want) {
		t.Fatalf("Learnings: %d learnings, want %d", len(back), len(want))
	}
	for i := range want {
		if d := diffLearning(want[i], back[i]); d != "" {
			t.Errorf("Learnings read back %s", d)
		}
	}

	// Without times, the store sets both.
	now := addLearnings(t, s, "ns", "b", strata.Learning{Subject: "melanie|city", Text: "Melanie lives in Oslo."})[0]
	if now.Status != strata.LearningAuto || now.Created.Before(before.Add(-time.Minute)) || !now.Updated.Equal(now.Created) {
		t.Errorf("learning added without status or times: status %q, created %v, updated %v (added after %v)",
			now.Status, now.Created, now.Updated, before)
	}
	elsewhere := addLearnings(t, s, "other", "a", fact("caroline|job", "Caroline works at Acme as a welder."))[0]
	ids := []int64{got[0].ID, got[1].ID, now.ID, elsewhere.ID}
	for i, id := range ids {
		if id == 0 || slices.Contains(ids[:i], id) {
			t.Errorf("learning ids %v: want distinct and non-zero", ids)
			break
		}
	}
}

// testLearningsRepeats: a learning whose text equals an active one's of
// the same subject, ignoring case, spaces and final punctuation, adds
// nothing and returns the stored one; the same text under another subject
// is a learning of its own.
func testLearningsRepeats(t *testing.T, s strata.Store) {
	ensure(t, s, "ns", "c")
	orig := addLearnings(t, s, "ns", "c", fact("caroline|job", "Caroline works at Acme."))[0]
	for _, tc := range []struct {
		name, text string
	}{
		{"same", "Caroline works at Acme."},
		{"lower case", "caroline works at acme."},
		{"upper case", "CAROLINE WORKS AT ACME."},
		{"no final punctuation", "Caroline works at Acme"},
		{"other final punctuation", "Caroline works at Acme!"},
		{"several marks", "Caroline works at Acme?!..."},
		{"spaces around", "  Caroline works at Acme.\n"},
		{"spaces inside", "Caroline  works\tat   Acme."},
		{"space before the mark", "Caroline works at Acme ."},
		{"all of it", "\tcaroline WORKS  at acme ! "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := addLearnings(t, s, "ns", "c", fact("caroline|job", tc.text))[0]
			if d := diffLearning(orig, got); d != "" {
				t.Errorf("repeat %q returned %s", tc.text, d)
			}
		})
	}
	// Repeats within one call, and of a confirmed learning.
	if _, err := s.SetLearningStatus(ctx(t), "ns", orig.ID, strata.LearningConfirmed); err != nil {
		t.Fatal(err)
	}
	got := addLearnings(t, s, "ns", "c", fact("caroline|job", "caroline works at acme"),
		fact("caroline|job", "Caroline works at Acme"))
	for _, l := range got {
		if l.ID != orig.ID || l.Status != strata.LearningConfirmed {
			t.Errorf("repeat of a confirmed learning returned id %d status %q, want id %d confirmed", l.ID, l.Status, orig.ID)
		}
	}
	all := learnings(t, s, strata.LearningFilter{Namespace: "ns", Conversation: "c"})
	if len(all) != 1 {
		t.Fatalf("after repeats: %d learnings, want 1: %+v", len(all), all)
	}
	// The same text under another subject is not a repeat.
	other := addLearnings(t, s, "ns", "c", fact("acme|staff", "Caroline works at Acme."))[0]
	if other.ID == orig.ID {
		t.Errorf("the same text under another subject returned the learning of subject %q", orig.Subject)
	}
	if all := learnings(t, s, strata.LearningFilter{Namespace: "ns", Conversation: "c"}); len(all) != 2 ||
		all[0].Status != strata.LearningConfirmed || all[1].Status != strata.LearningAuto {
		t.Errorf("after a learning of another subject: %+v, want the confirmed one and a new auto one", all)
	}
}

// testLearningsSupersede: a → b → c, in separate calls or in one: the
// newest is active, each older one superseded by the next, all kept, and
// the status filter tells them apart. Other subjects are untouched.
func testLearningsSupersede(t *testing.T, s strata.Store) {
	texts := []string{"Caroline works at Acme.", "Caroline works at Globex.", "Caroline is a freelance welder."}
	for _, tc := range []struct {
		name  string
		calls [][]int // indexes into texts, per call
	}{
		{"separate calls", [][]int{{0}, {1}, {2}}},
		{"one call", [][]int{{0, 1, 2}}},
		{"two calls", [][]int{{0}, {1, 2}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ensure(t, s, "ns", tc.name)
			keep := addLearnings(t, s, "ns", tc.name, fact("caroline|pet", "Caroline has a dog."))[0]
			var chain []strata.Learning
			for i, call := range tc.calls {
				var ls []strata.Learning
				for _, k := range call {
					l := fact("caroline|job", texts[k])
					l.Created = base.Add(time.Duration(i+1) * time.Hour)
					l.Updated = l.Created
					ls = append(ls, l)
				}
				chain = append(chain, addLearnings(t, s, "ns", tc.name, ls...)...)
			}
			for i, l := range chain {
				if l.Text != texts[i] || l.Status != strata.LearningAuto || l.SupersededBy != 0 {
					t.Errorf("AddLearnings returned %+v, want a new auto learning %q", l, texts[i])
				}
			}
			get := func(statuses ...string) []strata.Learning {
				return learnings(t, s, strata.LearningFilter{Namespace: "ns", Conversation: tc.name,
					Subject: "caroline|job", Statuses: statuses})
			}
			all := get()
			if len(all) != 3 {
				t.Fatalf("history of caroline|job: %d learnings, want 3: %+v", len(all), all)
			}
			for i, l := range all {
				want := chain[i]
				if i < 2 {
					want.Status, want.SupersededBy = strata.LearningSuperseded, chain[i+1].ID
				}
				want.Updated = l.Updated
				if d := diffLearning(want, l); d != "" {
					t.Errorf("history: %s", d)
				}
				if l.Updated.Before(l.Created) {
					t.Errorf("learning %q updated %v, before its creation %v", l.Text, l.Updated, l.Created)
				}
			}
			if got := learningIDs(get(strata.LearningAuto)); !slices.Equal(got, []int64{chain[2].ID}) {
				t.Errorf("auto learnings of caroline|job: %v, want %v", got, []int64{chain[2].ID})
			}
			if got := learningIDs(get(strata.LearningSuperseded)); !slices.Equal(got, []int64{chain[0].ID, chain[1].ID}) {
				t.Errorf("superseded learnings: %v, want %v", got, []int64{chain[0].ID, chain[1].ID})
			}
			if got := learnings(t, s, strata.LearningFilter{Namespace: "ns", Conversation: tc.name,
				Subject: "caroline|pet"}); len(got) != 1 || got[0].Status != strata.LearningAuto || got[0].ID != keep.ID {
				t.Errorf("another subject: %+v, want %+v untouched", got, keep)
			}
			// A superseded text said again is new: it supersedes the newest.
			again := addLearnings(t, s, "ns", tc.name, fact("caroline|job", texts[0]))[0]
			if again.ID == chain[0].ID || again.Status != strata.LearningAuto {
				t.Errorf("a superseded text added again returned %+v, want a new auto learning", again)
			}
			if got := get(strata.LearningAuto, strata.LearningConfirmed); len(got) != 1 || got[0].ID != again.ID {
				t.Errorf("active learnings after re-adding %q: %+v, want only the new one", texts[0], got)
			}
		})
	}
}

// testLearningsConfirmedSuperseded: a confirmed learning, confirmed by
// SetLearningStatus or added confirmed, is superseded like any other.
func testLearningsConfirmedSuperseded(t *testing.T, s strata.Store) {
	ensure(t, s, "ns", "c")
	a := addLearnings(t, s, "ns", "c", fact("caroline|job", "Caroline works at Acme."))[0]
	if _, err := s.SetLearningStatus(ctx(t), "ns", a.ID, strata.LearningConfirmed); err != nil {
		t.Fatal(err)
	}
	b := addLearnings(t, s, "ns", "c", fact("caroline|job", "Caroline works at Globex."))[0]
	c := fact("melanie|city", "Melanie lives in Oslo.")
	c.Status = strata.LearningConfirmed
	c = addLearnings(t, s, "ns", "c", c)[0]
	d := addLearnings(t, s, "ns", "c", fact("melanie|city", "Melanie lives in Bergen."))[0]
	got := learnings(t, s, strata.LearningFilter{Namespace: "ns", Conversation: "c"})
	want := []struct {
		id, by int64
		status string
	}{
		{a.ID, b.ID, strata.LearningSuperseded},
		{b.ID, 0, strata.LearningAuto},
		{c.ID, d.ID, strata.LearningSuperseded},
		{d.ID, 0, strata.LearningAuto},
	}
	if len(got) != len(want) {
		t.Fatalf("Learnings: %d, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		if g := got[i]; g.ID != w.id || g.Status != w.status || g.SupersededBy != w.by {
			t.Errorf("learning %q: id %d status %q superseded by %d, want id %d status %q superseded by %d",
				g.Text, g.ID, g.Status, g.SupersededBy, w.id, w.status, w.by)
		}
	}
}

// testLearningsSetStatus: SetLearningStatus confirms, rejects and sets
// back to auto, returning the learning as Learnings then reads it; a
// rejected learning is not active; a superseded learning, or the status
// superseded, is EINVALID; an id unknown in the namespace is ENOTFOUND.
func testLearningsSetStatus(t *testing.T, s strata.Store) {
	ensure(t, s, "ns", "c")
	ensure(t, s, "other", "c")
	l := addLearnings(t, s, "ns", "c", fact("caroline|job", "Caroline works at Acme."))[0]
	for _, status := range []string{strata.LearningConfirmed, strata.LearningRejected, strata.LearningAuto,
		strata.LearningRejected, strata.LearningRejected} {
		got, err := s.SetLearningStatus(ctx(t), "ns", l.ID, status)
		if err != nil {
			t.Fatalf("SetLearningStatus(%d, %q): %v", l.ID, status, err)
		}
		want := l
		want.Status, want.Updated = status, got.Updated
		if d := diffLearning(want, got); d != "" {
			t.Errorf("SetLearningStatus(%q) returned %s", status, d)
		}
		if got.Updated.Before(l.Updated) {
			t.Errorf("SetLearningStatus(%q): updated %v, before %v", status, got.Updated, l.Updated)
		}
		back := learnings(t, s, strata.LearningFilter{Namespace: "ns", IDs: []int64{l.ID}})
		if len(back) != 1 {
			t.Fatalf("Learnings of id %d: %d learnings", l.ID, len(back))
		}
		if d := diffLearning(got, back[0]); d != "" {
			t.Errorf("after SetLearningStatus(%q), Learnings read back %s", status, d)
		}
		l = got
	}

	// A rejected learning stays rejected: its text found again is a repeat
	// of it (a person said it is wrong), and a new fact about its subject
	// does not supersede it.
	again := addLearnings(t, s, "ns", "c", fact("caroline|job", "Caroline works at Acme."))[0]
	if again.ID != l.ID || again.Status != strata.LearningRejected {
		t.Errorf("the text of a rejected learning added again returned %+v, want the rejected learning %d", again, l.ID)
	}
	next := addLearnings(t, s, "ns", "c", fact("caroline|job", "Caroline works at Globex."))[0]
	if got := learnings(t, s, strata.LearningFilter{Namespace: "ns", IDs: []int64{l.ID, next.ID}}); len(got) != 2 ||
		got[0].Status != strata.LearningRejected || got[0].SupersededBy != 0 || got[1].Status != strata.LearningAuto {
		t.Errorf("rejected, then a new fact: %+v, want the rejected one untouched and the new one auto", got)
	}
	older := addLearnings(t, s, "ns", "c", fact("caroline|city", "Caroline lives in Oslo."))[0]
	addLearnings(t, s, "ns", "c", fact("caroline|city", "Caroline lives in Rome."))

	for _, tc := range []struct {
		name   string
		ns     string
		id     int64
		status string
		code   string
	}{
		{"superseded learning", "ns", older.ID, strata.LearningConfirmed, strata.EINVALID},
		{"superseded learning back to auto", "ns", older.ID, strata.LearningAuto, strata.EINVALID},
		{"status superseded", "ns", next.ID, strata.LearningSuperseded, strata.EINVALID},
		{"unknown status", "ns", next.ID, "maybe", strata.EINVALID},
		{"empty status", "ns", next.ID, "", strata.EINVALID},
		{"unknown id", "ns", next.ID + 1000, strata.LearningConfirmed, strata.ENOTFOUND},
		{"id of another namespace", "other", next.ID, strata.LearningConfirmed, strata.ENOTFOUND},
		{"unknown namespace", "nope", next.ID, strata.LearningConfirmed, strata.ENOTFOUND},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.SetLearningStatus(ctx(t), tc.ns, tc.id, tc.status)
			wantCode(t, fmt.Sprintf("SetLearningStatus(%q, %d, %q)", tc.ns, tc.id, tc.status), err, tc.code)
		})
	}
	// The refusals changed nothing.
	got := learnings(t, s, strata.LearningFilter{Namespace: "ns", IDs: []int64{next.ID, older.ID}})
	if len(got) != 2 || got[0].Status != strata.LearningAuto || got[1].Status != strata.LearningSuperseded {
		t.Errorf("after refused changes: %+v, want auto and superseded", got)
	}
}

// testLearningsFilter: LearningFilter selects by conversation (or the whole
// namespace), statuses, subject and ids, and limits, oldest first.
func testLearningsFilter(t *testing.T, s strata.Store) {
	ensure(t, s, "ns", "a")
	ensure(t, s, "ns", "b")
	ensure(t, s, "ns", "empty")
	a := addLearnings(t, s, "ns", "a",
		fact("caroline|job", "Caroline works at Acme."),   // a0, superseded by a1
		fact("caroline|job", "Caroline works at Globex."), // a1
		fact("caroline|pet", "Caroline has a dog."),       // a2, confirmed
		fact("melanie|city", "Melanie lives in Oslo."),    // a3, rejected
	)
	b := addLearnings(t, s, "ns", "b",
		fact("caroline|job", "Caroline is a welder."),  // b0
		fact("melanie|city", "Melanie lives in Oslo."), // b1, confirmed
	)
	for _, st := range []struct {
		id     int64
		status string
	}{{a[2].ID, strata.LearningConfirmed}, {a[3].ID, strata.LearningRejected}, {b[1].ID, strata.LearningConfirmed}} {
		if _, err := s.SetLearningStatus(ctx(t), "ns", st.id, st.status); err != nil {
			t.Fatal(err)
		}
	}
	ids := func(ls ...strata.Learning) []int64 { return learningIDs(ls) }
	for _, tc := range []struct {
		name string
		f    strata.LearningFilter
		want []int64
	}{
		{"conversation", strata.LearningFilter{Conversation: "a"}, ids(a...)},
		{"namespace", strata.LearningFilter{}, ids(append(slices.Clone(a), b...)...)},
		{"empty conversation", strata.LearningFilter{Conversation: "empty"}, ids()},
		{"auto", strata.LearningFilter{Statuses: []string{strata.LearningAuto}}, ids(a[1], b[0])},
		{"active", strata.LearningFilter{Statuses: []string{strata.LearningAuto, strata.LearningConfirmed}},
			ids(a[1], a[2], b[0], b[1])},
		{"confirmed of a", strata.LearningFilter{Conversation: "a", Statuses: []string{strata.LearningConfirmed}}, ids(a[2])},
		{"rejected", strata.LearningFilter{Statuses: []string{strata.LearningRejected}}, ids(a[3])},
		{"superseded", strata.LearningFilter{Statuses: []string{strata.LearningSuperseded}}, ids(a[0])},
		{"subject", strata.LearningFilter{Subject: "caroline|job"}, ids(a[0], a[1], b[0])},
		{"subject of b", strata.LearningFilter{Conversation: "b", Subject: "melanie|city"}, ids(b[1])},
		{"unknown subject", strata.LearningFilter{Subject: "caroline"}, ids()},
		{"ids", strata.LearningFilter{IDs: []int64{b[1].ID, a[0].ID}}, ids(a[0], b[1])},
		{"ids in another conversation", strata.LearningFilter{Conversation: "a", IDs: []int64{b[0].ID}}, ids()},
		{"limit", strata.LearningFilter{Limit: 3}, ids(a[:3]...)},
		{"limit after filters", strata.LearningFilter{Subject: "melanie|city", Limit: 1}, ids(a[3])},
		{"newest", strata.LearningFilter{Conversation: "a", Newest: true}, ids(a[3], a[2], a[1], a[0])},
		{"newest with a limit", strata.LearningFilter{Limit: 2, Newest: true}, ids(b[1], b[0])},
		{"newest after filters", strata.LearningFilter{Subject: "caroline|job", Limit: 2, Newest: true},
			ids(b[0], a[1])},
		{"newest auto of a", strata.LearningFilter{Conversation: "a", Statuses: []string{strata.LearningAuto},
			Limit: 1, Newest: true}, ids(a[1])},
		{"everything", strata.LearningFilter{Conversation: "a", Subject: "caroline|job",
			Statuses: []string{strata.LearningAuto}, IDs: []int64{a[0].ID, a[1].ID}, Limit: 5}, ids(a[1])},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.f.Namespace = "ns"
			if got := learningIDs(learnings(t, s, tc.f)); !slices.Equal(got, tc.want) {
				t.Errorf("Learnings(%+v) = %v, want %v", tc.f, got, tc.want)
			}
		})
	}
	_, err := s.Learnings(ctx(t), strata.LearningFilter{Namespace: "ns", Conversation: "nope"})
	wantCode(t, "Learnings of an unknown conversation", err, strata.ENOTFOUND)
}

// testLearningsNamespaces: the same conversation and subject in two
// namespaces are independent: neither repeats nor supersedes the other,
// and neither lists the other's learnings, even by id.
func testLearningsNamespaces(t *testing.T, s strata.Store) {
	ensure(t, s, "ns", "c")
	ensure(t, s, "other", "c")
	mine := addLearnings(t, s, "ns", "c", fact("caroline|job", "Caroline works at Acme."))[0]
	same := addLearnings(t, s, "other", "c", fact("caroline|job", "Caroline works at Acme."))[0]
	if same.ID == mine.ID {
		t.Errorf("the same learning in another namespace returned the first namespace's learning %d", mine.ID)
	}
	theirs := addLearnings(t, s, "other", "c", fact("caroline|job", "Caroline works at Globex."))[0]
	for _, tc := range []struct {
		ns   string
		f    strata.LearningFilter
		want []int64
	}{
		{"ns", strata.LearningFilter{}, []int64{mine.ID}},
		{"ns", strata.LearningFilter{Conversation: "c", Statuses: []string{strata.LearningAuto}}, []int64{mine.ID}},
		{"ns", strata.LearningFilter{IDs: []int64{same.ID, theirs.ID}}, []int64{}},
		{"other", strata.LearningFilter{Conversation: "c"}, []int64{same.ID, theirs.ID}},
		{"other", strata.LearningFilter{IDs: []int64{mine.ID}}, []int64{}},
		{"third", strata.LearningFilter{}, []int64{}},
	} {
		tc.f.Namespace = tc.ns
		if got := learningIDs(learnings(t, s, tc.f)); !slices.Equal(got, tc.want) {
			t.Errorf("Learnings(%+v) = %v, want %v", tc.f, got, tc.want)
		}
	}
	if got := learnings(t, s, strata.LearningFilter{Namespace: "ns", IDs: []int64{mine.ID}}); len(got) != 1 ||
		got[0].Status != strata.LearningAuto {
		t.Errorf("a learning of another namespace's subject superseded %+v", got)
	}
}

// testLearningsInvalid: AddLearnings is ENOTFOUND for an unknown
// conversation (also one of another namespace) and EINVALID for an empty
// subject or text, a status it cannot add, or another conversation; a
// call that fails adds nothing, not even its valid learnings.
func testLearningsInvalid(t *testing.T, s strata.Store) {
	ensure(t, s, "ns", "c")
	ensure(t, s, "other", "d")
	ok := fact("caroline|job", "Caroline works at Acme.")
	with := func(f func(l *strata.Learning)) strata.Learning {
		l := fact("melanie|city", "Melanie lives in Oslo.")
		f(&l)
		return l
	}
	for _, tc := range []struct {
		name string
		conv string
		l    strata.Learning
		code string
	}{
		{"unknown conversation", "nope", ok, strata.ENOTFOUND},
		{"conversation of another namespace", "d", ok, strata.ENOTFOUND},
		{"empty subject", "c", with(func(l *strata.Learning) { l.Subject = "" }), strata.EINVALID},
		{"blank subject", "c", with(func(l *strata.Learning) { l.Subject = " \t" }), strata.EINVALID},
		{"empty text", "c", with(func(l *strata.Learning) { l.Text = "" }), strata.EINVALID},
		{"blank text", "c", with(func(l *strata.Learning) { l.Text = "  \n" }), strata.EINVALID},
		{"unknown status", "c", with(func(l *strata.Learning) { l.Status = "maybe" }), strata.EINVALID},
		{"superseded status", "c", with(func(l *strata.Learning) { l.Status = strata.LearningSuperseded }), strata.EINVALID},
		{"another conversation", "c", with(func(l *strata.Learning) { l.Conversation = "d" }), strata.EINVALID},
		{"when not a date", "c", with(func(l *strata.Learning) { l.When = "yesterday" }), strata.EINVALID},
		{"when range backwards", "c", with(func(l *strata.Learning) { l.When = "2023-05-08..2023-05-01" }), strata.EINVALID},
		{"source without seq", "c", with(func(l *strata.Learning) { l.Sources = []strata.LearningSource{{ExtID: "D1:1"}} }), strata.EINVALID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.AddLearnings(ctx(t), "ns", tc.conv, []strata.Learning{ok, tc.l})
			wantCode(t, "AddLearnings with "+tc.name, err, tc.code)
			if got := learnings(t, s, strata.LearningFilter{Namespace: "ns"}); len(got) != 0 {
				t.Errorf("a failed AddLearnings stored %+v", got)
			}
		})
	}
	// Once the conversation holds ok, a failed call neither repeats nor
	// supersedes anything.
	stored := addLearnings(t, s, "ns", "c", ok)[0]
	bad := fact("caroline|job", "Caroline works at Globex.")
	_, err := s.AddLearnings(ctx(t), "ns", "c", []strata.Learning{bad, with(func(l *strata.Learning) { l.Text = "" })})
	wantCode(t, "AddLearnings of a superseding and an empty learning", err, strata.EINVALID)
	if got := learnings(t, s, strata.LearningFilter{Namespace: "ns"}); len(got) != 1 || diffLearning(stored, got[0]) != "" {
		t.Errorf("a failed AddLearnings changed the learnings to %+v, want only %+v", got, stored)
	}
	if got, err := s.AddLearnings(ctx(t), "ns", "c", nil); err != nil || len(got) != 0 {
		t.Errorf("AddLearnings of none = %v, %v; want none, no error", got, err)
	}
}

// testLearningsNewest: for any learnings and any filter, Newest lists the
// same learnings as the oldest-first order, reversed, and a Limit keeps
// the first of that order: the newest that match.
func testLearningsNewest(t *testing.T, s strata.Store) {
	subjects := []string{"caroline|job", "caroline|city", "melanie|job", "melanie|pet"}
	texts := []string{"works at Acme.", "works at Globex.", "lives in Oslo.", "has a dog.", "is a welder."}
	statuses := []string{strata.LearningAuto, strata.LearningConfirmed, strata.LearningRejected}
	run := 0
	rapid.Check(t, func(rt *rapid.T) {
		run++
		ns := fmt.Sprintf("newest-%d", run)
		convs := []string{"a", "b"}
		for _, c := range convs {
			if _, err := s.EnsureConversation(ctx(t), strata.Conversation{Namespace: ns, ID: c, Policy: "chunks"}); err != nil {
				rt.Fatalf("EnsureConversation(%q, %q): %v", ns, c, err)
			}
		}
		var added []strata.Learning
		for range rapid.IntRange(1, 6).Draw(rt, "calls") {
			conv := rapid.SampledFrom(convs).Draw(rt, "conversation")
			var ls []strata.Learning
			for range rapid.IntRange(1, 4).Draw(rt, "learnings") {
				ls = append(ls, fact(rapid.SampledFrom(subjects).Draw(rt, "subject"), rapid.SampledFrom(texts).Draw(rt, "text")))
			}
			got, err := s.AddLearnings(ctx(t), ns, conv, ls)
			if err != nil {
				rt.Fatalf("AddLearnings(%q, %q): %v", ns, conv, err)
			}
			added = append(added, got...)
		}
		for range rapid.IntRange(0, 3).Draw(rt, "status changes") {
			l := rapid.SampledFrom(added).Draw(rt, "learning")
			_, err := s.SetLearningStatus(ctx(t), ns, l.ID, rapid.SampledFrom(statuses).Draw(rt, "status"))
			if err != nil && strata.ErrorCode(err) != strata.EINVALID { // a superseded one refuses
				rt.Fatalf("SetLearningStatus(%d): %v", l.ID, err)
			}
		}
		f := strata.LearningFilter{Namespace: ns,
			Conversation: rapid.SampledFrom([]string{"", "a", "b"}).Draw(rt, "filter conversation"),
			Subject:      rapid.SampledFrom(append([]string{""}, subjects...)).Draw(rt, "filter subject")}
		if rapid.Bool().Draw(rt, "filter statuses") {
			f.Statuses = rapid.SliceOfNDistinct(rapid.SampledFrom(append(slices.Clone(statuses), strata.LearningSuperseded)),
				1, 3, rapid.ID).Draw(rt, "statuses")
		}
		oldest, err := s.Learnings(ctx(t), f)
		if err != nil {
			rt.Fatalf("Learnings(%+v): %v", f, err)
		}
		want := learningIDs(oldest)
		slices.Reverse(want)
		f.Newest = true
		f.Limit = rapid.IntRange(0, len(want)+1).Draw(rt, "limit")
		if f.Limit > 0 && f.Limit < len(want) {
			want = want[:f.Limit]
		}
		newest, err := s.Learnings(ctx(t), f)
		if err != nil {
			rt.Fatalf("Learnings(%+v): %v", f, err)
		}
		if got := learningIDs(newest); !slices.Equal(got, want) {
			rt.Fatalf("Learnings(%+v) = %v, want %v (the oldest-first list reversed, limited)", f, got, want)
		}
	})
}
