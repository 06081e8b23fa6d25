package storetest

import (
	"testing"
	"time"

	"github.com/strata-memory/strata"
)

// testWatchState: the zero state before any save; a save round-trips
// every field; a later save replaces it; states are per namespace and
// path, and paths are exact bytes (not UTF-8, case, a trailing slash).
func testWatchState(t *testing.T, s strata.Store) {
	path := "/home/ana/.claude/projects/-srv-app/5f1c.jsonl"
	got, err := s.WatchState(ctx(t), "ns", path)
	if err != nil {
		t.Fatal(err)
	}
	if got != (strata.WatchState{}) {
		t.Fatalf("state before any save = %+v, want the zero state", got)
	}
	at := time.Date(2026, 3, 4, 5, 6, 7, 8, time.UTC)
	first := strata.WatchState{Offset: 1 << 40, Lines: 123456789, HeadLen: 4096,
		Head: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", Updated: at}
	if err := s.SaveWatchState(ctx(t), "ns", path, first); err != nil {
		t.Fatal(err)
	}
	got, err = s.WatchState(ctx(t), "ns", path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Offset != first.Offset || got.Lines != first.Lines || got.HeadLen != first.HeadLen || got.Head != first.Head || !sameTime(got.Updated, at) {
		t.Fatalf("state after save = %+v, want %+v", got, first)
	}
	// Starting a file over saves a smaller offset: the last save wins.
	second := strata.WatchState{Offset: 10, Lines: 1, HeadLen: 10, Head: "ab", Updated: at.Add(time.Hour)}
	if err := s.SaveWatchState(ctx(t), "ns", path, second); err != nil {
		t.Fatal(err)
	}
	if got, _ = s.WatchState(ctx(t), "ns", path); got.Offset != 10 || got.Lines != 1 || got.Head != "ab" || !sameTime(got.Updated, second.Updated) {
		t.Fatalf("state after a second save = %+v, want %+v", got, second)
	}
	odd := "/tmp/caf\xe9/\x01 tab\t.jsonl" // Latin-1, not UTF-8
	for _, other := range [][2]string{{"other", path}, {"ns", path + "/"}, {"ns", "/HOME/ana/.claude/projects/-srv-app/5f1c.jsonl"}, {"ns", odd}} {
		got, err := s.WatchState(ctx(t), other[0], other[1])
		if err != nil {
			t.Fatal(err)
		}
		if got != (strata.WatchState{}) {
			t.Fatalf("state of %s/%q = %+v, want the zero state: states are per namespace and exact path", other[0], other[1], got)
		}
	}
	if err := s.SaveWatchState(ctx(t), "ns", odd, strata.WatchState{Offset: 7, Lines: 2}); err != nil {
		t.Fatal(err)
	}
	if got, err = s.WatchState(ctx(t), "ns", odd); err != nil || got.Offset != 7 || got.Lines != 2 || got.HeadLen != 0 || got.Head != "" {
		t.Fatalf("state of a path that is not UTF-8 = %+v, %v; want offset 7, 2 lines", got, err)
	}
	if got.Updated.IsZero() {
		t.Fatal("a save without Updated came back without a time")
	}
	if got, _ = s.WatchState(ctx(t), "ns", path); got.Offset != 10 {
		t.Fatalf("saving another path changed %q: %+v", path, got)
	}
	// The namespace's states, by path in byte order; another namespace's
	// are not among them.
	if err := s.SaveWatchState(ctx(t), "other", "/x.jsonl", strata.WatchState{Offset: 1, Lines: 1}); err != nil {
		t.Fatal(err)
	}
	all, err := s.WatchStates(ctx(t), "ns")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 || all[0].Path != path || all[1].Path != odd || all[0].Offset != 10 || all[0].Head != "ab" ||
		!sameTime(all[0].Updated, second.Updated) || all[1].Offset != 7 || all[1].Lines != 2 {
		t.Fatalf("WatchStates(ns) = %+v, want %q (offset 10) then %q (offset 7)", all, path, odd)
	}
	if none, err := s.WatchStates(ctx(t), "nobody"); err != nil || none == nil || len(none) != 0 {
		t.Fatalf("WatchStates of a namespace without states = %#v, %v; want an empty list", none, err)
	}
}

// testWatchStateInvalid: what CheckWatchState refuses is EINVALID and
// changes nothing.
func testWatchStateInvalid(t *testing.T, s strata.Store) {
	good := strata.WatchState{Offset: 100, Lines: 3, HeadLen: 100, Head: "kept"}
	if err := s.SaveWatchState(ctx(t), "ns", "f.jsonl", good); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		path string
		st   strata.WatchState
	}{
		"empty path":           {"", good},
		"negative offset":      {"f.jsonl", strata.WatchState{Offset: -1}},
		"negative lines":       {"f.jsonl", strata.WatchState{Offset: 5, Lines: -1}},
		"negative head_len":    {"f.jsonl", strata.WatchState{Offset: 5, HeadLen: -1, Head: "x"}},
		"more lines":           {"f.jsonl", strata.WatchState{Offset: 5, Lines: 6}},
		"head beyond offset":   {"f.jsonl", strata.WatchState{Offset: 5, Lines: 1, HeadLen: 6, Head: "x"}},
		"head_len, no head":    {"f.jsonl", strata.WatchState{Offset: 5, Lines: 1, HeadLen: 5}},
		"head, no head_len":    {"f.jsonl", strata.WatchState{Offset: 5, Lines: 1, Head: "x"}},
		"updated out of range": {"f.jsonl", strata.WatchState{Offset: 5, Lines: 1, Updated: time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)}},
	} {
		wantCode(t, name, s.SaveWatchState(ctx(t), "ns", tc.path, tc.st), strata.EINVALID)
	}
	got, err := s.WatchState(ctx(t), "ns", "f.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if got.Offset != 100 || got.Lines != 3 || got.Head != "kept" {
		t.Fatalf("state after rejected saves = %+v, want the good one kept", got)
	}
}
