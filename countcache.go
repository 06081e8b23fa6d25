package strata

import (
	"hash/maphash"
	"sync"
)

// countCache remembers the token counts of texts a context package
// rendered lately. A conversation's packages render mostly the same items
// call after call (its coverage summaries, its fresh turns), and counting
// their tokens was about a fifth of a package's time. Texts are keyed by a
// 64-bit hash; two generations of countCacheSize entries each are kept, a
// hit in the older moving the entry to the newer. A package's final count
// is of its whole text (finish), never from this cache, so a hash
// collision could cost a package an item, not its budget.
type countCache struct {
	mu        sync.Mutex
	seed      maphash.Seed
	cur, prev map[uint64]int32
}

const countCacheSize = 8192

// count returns tok's count of text, from the cache when it has it.
func (c *countCache) count(tok Tokenizer, text string) int {
	c.mu.Lock()
	if c.cur == nil {
		c.seed = maphash.MakeSeed()
		c.cur = make(map[uint64]int32, countCacheSize)
	}
	h := maphash.String(c.seed, text)
	n, ok := c.cur[h]
	if !ok {
		if n, ok = c.prev[h]; ok {
			c.put(h, n)
		}
	}
	c.mu.Unlock()
	if ok {
		return int(n)
	}
	v := tok.Count(text)
	c.mu.Lock()
	c.put(h, int32(v))
	c.mu.Unlock()
	return v
}

// put stores a count, starting a new generation when the current is full.
func (c *countCache) put(h uint64, n int32) {
	if len(c.cur) >= countCacheSize {
		c.prev, c.cur = c.cur, make(map[uint64]int32, countCacheSize)
	}
	c.cur[h] = n
}
