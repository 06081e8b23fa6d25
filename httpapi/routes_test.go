package httpapi

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/client"
)

// status is the HTTP status of a client error (0 if err is not one).
func status(err error) int {
	var se *client.Error
	if errors.As(err, &se) {
		return se.Status
	}
	return 0
}

// TestReadRoutes drives tree, expand, search, zoom, stats, pin and the
// learnings routes over a conversation spanning several days, through the
// Go client.
func TestReadRoutes(t *testing.T) {
	ctx := context.Background()
	ts := newServer(t, Options{})
	c := client.New(ts.URL, "", ts.Client())
	base := time.Date(2023, 5, 8, 9, 0, 0, 0, time.UTC)
	var in []client.Turn
	for i := 0; i < 120; i++ {
		content := []string{"Ok.", "Sure, sounds good.", "Right.", "The tomatoes in the garden are ripening."}[i%4]
		if i == 3 {
			content = "Jon's job is teaching at the school now."
		}
		in = append(in, client.Turn{ExtID: fmt.Sprintf("t%d", i), Role: []strata.Role{strata.RoleUser, strata.RoleAssistant}[i%2],
			Name: []string{"Jon", "Ana"}[i%2], Content: content, Time: base.Add(time.Duration(i) * 3 * time.Hour)})
	}
	if res, err := c.Append(ctx, "c1", in); err != nil || res.Nodes == 0 {
		t.Fatalf("append: %+v %v", res, err)
	}
	if _, err := c.Append(ctx, "c2", in[:2]); err != nil {
		t.Fatal(err)
	}

	// Every turn comes back whole, page by page, whatever its tier.
	var seen []strata.Turn
	for from, pages := int64(0), 0; ; pages++ {
		page, err := c.Turns(ctx, "c1", from, 0, 50)
		if err != nil || len(page.Turns) > 50 {
			t.Fatalf("turns from %d: %d turns, %v", from, len(page.Turns), err)
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
		if tn.Seq != int64(i+1) || tn.ExtID != in[i].ExtID || tn.Content != in[i].Content {
			t.Fatalf("turn %d: seq %d ext_id %q content %q, want %+v", i+1, tn.Seq, tn.ExtID, tn.Content, in[i])
		}
	}
	if few, err := c.Turns(ctx, "c1", 10, 12, 0); err != nil || len(few.Turns) != 3 || few.Turns[0].Seq != 10 || few.Next != 0 {
		t.Errorf("turns 10-12: %+v %v", few, err)
	}
	for _, tc := range []struct {
		conv     string
		from, to int64
		limit    int
		want     int
	}{{"nope", 0, 0, 0, 404}, {"c1", 0, 0, 5000, 400}, {"c1", 9, 3, 0, 400}} {
		if _, err := c.Turns(ctx, tc.conv, tc.from, tc.to, tc.limit); status(err) != tc.want {
			t.Errorf("turns %+v: %v, want %d", tc, err, tc.want)
		}
	}
	if code, data := call(t, ts, "GET", "/v1/conversations/c1/turns?from=x", nil, nil); code != 400 {
		t.Errorf("turns from=x: %d %s, want 400", code, data)
	}

	tree, err := c.Tree(ctx, "c1")
	if err != nil || len(tree.Nodes) == 0 || tree.Turns != 120 {
		t.Fatalf("tree: %+v %v", tree, err)
	}
	n := tree.Nodes[len(tree.Nodes)-1]
	exp, err := c.Expand(ctx, n.ID, "c1")
	if err != nil || exp.Node.ID != n.ID || int64(len(exp.Turns)) != n.LastSeq-n.FirstSeq+1 || exp.Turns[0].Seq != n.FirstSeq {
		t.Fatalf("expand %s (turns %d-%d): %+v %v", n.ID, n.FirstSeq, n.LastSeq, exp.Node, err)
	}
	if _, err := c.Expand(ctx, n.ID, "c2"); status(err) != 404 {
		t.Errorf("expand in another conversation: %v", err)
	}

	hits, err := c.Search(ctx, "c1", "tomatoes", 3)
	if err != nil || len(hits) != 3 {
		t.Fatalf("search: %+v %v", hits, err)
	}
	for _, h := range hits {
		if h.Conversation != "c1" || !strings.Contains(strings.ToLower(h.Text), "tomatoes") {
			t.Errorf("search hit %+v", h)
		}
	}
	if _, err := c.Search(ctx, "", "", 0); status(err) != 400 || !strings.Contains(err.Error(), "query.q") {
		t.Errorf("empty query: %v", err)
	}

	z, err := c.Zoom(ctx, "c1", "2023-05-09", time.Time{})
	if err != nil || z.Turns != 8 || len(z.Items) != 8 || z.Period != "2023-05-09" {
		t.Fatalf("zoom: %+v %v", z, err)
	}
	if _, err := c.Zoom(ctx, "c1", "not a period", time.Time{}); status(err) != 400 {
		t.Errorf("zoom on nonsense: %v", err)
	}

	st, err := c.Stats(ctx)
	if err != nil || st.Turns != 122 || st.Conversations != 2 || st.Nodes == 0 || st.Namespace != strata.DefaultNamespace {
		t.Fatalf("stats: %+v %v", st, err)
	}

	// Without importance, pin pins (importance 1).
	var pinned strata.Turn
	if code, data := call(t, ts, "POST", "/v1/conversations/c1/turns/5/pin", nil, &pinned); code != 200 || pinned.Seq != 5 || !pinned.Pinned() {
		t.Fatalf("pin: %d %s", code, data)
	}
	if pinned, err := c.Pin(ctx, "c1", 5, 0); err != nil || pinned.Seq != 5 || pinned.Pinned() {
		t.Fatalf("unpin: %+v %v", pinned, err)
	}
	if _, err := c.Pin(ctx, "c1", 999, 1); status(err) != 404 {
		t.Errorf("pin past the end: %v", err)
	}

	ls, err := c.Learnings(ctx, "c1", "")
	if err != nil {
		t.Fatalf("learnings: %v", err)
	}
	var job *strata.Learning
	for i, l := range ls {
		if l.Subject == "jon|job" {
			job = &ls[i]
		}
	}
	if job == nil {
		t.Fatalf("no learning about Jon's job in %+v", ls)
	}
	if l, err := c.ConfirmLearning(ctx, job.ID); err != nil || l.Status != strata.LearningConfirmed {
		t.Fatalf("confirm: %+v %v", l, err)
	}
	if l, err := c.RejectLearning(ctx, job.ID); err != nil || l.Status != strata.LearningRejected {
		t.Fatalf("reject: %+v %v", l, err)
	}
	if ls, err := c.Learnings(ctx, "c1", "rejected"); err != nil || len(ls) != 1 || ls[0].ID != job.ID {
		t.Fatalf("rejected learnings: %+v %v", ls, err)
	}
	if _, err := c.ConfirmLearning(ctx, 99999); status(err) != 404 {
		t.Errorf("confirm an unknown learning: %v", err)
	}
}
