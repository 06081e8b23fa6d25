package checkpoint

import (
	"strconv"
	"strings"

	"github.com/strata-memory/strata"
)

// Sections is a checkpoint, read into its parts.
type Sections struct {
	Goal        string
	Constraints []string // Constraints & Preferences
	Done        []string // Progress: Done
	InProgress  []string // Progress: In Progress
	Decisions   []string // Key Decisions
	NextSteps   []string
	// Critical Context holds Notes (free lines) and then the Ledger, one
	// line per kind ("- paths: a, b") or per command and error.
	Notes  []string
	Ledger []Identifier
}

// section names a part of the format.
type section uint8

const (
	secNone section = iota
	secGoal
	secConstraints
	secProgress
	secDone
	secInProgress
	secDecisions
	secNext
	secCritical
)

var headingNames = map[string]section{
	"goal": secGoal, "goals": secGoal, "objective": secGoal,
	"constraints & preferences": secConstraints, "constraints and preferences": secConstraints,
	"constraints": secConstraints, "preferences": secConstraints, "constraints/preferences": secConstraints,
	"progress": secProgress,
	"done":     secDone, "completed": secDone,
	"in progress": secInProgress, "in-progress": secInProgress, "current work": secInProgress,
	"key decisions": secDecisions, "decisions": secDecisions,
	"next steps": secNext, "next step": secNext,
	"critical context": secCritical,
}

// ledgerLabels maps the labels of Critical Context's ledger lines to
// kinds; the plural labels hold comma-separated lists.
var ledgerLabels = map[string]kind{
	"path": kPath, "paths": kPath, "command": kCommand, "commands": kCommand, "error": kError, "errors": kError,
	"symbol": kSymbol, "symbols": kSymbol, "url": kURL, "urls": kURL, "id": kID, "ids": kID,
	"number": kNumber, "numbers": kNumber,
}

// listed reports whether a kind's identifiers share one line, comma
// separated (the others take a line each: commands and errors have commas).
func listed(k kind) bool { return k != kCommand && k != kError }

var pluralLabel = [...]string{kPath: "paths", kSymbol: "symbols", kURL: "urls", kID: "ids", kNumber: "numbers"}

// Format writes sections in the checkpoint format. A section with
// nothing in it is left out (Progress when both Done and In Progress
// are empty); the Goal and Critical Context headings are always written,
// so that the text is still known as a checkpoint. Items are written on
// one line each, without Markdown layout (headings, emphasis, leading
// symbols), and items that are only a heading or say there is nothing
// are left out, as Parse leaves them out.
func (s Sections) Format() string {
	var b strings.Builder
	b.Grow(1024)
	b.WriteString("## Goal\n")
	if g := withoutLayout(s.Goal, false); g != "" {
		b.WriteString(g)
		b.WriteByte('\n')
	}
	if hasItems(s.Constraints) {
		b.WriteString("\n## Constraints & Preferences\n")
		writeItems(&b, s.Constraints, "- ")
	}
	if hasItems(s.Done) || hasItems(s.InProgress) {
		b.WriteString("\n## Progress\n")
		if hasItems(s.Done) {
			b.WriteString("### Done\n")
			writeItems(&b, s.Done, "- [x] ")
		}
		if hasItems(s.InProgress) {
			if hasItems(s.Done) {
				b.WriteByte('\n')
			}
			b.WriteString("### In Progress\n")
			writeItems(&b, s.InProgress, "- [ ] ")
		}
	}
	if hasItems(s.Decisions) {
		b.WriteString("\n## Key Decisions\n")
		writeItems(&b, s.Decisions, "- ")
	}
	if hasItems(s.NextSteps) {
		b.WriteString("\n## Next Steps\n")
		writeItems(&b, s.NextSteps, "1. ")
	}
	b.WriteString("\n## Critical Context\n")
	for _, it := range s.Notes {
		if it = layoutFree(it); it != "" {
			b.WriteString("- ")
			b.WriteString(it)
			b.WriteByte('\n')
		}
	}
	writeLedger(&b, s.Ledger)
	return strings.TrimRight(b.String(), "\n")
}

