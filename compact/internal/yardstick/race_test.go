//go:build race

package yardstick_test

// raceDetector says the tests run under the race detector, where
// TestMeasure, which compacts about 10M tokens to print figures, takes
// several minutes: TestMeasureSmall checks the same code paths there.
const raceDetector = true
