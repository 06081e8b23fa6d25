package postgres_test

import (
	"testing"

	"github.com/strata-memory/strata/archive"
	"github.com/strata-memory/strata/archive/blobtest"
)

// TestBlobs runs the contract tests of archive.Blobs on the archive table
// of a new store each time.
func TestBlobs(t *testing.T) {
	dsn := testDSN(t)
	blobtest.Run(t, func(t *testing.T) archive.Blobs { return openStore(t, dsn).Blobs() })
}
