package strata

import (
	"context"
	"time"
)

// SetImportBatch sets how many turns Import gives the store per
// transaction, so that a test can import several batches with a few
// hundred turns rather than many thousands; the function it returns puts
// ImportBatch back. No test of the package runs in parallel with another.
func SetImportBatch(n int) (restore func()) {
	old := importBatch
	importBatch = n
	return func() { importBatch = old }
}

// ReplaceTries is how many times a rollup tries to write its nodes.
const ReplaceTries = replaceTries

// ReplaceWait is replaceWait.
var ReplaceWait = replaceWait

// SetReplaceSleep makes a rollup's wait between tries call f instead of
// sleeping; the function it returns puts the sleep back.
func SetReplaceSleep(f func(time.Duration)) (restore func()) {
	old := replaceSleep
	replaceSleep = func(_ context.Context, d time.Duration) error { f(d); return nil }
	return func() { replaceSleep = old }
}
