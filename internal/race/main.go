package race

// Main runs a test binary's tests, or none under the race detector, and
// returns its exit code: for a package whose tests run on one goroutine,
// where the detector finds nothing and makes them ten times slower
// (.ci/run runs them without it). Use it as
//
//	func TestMain(m *testing.M) { os.Exit(race.Main(m)) }
func Main(m interface{ Run() int }) int {
	if Enabled {
		return 0
	}
	return m.Run()
}

// SkipOneGoroutine skips a test that runs on one goroutine under the race
// detector, as Main skips a whole package's; .ci/run runs it without the
// detector.
func SkipOneGoroutine(t interface {
	Helper()
	Skip(args ...any)
}) {
	t.Helper()
	if Enabled {
		t.Skip("one goroutine, where the race detector finds nothing: .ci/run runs it without the detector")
	}
}
