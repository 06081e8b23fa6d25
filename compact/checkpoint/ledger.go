package checkpoint

import (
	"math"
	"sort"
	"strings"

	"github.com/strata-memory/strata"
)

// source is where an identifier was seen, as a bit set.
type source uint8

const (
	srcUser      source = 1 << iota // the user's text
	srcAssistant                    // the assistant's text
	srcThinking                     // the assistant's thinking
	srcArg                          // a tool call's command, path, URL or pattern
	srcCode                         // code or text a tool call writes
	srcOutput                       // a tool's output
)

// Scan bounds: of a tool result or a long argument, the head and the tail
// are scanned (errors sit at both ends of a log); the middle of a huge
// output is not.
const (
	scanHead           = 48 << 10
	scanTail           = 16 << 10
	maxErrorsPerOutput = 8 // error lines taken from one tool result
)

// kindWeight is the base rank of a kind: error messages and commands are
// the hardest to recover once lost, symbols the easiest.
var kindWeight = [...]float64{kPath: 4, kCommand: 4.5, kURL: 4, kNumber: 3, kError: 5, kSymbol: 2.5, kID: 3}

// kindPriority decides the kind of a text found as two kinds.
var kindPriority = [...]int{kSymbol: 1, kNumber: 2, kID: 3, kPath: 4, kURL: 5, kError: 6, kCommand: 7}

// cand is one identifier of the ledger while it is built.
type cand struct {
	key     string // lower-cased, trailing punctuation and ./ dropped
	text    string // as written: by a tool call if one named it, else first seen
	kind    kind
	src     source
	n       int32 // occurrences
	first   int32 // entry index of the first and last occurrence
	last    int32
	marks   mark // how code or output showed it
	arg     bool // text is as a tool call argument wrote it
	earlier bool // in the previous checkpoint's ledger
	// spare marks what the ranking leaves out unless there is room for
	// everything: error lines past an output's first few, error lines
	// that repeat another but for their numbers, names only a read or a
	// listing showed.
	spare bool
	// passing marks what only a passing output shows: the file:line of
	// a log or grep line, a test a runner says passed.
	passing bool
	// later marks what ranks after the first tier (what only tool output
	// shows, and the spare candidates).
	later bool
	score float64
}

// collector gathers the identifiers of a span.
type collector struct {
	si    *spanInfo
	idx   map[string]int32
	cands []cand
	at    int32
	src   source
	buf   []byte
	// shapes count the shapes and loose shapes of the error lines of
	// the output being scanned; repeat says the line being scanned
	// repeats one of them but for its opaque tokens and numbers (a
	// log's "ERROR insert order <uuid> (attempt 3/5)" lines).
	shapes map[string]int
	repeat bool
}

func newCollector(si *spanInfo) *collector {
	return &collector{si: si, idx: map[string]int32{}, shapes: map[string]int{}}
}

// startLine is called as each line of output is scanned.
func (c *collector) startLine() { c.repeat = false }

// add records one occurrence.
func (c *collector) add(k kind, text string, m mark) {
	text = strings.TrimSpace(text)
	if text == "" {
		return
	}
	if c.src == srcOutput {
		if k == kError {
			// Repeats, much as collapseAlike counts them: the same
			// shape, or a loose shape past its first few lines. Unlike
			// collapseAlike, every line counts towards its loose
			// shape, repeats included: counting only the lines not
			// yet repeats, as collapseAlike does, was measured and
			// cost fieldgen's long session at 30000 / 8000 one in
			// thirteen of its kept identifiers.
			sh := shape(keyOf(k, text))
			ls := "\x00" + looseShape(sh)
			c.repeat = c.shapes[sh] > 0 || c.shapes[ls] >= maxLooseAlike
			c.shapes[sh]++
			c.shapes[ls]++
		}
		if c.repeat && m&markTrace != 0 {
			// What only the repeats of an error line name (each
			// line's request id or order id) is weaker evidence than
			// what the first of them names.
			m = m&^(markTrace|markErrLine) | markFailure
		}
	}
	spare := false
	if k == kError && c.src == srcOutput && c.si != nil {
		c.si.errs[c.at]++
		// The first error line says what failed; a test runner's summary
		// line (--- FAIL: TestX, FAILED a::b) gives way to a message.
		if f := c.si.firstErr[c.at]; f == "" || isSummaryError(f) && !isSummaryError(text) {
			c.si.firstErr[c.at] = text
		}
		// Past the first few, an output's error lines are kept only
		// where there is room for every identifier of the span.
		spare = c.si.errs[c.at] > maxErrorsPerOutput
	}
	if i := strings.IndexAny(text, "\n\r"); i >= 0 {
		text = strings.TrimSpace(text[:i])
		if text == "" {
			return
		}
	}
	if len(text) > maxIdent {
		return
	}
	c.buf = appendKey(c.buf[:0], k, text)
	if len(c.buf) == 0 {
		return
	}
	if i, ok := c.idx[string(c.buf)]; ok {
		d := &c.cands[i]
		d.n++
		d.last = c.at
		d.src |= c.src
		d.marks |= m
		d.spare = d.spare && spare
		if kindPriority[k] > kindPriority[d.kind] {
			d.kind = k
		}
		if c.src == srcArg && !d.arg {
			d.text, d.arg = text, true
		}
		return
	}
	key := string(c.buf)
	c.idx[key] = int32(len(c.cands))
	c.cands = append(c.cands, cand{key: key, text: text, kind: k, src: c.src, n: 1, first: c.at, last: c.at,
		marks: m, arg: c.src == srcArg, spare: spare})
}

