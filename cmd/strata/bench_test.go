package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkImportLoCoMo times `strata import` of the LoCoMo file named by
// STRATA_LOCOMO (five conversations, 2,760 turns) into a new store, rollups
// included. Target: under 2 s.
func BenchmarkImportLoCoMo(b *testing.B) {
	path := os.Getenv("STRATA_LOCOMO")
	if path == "" {
		b.Skip("set STRATA_LOCOMO to the path of locomo-dev.json")
	}
	for i := 0; b.Loop(); i++ {
		db := filepath.Join(b.TempDir(), "s.db")
		out, errs, err := run(b, db, "", "import", "--format", "locomo", path)
		if err != nil || !strings.Contains(out, "2760 turns added") {
			b.Fatalf("import: %v\n%s%s", err, out, errs)
		}
	}
}
