package strata

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Embedder turns texts into vectors: a sentence-embedding model behind an
// API (package openai speaks any OpenAI-compatible /v1/embeddings endpoint).
// Embeddings are an upgrade: without an Embedder search is BM25 only.
//
// Like a Completer, an Embedder makes one attempt per call and reports
// failures as *ProviderError, so that the engine decides whether to try
// again: bulk embedding (Memory.Embed) retries transient failures with
// backoff, while a search does not wait for a failing server and falls
// back to BM25. An Embedder may split a batch its server refuses as too
// large into smaller requests.
type Embedder interface {
	// Name names the provider and its endpoint for logs and stats, e.g.
	// "openai http://127.0.0.1:11434/v1".
	Name() string
	// Model names the model. Vectors are stored under it: vectors of
	// another model are stale, ignored by search (see Memory.Reembed).
	Model() string
	// Dimensions is the length of the vectors Embed returns, or 0 while
	// it is unknown (before the first call, when the model's dimension is
	// not configured).
	Dimensions() int
	// Embed returns one vector per text, in order. Texts are not empty.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// EmbedSpace names the vectors of one embedder configuration: its model
// and the vectors' dimension. Vectors compare only within a space.
type EmbedSpace struct {
	Model string `json:"model"`
	Dim   int    `json:"dimensions"`
}

// EmbedRef names what a vector embeds: a turn (Level 0, Node "") by its
// Seq, or a node by its ID (Level its level, Seq its first seq). Refs order
// by level, then seq, then node id: turns first, in seq order, then the
// nodes level by level.
type EmbedRef struct {
	Level int    `json:"level"`
	Seq   int64  `json:"seq"`
	Node  string `json:"node,omitempty"`
}

// Kind is KindTurn or KindSummary.
func (r EmbedRef) Kind() string {
	if r.Node == "" {
		return KindTurn
	}
	return KindSummary
}

// Less reports whether r orders before o.
func (r EmbedRef) Less(o EmbedRef) bool {
	if r.Level != o.Level {
		return r.Level < o.Level
	}
	if r.Seq != o.Seq {
		return r.Seq < o.Seq
	}
	return r.Node < o.Node
}

// EmbedFilter selects the turns and nodes of one conversation that have
// no vector in a space, for Store.Unembedded.
type EmbedFilter struct {
	Namespace    string
	Conversation string
	// Space.Model is required; a Space.Dim of 0 counts a vector of the
	// model of any dimension as present.
	Space EmbedSpace
	Kind  string    // "" (both), KindTurn or KindSummary
	After *EmbedRef // only what orders after this ref; nil: from the start
	Limit int       // at most this many; <= 0 means 1000
}

// EmbedSource is a turn or node without a vector, with the text to embed:
// a turn's Text, a node's summary.
type EmbedSource struct {
	EmbedRef
	Text string `json:"text"`
}

// Embedding is the vector of one turn or node, for Store.PutEmbeddings.
// A zero vector marks an item with no text: stored, so that it is not
// listed again, and never a search hit.
type Embedding struct {
	EmbedRef
	Vector []float32 `json:"vector"`
}

// VectorFilter selects the stored vectors of one conversation in one
// space, for Store.Vectors.
type VectorFilter struct {
	Namespace    string
	Conversation string
	// Space.Model is required; a Space.Dim of 0 selects the model's
	// vectors of any dimension.
	Space EmbedSpace
	Kind  string // "" (both), KindTurn or KindSummary
	// Since keeps the vectors written after that version of the
	// conversation's vectors (see VectorVersion); 0 keeps all.
	Since int64
}

// VectorCounter is an optional Store method: the number of vectors that
// Store.Vectors would stream for f, found without reading them. The
// vector index uses it to size itself before a load; a store without it
// works the same, only loading a big index more slowly.
type VectorCounter interface {
	CountVectors(ctx context.Context, f VectorFilter) (int, error)
}

// Vector is one stored vector as Store.Vectors streams it.
type Vector struct {
	EmbedRef
	LastSeq int64 // a node's last seq; a turn's seq
	Dim     int
	Version int64 // the VectorVersion.Version that wrote it
	// Values is only valid during the callback: copy it to keep it.
	Values []float32
}

// VectorVersion says how the vectors of a conversation changed, so that
// an in-memory index can tell whether it is fresh. Version grows with
// every change (vectors stored or removed); TurnsRemoved and NodesRemoved
// are the versions of the latest removal of a turn's or a node's vector
// (a node's vector is removed when its summary changes or the node goes).
// All are 0 for a conversation that never had vectors.
type VectorVersion struct {
	Version      int64 `json:"version"`
	TurnsRemoved int64 `json:"turns_removed"`
	NodesRemoved int64 `json:"nodes_removed"`
}

// VectorCounts counts what one conversation can embed and the vectors it
// holds, by space.
type VectorCounts struct {
	Conversation string       `json:"conversation"`
	Turns        int64        `json:"turns"` // turns whose content has not expired
	Nodes        int64        `json:"nodes"` // nodes not pending a model summary
	Spaces       []SpaceCount `json:"spaces"`
}

// SpaceCount counts a conversation's vectors of one space.
type SpaceCount struct {
	Space EmbedSpace `json:"space"`
	Turns int64      `json:"turns"`
	Nodes int64      `json:"nodes"`
}

// EmbeddingStats describes the vectors of a namespace or a conversation
// against the configured embedder.
type EmbeddingStats struct {
	Embedder string `json:"embedder,omitempty"` // the Embedder's Name
	Model    string `json:"model,omitempty"`
	Dim      int    `json:"dimensions,omitempty"` // 0 while unknown
	// Weight is the vector ranking's weight in hybrid search against
	// BM25's 1 (EmbeddingOptions.Weight); 0 with no embedder.
	Weight float64 `json:"weight,omitempty"`
	Turns  int64   `json:"turns"` // turns with a current vector
	Nodes  int64   `json:"nodes"` // summaries with a current vector
	// Missing counts turns and summaries without a current vector:
	// `strata embed` computes them (summaries pending a model summary wait
	// for it).
	Missing int64 `json:"missing"`
	// Stale counts vectors of another model or dimension: search ignores
	// them, `strata reembed` replaces them.
	Stale int64 `json:"stale"`
}

// Search modes, as Stats reports them.
const (
	SearchLexical = "lexical" // BM25 only
	SearchHybrid  = "hybrid"  // BM25 and vectors, fused by rank
)

// EmbeddingOptions tune embedding; zero fields take defaults.
type EmbeddingOptions struct {
	// BatchSize is how many texts go in one call to the Embedder.
	// Default 64.
	BatchSize int
	// Concurrency bounds the calls in flight. Default 2.
	Concurrency int
	// Retries is how many times a failed call (rate limit, server error,
	// timeout) is tried again by Memory.Embed, with exponential backoff
	// from Backoff (default 1s, or what the provider asks for). Default
	// 3; negative: none.
	Retries int
	Backoff time.Duration
	// QueryTimeout bounds the embedding of a search query; past it, or on
	// any error, the search is BM25 only. Default 10s.
	QueryTimeout time.Duration
	// MaxInputBytes caps the text of one turn or summary sent to the
	// Embedder (cut at a character boundary): embedding models read a
	// few hundred to a few thousand tokens. Default 8192.
	MaxInputBytes int
	// CachedVectors bounds the vectors kept in memory for search, over
	// all conversations (about 450 bytes each in 384 dimensions): past it,
	// the indexes of the conversations searched least recently are
	// dropped. The conversations of one search are always kept. Default
	// 2,000,000.
	CachedVectors int
	// Weight is what the vector ranking counts for in hybrid search
	// against BM25's, which counts 1: an item ranked r by cosine earns
	// Weight x 11/(10 + r). Default 1. A model whose rankings are weaker
	// than BM25's on your conversations costs recall at full weight;
	// strata eval measures it, and a lower weight keeps the model's
	// finds without letting its misses crowd out BM25's.
	Weight float64
}

// MaxVectorWeight is the ceiling of EmbeddingOptions.Weight: past it,
// BM25 hardly counts.
const MaxVectorWeight = 4

func (o EmbeddingOptions) withDefaults() (EmbeddingOptions, error) {
	if o.Weight < 0 || o.Weight > MaxVectorWeight || o.Weight != o.Weight {
		return o, Errorf(EINVALID, "config: embedding weight %v is outside 0..%d (0 means the default, 1)", o.Weight, MaxVectorWeight)
	}
	if o.Weight == 0 {
		o.Weight = 1
	}
	if o.BatchSize < 0 || o.Concurrency < 0 || o.Backoff < 0 || o.QueryTimeout < 0 || o.MaxInputBytes < 0 || o.CachedVectors < 0 {
		return o, Errorf(EINVALID, "config: embedding options cannot be negative (batch size %d, concurrency %d, backoff %v, query timeout %v, max input bytes %d, cached vectors %d)",
			o.BatchSize, o.Concurrency, o.Backoff, o.QueryTimeout, o.MaxInputBytes, o.CachedVectors)
	}
	if o.BatchSize == 0 {
		o.BatchSize = 64
	}
	if o.Concurrency == 0 {
		o.Concurrency = 2
	}
	if o.Retries == 0 {
		o.Retries = 3
	}
	if o.Retries < 0 {
		o.Retries = 0
	}
	if o.Backoff == 0 {
		o.Backoff = time.Second
	}
	if o.QueryTimeout == 0 {
		o.QueryTimeout = 10 * time.Second
	}
	if o.MaxInputBytes == 0 {
		o.MaxInputBytes = 8192
	}
	if o.CachedVectors == 0 {
		o.CachedVectors = 2_000_000
	}
	return o, nil
}

// EmbedRequest says what Memory.Embed and Memory.Reembed work on.
type EmbedRequest struct {
	Conversation string // "" means every conversation of the namespace
	// Progress, if set, is called after each stored batch (from one
	// goroutine at a time).
	Progress func(EmbedProgress)
}

// EmbedProgress is how far an Embed pass is.
type EmbedProgress struct {
	Conversation string
	Done         int   // vectors stored so far in this pass
	Total        int64 // vectors missing when the pass began (an estimate)
}

// EmbedResult says what an Embed or Reembed pass did.
type EmbedResult struct {
	Model         string `json:"model"`
	Dim           int    `json:"dimensions"`
	Conversations int    `json:"conversations"`
	Turns         int    `json:"turns"` // turn vectors stored
	Nodes         int    `json:"nodes"` // summary vectors stored
	// Empty counts turns and summaries without text: they get a zero
	// vector, never a hit, and no call.
	Empty   int   `json:"empty"`
	Calls   int   `json:"calls"` // calls to the Embedder, retries included
	Retries int   `json:"retries"`
	Removed int64 `json:"removed"` // Reembed: vectors of other models or dimensions dropped
	// Claimed lists the conversations left to another process that was
	// embedding them (it holds their claim, see ClaimStore).
	Claimed []string `json:"claimed,omitempty"`
}

// ErrNoEmbedder is returned by Embed and Reembed when no Embedder is
// configured.
var ErrNoEmbedder = Errorf(EINVALID, "no embedder is configured (set STRATA_EMBED_MODEL, --embed-model or embed.model in strata.yaml)")

// vectors computes and stores the vectors of turns and node summaries,
// and ranks them against queries for hybrid search (hybrid.go).
type vectors struct {
	scope
	claims      *claims
	emb         Embedder // nil: search is BM25 only
	opt         EmbeddingOptions
	mu          sync.Mutex
	dim         int // the embedder's dimension once a call told it (guarded by mu)
	indexes     indexCache
	lexicalOnce sync.Once // the "search is lexical only" warning

	qmu    sync.Mutex
	qcache []*queryVec // the latest query vectors, oldest first
}

// newVectors returns the vectors part of a Memory over s, with caches of
// its own.
func newVectors(s scope, c *claims, emb Embedder, opt EmbeddingOptions) *vectors {
	return &vectors{scope: s, claims: c, emb: emb, opt: opt, indexes: indexCache{maxVectors: opt.CachedVectors}}
}

// Embed computes the missing vectors of the conversation's turns and node
// summaries (of every conversation of the namespace if req.Conversation is
// ""), in batches of EmbeddingOptions.BatchSize with at most Concurrency
// calls in flight, and stores them under the embedder's model and
// dimension. It is never called by Ingest: run it after imports (`strata
// embed`), from a server's worker, or on a timer. A second call with
// nothing new embeds nothing. Summaries pending a model summary wait for
// it. A call that fails after its retries stops the pass with the error;
// what was stored stays, and the next pass resumes. Each conversation is
// claimed while it is embedded (see ClaimStore), so that processes
// sharing the store embed each item once: one another process holds is
// left to it and listed in EmbedResult.Claimed.
func (m *Memory) Embed(ctx context.Context, req EmbedRequest) (EmbedResult, error) {
	return m.vec.embedPass(ctx, req, false)
}

// Reembed drops the conversation's vectors of other models or dimensions
// (of every conversation if req.Conversation is "") and computes the
// missing ones with the configured embedder: run it after changing the
// embedding model.
func (m *Memory) Reembed(ctx context.Context, req EmbedRequest) (EmbedResult, error) {
	return m.vec.embedPass(ctx, req, true)
}

func (v *vectors) embedPass(ctx context.Context, req EmbedRequest, reembed bool) (EmbedResult, error) {
	var res EmbedResult
	if v.emb == nil {
		return res, ErrNoEmbedder
	}
	convs, err := v.conversationsOf(ctx, req.Conversation)
	if err != nil {
		return res, err
	}
	space, err := v.embedSpace(ctx, &res)
	if err != nil {
		return res, err
	}
	res.Model, res.Dim = space.Model, space.Dim
	if reembed {
		n, err := v.store.DeleteEmbeddings(ctx, v.ns, req.Conversation, space)
		res.Removed = n
		if err != nil {
			return res, err
		}
	}
	var total int64
	if req.Progress != nil {
		total = v.missing(ctx, req.Conversation, space)
	}
	done := 0
	l := v.claims.newLease()
	defer l.close(ctx)
	for _, c := range convs {
		key := claimKey(claimEmbed, v.ns, c.ID)
		ok, err := l.take(ctx, key)
		if err != nil {
			return res, fmt.Errorf("embed %s: %w", c.ID, err)
		}
		if !ok {
			res.Claimed = append(res.Claimed, c.ID)
			continue
		}
		res.Conversations++
		err = v.embedConversation(ctx, c.ID, space, &res, func(n int) {
			done += n
			if req.Progress != nil {
				req.Progress(EmbedProgress{Conversation: c.ID, Done: done, Total: max(total, int64(done))})
			}
		})
		l.release(ctx, key)
		if err != nil {
			return res, fmt.Errorf("embed %s: %w", c.ID, err)
		}
	}
	return res, nil
}

// missing estimates how many vectors of space the conversation (or the
// namespace) lacks; 0 if it cannot tell.
func (v *vectors) missing(ctx context.Context, conv string, space EmbedSpace) int64 {
	st, err := v.embeddingStats(ctx, conv, space)
	if err != nil {
		return 0
	}
	return st.Missing
}

// embedSpace is the space of the configured embedder. When the embedder
// cannot tell its dimension before a call, one short text is embedded to
// learn it (once per Memory).
func (v *vectors) embedSpace(ctx context.Context, res *EmbedResult) (EmbedSpace, error) {
	if d := v.embedDim(); d > 0 {
		return EmbedSpace{Model: v.emb.Model(), Dim: d}, nil
	}
	vs, calls, err := v.embedRetry(ctx, []string{"dimension probe"})
	res.Calls += calls
	res.Retries += max(0, calls-1)
	if err != nil {
		return EmbedSpace{}, err
	}
	if len(vs) != 1 || len(vs[0]) == 0 {
		return EmbedSpace{}, fmt.Errorf("embedder %s returned no vector for one text", v.emb.Name())
	}
	v.learnDim(len(vs[0]))
	return EmbedSpace{Model: v.emb.Model(), Dim: len(vs[0])}, nil
}

// embedDim is the dimension of the configured embedder's vectors: its own
// word, or what a call returned; 0 while unknown.
func (v *vectors) embedDim() int {
	if v.emb == nil {
		return 0
	}
	if d := v.emb.Dimensions(); d > 0 {
		return d
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.dim
}

func (v *vectors) learnDim(d int) {
	v.mu.Lock()
	v.dim = d
	v.mu.Unlock()
}

// embedConversation embeds what conv lacks: one goroutine lists the
// sources page by page and cuts them into batches; workers embed and
// store them.
func (v *vectors) embedConversation(ctx context.Context, conv string, space EmbedSpace, res *EmbedResult, progress func(int)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := make(chan []EmbedSource)
	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	fail := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		mu.Unlock()
		cancel()
	}
	for range v.opt.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range batches {
				r, err := v.embedAndStore(ctx, conv, space, b)
				mu.Lock()
				res.Turns += r.Turns
				res.Nodes += r.Nodes
				res.Empty += r.Empty
				res.Calls += r.Calls
				res.Retries += r.Retries
				if err == nil {
					progress(len(b))
				}
				mu.Unlock()
				if err != nil {
					fail(err)
				}
			}
		}()
	}
	var after *EmbedRef
	page := max(1000, 4*v.opt.BatchSize*v.opt.Concurrency)