// isSummaryError reports whether an error line only names what failed.
func isSummaryError(s string) bool {
	return strings.HasPrefix(s, "--- FAIL: ") || strings.HasPrefix(s, "FAIL") && !strings.HasPrefix(s, "FAILED ") ||
		strings.HasPrefix(s, "FAILED ") && !strings.Contains(s, " - ")
}

// appendKey appends the dedupe key of an identifier: lower case, white
// space collapsed, trailing punctuation dropped; a path without ./ or a
// trailing /, a symbol without ().
func appendKey(dst []byte, k kind, t string) []byte {
	switch k {
	case kPath:
		for strings.HasPrefix(t, "./") {
			t = t[2:]
		}
		t = strings.TrimSuffix(t, "/")
	case kSymbol:
		t = strings.TrimSuffix(t, "()")
	}
	for len(t) > 0 && strings.IndexByte(".,;:!?", t[len(t)-1]) >= 0 {
		t = t[:len(t)-1]
	}
	space := false
	for i := 0; i < len(t); i++ {
		c := t[i]
		if isSpace(c) {
			space = true
			continue
		}
		if space && len(dst) > 0 {
			dst = append(dst, ' ')
		}
		space = false
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

func keyOf(k kind, t string) string { return string(appendKey(nil, k, t)) }

// collect scans every entry of the span.
func collect(si *spanInfo) *collector {
	c := newCollector(si)
	for i, e := range si.entries {
		if si.skip[i] {
			continue
		}
		c.at = int32(i)
		switch {
		case e.Kind == "tool_call":
			c.scanCall(i, e)
		case e.Kind == "tool_result" || e.Role == "tool":
			c.src = srcOutput
			clear(c.shapes)
			if items, ok := clearedDigest(e.Text); ok {
				// A cleared result: what its digest says it held.
				scanCode(items, c)
				continue
			}
			failed := outputFailed(e.Text, e.IsError)
			scanBounded(trimmedDigest(e.Text), func(s string) { scanOutput(s, c, failed) })
		case e.Kind == "thinking":
			c.src = srcThinking
			scanBounded(e.Text, func(s string) { scanProse(s, c) })
		case e.Role == "user":
			c.src = srcUser
			scanBounded(e.Text, func(s string) { scanProse(s, c) })
		case e.Role == "assistant":
			c.src = srcAssistant
			scanBounded(e.Text, func(s string) { scanProse(s, c) })
		}
	}
	si.outcomes()
	return c
}

// scanBounded scans s, or its head and tail when it is long, cut at line
// boundaries.
func scanBounded(s string, scan func(string)) {
	if len(s) <= scanHead+scanTail {
		scan(s)
		return
	}
	head := s[:scanHead]
	if i := strings.LastIndexByte(head, '\n'); i > 0 {
		head = head[:i]
	}
	tail := s[len(s)-scanTail:]
	if i := strings.IndexByte(tail, '\n'); i >= 0 {
		tail = tail[i+1:]
	}
	scan(head)
	scan(tail)
}

// scanCall scans a tool call: its command, paths and URLs as given, its
// patterns as code, and the code or text it writes.
func (c *collector) scanCall(i int, e Entry) {
	si := c.si
	a := &si.actions[si.act[i]]
	c.src = srcArg
	var m mark
	switch {
	case a.kind == actWrite:
		m = markWritten
	case a.kind == actRead || a.command != "" && readsOnly(a.command):
		m = markRead
	}
	if a.command != "" {
		if isCommand(a.command) || a.kind == actRun {
			c.add(kCommand, a.command, m)
		}
		scanTokens(a.command, marked{c, m}, false)
	}
	for _, p := range a.paths {
		c.add(kPath, p, m)
	}
	args := si.args[i]
	if args == nil {
		if a.command == "" {
			scanBounded(e.Text, func(s string) { scanProse(s, c) })
		}
		return
	}
	for _, k := range sortedKeys(args) {
		c.scanArg(strings.ToLower(k), args[k], 0)
	}
}

// readCommands only read the project: a command made of them is a read,
// not an action.
var readCommands = setOf(`cat head tail less more ls ll tree find fd grep rg ag wc nl bat file stat du sed awk
pwd echo which type git-show`)

// readsOnly reports whether every part of a shell command only reads:
// cat, head, ls, grep (sed and awk without -i).
func readsOnly(cmd string) bool {
	parts := splitShell(cmd)
	if len(parts) == 0 {
		return false
	}
	for _, p := range parts {
		f := strings.Fields(p)
		if len(f) == 0 {
			continue
		}
		if !readCommands[f[0]] || strings.Contains(p, " -i") || strings.Contains(p, ">") {
			return false
		}
	}
	return true
}

func (c *collector) scanArg(key string, v any, depth int) {
	if depth > 4 {
		return
	}
	switch v := v.(type) {
	case string:
		switch {
		case depth == 0 && (commandKeys[key] || pathKeys[key]):
			// taken by describe
		case urlKeys[key]:
			c.src = srcArg
			if strings.Contains(v, "://") {
				c.add(kURL, urlEnd(strings.TrimSpace(v)), 0)
			} else {
				scanTokens(v, c, false)
			}
		case contentKeys[key]:
			c.src = srcCode
			scanBounded(v, func(s string) { scanCode(s, c) })
		case patternKeys[key] && len(v) <= 200:
			c.src = srcArg
			scanSpan(v, c)
		case len(v) > 160 || strings.ContainsAny(v, "\n"):
			c.src = srcCode
			scanBounded(v, func(s string) { scanCode(s, c) })
		default:
			c.src = srcArg
			scanProse(v, c)
		}
	case []any:
		for _, x := range v {
			c.scanArg(key, x, depth+1)
		}
	case map[string]any:
		for _, k := range sortedKeys(v) {
			c.scanArg(strings.ToLower(k), v[k], depth+1)
		}
	}
}

// rank scores the candidates and orders them for the budget: the kind's
// weight, scaled by frequency (logarithmically), plus a bonus for what
// the user said (4), for a tool call's own argument (2.5), for the
// assistant's text (2) and thinking (0.5), and for recency (up to 2);
// then by the evidence it carries: what a failing output's error lines
// and stack frames name gains 3, a file written or edited 1.5, and a
// path or command that only reads (cat, grep, read_file) loses 2.5.
// An identifier only tool output or written code shows (not an error)
// keeps 70% of its score unless an error line or a stack frame names it,
// and is in the first tier only if one does or if code a tool call
// writes declares it; the first tier also holds everything the
// conversation names. Error lines that differ only in numbers or hex
// digits give way to the best ranked of them. The first tier is taken in
// turns by kind (each kind's best, then each kind's second best...), so
// that every kind is represented before any kind is complete. Then come
// the URLs, paths, ids and sizes only tool output shows, and the tests a
// runner reported on, which fill what room the budget leaves, and last
// the spare candidates: error lines
// past an output's first few or repeating another, and the other names
// of a file the agent read, a listing or a build log, kept only where
// every identifier of the span fits (see spareFits).
func (c *collector) rank() []cand {
	n := len(c.si.entries)
	var first, written, rest, detail, spare []cand
	for _, d := range c.cands {
		d.score = score(&d, n)
		switch {
		case d.spare:
			spare = append(spare, d)
		case d.kind == kPath && !talked(&d) && (runtimeSite(d.text) || d.marks&(markLib|markTrace) == markLib):
			// A file of a language's runtime or of a dependency, as a
			// stack frame shows it: how a failure travelled, not where
			// the project failed.
			rest = append(rest, d)
		case isSite(&d) && !talked(&d):
			// A file:line site only output shows: where a failure
			// happened (an error line's, a stack frame's) is failure
			// evidence, in the first tier; a line a passing output or
			// a read locates comes after all that output shows.
			if d.marks&markTrace != 0 {
				first = append(first, d)
			} else {
				d.passing = true
				detail = append(detail, d)
			}
		case !talked(&d) && d.kind != kError && d.kind != kCommand &&
			d.marks&(markTrace|markFailure) == 0 && !(d.marks&markDecl != 0 && d.src&srcCode != 0):
			switch {
			case d.kind != kSymbol && d.src&srcCode != 0 && d.src&srcOutput == 0:
				// Only code the agent wrote shows it: what it
				// changed, before what it only read.
				written = append(written, d)
			case d.kind != kSymbol:
				rest = append(rest, d)
			case d.marks&markResult != 0:
				// A test a run says passed: after what output
				// shows, before the names a read printed.
				d.passing = true
				detail = append(detail, d)
			default:
				d.spare = true
				spare = append(spare, d)
			}
		default:
			first = append(first, d)
		}
	}
	for _, tier := range [][]cand{rest, detail, spare} {
		for i := range tier {
			tier[i].later = true
		}
	}
	sortCands(first)
	sortCands(written)
	sortCands(rest)
	sortCands(detail)
	first, alike := collapseAlike(first)
	spare = append(alike, spare...)
	sortCands(spare)
	// What failed and where comes first: error lines and what they name.
	var failed, named, reads []cand
	for _, d := range first {
		switch {
		case failedFirst(&d):
			failed = append(failed, d)
		case onlyRead(&d):
			reads = append(reads, d)
		default:
			named = append(named, d)
		}
	}
	out := append(byKindTurns(failed), byKindTurns(named)...)
	out = append(out, byKindTurns(written)...)
	out = append(out, byKindTurns(reads)...)
	out = append(out, rest...)
	out = append(out, detail...)
	return append(out, spare...)
}

// failedFirst reports whether a first-tier candidate is failure evidence
// the conversation does not name: an error line of a tool's output, or
// an identifier an error line names.
func failedFirst(d *cand) bool {
	return !talked(d) && d.src&srcOutput != 0 && (d.kind == kError || d.marks&markErrLine != 0)
}

// onlyRead reports whether a first-tier candidate is there only as a
// tool call that reads names it: a read's command or path, which no
// person or model text says and no failure shows.
func onlyRead(d *cand) bool {
	return d.src&(srcUser|srcAssistant|srcThinking) == 0 && d.marks&markRead != 0 &&
		d.marks&(markWritten|markTrace|markErrLine|markFailure) == 0
}

// isSite reports whether a candidate is a file:line site.
func isSite(d *cand) bool {
	return d.kind == kPath && lineSuffix(d.text) > 0
}

// collapseAlike sets apart the error lines that repeat a better ranked
// one but for their numbers and hex digits ("FAIL line 7 of output 3fa9"
// repeated).
//
// Lines that differ only in any of their numbers (one compiler message
// at eight line:column places) give way too, but only past the first
// two of a shape: the sites they name are identifiers of their own,
// ranked with the failure evidence.
func collapseAlike(cs []cand) (kept, alike []cand) {
	seen := map[string]bool{}
	loose := map[string]int{}
	for _, d := range cs {
		if d.kind == kError {
			sh := shape(d.key)
			ls := looseShape(sh)
			if seen[sh] || loose[ls] >= maxLooseAlike {
				d.spare = true
				alike = append(alike, d)
				continue
			}
			seen[sh] = true
			loose[ls]++
		}
		kept = append(kept, d)
	}
	return kept, alike
}

// maxLooseAlike is how many error lines of one loose shape (see
// looseShape) rank with the failure evidence.
const maxLooseAlike = 2

// looseShape is a shape with every number that stands alone (a line, a
// column, a count: no letter or underscore touching it) replaced by '#';
// the digits of a name (store196, db_2.go) stay.
func looseShape(sh string) string {
	b := make([]byte, 0, len(sh))
	for i := 0; i < len(sh); {
		if !isDigit(sh[i]) || i > 0 && isWordByte(sh[i-1]) {
			b = append(b, sh[i])
			i++
			continue
		}
		j := i
		for j < len(sh) && isDigit(sh[j]) {
			j++
		}
		if j < len(sh) && isWordByte(sh[j]) {
			b = append(b, sh[i:j]...)
		} else {
			b = append(b, '#')
		}
		i = j
	}
	return string(b)
}

// shape is a key with its opaque tokens replaced by '#': words of hex
// digits that hold a digit and a letter (hashes, output ids), UUIDs,
// runs of six digits or more (timestamps, request ids), IPv4 addresses
// (with their port) and prefixed object ids (req_7hk2mq9x). Small numbers
// (line numbers, counts, values) are kept: lines that differ in them
// say different things.
func shape(key string) string {
	b := make([]byte, 0, len(key))
	for i := 0; i < len(key); {
		if i == 0 || !isWordByte(key[i-1]) && key[i-1] != '.' {
			n := ipv4Len(key[i:])
			if n == 0 {
				n = clockLen(key[i:])
			}
			if n == 0 && len(key)-i >= 36 && isUUID(key[i:i+36]) && (len(key)-i == 36 || !isWordByte(key[i+36])) {
				n = 36
			}
			if n > 0 {
				b = append(b, '#')
				i += n
				continue
			}
		}
		if !isWordByte(key[i]) {
			b = append(b, key[i])
			i++
			continue
		}
		j := i
		for j < len(key) && isWordByte(key[j]) {
			j++
		}
		w := key[i:j]
		hex, digits, letters := true, 0, 0
		for k := 0; k < len(w); k++ {
			switch c := w[k]; {
			case isDigit(c):
				digits++
			case c >= 'a' && c <= 'f':
				letters++
			default:
				hex = false
			}
		}
		if hex && (digits > 0 && letters > 0 && len(w) >= 4 || letters == 0 && digits >= 6) || isPrefixedID(w) {
			b = append(b, '#')
		} else {
			b = append(b, w...)
		}
		i = j
	}
	return string(b)
}

// clockLen returns the length of the time of day (10:42:07, with its
// fraction) or the date (2024-05-12, with its time: 2024-05-12T10:42:07)
// that opens s, or 0: a log line's timestamp.
func clockLen(s string) int {
	two := func(i int) bool { return i+1 < len(s) && isDigit(s[i]) && isDigit(s[i+1]) }
	switch {
	case len(s) >= 8 && two(0) && s[2] == ':' && two(3) && s[5] == ':' && two(6):
		i := 8
		if i+1 < len(s) && (s[i] == '.' || s[i] == ',') && isDigit(s[i+1]) {
			i++
			for i < len(s) && isDigit(s[i]) {
				i++
			}
		}
		return i
	case len(s) >= 10 && two(0) && two(2) && s[4] == '-' && two(5) && s[7] == '-' && two(8):
		if len(s) > 10 && (s[10] == 't' || s[10] == 'T' || s[10] == ' ') {
			if n := clockLen(s[11:]); n > 0 {
				return 11 + n // 2024-05-12t10:42:07
			}
		}
		return 10
	}
	return 0
}

// ipv4Len returns the length of the IPv4 address (and its :port) that
// opens s, or 0.
func ipv4Len(s string) int {
	i, parts := 0, 0
	for parts < 4 {
		j := i
		for j < len(s) && j-i < 4 && isDigit(s[j]) {
			j++
		}
		if j == i || j-i > 3 {
			return 0
		}
		parts++
		i = j
		if parts < 4 {
			if i >= len(s) || s[i] != '.' {
				return 0
			}
			i++
		}
	}
	if i < len(s) && (isWordByte(s[i]) || s[i] == '.' && i+1 < len(s) && isDigit(s[i+1])) {
		return 0
	}
	if i+1 < len(s) && s[i] == ':' && isDigit(s[i+1]) {
		i++
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	return i
}

// byKindTurns orders ranked candidates in turns: in each turn, every kind
// that has candidates left gives its best, the kinds in the order of
// their best score.
func byKindTurns(cs []cand) []cand {
	var by [kID + 1][]cand
	for _, d := range cs {
		by[d.kind] = append(by[d.kind], d)
	}
	out := make([]cand, 0, len(cs))
	for len(out) < len(cs) {
		var turn []cand
		for k := range by {
			if len(by[k]) > 0 {
				turn = append(turn, by[k][0])
				by[k] = by[k][1:]
			}
		}
		sortCands(turn)
		out = append(out, turn...)
	}
	return out
}

// talked reports whether the conversation itself names an identifier:
// the user, the assistant, or a tool call's command, path, URL or pattern.
func talked(d *cand) bool {
	return d.src&(srcUser|srcAssistant|srcThinking|srcArg) != 0
}

func score(d *cand, n int) float64 {
	f := 1 + 0.5*math.Log(float64(min(d.n, 64)))
	s := kindWeight[d.kind] * f
	if d.src&srcUser != 0 {
		s += 4
	}
	if d.src&srcArg != 0 {
		s += 2.5
	}
	if d.src&srcAssistant != 0 {
		s += 2
	}
	if d.src&srcThinking != 0 {
		s += 0.5
	}
	failure := d.marks&markTrace != 0 || d.kind == kError && d.src&srcOutput != 0
	if !talked(d) && d.kind != kError && d.kind != kCommand && !failure {
		s *= 0.7
	}
	switch {
	case failure:
		s += 3
	case d.marks&markFailure != 0:
		s += 1.5
	case d.marks&markWritten != 0:
		s += 1.5
	case d.marks&markRead != 0 && d.kind != kCommand && d.src&(srcUser|srcAssistant) == 0:
		s -= 2.5
	}
	if n > 0 {
		s += 2 * float64(d.last+1) / float64(n)
	}
	return s
}

func sortCands(cs []cand) {
	sort.Slice(cs, func(i, j int) bool {
		a, b := &cs[i], &cs[j]
		if a.score != b.score {
			return a.score > b.score
		}
		if a.first != b.first {
			return a.first < b.first
		}
		return a.key < b.key
	})
}

// superseder decides which identifiers of an earlier checkpoint a new
// span supersedes.
type superseder struct {
	gone     []string          // paths deleted or renamed away (normalized)
	assigned map[string]string // key=value settings of the span: key -> value
	checks   []check           // successful test and build runs
	fixed    string            // the assistant's statements of fixes, lower-cased
}

// check is a successful test or build run.
type check struct {
	all    bool     // it covers everything (no path, or ./...)
	scopes []string // the paths it names
	text   string   // its command and the head of its output, lower-cased
}

func newSuperseder(si *spanInfo, c *collector) *superseder {
	s := &superseder{assigned: map[string]string{}}
	for _, a := range si.actions {
		for _, g := range a.gone {
			if g = normPath(g); g != "" {
				s.gone = append(s.gone, g)
			}
		}
		if a.outcome == outPassed {
			scopes, all := checkScopes(a.command)
			out := si.entries[a.result].Text
			if len(out) > 4096 {
				out = out[:4096]
			}
			s.checks = append(s.checks, check{all: all, scopes: scopes, text: strings.ToLower(a.command + "\n" + out)})
		}
	}
	for _, d := range c.cands {
		if d.kind != kID && d.kind != kNumber {
			continue
		}
		if k, v, ok := strings.Cut(d.key, "="); ok && k != "" {
			s.assigned[strings.TrimLeft(k, "-")] = v
		}
	}
	var fixed strings.Builder
	for i, e := range si.entries {
		if si.skip[i] || e.Role != "assistant" || e.Kind != "text" {
			continue
		}
		for _, snt := range sentences(e.Text, 64<<10) {
			l := strings.ToLower(snt)
			if containsAny(l, "fixed", "resolved", "now pass", "passing", "pass now", "works now", "no longer") {
				fixed.WriteString(l)
				fixed.WriteByte('\n')
			}
		}
	}
	s.fixed = fixed.String()
	return s
}

// superseded reports whether an earlier identifier no longer holds: a
// path the span deleted or renamed away (or one under such a directory);
// a key=value setting the span sets to another value; an error whose
// subject (the first file or name it mentions) a successful test or build
// run of the span covers, or that the assistant says it fixed.
func (s *superseder) superseded(k kind, text, key string) bool {
	switch k {
	case kPath:
		p := normPath(text)
		for _, g := range s.gone {
			if p == g || strings.HasPrefix(p, g+"/") {
				return true
			}
		}
	case kError:
		subj, isPath := errorSubject(text)
		if subj == "" {
			return false
		}
		for _, ch := range s.checks {
			if ch.all || strings.Contains(ch.text, subj) {
				return true
			}
			if isPath {
				for _, sc := range ch.scopes {
					if subj == sc || strings.HasPrefix(subj, sc+"/") {
						return true
					}
				}
			}
		}
		return strings.Contains(s.fixed, subj)
	}
	if k == kID || k == kNumber {
		if kk, v, ok := strings.Cut(key, "="); ok {
			if nv, ok := s.assigned[strings.TrimLeft(kk, "-")]; ok && nv != v {
				return true
			}
		}
	}
	return false
}

// errorSubject returns the first path (normalized) or, failing that, the
// first code name an error line mentions, lower-cased.
type subjectSink struct {
	path, sym string
}

func (s *subjectSink) add(k kind, text string, _ mark) {
	switch {
	case k == kPath && s.path == "":
		s.path = normPath(text)
	case k == kSymbol && s.sym == "":
		s.sym = strings.ToLower(text)
	}
}

func errorSubject(text string) (string, bool) {
	var s subjectSink
	scanTokens(text, &s, true)
	if s.path != "" {
		return s.path, true
	}
	if s.sym == "" {
		scanTokens(text, &s, false)
	}
	return s.sym, false
}

// ledger ranks the span's identifiers and appends the earlier
// checkpoint's that the span neither repeats nor supersedes, in their
// earlier order by kind weight: older entries go last.
func ledger(si *spanInfo, c *collector, prev []Identifier) []cand {
	ranked := c.rank()
	if len(prev) == 0 {
		return ranked
	}
	var spare []cand
	for i := range ranked {
		if ranked[i].spare {
			ranked, spare = ranked[:i:i], ranked[i:]
			break
		}
	}
	sup := newSuperseder(si, c)
	var older []cand
	seen := map[string]bool{}
	pos := map[string]int{}
	for i, d := range ranked {
		pos[d.key] = i
	}
	for _, id := range prev {
		k := kindOf(id.Kind)
		if k == kNone || strings.TrimSpace(id.Text) == "" {
			continue
		}
		key := keyOf(k, id.Text)
		if key == "" || seen[key] {
			continue
		}
		seen[key] = true
		if i, ok := pos[key]; ok {
			ranked[i].earlier = true
			continue
		}
		if sup.superseded(k, id.Text, key) {
			continue
		}
		older = append(older, cand{key: key, text: strings.TrimSpace(id.Text), kind: k, earlier: true, first: -1, last: -1})
	}
	sort.SliceStable(older, func(i, j int) bool { return kindWeight[older[i].kind] > kindWeight[older[j].kind] })
	out := append(ranked, older...)
	return append(out, spare...)
}

// passingShare is the share of the budget kept for what passing outputs
// show when not everything fits: the last passing state of each thing.
const passingShare = 0.05

// reservePassing moves ahead of the other output-only identifiers the passing outputs' identifiers
// (see cand.passing) seen last, one per thing (a test, a file: the
// latest line of a file), as many as limit tokens hold: ranked after
// everything else, they would otherwise all be lost when not everything
// fits. The others keep their order.
func reservePassing(cs []cand, limit int, tok strata.Tokenizer) []cand {
	var idx []int
	for i := range cs {
		if cs[i].passing && cs[i].first >= 0 {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return cs
	}
	// The latest first; of one output, what it printed last (the
	// rank's ties go to the first seen, so the later comes later).
	sort.SliceStable(idx, func(a, b int) bool {
		if x, y := cs[idx[a]].last, cs[idx[b]].last; x != y {
			return x > y
		}
		return idx[a] > idx[b]
	})
	picked := make([]bool, len(cs))
	things := map[string]bool{}
	var front []cand
	used := 0
	for _, i := range idx {
		thing := cs[i].key
		if j := lineSuffix(thing); j > 0 {
			thing = thing[:j] // one site per file: its latest
		}
		if things[thing] {
			continue
		}
		cost := tok.Count(cs[i].text) + 1
		if used+cost > limit {
			continue
		}
		used += cost
		things[thing] = true
		picked[i] = true
		front = append(front, cs[i])
	}
	// After the first tier (what the conversation names, failure
	// evidence), before what only other output shows.
	out := make([]cand, 0, len(cs))
	placed := false
	for i := range cs {
		if !placed && (cs[i].later || cs[i].first < 0) {
			out = append(out, front...)
			placed = true
		}
		if !picked[i] {
			out = append(out, cs[i])
		}
	}
	if !placed {
		out = append(out, front...)
	}
	return out
}

// errorLineShare is the share of the budget whole error lines may take
// ahead of the other failure evidence when not everything fits: the
// identifiers on the lines past it (codes, sites, ids, URLs, ports) are
// candidates of their own and cost a fraction of their line, so a few
// long lines do not crowd out the identifiers of all the others. (A
// quarter, with failure evidence ahead of the names the conversation
// says, cost evidgen's long session 31 of the user's identifiers.)
const errorLineShare = 0.15

// weakFailure reports whether a first-tier candidate is there only for
// being named on a line that reports a failure in other words.
func weakFailure(d *cand) bool {
	return d.marks&markFailure != 0 && d.marks&markTrace == 0 && !talked(d) && d.kind != kError &&
		d.kind != kCommand && !(d.marks&markDecl != 0 && d.src&srcCode != 0)
}

// capErrorLines moves the error lines of the first tier that do not fit
// in limit tokens, once the better ranked ones have taken it, to the head
// of the later tiers, in their order. An error line longer than a
// quarter of limit is moved too: the identifiers on it are listed on
// their own. So are the identifiers of weak failure evidence (see
// weakFailure): after what the conversation names and what error lines
// and stack frames name, before what other output shows. The others
// keep their order.
func capErrorLines(cs []cand, limit int, tok strata.Tokenizer) []cand {
	out := make([]cand, 0, len(cs))
	var moved []cand
	used := 0
	placed := false
	for _, d := range cs {
		if !placed && (d.later || d.first < 0) {
			out = append(out, moved...)
			placed = true
		}
		switch {
		case placed:
		case d.kind == kError:
			cost := tok.Count(d.text) + 1
			if cost > limit/4 || used+cost > limit {
				moved = append(moved, d)
				continue
			}
			used += cost
		case weakFailure(&d):
			moved = append(moved, d)
			continue
		}
		out = append(out, d)
	}
	if !placed {
		out = append(out, moved...)
	}
	return out
}

// withoutSpare drops the spare candidates, or only the spare names (not
// the error lines) when keepErrors is set.
func withoutSpare(cs []cand, keepErrors bool) []cand {
	out := make([]cand, 0, len(cs))
	for _, d := range cs {
		if !d.spare || keepErrors && d.kind == kError {
			out = append(out, d)
		}
	}
	return out
}

// spareFits reports whether listing every identifier of the span, once
// each, takes at most limit tokens: then the checkpoint lists them all,
// spare ones included.
func spareFits(cs []cand, limit int, tok strata.Tokenizer) bool {
	n := 0
	for i := range cs {
		if cs[i].first < 0 {
			continue
		}
		n += tok.Count(cs[i].text) + 1
		if n > limit {
			return false
		}
	}
	return true
}

// Ledger returns the identifier ledger of a span, best ranked first,
// before any budget: the span's identifiers, deduplicated and ranked, then
// those of the previous checkpoint ("" if none) that the span neither
// repeats nor supersedes. See the package documentation for the kinds,
// the ranking and the superseding rules.
func Ledger(span []Entry, previous string) []Identifier {
	si := analyze(span)
	if strings.TrimSpace(previous) == "" {
		previous = si.earlier
	}
	c := collect(si)
	_, prev := readPrevious(previous)
	cs := withoutSpare(ledger(si, c, prev), false)
	out := make([]Identifier, len(cs))
	for i, d := range cs {
		out[i] = Identifier{Kind: kindNames[d.kind], Text: d.text}
	}
	return out
}

// readPrevious reads a previous checkpoint: its sections, and its
// identifiers, which are those of its Critical Context lines and those
// the scanner finds in its other sections (a checkpoint does not list
// again what its prose quotes). A text that is not a checkpoint gives
// one note, "Earlier summary: ..." (cut to 600 bytes), and the
// identifiers the scanner finds in it.
func readPrevious(previous string) (Sections, []Identifier) {
	previous = strings.TrimSpace(previous)
	if previous == "" {
		return Sections{}, nil
	}
	sec, info := parse(previous)
	if info.headings == 0 {
		return Sections{Notes: []string{"Earlier summary: " + cutWords(previous, 600)}}, scanIdentifiers(previous)
	}
	ids := append([]Identifier(nil), sec.Ledger...)
	prose := sec
	prose.Ledger = nil
	ids = append(ids, scanIdentifiers(prose.Format())...)
	return sec, ids
}

// scanIdentifiers returns the identifiers of free text, ranked.
func scanIdentifiers(text string) []Identifier {
	si := &spanInfo{entries: []Entry{{Role: "assistant", Kind: "text", Text: text}}}
	c := newCollector(si)
	c.src = srcAssistant
	scanBounded(text, func(s string) { scanProse(s, c) })
	cs := withoutSpare(c.rank(), false)
	out := make([]Identifier, len(cs))
	for i, d := range cs {
		out[i] = Identifier{Kind: kindNames[d.kind], Text: d.text}
	}
	return out
}
