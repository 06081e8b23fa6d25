//go:build !race

package main

// crashBatches is how many batches each writer of
// TestCrashServeLosesNothing appends (see crash_race_test.go).
const crashBatches = 80
