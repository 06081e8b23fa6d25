package strata_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/internal/synth"
)

// TestKnownFacts: a package asked for known facts carries the current
// learnings that bear on the query, not the superseded ones, within the
// budget; one not asked for carries none.
func TestKnownFacts(t *testing.T) {
	c := &clock{t: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)}
	m, _ := newClocked(t, c, nil)
	ctx := context.Background()
	turns := synth.New(7).Turns(40)
	for i := range turns {
		turns[i].Content = []string{"Ok.", "Sure, sounds good.", "Right.", "Thanks!"}[i%4]
	}
	turns[2].Content = "I live in Lisbon near the river."
	turns[5].Content = "I adopted a grey cat named Miso."
	turns[33].Content = "I moved to Porto for the new lab."
	for _, i := range []int{2, 5, 33} {
		turns[i].Role, turns[i].Name = strata.RoleUser, "Ana"
	}
	if _, err := m.Ingest(ctx, strata.Batch{Conversation: "c", Turns: turns}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Learn(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	who := turns[2].Speaker()
	ask := func(facts bool) *strata.Package {
		t.Helper()
		pkg, err := m.Context(ctx, strata.ContextRequest{Conversation: "c", Query: "Where does " + who + " live, Lisbon or Porto?",
			Budget: 600, Facts: facts})
		if err != nil {
			t.Fatal(err)
		}
		if pkg.Tokens > 600 {
			t.Errorf("%d tokens over a budget of 600", pkg.Tokens)
		}
		return pkg
	}
	var facts []string
	for _, it := range ask(true).Items {
		if it.Reason == strata.ReasonFact {
			facts = append(facts, it.Text)
			if it.Kind != strata.KindLearning || it.FirstSeq != it.LastSeq || it.ExtID == "" {
				t.Errorf("fact item %+v: want a learning with its source turn", it)
			}
		}
	}
	joined := strings.Join(facts, "\n")
	if !strings.Contains(joined, "moved to Porto") || strings.Contains(joined, "Lisbon") {
		t.Fatalf("known facts %q: want the current one, that %s moved to Porto, and not the superseded one", facts, who)
	}
	for _, it := range ask(false).Items {
		if it.Reason == strata.ReasonFact {
			t.Errorf("a package not asked for facts carries %q", it.Text)
		}
	}
	pkg := ask(true)
	if !strings.Contains(pkg.Rendered, "[known fact, from turn 34] "+who+" moved to Porto") {
		t.Errorf("rendering:\n%s", pkg.Rendered)
	}
}

// TestKnownFactsNewest: a conversation with more auto learnings than a
// package reads to rank still shows its newest fact: the section reads the
// newest learnings, not the oldest.
func TestKnownFactsNewest(t *testing.T) {
	c := &clock{t: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)}
	m, st := newClocked(t, c, nil)
	ctx := context.Background()
	turns := synth.New(3).Turns(4)
	if _, err := m.Ingest(ctx, strata.Batch{Conversation: "c", Turns: turns}); err != nil {
		t.Fatal(err)
	}
	at := c.Now()
	const limit = 50
	defer strata.SetFactsLimit(limit)()
	old := make([]strata.Learning, limit)
	for i := range old {
		old[i] = strata.Learning{Subject: fmt.Sprintf("ana|note %d", i), Text: fmt.Sprintf("Ana wrote note %d.", i),
			FirstSeq: 1, LastSeq: 1, Created: at, Updated: at}
	}
	if _, err := st.AddLearnings(ctx, strata.DefaultNamespace, "c", old); err != nil {
		t.Fatal(err)
	}
	newest := strata.Learning{Subject: "ana|lives in", Text: "Ana moved to Porto.", FirstSeq: 4, LastSeq: 4,
		Sources: []strata.LearningSource{{Seq: 4, ExtID: turns[3].ExtID}}, Created: at, Updated: at}
	if _, err := st.AddLearnings(ctx, strata.DefaultNamespace, "c", []strata.Learning{newest}); err != nil {
		t.Fatal(err)
	}
	pkg, err := m.Context(ctx, strata.ContextRequest{Conversation: "c", Query: "Where did Ana move, Porto?",
		Budget: 2000, Facts: true})
	if err != nil {
		t.Fatal(err)
	}
	var facts []string
	for _, it := range pkg.Items {
		if it.Reason == strata.ReasonFact {
			facts = append(facts, it.Text)
		}
	}
	if !slices.Contains(facts, newest.Text) {
		t.Errorf("known facts of %d learnings: %d facts without the newest, %q", limit+1, len(facts), newest.Text)
	}
}

// TestConfirmedLearningsNewest: a package pins the newest confirmed
// learnings when there are more than it reads.
func TestConfirmedLearningsNewest(t *testing.T) {
	c := &clock{t: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)}
	m, st := newClocked(t, c, nil)
	ctx := context.Background()
	if _, err := m.Ingest(ctx, strata.Batch{Conversation: "c", Turns: synth.New(3).Turns(4)}); err != nil {
		t.Fatal(err)
	}
	at := c.Now()
	var ls []strata.Learning
	for i := range 65 {
		ls = append(ls, strata.Learning{Subject: fmt.Sprintf("ana|note %d", i), Text: fmt.Sprintf("Ana wrote note %d.", i),
			Status: strata.LearningConfirmed, FirstSeq: 1, LastSeq: 1, Created: at, Updated: at})
	}
	if _, err := st.AddLearnings(ctx, strata.DefaultNamespace, "c", ls); err != nil {
		t.Fatal(err)
	}
	pkg, err := m.Context(ctx, strata.ContextRequest{Conversation: "c", Budget: 8000})
	if err != nil {
		t.Fatal(err)
	}
	newest := ls[len(ls)-1].Text
	for _, it := range pkg.Items {
		if it.Kind == strata.KindLearning && it.Text == newest {
			return
		}
	}
	t.Errorf("the newest of 65 confirmed learnings, %q, is not in the package", newest)
}
