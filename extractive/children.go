package extractive

import (
	"strings"
	"time"

	"github.com/strata-memory/strata"
)

// addChildren reads the children of a level k node: the sentences of
// their summaries (with the speaker labels and day markers this package
// prints), their facts, the identifiers they listed under Mentions, and
// their themes.
func (w *work) addChildren(children []strata.Node) {
	w.children = true
	var spans []span
	for ci := range children {
		c := &children[ci]
		day := w.dayOf(c.Start)
		speaker := ""
		pos := 1
		first := true
		days := 0 // day markers in the summary
		for line := range strings.SplitSeq(c.Summary, "\n") {
			line = strings.TrimSpace(line)
			if rest, ok := strings.CutPrefix(line, mentionsLabel); ok {
				w.addCarried(rest)
				continue
			}
			if d, rest, ok := cutDayMarker(line); ok {
				day, line, speaker = d, rest, ""
				days++
			}
			spans = splitSentences(line, spans[:0])
			for _, sp := range spans {
				s := line[sp.start:sp.end]
				if label, rest, ok := cutLabel(s); ok {
					speaker, s = label, rest
				}
				w.addSentence(s, speaker, day, ci, ci*orderStride+pos, 1, first, false)
				pos++
				first = false
			}
		}
		for fi, f := range c.Facts {
			spk := ""
			if label, rest, ok := cutLabel(f); ok {
				spk, f = label, rest
			}
			if w.repeats(ci, f) {
				continue
			}
			n := len(w.units)
			w.addSentence(f, spk, w.dayOf(c.Start), ci, ci*orderStride+orderStride/2+fi, 1, false, true)
			if days > 1 || w.dayOf(c.Start) != w.dayOf(c.End) {
				// Where it stood in a child of several days is unknown:
				// in Facts, not in the text.
				for j := n; j < len(w.units); j++ {
					w.units[j].noText = true
				}
			}
		}
		for _, th := range c.Themes {
			w.addTheme(th)
		}
	}
	for i := range w.units {
		if spk := w.units[i].speaker; spk != "" && !isRole(spk) {
			if _, ok := w.speakers[spk]; !ok {
				w.speakers[spk] = int(w.units[i].occLo)
			}
		}
	}
}

// repeats reports whether the fact f of child ci is already one of the
// child's summary sentences, and marks that sentence as a fact.
func (w *work) repeats(ci int, f string) bool {
	w.buf = normalizeTrivial(stripFillers(f), w.buf)
	for i := len(w.units) - 1; i >= 0 && w.units[i].src == ci; i-- {
		if normalizedEqual(w.units[i].text, w.buf) {
			w.units[i].fact = true
			return true
		}
	}
	return false
}

// addCarried records the identifiers a child listed under Mentions.
func (w *work) addCarried(list string) {
	for m := range strings.SplitSeq(list, "; ") {
		m = strings.TrimSpace(m)
		if m != "" && len(m) <= maxIdentBytes {
			w.occs = append(w.occs, occ{unit: -1, kind: kCarried, text: m})
		}
	}
}

// addTheme adds a child's theme to the span's theme scores.
func (w *work) addTheme(th string) {
	lw := lowerWord(strings.TrimSpace(th))
	if lw == "" {
		return
	}
	key := lw
	if !strings.Contains(lw, " ") {
		key = stem(lw)
	}
	ti, ok := w.termIdx[key]
	if !ok {
		ti = int32(len(w.terms))
		w.termIdx[key] = ti
		w.terms = append(w.terms, term{forms: [3]form{{lw, 1}}})
	}
	w.terms[ti].theme += 2
}

func isRole(s string) bool {
	switch s {
	case string(strata.RoleUser), string(strata.RoleAssistant), string(strata.RoleSystem), string(strata.RoleTool):
		return true
	}
	return false
}

// cutDayMarker splits "[8 May 2023] rest".
func cutDayMarker(line string) (day, rest string, ok bool) {
	if !strings.HasPrefix(line, "[") {
		return "", line, false
	}
	end := strings.Index(line, "] ")
	if end < 0 || end > 24 {
		if strings.HasSuffix(line, "]") && len(line) <= 24 {
			end = len(line) - 1
		} else {
			return "", line, false
		}
	}
	d := line[1:end]
	if _, err := time.Parse("2 Jan 2006", d); err != nil {
		return "", line, false
	}
	if end+2 > len(line) {
		return d, "", true
	}
	return d, line[end+2:], true
}

// handleLike reports whether s looks like a user name: ASCII letters,
// digits, _ . and -, with a letter.
func handleLike(s string) bool {
	letter := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case isASCIILetter(c):
			letter = true
		case isDigit(c) || c == '_' || c == '.' || c == '-':
		default:
			return false
		}
	}
	return letter
}

// cutLabel splits "Caroline: text" into its speaker label and text. A
// label is one to four capitalized words, or a role name or user name,
// with no sentence punctuation.
func cutLabel(s string) (label, rest string, ok bool) {
	i := strings.Index(s, ": ")
	if i <= 0 || i > 40 {
		return "", s, false
	}
	label = s[:i]
	if strings.ContainsAny(label, ",;!?()[]\"`/:") || label == "Mentions" {
		return "", s, false
	}
	if isRole(label) {
		return label, s[i+2:], true
	}
	words := 0
	for range strings.FieldsSeq(label) {
		words++
	}
	if words == 0 || words > 4 {
		return "", s, false
	}
	if words == 1 && len(label) <= 32 && handleLike(label) {
		return label, s[i+2:], true // bob, user_42
	}
	for f := range strings.FieldsSeq(label) {
		if k := classify(strings.TrimRight(f, ".")); k != kCap && k != kAcronym && k != kAbbrev {
			return "", s, false
		}
	}
	return label, s[i+2:], true
}
