package storetest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/strata-memory/strata"
)

// tierCorpus stores 30 turns of every shape under three level-1 nodes
// (1-10, 11-20, 21-30) and a level-2 node over the first two. Each turn's
// content carries a word found nowhere else ("uniqword7" for turn 7);
// turns 5 and 25 are pinned. It returns the turns as stored.
func tierCorpus(t *testing.T, s strata.Store, ns, conv string) []strata.Turn {
	t.Helper()
	ensure(t, s, ns, conv)
	in := make([]strata.Turn, 30)
	hard := []string{"tab\there", "line\nbreak\r\n", "glyphs \u2409 \u240a \u241b", "-", "", "emoji 🎉 and 漢字"}
	for i := range in {
		n := i + 1
		tt := strata.Turn{
			ExtID:   fmt.Sprintf("e%d", n),
			Session: 1 + i/12,
			Role:    strata.RoleUser,
			Name:    "Ada",
			Content: fmt.Sprintf("turn %d uniqword%d %s", n, n, hard[i%len(hard)]),
			Time:    base.Add(time.Duration(i) * 7 * time.Hour), // several days
			Tokens:  10 + i,
		}
		switch i % 5 {
		case 1:
			tt.Role, tt.Model = strata.RoleAssistant, "model-x"
			// Arguments are kept byte for byte: JSON with its spacing, and
			// text that is not JSON (a truncated model output).
			args := "{ \"q\" : \"a<b>&c\",\n  \"n\": 1.50 }"
			if i%10 == 6 {
				args = "{\"a\": tru"
			}
			tt.ToolCalls = []strata.ToolCall{{ID: fmt.Sprintf("c%d", n), Name: "look",
				Arguments: json.RawMessage(args)}}
		case 2:
			tt.Role = strata.RoleTool
			tt.ToolResults = []strata.ToolResult{{CallID: "c", Name: "look", Content: "out\tput", IsError: true}}
		case 3:
			tt.Tags = []string{"a", "b c"}
			tt.Metadata = map[string]any{"k": "v", "n": 2.5, "nested": map[string]any{"x": []any{1.0, nil}}}
			tt.SessionLabel = "label"
		}
		if n == 5 || n == 25 {
			tt.Importance = 0.9
		}
		in[i] = tt
	}
	appendTurns(t, s, ns, conv, in)
	stored := allTurns(t, s, ns, conv)
	for i := range in {
		w := in[i]
		w.Seq = stored[i].Seq
		if d := diffTurn(w, stored[i]); d != "" {
			t.Fatalf("turn %d as stored: %s", i+1, d)
		}
	}
	nodes := []strata.Node{
		mkNode(ns, conv, 1, 1, 10, "first span about alpha"),
		mkNode(ns, conv, 1, 11, 20, "second span about beta"),
		mkNode(ns, conv, 1, 21, 30, "third span about gamma"),
		mkNode(ns, conv, 2, 1, 20, "alpha and beta"),
	}
	if err := s.PutNodes(ctx(t), ns, conv, nodes); err != nil {
		t.Fatal(err)
	}
	return allTurns(t, s, ns, conv)
}

// coldAt is the time of the moves demote makes: a year after the turns of
// tierCorpus, as when an old history is imported.
var coldAt = base.AddDate(1, 0, 0).Add(123)

func demote(t *testing.T, s strata.Store, ns, conv string, to strata.Tier, spans ...[2]int64) []strata.Move {
	t.Helper()
	ids := make([]string, len(spans))
	for i, sp := range spans {
		ids[i] = strata.NodeID(ns, conv, 1, sp[0], sp[1])
	}
	moves, err := s.Demote(ctx(t), ns, conv, ids, to, coldAt)
	if err != nil {
		t.Fatalf("Demote(%v, %s): %v", spans, to, err)
	}
	return moves
}

// sameTurns fails unless got holds exactly want.
func sameTurns(t *testing.T, what string, want, got []strata.Turn) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d turns, want %d", what, len(got), len(want))
	}
	for i := range want {
		if d := diffTurn(want[i], got[i]); d != "" {
			t.Errorf("%s: %s", what, d)
		}
	}
}