list:
	for {
		srcs, err := v.store.Unembedded(ctx, EmbedFilter{Namespace: v.ns, Conversation: conv, Space: space, After: after, Limit: page})
		if err != nil {
			fail(err)
			break
		}
		full := len(srcs) == page
		for len(srcs) > 0 {
			n := min(len(srcs), v.opt.BatchSize)
			select {
			case batches <- srcs[:n:n]:
			case <-ctx.Done():
				break list
			}
			last := srcs[n-1].EmbedRef
			after = &last
			srcs = srcs[n:]
		}
		if !full {
			break
		}
	}
	close(batches)
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}

// embedAndStore embeds one batch and stores its vectors in one call to
// the store. Texts are cut to MaxInputBytes; empty ones get a zero vector
// without a call.
func (v *vectors) embedAndStore(ctx context.Context, conv string, space EmbedSpace, srcs []EmbedSource) (EmbedResult, error) {
	var res EmbedResult
	es := make([]Embedding, len(srcs))
	var texts []string
	var at []int
	for i, s := range srcs {
		es[i].EmbedRef = s.EmbedRef
		t := clip(s.Text, v.opt.MaxInputBytes)
		if strings.TrimSpace(t) == "" {
			es[i].Vector = make([]float32, space.Dim)
			res.Empty++
			continue
		}
		texts = append(texts, t)
		at = append(at, i)
	}
	if len(texts) > 0 {
		vs, calls, err := v.embedRetry(ctx, texts)
		res.Calls += calls
		res.Retries += max(0, calls-1)
		if err != nil {
			return res, err
		}
		if len(vs) != len(texts) {
			return res, fmt.Errorf("embedder %s returned %d vectors for %d texts", v.emb.Name(), len(vs), len(texts))
		}
		for j, vec := range vs {
			if len(vec) != space.Dim {
				return res, fmt.Errorf("embedder %s returned a vector of %d dimensions, want %d (did the model change? run strata reembed)",
					v.emb.Name(), len(vec), space.Dim)
			}
			for _, x := range vec {
				if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
					return res, fmt.Errorf("embedder %s returned a vector with %v in it", v.emb.Name(), x)
				}
			}
			es[at[j]].Vector = vec
		}
	}
	if err := v.store.PutEmbeddings(ctx, v.ns, conv, space, es); err != nil {
		return res, err
	}
	for _, e := range es {
		if e.Node == "" {
			res.Turns++
		} else {
			res.Nodes++
		}
	}
	return res, nil
}

