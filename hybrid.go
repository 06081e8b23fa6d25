package strata

import (
	"context"
	"errors"
	"math"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"
)

// Hybrid search fuses two rankings of a conversation's turns and node
// summaries, BM25 (the store's) and cosine similarity of their vectors to
// the query's, by reciprocal rank fusion (Cormack, Clarke and Büttcher,
// SIGIR 2009): an item ranked r in a list earns 1/(rrfK + r) from it,
// and nothing from a list it is not in. Scores are scaled by rrfK + 1, so
// the top item of one list earns 1 and the top of both earns 2. What the
// vector list earns is multiplied by EmbeddingOptions.Weight (default 1).
//
// rrfK is 10, not the customary 60, because Context weighs a hit by its
// score over the best one's, not by its rank alone. At 60 the 24th item of
// a list still earns 0.73 of the first, so two dozen hits weigh nearly the
// same; BM25's own 24th hit scores about 0.39 of its first on LoCoMo, and
// at 10 the 24th earns 0.32. On locomo-dev with averaged word vectors as
// the embedder, 10 recovered 3.6, 2.3 and 0.8 points of pooled recall at
// 1,000, 2,000 and 4,000 tokens over 60.
//
// Recency and importance are priors on top, light enough that they only
// reorder items the rankings put close together: a milestone (importance
// 1) earns importancePrior, about what separates ranks 1 and 2 of one
// list, and an item from the conversation's last moments recencyPrior,
// halving every recencyHalfLife before the conversation's newest turn.
const (
	rrfK            = 10
	importancePrior = 0.08
	recencyPrior    = 0.04
	recencyHalfLife = 30 * 24 * time.Hour
)

// fuseDepth is how many items of each ranking take part in the fusion.
func fuseDepth(k int) int { return max(3*k, 30) }

// hybridSearch ranks the conversation's turns and summaries (every
// conversation of the namespace if conversation is "") against query and
// returns at most k hits, best first. Without an embedder, or when no
// conversation searched has current vectors, or when the query cannot be
// embedded, it returns the store's BM25 hits as they are; otherwise BM25
// and vector rankings are fused (see rrfK) and Score is the fused score.
func (v *vectors) hybridSearch(ctx context.Context, conversation, query string, k int) ([]Hit, error) {
	return v.hybridQuery(ctx, SearchQuery{Namespace: v.ns, Conversation: conversation, Text: query, K: k})
}

// hybridQuery is hybridSearch for a whole query: q.Kind limits the hits
// to turns or summaries, as it does for Store.Search.
func (v *vectors) hybridQuery(ctx context.Context, q SearchQuery) ([]Hit, error) {
	if q.K <= 0 {
		q.K = 10
	}
	q.Namespace = v.ns
	if v.emb == nil {
		v.lexicalOnce.Do(func() {
			v.log.Warn("no embedder is configured: search is lexical only (BM25); set STRATA_EMBED_MODEL for hybrid search")
		})
		return v.store.Search(ctx, q)
	}
	convs, err := v.vectorConversations(ctx, q.Conversation)
	if err != nil {
		return nil, err
	}
	if len(convs) == 0 {
		return v.store.Search(ctx, q)
	}

	// BM25 runs while the query is embedded and the vectors searched.
	depth := fuseDepth(q.K)
	var (
		lex    []Hit
		lexErr error
		wg     sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		lq := q
		lq.K = depth
		lex, lexErr = v.store.Search(ctx, lq)
	}()
	vec, vecErr := v.vectorSearch(ctx, convs, q.Text, depth, q.Kind)
	wg.Wait()
	if lexErr != nil {
		return nil, lexErr
	}
	if vecErr != nil || len(vec) == 0 {
		if vecErr != nil {
			v.log.Warn("search: vector search failed; results are BM25 only", "error", vecErr)
		}
		if len(lex) > q.K {
			lex = lex[:q.K]
		}
		return lex, nil
	}
	return v.fuse(ctx, lex, vec, q.K)
}

// vectorConversations returns the conversations to search by vector: conv,
// or every conversation of the namespace if conv is "", that have vectors
// at all (of any model: which are current is known once the query is
// embedded).
func (v *vectors) vectorConversations(ctx context.Context, conv string) (map[string]VectorVersion, error) {
	ids := []string{conv}
	if conv == "" {
		cs, err := v.store.Conversations(ctx, v.ns)
		if err != nil {
			return nil, err
		}
		ids = ids[:0]
		for _, c := range cs {
			ids = append(ids, c.ID)
		}
	}
	out := map[string]VectorVersion{}
	for _, id := range ids {
		ver, err := v.store.VectorVersion(ctx, v.ns, id)
		if err != nil {
			return nil, err
		}
		if ver.Version > 0 {
			out[id] = ver
		}
	}
	return out, nil
}