// tiersOf returns the tier of each level-1 node, by first seq.
func tiersOf(t *testing.T, s strata.Store, ns, conv string) map[int64]strata.Tier {
	t.Helper()
	ns1, err := s.Nodes(ctx(t), strata.NodeFilter{Namespace: ns, Conversation: conv, Level: 1})
	if err != nil {
		t.Fatal(err)
	}
	out := map[int64]strata.Tier{}
	for _, n := range ns1 {
		out[n.FirstSeq] = n.Tier
	}
	return out
}

func turnHit(t *testing.T, s strata.Store, ns, conv, word string) *strata.Turn {
	t.Helper()
	hits, err := s.Search(ctx(t), strata.SearchQuery{Namespace: ns, Conversation: conv, Text: word, Kind: strata.KindTurn})
	if err != nil {
		t.Fatalf("Search(%q): %v", word, err)
	}
	if len(hits) == 0 {
		return nil
	}
	return hits[0].Turn
}

func testTiersWarm(t *testing.T, s strata.Store) {
	want := tierCorpus(t, s, "ns", "c")
	if got := tiersOf(t, s, "ns", "c"); got[1] != strata.TierHot || got[11] != strata.TierHot {
		t.Fatalf("new level-1 nodes have tiers %v, want hot", got)
	}
	moves := demote(t, s, "ns", "c", strata.TierWarm, [2]int64{1, 10}, [2]int64{11, 20})
	if len(moves) != 2 || moves[0].From != strata.TierHot || moves[0].To != strata.TierWarm {
		t.Fatalf("moves = %+v, want two hot -> warm", moves)
	}
	if moves[0].Turns != 9 || moves[1].Turns != 10 {
		t.Errorf("moves count %d and %d turns, want 9 (turn 5 is pinned) and 10", moves[0].Turns, moves[1].Turns)
	}
	sameTurns(t, "Turns after warm", want, allTurns(t, s, "ns", "c"))
	if got := tiersOf(t, s, "ns", "c"); got[1] != strata.TierWarm || got[11] != strata.TierWarm || got[21] != strata.TierHot {
		t.Errorf("tiers = %v, want warm, warm, hot", got)
	}
	// Filters still work across tiers.
	part, err := s.Turns(ctx(t), strata.TurnFilter{Namespace: "ns", Conversation: "c", FromSeq: 8, ToSeq: 13, Newest: true})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(seqs(part)) != "[13 12 11 10 9 8]" {
		t.Errorf("seqs 8..13 newest first = %v", seqs(part))
	}
	sameTurns(t, "Turns 13..8", []strata.Turn{want[12], want[11], want[10], want[9], want[8], want[7]}, part)
	// Warm turns stay searchable, whole.
	for _, n := range []int{3, 5, 17} {
		h := turnHit(t, s, "ns", "c", fmt.Sprintf("uniqword%d", n))
		if h == nil {
			t.Errorf("warm turn %d is not found by search", n)
			continue
		}
		if d := diffTurn(want[n-1], *h); d != "" {
			t.Errorf("search hit of warm turn %d: %s", n, d)
		}
	}
	// Idempotent.
	if again := demote(t, s, "ns", "c", strata.TierWarm, [2]int64{1, 10}); len(again) != 0 {
		t.Errorf("second Demote to warm moved %+v", again)
	}
}

