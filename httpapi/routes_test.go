package httpapi

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/strata-memory/strata"
)

// TestReadRoutes drives tree, expand, search, zoom, stats, pin and the
// learnings routes over a conversation spanning several days.
func TestReadRoutes(t *testing.T) {
	ts := newServer(t, Options{})
	base := time.Date(2023, 5, 8, 9, 0, 0, 0, time.UTC)
	var in []map[string]any
	for i := 0; i < 120; i++ {
		content := []string{"Ok.", "Sure, sounds good.", "Right.", "The tomatoes in the garden are ripening."}[i%4]
		if i == 3 {
			content = "Jon's job is teaching at the school now."
		}
		in = append(in, map[string]any{"ext_id": fmt.Sprintf("t%d", i), "role": []string{"user", "assistant"}[i%2],
			"name": []string{"Jon", "Ana"}[i%2], "content": content, "time": base.Add(time.Duration(i) * 3 * time.Hour)})
	}
	var res strata.IngestResult
	if code, data := call(t, ts, "POST", "/v1/conversations/c1/turns", map[string]any{"turns": in}, &res); code != 200 || res.Nodes == 0 {
		t.Fatalf("append: %d %s", code, data)
	}
	call(t, ts, "POST", "/v1/conversations/c2/turns", map[string]any{"turns": in[:2]}, nil)

	// Every turn comes back whole, page by page, whatever its tier.
	var seen []strata.Turn
	for from, pages := int64(0), 0; ; pages++ {
		var page turnsOut
		if code, data := call(t, ts, "GET", fmt.Sprintf("/v1/conversations/c1/turns?from=%d&limit=50", from), nil, &page); code != 200 || len(page.Turns) > 50 {
			t.Fatalf("turns from %d: %d %s", from, code, data)
		}
		seen = append(seen, page.Turns...)
		if page.Next == 0 {
			if pages != 2 {
				t.Errorf("120 turns in %d pages of 50, want 3", pages+1)
			}
			break
		}
		from = page.Next
	}
	if len(seen) != len(in) {
		t.Fatalf("paged %d turns, want %d", len(seen), len(in))
	}
	for i, tn := range seen {
		if tn.Seq != int64(i+1) || tn.ExtID != in[i]["ext_id"] || tn.Content != in[i]["content"] {
			t.Fatalf("turn %d: seq %d ext_id %q content %q, want %v", i+1, tn.Seq, tn.ExtID, tn.Content, in[i])
		}
	}
	var few turnsOut
	if code, data := call(t, ts, "GET", "/v1/conversations/c1/turns?from=10&to=12", nil, &few); code != 200 || len(few.Turns) != 3 || few.Turns[0].Seq != 10 || few.Next != 0 {
		t.Errorf("turns 10-12: %d %s", code, data)
	}
	for path, want := range map[string]int{
		"/v1/conversations/nope/turns":           404,
		"/v1/conversations/c1/turns?limit=5000":  400,
		"/v1/conversations/c1/turns?from=9&to=3": 400,
		"/v1/conversations/c1/turns?from=x":      400,
	} {
		if code, data := call(t, ts, "GET", path, nil, nil); code != want {
			t.Errorf("GET %s: %d %s, want %d", path, code, data, want)
		}
	}

	var tree strata.Tree
	if code, data := call(t, ts, "GET", "/v1/conversations/c1/tree", nil, &tree); code != 200 || len(tree.Nodes) == 0 || tree.Turns != 120 {
		t.Fatalf("tree: %d %s", code, data)
	}
	n := tree.Nodes[len(tree.Nodes)-1]
	var exp struct {
		Node  strata.Node   `json:"node"`
		Turns []strata.Turn `json:"turns"`
	}
	if code, data := call(t, ts, "GET", "/v1/nodes/"+n.ID+"/expand?conversation=c1", nil, &exp); code != 200 ||
		exp.Node.ID != n.ID || int64(len(exp.Turns)) != n.LastSeq-n.FirstSeq+1 || exp.Turns[0].Seq != n.FirstSeq {
		t.Fatalf("expand %s (turns %d-%d): %d %s", n.ID, n.FirstSeq, n.LastSeq, code, data)
	}
	if code, data := call(t, ts, "GET", "/v1/nodes/"+n.ID+"/expand?conversation=c2", nil, nil); code != 404 {
		t.Errorf("expand in another conversation: %d %s", code, data)
	}

	var hits searchOut
	if code, data := call(t, ts, "GET", "/v1/search?q=tomatoes&conversation=c1&k=3", nil, &hits); code != 200 || len(hits.Hits) != 3 {
		t.Fatalf("search: %d %s", code, data)
	}
	for _, h := range hits.Hits {
		if h.Conversation != "c1" || !strings.Contains(strings.ToLower(h.Text), "tomatoes") {
			t.Errorf("search hit %+v", h)
		}
	}
	if code, data := call(t, ts, "GET", "/v1/search?q=", nil, nil); code != 400 || !strings.Contains(string(data), "query.q") {
		t.Errorf("empty query: %d %s", code, data)
	}

	var z zoomOut
	if code, data := call(t, ts, "GET", "/v1/conversations/c1/zoom?when=2023-05-09", nil, &z); code != 200 || z.Turns != 8 || len(z.Items) != 8 || z.Period != "2023-05-09" {
		t.Fatalf("zoom: %d %s", code, data)
	}
	if code, data := call(t, ts, "GET", "/v1/conversations/c1/zoom?when=not+a+period", nil, nil); code != 400 {
		t.Errorf("zoom on nonsense: %d %s", code, data)
	}

	var st statsOut
	if code, data := call(t, ts, "GET", "/v1/stats", nil, &st); code != 200 || st.Turns != 122 || st.Conversations != 2 || st.Nodes == 0 || st.Namespace != strata.DefaultNamespace {
		t.Fatalf("stats: %d %s", code, data)
	}

	var pinned strata.Turn
	if code, data := call(t, ts, "POST", "/v1/conversations/c1/turns/5/pin", nil, &pinned); code != 200 || pinned.Seq != 5 || !pinned.Pinned() {
		t.Fatalf("pin: %d %s", code, data)
	}
	pinned = strata.Turn{}
	if code, data := call(t, ts, "POST", "/v1/conversations/c1/turns/5/pin?importance=0", nil, &pinned); code != 200 || pinned.Seq != 5 || pinned.Pinned() {
		t.Fatalf("unpin: %d %s", code, data)
	}
	if code, data := call(t, ts, "POST", "/v1/conversations/c1/turns/999/pin", nil, nil); code != 404 {
		t.Errorf("pin past the end: %d %s", code, data)
	}

	var ls learningsOut
	if code, data := call(t, ts, "GET", "/v1/conversations/c1/learnings", nil, &ls); code != 200 {
		t.Fatalf("learnings: %d %s", code, data)
	}
	var job *strata.Learning
	for i, l := range ls.Learnings {
		if l.Subject == "jon|job" {
			job = &ls.Learnings[i]
		}
	}
	if job == nil {
		t.Fatalf("no learning about Jon's job in %+v", ls.Learnings)
	}
	var l strata.Learning
	if code, data := call(t, ts, "POST", fmt.Sprintf("/v1/learnings/%d/confirm", job.ID), nil, &l); code != 200 || l.Status != strata.LearningConfirmed {
		t.Fatalf("confirm: %d %s", code, data)
	}
	if code, data := call(t, ts, "POST", fmt.Sprintf("/v1/learnings/%d/reject", job.ID), nil, &l); code != 200 || l.Status != strata.LearningRejected {
		t.Fatalf("reject: %d %s", code, data)
	}
	if code, data := call(t, ts, "GET", "/v1/conversations/c1/learnings?status=rejected", nil, &ls); code != 200 || len(ls.Learnings) != 1 || ls.Learnings[0].ID != job.ID {
		t.Fatalf("rejected learnings: %d %s", code, data)
	}
	if code, data := call(t, ts, "POST", "/v1/learnings/99999/confirm", nil, nil); code != 404 {
		t.Errorf("confirm an unknown learning: %d %s", code, data)
	}
}
