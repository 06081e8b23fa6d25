package strata

// SetFactsLimit sets how many learnings a known-facts section reads, so
// that a test can pass the limit with a few learnings rather than 20,000;
// the function it returns puts the limit back. No test of the package
// runs in parallel with another.
func SetFactsLimit(n int) (restore func()) {
	old := factsLimit
	factsLimit = n
	return func() { factsLimit = old }
}
