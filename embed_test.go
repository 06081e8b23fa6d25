package strata_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/extractive"
	"github.com/strata-memory/strata/internal/hashembed"
	"github.com/strata-memory/strata/internal/synth"
	"github.com/strata-memory/strata/sqlite"
)

// openStore opens a fresh SQLite store.
func openStore(t testing.TB) *sqlite.Store {
	t.Helper()
	st := openNewStore(t, filepath.Join(t.TempDir(), "strata.db"))
	t.Cleanup(func() { st.Close() })
	return st
}

// embedMemory opens a Memory over st with emb (nil: none).
func embedMemory(t testing.TB, st strata.Store, emb strata.Embedder, opt strata.EmbeddingOptions, log *slog.Logger) *strata.Memory {
	t.Helper()
	cfg := strata.Config{Store: st, Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New(),
		Embedding: opt, Logger: log}
	if emb != nil {
		cfg.Embedder = emb
	}
	m, err := strata.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func embed(t testing.TB, m *strata.Memory, conv string) strata.EmbedResult {
	t.Helper()
	res, err := m.Embed(context.Background(), strata.EmbedRequest{Conversation: conv})
	if err != nil {
		t.Fatalf("Embed(%q): %v", conv, err)
	}
	return res
}

// moreTurns returns n synthetic turns whose ext ids start with prefix, so
// that they are new to a conversation that has synth's.
func moreTurns(prefix string, seed uint64, n int) []strata.Turn {
	ts := synth.New(seed).Turns(n)
	for i := range ts {
		ts[i].ExtID = prefix + ts[i].ExtID
	}
	return ts
}

// nodeCount is the number of nodes of the conversation.
func nodeCount(t testing.TB, m *strata.Memory, conv string) int {
	t.Helper()
	ns, err := m.Store().Nodes(context.Background(), strata.NodeFilter{Namespace: m.Namespace(), Conversation: conv})
	if err != nil {
		t.Fatal(err)
	}
	return len(ns)
}

func TestEmbedIdempotent(t *testing.T) {
	st := openStore(t)
	emb := hashembed.New("hash-a", 32)
	m := embedMemory(t, st, emb, strata.EmbeddingOptions{BatchSize: 16, Concurrency: 3}, nil)
	ingest(t, m, "c", synth.New(3).Turns(250))
	ingest(t, m, "d", synth.New(4).Turns(15))
	nodes := nodeCount(t, m, "c") + nodeCount(t, m, "d")
	if nodes == 0 {
		t.Fatal("no nodes: the fixture needs summaries to embed")
	}
	res, err := m.Embed(context.Background(), strata.EmbedRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Turns != 265 || res.Nodes != nodes || res.Conversations != 2 || res.Model != "hash-a" || res.Dim != 32 {
		t.Fatalf("first Embed = %+v, want 265 turns and %d nodes of hash-a in 32 dimensions", res, nodes)
	}
	for _, tt := range emb.Batches() {
		if tt > 16 {
			t.Fatalf("a call embedded %d texts, more than the batch size 16", tt)
		}
	}
	calls := emb.Calls()
	res = embed(t, m, "")
	if res.Turns+res.Nodes+res.Empty != 0 || emb.Calls() != calls {
		t.Fatalf("second Embed = %+v with %d new calls, want nothing", res, emb.Calls()-calls)
	}
	stats, err := m.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	e := stats.Embeddings
	if stats.Search != strata.SearchHybrid || e == nil || e.Turns != 265 || e.Nodes != int64(nodes) || e.Missing != 0 || e.Stale != 0 || e.Model != "hash-a" {
		t.Fatalf("stats: search %q, embeddings %+v; want hybrid, 265 turns, %d nodes, none missing or stale", stats.Search, e, nodes)
	}
	for _, cs := range stats.PerConversation {
		if cs.Search != strata.SearchHybrid || cs.Embeddings == nil || cs.Embeddings.Missing != 0 {
			t.Fatalf("stats of %s: %q %+v, want hybrid with nothing missing", cs.ID, cs.Search, cs.Embeddings)
		}
	}
	// New turns are embedded by the next pass, and only they.
	ingest(t, m, "d", moreTurns("new-", 5, 3))
	res = embed(t, m, "d")
	if res.Turns != 3 {
		t.Fatalf("Embed after 3 new turns = %+v, want 3 turns", res)
	}
}

func TestEmbedProgressAndEmptyTurns(t *testing.T) {
	st := openStore(t)
	emb := hashembed.New("hash-a", 16)
	m := embedMemory(t, st, emb, strata.EmbeddingOptions{BatchSize: 4, Concurrency: 1}, nil)
	turns := synth.New(1).Turns(9)
	turns[3].Content = "  \n "
	ingest(t, m, "c", turns)
	var seen []strata.EmbedProgress
	res, err := m.Embed(context.Background(), strata.EmbedRequest{Conversation: "c", Progress: func(p strata.EmbedProgress) {
		seen = append(seen, p)
	}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Empty != 1 || res.Turns != 9 || emb.Texts() != 8 {
		t.Fatalf("Embed = %+v after embedding %d texts; want 9 turns stored, 1 of them empty and not sent", res, emb.Texts())
	}
	if len(seen) == 0 || seen[len(seen)-1].Done != 9 || seen[len(seen)-1].Total != 9 {
		t.Fatalf("progress = %+v, want it to end at 9 of 9", seen)
	}
	if res := embed(t, m, "c"); res.Turns+res.Empty != 0 {
		t.Fatalf("second Embed = %+v: the empty turn came back", res)
	}
}

func TestEmbedRetries(t *testing.T) {
	st := openStore(t)
	emb := hashembed.New("hash-a", 16)
	emb.Fail = func(call int) error {
		if call <= 2 {
			return &strata.ProviderError{Provider: "hash", Status: 429, Retryable: true, Msg: "slow down"}
		}
		return nil
	}
	m := embedMemory(t, st, emb, strata.EmbeddingOptions{Backoff: time.Millisecond, Concurrency: 1}, nil)
	ingest(t, m, "c", synth.New(1).Turns(5))
	res := embed(t, m, "c")
	if res.Turns != 5 || res.Retries != 2 || res.Calls != 3 {
		t.Fatalf("Embed through two rate limits = %+v, want 5 turns in 3 calls, 2 of them retries", res)
	}

	// A refusal is not retried: the pass stops, keeps what it stored, and
	// the next pass resumes.
	ingest(t, m, "c", moreTurns("second-", 2, 5))
	refused := &strata.ProviderError{Provider: "hash", Status: 400, Msg: "bad request"}
	emb.Fail = func(int) error { return refused }
	res, err := m.Embed(context.Background(), strata.EmbedRequest{Conversation: "c"})
	if !errors.Is(err, refused) || res.Calls != 1 {
		t.Fatalf("Embed against a refusal = %+v, %v; want one call and the refusal", res, err)
	}
	emb.Fail = nil
	if res := embed(t, m, "c"); res.Turns != 5 {
		t.Fatalf("Embed after the refusal = %+v, want the 5 turns left", res)
	}
	// Too many transient failures give up after Retries.
	ingest(t, m, "c", moreTurns("third-", 3, 1))
	emb.Fail = func(int) error {
		return &strata.ProviderError{Provider: "hash", Status: 503, Retryable: true, Msg: "down"}
	}
	m2 := embedMemory(t, st, emb, strata.EmbeddingOptions{Backoff: time.Millisecond, Retries: 2}, nil)
	res, err = m2.Embed(context.Background(), strata.EmbedRequest{Conversation: "c"})
	if err == nil || res.Calls != 3 {
		t.Fatalf("Embed against a server down = %+v, %v; want an error after 3 calls", res, err)
	}
}

func TestEmbedProbesUnknownDimension(t *testing.T) {
	st := openStore(t)
	emb := hashembed.New("hash-a", 24)
	emb.HideDim = true
	m := embedMemory(t, st, emb, strata.EmbeddingOptions{}, nil)
	ingest(t, m, "c", synth.New(1).Turns(3))
	res := embed(t, m, "c")
	if res.Dim != 24 || res.Turns != 3 {
		t.Fatalf("Embed with an embedder that hides its dimension = %+v, want 3 turns in 24 dimensions", res)
	}
	if res := embed(t, m, "c"); res.Calls != 0 {
		t.Fatalf("second Embed made %d calls: the dimension was not kept", res.Calls)
	}
}

func TestReembedAfterModelChange(t *testing.T) {
	st := openStore(t)
	old := embedMemory(t, st, hashembed.New("hash-a", 32), strata.EmbeddingOptions{}, nil)
	ingest(t, old, "c", paraphraseFixture())
	first := embed(t, old, "c")

	emb := hashembed.New("hash-b", 48)
	m := embedMemory(t, st, emb, strata.EmbeddingOptions{}, nil)
	stats, err := m.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	all := int64(first.Turns + first.Nodes)
	if e := stats.Embeddings; e == nil || e.Stale != all || e.Missing != all || e.Turns != 0 || stats.PerConversation[0].Search != strata.SearchLexical {
		t.Fatalf("stats after a model change: %+v (conversation search %q); want %d stale, %d missing, search lexical",
			e, stats.PerConversation[0].Search, all, all)
	}
	// Vectors of the old model are ignored: search is BM25, and does not
	// even embed the query.
	hits, err := m.Search(context.Background(), "c", "automobile repair", 5)
	if err != nil {
		t.Fatal(err)
	}
	if emb.Calls() != 0 {
		t.Fatalf("search over stale vectors made %d calls to the embedder, want none", emb.Calls())
	}
	if seqOf(hits, paraphraseSeq) {
		t.Fatalf("search found the paraphrase through vectors of another model: %v", hitSeqs(hits))
	}
	res, err := m.Reembed(context.Background(), strata.EmbedRequest{Conversation: "c"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Removed != all || int64(res.Turns+res.Nodes) != all || res.Model != "hash-b" || res.Dim != 48 {
		t.Fatalf("Reembed = %+v, want %d removed and as many embedded with hash-b in 48 dimensions", res, all)
	}
	stats, _ = m.Stats(context.Background())
	if e := stats.Embeddings; e.Stale != 0 || e.Missing != 0 || e.Turns != int64(first.Turns) {
		t.Fatalf("stats after Reembed: %+v, want nothing stale or missing", e)
	}
	hits, err = m.Search(context.Background(), "c", "automobile repair", 5)
	if err != nil {
		t.Fatal(err)
	}
	if !seqOf(hits, paraphraseSeq) {
		t.Fatalf("after Reembed the paraphrase is not found: %v", hitSeqs(hits))
	}
	if _, err := embedMemory(t, st, nil, strata.EmbeddingOptions{}, nil).Reembed(context.Background(), strata.EmbedRequest{}); !errors.Is(err, strata.ErrNoEmbedder) {
		t.Fatalf("Reembed without an embedder: %v, want ErrNoEmbedder", err)
	}
}

// paraphraseSeq is the turn of paraphraseFixture that says, in other
// words, that a car was repaired.
const paraphraseSeq = 12

// paraphraseFixture is a conversation in which one turn (paraphraseSeq)
// is about a car repair without the words "automobile" or "repair":
// the query "automobile repair" shares no word with it, so BM25 cannot
// find it, while the fake embedder's concept table puts sedan with
// automobile and mechanic and mend with repair, as a real model would.
// Another turn has the word "repair" (a fence), so BM25 has a hit to give.
func paraphraseFixture() []strata.Turn {
	texts := []string{
		"We baked sourdough bread with the new flour from the mill.",
		"The deploy of version 2.3 went out on Tuesday without trouble.",
		"Ada asked about the budget for the garden party.",
		"Let us meet at the bakery at nine tomorrow.",
		"The build server ran out of disk again.",
		"I finished the pottery class with a blue vase.",
		"Rain all week; the hiking plans are off.",
		"The new guitar strings sound much brighter.",
		"We moved the meeting with the supplier to Friday.",
		"She read three books on the train this month.",
		"The tests pass on linux but fail on windows.",
		"The sedan died on the highway and the mechanic had to mend the engine.",
		"Coffee beans arrive from the roaster every Monday.",
		"The kids painted the garden shed yellow.",
		"Our team shipped the search feature at last.",
		"The concert tickets sold out in an hour.",
		"Grandma sent a recipe for plum dumplings.",
		"The fence repair took all weekend.",
		"We planted tomatoes along the south wall.",
		"The printer jams whenever the paper is damp.",
		"I am learning to swim in the evenings.",
		"The museum has a new exhibit on maps.",
	}
	base := time.Date(2024, 3, 1, 9, 0, 0, 0, time.UTC)
	out := make([]strata.Turn, len(texts))
	for i, s := range texts {
		role := strata.RoleUser
		if i%2 == 1 {
			role = strata.RoleAssistant
		}
		out[i] = strata.Turn{ExtID: fmt.Sprintf("p%d", i+1), Role: role, Content: s, Time: base.Add(time.Duration(i) * time.Hour)}
	}
	return out
}

func seqOf(hits []strata.Hit, seq int64) bool {
	return slices.ContainsFunc(hits, func(h strata.Hit) bool { return h.Turn != nil && h.Turn.Seq == seq })
}

func hitSeqs(hits []strata.Hit) []string {
	var out []string
	for _, h := range hits {
		if h.Turn != nil {
			out = append(out, fmt.Sprintf("turn %d %.3f", h.Turn.Seq, h.Score))
		} else {
			out = append(out, fmt.Sprintf("node %d-%d %.3f", h.Node.FirstSeq, h.Node.LastSeq, h.Score))
		}
	}
	return out
}

func TestHybridFindsParaphrase(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	m := embedMemory(t, st, hashembed.New("hash-a", 64), strata.EmbeddingOptions{}, nil)
	ingest(t, m, "c", paraphraseFixture())

	bm25, err := st.Search(ctx, strata.SearchQuery{Namespace: m.Namespace(), Conversation: "c", Text: "automobile repair", K: 30, Kind: strata.KindTurn})
	if err != nil {
		t.Fatal(err)
	}
	if seqOf(bm25, paraphraseSeq) || !seqOf(bm25, 18) {
		t.Fatalf("BM25 hits %v: the fixture wants the fence (18) found and the car (12) missed", hitSeqs(bm25))
	}
	// Before Embed there are no vectors: hybrid search is BM25.
	hits, err := m.Search(ctx, "c", "automobile repair", 3)
	if err != nil {
		t.Fatal(err)
	}
	if seqOf(hits, paraphraseSeq) {
		t.Fatalf("search without vectors found the paraphrase: %v", hitSeqs(hits))
	}
	embed(t, m, "c")
	// Five: a summary hit brings the (derived) node above it along.
	hits, err = m.Search(ctx, "c", "automobile repair", 5)
	if err != nil {
		t.Fatal(err)
	}
	if !seqOf(hits, paraphraseSeq) || !seqOf(hits, 18) {
		t.Fatalf("hybrid hits %v: want both the car (12, by vector) and the fence (18, by both) in the top 5", hitSeqs(hits))
	}
	if hits[0].Score > 2+0.2 || hits[len(hits)-1].Score <= 0 {
		t.Fatalf("fused scores %v: want (0, 2.12]", hitSeqs(hits))
	}
	// The whole namespace is searched the same way.
	hits, err = m.Search(ctx, "", "automobile repair", 5)
	if err != nil || !seqOf(hits, paraphraseSeq) {
		t.Fatalf("namespace-wide hybrid hits %v, %v: want the car", hitSeqs(hits), err)
	}
	// The same store without an embedder: BM25 only, said once.
	var logs bytes.Buffer
	lex := embedMemory(t, st, nil, strata.EmbeddingOptions{}, slog.New(slog.NewTextHandler(&logs, nil)))
	for range 3 {
		hits, err = lex.Search(ctx, "c", "automobile repair", 3)
		if err != nil {
			t.Fatal(err)
		}
		if seqOf(hits, paraphraseSeq) {
			t.Fatalf("lexical search found the paraphrase: %v", hitSeqs(hits))
		}
	}
	if n := strings.Count(logs.String(), "lexical only"); n != 1 {
		t.Fatalf("the lexical-only warning was logged %d times, want once:\n%s", n, logs.String())
	}
	stats, err := lex.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Search != strata.SearchLexical || stats.Embeddings == nil || stats.Embeddings.Stale == 0 {
		t.Fatalf("stats without an embedder: search %q, embeddings %+v; want lexical, with the stored vectors stale", stats.Search, stats.Embeddings)
	}
}

// TestHybridWeight: the vector ranking's share of a fused score scales
// with EmbeddingOptions.Weight, and BM25's does not.
func TestHybridWeight(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	ingest(t, embedMemory(t, st, nil, strata.EmbeddingOptions{}, nil), "c", paraphraseFixture())
	score := map[float64]float64{} // weight -> the car's fused score
	for _, w := range []float64{0.25, 1, 4} {
		m := embedMemory(t, st, hashembed.New("hash-a", 64), strata.EmbeddingOptions{Weight: w}, nil)
		embed(t, m, "c")
		hits, err := m.Search(ctx, "c", "automobile repair", 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hits {
			if h.Turn != nil && h.Turn.Seq == paraphraseSeq {
				score[w] = h.Score
			}
		}
		if score[w] == 0 {
			t.Fatalf("weight %v: hits %v, want the car (by vector only)", w, hitSeqs(hits))
		}
	}
	// s(w) = w x (what its vector rank earns) + priors, the same rank and
	// priors at every weight: s(4) - s(1) = 4 (s(1) - s(0.25)).
	lo, hi := score[1]-score[0.25], score[4]-score[1]
	if lo <= 0 || math.Abs(hi-4*lo) > 1e-9 {
		t.Fatalf("the car's fused scores by weight: %v; want the vector share to scale with the weight", score)
	}
	// Past the ceiling, below zero, or not a number: EINVALID.
	for _, w := range []float64{-0.5, 4.5, math.NaN()} {
		_, err := strata.New(strata.Config{Store: st, Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New(),
			Embedding: strata.EmbeddingOptions{Weight: w}})
		if strata.ErrorCode(err) != strata.EINVALID || !strings.Contains(err.Error(), "weight") {
			t.Fatalf("weight %v: %v, want EINVALID naming the weight", w, err)
		}
	}
}

func TestHybridFallsBackWhenTheQueryCannotBeEmbedded(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	emb := hashembed.New("hash-a", 64)
	m := embedMemory(t, st, emb, strata.EmbeddingOptions{}, nil)
	ingest(t, m, "c", paraphraseFixture())
	embed(t, m, "c")
	emb.Fail = func(int) error {
		return &strata.ProviderError{Provider: "hash", Status: 503, Retryable: true, Msg: "down"}
	}
	calls := emb.Calls()
	hits, err := m.Search(ctx, "c", "automobile repair", 3)
	if err != nil {
		t.Fatalf("search with the embedder down: %v, want BM25 hits", err)
	}
	if !seqOf(hits, 18) || seqOf(hits, paraphraseSeq) {
		t.Fatalf("search with the embedder down = %v, want BM25's", hitSeqs(hits))
	}
	if n := emb.Calls() - calls; n != 1 {
		t.Fatalf("search with the embedder down made %d calls, want 1: a query is not retried", n)
	}
}

func TestIndexFreshness(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	m := embedMemory(t, st, hashembed.New("hash-a", 64), strata.EmbeddingOptions{}, nil)
	ingest(t, m, "c", paraphraseFixture())
	embed(t, m, "c")
	if _, err := m.Search(ctx, "c", "automobile repair", 3); err != nil { // loads the index
		t.Fatal(err)
	}
	find := func(m *strata.Memory, query string, seq int64) bool {
		t.Helper()
		hits, err := m.Search(ctx, "c", query, 3)
		if err != nil {
			t.Fatal(err)
		}
		return seqOf(hits, seq)
	}
	// Vectors added by this Memory.
	ingest(t, m, "c", []strata.Turn{{ExtID: "n1", Role: strata.RoleUser, Content: "Our puppy chewed the sofa cushions.",
		Time: time.Date(2024, 3, 3, 9, 0, 0, 0, time.UTC)}})
	if find(m, "dog", 23) {
		t.Fatal("found turn 23 by vector before it was embedded")
	}
	embed(t, m, "c")
	if !find(m, "dog", 23) {
		t.Fatal("turn 23 not found by vector after Embed: the index did not take the new vector")
	}
	// Vectors added by another Memory (another process) over the store.
	other := embedMemory(t, st, hashembed.New("hash-a", 64), strata.EmbeddingOptions{}, nil)
	ingest(t, other, "c", []strata.Turn{{ExtID: "n2", Role: strata.RoleUser, Content: "The physician moved my visit to noon.",
		Time: time.Date(2024, 3, 3, 10, 0, 0, 0, time.UTC)}})
	embed(t, other, "c")
	if !find(m, "doctor", 24) {
		t.Fatal("turn 24, embedded by another Memory, not found: the index did not see the store change")
	}
	// A node whose summary changes loses its vector, and gets a new one.
	ns, err := st.Nodes(ctx, strata.NodeFilter{Namespace: m.Namespace(), Conversation: "c", Level: 1, Limit: 1})
	if err != nil || len(ns) == 0 {
		t.Fatalf("no level-1 node: %v", err)
	}
	n := ns[0]
	n.Summary = "A long getaway by the sea."
	if err := st.PutNodes(ctx, m.Namespace(), "c", []strata.Node{n}); err != nil {
		t.Fatal(err)
	}
	hasNode := func() bool {
		hits, err := m.Search(ctx, "c", "holiday", 5)
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(hits, func(h strata.Hit) bool { return h.Node != nil && h.Node.ID == n.ID })
	}
	if hasNode() {
		t.Fatal("the node was found by the vector of its old summary")
	}
	if res := embed(t, m, "c"); res.Nodes != 1 {
		t.Fatalf("Embed after a summary changed = %+v, want that node", res)
	}
	if !hasNode() {
		t.Fatal("the node is not found by the vector of its new summary")
	}
}

func TestEmbeddingOptionsInvalid(t *testing.T) {
	_, err := strata.New(strata.Config{Store: openStore(t), Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New(),
		Embedding: strata.EmbeddingOptions{BatchSize: -1}})
	if strata.ErrorCode(err) != strata.EINVALID {
		t.Fatalf("a negative batch size: %v, want EINVALID", err)
	}
	m := embedMemory(t, openStore(t), nil, strata.EmbeddingOptions{}, nil)
	if _, err := m.Embed(context.Background(), strata.EmbedRequest{}); !errors.Is(err, strata.ErrNoEmbedder) {
		t.Fatalf("Embed without an embedder: %v, want ErrNoEmbedder", err)
	}
}

// TestContextHybrid: with vectors, a context package for a query holds the
// turn only the vectors find (a paraphrase BM25 misses), and the query is
// embedded once for both of its searches (turns and summaries).
func TestContextHybrid(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	emb := hashembed.New("hash-a", 64)
	m := embedMemory(t, st, emb, strata.EmbeddingOptions{}, nil)
	ingest(t, m, "c", paraphraseFixture())
	has := func(pkg *strata.Package) bool {
		for _, it := range pkg.Items {
			if it.Kind == strata.KindTurn && it.FirstSeq == paraphraseSeq {
				return true
			}
		}
		return false
	}
	// A budget that holds only a few turns, the fresh ones not the car's.
	req := strata.ContextRequest{Conversation: "c", Query: "automobile repair", Budget: 200}
	pkg, err := m.Context(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if has(pkg) {
		t.Fatalf("without vectors the package already holds the paraphrase:\n%s", pkg.Rendered)
	}
	embed(t, m, "c")
	before := emb.Calls()
	if pkg, err = m.Context(ctx, req); err != nil {
		t.Fatal(err)
	}
	if !has(pkg) {
		t.Fatalf("with vectors the package misses the paraphrase:\n%s", pkg.Rendered)
	}
	if n := emb.Calls() - before; n != 1 {
		t.Fatalf("one context package called the embedder %d times, want 1 (the query, once)", n)
	}
}

// TestQueryEmbeddedOnceWhenAskedAtOnce: searches of one query made at the
// same time (a context package's two searches, or two requests) share one
// request to the embedder.
func TestQueryEmbeddedOnceWhenAskedAtOnce(t *testing.T) {
	ctx := context.Background()
	emb := slowEmbedder{hashembed.New("hash-64", 64)}
	m := embedMemory(t, openStore(t), emb, strata.EmbeddingOptions{}, nil)
	ingest(t, m, "c", synth.New(3).Turns(200))
	embed(t, m, "c")
	before := emb.Calls()
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = m.Search(ctx, "c", "garden recipe", 5)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := emb.Calls() - before; n != 1 {
		t.Fatalf("6 searches of one query at once called the embedder %d times, want 1", n)
	}
}
