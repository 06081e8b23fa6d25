//go:build !race

package sqlite_test

// bigTurnSize is the size of TestBigTurn's turn: 10 MB.
const bigTurnSize = 10 << 20

// runVariants: see size_race_test.go.
const runVariants = true
