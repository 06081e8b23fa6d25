package client_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/client"
)

// TestClientBrowse checks the routes a browser reads a long conversation
// with: a level's nodes a window at a time, marking a day important, and
// writing a summary again; each in the token's namespace alone.
func TestClientBrowse(t *testing.T) {
	ctx := context.Background()
	url, a, b := serve(t)
	c := client.New(url, a, nil)
	start := time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC)
	var turns []client.Turn
	for i := range 250 {
		turns = append(turns, client.Turn{ExtID: fmt.Sprint("m", i), Role: strata.RoleUser, Name: "Ana",
			Content: fmt.Sprintf("Note %d about the garden and the bike.", i), Time: start.Add(time.Duration(i) * time.Hour)})
	}
	if _, err := c.Append(ctx, "long", turns); err != nil {
		t.Fatal(err)
	}
	// Turns 35..64 meet micro-chunks 31-40, 41-50, 51-60 and 61-70.
	p, err := c.Nodes(ctx, "long", 1, 35, 64, 0)
	if err != nil {
		t.Fatal(err)
	}
	var spans [][2]int64
	for _, n := range p.Nodes {
		spans = append(spans, [2]int64{n.FirstSeq, n.LastSeq})
	}
	if fmt.Sprint(spans) != "[[31 40] [41 50] [51 60] [61 70]]" || p.Next != 0 || p.Name != "micro" || p.Level != 1 {
		t.Errorf("Nodes(level 1, 35..64) = %s %v next %d; want micro chunks 31..70, no next page", p.Name, spans, p.Next)
	}
	p, err = c.Nodes(ctx, "long", 1, 35, 64, 2)
	if err != nil || len(p.Nodes) != 2 || p.Next != 51 {
		t.Errorf("Nodes(limit 2) = %d nodes, next %d, %v; want 2 and next 51", len(p.Nodes), p.Next, err)
	}
	p, err = c.Nodes(ctx, "long", 3, 0, 0, 0)
	if err != nil || len(p.Nodes) != 2 || p.Nodes[0].FirstSeq != 1 || p.Nodes[1].LastSeq != 200 || p.Name != "macro" {
		t.Errorf("Nodes(level 3) = %+v, %v; want macros 1-100 and 101-200", p, err)
	}
	if _, err := c.Nodes(ctx, "long", 4, 0, 0, 0); strata.ErrorCode(err) != strata.EINVALID {
		t.Errorf("Nodes(level 4) error = %v; want EINVALID", err)
	}
	other := client.New(url, b, nil)
	if _, err := other.Nodes(ctx, "long", 1, 0, 0, 0); strata.ErrorCode(err) != strata.ENOTFOUND {
		t.Errorf("another namespace's Nodes error = %v; want ENOTFOUND", err)
	}

	marks, err := c.MarkImportant(ctx, "long", "2025-06-02", true)
	if err != nil || fmt.Sprint(marks) != "[2025-06-02]" {
		t.Errorf("MarkImportant = %v, %v", marks, err)
	}
	if conv, err := c.Conversation(ctx, "long"); err != nil || fmt.Sprint(conv.Important) != "[2025-06-02]" {
		t.Errorf("conversation after the mark = %+v, %v", conv, err)
	}
	if marks, err := c.MarkImportant(ctx, "long", "2025-06-02", false); err != nil || len(marks) != 0 {
		t.Errorf("MarkImportant(false) = %v, %v; want no marks", marks, err)
	}
	if _, err := c.MarkImportant(ctx, "long", "someday", true); strata.ErrorCode(err) != strata.EINVALID {
		t.Errorf("MarkImportant(someday) error = %v; want EINVALID", err)
	}

	before := p.Nodes[0]
	n, err := c.Resummarize(ctx, before.ID)
	if err != nil || n.ID != before.ID || n.Summary == "" || n.FirstSeq != 1 || n.LastSeq != 100 {
		t.Errorf("Resummarize = %+v, %v", n, err)
	}
	if _, err := other.Resummarize(ctx, before.ID); strata.ErrorCode(err) != strata.ENOTFOUND {
		t.Errorf("another namespace's Resummarize error = %v; want ENOTFOUND", err)
	}
}
