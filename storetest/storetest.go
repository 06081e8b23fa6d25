// Package storetest is the conformance suite every strata.Store must pass.
//
// An implementation runs it from its own tests:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) strata.Store {
//			s, err := mystore.Open(...)
//			if err != nil {
//				t.Fatal(err)
//			}
//			t.Cleanup(func() { s.Close() })
//			return s
//		})
//	}
//
// Run pins the Store contract documented in package strata, including what
// the documentation leaves to a reading of it:
//
//   - Valid input: a Memory over the store refuses, as EINVALID naming the
//     field and before anything is written, a turn with NUL or invalid
//     UTF-8 in any text field, an ext_id over strata.MaxIDBytes or a turn
//     over strata.MaxTurnBytes; a lookup by an id no store can hold (NUL,
//     invalid UTF-8, too long) is ENOTFOUND or EINVALID, never internal;
//     and the store takes a turn of exactly MaxTurnBytes and gives it back
//     whole (not under the race detector).
//   - Conversations: EnsureConversation creates or returns the stored
//     conversation (an existing one keeps its policy and creation time); an
//     empty id is EINVALID; Conversation of a missing id is ENOTFOUND;
//     Conversations lists by id; Conversation reports the number of turns,
//     the highest session, and the earliest and latest turn times.
//   - Namespaces: nothing crosses them. The same conversation id (and the
//     same ext_id) in two namespaces are independent for turns, nodes,
//     search and stats.
//   - Turns: AppendTurns assigns seq 1..n from the end of the conversation,
//     skips a turn whose ext_id is stored (also the second of two turns with
//     one ext_id in the same call, and skipped turns consume no seq),
//     returns only the appended turns, and is ENOTFOUND for a missing
//     conversation. Every Turn field round-trips: content byte-exact and
//     whole (10 MB; 1 MB under the race detector), tool call arguments
//     byte-exact, times as the same instant with nanoseconds (compared
//     with Time.Equal, not the zone), metadata as its JSON encoding would. Turns filters and orders as
//     TurnFilter documents; PinnedOnly includes importance exactly 0.8.
//     Turns of a missing conversation is ENOTFOUND.
//   - Nodes: PutNodes replaces a node of the same ID (putting twice leaves
//     one, and the summary it replaced is no longer found by Search), is
//     ENOTFOUND for a missing conversation, EINVALID for an empty ID or a
//     Conversation other than the one put to. Every Node field round-trips,
//     and a node read back (by Nodes or Search) carries its conversation id
//     even if it was put with an empty Conversation. Nodes orders by level, then first seq
//     (the whole order reversed if Newest); FromSeq and ToSeq select the
//     nodes contained in the range; IDs may be used without a conversation;
//     with neither, Nodes is EINVALID; a missing conversation is ENOTFOUND.
//     A node marked Derived keeps the mark and is never found by Search;
//     replacing a node can change that either way.
//   - Search: BM25 over turn content and node summaries, at most K hits,
//     best (highest Score) first, filtered by Kind and Conversation; words
//     match case-insensitively and match their simple inflections ("deploy"
//     finds "deployed" and "deploying"); text with FTS syntax characters
//     never errors; text with no searchable word (empty, punctuation,
//     English stop words) returns no hits and no error; a missing
//     conversation is ENOTFOUND; the whole of the big turn is searchable.
//   - Stats: counts per namespace (conversations, turns, content bytes,
//     turn tokens, nodes per level with their tokens, oldest and newest turn
//     times).
//   - Tiers: level-1 nodes read back with Tier hot until Demote moves them.
//     Demote to warm or cold leaves Turns (and turn hits) exactly as they
//     were, whole; warm and cold turns stay searchable by their own words
//     (turn hits, whole), as the span's summary is; Demote
//     is idempotent, never moves a span back up, and is ENOTFOUND for an
//     unknown node or conversation and EINVALID for a level-2 node or a
//     tier other than warm or cold. Expire (only of cold spans, EINVALID
//     otherwise) drops the span's unpinned turns from Turns, keeps their
//     ext_ids for idempotence, records one Expiry, changes nothing with
//     dryRun, and is a no-op the second time. Stats counts spans, turns
//     and bytes per tier (pinned turns count as hot, where their content
//     is), and archive segments. A move to cold writes one segment per
//     UTC month: the Expiry of a span names the months ("YYYY-MM") its
//     turns lie in. RunDaySegments checks, with what it needs of a store
//     beyond the contract, that the day segments of earlier versions are
//     still read, rewritten and removed.
//   - Importance: SetImportance pins and unpins turns in hot, warm and cold
//     spans, and Turns, search hits and the turn it returns show the turn
//     whole with its new importance: a turn pinned in a cold span is a turn
//     hit again, one unpinned there is not, and either goes cold and
//     expires by its new importance. An expired turn, or unpinning a
//     pinned turn of an expired span, is ECONFLICT and changes nothing;
//     an importance outside 0..1 (or NaN) is EINVALID; an unknown seq or
//     conversation is ENOTFOUND.
//   - ResetPyramid removes every node of the conversation (returning how
//     many) and sets its policy; every turn of a warm or cold span comes
//     back hot, identical and searchable, the conversation's archive
//     holds no record any more, and a new pyramid over the same turns
//     archives each turn once. Other conversations keep their pyramids.
//     An expired span makes it ECONFLICT, changing nothing; an unknown
//     conversation is ENOTFOUND.
//   - ReplaceNodes removes, with the nodes it is given, every stored node
//     above them (of a higher level, whose span meets theirs) unless it
//     puts the removed node back under its id, and refuses
//     with ECONFLICT, changing nothing, a node whose child is neither
//     stored nor among the nodes it stores: no parent stands over a
//     removed child, whichever of two writers comes first.
//   - Learnings: every field round-trips (times to the nanosecond; a zero
//     Created is the time of adding, a zero Updated is Created) and ids are
//     unique in the store. A text equal to an active learning's of the same
//     subject, ignoring case, runs of spaces and final punctuation, is a
//     repeat: the stored learning is returned, nothing added. Another text
//     supersedes every active learning of the subject, confirmed ones
//     included, also within one call; superseded learnings stay, pointing
//     at their successor. Rejected learnings are not active: neither
//     repeated nor superseded. SetLearningStatus moves between auto,
//     confirmed and rejected, is EINVALID for a superseded learning or
//     status and ENOTFOUND for an id outside the namespace. A failed
//     AddLearnings adds nothing. Learnings lists oldest first, or newest
//     first with Newest: the same learnings in reverse order, Limit keeping
//     the first of that order (the newest).
//   - Concurrency: AppendTurns from several goroutines to one conversation
//     loses no turn and assigns no seq twice, also when they all append the
//     same ext_ids (exactly one copy of each is stored).
//   - Claims: Claim takes a free key, refuses another holder while the
//     claim lasts (now before until), lets another take it over from the
//     instant it ends, and lets the holder renew its own (also to an
//     earlier end); keys and holders are exact strings. Release frees the
//     holder's claim at once and leaves another holder's, or none, as it
//     is, without error. An empty key or holder, or an until not after
//     now, is EINVALID and changes nothing. Of many holders claiming one
//     key at once, exactly one gets it.
//   - Watch states: the zero state before any save; a save round-trips
//     every field (a zero Updated is stamped) and a later one replaces it
//     (also with a smaller offset); states are per namespace and exact
//     path bytes (a path need not be UTF-8). What CheckWatchState
//     refuses, or an Updated outside the storable range, is EINVALID
//     and changes nothing.
//
// The suite takes a few seconds at most; each subtest opens its own store.
package storetest

