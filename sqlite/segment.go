package sqlite

import (
	"context"
	"fmt"
	"strings"

	"github.com/strata-memory/strata/internal/textseg"
)

// This file prepares text for the FTS5 tokenizer and turns free text into
// a safe FTS5 query, with package textseg, which every store shares. The
// tokenizer splits words at anything that is not a letter, digit,
// private-use character or mark (categories L* N* Co M*), as textseg does,
// so query words are the words the index holds.

// ftsText returns s as it is given to the FTS5 index: s itself unless it
// holds unspaced text, whose runs are replaced by their characters and
// character pairs.
func ftsText(s string) string { return textseg.IndexText(s) }

// ftsForm is what a store gives its full-text tables of a text (see
// schema 25): the text itself (ftsWhole, stores begun before schema 25)
// or its words without stop words (ftsContent). No query searches for a
// stop word, so both find the same rows; ftsContent takes about half the
// index on chat text. A store keeps its form for good: removing a row
// from a contentless table takes the exact text it was given.
type ftsForm int

const (
	ftsWhole   ftsForm = 1
	ftsContent ftsForm = 2
)

// loadFTSForm reads the store's ftsForm.
func (s *Store) loadFTSForm(ctx context.Context, q querier) error {
	if err := q.QueryRowContext(ctx, `SELECT form FROM fts_form WHERE id = 1`).Scan(&s.fts); err != nil {
		return fmt.Errorf("reading the full-text form: %w", err)
	}
	if s.fts != ftsWhole && s.fts != ftsContent {
		return fmt.Errorf("unknown full-text form %d", s.fts)
	}
	return nil
}

// text returns s as this form gives it to the full-text tables.
func (f ftsForm) text(s string) string {
	if f == ftsContent {
		return textseg.ContentWords(s)
	}
	return ftsText(s)
}

// maxTerms bounds the number of terms a query is reduced to.
const maxTerms = textseg.MaxTerms

// queryTerms returns the search terms of free text: its words, lowercased,
// without English stop words, and the character pairs (or the single
// character) of its unspaced runs; each term once, in order of appearance.
func queryTerms(text string) []string { return textseg.QueryTerms(text) }

// matchExpr returns the FTS5 expression that matches any of terms in the
// text column of rows carrying the scope token, or of every row if scope
// is empty.
func matchExpr(scope string, terms []string) string {
	var b strings.Builder
	if scope != "" {
		b.WriteString(`scope : "`)
		b.WriteString(scope)
		b.WriteString(`" AND `)
	}
	b.WriteString(`text : (`)
	for i, t := range terms {
		if i > 0 {
			b.WriteString(" OR ")
		}
		b.WriteByte('"')
		b.WriteString(strings.ReplaceAll(t, `"`, `""`))
		b.WriteByte('"')
	}
	b.WriteString(")")
	return b.String()
}
