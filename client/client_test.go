package client_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/client"
	"github.com/strata-memory/strata/extractive"
	"github.com/strata-memory/strata/httpapi"
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
