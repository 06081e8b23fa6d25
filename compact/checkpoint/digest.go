package checkpoint

import (
	"strings"
	"unicode/utf8"
)

// DigestPrefix opens the digest line of a cleared tool result: the
// identifiers the output held, separated by "; ".
const DigestPrefix = "It held: "

// digestSink gathers a tool output's identifiers by digest group, each
// once, in the order they appear.
type digestSink struct {
	seen   map[string]bool
	groups [5][]string // error line, error codes, URLs, paths, other ids
}

func (d *digestSink) add(k kind, text string, _ mark) {
	text = strings.TrimSpace(text)
	if text == "" || strings.ContainsAny(text, "\n\r") || strings.Contains(text, "; ") {
		return
	}
	g := -1
	switch k {
	case kError:
		if len(d.groups[0]) > 0 {
			return // the first error line says what failed
		}
		g = 0
		text = cutWordsVerbatim(text, 120)
	case kID:
		g = 4
		if isErrorCode(text) {
			g = 1
		}
	case kURL:
		g = 2
	case kPath:
		g = 3
	default:
		return
	}
	key := keyOf(k, text)
	if key == "" || d.seen[key] {
		return
	}
	d.seen[key] = true
	d.groups[g] = append(d.groups[g], text)
}

// cutWordsVerbatim cuts s to at most n bytes at a word boundary, without
// a mark: the result is a prefix of s, so it stays verbatim.
func cutWordsVerbatim(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if i := strings.LastIndexByte(s[:cut], ' '); i > n/2 {
		cut = i
	}
	return strings.TrimRight(s[:cut], " ,;:")
}

// Digest returns the one-line digest of a tool output that is being
// cleared: DigestPrefix and the identifiers it held, separated by "; ",
// at most limit characters (runes) long, or "" if it held none. It takes
// the first error line (cut to 120 bytes at a word), error codes
// (ECONNREFUSED, ERR_MODULE_NOT_FOUND, E0308), URLs and host:port
// addresses, paths, and other ids (ports, hashes, versions, key=value
// settings), deduplicated, in turns (the first of each group, then the
// second of each...) so that every group is represented before any is
// complete. Like the ledger, it reads the head and the tail of a long
// output.
func Digest(output string, limit int) string {
	d := &digestSink{seen: map[string]bool{}}
	scanBounded(output, func(s string) { scanCode(s, d) })
	var b strings.Builder
	b.WriteString(DigestPrefix)
	used := utf8.RuneCountInString(DigestPrefix)
	n := 0
	for round := 0; ; round++ {
		more := false
		for g := range d.groups {
			if round >= len(d.groups[g]) {
				continue
			}
			more = true
			t := d.groups[g][round]
			cost := utf8.RuneCountInString(t)
			if n > 0 {
				cost += 2
			}
			if used+cost > limit {
				continue
			}
			if n > 0 {
				b.WriteString("; ")
			}
			b.WriteString(t)
			used += cost
			n++
		}
		if !more {
			break
		}
	}
	if n == 0 {
		return ""
	}
	return b.String()
}

// clearedDigest returns the digest items of a cleared tool result, one
// per line, and whether the result is a cleared one (with a digest or
// not).
func clearedDigest(text string) (string, bool) {
	if !isCleared(text) {
		return "", false
	}
	i := strings.Index(text, "\n"+DigestPrefix)
	if i < 0 {
		return "", true
	}
	line := text[i+1+len(DigestPrefix):]
	if j := strings.IndexByte(line, '\n'); j >= 0 {
		line = line[:j]
	}
	return strings.ReplaceAll(line, "; ", "\n"), true
}
