package stratamcp_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	stratamcp "github.com/strata-memory/strata/mcp"
)

// TestContextFacts: the context tool with facts carries the current
// learning that bears on the query, from the turn it came from, in its
// text and its items, and not the superseded one; the learnings no pass
// has read are read first. Without facts, none.
func TestContextFacts(t *testing.T) {
	cs := connect(t)
	base := time.Date(2023, 5, 8, 9, 0, 0, 0, time.UTC)
	var turns []map[string]any
	for i := range 40 {
		content := []string{"Ok.", "Sure, sounds good.", "Right.", "Thanks!"}[i%4]
		role, name := "user", "Ana"
		if i%2 == 1 {
			role, name = "assistant", "Bo"
		}
		switch i {
		case 2:
			content = "I live in Lisbon near the river."
		case 33:
			content, role, name = "I moved to Porto for the new lab.", "user", "Ana"
		}
		turns = append(turns, map[string]any{"ext_id": fmt.Sprintf("t%d", i), "role": role, "name": name,
			"content": content, "time": base.Add(time.Duration(i) * time.Hour).Format(time.RFC3339)})
	}
	var rem strata.IngestResult
	call(t, cs, "remember", map[string]any{"conversation": "c", "turns": turns}, &rem)
	ask := func(facts bool) (stratamcp.ContextOut, string) {
		t.Helper()
		var pkg stratamcp.ContextOut
		res := call(t, cs, "context", map[string]any{"conversation": "c", "query": "Where does Ana live, Lisbon or Porto?",
			"budget": 600, "facts": facts}, &pkg)
		if pkg.Tokens > 600 {
			t.Errorf("%d tokens over a budget of 600", pkg.Tokens)
		}
		return pkg, text(res)
	}
	pkg, _ := ask(false)
	for _, it := range pkg.Items {
		if it.Reason == strata.ReasonFact {
			t.Errorf("a package not asked for facts carries %+v", it)
		}
	}
	pkg, all := ask(true)
	var facts []stratamcp.Item
	for _, it := range pkg.Items {
		if it.Reason == strata.ReasonFact {
			facts = append(facts, it)
		}
	}
	if len(facts) != 1 || facts[0].Kind != strata.KindLearning || facts[0].ExtID != "t33" || facts[0].FirstSeq != 34 {
		t.Fatalf("fact items %+v: want one learning from turn 34 (t33)", facts)
	}
	if !strings.Contains(pkg.Text, "[known fact, from turn 34] Ana moved to Porto") || strings.Contains(pkg.Text, "known fact, from turn 3]") {
		t.Errorf("text: want the fact that Ana moved to Porto and not the superseded one:\n%s", pkg.Text)
	}
	if !strings.Contains(all, "- learning from turn 34, ext_id t33, fact") {
		t.Errorf("provenance does not name the fact's turn:\n%s", all)
	}
}
