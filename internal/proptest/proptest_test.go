package proptest_test

import (
	"flag"
	"strconv"
	"testing"

	"github.com/strata-memory/strata/internal/proptest"
	"github.com/strata-memory/strata/internal/race"
	"pgregory.net/rapid"
)

// TestBound checks that Bound sets rapid's flag for the test and restores
// it, and that a number set on the command line wins.
func TestBound(t *testing.T) {
	f := flag.Lookup("rapid.checks")
	if f == nil {
		t.Fatal("rapid's flag is not registered")
	}
	if f.Value.String() != f.DefValue {
		t.Skip("-rapid.checks is set")
	}
	t.Setenv("RAPID_CHECKS", "")
	want := 7
	if race.Enabled {
		want = 3
	}
	restore := proptest.Bound(7, 3)
	if got := f.Value.String(); got != strconv.Itoa(want) {
		t.Errorf("bounded: rapid.checks = %s, want %d", got, want)
	}
	cases := 0
	rapid.Check(t, func(*rapid.T) { cases++ })
	if cases != want {
		t.Errorf("%d cases ran, want %d", cases, want)
	}
	restore()
	if got := f.Value.String(); got != f.DefValue {
		t.Errorf("restored: rapid.checks = %s, want %s", got, f.DefValue)
	}

	f.Value.Set("5")
	defer f.Value.Set(f.DefValue)
	proptest.Bound(7, 3)()
	if got := f.Value.String(); got != "5" {
		t.Errorf("a number on the command line was replaced: %s", got)
	}
}
