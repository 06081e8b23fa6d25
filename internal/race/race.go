//go:build race

// Package race reports whether the race detector is on, for tests that
// size their work by it.
package race

// Enabled reports whether the race detector is on.
const Enabled = true
