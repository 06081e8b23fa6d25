package tiktoken

import (
	"hash/maphash"
	"strings"
	"sync/atomic"
)

const (
	// cacheSlots is the number of entries the count cache holds at most,
	// in two-way sets. Pointers to them take 1 MiB; the entries themselves
	// about 50 bytes each.
	cacheSlots = 1 << 17

	// maxCachedPiece is the length in bytes of the longest pre-token the
	// cache keeps; longer ones are rare and are counted every time.
	maxCachedPiece = 64
)

// countCache maps pre-tokens to their token counts. It is bounded,
// lock-free and safe for concurrent use: a slot holds an immutable entry
// that is replaced as a whole, so a reader sees either the old or the new
// entry, and a lost update only costs a later miss.
type countCache struct {
	seed  maphash.Seed
	slots [cacheSlots]atomic.Pointer[cacheEntry]
}

type cacheEntry struct {
	piece string
	count int
}

func newCountCache() *countCache {
	return &countCache{seed: maphash.MakeSeed()}
}

// index returns the first slot of the set that piece belongs to; the second
// slot is the next one.
func (c *countCache) index(piece string) uint64 {
	return maphash.String(c.seed, piece) & (cacheSlots - 2)
}

// get returns the cached count of piece.
func (c *countCache) get(piece string) (int, bool) {
	i := c.index(piece)
	if e := c.slots[i].Load(); e != nil && e.piece == piece {
		return e.count, true
	}
	if e := c.slots[i+1].Load(); e != nil && e.piece == piece {
		return e.count, true
	}
	return 0, false
}

// put caches the count of piece, which it copies so that the cache never
// keeps the caller's text alive. The newest entry goes to the first slot of
// its set and the previous one moves to the second, evicting what was there.
func (c *countCache) put(piece string, count int) {
	if len(piece) > maxCachedPiece {
		return
	}
	i := c.index(piece)
	e := &cacheEntry{piece: strings.Clone(piece), count: count}
	if old := c.slots[i].Swap(e); old != nil {
		c.slots[i+1].Store(old)
	}
}
