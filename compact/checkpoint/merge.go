package checkpoint

import "strings"

// latestPrefix introduces, in an updated Goal, the span's last request.
const latestPrefix = " Latest request: "

// merge folds the sections written from a new span (cur) into those of
// the previous checkpoint (prev):
//   - Goal: the previous goal, followed by the span's last user request
//     when the goal does not already say it (replacing an earlier
//     "Latest request");
//   - Constraints, Key Decisions and Critical Context notes: the previous
//     ones, then the new ones;
//   - Done: the previous items, then the new ones;
//   - In Progress and Next Steps: the previous items the span completed
//     leave (the new Done item that completes them takes their place),
//     the others stay; new work comes first in Next Steps, after the
//     previous items in In Progress.
//
// An item is completed when a new Done item names one of its identifiers
// (a path, command, symbol or error), or shares at least 60% of its words
// of four letters or more.
func merge(prev, cur Sections, si *spanInfo) Sections {
	var out Sections
	base := prev.Goal
	if i := strings.Index(base, strings.TrimSpace(latestPrefix)); i >= 0 {
		base = strings.TrimSpace(base[:i])
	}
	switch {
	case base == "":
		out.Goal = cur.Goal
	default:
		out.Goal = base
		if req := lastRequest(si); req != "" && !strings.Contains(strings.ToLower(base), strings.ToLower(req)) {
			out.Goal = base + latestPrefix + req
		}
	}
	out.Goal = cutWords(out.Goal, 2*maxGoalBytes)
	out.Constraints = union(prev.Constraints, cur.Constraints)
	out.Done = union(prev.Done, cur.Done)
	out.Decisions = union(prev.Decisions, cur.Decisions)
	out.Notes = union(prev.Notes, cur.Notes)
	var open []string
	for _, it := range prev.InProgress {
		if !completed(it, cur.Done) {
			open = append(open, it)
		}
	}
	out.InProgress = union(open, cur.InProgress)
	var next []string
	for _, it := range prev.NextSteps {
		if !completed(it, cur.Done) {
			next = append(next, it)
		}
	}
	out.NextSteps = union(cur.NextSteps, next)
	return out
}

// lastRequest returns the first sentence of the span's last user message.
func lastRequest(si *spanInfo) string {
	for i := len(si.entries) - 1; i >= 0; i-- {
		e := si.entries[i]
		if si.skip[i] || e.Role != "user" || e.Kind != "text" {
			continue
		}
		if snts := sentences(e.Text, sentenceScan); len(snts) > 0 {
			return cutWords(snts[0], maxItemBytes)
		}
	}
	return ""
}

// union appends b to a, without repeats (case-insensitive).
func union(a, b []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, l := range [][]string{a, b} {
		for _, it := range l {
			k := strings.ToLower(strings.TrimSpace(it))
			if k == "" || seen[k] {
				continue
			}
			seen[k] = true
			out = append(out, it)
		}
	}
	return out
}

// keySink collects the keys of the identifiers of a text.
type keySink struct{ keys []string }

func (s *keySink) add(k kind, text string, _ mark) {
	if k == kNumber || k == kID {
		return // too generic to say two items are the same work
	}
	if key := keyOf(k, text); len(key) >= 3 {
		s.keys = append(s.keys, key)
	}
}

// completed reports whether a new Done item completes an earlier item.
func completed(it string, done []string) bool {
	if len(done) == 0 {
		return false
	}
	var ks keySink
	scanProse(it, &ks)
	low := make([]string, len(done))
	for i, d := range done {
		low[i] = strings.ToLower(d)
	}
	for _, k := range ks.keys {
		for _, d := range low {
			if strings.Contains(d, k) {
				return true
			}
		}
	}
	var ws []string
	for _, w := range wordsOf(strings.ToLower(it)) {
		if len(w) >= 4 {
			ws = append(ws, w)
		}
	}
	if len(ws) < 3 {
		return false
	}
	for _, d := range low {
		n := 0
		for _, w := range ws {
			if strings.Contains(d, w) {
				n++
			}
		}
		if n*10 >= len(ws)*6 {
			return true
		}
	}
	return false
}