func testTiersCold(t *testing.T, s strata.Store) {
	want := tierCorpus(t, s, "ns", "c")
	tierCorpus(t, s, "other", "c") // the same ids in another namespace stay hot
	demote(t, s, "ns", "c", strata.TierWarm, [2]int64{1, 10})
	moves := demote(t, s, "ns", "c", strata.TierCold, [2]int64{1, 10}, [2]int64{21, 30})
	if len(moves) != 2 || moves[0].From != strata.TierWarm || moves[1].From != strata.TierHot {
		t.Fatalf("moves = %+v, want warm -> cold and hot -> cold", moves)
	}
	sameTurns(t, "Turns after cold", want, allTurns(t, s, "ns", "c"))
	if got := tiersOf(t, s, "ns", "c"); got[1] != strata.TierCold || got[11] != strata.TierHot || got[21] != strata.TierCold {
		t.Errorf("tiers = %v, want cold, hot, cold", got)
	}
	// A cold span keeps the time of its move, the others none.
	level1, err := s.Nodes(ctx(t), strata.NodeFilter{Namespace: "ns", Conversation: "c", Level: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range level1 {
		var want time.Time
		if n.Tier == strata.TierCold {
			want = coldAt
		}
		if !n.ColdAt.Equal(want) {
			t.Errorf("node %d-%d (%s) went cold at %v, want %v", n.FirstSeq, n.LastSeq, n.Tier, n.ColdAt, want)
		}
	}
	// A later Demote to cold does not move the time of a span already cold.
	if again := demote(t, s, "ns", "c", strata.TierCold, [2]int64{1, 10}); len(again) != 0 {
		t.Errorf("Demote of a cold span moved %+v", again)
	}
	coldFound(t, s)
	sameTurns(t, "other namespace", want, allTurns(t, s, "other", "c"))
	if again := demote(t, s, "ns", "c", strata.TierCold, [2]int64{1, 10}, [2]int64{21, 30}); len(again) != 0 {
		t.Errorf("second Demote to cold moved %+v", again)
	}
	// Warm after cold is no move either: spans never go back up.
	if again := demote(t, s, "ns", "c", strata.TierWarm, [2]int64{21, 30}); len(again) != 0 {
		t.Errorf("Demote to warm of a cold span moved %+v", again)
	}
	// Re-appending the same ext_ids adds nothing.
	if got := appendTurns(t, s, "ns", "c", want); len(got) != 0 {
		t.Errorf("re-appending stored turns of cold spans added %d", len(got))
	}
	coldStats(t, s)
}

// coldFound: cold moves a turn's content, never its findability: cold
// turns of tierCorpus are turn hits, whole, as pinned ones (kept in their
// rows) and summaries are.
func coldFound(t *testing.T, s strata.Store) {
	if h := turnHit(t, s, "ns", "c", "uniqword7"); h == nil || h.Seq != 7 || !strings.Contains(h.Content, "uniqword7") {
		t.Errorf("cold turn 7 is not found whole by its own words: %+v", h)
	}
	if h := turnHit(t, s, "ns", "c", "uniqword25"); h == nil || h.Seq != 25 {
		t.Errorf("pinned turn 25 in a cold span is not found: %+v", h)
	}
	if h := turnHit(t, s, "ns", "c", "uniqword15"); h == nil {
		t.Errorf("hot turn 15 is not found")
	}
	if h := turnHit(t, s, "other", "c", "uniqword7"); h == nil {
		t.Errorf("the other namespace's turn 7 lost its index entry")
	}
	hits, err := s.Search(ctx(t), strata.SearchQuery{Namespace: "ns", Conversation: "c", Text: "gamma", Kind: strata.KindSummary})
	if err != nil || len(hits) == 0 {
		t.Errorf("the summary of a cold span is not found: %v %v", hits, err)
	}
}

// coldStats checks the tier and archive stats of tierCorpus with spans
// 1-10 and 21-30 cold.
func coldStats(t *testing.T, s strata.Store) {
	st, err := s.Stats(ctx(t), "ns")
	if err != nil {
		t.Fatal(err)
	}
	byTier := map[strata.Tier]strata.TierStats{}
	for _, x := range st.Tiers {
		byTier[x.Tier] = x
	}
	if c := byTier[strata.TierCold]; c.Spans != 2 || c.Turns != 18 || c.StoredBytes <= 0 {
		t.Errorf("cold stats = %+v, want 2 spans, 18 turns (2 pinned stay hot), stored bytes > 0", c)
	}
	if h := byTier[strata.TierHot]; h.Spans != 1 || h.Turns != 12 {
		t.Errorf("hot stats = %+v, want 1 span, 12 turns", h)
	}
	var total int64
	for _, x := range st.Tiers {
		total += x.Bytes
	}
	if total != st.ContentBytes {
		t.Errorf("tier bytes add up to %d, content bytes are %d", total, st.ContentBytes)
	}
	if st.Archive.Segments == 0 || st.Archive.Records < 20 || st.Archive.Bytes <= 0 {
		t.Errorf("archive stats = %+v", st.Archive)
	}
	if len(st.PerConversation) != 1 || st.PerConversation[0].ID != "c" || st.PerConversation[0].Archive.Segments != st.Archive.Segments {
		t.Errorf("per-conversation stats = %+v", st.PerConversation)
	}
}

func testTiersInvalid(t *testing.T, s strata.Store) {
	tierCorpus(t, s, "ns", "c")
	id := strata.NodeID("ns", "c", 1, 1, 10)
	_, err := s.Demote(ctx(t), "ns", "c", []string{id}, strata.TierHot, coldAt)
	wantCode(t, "Demote to hot", err, strata.EINVALID)
	_, err = s.Demote(ctx(t), "ns", "c", []string{id}, strata.TierExpired, coldAt)
	wantCode(t, "Demote to expired", err, strata.EINVALID)
	_, err = s.Demote(ctx(t), "ns", "c", []string{"nope"}, strata.TierWarm, coldAt)
	wantCode(t, "Demote of an unknown node", err, strata.ENOTFOUND)
	_, err = s.Demote(ctx(t), "ns", "c", []string{strata.NodeID("ns", "c", 2, 1, 20)}, strata.TierWarm, coldAt)
	wantCode(t, "Demote of a level-2 node", err, strata.EINVALID)
	_, err = s.Demote(ctx(t), "ns", "missing", []string{id}, strata.TierWarm, coldAt)
	wantCode(t, "Demote in a missing conversation", err, strata.ENOTFOUND)
	_, err = s.Demote(ctx(t), "ns", "c", []string{id}, strata.TierCold, time.Time{})
	wantCode(t, "Demote to cold without a time", err, strata.EINVALID)
	_, err = s.Expire(ctx(t), "ns", "c", []string{id}, "rule", base, false)
	wantCode(t, "Expire of a hot node", err, strata.EINVALID)
	if got := tiersOf(t, s, "ns", "c"); got[1] != strata.TierHot {
		t.Errorf("a failed call changed the tier to %s", got[1])
	}
}

func testTiersExpire(t *testing.T, s strata.Store) {
	want := tierCorpus(t, s, "ns", "c")
	demote(t, s, "ns", "c", strata.TierCold, [2]int64{1, 10}, [2]int64{21, 30})
	id := strata.NodeID("ns", "c", 1, 1, 10)
	at := base.Add(1000 * time.Hour)

	dry, err := s.Expire(ctx(t), "ns", "c", []string{id}, "cold_retention_days=1", at, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(dry) != 1 || dry[0].Turns != 9 || dry[0].Bytes <= 0 {
		t.Fatalf("dry run = %+v, want one span of 9 turns (turn 5 is pinned)", dry)
	}
	sameTurns(t, "Turns after a dry run", want, allTurns(t, s, "ns", "c"))
	if ex, _ := s.Expiries(ctx(t), "ns", "c"); len(ex) != 0 {
		t.Errorf("a dry run left audit records: %+v", ex)
	}

	got, err := s.Expire(ctx(t), "ns", "c", []string{id}, "cold_retention_days=1", at, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Turns != 9 || got[0].Bytes != dry[0].Bytes || got[0].Rule != "cold_retention_days=1" {
		t.Fatalf("Expire = %+v", got)
	}
	if tiersOf(t, s, "ns", "c")[1] != strata.TierExpired {
		t.Errorf("node not expired")
	}
	rest := allTurns(t, s, "ns", "c")
	if len(rest) != 21 || rest[0].Seq != 5 || rest[1].Seq != 11 {
		t.Fatalf("after expiry Turns has seqs %v, want 5 (pinned) and 11..30", seqs(rest))
	}
	sameTurns(t, "pinned turn after expiry", []strata.Turn{want[4]}, rest[:1])
	sameTurns(t, "other turns after expiry", want[10:], rest[1:])
	expiredStubs(t, s, want)
	// Idempotent, and audited once.
	again, err := s.Expire(ctx(t), "ns", "c", []string{id}, "cold_retention_days=1", at, false)
	if err != nil || len(again) != 0 {
		t.Errorf("second Expire = %+v, %v", again, err)
	}
	ex, err := s.Expiries(ctx(t), "ns", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(ex) != 1 || ex[0].NodeID != id || ex[0].Turns != 9 || !ex[0].At.Equal(at) || ex[0].Conversation != "c" {
		t.Errorf("Expiries = %+v", ex)
	}
	// The record keeps when the span went cold and its newest turn's time,
	// as returned and as logged.
	newest := mkNode("ns", "c", 1, 1, 10, "").End
	for _, e := range []strata.Expiry{got[0], ex[0]} {
		if !e.ColdAt.Equal(coldAt) || !e.NewestTurn.Equal(newest) {
			t.Errorf("expiry record: cold at %v, newest turn %v; want %v and %v", e.ColdAt, e.NewestTurn, coldAt, newest)
		}
	}
	expiredFound(t, s)
}

// expiredStubs: with span 1-10 of tierCorpus (want) expired, WithExpired
// returns their stubs too, in place, with no content, and expired turns
// still count as stored for idempotence.
func expiredStubs(t *testing.T, s strata.Store, want []strata.Turn) {
	stubs, err := s.Turns(ctx(t), strata.TurnFilter{Namespace: "ns", Conversation: "c", WithExpired: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(stubs) != 30 {
		t.Fatalf("Turns WithExpired has seqs %v, want 1..30", seqs(stubs))
	}
	for i, st := range stubs[:10] {
		w := want[i]
		if i == 4 {
			sameTurns(t, "pinned turn WithExpired", []strata.Turn{w}, []strata.Turn{st})
			continue
		}
		if st.Seq != w.Seq || st.ExtID != w.ExtID || st.Role != w.Role || !st.Time.Equal(w.Time) || st.Session != w.Session ||
			st.Tokens != w.Tokens || st.Content != "" || st.ToolCalls != nil || st.Metadata != nil {
			t.Errorf("expired stub %d = %+v, want the row of %+v without content", i+1, st, w)
		}
	}
	sameTurns(t, "other turns WithExpired", want[10:], stubs[10:])
	// Expired turns still count as stored for idempotence.
	have, err := s.ExistingExtIDs(ctx(t), "ns", "c", []string{"e1", "e7"})
	if err != nil || !have["e1"] || !have["e7"] {
		t.Errorf("ExistingExtIDs of expired turns = %v, %v", have, err)
	}
	if a := appendTurns(t, s, "ns", "c", want[:10]); len(a) != 0 {
		t.Errorf("re-appending expired turns added %d", len(a))
	}
}

// expiredFound: with span 1-10 of tierCorpus expired, search and the
// other cold span are unharmed; expired turns have no words left to be
// found by.
func expiredFound(t *testing.T, s strata.Store) {
	if h := turnHit(t, s, "ns", "c", "uniqword5"); h == nil || !strings.Contains(h.Content, "uniqword5") {
		t.Errorf("the pinned turn of an expired span is not found whole: %+v", h)
	}
	if h := turnHit(t, s, "ns", "c", "uniqword3"); h != nil {
		t.Errorf("expired turn 3 is still a turn hit: %+v", h)
	}
	st, err := s.Stats(ctx(t), "ns")
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range st.Tiers {
		if x.Tier == strata.TierExpired && (x.Spans != 1 || x.Turns != 9) {
			t.Errorf("expired stats = %+v, want 1 span of 9 turns", x)
		}
	}
}
