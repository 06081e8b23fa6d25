//go:build race

package sqlite_test

// bigTurnSize is the size of TestBigTurn's turn. modernc.org/sqlite runs
// 20-50x slower under the race detector, so it is 1 MB there.
const bigTurnSize = 1 << 20
