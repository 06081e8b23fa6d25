package sqlite

import (
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
