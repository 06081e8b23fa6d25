package strata_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/internal/synth"
)

func TestFactSubject(t *testing.T) {
	for _, tt := range []struct{ fact, want string }{
		{"Caroline's job is counseling.", "caroline|job"},
		{"[8 May 2023] Caroline: Caroline's job is now teaching!", "caroline|job"},
		{"Melanie's favorite color is blue.", "melanie|favorite color"},
		{"Jon lives in Berlin.", "jon|lives"},
		{"Jon moved to Lisbon in May.", "jon|lives"},
		{"Maria works at the shelter.", "maria|works"},
		{"The deadline is Friday.", "the|deadline"},
		{"The launch date was moved to June 3.", "the|launch date"},
		{"We went   hiking, it was great!", "we went hiking, it was great"},
	} {
		if got := strata.FactSubject(tt.fact); got != tt.want {
			t.Errorf("FactSubject(%q) = %q, want %q", tt.fact, got, tt.want)
		}
	}
}

// TestLearn records the facts of level-1 nodes once, supersedes a fact
// about the same subject, and pins confirmed learnings in context packages.
func TestLearn(t *testing.T) {
	c := &clock{t: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)}
	m, _ := newClocked(t, c, nil)
	ctx := context.Background()
	turns := synth.New(31).Turns(40)
	for i := range turns {
		turns[i].Content = []string{"Ok.", "Sure, sounds good.", "Right.", "Thanks!"}[i%4]
	}
	turns[3].Content = "Jon's job is teaching at the school now."
	turns[33].Content = "Jon's job is nursing at the hospital since March."
	if _, err := m.Ingest(ctx, strata.Batch{Conversation: "c", Turns: turns}); err != nil {
		t.Fatal(err)
	}
	res, err := m.Learn(ctx, "")
	if err != nil || res.Nodes != 4 || res.Facts == 0 {
		t.Fatalf("Learn: %+v, %v", res, err)
	}
	if again, _ := m.Learn(ctx, "c"); again.Nodes != 0 {
		t.Errorf("a second pass read %d nodes", again.Nodes)
	}
	all, err := m.Learnings(ctx, strata.LearningFilter{Conversation: "c"})
	if err != nil {
		t.Fatal(err)
	}
	var job []strata.Learning
	for _, l := range all {
		if l.Subject == "jon|job" {
			job = append(job, l)
		}
	}
	if len(job) != 2 || job[0].Status != strata.LearningSuperseded || job[0].SupersededBy != job[1].ID || job[1].Status != strata.LearningAuto {
		t.Fatalf("jon|job learnings: %+v\n(all facts: %v)", job, all)
	}
	if job[1].FirstSeq != 34 || job[1].LastSeq != 34 || job[1].Node == "" || len(job[1].Sources) != 1 ||
		job[1].Sources[0] != (strata.LearningSource{Seq: 34, ExtID: turns[33].ExtID}) || job[1].About != "Jon" || job[1].Attribute != "job" {
		t.Errorf("provenance: %+v", job[1])
	}
	if _, err := m.SetLearningStatus(ctx, job[1].ID, strata.LearningConfirmed); err != nil {
		t.Fatal(err)
	}
	pkg, err := m.Context(ctx, strata.ContextRequest{Conversation: "c", Budget: 800})
	if err != nil {
		t.Fatal(err)
	}
	if len(pkg.Items) == 0 || pkg.Items[0].Kind != strata.KindLearning || !strings.Contains(pkg.Rendered, "[learning, confirmed, from turn 34] Jon's job is nursing") {
		t.Fatalf("the confirmed learning does not open the package:\n%s", pkg.Rendered)
	}
	if pkg.Tokens > 800 {
		t.Errorf("%d tokens", pkg.Tokens)
	}
}
