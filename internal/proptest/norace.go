//go:build !race

package proptest

// RaceDetector reports whether the race detector is on.
const RaceDetector = false
