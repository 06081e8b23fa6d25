package strata

import (
	"hash/maphash"

	"github.com/strata-memory/strata/internal/gencache"
)

// countCache remembers the token counts of texts a context package
// rendered lately. A conversation's packages render mostly the same items
// call after call (its coverage summaries, its fresh turns), and counting
// their tokens was about a fifth of a package's time. Texts are keyed by a
// 64-bit hash; two generations of countCacheSize entries each are kept
// (internal/gencache). A package's final count is of its whole text
// (finish), never from this cache, so a hash collision could cost a
// package an item, not its budget.
type countCache struct {
	seed maphash.Seed
	gen  *gencache.Cache[uint64, int32]
}

const countCacheSize = 8192

func newCountCache() *countCache {
	return &countCache{seed: maphash.MakeSeed(), gen: gencache.New[uint64, int32](countCacheSize)}
}

// count returns tok's count of text, from the cache when it has it.
func (c *countCache) count(tok Tokenizer, text string) int {
	h := maphash.String(c.seed, text)
	if n, ok := c.gen.Get(h); ok {
		return int(n)
	}
	v := tok.Count(text)
	c.gen.Put(h, int32(v))
	return v
}
