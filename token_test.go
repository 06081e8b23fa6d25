package strata_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/storetest"
)

// TestTokens: a token authenticates to its namespace until revoked; a
// wrong, malformed or revoked secret gets the same ENOTFOUND; the store
// keeps no secret.
func TestTokens(t *testing.T) {
	storetest.RunTokens(t, func(t *testing.T) strata.TokenStore {
		st := openNewStore(t, filepath.Join(t.TempDir(), "strata.db"))
		t.Cleanup(func() { st.Close() })
		return st
	})
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
