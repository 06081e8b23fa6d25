package storetest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/strata-memory/strata"
)

// RunTokens runs the conformance tests of a strata.TokenStore; open
// returns an empty store.
func RunTokens(t *testing.T, open func(t *testing.T) strata.TokenStore) {
	ctx := context.Background()
	st := open(t)
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