// hasItems reports whether a list has an item Format writes.
func hasItems(items []string) bool {
	for _, it := range items {
		if layoutFree(it) != "" {
			return true
		}
	}
	return false
}

// layoutFree returns an item on one line without its Markdown layout, or
// "" if it is only a heading or says there is nothing: what Parse reads
// back.
func layoutFree(it string) string { return withoutLayout(it, true) }

// withoutLayout is layoutFree; a goal (headings false) is not dropped for
// being short and emphasized whole, as a list's subheading is.
func withoutLayout(it string, headings bool) string {
	it = oneLine(it)
	for {
		if headings && headingOnly(it) {
			return ""
		}
		if _, rest, ok := heading(it); ok {
			it = rest // a heading with text after it: the text
			continue
		}
		u := plainText(it)
		if u == it {
			break
		}
		it = u
	}
	if noneLike(it) {
		return ""
	}
	return it
}

// writeItems writes a list; numbered lists count from 1.
func writeItems(b *strings.Builder, items []string, bullet string) {
	n := 0
	for _, it := range items {
		if it = layoutFree(it); it == "" {
			continue
		}
		n++
		if bullet == "1. " {
			b.WriteString(strconv.Itoa(n))
			b.WriteString(". ")
		} else {
			b.WriteString(bullet)
		}
		b.WriteString(it)
		b.WriteByte('\n')
	}
}

// writeLedger writes ledger lines grouped by kind, in Kinds order, each
// group in the ledger's order. It returns the number of lines.
func writeLedger(b *strings.Builder, ids []Identifier) int {
	lines := 0
	for _, kn := range Kinds {
		k := kindOf(kn)
		first := true
		for _, id := range ids {
			if kindOf(id.Kind) != k {
				continue
			}
			t := oneLine(id.Text)
			if t == "" {
				continue
			}
			if !listed(k) || strings.Contains(t, ", ") {
				if !first {
					b.WriteByte('\n')
					first = true
				}
				b.WriteString("- ")
				b.WriteString(kn)
				b.WriteString(": ")
				b.WriteString(t)
				b.WriteByte('\n')
				lines++
				continue
			}
			if first {
				b.WriteString("- ")
				b.WriteString(pluralLabel[k])
				b.WriteString(": ")
				first = false
				lines++
			} else {
				b.WriteString(", ")
			}
			b.WriteString(t)
		}
		if !first {
			b.WriteByte('\n')
		}
	}
	return lines
}

// oneLine collapses white space runs that hold a line break to one space.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

// Parse reads a checkpoint back into its sections. It accepts the format
// Format writes and the usual variations of a model's reply: headings
// with any number of #, in bold or followed by a colon, "Constraints and
// Preferences", check boxes, numbered or starred lists, wrapped items and
// "none" for an empty section. Text before the first heading is ignored.
// Critical Context lines of the form "- <kind>: text" or "- <kinds>: a,
// b" (kinds as in Kinds) are the ledger; other lines are notes. Parse
// returns an EINVALID error when the text has no section heading.
func Parse(text string) (Sections, error) {
	s, info := parse(text)
	if info.headings == 0 {
		return s, strata.Errorf(strata.EINVALID, "not a checkpoint: no section heading")
	}
	return s, nil
}

// parsed says what parse found: how many headings, and which sections.
type parsed struct {
	headings int
	seen     [secCritical + 1]bool
}

// parse returns the sections and what it found.
func parse(text string) (Sections, parsed) {
	if strings.IndexByte(text, '\r') >= 0 {
		text = strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n")
	}
	p := sectionParser{cur: secNone, lastItem: -1}
	for len(text) > 0 {
		line := text
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			text = ""
		}
		p.line(strings.TrimSpace(line))
	}
	p.flush()
	return p.finish(), p.info
}

