package storecopy_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/postgres"
	"github.com/strata-memory/strata/storecopy"
)

// store is a store that also keeps bearer tokens, as both kinds do.
type store interface {
	strata.Store
	strata.TokenStore
}

// destinations returns an empty SQLite store and, with
// STRATA_TEST_POSTGRES set, an empty PostgreSQL store in a schema of its
// own, by name.
func destinations(t *testing.T) map[string]func(t *testing.T) store {
	out := map[string]func(t *testing.T) store{
		"sqlite": func(t *testing.T) store { return open(t, t.TempDir(), "dst.db") },
	}
	if dsn := os.Getenv("STRATA_TEST_POSTGRES"); dsn != "" {
		out["postgres"] = func(t *testing.T) store {
			st, drop, err := postgres.OpenScratch(context.Background(), dsn, "storecopy")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close(); drop() })
			return st
		}
	} else {
		t.Log("STRATA_TEST_POSTGRES is not set: SQLite to SQLite only")
	}
	return out
}

var nsAt = time.Date(2026, 2, 3, 4, 5, 6, 7, time.UTC)

// namespaceSource builds a store whose namespaces hold what is not a
// conversation: "keys" holds only two tokens, one of them revoked;
// "watch" only a watch state; "agent" only the compaction state of a
// conversation memory does not hold; "default" a conversation, a token
// and the compaction state of another conversation.
func namespaceSource(t *testing.T) store {
	t.Helper()
	ctx := context.Background()
	src := open(t, t.TempDir(), "src.db")
	for _, tc := range []struct{ ns, label string }{{"keys", "ci"}, {"keys", "laptop"}, {"default", "server"}} {
		_, tok, err := strata.NewToken(tc.ns, tc.label, nsAt)
		if err != nil {
			t.Fatal(err)
		}
		if err := src.PutToken(ctx, tok); err != nil {
			t.Fatal(err)
		}
		if tc.label == "laptop" {
			if _, err := src.RevokeToken(ctx, tok.ID, nsAt.Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := src.SaveWatchState(ctx, "watch", "/logs/a.jsonl", strata.WatchState{Offset: 120, Lines: 3, HeadLen: 4, Head: "abcd", Updated: nsAt}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ ns, id string }{{"agent", "live"}, {"default", "live-too"}} {
		if err := src.SaveCompactionState(ctx, c.ns, c.id, strata.CompactionState{Checkpoint: "## Goal\n" + c.id, TurnCount: 12, CompactionCount: 2, Updated: nsAt}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := src.EnsureConversation(ctx, strata.Conversation{Namespace: "default", ID: "c", Policy: "chunks"}); err != nil {
		t.Fatal(err)
	}
	if _, err := src.AppendTurns(ctx, "default", "c", []strata.Turn{{ExtID: "1", Role: strata.RoleUser, Content: "hello", Time: nsAt, Tokens: 1}}); err != nil {
		t.Fatal(err)
	}
	return src
}

// tokensOf lists every token of st, one line each, secrets' hashes
// included.
func tokensOf(t *testing.T, st strata.TokenStore) string {
	t.Helper()
	ts, err := st.Tokens(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, tok := range ts {
		lines = append(lines, strings.Join([]string{tok.ID, tok.Namespace, tok.Label, tok.Hash, tok.Created.Format(time.RFC3339Nano), tok.Revoked.Format(time.RFC3339Nano)}, " "))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// TestCopyNamespacesWithoutConversations: a copy carries the tokens,
// watch states and compaction states of every namespace, those that hold
// no conversation included, and a copy again adds nothing.
func TestCopyNamespacesWithoutConversations(t *testing.T) {
	for name, dst := range destinations(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			src := namespaceSource(t)
			d := dst(t)
			rep, err := storecopy.Copy(ctx, src, d, storecopy.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Namespaces != 4 || rep.Tokens != 3 || rep.Watches != 1 || len(rep.Conversations) != 1 {
				t.Errorf("report %+v, want 4 namespaces, 3 tokens, 1 watch state, 1 conversation", rep)
			}
			if a, b := tokensOf(t, src), tokensOf(t, d); a != b {
				t.Errorf("tokens at the destination:\n%s\nwant\n%s", b, a)
			}
			if w, err := d.WatchState(ctx, "watch", "/logs/a.jsonl"); err != nil || w.Offset != 120 || w.Head != "abcd" {
				t.Errorf("watch state at the destination: %+v, %v", w, err)
			}
			for _, c := range []struct{ ns, id string }{{"agent", "live"}, {"default", "live-too"}} {
				st, err := d.CompactionState(ctx, c.ns, c.id)
				if err != nil || st.Checkpoint != "## Goal\n"+c.id || st.TurnCount != 12 || !st.Updated.Equal(nsAt) {
					t.Errorf("compaction state of %s/%s at the destination: %+v, %v", c.ns, c.id, st, err)
				}
			}
			if ms, err := storecopy.Verify(ctx, src, d, nil); err != nil || len(ms) != 0 {
				t.Errorf("verify after the copy: %v %v", ms, err)
			}
			again, err := storecopy.Copy(ctx, src, d, storecopy.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if again.Tokens != 0 || again.Watches != 0 || again.Compactions != 0 {
				t.Errorf("a second copy wrote %+v", again)
			}
		})
	}
}

// TestVerifyNamespacesWithoutConversations: verifying against a
// destination that lacks a namespace's tokens or compaction states, or
// holds a token revoked otherwise, reports each difference by namespace
// and token or conversation.
func TestVerifyNamespacesWithoutConversations(t *testing.T) {
	for name, dst := range destinations(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			src := namespaceSource(t)
			d := dst(t)
			// Only the conversations' namespace is copied.
			if _, err := storecopy.Copy(ctx, src, d, storecopy.Options{Namespaces: []string{"default"}}); err != nil {
				t.Fatal(err)
			}
			keys, err := src.Tokens(ctx, "keys")
			if err != nil || len(keys) != 2 {
				t.Fatal(keys, err)
			}
			def, err := d.Tokens(ctx, "default")
			if err != nil || len(def) != 1 {
				t.Fatal(def, err)
			}
			if _, err := d.RevokeToken(ctx, def[0].ID, nsAt); err != nil {
				t.Fatal(err)
			}
			if err := d.SaveCompactionState(ctx, "default", "live-too", strata.CompactionState{Checkpoint: "other", TurnCount: 1, Updated: nsAt}); err != nil {
				t.Fatal(err)
			}
			ms, err := storecopy.Verify(ctx, src, d, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			for _, m := range ms {
				got += m.String() + "\n"
			}
			for _, want := range []string{
				"keys: token " + keys[0].ID + ` ("ci") only in the source`,
				"keys: token " + keys[1].ID + ` ("laptop") only in the source`,
				"default: token " + def[0].ID + ": not revoked in the source, revoked at " + nsAt.Format(time.RFC3339Nano) + " in the destination",
				`agent: compaction state of "live" only in the source`,
				`default: compaction state of "live-too": 12 turns`,
				`watch: watch state of "/logs/a.jsonl" only in the source`,
			} {
				if !strings.Contains(got, want) {
					t.Errorf("verify reported:\n%s\nwant a line with %q", got, want)
				}
			}
		})
	}
}
