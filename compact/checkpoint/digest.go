package checkpoint

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// DigestPrefix opens the digest line of a cleared tool result: the
// identifiers the output held, separated by "; ".
const DigestPrefix = "It held: "

// Digest groups, in the order a failing output's digest spends its room
// on them (see Digest).
const (
	dgFirstError = iota // the output's first error line
	dgFailure           // identifiers an error line or a stack frame names
	dgMoreErrors        // its other error lines, one of each shape
	dgTails             // what the cut of a long error line left out
	dgRepeats           // identifiers only error lines of a repeated shape name
	dgCode              // error codes
	dgURL               // URLs and host:port addresses
	dgPath              // paths
	dgOther             // ports, hashes, versions, key=value settings
	dgCount
)

// maxDigestLine caps one error line in a digest, in bytes.
const maxDigestLine = 120

// digestItem is one identifier of an output, as the digest gathers it.
type digestItem struct {
	text   string
	kind   kind
	marks  mark
	repeat bool // seen only on error lines that repeat an earlier one's shape
}

// digestSink gathers a tool output's identifiers and error lines, each
// once, in the order they appear.
type digestSink struct {
	seen   map[string]int // key -> index in items
	items  []digestItem
	errs   []string // error lines, one of each shape
	tails  []string // the rest of the error lines a cut shortened
	shapes map[string]bool
	repeat bool // the line being scanned repeats an earlier error line's shape
	output string
}

// wholeLine returns the line of the output that error text t opens, to
// its end: the scanners cut an error line at 200 bytes. It searches
// what the scanners read of the output (see scanBounded), and gives t
// itself when the text is not found there.
func (d *digestSink) wholeLine(t string) string {
	line := ""
	scanBounded(d.output, func(s string) {
		if i := strings.Index(s, t); line == "" && i >= 0 {
			line = s[i:]
		}
	})
	if line == "" {
		return t
	}
	if j := strings.IndexByte(line, '\n'); j >= 0 {
		line = line[:j]
	}
	return strings.TrimRight(line, " \r")
}

// startLine is called as each line of the output is scanned.
func (d *digestSink) startLine() { d.repeat = false }

func (d *digestSink) add(k kind, text string, m mark) {
	text = strings.TrimSpace(text)
	if k == kError {
		if i := strings.Index(text, "; "); i > 0 {
			// "; " parts the digest's items: an error line keeps
			// what comes before it, verbatim.
			text = strings.TrimRight(text[:i], " ,:")
		}
	}
	if text == "" || strings.ContainsAny(text, "\n\r") || strings.Contains(text, "; ") {
		return
	}
	if k == kError {
		// An error line comes before what is on it.
		if sh := shape(keyOf(k, text)); !d.shapes[sh] {
			d.shapes[sh] = true
			cut := cutWordsVerbatim(text, maxDigestLine)
			d.errs = append(d.errs, cut)
			if t := lineRest(d.wholeLine(text), len(cut)); t != "" {
				d.tails = append(d.tails, t)
			}
		} else {
			d.repeat = true
		}
		// Its file:line sites (a.go:77: want 3), which the path
		// scanner takes without their line.
		for _, f := range strings.Fields(text) {
			if site := lineSite(f); site != "" {
				d.item(kPath, site, markTrace)
			}
		}
		return
	}
	switch k {
	case kID, kURL, kPath:
	case kSymbol:
		// A name counts only where a failure shows it (a test that
		// failed, a frame's function, an exception's class) or a test
		// runner reports on it.
		if m&(markTrace|markResult) == 0 {
			return
		}
	default:
		return
	}
	// A stack frame's file:line is where the failure happened, unless
	// the frame is in a language's runtime or a dependency (whose line
	// names it again, without the mark) or the line reports a test that
	// passed.
	if k == kPath && lineSuffix(text) > 0 && m&(markLib|markResult) == 0 {
		if i, ok := d.seen[keyOf(k, text)]; !ok || d.items[i].marks&markLib == 0 {
			m |= markTrace
		}
	}
	d.item(k, text, m)
}

