package fleetgen

import (
	"os"
	"testing"

	"github.com/strata-memory/strata/internal/race"
)

// TestMain runs no test under the race detector: a generator runs on one
// goroutine, where the detector finds nothing and makes its tests ten
// times slower. .ci/run runs them without it.
func TestMain(m *testing.M) {
	if race.Enabled {
		os.Exit(0)
	}
	os.Exit(m.Run())
}