import (
	"testing"

	"github.com/strata-memory/strata"
)

// Run runs the conformance suite against stores made by open, which must
// return a new, empty store for each call and arrange for it to be closed
// when t ends (t.Cleanup).
func Run(t *testing.T, open func(t *testing.T) strata.Store) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, s strata.Store)
	}{
		{"EnsureConversation", testEnsureConversation},
		{"ConversationNotFound", testConversationNotFound},
		{"Conversations", testConversations},
		{"ConversationCounts", testConversationCounts},
		{"AppendTurnsSeq", testAppendSeq},
		{"AppendTurnsDedup", testAppendDedup},
		{"AppendTurnsNotFound", testAppendNotFound},
		{"AppendTurnsEmpty", testAppendEmpty},
		{"AppendTurnsAfter", testAppendAfter},
		{"ContentExact", testContentExact},
		{"TurnRoundTrip", testTurnRoundTrip},
		{"ExistingExtIDs", testExistingExtIDs},
		{"TurnsFilter", testTurnsFilter},
		{"PutNodes", testPutNodes},
		{"NodesFilter", testNodesFilter},
		{"DerivedNodes", testDerivedNodes},
		{"PutNodesTwiceInOneCall", testPutNodesTwiceInOneCall},
		{"Search", testSearch},
		{"SearchFromSeq", testSearchFromSeq},
		{"SearchSyntax", testSearchSyntax},
		{"SearchNoWords", testSearchNoWords},
		{"SearchToolText", testSearchToolText},
		{"Namespaces", testNamespaces},
		{"NamespacesWithoutConversations", testNamespacesWithoutConversations},
		{"Stats", testStats},
		{"ConcurrentAppend", testConcurrentAppend},
		{"TiersWarm", testTiersWarm},
		{"TiersCold", testTiersCold},
		{"TiersInvalid", testTiersInvalid},
		{"TiersExpire", testTiersExpire},
		{"TiersColdMonths", testTiersColdMonths},
		{"TiersFullMonth", testTiersFullMonth},
		{"SetImportanceHot", testSetImportanceHot},
		{"SetImportanceWarm", testSetImportanceWarm},
		{"SetImportanceCold", testSetImportanceCold},
		{"PyramidInvalid", testPyramidInvalid},
		{"ResetPyramidHot", testResetPyramidHot},
		{"ResetPyramidTiers", testResetPyramidTiers},
		{"ResetPyramidExpired", testResetPyramidExpired},
		{"ReplaceNodes", testReplaceNodes},
		{"ReplaceNodesParents", testReplaceNodesParents},
		{"DeleteConversation", testDeleteConversation},
		{"NodeKeysAndFilters", testNodeKeysAndFilters},
		{"TurnsByTime", testTurnsByTime},
		{"UpdateConversation", testUpdateConversation},
		{"ModelCalls", testModelCalls},
		{"LearningsRoundTrip", testLearningsRoundTrip},
		{"LearningsRepeats", testLearningsRepeats},
		{"LearningsSupersede", testLearningsSupersede},
		{"LearningsConfirmedSuperseded", testLearningsConfirmedSuperseded},
		{"LearningsSetStatus", testLearningsSetStatus},
		{"LearningsFilter", testLearningsFilter},
		{"LearningsNewest", testLearningsNewest},
		{"LearningsNamespaces", testLearningsNamespaces},
		{"LearningsInvalid", testLearningsInvalid},
		{"CompactionState", testCompactionState},
		{"CompactionStates", testCompactionStates},
		{"CompactionStateInvalid", testCompactionStateInvalid},
		{"EmbeddingsRoundTrip", testEmbeddingsRoundTrip},
		{"EmbeddingsPaging", testEmbeddingsPaging},
		{"EmbeddingsSpaces", testEmbeddingsSpaces},
		{"EmbeddingsInvalid", testEmbeddingsInvalid},
		{"EmbeddingsVersion", testEmbeddingsVersion},
		{"EmbeddingsRemovals", testEmbeddingsRemovals},
		{"EmbeddingsTiers", testEmbeddingsTiers},
		{"Claims", testClaims},
		{"ClaimsRelease", testClaimsRelease},
		{"ClaimsInvalid", testClaimsInvalid},
		{"ClaimsConcurrent", testClaimsConcurrent},
		{"WatchState", testWatchState},
		{"WatchStateInvalid", testWatchStateInvalid},
		{"ValidInput", testValidInput},
		{"MaxTurn", testMaxTurn},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.fn(t, open(t))
		})
	}
}
