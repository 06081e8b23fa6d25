package strata

import (
	"fmt"
	"strings"
	"time"
)

// Renderings of a context package.
const (
	FormatText     = "text"
	FormatMarkdown = "markdown"
)

// Renderer turns a package into the text a model reads. Each item's
// rendering carries its own leading separator, so that the package is the
// header followed by the items and the sum of the parts' token counts is
// close to the whole's (the final budget check counts the whole). strata
// renders text and markdown; package ctf renders raw turns as CTF rows.
type Renderer interface {
	// Name is the format's name, reported in Package.Format.
	Name() string
	// Header opens the package; omitted lists older history left out.
	Header(c Conversation, omitted []Omission) string
	// Item renders one item, with its leading separator.
	Item(it *Item) string
	// Join is the whole package: the header, then the items in order.
	Join(header string, items []*Item) string
}

// NewRenderer returns the renderer of a built-in format: FormatText or
// FormatMarkdown.
func NewRenderer(format string) (Renderer, error) {
	switch format {
	case "", FormatText:
		return textRenderer{}, nil
	case FormatMarkdown, "md":
		return markdownRenderer{}, nil
	}
	return nil, Errorf(EINVALID, "unknown format %q (want text or markdown, or give a Renderer)", format)
}

const stamp = "Mon 2006-01-02 15:04"

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "?"
	}
	return t.UTC().Format(stamp)
}

// fmtDays is a summary's span by day.
func fmtDays(a, b time.Time) string {
	const d = "Mon 2006-01-02"
	if a.IsZero() || b.IsZero() {
		return "?"
	}
	x, y := a.UTC().Format(d), b.UTC().Format(d)
	if x == y {
		return x
	}
	return x + " to " + y
}

func fmtSeqs(a, b int64) string {
	if a == b {
		return fmt.Sprintf("turn %d", a)
	}
	return fmt.Sprintf("turns %d-%d", a, b)
}

// maxOmissionRanges is how many omitted ranges a package header lists one
// by one; beyond it, it counts them.
const maxOmissionRanges = 8

func omissionLine(os []Omission) string {
	if len(os) == 0 {
		return ""
	}
	if len(os) > maxOmissionRanges {
		// Scattered raw turns leave many gaps: say how much is missing
		// rather than spend the budget listing every gap.
		n := int64(0)
		for _, o := range os {
			n += o.LastSeq - o.FirstSeq + 1
		}
		return fmt.Sprintf("Not shown for lack of budget: %d turns in %d ranges, from turn %d to turn %d.",
			n, len(os), os[0].FirstSeq, os[len(os)-1].LastSeq)
	}
	parts := make([]string, len(os))
	for i, o := range os {
		if o.FirstSeq == o.LastSeq {
			parts[i] = fmt.Sprint(o.FirstSeq)
		} else {
			parts[i] = fmt.Sprintf("%d-%d", o.FirstSeq, o.LastSeq)
		}
	}
	what := "turns "
	if len(os) == 1 && os[0].FirstSeq == os[0].LastSeq {
		what = "turn "
	}
	return "Not shown for lack of budget: " + what + strings.Join(parts, ", ") + "."
}

// JoinParts is the usual Join: the header, each item's rendering, and a
// final newline.
func JoinParts(header string, items []*Item) string {
	var b strings.Builder
	b.WriteString(header)
	for _, it := range items {
		b.WriteString(it.rendered)
	}
	b.WriteByte('\n')
	return b.String()
}

type textRenderer struct{}

func (textRenderer) Name() string { return FormatText }

// extent describes a conversation's size and dates for package headers.
func extent(c Conversation) string {
	s := fmt.Sprintf("%d turns", c.Turns)
	if !c.First.IsZero() {
		s += fmt.Sprintf(", %s to %s (UTC)", c.First.UTC().Format("2006-01-02"), c.Last.UTC().Format("2006-01-02"))
	}
	return s
}

const legend = "Summaries stand for older turns; raw turns are quoted as said."

func (textRenderer) Header(c Conversation, omit []Omission) string {
	s := "# Memory of conversation " + c.ID + ": " + extent(c) + "\n" + legend
	if len(omit) > 0 {
		s += "\n" + omissionLine(omit)
	}
	return s + "\n"
}

