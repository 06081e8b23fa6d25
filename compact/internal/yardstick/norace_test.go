//go:build !race

package yardstick_test

// raceDetector: see race_test.go.
const raceDetector = false