// convHit is a vector hit of one conversation.
type convHit struct {
	conv string
	vectorHit
}

// vectorSearch embeds the query and returns the best depth turns and
// summaries of the conversations by cosine, best first. It returns no
// hits, and no error, when no conversation has current vectors; when the
// embedder's dimension is known, that is found out before the query is
// embedded, so that stale vectors cost no call.
func (v *vectors) vectorSearch(ctx context.Context, convs map[string]VectorVersion, query string, depth int, kind string) ([]convHit, error) {
	tick := v.indexes.next()
	defer v.indexes.trim(tick)
	indexes := func(space EmbedSpace) (map[string]*convIndex, error) {
		out := make(map[string]*convIndex, len(convs))
		for conv, ver := range convs {
			ix := v.indexes.get(conv, space, tick)
			if err := ix.refresh(ctx, v.store, v.ns, ver); err != nil {
				return nil, err
			}
			if ix.size() > 0 {
				out[conv] = ix
			}
		}
		return out, nil
	}
	var ixs map[string]*convIndex
	if d := v.embedDim(); d > 0 {
		var err error
		if ixs, err = indexes(EmbedSpace{Model: v.emb.Model(), Dim: d}); err != nil || len(ixs) == 0 {
			return nil, err
		}
	}
	qv, err := v.queryVector(ctx, query)
	if err != nil {
		return nil, err
	}
	if qv == nil {
		return nil, nil
	}
	if ixs == nil || len(qv) != v.embedDim() {
		v.learnDim(len(qv))
		if ixs, err = indexes(EmbedSpace{Model: v.emb.Model(), Dim: len(qv)}); err != nil {
			return nil, err
		}
	}
	var out []convHit
	for conv, ix := range ixs {
		for _, h := range ix.search(qv, depth, kind) {
			out = append(out, convHit{conv, h})
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].score != out[j].score {
			return out[i].score > out[j].score
		}
		return out[i].conv < out[j].conv
	})
	if len(out) > depth {
		out = out[:depth]
	}
	return out, nil
}

// fused is one item in the fusion.
type fused struct {
	hit   Hit
	rrf   float64
	ref   EmbedRef
	conv  string
	ready bool // hit holds the turn or node
}

// fuse merges the BM25 and vector rankings by reciprocal rank, adds the
// priors, and returns the k best with their turns and nodes.
func (v *vectors) fuse(ctx context.Context, lex []Hit, vec []convHit, k int) ([]Hit, error) {
	items := map[string]*fused{}
	key := func(conv string, r EmbedRef) string {
		if r.Node != "" {
			return conv + "\x00n" + r.Node
		}
		return conv + "\x00t" + strconv.FormatInt(r.Seq, 10)
	}
	for i, h := range lex {
		var r EmbedRef
		if h.Node != nil {
			r = EmbedRef{Level: h.Node.Level, Seq: h.Node.FirstSeq, Node: h.Node.ID}
		} else if h.Turn != nil {
			r = EmbedRef{Seq: h.Turn.Seq}
		} else {
			continue
		}
		f := &fused{hit: h, ref: r, conv: h.Conversation, ready: true}
		f.rrf = rrf(i + 1)
		items[key(h.Conversation, r)] = f
	}
	for i, h := range vec {
		kk := key(h.conv, h.ref)
		f, ok := items[kk]
		if !ok {
			f = &fused{ref: h.ref, conv: h.conv}
			items[kk] = f
		}
		f.rrf += v.opt.Weight * rrf(i+1)
	}
	list := make([]*fused, 0, len(items))
	for _, f := range items {
		list = append(list, f)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].rrf > list[j].rrf })
	// Priors add at most importancePrior + recencyPrior: an item below the
	// k-th by more than that cannot make the cut, and is not read.
	if len(list) > k {
		cut := list[k-1].rrf - importancePrior - recencyPrior
		n := k
		for n < len(list) && list[n].rrf >= cut {
			n++
		}
		list = list[:n]
	}
	if err := v.loadHits(ctx, list); err != nil {
		return nil, err
	}
	lasts := map[string]time.Time{}
	out := make([]Hit, 0, len(list))
	for _, f := range list {
		if !f.ready {
			continue // expired, or gone since it was indexed
		}
		last, ok := lasts[f.conv]
		if !ok {
			if c, err := v.conversation(ctx, f.conv); err == nil {
				last = c.Last
			}
			lasts[f.conv] = last
		}
		h := f.hit
		h.Score = f.rrf + prior(h, last)
		out = append(out, h)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	if len(out) > k {
		out = out[:k]
	}
	return out, nil
}

// rrf is what rank r (1-based) of one list earns.
func rrf(r int) float64 { return float64(rrfK+1) / float64(rrfK+r) }

