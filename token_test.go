package strata_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/sqlite"
)

// TestTokens: a token authenticates to its namespace until revoked; a
// wrong, malformed or revoked secret gets the same ENOTFOUND; the store
// keeps no secret.
func TestTokens(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "strata.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	secret, tok, err := strata.NewToken("team-a", "laptop", now)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(secret, strata.TokenPrefix) || strings.Contains(tok.Hash, secret) || tok.Hash != strata.HashToken(secret) {
		t.Fatalf("token %q, record %+v", secret, tok)
	}
	if err := st.PutToken(ctx, tok); err != nil {
		t.Fatal(err)
	}
	other, otherTok, _ := strata.NewToken("team-b", "", now)
	if err := st.PutToken(ctx, otherTok); err != nil {
		t.Fatal(err)
	}
	if err := st.PutToken(ctx, tok); strata.ErrorCode(err) != strata.ECONFLICT {
		t.Errorf("storing the same token twice: %v, want ECONFLICT", err)
	}
	if _, _, err := strata.NewToken("", "", now); strata.ErrorCode(err) != strata.EINVALID {
		t.Errorf("a token without namespace: %v", err)
	}
	got, err := strata.Authenticate(ctx, st, secret)
	if err != nil || got.Namespace != "team-a" || got.ID != tok.ID {
		t.Fatalf("Authenticate = %+v, %v", got, err)
	}
	if got, err := strata.Authenticate(ctx, st, other); err != nil || got.Namespace != "team-b" {
		t.Errorf("the other token: %+v, %v", got, err)
	}
	for _, bad := range []string{"", "strata_nope", secret + "x", strings.TrimPrefix(secret, strata.TokenPrefix), tok.Hash} {
		if _, err := strata.Authenticate(ctx, st, bad); strata.ErrorCode(err) != strata.ENOTFOUND || err.Error() != "invalid or revoked token" {
			t.Errorf("Authenticate(%q) = %v, want the one ENOTFOUND error", bad, err)
		}
	}
	if ts, err := st.Tokens(ctx, "team-a"); err != nil || len(ts) != 1 || ts[0].ID != tok.ID {
		t.Errorf("Tokens(team-a) = %+v, %v", ts, err)
	}
	if ts, _ := st.Tokens(ctx, ""); len(ts) != 2 {
		t.Errorf("Tokens() lists %d, want 2", len(ts))
	}
	r, err := st.RevokeToken(ctx, tok.ID, now.Add(time.Hour))
	if err != nil || !r.Revoked.Equal(now.Add(time.Hour)) {
		t.Fatalf("RevokeToken = %+v, %v", r, err)
	}
	if r, _ := st.RevokeToken(ctx, tok.ID, now.Add(2*time.Hour)); !r.Revoked.Equal(now.Add(time.Hour)) {
		t.Errorf("revoking again moved the time to %v", r.Revoked)
	}
	if _, err := strata.Authenticate(ctx, st, secret); strata.ErrorCode(err) != strata.ENOTFOUND {
		t.Errorf("a revoked token authenticates: %v", err)
	}
	if _, err := st.RevokeToken(ctx, "tok_nope", now); strata.ErrorCode(err) != strata.ENOTFOUND {
		t.Errorf("revoking an unknown token: %v", err)
	}
}

// TestForNamespace: a Memory for another namespace over the same store
// sees none of the first namespace's conversations, and the first none of
// its own.
func TestForNamespace(t *testing.T) {
	ctx := context.Background()
	m := newMemory(t, strata.CharEstimator{})
	b, err := m.ForNamespace("team-b")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.ForNamespace(""); strata.ErrorCode(err) != strata.EINVALID {
		t.Errorf("ForNamespace(\"\"): %v", err)
	}
	ingest(t, m, "shared-id", []strata.Turn{{ExtID: "a1", Role: strata.RoleUser, Content: "alpha secret of the first namespace"}})
	ingest(t, b, "shared-id", []strata.Turn{{ExtID: "b1", Role: strata.RoleUser, Content: "beta note of the second"}})
	for _, c := range []struct {
		m          *strata.Memory
		mine, none string
	}{{m, "alpha", "beta"}, {b, "beta", "alpha"}} {
		if hits, err := c.m.Search(ctx, "", c.none, 10); err != nil || len(hits) != 0 {
			t.Errorf("namespace %s finds %q: %d hits (%v)", c.m.Namespace(), c.none, len(hits), err)
		}
		if hits, err := c.m.Search(ctx, "", c.mine, 10); err != nil || len(hits) != 1 {
			t.Errorf("namespace %s: %q gives %d hits (%v), want 1", c.m.Namespace(), c.mine, len(hits), err)
		}
		cs, err := c.m.Conversations(ctx)
		if err != nil || len(cs) != 1 || cs[0].Turns != 1 {
			t.Errorf("namespace %s: conversations %+v (%v)", c.m.Namespace(), cs, err)
		}
	}
}
