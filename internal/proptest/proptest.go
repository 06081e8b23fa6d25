// Package proptest bounds how many cases a property test (pgregory.net/rapid)
// runs in `go test ./...`, where a few hundred stores opened under the
// race detector would take minutes. RAPID_CHECKS or -rapid.checks asks for
// more (or fewer), and .ci/run runs the bounded tests again without the
// race detector at a greater depth.
package proptest

import (
	"flag"
	"os"
	"strconv"

	"github.com/strata-memory/strata/internal/race"
)

// Bound sets rapid's number of cases to n, or to underRace when the race
// detector is on (which makes each case of a store test 10-20 times
// slower, and looks for races, which a few cases find as well as many),
// unless RAPID_CHECKS or -rapid.checks asked for a number. The returned
// function restores the flag; call it when the test ends:
//
//	defer proptest.Bound(40, 15)()
func Bound(n, underRace int) (restore func()) {
	f := flag.Lookup("rapid.checks")
	if f == nil || os.Getenv("RAPID_CHECKS") != "" || f.Value.String() != f.DefValue {
		return func() {}
	}
	if race.Enabled {
		n = underRace
	}
	f.Value.Set(strconv.Itoa(n))
	return func() { f.Value.Set(f.DefValue) }
}
