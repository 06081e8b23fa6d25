package strata

// SetImportBatch sets how many turns Import gives the store per
// transaction, so that a test can import several batches with a few
// hundred turns rather than many thousands; the function it returns puts
// ImportBatch back. No test of the package runs in parallel with another.
func SetImportBatch(n int) (restore func()) {
	old := importBatch
	importBatch = n
	return func() { importBatch = old }
}
