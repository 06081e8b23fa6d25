package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/client"
	"github.com/strata-memory/strata/extractive"
	"github.com/strata-memory/strata/httpapi"
	"github.com/strata-memory/strata/httpapi/wire"
	"github.com/strata-memory/strata/sqlite"
)

// serve starts a server with tokens required and returns its address and
// a token of namespace ns.
func serve(t *testing.T) (string, string, string) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "strata.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	m, err := strata.New(strata.Config{Store: st, Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New()})
	if err != nil {
		t.Fatal(err)
	}
	var secrets []string
	for _, ns := range []string{"a", "b"} {
		secret, tok, err := strata.NewToken(ns, "", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if err := st.PutToken(ctx, tok); err != nil {
			t.Fatal(err)
		}
		secrets = append(secrets, secret)
	}
	s, err := httpapi.New(m, httpapi.Options{Tokens: st, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	s.SetReady(true)
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return ts.URL, secrets[0], secrets[1]
}

func TestClient(t *testing.T) {
	ctx := context.Background()
	url, a, b := serve(t)
	c := client.New(url, a, nil)
	turns := []client.Turn{
		{ExtID: "m1", Role: strata.RoleUser, Name: "Ana", Content: "We land in Lisbon on 14 June; book the hotel near Alfama.",
			Time: time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC)},
		{ExtID: "m2", Role: strata.RoleAssistant, Content: "Booked Casa Alfama for 14-18 June, confirmation LX-4471.",
			Time: time.Date(2025, 6, 1, 9, 1, 0, 0, time.UTC)},
	}
	res, err := c.Append(ctx, "trip", turns)
	if err != nil || res.Added != 2 {
		t.Fatalf("Append = %+v, %v", res, err)
	}
	if res, err := c.Append(ctx, "trip", turns[1:]); err != nil || res.Added != 0 || res.Skipped != 1 {
		t.Errorf("Append again = %+v, %v; want it skipped", res, err)
	}
	pkg, err := c.Context(ctx, "trip", client.ContextRequest{Query: "hotel confirmation", Budget: 300})
	if err != nil || pkg.Tokens > 300 || !strings.Contains(pkg.Rendered, "LX-4471") || len(pkg.Items) == 0 {
		t.Fatalf("Context = %+v, %v", pkg, err)
	}
	hits, err := c.Search(ctx, "trip", "Alfama", 5)
	if err != nil || len(hits) == 0 || hits[0].Conversation != "trip" {
		t.Errorf("Search = %+v, %v", hits, err)
	}
	cs, err := c.Conversations(ctx)
	if err != nil || len(cs) != 1 || cs[0].ID != "trip" || cs[0].Turns != 2 {
		t.Errorf("Conversations = %+v, %v", cs, err)
	}

	// Errors come back as strata's codes.
	if _, err := c.Conversation(ctx, "nope"); strata.ErrorCode(err) != strata.ENOTFOUND {
		t.Errorf("an unknown conversation: %v (code %s), want ENOTFOUND", err, strata.ErrorCode(err))
	}
	var se *client.Error
	if _, err := c.Context(ctx, "trip", client.ContextRequest{Budget: -1}); !errors.As(err, &se) || se.Status != 400 || strata.ErrorCode(err) != strata.EINVALID || !strings.Contains(err.Error(), "budget") {
		t.Errorf("a negative budget: %v", err)
	}
	if _, err := client.New(url, "strata_wrong", nil).Conversations(ctx); !errors.As(err, &se) || se.Status != 401 {
		t.Errorf("a wrong token: %v", err)
	}
	// Another namespace sees nothing, and cannot forget it.
	other := client.New(url, b, nil)
	if _, err := other.Forget(ctx, "trip", ""); strata.ErrorCode(err) != strata.ENOTFOUND {
		t.Errorf("forget from another namespace: %v", err)
	}
	d, err := c.Forget(ctx, "trip", "done")
	if err != nil || d.Turns != 2 || d.Reason != "done" {
		t.Fatalf("Forget = %+v, %v", d, err)
	}
	if _, err := c.Conversation(ctx, "trip"); strata.ErrorCode(err) != strata.ENOTFOUND {
		t.Errorf("after Forget: %v", err)
	}
}

// wantError checks that err is a *client.Error of the HTTP status whose
// strata code is code.
func wantError(t *testing.T, what string, err error, status int, code string) {
	t.Helper()
	var se *client.Error
	if !errors.As(err, &se) || se.Status != status || strata.ErrorCode(err) != code {
		t.Errorf("%s: %v (code %s), want a client.Error %d with code %s", what, err, strata.ErrorCode(err), status, code)
	}
}

// TestClientRoutes calls every route the client has beyond append,
// context, search, list and forget, each with a case the server refuses.
func TestClientRoutes(t *testing.T) {
	ctx := context.Background()
	url, a, b := serve(t)
	c, other := client.New(url, a, nil), client.New(url, b, nil)

	// A conversation created before any turn, with its policy and zone.
	diary, err := c.CreateConversation(ctx, "diary", "calendar", "Europe/Lisbon")
	if err != nil || diary.ID != "diary" || diary.Policy != "calendar" || diary.TimeZone != "Europe/Lisbon" || diary.Turns != 0 {
		t.Fatalf("CreateConversation = %+v, %v", diary, err)
	}
	if again, err := c.CreateConversation(ctx, "diary", "calendar", "Europe/Lisbon"); err != nil || again.ID != "diary" {
		t.Errorf("CreateConversation again with the same settings = %+v, %v", again, err)
	}
	_, err = c.CreateConversation(ctx, "diary", "sessions", "")
	wantError(t, "CreateConversation with another policy", err, 409, strata.ECONFLICT)
	_, err = c.CreateConversation(ctx, "x", "no-such-policy", "")
	wantError(t, "CreateConversation with an unknown policy", err, 400, strata.EINVALID)
	_, err = c.AppendBatch(ctx, "diary", wire.AppendRequest{Policy: "sessions",
		Turns: []client.Turn{{Role: strata.RoleUser, Content: "Dear diary."}}})
	wantError(t, "AppendBatch with a policy other than the conversation's", err, 409, strata.ECONFLICT)
	if res, err := c.AppendBatch(ctx, "diary", wire.AppendRequest{Policy: "calendar", TimeZone: "Europe/Lisbon",
		Turns: []client.Turn{{Role: strata.RoleUser, Content: "Dear diary.", Time: time.Date(2023, 5, 8, 20, 0, 0, 0, time.UTC)}}}); err != nil || res.Added != 1 {
		t.Errorf("AppendBatch with the conversation's own settings = %+v, %v", res, err)
	}

	// 120 turns three hours apart: 2023-05-08 09:00 to 2023-05-23 06:00.
	base := time.Date(2023, 5, 8, 9, 0, 0, 0, time.UTC)
	var turns []client.Turn
	for i := range 120 {
		content := []string{"Ok.", "Sure, sounds good.", "Right.", "The tomatoes in the garden are ripening."}[i%4]
		if i == 3 {
			content = "Jon's job is teaching at the school now."
		}
		turns = append(turns, client.Turn{ExtID: fmt.Sprintf("t%d", i), Role: []strata.Role{strata.RoleUser, strata.RoleAssistant}[i%2],
			Name: []string{"Jon", "Ana"}[i%2], Content: content, Time: base.Add(time.Duration(i) * 3 * time.Hour)})
	}
	if res, err := c.Append(ctx, "c1", turns); err != nil || res.Added != 120 || res.Nodes == 0 {
		t.Fatalf("Append = %+v, %v", res, err)
	}

	tree, err := c.Tree(ctx, "c1")
	if err != nil || tree.Conversation != "c1" || tree.Turns != 120 || len(tree.Nodes) == 0 {
		t.Fatalf("Tree = %+v, %v", tree, err)
	}
	_, err = other.Tree(ctx, "c1")
	wantError(t, "Tree of another namespace's conversation", err, 404, strata.ENOTFOUND)

	z, err := c.Zoom(ctx, "c1", "2023-05-09", time.Time{})
	if err != nil || z.Period != "2023-05-09" || z.Turns != 8 || len(z.Items) != 8 || z.Conversation != "c1" {
		t.Fatalf("Zoom 2023-05-09 = %+v, %v", z, err)
	}
	// "yesterday" counts from the newest turn (2023-05-23), or from now.
	if z, err := c.Zoom(ctx, "c1", "yesterday", time.Time{}); err != nil || z.Period != "2023-05-22" {
		t.Errorf("Zoom yesterday = %q, %v; want 2023-05-22", z.Period, err)
	}
	if z, err := c.Zoom(ctx, "c1", "yesterday", time.Date(2023, 5, 10, 12, 0, 0, 0, time.UTC)); err != nil || z.Period != "2023-05-09" || z.Turns != 8 {
		t.Errorf("Zoom yesterday from 2023-05-10 = %q (%d turns), %v; want 2023-05-09", z.Period, z.Turns, err)
	}
	_, err = c.Zoom(ctx, "c1", "not a period", time.Time{})
	wantError(t, "Zoom on nonsense", err, 400, strata.EINVALID)

	n := tree.Nodes[len(tree.Nodes)-1]
	e, err := c.Expand(ctx, n.ID, "c1")
	if err != nil || e.Node.ID != n.ID || int64(len(e.Turns)) != n.LastSeq-n.FirstSeq+1 || e.Turns[0].Seq != n.FirstSeq {
		t.Fatalf("Expand %s (turns %d-%d) = node %s, %d turns, %v", n.ID, n.FirstSeq, n.LastSeq, e.Node.ID, len(e.Turns), err)
	}
	if e, err := c.Expand(ctx, n.ID, ""); err != nil || e.Node.ID != n.ID {
		t.Errorf("Expand without a conversation = %s, %v", e.Node.ID, err)
	}
	_, err = c.Expand(ctx, n.ID, "diary")
	wantError(t, "Expand in another conversation", err, 404, strata.ENOTFOUND)

	st, err := c.Stats(ctx)
	if err != nil || st.Namespace != "a" || st.Turns != 121 || st.Conversations != 2 || st.Nodes == 0 || st.Tokenizer == "" {
		t.Fatalf("Stats = %+v, %v", st, err)
	}
	if st, err := other.Stats(ctx); err != nil || st.Namespace != "b" || st.Turns != 0 {
		t.Errorf("Stats of another namespace = %+v, %v", st, err)
	}

	if tr, err := c.Pin(ctx, "c1", 5, 1); err != nil || tr.Seq != 5 || !tr.Pinned() {
		t.Fatalf("Pin = %+v, %v", tr, err)
	}
	if tr, err := c.Pin(ctx, "c1", 5, 0); err != nil || tr.Seq != 5 || tr.Pinned() {
		t.Errorf("Pin with importance 0 (unpin) = %+v, %v", tr, err)
	}
	_, err = c.Pin(ctx, "c1", 999, 1)
	wantError(t, "Pin past the end", err, 404, strata.ENOTFOUND)
	_, err = c.Pin(ctx, "c1", 5, 2)
	wantError(t, "Pin with importance 2", err, 400, strata.EINVALID)

	ls, err := c.Learnings(ctx, "c1", "")
	if err != nil {
		t.Fatalf("Learnings: %v", err)
	}
	var job *strata.Learning
	for i, l := range ls {
		if l.Subject == "jon|job" {
			job = &ls[i]
		}
	}
	if job == nil || job.Conversation != "c1" {
		t.Fatalf("no learning about Jon's job in %+v", ls)
	}
	if l, err := c.ConfirmLearning(ctx, job.ID); err != nil || l.ID != job.ID || l.Status != strata.LearningConfirmed {
		t.Fatalf("ConfirmLearning = %+v, %v", l, err)
	}
	if l, err := c.RejectLearning(ctx, job.ID); err != nil || l.ID != job.ID || l.Status != strata.LearningRejected {
		t.Fatalf("RejectLearning = %+v, %v", l, err)
	}
	if ls, err := c.Learnings(ctx, "c1", strata.LearningRejected); err != nil || len(ls) != 1 || ls[0].ID != job.ID {
		t.Errorf("Learnings rejected = %+v, %v", ls, err)
	}
	if ls, err := c.Learnings(ctx, "c1", ""); err != nil || slices.ContainsFunc(ls, func(l strata.Learning) bool { return l.ID == job.ID }) {
		t.Errorf("Learnings by default lists the rejected one: %+v, %v", ls, err)
	}
	_, err = c.Learnings(ctx, "c1", "maybe")
	wantError(t, "Learnings of an unknown status", err, 400, strata.EINVALID)
	_, err = other.ConfirmLearning(ctx, job.ID)
	wantError(t, "ConfirmLearning of another namespace's learning", err, 404, strata.ENOTFOUND)
	_, err = c.RejectLearning(ctx, 99999)
	wantError(t, "RejectLearning of an unknown learning", err, 404, strata.ENOTFOUND)
}

// TestClientCompact compacts a message list statelessly and with a
// conversation whose checkpoint the server keeps.
func TestClientCompact(t *testing.T) {
	ctx := context.Background()
	url, a, _ := serve(t)
	c := client.New(url, a, nil)
	var msgs []map[string]any
	for i := range 10 {
		msgs = append(msgs,
			map[string]any{"role": "user", "content": fmt.Sprintf("Step %d: deploy service s%d to port %d.", i, i, 8000+i)},
			map[string]any{"role": "assistant", "content": fmt.Sprintf("Deployed s%d on port %d; health check passed.", i, 8000+i)})
	}
	raw, err := json.Marshal(msgs)
	if err != nil {
		t.Fatal(err)
	}
	req := client.CompactRequest{Messages: raw, Force: true, KeepRecentTokens: 60}
	res, err := c.Compact(ctx, req)
	if err != nil || !res.Stats.Compacted || res.Stats.CompactionCount != 1 || res.Stats.MessagesCompacted == 0 ||
		!strings.Contains(string(res.Messages), "port 8009") {
		t.Fatalf("Compact = %+v, %v", res.Stats, err)
	}
	var back []json.RawMessage
	if err := json.Unmarshal(res.Messages, &back); err != nil || len(back) >= len(msgs) {
		t.Fatalf("the compacted list: %d messages, %v", len(back), err)
	}
	// Stateless: nothing was remembered.
	if cs, err := c.Conversations(ctx); err != nil || len(cs) != 0 {
		t.Errorf("Conversations after a stateless Compact = %+v, %v", cs, err)
	}

	res, err = c.CompactConversation(ctx, "agent", req)
	if err != nil || !res.Stats.Compacted || res.Stats.CompactionCount != 1 {
		t.Fatalf("CompactConversation = %+v, %v", res.Stats, err)
	}
	if conv, err := c.Conversation(ctx, "agent"); err != nil || conv.Turns != int64(res.Stats.MessagesCompacted) {
		t.Errorf("the compacted span as turns: %+v, %v; want %d turns", conv, err, res.Stats.MessagesCompacted)
	}
	res, err = c.CompactConversation(ctx, "agent", client.CompactRequest{Messages: res.Messages, Force: true, KeepRecentTokens: 30, NoRemember: true})
	if err != nil || res.Stats.CompactionCount != 2 || !res.Stats.Update {
		t.Fatalf("CompactConversation again = %+v, %v; want count 2 updating the kept checkpoint", res.Stats, err)
	}

	_, err = c.Compact(ctx, client.CompactRequest{Provider: "gemini", Messages: raw})
	wantError(t, "Compact with an unknown provider", err, 400, strata.EINVALID)
	_, err = c.CompactConversation(ctx, "agent", client.CompactRequest{Messages: json.RawMessage(`[{"content":"no role"}]`)})
	wantError(t, "CompactConversation of a malformed list", err, 400, strata.EINVALID)
}