// item records one identifier.
func (d *digestSink) item(k kind, text string, m mark) {
	key := keyOf(k, text)
	if key == "" {
		return
	}
	repeat := d.repeat && m&markTrace != 0
	if i, ok := d.seen[key]; ok {
		it := &d.items[i]
		it.marks |= m
		it.repeat = it.repeat && repeat
		return
	}
	d.seen[key] = len(d.items)
	d.items = append(d.items, digestItem{text: text, kind: k, marks: m, repeat: repeat})
}

// group returns the digest group of an identifier of an output that
// has (failing) or has not error lines.
func (it *digestItem) group(failing bool) int {
	if failing && it.marks&markTrace != 0 {
		if it.repeat {
			return dgRepeats
		}
		return dgFailure
	}
	switch it.kind {
	case kURL:
		return dgURL
	case kPath:
		return dgPath
	case kID:
		if isErrorCode(it.text) {
			return dgCode
		}
	}
	return dgOther
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

// lineRest returns what a cut of line s to its first n bytes left out,
// from the start of the word the cut split, at most 2*maxDigestLine
// bytes of it (cut at a word), or "": the ids a long error line names
// last (a log record's tag=..., a compiler's site past a long path).
func lineRest(s string, n int) string {
	if n >= len(s) {
		return ""
	}
	if s[n] != ' ' {
		if i := strings.LastIndexByte(s[:n], ' '); i >= 0 {
			n = i
		} else {
			n = 0
		}
	}
	return cutWordsVerbatim(strings.TrimLeft(s[n:], " ,;:"), 2*maxDigestLine)
}

// Digest returns the one-line digest of a tool output that is being
// cleared: DigestPrefix and the identifiers it held, separated by "; ",
// or "" if it held none. It is at most limit characters (runes) long, or
// failLimit for an output with an error line: what failed and where is
// what an agent needs of an old output next.
//
// An output without an error line gives its error codes (ECONNREFUSED,
// ERR_MODULE_NOT_FOUND, E0308), URLs and host:port addresses, paths and
// other ids (ports, hashes, versions, key=value settings), deduplicated,
// in turns (the first of each group, then the second of each...), so
// that every group is represented before any is complete.
//
// A failing output gives first its first error line (cut to 120 bytes
// at a word), then every identifier its error lines and stack frames
// name (the failing tests, the file:line sites, the codes, URLs and ids
// of the failure, the exception and the frames' functions), in the order
// they appear, then its other error lines (one of each shape: lines that
// differ only in hashes or long ids are one), then the rest of each
// error line its cut shortened (from the start of the word the cut
// split, up to 240 bytes: a record's last fields, a site past a long
// path), then the identifiers only the repeats of an error line name (a
// log's request ids), and only then the other groups in turns. What does
// not fit is left out and the next item that fits is taken. A failing
// output whose lines fit the room whole is kept whole instead: every
// line that holds something, trimmed, each once, in order. Like the
// ledger, it reads the head and the tail of a long output. An output a
// harness wrapped in JSON with its exit status (Codex's {"output": ...,
// "metadata": {"exit_code": 1}}) is digested as the text it wraps, as a
// failed one when the status is not zero.
func Digest(output string, limit, failLimit int) string {
	return digest(output, false, limit, failLimit)
}

// DigestFailed is Digest for an output its tool reported as failed (an
// Anthropic tool_result's is_error): it is a failing output whatever its
// format, so its lines that report a failure in words are its error
// lines when no rule finds one, and it gets failLimit.
func DigestFailed(output string, limit, failLimit int) string {
	return digest(output, true, limit, failLimit)
}

func digest(output string, failed bool, limit, failLimit int) string {
	if text, f, ok := unwrapExit(output); ok {
		output, failed = text, failed || f
	}
	output = trimmedDigest(output)
	d := &digestSink{seen: map[string]int{}, shapes: map[string]bool{}, output: output}
	said := outputFailed(output, failed)
	scanBounded(output, func(s string) { scanOutput(s, d, said) })
	failing := failed || len(d.errs) > 0
	var groups [dgCount][]string
	if failing {
		limit = max(limit, failLimit)
	}
	if len(d.errs) > 0 {
		groups[dgFirstError] = d.errs[:1]
		groups[dgMoreErrors] = d.errs[1:]
		groups[dgTails] = d.tails
	}
	if failing {
		if whole := wholeDigest(output, limit); whole != "" {
			return whole
		}
	}
	// A path a site names with its line is said by the site.
	sited := map[string]bool{}
	for _, it := range d.items {
		if i := lineSuffix(it.text); it.kind == kPath && i > 0 {
			sited[it.text[:i]] = true
		}
	}
	for i := range d.items {
		it := &d.items[i]
		if it.kind == kPath && sited[it.text] {
			continue
		}
		g := it.group(failing)
		groups[g] = append(groups[g], it.text)
	}
	var b strings.Builder
	b.WriteString(DigestPrefix)
	used := utf8.RuneCountInString(DigestPrefix)
	n := 0
	take := func(t string) {
		cost := utf8.RuneCountInString(t)
		if n > 0 {
			cost += 2
		}
		if used+cost > limit {
			return
		}
		if n > 0 {
			b.WriteString("; ")
		}
		b.WriteString(t)
		used += cost
		n++
	}
	// The failure's evidence, in full, in order.
	for g := dgFirstError; g <= dgRepeats; g++ {
		for _, t := range groups[g] {
			take(t)
		}
	}
	// The rest in turns.
	for round := 0; ; round++ {
		more := false
		for g := dgCode; g < dgCount; g++ {
			if round < len(groups[g]) {
				more = true
				take(groups[g][round])
			}
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

// wholeDigest returns the digest of a failing output that fits its room
// whole: every line that holds something, trimmed, in order, each once;
// or "" when it does not fit. A short failure's every word may be what
// names it (a scheduler's "Constraint \"zone = x\": 2 nodes excluded").
func wholeDigest(output string, limit int) string {
	if len(output) > 2*limit {
		return ""
	}
	var b strings.Builder
	b.WriteString(DigestPrefix)
	used := utf8.RuneCountInString(DigestPrefix)
	seen := map[string]bool{}
	n := 0
	for line := range strings.SplitSeq(output, "\n") {
		line = strings.Trim(line, " \t\r;")
		if strings.IndexFunc(line, isAlnum) < 0 || seen[line] {
			continue // nothing, or only braces or a box's border
		}
		seen[line] = true
		if n > 0 {
			b.WriteString("; ")
			used += 2
		}
		b.WriteString(line)
		used += utf8.RuneCountInString(line)
		n++
		if used > limit {
			return ""
		}
	}
	if n == 0 {
		return ""
	}
	return b.String()
}

func isAlnum(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// trimMarkerEnd ends the marker of a tool result trimmed to its head and
// tail; the digest of what the trim cut out may follow it on the next
// line.
const trimMarkerEnd = " chars) ---\n" + DigestPrefix

// trimmedDigest returns s with the digest line under a trim marker split
// into its items, one per line, so that an error line it kept is read as
// one; s unchanged when it has none.
func trimmedDigest(s string) string {
	i := strings.Index(s, trimMarkerEnd)
	if i < 0 {
		return s
	}
	start := i + len(trimMarkerEnd) - len(DigestPrefix)
	end := strings.IndexByte(s[start:], '\n')
	if end < 0 {
		end = len(s) - start
	}
	items := strings.ReplaceAll(s[start+len(DigestPrefix):start+end], "; ", "\n")
	return s[:start] + items + s[start+end:]
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
