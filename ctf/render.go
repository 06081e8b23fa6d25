package ctf

import (
	"fmt"
	"strconv"
	"time"

	"github.com/strata-memory/strata"
)

// ContextRenderer renders a context package with its raw turns as CTF
// rows: the package header names the row fields once, each raw turn is
// one row (seq, time, speaker, text), and summaries stay blocks of prose,
// each opened by a bracketed line, so rows and summaries never mix up.
// Pass it as strata.ContextRequest.Renderer; the budget is counted on this
// rendering.
type ContextRenderer struct{}

var _ strata.Renderer = ContextRenderer{}

// contextFields are the fields of a context row.
var contextFields = []string{"seq", "time", "name", "text"}

// FormatCTF is the format name of ContextRenderer.
const FormatCTF = "ctf"

// Name implements strata.Renderer.
func (ContextRenderer) Name() string { return FormatCTF }

// Header implements strata.Renderer.
func (ContextRenderer) Header(c strata.Conversation, omitted []strata.Omission) string {
	s := "# Memory of conversation " + c.ID + ": " + strconv.FormatInt(c.Turns, 10) + " turns"
	if !c.First.IsZero() {
		s += fmt.Sprintf(", %s to %s (UTC)", c.First.UTC().Format("2006-01-02"), c.Last.UTC().Format("2006-01-02"))
	}
	s += "\nSummaries stand for older turns. Raw turns are rows of tab-separated fields, quoted as said; in them " +
		GlyphTab + " is a tab and " + GlyphLF + " a line break.\n"
	if len(omitted) > 0 {
		s += "Not shown for lack of budget:"
		for i, o := range omitted {
			if i > 0 {
				s += ","
			}
			if o.FirstSeq == o.LastSeq {
				s += fmt.Sprintf(" turn %d", o.FirstSeq)
			} else {
				s += fmt.Sprintf(" turns %d-%d", o.FirstSeq, o.LastSeq)
			}
		}
		s += ".\n"
	}
	return s + HeaderLine(contextFields)
}

// Item implements strata.Renderer.
func (ContextRenderer) Item(it *strata.Item) string {
	if it.Kind == strata.KindLearning && it.Reason == strata.ReasonFact {
		return fmt.Sprintf("[known fact, from turns %d-%d] %s\n", it.FirstSeq, it.LastSeq, it.Text)
	}
	if it.Kind == strata.KindLearning {
		return fmt.Sprintf("[learning, confirmed, from turns %d-%d] %s\n", it.FirstSeq, it.LastSeq, it.Text)
	}
	if it.Kind == strata.KindSummary {
		span := fmt.Sprintf("turns %d-%d", it.FirstSeq, it.LastSeq)
		return fmt.Sprintf("[%s summary, %s, %s]\n%s\n", it.LevelName, span, days(it.Start, it.End), it.Text)
	}
	return Row(strconv.FormatInt(it.FirstSeq, 10), stamp(it.Start), it.Speaker, it.Text)
}

// Join implements strata.Renderer.
func (ContextRenderer) Join(header string, items []*strata.Item) string {
	return strata.JoinParts(header, items)
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "?"
	}
	return t.UTC().Format("2006-01-02 15:04")
}

func days(a, b time.Time) string {
	if a.IsZero() || b.IsZero() {
		return "?"
	}
	x, y := a.UTC().Format("Mon 2006-01-02"), b.UTC().Format("Mon 2006-01-02")
	if x == y {
		return x
	}
	return x + " to " + y
}
