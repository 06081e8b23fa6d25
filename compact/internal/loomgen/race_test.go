package loomgen

import (
	"os"
	"testing"

	"github.com/strata-memory/strata/internal/race"
)

// TestMain runs no test under the race detector (see race.Main).
func TestMain(m *testing.M) { os.Exit(race.Main(m)) }
