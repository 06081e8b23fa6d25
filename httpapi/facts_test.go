package httpapi

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/strata-memory/strata"
)

// factTurns is a conversation of 40 turns where Ana says where she lives
// at turn 3 (ext_id t2) and that she moved at turn 34 (ext_id t33); the
// other turns are small talk.
func factTurns() []map[string]any {
	base := time.Date(2023, 5, 8, 9, 0, 0, 0, time.UTC)
	var out []map[string]any
	for i := range 40 {
		content := []string{"Ok.", "Sure, sounds good.", "Right.", "Thanks!"}[i%4]
		switch i {
		case 2:
			content = "I live in Lisbon near the river."
		case 33:
			content = "I moved to Porto for the new lab."
		}
		role, name := "user", "Ana"
		if i%2 == 1 {
			role, name = "assistant", "Bo"
		}
		if i == 33 {
			role, name = "user", "Ana"
		}
		out = append(out, map[string]any{"ext_id": fmt.Sprintf("t%d", i), "role": role, "name": name,
			"content": content, "time": base.Add(time.Duration(i) * time.Hour).Format(time.RFC3339)})
	}
	return out
}

// TestContextFacts: POST .../context with "facts": true carries the
// current learning that bears on the query, with the turn it came from,
// and not the superseded one, reading the learnings no pass has read yet
// first; without it, no known facts.
func TestContextFacts(t *testing.T) {
	ts := newServer(t, Options{})
	if code, data := call(t, ts, "POST", "/v1/conversations/c1/turns", map[string]any{"turns": factTurns()}, nil); code != 200 {
		t.Fatalf("append: %d %s", code, data)
	}
	ask := func(facts bool) []strata.Item {
		t.Helper()
		body := fmt.Sprintf(`{"query": "Where does Ana live, Lisbon or Porto?", "budget": 600, "facts": %v}`, facts)
		var pkg strata.Package
		if code, data := call(t, ts, "POST", "/v1/conversations/c1/context", body, &pkg); code != 200 {
			t.Fatalf("context: %d %s", code, data)
		}
		if pkg.Tokens > 600 {
			t.Errorf("%d tokens over a budget of 600", pkg.Tokens)
		}
		var out []strata.Item
		for _, it := range pkg.Items {
			if it.Reason == strata.ReasonFact {
				out = append(out, it)
			}
		}
		return out
	}
	if got := ask(false); len(got) != 0 {
		t.Errorf("a package not asked for facts carries %+v", got)
	}
	got := ask(true)
	var texts []string
	for _, it := range got {
		texts = append(texts, it.Text)
	}
	if len(got) != 1 || got[0].Kind != strata.KindLearning || got[0].ExtID != "t33" || got[0].FirstSeq != 34 ||
		!strings.Contains(got[0].Text, "Ana moved to Porto") {
		t.Fatalf("known facts %q (%+v): want the current one, that Ana moved to Porto, from turn 34 (t33), alone", texts, got)
	}
	// An unknown conversation is still 404 when facts are asked.
	if code, data := call(t, ts, "POST", "/v1/conversations/nope/context", `{"budget": 600, "facts": true}`, nil); code != 404 {
		t.Errorf("facts of an unknown conversation: %d %s", code, data)
	}
}

// TestOpenAPIFacts: the OpenAPI document, generated from the request
// types, offers the facts option of the context route.
func TestOpenAPIFacts(t *testing.T) {
	ts := newServer(t, Options{})
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]struct {
					Type string `json:"type"`
				} `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if code, data := call(t, ts, "GET", "/openapi.json", nil, &doc); code != 200 {
		t.Fatalf("openapi.json: %d %s", code, data)
	}
	if got := doc.Components.Schemas["ContextRequest"].Properties["facts"].Type; got != "boolean" {
		t.Errorf("ContextRequest.facts is typed %q in /openapi.json, want boolean", got)
	}
}
