//go:build race

package storetest

// bigSize is the size of the big turn ContentExact stores. Under the race
// detector an embedded database written in Go (modernc.org/sqlite) runs
// 20-50x slower, so the turn is 1 MB there and 10 MB otherwise.
const bigSize = 1 << 20
