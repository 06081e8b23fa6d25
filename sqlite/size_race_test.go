//go:build race

package sqlite_test

// bigTurnSize is the size of TestBigTurn's turn. modernc.org/sqlite runs
// 20-50x slower under the race detector, so it is 1 MB there.
const bigTurnSize = 1 << 20

// runVariants is false: the conformance suite's variants (compressed
// texts, blob copies, the summary index from the first turn) skip under
// the race detector. They run the suite TestConformance runs, over other
// encodings of the same code paths, and .ci/run runs them without it.
const runVariants = false