// sectionParser is parse's state as it reads a checkpoint line by line.
type sectionParser struct {
	s    Sections
	info parsed
	cur  section
	// The list the previous item went to, and its wrapped lines so far.
	last     *[]string
	lastItem int
	wrapped  []string
	goal     []string
	crit     []string // Critical Context's items, sorted at the end
}

// line reads one trimmed line: headings (maybe several on one line), then
// an item of the current section or a wrapped line of the previous one.
func (p *sectionParser) line(t string) {
	if t == "" {
		p.flush()
		return
	}
	for {
		sec, rest, ok := heading(t)
		if !ok {
			break
		}
		p.flush()
		p.cur = sec
		p.info.headings++
		p.info.seen[sec] = true
		t = rest // text after the heading, which may be another one
	}
	if t == "" || p.cur == secNone {
		return
	}
	item, bulleted, box := unbullet(t)
	if p.cur == secGoal {
		p.goal = append(p.goal, t)
		return
	}
	if isNone(item) {
		return
	}
	if p.cur != secCritical {
		// Markdown layout is not content.
		if item = layoutFree(item); item == "" {
			return
		}
	}
	if !bulleted && p.last != nil && p.lastItem >= 0 && p.lastItem < len(*p.last) {
		p.wrapped = append(p.wrapped, item)
		return
	}
	p.flush()
	list := p.list(box)
	*list = append(*list, item)
	p.last, p.lastItem = list, len(*list)-1
}

// list is the list an item of the current section goes to; box is the
// item's check box, if any (' ' for an open one).
func (p *sectionParser) list(box byte) *[]string {
	switch p.cur {
	case secConstraints:
		return &p.s.Constraints
	case secProgress:
		if box == ' ' {
			return &p.s.InProgress
		}
		return &p.s.Done
	case secDone:
		return &p.s.Done
	case secInProgress:
		return &p.s.InProgress
	case secDecisions:
		return &p.s.Decisions
	case secNext:
		return &p.s.NextSteps
	}
	return &p.crit // secCritical: sorted into ledger lines and notes at the end
}

// flush joins the wrapped lines of the previous item to it.
func (p *sectionParser) flush() {
	if p.last != nil && p.lastItem >= 0 && len(p.wrapped) > 0 {
		// Joined, the lines may open with a check box ("[" and "]").
		it := stripBoxes((*p.last)[p.lastItem] + " " + strings.Join(p.wrapped, " "))
		if isNone(it) {
			*p.last = append((*p.last)[:p.lastItem], (*p.last)[p.lastItem+1:]...)
		} else {
			(*p.last)[p.lastItem] = it
		}
	}
	p.last, p.lastItem, p.wrapped = nil, -1, nil
}

// finish sorts Critical Context's items into ledger lines and notes and
// sets the goal.
func (p *sectionParser) finish() Sections {
	s := p.s
	for _, it := range p.crit {
		if ids, ok := ledgerLine(it); ok {
			s.Ledger = append(s.Ledger, ids...)
		} else if it = layoutFree(it); it != "" {
			s.Notes = append(s.Notes, it)
		}
	}
	s.Goal = withoutLayout(goalText(strings.Join(p.goal, " ")), false)
	return s
}

// heading reports whether a line is a section heading, and returns any
// text that follows it on the line ("Goal: fix the login").
func heading(t string) (section, string, bool) {
	hashed := strings.HasPrefix(t, "#")
	h := strings.TrimLeft(t, "#")
	h = strings.TrimSpace(h)
	bold := strings.HasPrefix(h, "**")
	h = strings.TrimSpace(strings.Trim(h, "*_"))
	name, rest := h, ""
	if i := strings.IndexByte(h, ':'); i >= 0 {
		name, rest = h[:i], strings.TrimSpace(strings.Trim(h[i+1:], "*_ "))
	}
	name = strings.ToLower(strings.TrimSpace(strings.Trim(name, "*_ ")))
	sec, ok := headingNames[name]
	if !ok {
		return secNone, "", false
	}
	switch {
	case hashed || bold:
	case rest == "" && strings.HasSuffix(h, ":"):
	case rest != "" && sec == secGoal:
	default:
		return secNone, "", false
	}
	return sec, rest, true
}

