package storetest

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-memory/strata"
)

// testCompactionState: the zero state before any save; a save round-trips
// every field byte for byte; a later save replaces it; states are per
// namespace and conversation; the conversation need not exist.
func testCompactionState(t *testing.T, s strata.Store) {
	got, err := s.CompactionState(ctx(t), "ns", "agent-1")
	if err != nil {
		t.Fatal(err)
	}
	if got != (strata.CompactionState{}) {
		t.Fatalf("state before any save = %+v, want the zero state", got)
	}
	at := time.Date(2026, 3, 4, 5, 6, 7, 8, time.UTC)
	first := strata.CompactionState{
		Checkpoint: "## Goal\nfix `go test ./...` ␊ in /srv/app\r\n\ttabs, \x00 and ünïcødé " + strings.Repeat("x", 70000),
		TurnCount:  42, CompactionCount: 1, Updated: at,
	}
	if err := s.SaveCompactionState(ctx(t), "ns", "agent-1", first); err != nil {
		t.Fatal(err)
	}
	got, err = s.CompactionState(ctx(t), "ns", "agent-1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Checkpoint != first.Checkpoint || got.TurnCount != 42 || got.CompactionCount != 1 || !sameTime(got.Updated, at) {
		t.Fatalf("state after save = %d bytes, %d turns, %d compactions, %v; want %d bytes, 42, 1, %v",
			len(got.Checkpoint), got.TurnCount, got.CompactionCount, got.Updated, len(first.Checkpoint), at)
	}
	second := strata.CompactionState{Checkpoint: "## Goal\nsecond", TurnCount: 80, CompactionCount: 2, Updated: at.Add(time.Hour)}
	if err := s.SaveCompactionState(ctx(t), "ns", "agent-1", second); err != nil {
		t.Fatal(err)
	}
	if got, _ = s.CompactionState(ctx(t), "ns", "agent-1"); got.Checkpoint != second.Checkpoint || got.CompactionCount != 2 {
		t.Fatalf("state after a second save = %+v, want the second", got)
	}
	for _, other := range [][2]string{{"other", "agent-1"}, {"ns", "agent-2"}} {
		got, err := s.CompactionState(ctx(t), other[0], other[1])
		if err != nil {
			t.Fatal(err)
		}
		if got != (strata.CompactionState{}) {
			t.Fatalf("state of %s/%s = %+v, want the zero state: states are per namespace and conversation", other[0], other[1], got)
		}
	}
	// A save without a time is stamped.
	if err := s.SaveCompactionState(ctx(t), "ns", "agent-3", strata.CompactionState{TurnCount: 1}); err != nil {
		t.Fatal(err)
	}
	if got, _ = s.CompactionState(ctx(t), "ns", "agent-3"); got.Updated.IsZero() {
		t.Fatal("a save without Updated came back without a time")
	}
}

// testCompactionStateInvalid: bad saves are EINVALID and change nothing.
func testCompactionStateInvalid(t *testing.T, s strata.Store) {
	good := strata.CompactionState{Checkpoint: "kept", TurnCount: 3, CompactionCount: 1}
	if err := s.SaveCompactionState(ctx(t), "ns", "c", good); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		conv string
		st   strata.CompactionState
	}{
		"empty conversation":        {"", good},
		"negative turn count":       {"c", strata.CompactionState{Checkpoint: "bad", TurnCount: -1}},
		"negative compaction count": {"c", strata.CompactionState{Checkpoint: "bad", CompactionCount: -2}},
	} {
		wantCode(t, name, s.SaveCompactionState(ctx(t), "ns", tc.conv, tc.st), strata.EINVALID)
	}
	got, err := s.CompactionState(ctx(t), "ns", "c")
	if err != nil {
		t.Fatal(err)
	}
	if got.Checkpoint != "kept" || got.TurnCount != 3 {
		t.Fatalf("state after rejected saves = %+v, want the good one kept", got)
	}
}

// testCompactionStates: every state of a namespace is listed, by
// conversation id in byte order, with its fields, whether or not the
// conversation exists in memory; another namespace's are not.
func testCompactionStates(t *testing.T, s strata.Store) {
	if got, err := s.CompactionStates(ctx(t), "ns"); err != nil || len(got) != 0 {
		t.Fatalf("CompactionStates of an empty namespace = %+v, %v; want none", got, err)
	}
	ensure(t, s, "ns", "b")
	at := time.Date(2026, 3, 4, 5, 6, 7, 8, time.UTC)
	saved := map[string]strata.CompactionState{
		"b":      {Checkpoint: "## Goal\nb, \x00 and ünïcødé", TurnCount: 4, CompactionCount: 1, Updated: at},
		"a":      {Checkpoint: "a", TurnCount: 2, CompactionCount: 3, Updated: at.Add(time.Hour)},
		"Z":      {TurnCount: 1, Updated: at},
		"~tilde": {Checkpoint: "bytes", Updated: at},
	}
	for id, st := range saved {
		if err := s.SaveCompactionState(ctx(t), "ns", id, st); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SaveCompactionState(ctx(t), "other", "c", strata.CompactionState{TurnCount: 9, Updated: at}); err != nil {
		t.Fatal(err)
	}
	got, err := s.CompactionStates(ctx(t), "ns")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range got {
		ids = append(ids, c.Conversation)
		want := saved[c.Conversation]
		if c.Checkpoint != want.Checkpoint || c.TurnCount != want.TurnCount || c.CompactionCount != want.CompactionCount || !sameTime(c.Updated, want.Updated) {
			t.Errorf("CompactionStates: %q = %+v, want %+v", c.Conversation, c.CompactionState, want)
		}
	}
	if want := []string{"Z", "a", "b", "~tilde"}; !slices.Equal(ids, want) {
		t.Errorf("CompactionStates lists %q, want %q", ids, want)
	}
}
