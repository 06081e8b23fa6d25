package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestTokenCommands creates a token (the secret printed once, only its
// hash stored), lists it, revokes it, and refuses a create without a
// namespace.
func TestTokenCommands(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s.db")
	if _, _, err := run(t, db, "", "token", "create"); err == nil || !strings.Contains(err.Error(), "--namespace") {
		t.Fatalf("create without --namespace: %v", err)
	}
	out := mustRun(t, db, "token", "create", "--namespace", "team-a", "--label", "ci", "--json")
	var c struct{ Token, ID, Namespace string }
	if err := json.Unmarshal([]byte(out), &c); err != nil || !strings.HasPrefix(c.Token, "strata_") || c.Namespace != "team-a" {
		t.Fatalf("create: %s (%v)", out, err)
	}
	list := mustRun(t, db, "token", "list", "--json")
	if strings.Contains(list, c.Token) || !strings.Contains(list, c.ID) || !strings.Contains(list, `"team-a"`) {
		t.Fatalf("list shows the secret or misses the token:\n%s", list)
	}
	if out := mustRun(t, db, "token", "list", "--namespace", "team-b"); strings.TrimSpace(out) != "" {
		t.Errorf("list of another namespace: %q", out)
	}
	if out := mustRun(t, db, "token", "revoke", c.ID); !strings.Contains(out, "revoked") {
		t.Errorf("revoke: %q", out)
	}
	if out := mustRun(t, db, "token", "list"); !strings.Contains(out, "revoked") {
		t.Errorf("list after revoke: %q", out)
	}
	if _, _, err := run(t, db, "", "token", "revoke", "tok_nope"); err == nil {
		t.Errorf("revoking an unknown token succeeded")
	}
}
