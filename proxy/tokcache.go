package proxy

import (
	"hash/maphash"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/internal/gencache"
)

// A chat app resends its whole history on every call, so the proxy
// counts the same texts again and again: countCache keeps their counts,
// by a hash of the text, so that a call counts only what is new.

// countCacheCap bounds the counts kept: two generations of half as many
// each (internal/gencache), the older dropped when the newer is full.
const countCacheCap = 1 << 17

// minCached is the shortest text whose count is kept: shorter ones cost
// less to count than to look up.
const minCached = 64

type countCache struct {
	tok  strata.Tokenizer
	seed maphash.Seed
	gen  *gencache.Cache[countKey, int]
}

type countKey struct {
	h uint64
	n int // the text's length, beside its hash
}

func newCountCache(tok strata.Tokenizer) *countCache {
	return &countCache{tok: tok, seed: maphash.MakeSeed(), gen: gencache.New[countKey, int](countCacheCap / 2)}
}

// Name is the tokenizer's.
func (c *countCache) Name() string { return c.tok.Name() }

// Count is the tokenizer's count of s.
func (c *countCache) Count(s string) int {
	if len(s) < minCached {
		return c.tok.Count(s)
	}
	k := countKey{maphash.String(c.seed, s), len(s)}
	if n, ok := c.gen.Get(k); ok {
		return n
	}
	n := c.tok.Count(s)
	c.gen.Put(k, n)
	return n
}