// embedRetry calls the embedder, trying a failed call again up to
// Retries times when the failure is transient, with exponential backoff
// (or the wait the provider asks for). It returns the number of calls.
func (v *vectors) embedRetry(ctx context.Context, texts []string) ([][]float32, int, error) {
	wait := v.opt.Backoff
	for attempt := 0; ; attempt++ {
		vs, err := v.emb.Embed(ctx, texts)
		if err == nil {
			return vs, attempt + 1, nil
		}
		var pe *ProviderError
		retry := errors.As(err, &pe) && pe.Retryable
		if !retry || attempt >= v.opt.Retries || ctx.Err() != nil {
			return nil, attempt + 1, err
		}
		d := wait
		if pe.RetryAfter > 0 {
			d = min(pe.RetryAfter, 5*time.Minute)
		}
		v.log.Warn("embedder call failed; trying again", "embedder", v.emb.Name(), "wait", d, "error", err)
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, attempt + 1, ctx.Err()
		case <-t.C:
		}
		wait *= 2
	}
}

// clip cuts s to at most n bytes at a character boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// embeddingStats counts the vectors of the conversation (of the namespace
// if conv is "") against space: current, stale and missing. A space of
// Dim 0 counts the model's vectors of any dimension as current; a zero
// space (no embedder) counts every vector as stale.
func (v *vectors) embeddingStats(ctx context.Context, conv string, space EmbedSpace) (EmbeddingStats, error) {
	vcs, err := v.store.VectorCounts(ctx, v.ns, conv)
	if err != nil {
		return EmbeddingStats{}, err
	}
	var st EmbeddingStats
	for _, vc := range vcs {
		s := countAgainst(vc, space)
		st.Turns += s.Turns
		st.Nodes += s.Nodes
		st.Missing += s.Missing
		st.Stale += s.Stale
	}
	return st, nil
}