// prior is the recency and importance bonus of a hit; last is the time of
// its conversation's newest turn.
func prior(h Hit, last time.Time) float64 {
	var at time.Time
	var p float64
	switch {
	case h.Turn != nil:
		at = h.Turn.Time
		p += importancePrior * h.Turn.Importance
	case h.Node != nil:
		at = h.Node.End
	}
	if !at.IsZero() && !last.IsZero() {
		age := last.Sub(at)
		if age < 0 {
			age = 0
		}
		p += recencyPrior * math.Exp2(-float64(age)/float64(recencyHalfLife))
	}
	return p
}

// loadHits reads the turns and nodes of the items found by vector only,
// one call per conversation and kind.
func (v *vectors) loadHits(ctx context.Context, list []*fused) error {
	type want struct {
		seqs []int64
		ids  []string
	}
	byConv := map[string]*want{}
	for _, f := range list {
		if f.ready {
			continue
		}
		w := byConv[f.conv]
		if w == nil {
			w = &want{}
			byConv[f.conv] = w
		}
		if f.ref.Node == "" {
			w.seqs = append(w.seqs, f.ref.Seq)
		} else {
			w.ids = append(w.ids, f.ref.Node)
		}
	}
	for conv, w := range byConv {
		turns := map[int64]*Turn{}
		nodes := map[string]*Node{}
		if len(w.seqs) > 0 {
			ts, err := v.store.Turns(ctx, TurnFilter{Namespace: v.ns, Conversation: conv, Seqs: w.seqs})
			if err != nil {
				return err
			}
			for i := range ts {
				turns[ts[i].Seq] = &ts[i]
			}
		}
		if len(w.ids) > 0 {
			ns, err := v.store.Nodes(ctx, NodeFilter{Namespace: v.ns, Conversation: conv, IDs: w.ids})
			if err != nil {
				return err
			}
			for i := range ns {
				nodes[ns[i].ID] = &ns[i]
			}
		}
		for _, f := range list {
			if f.ready || f.conv != conv {
				continue
			}
			if f.ref.Node == "" {
				if t := turns[f.ref.Seq]; t != nil {
					f.hit = Hit{Kind: KindTurn, Conversation: conv, Turn: t}
					f.ready = true
				}
			} else if n := nodes[f.ref.Node]; n != nil {
				f.hit = Hit{Kind: KindSummary, Conversation: conv, Node: n}
				f.ready = true
			}
		}
	}
	return nil
}

// queryVector embeds a query, normalized. The last few queries' vectors
// are kept, and a caller asking for a query whose vector is on its way
// waits for it, so that a context package, which searches turns and
// summaries apart and at the same time, asks the embedder once.
func (v *vectors) queryVector(ctx context.Context, query string) ([]float32, error) {
	text := clip(query, v.opt.MaxInputBytes)
	key := v.emb.Model() + "\x00" + text
	v.qmu.Lock()
	for _, e := range v.qcache {
		if e.key == key {
			v.qmu.Unlock()
			select {
			case <-e.done:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			if e.err != nil && ctx.Err() == nil && errors.Is(e.err, context.Canceled) {
				// The caller that asked gave up; this one has not.
				return v.queryVector(ctx, query)
			}
			return e.vec, e.err
		}
	}
	e := &queryVec{key: key, done: make(chan struct{})}
	v.qcache = append(v.qcache, e)
	if len(v.qcache) > queryCacheSize {
		v.qcache = v.qcache[len(v.qcache)-queryCacheSize:]
	}
	v.qmu.Unlock()

	e.vec, e.err = v.embedQuery(ctx, text)
	if e.err != nil {
		// Not kept: the next caller asks again.
		v.qmu.Lock()
		v.qcache = slices.DeleteFunc(v.qcache, func(x *queryVec) bool { return x == e })
		v.qmu.Unlock()
	}
	close(e.done)
	return e.vec, e.err
}

// embedQuery asks the embedder for the normalized vector of one query.
func (v *vectors) embedQuery(ctx context.Context, text string) ([]float32, error) {
	qctx, cancel := context.WithTimeout(ctx, v.opt.QueryTimeout)
	vs, err := v.emb.Embed(qctx, []string{text})
	cancel()
	if err != nil {
		return nil, err
	}
	if len(vs) != 1 {
		return nil, Errorf(EINTERNAL, "embedder %s returned %d vectors for one query", v.emb.Name(), len(vs))
	}
	return normalize(vs[0]), nil
}

// queryCacheSize is how many query vectors a Memory keeps.
const queryCacheSize = 8

// queryVec is a query's vector, or its error, once done is closed.
type queryVec struct {
	key  string
	vec  []float32
	err  error
	done chan struct{}
}
