package postgres

import (
	"regexp"
	"slices"
	"testing"

	"github.com/strata-memory/strata/internal/textseg"
)

// TestContentLengthStopWords: the stop words migration 12 leaves out of a
// document's length are package textseg's, so that BM25 lengths match
// the SQLite store's full-text tables.
func TestContentLengthStopWords(t *testing.T) {
	b, err := migrationFiles.ReadFile("migrations/0012_content_length.sql")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range regexp.MustCompile(`'([a-z]+)'`).FindAllStringSubmatch(string(b), -1) {
		got = append(got, m[1])
	}
	slices.Sort(got)
	if want := textseg.StopWords(); !slices.Equal(got, want) {
		t.Errorf("migration 12's stop words %v, want textseg's %v", got, want)
	}
}