// countAgainst counts one conversation's vectors against space.
func countAgainst(vc VectorCounts, space EmbedSpace) EmbeddingStats {
	var st EmbeddingStats
	for _, sc := range vc.Spaces {
		if space.Model != "" && sc.Space.Model == space.Model && (space.Dim == 0 || sc.Space.Dim == space.Dim) {
			st.Turns += sc.Turns
			st.Nodes += sc.Nodes
		} else {
			st.Stale += sc.Turns + sc.Nodes
		}
	}
	if space.Model != "" {
		st.Missing = max(0, vc.Turns-st.Turns) + max(0, vc.Nodes-st.Nodes)
	}
	return st
}

// addEmbeddingStats sets the search mode and the embedding counts of st
// and of each of its conversations.
func (v *vectors) addEmbeddingStats(ctx context.Context, st *Stats) error {
	st.Search = SearchLexical
	var space EmbedSpace
	if v.emb != nil {
		st.Search = SearchHybrid
		space = EmbedSpace{Model: v.emb.Model(), Dim: v.embedDim()}
	}
	vcs, err := v.store.VectorCounts(ctx, v.ns, "")
	if err != nil {
		return err
	}
	if space.Model != "" && space.Dim == 0 {
		space.Dim = storedDim(vcs, space.Model)
	}
	byID := make(map[string]VectorCounts, len(vcs))
	for _, vc := range vcs {
		byID[vc.Conversation] = vc
	}
	var all EmbeddingStats
	for i := range st.PerConversation {
		cs := &st.PerConversation[i]
		s := countAgainst(byID[cs.ID], space)
		cs.Search = SearchLexical
		if v.emb != nil && s.Turns+s.Nodes > 0 {
			cs.Search = SearchHybrid
		}
		if v.emb != nil || s.Stale > 0 {
			s.Embedder, s.Model, s.Dim = v.embedderName(), space.Model, space.Dim
			if v.emb != nil {
				s.Weight = v.opt.Weight
			}
			cs.Embeddings = &s
		}
		all.Turns += s.Turns
		all.Nodes += s.Nodes
		all.Missing += s.Missing
		all.Stale += s.Stale
	}
	if v.emb != nil || all.Stale > 0 {
		all.Embedder, all.Model, all.Dim = v.embedderName(), space.Model, space.Dim
		if v.emb != nil {
			all.Weight = v.opt.Weight
		}
		st.Embeddings = &all
	}
	return nil
}

// storedDim is the dimension of most of the stored vectors of model, 0 if
// there are none: the embedder's, when it cannot tell before a call.
func storedDim(vcs []VectorCounts, model string) int {
	n := map[int]int64{}
	for _, vc := range vcs {
		for _, sc := range vc.Spaces {
			if sc.Space.Model == model {
				n[sc.Space.Dim] += sc.Turns + sc.Nodes
			}
		}
	}
	best := 0
	for d, c := range n {
		if best == 0 || c > n[best] || c == n[best] && d < best {
			best = d
		}
	}
	return best
}

func (v *vectors) embedderName() string {
	if v.emb == nil {
		return ""
	}
	return v.emb.Name()
}
