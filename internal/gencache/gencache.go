// Package gencache is a bounded cache of recent entries in two
// generations: new entries go to the current one; when it holds Size
// entries it becomes the older one (the one before it is dropped), and an
// entry found in the older one moves back to the current. So an entry
// used at least once per Size insertions stays, and the cache holds at
// most 2*Size entries, forgetting the oldest half at a time, with no
// bookkeeping per access.
package gencache

import "sync"

// Cache is such a cache, safe for concurrent use.
type Cache[K comparable, V any] struct {
	size       int // entries per generation
	mu         sync.Mutex
	cur, older map[K]V
}

// New returns a cache of two generations of size entries each.
func New[K comparable, V any](size int) *Cache[K, V] {
	return &Cache[K, V]{size: max(size, 1)}
}

// Get returns the value of k, if the cache holds it.
func (c *Cache[K, V]) Get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.cur[k]; ok {
		return v, true
	}
	v, ok := c.older[k]
	if ok {
		c.put(k, v)
	}
	return v, ok
}

// Put stores v as the value of k.
func (c *Cache[K, V]) Put(k K, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.put(k, v)
}

func (c *Cache[K, V]) put(k K, v V) {
	if c.cur == nil || len(c.cur) >= c.size {
		c.older, c.cur = c.cur, make(map[K]V, c.size)
	}
	c.cur[k] = v
}
