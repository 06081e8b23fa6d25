package extractive

import (
	"context"
	"strings"
	"testing"

	"github.com/strata-memory/strata"
)

// TestPinnedLabelReadBack: a pinned turn quoted whole keeps an inner
// sentence that looks like a label ("Decision: ...") with its speaker one
// level up.
func TestPinnedLabelReadBack(t *testing.T) {
	turns := []strata.Turn{
		{Role: "user", Name: "Maya", Importance: 0.9, Content: "Yes, yesterday's counts are what we want. Decision: a daily stock report at 06:30 for both shops."},
		{Role: "assistant", Name: "assistant", Content: "Fine, I will write the timer unit for the report."},
	}
	tok := strata.CharEstimator{}
	s := summarize(t, strata.SummaryRequest{Level: 1, Budget: 100, Turns: turns, Tokenizer: tok})
	if !strings.Contains(s.Text, "Maya: Decision: a daily") {
		t.Fatalf("level 1 lost the speaker of the decision:\n%s", s.Text)
	}
	child := strata.Node{Level: 1, FirstSeq: 1, LastSeq: 2, Summary: s.Text, Facts: s.Facts, Themes: s.Themes}
	up, err := New().Summarize(context.Background(), strata.SummaryRequest{Level: 2, Budget: 100,
		Children: []strata.Node{child, child}, Tokenizer: tok})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(up.Text, "Decision: a daily") && !strings.Contains(up.Text, "Maya: Decision: a daily") {
		t.Fatalf("level 2 reads Decision as a speaker:\n%s", up.Text)
	}
}
