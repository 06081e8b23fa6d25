//go:build !race

package storetest

// bigSize is the size of the big turn ContentExact stores: 10 MB.
const bigSize = 10 << 20