func (textRenderer) Item(it *Item) string {
	if it.Kind == KindLearning && it.Reason == ReasonFact {
		return "\n" + factLine(it) + "\n"
	}
	if it.Kind == KindLearning {
		return fmt.Sprintf("\n[learning, confirmed, from %s] %s\n", fmtSeqs(it.FirstSeq, it.LastSeq), it.Text)
	}
	if it.Kind == KindSummary {
		return fmt.Sprintf("\n[%s summary, %s, %s]\n%s\n", it.LevelName, fmtSeqs(it.FirstSeq, it.LastSeq),
			fmtDays(it.Start, it.End), it.Text)
	}
	if f := it.Follows; f != nil {
		at := followTime(it)
		switch {
		case f.FirstSeq == it.FirstSeq-1 && at == "":
			// Under the heading of the turn before: no blank line.
			return fmt.Sprintf("[turn %d] %s: %s\n", it.FirstSeq, it.Speaker, it.Text)
		case f.FirstSeq == it.FirstSeq-1 && len(at) < len(stamp):
			return fmt.Sprintf("[turn %d, %s] %s: %s\n", it.FirstSeq, at, it.Speaker, it.Text)
		case len(at) < len(stamp):
			// The same day as the turn before: its time only.
			return fmt.Sprintf("\n[turn %d, %s] %s: %s\n", it.FirstSeq, timeOf(it), it.Speaker, it.Text)
		}
	}
	return fmt.Sprintf("\n[turn %d %s, %s] %s: %s\n", it.FirstSeq, it.ExtID, fmtTime(it.Start), it.Speaker, it.Text)
}

// timeOf is the clock time of an item's start.
func timeOf(it *Item) string { return fmtTime(it.Start)[len(stamp)-5:] }

// followTime is what a turn that follows another must still say of its
// time: "" if the minute is the same, the clock time on the same day, the
// whole stamp otherwise.
func followTime(it *Item) string {
	prev, cur := fmtTime(it.Follows.Start), fmtTime(it.Start)
	switch {
	case prev == cur:
		return ""
	case len(prev) == len(stamp) && len(cur) == len(stamp) && prev[:len(stamp)-6] == cur[:len(stamp)-6]:
		return cur[len(stamp)-5:]
	}
	return cur
}

func (textRenderer) Join(header string, items []*Item) string { return JoinParts(header, items) }

type markdownRenderer struct{}

func (markdownRenderer) Name() string { return FormatMarkdown }

func (markdownRenderer) Header(c Conversation, omit []Omission) string {
	s := "## Memory: " + c.ID + "\n\n" + extent(c) + ". " + legend
	if len(omit) > 0 {
		s += " " + omissionLine(omit)
	}
	return s + "\n"
}

func (markdownRenderer) Item(it *Item) string {
	if it.Kind == KindLearning && it.Reason == ReasonFact {
		return fmt.Sprintf("\n- **Known fact** (from %s): %s\n", fmtSeqs(it.FirstSeq, it.LastSeq), it.Text)
	}
	if it.Kind == KindLearning {
		return fmt.Sprintf("\n- **Learning** (confirmed, from %s): %s\n", fmtSeqs(it.FirstSeq, it.LastSeq), it.Text)
	}
	if it.Kind == KindSummary {
		return fmt.Sprintf("\n### Summary (%s): %s, %s\n\n%s\n", it.LevelName, fmtSeqs(it.FirstSeq, it.LastSeq),
			fmtDays(it.Start, it.End), it.Text)
	}
	if f := it.Follows; f != nil {
		switch at := followTime(it); {
		case at == "" && f.FirstSeq == it.FirstSeq-1:
			return fmt.Sprintf("\n**%s** (turn %d):\n%s\n", it.Speaker, it.FirstSeq, it.Text)
		case len(at) < len(stamp):
			return fmt.Sprintf("\n**%s** (turn %d, %s):\n%s\n", it.Speaker, it.FirstSeq, timeOf(it), it.Text)
		}
	}
	return fmt.Sprintf("\n**%s** (%s, turn %d `%s`, %s):\n%s\n", it.Speaker, it.Role, it.FirstSeq, it.ExtID, fmtTime(it.Start), it.Text)
}

func (markdownRenderer) Join(header string, items []*Item) string { return JoinParts(header, items) }