// goalText is the goal's lines as one paragraph: without the list
// markers, hashes or heading words it may start with, so that it reads
// back the same once written on its own line.
func goalText(g string) string {
	for {
		g = strings.TrimSpace(g)
		if strings.HasPrefix(g, "#") {
			g = strings.TrimLeft(g, "#")
			continue
		}
		if item, b, _ := unbullet(g); b && item != g {
			g = item
			continue
		}
		if _, rest, ok := heading(g); ok {
			g = rest
			continue
		}
		return g
	}
}

// unbullet strips a list marker (-, *, +, •, "1.", "1)") and a check box,
// and reports whether there was a marker and the box's mark.
func unbullet(t string) (string, bool, byte) {
	bulleted := false
	switch {
	case strings.HasPrefix(t, "- "), strings.HasPrefix(t, "* "), strings.HasPrefix(t, "+ "):
		t, bulleted = strings.TrimSpace(t[2:]), true
	case strings.HasPrefix(t, "• "):
		t, bulleted = strings.TrimSpace(t[len("• "):]), true
	default:
		i := 0
		for i < len(t) && i < 4 && isDigit(t[i]) {
			i++
		}
		if i > 0 && i+1 < len(t) && (t[i] == '.' || t[i] == ')') && t[i+1] == ' ' {
			t, bulleted = strings.TrimSpace(t[i+2:]), true
		}
	}
	var box byte
	if isBox(t) {
		box = t[1] | 0x20
		if t[1] == ' ' {
			box = ' '
		}
		t, bulleted = stripBoxes(t), true
	}
	return t, bulleted, box
}

func isBox(t string) bool {
	return len(t) >= 3 && t[0] == '[' && t[2] == ']' && (t[1] == ' ' || t[1] == 'x' || t[1] == 'X')
}

// stripBoxes strips the check boxes an item opens with.
func stripBoxes(t string) string {
	for isBox(t) {
		t = strings.TrimSpace(t[3:])
	}
	return t
}

func isNone(s string) bool {
	switch strings.ToLower(strings.Trim(strings.TrimSpace(s), ".()_*")) {
	case "", "none", "n/a", "na", "nothing", "none yet", "nothing yet", "-":
		return true
	}
	return false
}

// ledgerLine reads a Critical Context line "<kind>: text" or
// "<kinds>: a, b" into identifiers.
func ledgerLine(item string) ([]Identifier, bool) {
	label, rest, ok := strings.Cut(item, ": ")
	if !ok {
		return nil, false
	}
	k, ok := ledgerLabels[strings.ToLower(strings.Trim(label, "*_ "))]
	if !ok {
		return nil, false
	}
	rest = strings.TrimSpace(rest)
	if rest == "" {
		return nil, false
	}
	plural := strings.HasSuffix(strings.ToLower(strings.Trim(label, "*_ ")), "s")
	var parts []string
	if plural && listed(k) {
		parts = strings.Split(rest, ", ")
	} else {
		parts = []string{rest}
	}
	ids := make([]Identifier, 0, len(parts))
	for _, p := range parts {
		p = strings.TrimSpace(p)
		if len(p) > 2 && p[0] == '`' && p[len(p)-1] == '`' {
			p = p[1 : len(p)-1]
		}
		if p != "" {
			ids = append(ids, Identifier{Kind: kindNames[k], Text: p})
		}
	}
	return ids, len(ids) > 0
}
