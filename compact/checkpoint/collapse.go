package checkpoint

import (
	"sort"
	"strconv"
	"strings"
)

// minCollapse is how many reads of one pattern (the same program and
// flags on one path each) collapse into one ledger line; fewer are
// listed one by one.
const minCollapse = 3

// collapseReads replaces the read commands of the ledger that differ
// only in the one path they read (cat a.go, cat b.go, ...), when there
// are minCollapse or more of one pattern, by one command line in the
// place of the best ranked of them: the pattern, the count, the
// directory the paths share and every command as it was run, ordered by
// path:
//
//	cat ×14 under internal/router/: cat internal/router/a.go; cat internal/router/b.go; ...
//
// The other candidates keep their order.
func collapseReads(cs []cand) []cand {
	type group struct {
		at    int      // index of the best ranked member
		paths []string // and the commands, in the same order
		cmds  []string
	}
	groups := map[string]*group{}
	pattern := make([]string, len(cs))
	for i := range cs {
		d := &cs[i]
		if d.kind != kCommand || d.first < 0 {
			continue
		}
		p, path, ok := readPattern(d.text)
		if !ok {
			continue
		}
		pattern[i] = p
		g := groups[p]
		if g == nil {
			g = &group{at: i}
			groups[p] = g
		}
		g.paths = append(g.paths, path)
		g.cmds = append(g.cmds, d.text)
	}
	out := make([]cand, 0, len(cs))
	for i, d := range cs {
		g := groups[pattern[i]]
		if pattern[i] == "" || len(g.paths) < minCollapse {
			out = append(out, d)
			continue
		}
		if g.at != i {
			continue // said by the group's line
		}
		order := make([]int, len(g.paths))
		for j := range order {
			order[j] = j
		}
		sort.SliceStable(order, func(a, b int) bool { return g.paths[order[a]] < g.paths[order[b]] })
		cmds := make([]string, len(order))
		for j, k := range order {
			cmds[j] = g.cmds[k]
		}
		text := pattern[i] + " ×" + strconv.Itoa(len(cmds))
		if dir := commonDir(g.paths); dir != "" {
			text += " under " + dir
		}
		d.text = text + ": " + strings.Join(cmds, "; ")
		d.key = "reads " + pattern[i]
		out = append(out, d)
	}
	return out
}

// readPattern splits a command that only reads one path (cat a.go,
// head -n 50 a.go, ls internal/x) into its pattern (the program and its
// flags) and the path.
func readPattern(cmd string) (pattern, path string, ok bool) {
	if strings.ContainsAny(cmd, "|;&<>$`\"'\\*?") || !readsOnly(cmd) {
		return "", "", false
	}
	f := strings.Fields(cmd)
	if len(f) < 2 {
		return "", "", false
	}
	var flags []string
	for j, w := range f[1:] {
		if strings.HasPrefix(w, "-") {
			flags = append(flags, w)
			continue
		}
		// A flag's number (head -n 50) is part of the pattern.
		if allDigits(w) && j > 0 {
			flags = append(flags, w)
			continue
		}
		if path != "" {
			return "", "", false // two paths
		}
		path = w
	}
	if path == "" || !(strings.Contains(path, "/") || isFileName(path)) {
		return "", "", false
	}
	return strings.Join(append([]string{f[0]}, flags...), " "), path, true
}

// commonDir returns the directory every path is under, with its
// trailing slash, or "".
func commonDir(paths []string) string {
	dir := paths[0]
	if i := strings.LastIndexByte(dir, '/'); i >= 0 {
		dir = dir[:i+1]
	} else {
		return ""
	}
	for _, p := range paths[1:] {
		for !strings.HasPrefix(p, dir) {
			i := strings.LastIndexByte(strings.TrimSuffix(dir, "/"), '/')
			if i < 0 {
				return ""
			}
			dir = dir[:i+1]
		}
	}
	return dir
}
