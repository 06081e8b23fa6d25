package checkpoint

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// kind is an identifier kind, as the scanner handles it.
type kind uint8

const (
	kNone kind = iota
	kPath
	kCommand
	kURL
	kNumber
	kError
	kSymbol
	kID
)

var kindNames = [...]string{"", KindPath, KindCommand, KindURL, KindNumber, KindError, KindSymbol, KindID}

func kindOf(name string) kind {
	for k, n := range kindNames {
		if k > 0 && n == name {
			return kind(k)
		}
	}
	return kNone
}

// Length caps: an error or command line is cut at a word boundary; longer
// identifiers of the other kinds are not identifiers (blobs, minified code).
const (
	maxLineIdent = 200 // error messages and commands
	maxIdent     = 300 // paths, URLs, symbols, ids, numbers
)

// mark says how an identifier was found in code or output.
type mark uint8

const (
	markDecl    mark = 1 << iota // declared: func Name, def name, class Name
	markTrace                    // on an error line or a stack frame
	markWritten                  // a path a tool call writes, edits or deletes
	markRead                     // a path or command that only reads
	markResult                   // a test a runner reports on (--- PASS: TestX)
	markFailure                  // on another line of output that reports a failure
	markErrLine                  // on an error line (a JSON error object, a failed response's headers), or a frame's site
	markLib                      // a frame's site or function in a language's runtime or a dependency
)

// sink receives what the scanner finds.
type sink interface {
	add(k kind, text string, m mark)
}

// marked adds a mark to everything it passes on.
type marked struct {
	out sink
	m   mark
}

func (w marked) add(k kind, text string, m mark) { w.out.add(k, text, m|w.m) }

// scanProse scans text written by a person or a model (user, assistant and
// thinking text, tool call patterns): white-space separated tokens, inline
// `code` spans, shell lines opened by "$ ", and fenced blocks, which are
// scanned as code.
func scanProse(s string, out sink) {
	inFence, shellFence := false, false
	for len(s) > 0 {
		line := s
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			line, s = s[:i], s[i+1:]
		} else {
			s = ""
		}
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			if !inFence {
				lang := strings.ToLower(strings.TrimSpace(strings.Trim(t, "`~")))
				shellFence = lang == "sh" || lang == "bash" || lang == "shell" || lang == "console" || lang == "zsh"
			}
			inFence = !inFence
			continue
		}
		if inFence {
			if shellFence {
				c := strings.TrimPrefix(t, "$ ")
				if isCommand(c) {
					out.add(kCommand, cutLine(c), 0)
				}
			}
			scanCodeLine(line, out)
			continue
		}
		scanProseLine(t, out)
	}
}

// scanProseLine scans one line of prose.
func scanProseLine(t string, out sink) {
	if t == "" {
		return
	}
	if msg := errorText(t, true); msg != "" {
		out.add(kError, msg, 0)
	}
	if c, ok := strings.CutPrefix(t, "$ "); ok && isCommand(c) {
		out.add(kCommand, cutLine(c), 0)
	}
	// Inline code spans first; the rest is scanned token by token.
	for {
		i := strings.IndexByte(t, '`')
		if i < 0 {
			break
		}
		j := strings.IndexByte(t[i+1:], '`')
		if j < 0 {
			break
		}
		scanTokens(t[:i], out, false)
		scanSpan(t[i+1:i+1+j], out)
		t = t[i+1+j+1:]
	}
	scanTokens(t, out, false)
}

// scanSpan classifies the content of an inline code span: a command, an
// error, or a single identifier (any name counts there), else its tokens.
func scanSpan(c string, out sink) {
	c = strings.TrimSpace(c)
	if c == "" {
		return
	}
	if strings.IndexByte(c, ' ') > 0 {
		if isCommand(c) {
			out.add(kCommand, cutLine(c), 0)
			scanTokens(c, out, false)
			return
		}
		if msg := errorText(c, false); msg != "" {
			out.add(kError, msg, 0)
		}
		scanTokens(c, out, false)
		return
	}
	if k, text := classify(trimToken(c), false, true); k != kNone {
		out.add(k, text, 0)
	}
}

// scanTokens scans white-space separated tokens: of prose, where a bare
// number followed by a unit word ("512 MB", "30 seconds") is one number
// and "port 8080" an id; or of code and output (code), where tokens are
// split further at code punctuation and only sizes count as numbers.
func scanTokens(s string, out sink, code bool) {
	var prev string
	for len(s) > 0 {
		i := 0
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		s = s[i:]
		if s == "" {
			return
		}
		j := 0
		for j < len(s) && !isSpace(s[j]) {
			j++
		}
		raw, rest := s[:j], s[j:]
		s = rest
		if len(raw) > 2*maxIdent {
			prev = ""
			continue
		}
		if k := strings.Index(raw, "://"); k > 0 {
			scanURLToken(raw, k, out, code)
			prev = ""
			continue
		}
		t := trimToken(raw)
		if t == "" {
			prev = ""
			continue
		}
		if i := strings.IndexByte(t, ':'); i > 1 && i+2 < len(t) && allLetters(t[:i]) {
			// A name glued to an id by a colon:
			// "ClientConnectionId:589bedd2-...", "commit:9f3c2ab".
			if k, text := classify(t[i+1:], false, false); k == kID {
				out.add(k, text, 0)
				prev = ""
				continue
			}
		}
		if code {
			if isBareNumber(t) && strings.HasSuffix(raw, t) {
				if n := unitAfter(rest, sizeWords); n > 0 {
					out.add(kNumber, t+rest[:n], 0)
					prev = ""
					continue
				}
			}
			if strings.EqualFold(prev, "port") && allDigits(t) && len(t) >= 2 && len(t) <= 5 {
				out.add(kID, t, 0) // listening on port 8080
				prev = ""
				continue
			}
			scanCodeToken(t, out)
			prev = t
			continue
		}
		k, text := classify(t, false, false)
		if k != kNone {
			out.add(k, text, 0)
			prev = ""
			continue
		}
		if isBareNumber(t) {
			if strings.EqualFold(prev, "port") && allDigits(t) && len(t) >= 2 && len(t) <= 5 {
				out.add(kID, t, 0)
			} else if n := unitAfter(rest, unitWords); n > 0 && strings.HasSuffix(raw, t) {
				// The number, its separator and its unit, as written.
				out.add(kNumber, t+rest[:n], 0)
			}
		}
		prev = t
	}
}

// scanURLToken adds the URL that starts before raw[k:] (at its scheme)
// and scans what precedes it.
func scanURLToken(raw string, k int, out sink, code bool) {
	// The scheme: a letter, then letters, digits or "+" (s3://,
	// git+ssh://).
	a := k
	for a > 0 && (isLetter(raw[a-1]) || isDigit(raw[a-1]) || raw[a-1] == '+') {
		a--
	}
	for a < k && !isLetter(raw[a]) {
		a++
	}
	if a == k {
		return
	}
	if a > 0 {
		if t := trimToken(raw[:a]); t != "" {
			if code {
				scanCodeToken(t, out)
			} else if kk, text := classify(t, false, false); kk != kNone {
				out.add(kk, text, 0)
			}
		}
	}
	u := urlEnd(raw[a:])
	if len(u) > len(raw[a:k])+3 && len(u) <= maxIdent {
		out.add(kURL, u, 0)
	}
	// What follows the URL in the same token (the other fields of a
	// JSON object, a second URL) is scanned too.
	if rest := raw[a+len(u):]; len(rest) > 1 {
		scanTokens(rest, out, code)
	}
}

// urlEnd cuts a URL at the first character that cannot be part of it as
// written in text: quotes, brackets it did not open, and trailing
// sentence punctuation.
func urlEnd(s string) string {
	depth, sq := 0, 0
	i := 0
loop:
	for i < len(s) {
		switch s[i] {
		case '"', '\'', '<', '>', '`', '|', '{', '}', '\\':
			break loop
		case '(':
			depth++
		case ')':
			if depth == 0 {
				break loop
			}
			depth--
		case '[':
			sq++
		case ']':
			if sq == 0 {
				break loop
			}
			sq--
		}
		i++
	}
	u := s[:i]
	for len(u) > 0 && strings.IndexByte(".,;:!?*", u[len(u)-1]) >= 0 {
		u = u[:len(u)-1]
	}
	return u
}

// scanCodeToken splits a code token at the characters that cannot be
// inside a path, URL, version or dotted name, and classifies the parts.
func scanCodeToken(t string, out sink) {
	if i := strings.IndexByte(t, '='); i > 0 && isEnvKey(t[:i]) && i+1 < len(t) {
		out.add(kID, trimRightPunct(t), 0)
		return
	}
	start := 0
	for i := 0; i <= len(t); i++ {
		if i < len(t) && !isCodeDelim(t[i]) {
			continue
		}
		if i > start {
			p := trimToken(t[start:i])
			switch {
			case p == "":
			case i < len(t) && t[i] == '(':
				// A call: res.json(, os.Exit(, parseAmount(; or a
				// profiler's site: query.py:111(sort_results).
				if site := lineSite(p); site != "" {
					out.add(kPath, site, 0)
				} else if s, ok := callee(p); ok {
					out.add(kSymbol, s, 0)
				}
			case hashParts(p, out):
				// a..b of git, image@sha256:digest
			default:
				if k, text := classify(p, true, false); k != kNone {
					out.add(k, text, 0)
					// A file:line site (grep -n, a traceback, a
					// compiler) is also listed with its line.
					if site := lineSite(p); k == kPath && site != "" {
						out.add(kPath, site, 0)
					}
				}
			}
		}
		start = i + 1
	}
}

// lineSite returns the file:line site a token names (checkout_test.go:77:,
// src/a.ts:3:14, with its column when it has one), or "".
func lineSite(t string) string {
	t = strings.TrimRight(strings.TrimLeft(t, "()[]<>\"',;:"), "()[]<>\"',;:.")
	i := lineSuffix(t)
	if i <= 0 || !hasKnownExt(t[:i]) {
		return ""
	}
	if _, ok := pathOf(t[:i]); !ok {
		return ""
	}
	return t[:siteEnd(t, i)]
}

// siteEnd returns where the site that has its ":line" at i ends: after
// the line, and after the column when there is one (a.ts:49:39 says
// a.ts:49 too).
func siteEnd(t string, i int) int {
	j := i + 1
	for j < len(t) && isDigit(t[j]) {
		j++
	}
	if j+1 < len(t) && t[j] == ':' && isDigit(t[j+1]) {
		j++
		for j < len(t) && isDigit(t[j]) {
			j++
		}
	}
	return j
}

// hashParts adds the hashes of a token that joins them to something
// else: git's a1b2c3d..e4f5a6b (a diff's index line, a log range) and an
// image or module digest (name@sha256:<hex>). It reports whether it
// added any.
func hashParts(t string, out sink) bool {
	if a, b, ok := strings.Cut(t, ".."); ok {
		b = strings.TrimPrefix(b, ".")
		// Both abbreviated alike; one may happen to have no letter.
		if len(a) == len(b) && (isHash(a) || isHash(b)) && isHash(a+"a1") && isHash(b+"a1") {
			out.add(kID, a, 0)
			out.add(kID, b, 0)
			return true
		}
		return false
	}
	if i := strings.Index(t, "@sha256:"); i > 0 && isHash(t[i+8:]) {
		if k, text := classify(t[:i], true, false); k != kNone {
			out.add(k, text, 0)
		}
		out.add(kID, t[i+8:], 0)
		return true
	}
	return false
}

// callee reports whether the name before a call's parenthesis is worth
// listing: a code-shaped name, or a dotted one.
func callee(p string) (string, bool) {
	if strings.IndexByte(p, '.') > 0 && !strings.ContainsAny(p, "/\\:") {
		segs := strings.Split(p, ".")
		for _, s := range segs {
			if s == "" || !(isLetter(s[0]) || s[0] == '_' || s[0] == '$') {
				return "", false
			}
			for j := 0; j < len(s); j++ {
				if c := s[j]; !(isLetter(c) || isDigit(c) || c == '_' || c == '$') {
					return "", false
				}
			}
		}
		return p, len(p) <= 120
	}
	return symbolOf(p, true, false)
}

func isCodeDelim(c byte) bool {
	switch c {
	case '"', '\'', '`', ',', ';', '(', ')', '{', '}', '[', ']', '<', '>', '|', '=', '&', '!', '?', '+':
		return true
	}
	return false
}

// scanCode scans tool output and code: error lines, declarations, stack
// frames, then tokens. Numbers count only with a size or percent unit
// there (timings are noise in test output).
func scanCode(s string, out sink) { scanOutput(s, out, nil) }

// lineMode says how an output's lines are read: modeTestLogs, its
// "x_test.go:12: message" lines are a passing go test run's logs, not
// errors; modeFailing, the output failed (its result is an error, or
// it says so: see failureLine), so a line that reports a failure in
// words is an error line whatever its format.
type lineMode uint8

const (
	modeTestLogs lineMode = 1 << iota
	modeFailing
	modeBlock // the line follows an error line with no blank line between (see blockReach)
)

// blockReach is how many lines after an error line, up to a blank line,
// are read as part of its report (the frames, causes and details a
// runner prints under it, in whatever format): what they name is
// failure evidence, as a stack frame's names are.
const blockReach = 12

// scanOutput is scanCode for a tool's output. A failed output (failed,
// asked only when it matters, says so; nil: not failed) in which no line
// is an error line by the rules gets its lines that report a failure in
// words (at most maxWordedErrors) read again as error lines, in
// modeFailing.
func scanOutput(s string, out sink, failed func() bool) {
	var logs lineMode
	if goTestPassed(s) {
		logs = modeTestLogs
		failed = nil
	}
	sawErr, block := false, 0
	var worded []string
	starter, _ := out.(lineStarter)
	defer func() {
		if sawErr || len(worded) == 0 || failed == nil || !failed() {
			return
		}
		for _, l := range worded {
			if starter != nil {
				starter.startLine()
			}
			scanOutputLine(l, out, modeFailing)
		}
	}()
	failedResponse, traceback, panicked := false, false, false
	// compileErr: the last compiler diagnostic was an error (not a
	// warning); pytestE: the last line that was not empty was one of
	// pytest's "E   " lines.
	compileErr, pytestE := false, false
	// sinceErr counts the lines that were not empty since the last error
	// line (large when there was none).
	sinceErr := assertReach + 1
	for len(s) > 0 {
		line := s
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			line, s = s[:i], s[i+1:]
		} else {
			s = ""
		}
		if starter != nil {
			starter.startLine()
		}
		t := strings.TrimSpace(line)
		if prefix, rest := pastLogPrefix(t, out); prefix != "" {
			// What the rest of this reads is the line the program
			// printed. A time in the prefix opens a record of its own,
			// which ends an error line's block (the lines under it are
			// its report; the next record is not).
			if stamped(prefix) {
				block = 0
			}
			line = rest
			t = strings.TrimSpace(line)
		}
		if n := boxBorder(t); n > 0 {
			// A diagnostic drawn in a box (Terraform's "│ Error: ..."):
			// the line is what the box holds.
			line = t[n:]
			t = strings.TrimSpace(line)
		}
		indented := line != "" && (line[0] == ' ' || line[0] == '\t')
		afterE := pytestE
		if t != "" {
			pytestE = pytestLine(t)
		}
		if t != "" {
			sinceErr++
		}
		switch {
		case strings.HasPrefix(t, "error[") || strings.HasPrefix(t, "error:"):
			compileErr = true
		case strings.HasPrefix(t, "warning[") || strings.HasPrefix(t, "warning:"):
			compileErr = false
		case compilerStyle(t):
			compileErr = true // gcc's and clang's "a.cc:3:5: error: ..."
		case diagnostic(t, "warning"):
			compileErr = false
		}
		switch {
		case compileErr && strings.HasPrefix(t, "--> "),
			compileErr && diagnostic(t, "note"),
			afterE && crashSite(t),
			pytestE,
			sinceErr <= assertReach && assertDetail(t):
			// Where rustc places an error (not a warning): "--> src/a.rs:79:20";
			// gcc's and clang's notes under an error ("money.h:108:37:
			// note: candidate: ..."); the site pytest gives after its
			// "E   " lines ("etl/load.py:49: UniqueViolation"); what an
			// "E   " line says, part of the failure whatever its shape
			// (E   DETAIL:  Key (id)=(9bfc...) already exists.); and the
			// values a failed assertion compares (left:, Expected:).
			if scanOutputLine(line, marked{out, markTrace | markErrLine}, logs)&lineErr != 0 {
				sinceErr = 0
			}
			sawErr, block = true, blockReach
			continue
		}
		switch {
		case t == "Traceback (most recent call last):":
			traceback = true
		case strings.HasPrefix(t, "thread '") && strings.Contains(t, "' panicked at ") && strings.HasSuffix(t, ":"):
			// Rust prints a panic's message on the next line.
			panicked = true
		case panicked && t != "", traceback && t != "" && !indented:
			// The panic's message, or the line that closes a Python
			// traceback: the exception and what it says
			// ("decimal.InvalidOperation: ... row 4471"), whatever the
			// exception's name.
			panicked, traceback = false, false
			if errorText(t, false) == "" {
				out.add(kError, t, 0)
			}
			scanOutputLine(line, marked{out, markTrace | markErrLine}, logs)
			sinceErr, sawErr, block = 0, true, blockReach
			continue
		case serverError(t):
			failedResponse = true
		case t == "", t == "<":
			// The headers end: curl -v ends them with a bare "<".
			failedResponse = false
		case failedResponse:
			// A header of a response that failed (x-request-id,
			// location, a trace id): what that failure names.
			scanOutputLine(line, marked{out, markTrace | markErrLine}, logs)
			continue
		}
		mode := logs
		if block > 0 && t != "" {
			mode |= modeBlock
			block--
		}
		if t == "" {
			block = 0
		}
		if k := scanOutputLine(line, out, mode); k&lineErr != 0 {
			sinceErr, sawErr, block = 0, true, blockReach
		} else if k&lineWorded != 0 && !sawErr && len(worded) < maxWordedErrors && !strings.HasPrefix(t, "FAIL") &&
			!strings.HasPrefix(t, "Traceback ") {
			// (Not a runner's FAIL summary or a traceback's opening,
			// which the rules leave out as saying nothing more.)
			worded = append(worded, line)
		}
	}
}

// maxWordedErrors is how many lines that report a failure in words a
// failed output with no error line by the rules gets as its error lines.
const maxWordedErrors = 24

// blockMarked marks what a line under an error line names, but for
// symbols, as failure evidence.
type blockMarked struct{ out sink }

func (b blockMarked) add(k kind, text string, m mark) {
	if k != kSymbol {
		m |= markTrace
	}
	b.out.add(k, text, m)
}

// lineStarter is a sink that wants to know where each line of output
// starts (the digest's).
type lineStarter interface{ startLine() }

// assertReach is how many lines past an error line a failed assertion's
// values may come (ExUnit prints the test, its file, "Assertion with ==
// failed" and the code first).
const assertReach = 8

// assertLabels open the lines on which test runners print what a failed
// assertion compared: ExUnit's and Rust's left:/right:, Jest's
// Expected:/Received:, GoogleTest's "Which is:", and the common
// expected/actual and want/got.
var assertLabels = []string{"left:", "right:", "expected:", "received:", "actual:", "got:", "want:", "which is:"}

// assertDetail reports whether a line gives a value a failed assertion
// compared.
func assertDetail(t string) bool {
	if len(t) < 4 || !isLetter(t[0]) {
		return false
	}
	for _, l := range assertLabels {
		if len(t) >= len(l) && strings.EqualFold(t[:len(l)], l) {
			return true
		}
	}
	return false
}

// diagnostic reports whether a line is a compiler's diagnostic of the
// level given, at a file:line: "money.h:108:37: note: candidate: ...".
func diagnostic(t, level string) bool {
	loc, rest, ok := strings.Cut(t, ": ")
	if !ok || !strings.HasPrefix(rest, level) || !strings.HasPrefix(rest[len(level):], ":") {
		return false
	}
	i := lineSuffix(loc)
	return i > 0 && hasKnownExt(loc[:i]) && !strings.ContainsAny(loc, " \t")
}

// pytestLine reports whether a line is one of pytest's "E   " lines: what
// a failed assertion or a raised exception says.
func pytestLine(t string) bool {
	return strings.HasPrefix(t, "E   ") || strings.HasPrefix(t, "E\t")
}

// crashSite reports whether a line is pytest's site of a failure: a
// file:line and the name of what was raised, "etl/load.py:49: KeyError".
func crashSite(t string) bool {
	loc, name, ok := strings.Cut(t, ": ")
	i := lineSuffix(loc)
	if !ok || i <= 0 || !hasKnownExt(loc[:i]) || strings.ContainsAny(name, " \t") {
		return false
	}
	_, isName := symbolOf(name, true, true)
	return isName
}

// serverError reports whether a line is the status line of an HTTP
// response that failed on the server's side: "HTTP/1.1 503 Service
// Unavailable", "HTTP/2 500", curl -v's "< HTTP/1.1 502 Bad Gateway".
func serverError(t string) bool {
	t = strings.TrimPrefix(t, "< ") // curl -v marks what the server sent
	if !strings.HasPrefix(t, "HTTP/") {
		return false
	}
	_, st, ok := strings.Cut(t, " ")
	return ok && len(st) >= 3 && st[0] == '5' && isDigit(st[1]) && isDigit(st[2]) && (len(st) == 3 || st[3] == ' ')
}

// goTestPassed reports whether an output is a go test run whose tests
// all passed: some "--- PASS:" and no "--- FAIL:", FAIL or panic line.
// Its "x_test.go:12: message" lines are then the tests' logs, not
// failures.
func goTestPassed(s string) bool {
	if !strings.Contains(s, "--- PASS: ") || strings.Contains(s, "--- FAIL: ") || strings.Contains(s, "panic: ") {
		return false
	}
	return !strings.HasPrefix(s, "FAIL") && !strings.Contains(s, "\nFAIL")
}

// isTestLog reports whether a line is a Go test's log line:
// "x_test.go:12: message", without a column.
func isTestLog(t string) bool {
	i := strings.Index(t, "_test.go:")
	if i <= 0 || strings.ContainsAny(t[:i], " \t") {
		return false
	}
	j := i + len("_test.go:")
	k := j
	for k < len(t) && isDigit(t[k]) {
		k++
	}
	return k > j && strings.HasPrefix(t[k:], ": ")
}

// scanCodeLine scans one line of code or output. In a diff, the a/ and b/
// prefixes of file names are dropped; past a log collector's prefix (see
// logPrefix), the line is read as the program printed it.
func scanCodeLine(line string, out sink) {
	if prefix, rest := pastLogPrefix(strings.TrimSpace(line), out); prefix != "" {
		line = rest
	}
	scanOutputLine(line, out, 0)
}

// pastLogPrefix splits t, a trimmed line of at most maxOutputLine bytes,
// at the end of a log collector's prefix (see logPrefix), whose tokens (a
// host, a request id) it scans as plain output. It returns the prefix and
// the line the program printed, or "" and t.
func pastLogPrefix(t string, out sink) (prefix, rest string) {
	if len(t) > maxOutputLine {
		return "", t
	}
	n := logPrefix(t)
	if n == 0 {
		return "", t
	}
	scanTokens(t[:n], out, true)
	return t[:n], t[n:]
}

// maxOutputLine is the longest line of output scanned, in bytes.
const maxOutputLine = 4096

// lineKind is what scanOutputLine found a line to be.
type lineKind uint8

const (
	lineErr    lineKind = 1 << iota // an error line
	lineWorded                      // another line that reports a failure in words
)

// scanOutputLine is scanCodeLine for a line of output, past any log
// collector's prefix, read in a mode (see lineMode). It says whether the
// line is an error line or reports a failure in words.
func scanOutputLine(line string, out sink, mode lineMode) lineKind {
	testLogs := mode&modeTestLogs != 0
	t := strings.TrimSpace(line)
	if t == "" || len(t) > maxOutputLine {
		return 0
	}
	if strings.HasPrefix(t, "at ") && strings.HasSuffix(t, "]") {
		// Logback's packaging data after a JVM frame: "~[main/:na]",
		// "[spring-webmvc-6.1.14.jar!/:6.1.14]".
		if i := strings.LastIndex(t, ") "); i > 0 && (strings.HasPrefix(t[i+2:], "~[") || strings.HasPrefix(t[i+2:], "[")) {
			t = t[:i+1]
		}
	}
	if len(t) > 3 && t[0] == '#' && isDigit(t[1]) {
		if site, fn, ok := nativeFrame(t); ok {
			// A sanitizer's or gdb's frame names its function and site;
			// the rest (its number, its address, the types of its
			// parameters) is noise.
			m := markTrace
			if runtimeSite(site) || strings.HasPrefix(fn, "std::") || strings.HasPrefix(fn, "__") {
				m = markLib
			}
			if fn != "" {
				out.add(kSymbol, fn, m)
			}
			if site != "" {
				sm := markTrace | markErrLine // where it failed
				if m == markLib {
					sm = markLib
				}
				out.add(kPath, site, sm)
			}
			return 0
		}
	}
	msg := errorText(t, false)
	if msg == "" && (errorLevel(t) || namedException(t) || failureOpening(t)) {
		// A logger's record at error level, whatever its prefix, a
		// line that names an exception past its start, or one that
		// opens by saying something failed.
		msg = cutLine(t)
	}
	if testLogs && msg != "" && isTestLog(t) {
		msg = ""
	}
	if msg == "" && (mode&modeFailing != 0 || warnLevel(t)) && reportsFailure(t) {
		// A failed output's report in a format the rules do not know,
		// or a warning that something failed, in whatever logger's
		// format: what says it failed, in words, is its error line.
		msg = cutLine(t)
	}
	if msg == "" && (exceptionValue(t) || statusFailed(t)) {
		// A JSON body (one line, or a line of a pretty-printed one)
		// that names an error's type: an API's or a search engine's
		// error response, whatever its keys.
		msg = cutLine(t)
	}
	if msg != "" {
		out.add(kError, msg, 0)
		if c := causeTail(t); c != "" {
			out.add(kError, c, 0)
		}
		for _, f := range strings.Fields(t) {
			if c := bracketCode(f); c != "" {
				out.add(kID, c, markTrace|markErrLine)
			}
		}
	}
	if msg != "" || mode&modeBlock != 0 {
		// What an error message quotes is the value it failed on
		// (Elastic pool 'ep-stg-4kx9' ... is invalid), whatever its
		// shape.
		for _, f := range strings.Fields(t) {
			if v := quotedValue(f); v != "" {
				out.add(kID, v, markTrace|markErrLine)
			}
		}
	}
	if name := declared(t); name != "" {
		out.add(kSymbol, name, markDecl)
	}
	frame, site := frameSymbol(t), frameSite(t)
	if site == "" {
		site = dotnetSite(t)
	}
	if libraryFrame(t) || site != "" && runtimeSite(site) {
		// A frame in a language's runtime or a dependency: how a
		// failure travelled, not where the project's code failed. Its
		// site ranks with what output shows, its function only where
		// everything fits (see rank), and what else it names is plain
		// output.
		if frame != "" {
			out.add(kSymbol, frame, markLib)
		}
		if site != "" {
			out.add(kPath, site, markLib)
		}
		scanTokens(t, out, true)
		if msg != "" {
			return lineErr
		}
		return 0
	}
	if frame != "" {
		out.add(kSymbol, frame, markTrace)
	}
	if site != "" {
		// The site itself, with its line: where a panic or an exception
		// happened, ranked with what error lines name.
		out.add(kPath, site, markTrace|markErrLine)
	}
	if name := testResult(t); name != "" {
		out.add(kSymbol, name, markResult)
	}
	if name := failedTest(t); name != "" {
		out.add(kSymbol, name, markTrace|markErrLine)
	}
	var kind lineKind
	switch {
	case msg != "" || errorObject(t):
		out = marked{out, markTrace | markErrLine} // what an error line names
	case frame != "" || isFrameLocation(t):
		out = marked{out, markTrace} // what a stack frame names
	case passLine(t):
		// A test a runner says passed: its file:line is no failure's
		// site, whatever else the output shows.
		out = marked{out, markResult}
	case mode&modeBlock != 0:
		// What an error's report names under it, but for the names of
		// code, which such lines print for other reasons too.
		out = blockMarked{out}
	case !testLogs && reportsFailure(t):
		out = marked{out, markFailure}
		kind = lineWorded
	}
	if countSummary(t) {
		out = dropCounts{out}
	}
	switch {
	case strings.HasPrefix(t, "+++ b/"), strings.HasPrefix(t, "--- a/"):
		t = t[6:]
	case strings.HasPrefix(t, "diff --git a/"):
		t = strings.Replace(t[11:], " b/", " ", 1)
	}
	scanTokens(t, out, true)
	if msg != "" {
		kind |= lineErr
	}
	return kind
}

// countSummary reports whether a line sums up a run in three or more
// KEY=N counts ("PASS=3 WARN=0 ERROR=1 SKIP=0 TOTAL=4").
func countSummary(t string) bool {
	if strings.Count(t, "=") < 3 {
		return false
	}
	n := 0
	for _, f := range strings.Fields(t) {
		if countField(f) {
			n++
		}
	}
	return n >= 3
}

// countField reports whether a field is a KEY=N count (trailing commas
// and semicolons aside).
func countField(f string) bool {
	f = strings.TrimRight(f, ",;")
	i := strings.IndexByte(f, '=')
	if i <= 0 || !allDigits(f[i+1:]) {
		return false
	}
	for j := 0; j < i; j++ {
		if c := f[j]; !(c >= 'A' && c <= 'Z' || isDigit(c) || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// dropCounts passes on what a summary of counts names but its counts,
// which are not identifiers.
type dropCounts struct{ out sink }

func (d dropCounts) add(k kind, text string, m mark) {
	if k != kError && countField(text) {
		return
	}
	d.out.add(k, text, m)
}

// errorObject reports whether a line is a JSON object that reports an
// error: an "error" or "errors" key with a value (not null, false or
// empty), or a 5xx "status" (Spring Boot's {"timestamp":...,"status":500,
// "error":"Internal Server Error",...}).
func errorObject(t string) bool {
	if !strings.HasPrefix(t, "{") {
		return false
	}
	set := func(v string) bool {
		return v != "" && !strings.HasPrefix(v, "null") && !strings.HasPrefix(v, "false") &&
			!strings.HasPrefix(v, `""`) && !strings.HasPrefix(v, "[]") && !strings.HasPrefix(v, "{}")
	}
	serverStatus := func(v string) bool {
		v = strings.TrimPrefix(v, `"`)
		return len(v) >= 3 && v[0] == '5' && isDigit(v[1]) && isDigit(v[2]) && (len(v) == 3 || !isDigit(v[3]))
	}
	return jsonKey(t, set, `"error"`, `"errors"`) || jsonKey(t, serverStatus, `"status"`, `"statusCode"`, `"status_code"`)
}

// jsonKey reports whether one of keys, as a key of the JSON text t, has a
// value (what follows its colon) that ok accepts.
func jsonKey(t string, ok func(value string) bool, keys ...string) bool {
	for _, key := range keys {
		for r := t; ; {
			i := strings.Index(r, key)
			if i < 0 {
				break
			}
			r = r[i+len(key):]
			v := strings.TrimLeft(r, " \t")
			if strings.HasPrefix(v, ":") && ok(strings.TrimLeft(v[1:], " \t")) {
				return true
			}
		}
	}
	return false
}

// runtimeDirs name the places of a language's runtime and of installed
// dependencies: a frame there says how a failure travelled, not where
// the project's code failed.
var runtimeDirs = []string{"/go/src/", "/go/pkg/mod/", "/usr/lib/", "/usr/local/lib/", "site-packages/",
	"dist-packages/", "node_modules/", "/rustc/", "/.cargo/registry/", "<frozen ", "node:internal/", "/jdk/", "/jre/",
	"/gems/", "/usr/include/", "/rubygems/", "/sysdeps/", "/csu/", "libsanitizer/", "compiler-rt/", "/vendor/"}

// libraryPackages are the roots of the JVM's and .NET's runtimes and of
// widely used libraries, as a frame names its function
// ("at org.junit.jupiter.api.Assertions.fail(Assertions.java:38)").
var libraryPackages = []string{"java.", "javax.", "jdk.", "sun.", "com.sun.", "kotlin.", "kotlinx.", "scala.", "groovy.",
	"jakarta.", "org.junit.", "junit.", "org.opentest4j.", "org.springframework.", "org.apache.", "org.gradle.", "worker.org.gradle.",
	"org.hibernate.", "com.zaxxer.", "io.netty.", "reactor.", "org.mockito.", "net.bytebuddy.", "com.fasterxml.",
	"org.jetbrains.", "io.ktor.", "com.mysql.", "org.postgresql.", "org.flywaydb.", "org.testcontainers.", "okhttp3.",
	"retrofit2.", "com.google.", "io.grpc.", "org.eclipse.", "android.", "androidx.", "dalvik.", "System.", "Microsoft.",
	"Xunit.", "NUnit."}

// elixirRuntime are the applications of Elixir's and Erlang's own
// distribution, as an Elixir frame names them ("(elixir 1.15.7)").
var elixirRuntime = setOf(`elixir ex_unit stdlib kernel logger mix iex eex`)

// libraryFrame reports whether a stack frame is in a language's runtime or
// a widely used library by the function it names: a JVM or .NET frame
// under one of libraryPackages (past a module: "java.base/", Gradle's
// "app//"), or an Elixir frame of the distribution's own applications.
func libraryFrame(t string) bool {
	if strings.HasPrefix(t, "(") {
		app, _, _ := strings.Cut(t[1:], " ")
		return elixirRuntime[app]
	}
	if !strings.HasPrefix(t, "at ") {
		return false
	}
	r := t[3:]
	if i, j := strings.IndexByte(r, '/'), strings.IndexByte(r, '('); i >= 0 && (j < 0 || i < j) {
		module := r[:i]
		r = strings.TrimLeft(r[i:], "/")
		if strings.HasPrefix(module, "java.") || strings.HasPrefix(module, "jdk.") {
			return true // a module of the runtime: java.base/java.lang.Thread.run
		}
	}
	for _, p := range libraryPackages {
		if strings.HasPrefix(r, p) {
			return true
		}
	}
	return false
}

// runtimeSite reports whether a frame's site is in a language's runtime
// or a dependency (see runtimeDirs).
func runtimeSite(site string) bool {
	for _, d := range runtimeDirs {
		if strings.Contains(site, d) {
			return true
		}
	}
	return false
}

// failureWords, as whole words, make a line of output report a failure
// even when it is not shaped as an error line (a JSON body's "error"
// field, a runner's "... FAILED", "connection refused" in a sentence):
// the identifiers on it are failure evidence, though the line itself is
// not listed.
var failureWords = setOf(`error errors fail failed failure failing panic panicked exception traceback refused denied
fatal rejected mismatch aborted unreachable crashed`)

// warnLevel reports whether a line of a log is at warning level: a WARN
// or WARNING word near its start (log4j's "WARN", Monolog's
// "prod.WARNING:", "[WARN]"), "level=warn" or a JSON "level" of "warn".
func warnLevel(t string) bool {
	head := t[:min(len(t), 100)]
	for i := 0; i+4 <= len(head); i++ {
		if head[i] != 'W' || i > 0 && isLetter(head[i-1]) {
			continue
		}
		n := 0
		switch {
		case strings.HasPrefix(head[i:], "WARNING"):
			n = 7
		case strings.HasPrefix(head[i:], "WARN"):
			n = 4
		}
		if n > 0 && (i+n == len(head) || !isLetter(head[i+n])) {
			return true
		}
	}
	var buf [100]byte
	low := lowerASCII(buf[:0], head) // in place, without an allocation
	for _, l := range warnLevels {
		if bytes.Contains(low, l) {
			return true
		}
	}
	return false
}

// causeTail returns the last clause of a long error line, past its last
// ": ", when a digest's cut of the line would lose it, or "": messages
// that wrap others put the cause that names the value last ("...:
// reference.conf: 1: No configuration setting found for key 'x'").
func causeTail(t string) string {
	if len(t) <= maxDigestLine {
		return ""
	}
	i := strings.LastIndex(t, ": ")
	if i+2 < maxDigestLine*3/4 {
		return "" // the cut keeps most of it
	}
	c := strings.TrimSpace(t[i+2:])
	if len(c) < 12 || len(c) > maxDigestLine || !strings.Contains(c, " ") {
		return ""
	}
	return c
}

// errorLevels are the levels a logger writes a record that reports a
// failure at.
var errorLevels = setOf(`ERROR ERR FATAL CRITICAL CRIT SEVERE EMERG EMERGENCY ALERT PANIC`)

// errorLevel reports whether a line of a log is a record at error level,
// in whatever logger's format: a level word (ERROR, FATAL, SEVERE...) in
// capitals, or in any case in brackets ("[error]"), alone or before a
// colon, as the first field past what only a log prefix holds (times,
// dates, numbers, tags in brackets or braces, a dash or a bar): Spark's
// "25/03/09 19:10:11 ERROR Writer: ...", Airflow's "[time] {file.py:84}
// ERROR - ...", sbt's "[error] ...", Spring Boot's "time ERROR 1 ---".
// A count ("ERROR=1", "errors: 0") is no level.
func errorLevel(t string) bool {
	for k := 0; k < 8 && t != ""; k++ {
		f := t
		if i := strings.IndexAny(t, " \t"); i >= 0 {
			f, t = t[:i], strings.TrimLeft(t[i:], " \t")
		} else {
			t = ""
		}
		bracketed := len(f) > 2 && (f[0] == '[' && f[len(f)-1] == ']' || f[0] == '<' && f[len(f)-1] == '>')
		w := strings.TrimSuffix(f, ":")
		if bracketed {
			w = f[1 : len(f)-1]
		} else if i := strings.IndexByte(w, ':'); i > 0 {
			w = w[:i] // Python's "ERROR:root:message"
		}
		if len(w) <= 9 {
			var buf [9]byte
			up := upperASCII(buf[:0], w)
			if errorLevels[string(up)] {
				return (bracketed || string(up) == w) && hasWord(t)
			}
		}
		if !prefixField(f) {
			return false
		}
	}
	return false
}

// failureOpening reports whether a line of output opens with a word that
// says something failed, followed by words: "Error in query string:
// ...", "Failed to connect to ...", "Fatal: ...", not a count ("Failed:
// 0, Passed: 12").
func failureOpening(t string) bool {
	w, rest, ok := strings.Cut(t, " ")
	if !ok {
		return false
	}
	switch strings.TrimSuffix(w, ":") {
	case "Error", "Failed", "Failure", "Fatal", "FAILURE", "FATAL":
		rest = strings.TrimLeft(rest, " ")
		return rest != "" && !isDigit(rest[0]) && hasWord(rest) // not a count
	}
	// A thing that failed, named first: "Assertion failed at a.c:415:
	// ...", "Build FAILED: ...", "Deployment failed with ...".
	v, rest, ok := strings.Cut(rest, " ")
	if !ok || len(w) < 3 || w[0] < 'A' || w[0] > 'Z' || !allLetters(w) {
		return false
	}
	switch strings.TrimSuffix(v, ":") {
	case "failed", "FAILED":
		return hasWord(rest)
	}
	return false
}

// allLetters reports whether s is ASCII letters only.
func allLetters(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isLetter(s[i]) {
			return false
		}
	}
	return s != ""
}

// hasWord reports whether s holds a run of two letters: a message, not
// the rule or caret a compiler draws under its error ("[error]    |").
func hasWord(s string) bool {
	for i := 0; i+1 < len(s); i++ {
		if isLetter(s[i]) && isLetter(s[i+1]) {
			return true
		}
	}
	return false
}

// prefixField reports whether a field of a log line is one only a log
// prefix holds: a tag in brackets, braces or parentheses, a field with
// no letter but a time's T and Z (a date, a time, a pid), a dash or a
// bar.
func prefixField(f string) bool {
	if len(f) >= 2 && (f[0] == '[' || f[0] == '{' || f[0] == '(') {
		return true
	}
	if calendarWords[f] || sourceTag(f) || hostName(f) {
		return true
	}
	for i := 0; i < len(f); i++ {
		if c := f[i]; isLetter(c) && c != 'T' && c != 'Z' {
			return false
		}
	}
	return true
}

// boxBorder returns the length of the border a line of a box drawn with
// box-drawing characters opens with ("│ ", "┃ ", "║ "), or 0.
func boxBorder(t string) int {
	r, n := utf8.DecodeRuneInString(t)
	if r < 0x2500 || r > 0x257F || n >= len(t) || t[n] != ' ' {
		return 0
	}
	return n + 1
}

// calendarWords are the months and days a syslog or journal prefix
// spells ("Aug 07 09:28:59", "Mon Jan  2").
var calendarWords = setOf(`Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec Mon Tue Wed Thu Fri Sat Sun`)

// sourceTag reports whether a field of a log prefix names its source:
// a name and a colon, maybe with a pid in brackets ("uart0:",
// "moorhen-gw[20669]:", "kernel:").
func sourceTag(f string) bool {
	if len(f) < 2 || f[len(f)-1] != ':' {
		return false
	}
	f = f[:len(f)-1]
	if i := strings.IndexByte(f, '['); i > 0 && f[len(f)-1] == ']' && allDigits(f[i+1:len(f)-1]) {
		f = f[:i]
	}
	for i := 0; i < len(f); i++ {
		if c := f[i]; !isLetter(c) && !isDigit(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return f != ""
}

// hostName reports whether a field is a host's name as a log prefix
// gives it: lower case, digits and a dash or a dot ("gw-hull-02",
// "node7.dc1").
func hostName(f string) bool {
	digit, sep := false, false
	for i := 0; i < len(f); i++ {
		switch c := f[i]; {
		case isDigit(c):
			digit = true
		case c == '-' || c == '.':
			sep = true
		case c < 'a' || c > 'z':
			return false
		}
	}
	return digit && sep
}

// upperASCII appends s to dst in upper case (ASCII letters only).
func upperASCII(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// namedException reports whether a line names an exception or an error
// level past its start, with its message: a field such as
// "DB::Exception:", "java.io.IOException:", "TimeoutError:" or "ERROR:"
// followed by text, as when a tool wraps the error it got ("Code: 60.
// DB::Exception: Table ... does not exist", "send failed:
// ConnectionResetError: ...") or a logger's prefix holds words
// ("psql:load.sql:12: ERROR:  ...", "10:48:57 UTC [81] FATAL:  ...").
func namedException(t string) bool {
	if len(t) > 1000 {
		return false
	}
	first := true
	for len(t) > 0 {
		f := t
		if i := strings.IndexByte(t, ' '); i >= 0 {
			f, t = t[:i], strings.TrimLeft(t[i:], " ")
		} else {
			t = ""
		}
		if !first && t != "" && strings.HasSuffix(f, ":") && (exceptionName(f[:len(f)-1]) || errorLevels[f[:len(f)-1]]) {
			return true
		}
		first = false
	}
	return false
}

// exceptionName reports whether a word is an exception's name: a
// letter, then letters, digits, _, $ and the separators of packages and
// scopes (. ::), ending in Error or Exception after something more.
func exceptionName(w string) bool {
	var suf string
	switch {
	case strings.HasSuffix(w, "Exception"):
		suf = "Exception"
	case strings.HasSuffix(w, "Error"):
		suf = "Error"
	default:
		return false
	}
	if len(w) == len(suf) || !isLetter(w[0]) {
		return false
	}
	for i := 0; i < len(w); i++ {
		if c := w[i]; !(isLetter(c) || isDigit(c) || c == '_' || c == '$' || c == '.' || c == ':') {
			return false
		}
	}
	return true
}

// warnLevels are the lowered forms of a structured log's warning level.
var warnLevels = [][]byte{[]byte("level=warn"), []byte(`"level":"warn`), []byte(`"level": "warn`)}

// exceptionValue reports whether a line holds a JSON string value (after
// a key's colon) that names an error's type: one word that ends in
// Exception, Error or Fault after a letter or a digit
// ("AccessDeniedException", "aws#ThrottlingError", "HTTPError"), or in
// _exception or _error ("search_phase_execution_exception"). A level
// ("error", "ERROR") or a word that merely ends so ("mirror") is not
// one.
func exceptionValue(t string) bool {
	for i := 0; i < len(t); i++ {
		if t[i] != ':' || i == 0 {
			continue
		}
		k := strings.TrimRight(t[:i], " ")
		if !strings.HasSuffix(k, `"`) {
			continue
		}
		v := strings.TrimLeft(t[i+1:], " ")
		if !strings.HasPrefix(v, `"`) {
			continue
		}
		v = v[1:]
		end := strings.IndexByte(v, '"')
		if end < 0 || end > 120 {
			continue
		}
		if errorTypeName(v[:end]) {
			return true
		}
	}
	return false
}

// statusFailed reports whether a line is a JSON field that says, by
// its value, that something failed: a key that names a state, a status,
// a result, an outcome, a conclusion or a phase, and a value that is a
// failure word ("provisioningState": "Failed", "conclusion":
// "failure", "phase": "Failed", "status": "ERROR").
func statusFailed(t string) bool {
	k, v, ok := strings.Cut(t, ":")
	if !ok {
		return false
	}
	k = strings.TrimSpace(k)
	v = strings.TrimRight(strings.TrimSpace(v), ",")
	if len(k) < 4 || k[0] != '"' || k[len(k)-1] != '"' || len(v) < 4 || v[0] != '"' || v[len(v)-1] != '"' {
		return false
	}
	if !keyEndsIn(k[1 : len(k)-1][:min(len(k)-2, 64)], "state", "status", "result", "outcome", "conclusion", "phase") {
		return false
	}
	var vbuf [16]byte
	if len(v)-2 > len(vbuf) {
		return false
	}
	return failureValues[string(lowerASCII(vbuf[:0], v[1:len(v)-1]))]
}

// failureValues are the values of a state or a status that say it failed.
var failureValues = setOf(`failed failure error errored crashed fatal timedout timed_out`)

// errorTypeName: see exceptionValue.
func errorTypeName(v string) bool {
	if len(v) < 6 {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; !(isLetter(c) || isDigit(c) || c == '_' || c == '.' || c == '#' || c == '$' || c == ':') {
			return false
		}
	}
	for _, suf := range []string{"Exception", "Error", "Fault"} {
		if n := len(v) - len(suf); n > 0 && v[n:] == suf && (isLetter(v[n-1]) || isDigit(v[n-1])) {
			return true
		}
	}
	for _, suf := range []string{"_exception", "_error"} {
		if n := len(v) - len(suf); n > 0 && v[n:] == suf && isLetter(v[n-1]) {
			return true
		}
	}
	return false
}

// reportsFailure reports whether a line of output reports a failure: a
// failure word, not as a count of none ("errors: 0", "0 failed"), or an
// HTTP 5xx status line.
func reportsFailure(t string) bool {
	if len(t) > 2000 {
		t = t[:2000]
	}
	if serverError(t) {
		return true
	}
	for i := 0; i < len(t); {
		if !isLetter(t[i]) || i > 0 && isWordByte(t[i-1]) {
			i++
			continue
		}
		j := i
		for j < len(t) && isLetter(t[j]) {
			j++
		}
		if j < len(t) && (isDigit(t[j]) || t[j] == '_') {
			i = j
			continue
		}
		var buf [16]byte
		if w := t[i:j]; len(w) <= len(buf) && failureWords[string(lowerASCII(buf[:0], w))] && !noneCount(t[:i], t[j:]) {
			return true
		}
		i = j
	}
	return false
}

// noneCount reports whether the word between before and after is counted
// as none: "0 failed", "errors: 0", "errors=0".
func noneCount(before, after string) bool {
	b := strings.TrimRight(before, " ")
	if strings.HasSuffix(b, " 0") || b == "0" {
		return true
	}
	a := strings.TrimLeft(after, ":= ")
	return len(a) < len(after) && strings.HasPrefix(a, "0") && (len(a) == 1 || !isDigit(a[1]) && a[1] != '.')
}

// passLine reports whether a line is a test runner's report of a test
// that passed: Jest's, Vitest's, Mocha's and Playwright's "✓ ...",
// GoogleTest's "[       OK ] ...", cargo's "test a::b ... ok", pytest's
// and Gradle's "... PASSED", ctest's "Test #3: x ....   Passed".
func passLine(t string) bool {
	switch {
	case strings.HasPrefix(t, "✓"), strings.HasPrefix(t, "✔"), strings.HasPrefix(t, "√"), strings.HasPrefix(t, "[       OK ]"):
		return true
	case strings.HasSuffix(t, " ... ok"), strings.HasSuffix(t, " PASSED"):
		return true
	}
	return strings.Contains(t, " Test #") && strings.Contains(t, "   Passed ")
}

// testResult returns the test a test runner's line says passed: Go's
// "--- PASS: TestX (0.01s)", pytest's "PASSED tests/a.py::test_x" and
// "tests/a.py::test_x PASSED", or "". (A failed one is on an error line,
// which says it.)
func testResult(t string) string {
	var name string
	switch {
	case strings.HasPrefix(t, "--- PASS: "):
		name, _, _ = strings.Cut(t[10:], " ")
	case strings.HasPrefix(t, "PASSED "):
		name, _, _ = strings.Cut(t[7:], " ")
	case strings.HasSuffix(t, " PASSED"):
		name, _, _ = strings.Cut(t, " ")
	default:
		return ""
	}
	return testName(name)
}

// failedTest returns the test a test runner's line says failed: Go's
// "--- FAIL: TestX/case (0.01s)" and pytest's "FAILED tests/a.py::test_x
// - message", or "". The line is an error line; the name, a subtest's
// whole path included, is an identifier of its own, shorter than the
// line.
func failedTest(t string) string {
	var name string
	switch {
	case strings.HasPrefix(t, "--- FAIL: "):
		name, _, _ = strings.Cut(t[10:], " ")
	case strings.HasPrefix(t, "FAILED "):
		name, _, _ = strings.Cut(t[7:], " ")
	case strings.HasPrefix(t, "test ") && strings.HasSuffix(t, " ... FAILED"):
		name = t[5 : len(t)-11] // cargo test's "test a::b ... FAILED"
	case strings.Contains(t, " Test #") && strings.Contains(t, "***"):
		// ctest's "3/5 Test #3: quote_test ......***Failed  0.02 sec"
		_, r, _ := strings.Cut(t, " Test #")
		_, r, _ = strings.Cut(r, ": ")
		name, _, _ = strings.Cut(r, " ")
	case strings.HasPrefix(t, "[  FAILED  ] "):
		name, _, _ = strings.Cut(t[13:], " ") // GoogleTest's "[  FAILED  ] Suite.Case (0 ms)"
	case strings.HasPrefix(t, "Failed ") && strings.HasSuffix(t, "]") && strings.Contains(t, " ["):
		name, _, _ = strings.Cut(t[7:], " ") // dotnet test's "Failed Ns.Tests.Case [12 ms]"
	default:
		return ""
	}
	return testName(name)
}

// testName returns the name of a test as a runner's line gives it (Go's
// TestX or TestX/case, pytest's tests/a.py::TestC::test_x[3-4]), or ""
// if it is not a name.
func testName(name string) string {
	if rustPath(name) {
		return name // cargo's io::reader::tests::caps_flush
	}
	if _, test, ok := strings.Cut(name, "::"); ok {
		name = strings.ReplaceAll(test, "::", ".")
	}
	if i := strings.IndexByte(name, '['); i > 0 {
		name = name[:i] // a parametrized case: test_x[3-4]
	}
	if head, _, sub := strings.Cut(name, "/"); sub && len(name) <= maxIdent {
		// A Go subtest: TestX/empty_input.
		if _, ok := symbolOf(head, true, true); ok && !strings.ContainsAny(name, "()\"'`") {
			return name
		}
		return ""
	}
	if s, ok := symbolOf(name, true, true); ok {
		return s
	}
	return ""
}

// isFrameLocation reports whether a line is the location line of a stack
// frame: Go's "/src/a.go:12 +0x1d", Rust's "at src/main.rs:3:5".
func isFrameLocation(t string) bool {
	if strings.HasPrefix(t, "at ") {
		return true
	}
	if site, _ := otherFrame(t); site != "" {
		return true
	}
	i := strings.IndexByte(t, ' ')
	if i < 0 {
		i = len(t)
	} else if !strings.HasPrefix(t[i:], " +0x") {
		return false
	}
	return lineSuffix(t[:i]) > 0 && hasKnownExt(t[:lineSuffix(t[:i])])
}

// otherFrame reads the frames of the backtraces the other cases do not:
// a sanitizer's or gdb's "#0 0x55d0 in pricing::Quote::total() const
// /src/quote.cc:88:12" (or "... at /src/quote.cc:88"), Ruby's
// "app/models/line.rb:42:in `total'" (after "from " or "# "), Elixir's
// "(notifier 0.3.1) lib/notifier/webhook.ex:57: Notifier.Webhook.deliver/1"
// and .NET's "at Ns.Type.Method() in /src/Type.cs:line 57". It returns
// the site and the function, or "" and "".
func otherFrame(t string) (site, fn string) {
	switch {
	case len(t) > 3 && t[0] == '#' && isDigit(t[1]):
		i := strings.IndexByte(t, ' ')
		if i < 0 {
			return "", ""
		}
		rest := strings.TrimSpace(t[i:])
		if strings.HasPrefix(rest, "0x") {
			j := strings.Index(rest, " in ")
			if j < 0 {
				return "", ""
			}
			rest = rest[j+4:]
		}
		f := strings.Fields(rest)
		if len(f) < 2 {
			return "", ""
		}
		loc := f[len(f)-1]
		if k := lineSuffix(loc); k > 0 && hasKnownExt(loc[:k]) {
			site = loc[:siteEnd(loc, k)]
		}
		name, params := f[0], ""
		if k := strings.IndexByte(name, '('); k > 0 {
			name, params = name[:k], name[k:]
		}
		if rustPath(name) || strings.Contains(name, ".") {
			fn = name
		} else if s, ok := symbolOf(name, true, true); ok {
			fn = s
		}
		if site == "" {
			fn = ""
		}
		if fn == name && strings.HasPrefix(params, "()") {
			fn += "()" // as the frame prints it: Suite_Case_Test::TestBody()
		}
		return site, fn
	case strings.Contains(t, ":in `") || strings.Contains(t, ":in '"):
		r := strings.TrimPrefix(strings.TrimPrefix(t, "from "), "# ")
		loc, _, _ := strings.Cut(r, ":in ")
		if k := lineSuffix(loc); k > 0 && hasKnownExt(loc[:k]) && !strings.ContainsAny(loc, " \t") {
			return loc[:siteEnd(loc, k)], ""
		}
	case strings.HasPrefix(t, "at ") && strings.Contains(t, " in ") && strings.Contains(t, ":line "):
		i := strings.LastIndex(t, " in ")
		file, line, _ := strings.Cut(t[i+4:], ":line ")
		if hasKnownExt(file) {
			name := strings.TrimPrefix(t[:i], "at ")
			if k := strings.IndexByte(name, '('); k > 0 {
				name = name[:k]
			}
			n := 0
			for n < len(line) && isDigit(line[n]) {
				n++
			}
			if n > 0 {
				// As .NET prints it, which is what a reader searches
				// for: Quote.cs:line 57.
				return file + ":line " + line[:n], name
			}
			return file, name
		}
	case strings.Contains(t, ".ex:") || strings.Contains(t, ".exs:"):
		r := t
		if strings.HasPrefix(r, "(") {
			// Elixir's "(app 0.3.1) " before the site.
			if k := strings.Index(r, ") "); k > 0 {
				r = r[k+2:]
			}
		}
		loc, what, ok := strings.Cut(r, ": ")
		k := lineSuffix(loc)
		if !ok || k <= 0 || !strings.HasSuffix(loc[:k], ".ex") && !strings.HasSuffix(loc[:k], ".exs") {
			return "", ""
		}
		// What the frame ran: a test, or a function with its arity.
		if what == "(test)" || strings.Contains(what, "/") && !strings.Contains(what, " ") {
			return loc[:siteEnd(loc, k)], ""
		}
	}
	return "", ""
}

// quotedValue returns the value a word of an error message quotes in
// single or double quotes ('ep-stg-4kx9', "session_start",
// 'eddy.auth.jwks-url'): 4 to 64 letters, digits and _.:/@- with a
// letter and a digit or one of those separators among them (a name, not
// a word of prose), or "". A JSON key ("name":) is not a value.
func quotedValue(f string) string {
	if strings.HasSuffix(f, "\":") {
		return ""
	}
	f = strings.TrimRight(f, ".,;:)?!")
	if len(f) < 6 || f[0] != '\'' && f[0] != '"' || f[len(f)-1] != f[0] {
		return ""
	}
	v := f[1 : len(f)-1]
	if len(v) < 4 || len(v) > 64 {
		return ""
	}
	named, letter := false, false
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case isDigit(c):
			named = true
		case isLetter(c):
			letter = true
		case c == '_' || c == '.' || c == ':' || c == '/' || c == '@' || c == '-':
			named = named || i > 0 && i < len(v)-1
		default:
			return ""
		}
	}
	if !named || !letter {
		return ""
	}
	return v
}

// dotnetSite returns a line that is a .NET frame's site alone,
// "/src/Quote.cs:line 57" (as a digest lists it), or "".
func dotnetSite(t string) string {
	if len(t) < 8 || !isDigit(t[len(t)-1]) {
		return "" // most lines: no search through them
	}
	file, line, ok := strings.Cut(t, ":line ")
	if !ok || line == "" || !allDigits(line) || strings.ContainsAny(file, " \t") || !hasKnownExt(file) {
		return ""
	}
	if _, ok := pathOf(file); !ok {
		return ""
	}
	return t
}

// nativeFrame reads a sanitizer's or gdb's frame, "#0 0x55d0 in f()
// /src/a.cc:8:3", "#1  main (argc=1) at main.c:12", or one in a shared
// object, "#2 0x7f2b in __libc_start_main (/lib/libc.so.6+0x270b2)", and
// PHP's "#6 /app/Rates.php(203): Model->save()": its site and function
// (none for a shared object's), and whether the line is such a frame.
func nativeFrame(t string) (site, fn string, ok bool) {
	i := strings.IndexByte(t, ' ')
	if i < 0 || !allDigits(t[1:i]) {
		return "", "", false
	}
	rest := strings.TrimSpace(t[i:])
	if j := strings.Index(rest, "): "); j > 0 {
		// PHP's "#6 /app/Services/Rates.php(203): Model->save()": the
		// site as PHP prints it, and the method it called.
		if k := strings.LastIndexByte(rest[:j], '('); k > 0 && allDigits(rest[k+1:j]) && hasKnownExt(rest[:k]) &&
			!strings.ContainsAny(rest[:k], " \t") {
			call := rest[j+3:]
			if p := strings.IndexByte(call, '('); p > 0 {
				call = call[:p]
			}
			return rest[:j+1], call, true
		}
	}
	if !strings.HasPrefix(rest, "0x") && !strings.Contains(rest, " at ") {
		return "", "", false
	}
	site, fn = otherFrame(t)
	return site, fn, true
}

// runnerFailure reports whether a line is a test runner's report of a
// failed test: Gradle's "InvoiceServiceTest > closesPeriod() FAILED",
// ctest's "3/5 Test #3: quote_test ....***Failed" and "3 - quote_test
// (Failed)", ExUnit's "1) test delivers the webhook (Notifier.WebhookTest)",
// PHPUnit's "1) Tests\Unit\RateTest::test_rounds",
// RSpec's "rspec ./spec/a_spec.rb:17 # renders the invoice".
func runnerFailure(t string) bool {
	switch {
	case strings.HasPrefix(t, "not ok ") && len(t) > 7 && isDigit(t[7]):
		return true // TAP's "not ok 3 - rounds half up" (bats, node:test, prove)
	case verdictLast(t):
		return true
	case strings.HasSuffix(t, " FAILED") && strings.Contains(t, " > "):
		return true
	case strings.Contains(t, " Test #") && (strings.Contains(t, "***Failed") || strings.Contains(t, "***Exception") || strings.Contains(t, "***Timeout")):
		return true
	case strings.HasPrefix(t, "rspec ") && strings.Contains(t, " # ") && lineSuffix(t) > 0:
		return true
	}
	if i := strings.IndexByte(t, ')'); i > 0 && allDigits(t[:i]) {
		r := t[i+1:]
		if strings.HasPrefix(r, " ") && strings.Contains(r, "::") && !strings.ContainsAny(r[1:], " \t") {
			return true // PHPUnit's "1) Tests\Unit\RateTest::test_rounds"
		}
		return strings.HasPrefix(r, " test ") && strings.HasSuffix(r, ")") // ExUnit
	}
	if n, name, ok := strings.Cut(t, " - "); ok && allDigits(n) && strings.HasSuffix(name, ")") {
		_, st, _ := strings.Cut(name, " (")
		return ctestFailures[strings.TrimSuffix(st, ")")]
	}
	return false
}

// verdictLast reports whether a line ends in a runner's verdict on what
// it names first: "FAILED", "FAIL" or "ERROR" after a leader (" ... ",
// "...", ": ", " - ", or a space after a name that is no plain word nor
// a count), then maybe a duration in parentheses or brackets: "rounds a
// fix ... FAILED (52ms)", "test_x (a.T) ... ERROR", "%%% a_SUITE ==>
// case: FAILED", "tests/a.py::test_b FAILED [ 50%]".
func verdictLast(t string) bool {
	if strings.HasSuffix(t, ")") || strings.HasSuffix(t, "]") {
		if i := strings.LastIndexAny(t, "(["); i > 0 && t[i-1] == ' ' && strings.ContainsAny(t[i:], "0123456789") {
			t = t[:i-1]
		}
	}
	var head string
	for _, v := range []string{"FAILED", "FAIL", "ERROR"} {
		if strings.HasSuffix(t, v) {
			head = t[:len(t)-len(v)]
			break
		}
	}
	if head == "" {
		return false
	}
	for _, l := range []string{" ... ", "...", ": ", " - ", " "} {
		if strings.HasSuffix(head, l) {
			head = strings.TrimSuffix(head, l)
			last := head[strings.LastIndexByte(head, ' ')+1:]
			if l == " " && (allLetters(last) || !hasLetter(last)) {
				return false // a sentence's word or a count ("the build FAILED", "0 ERROR")
			}
			if l == ": " && levelKey(last) {
				return false // a setting: "log_level: ERROR"
			}
			return hasWord(head)
		}
	}
	return false
}

// levelKey reports whether a key names a log level or a severity
// ("level", "log_level", "minSeverity"): its value is a setting, not a
// verdict.
func levelKey(k string) bool {
	return len(k) <= 64 && keyEndsIn(strings.Trim(k, `"'`), "level", "severity")
}

// keyEndsIn reports whether key, in lower case, ends in one of ends; a
// key longer than 64 bytes ends in none.
func keyEndsIn(key string, ends ...string) bool {
	var buf [64]byte
	if len(key) > len(buf) {
		return false
	}
	low := lowerASCII(buf[:0], key)
	for _, e := range ends {
		if bytes.HasSuffix(low, []byte(e)) {
			return true
		}
	}
	return false
}

// ctestFailures are the outcomes ctest lists under "The following tests
// FAILED:".
var ctestFailures = setOf(`Failed SEGFAULT Timeout Exception OTHER_FAULT BAD_COMMAND ILLEGAL`)

// sanitizerMark returns the length of the "==31337==" a sanitizer opens
// its report lines with, or 0.
func sanitizerMark(t string) int {
	if !strings.HasPrefix(t, "==") {
		return 0
	}
	i := 2
	for i < len(t) && isDigit(t[i]) {
		i++
	}
	if i == 2 || !strings.HasPrefix(t[i:], "==") {
		return 0
	}
	return i + 2
}

// frameSite returns the file:line of a stack frame's location line
// (Go's "/src/a.go:12 +0x1d", JavaScript's and Rust's "at f (src/a.js:3:5)"),
// with its column when it has one, or "".
func frameSite(t string) string {
	if site, _ := otherFrame(t); site != "" {
		return site
	}
	if !isFrameLocation(t) {
		return ""
	}
	f := strings.Fields(strings.TrimPrefix(t, "at "))
	if len(f) == 0 {
		return ""
	}
	loc := f[len(f)-1]
	if i := strings.LastIndexByte(loc, '('); i >= 0 {
		loc = loc[i+1:] // Java's com.acme.Pool.take(Pool.java:118)
	}
	loc = strings.Trim(loc, "()")
	if strings.HasPrefix(f[len(f)-1], "+0x") && len(f) >= 2 {
		loc = f[len(f)-2]
	}
	i := lineSuffix(loc)
	if i <= 0 || !hasKnownExt(loc[:i]) {
		return ""
	}
	return loc[:siteEnd(loc, i)]
}

// trimToken strips quotes, brackets, emphasis and sentence punctuation
// from the ends of a token; a closing parenthesis stays when the token
// opened one (foo(), Total(x)).
func trimToken(t string) string {
	for len(t) > 0 {
		switch t[0] {
		case '(', '[', '{', '<', '"', '\'', '`', '*', ',', ';':
			t = t[1:]
			continue
		}
		break
	}
	for len(t) > 0 {
		c := t[len(t)-1]
		if c == '.' && strings.HasSuffix(t, "/...") {
			break // a Go package pattern
		}
		switch c {
		case '.', ',', ';', ':', '!', '?', '"', '\'', '`', '*', ']', '}', '>':
			t = t[:len(t)-1]
			continue
		case ')':
			if strings.Count(t, "(") < strings.Count(t, ")") {
				t = t[:len(t)-1]
				continue
			}
		}
		break
	}
	return t
}

func trimRightPunct(t string) string {
	for len(t) > 0 && strings.IndexByte(".,;:!?\"'`*", t[len(t)-1]) >= 0 {
		t = t[:len(t)-1]
	}
	return t
}

// classify returns the kind of a trimmed token and the identifier's text
// (a path loses its :line:col, a symbol its call parentheses). code: the
// token comes from code or output. loose: the author marked it as code
// (an inline code span), so any name counts as a symbol.
func classify(t string, code, loose bool) (kind, string) {
	if len(t) < 2 || len(t) > maxIdent {
		return kNone, ""
	}
	c := t[0]
	// Fast path: a plain lower-case word is no identifier, unless marked.
	if plainWord(t) {
		if loose {
			return kSymbol, t
		}
		return kNone, ""
	}
	if strings.Contains(t, "://") {
		return kURL, t
	}
	if n := hostPortLen(t); n > 0 {
		return kURL, t[:n]
	}
	if hasHostPort(t) {
		return kURL, t
	}
	if isUUID(t) || dashedHex(t) {
		return kID, t
	}
	if t[0] == ':' && len(t) >= 3 && len(t) <= 6 && allDigits(t[1:]) {
		return kID, t
	}
	if i := strings.IndexByte(t, '='); i > 0 && i+1 < len(t) && t[i+1] != '=' && t[i-1] != '!' && t[i-1] != '<' && t[i-1] != '>' {
		return classifyAssignment(t, i, code)
	}
	if c == '#' {
		if len(t) >= 2 && len(t) <= 8 && allDigits(t[1:]) {
			return kID, t
		}
		return kNone, ""
	}
	if isTicket(t) || isErrorCode(t) || isPrefixedID(t) || isAdvisory(t) {
		return kID, t
	}
	if isVersion(t) || isPinned(t) || isConstraintVersion(t) {
		return kID, t
	}
	if n, ok := numberWithUnit(t, code); ok && n == len(t) {
		return kNumber, t
	}
	if isHash(t) {
		return kID, t
	}
	if strings.Contains(t, "::") {
		return classifyScoped(t, code, loose)
	}
	if strings.IndexByte(t, '@') > 0 {
		return kNone, "" // an e-mail address or a scoped name
	}
	if p, ok := pathOf(t); ok {
		return kPath, p
	}
	if strings.ContainsAny(t, "/\\") {
		return kNone, ""
	}
	if isRandomToken(t) {
		return kID, t
	}
	if s, ok := symbolOf(t, code, loose); ok {
		return kSymbol, s
	}
	return kNone, ""
}

// isRandomToken reports whether t looks generated rather than named: 12
// to 64 letters and digits (and - or _), at least two each of digits,
// upper-case and lower-case letters, the class changing at least once in
// two characters ("Zk4qP0sT2uV6wX8yA1bC3d", a node or a push id). A
// code name changes class at its words only ("Utf8Decoder16Bit").
func isRandomToken(t string) bool {
	if len(t) < 12 || len(t) > 64 {
		return false
	}
	var n [3]int
	changes, last := 0, -1
	for i := 0; i < len(t); i++ {
		c, class := t[i], 0
		switch {
		case isDigit(c):
			class = 0
		case c >= 'A' && c <= 'Z':
			class = 1
		case isLower(c):
			class = 2
		case c == '-' || c == '_':
			last = -1
			continue
		default:
			return false
		}
		n[class]++
		if last >= 0 && class != last {
			changes++
		}
		last = class
	}
	return n[0] >= 2 && n[1] >= 2 && n[2] >= 2 && changes*2 >= len(t)
}

// dottedName reports whether t, a name with inner dots, is a dotted code
// name (pkg.Func, obj.method): every segment opens like a name, two are
// longer than a letter (one will do when loose), and t is no file name or
// domain.
func dottedName(t string, loose bool) bool {
	long := 0
	for _, s := range strings.Split(t, ".") {
		if !isLetter(s[0]) && s[0] != '_' && s[0] != '$' {
			return false // 3.5, v1.x
		}
		if len(s) >= 2 {
			long++
		}
	}
	if long < 2 && !loose || long == 0 {
		return false // e.g, U.S
	}
	return !hasKnownExt(t) && !isDomain(t)
}

// plainWord reports whether t is a plain lower-case word (letters, and
// inner hyphens).
func plainWord(t string) bool {
	if t[0] < 'a' || t[0] > 'z' {
		return false
	}
	for i := 1; i < len(t); i++ {
		if d := t[i]; !(d >= 'a' && d <= 'z' || d == '-' && i < len(t)-1) {
			return false
		}
	}
	return true
}

// classifyAssignment classifies a token with an '=' at i: a setting
// (KEY=value in code, key=value elsewhere) or a pinned version
// (pkg==1.2.3) is an identifier, a number when its value is one.
func classifyAssignment(t string, i int, code bool) (kind, string) {
	key, val := t[:i], t[i+1:]
	if ((code && isEnvKey(key)) || (!code && isKey(key))) && isValue(val) {
		if isVersion(val) && strings.HasSuffix(key, "=") {
			return kID, t
		}
		if n, ok := numberWithUnit(val, false); ok && n == len(val) {
			return kNumber, t
		}
		return kID, t
	}
	if strings.HasSuffix(key, "=") && isVersion(val) { // pkg==1.2.3
		return kID, t
	}
	return kNone, ""
}

// classifyScoped classifies a token with "::": pytest node ids and Rust
// paths (tests/test_x.py::test_y) are the path before it, or else a
// symbol.
func classifyScoped(t string, code, loose bool) (kind, string) {
	a, b, _ := strings.Cut(t, "::")
	if p, ok := pathOf(a); ok {
		return kPath, p
	}
	if rustPath(t) {
		// A Rust or C++ path (io::reader::tests::caps_flush), as written:
		// the name a runner takes to run that test again.
		return kSymbol, t
	}
	if s, ok := symbolOf(strings.ReplaceAll(b, "::", "."), code, loose); ok {
		return kSymbol, s
	}
	return kNone, ""
}

// rustPath reports whether t is a path of names joined by "::"
// (std::io::Error, io::reader::tests::caps_flush), each a plain name.
func rustPath(t string) bool {
	if len(t) > maxIdent {
		return false
	}
	for _, seg := range strings.Split(t, "::") {
		if seg == "" || !(isLetter(seg[0]) || seg[0] == '_') {
			return false
		}
		for i := 1; i < len(seg); i++ {
			if c := seg[i]; !(isLetter(c) || isDigit(c) || c == '_') {
				return false
			}
		}
	}
	return true
}

// pathOf reports whether t is a path: rooted (/x, ./x, ../x, ~/x, C:\x),
// three segments or more (a/b/c), a module path (github.com/a/b), a Go
// package pattern (./x/...), or a file name with a known extension
// (main.go, a/b.py). A :line or :line:col suffix is dropped.
func pathOf(t string) (string, bool) {
	if len(t) >= 3 && isLetter(t[0]) && t[1] == ':' && (t[2] == '\\' || t[2] == '/') {
		rest := t[3:]
		if i := lineSuffix(rest); i >= 0 {
			rest = rest[:i]
		}
		return t[:3] + rest, len(rest) > 0 && hasLetter(rest)
	}
	if i := lineSuffix(t); i >= 0 {
		t = t[:i]
	}
	if t == "" || len(t) > maxIdent {
		return "", false
	}
	for i := 0; i < len(t); i++ {
		switch c := t[i]; c {
		case '(', ')', '<', '>', '"', '\'', ',', ';', '=', '|', '&', '`', '$', '!', '?', ':':
			return "", false
		default:
			if c < ' ' {
				return "", false
			}
		}
	}
	if strings.Contains(t, "//") {
		return "", false
	}
	rooted := t[0] == '/' || strings.HasPrefix(t, "./") || strings.HasPrefix(t, "../") || strings.HasPrefix(t, "~/")
	if rooted {
		return t, hasLetter(t)
	}
	if strings.IndexByte(t, '\\') > 0 {
		return "", false
	}
	if strings.IndexByte(t, '/') < 0 {
		return t, isFileName(t)
	}
	segs := strings.Split(strings.TrimSuffix(t, "/"), "/")
	letters := false
	for _, s := range segs {
		if s == "" {
			return "", false
		}
		if hasLetter(s) {
			letters = true
		}
	}
	if !letters {
		return "", false // 24/7, 2024/01/02
	}
	last := segs[len(segs)-1]
	switch {
	case last == "...":
		return t, true
	case len(segs) >= 3:
		return t, true
	case hasKnownExt(t):
		return t, true
	case strings.IndexByte(segs[0], '.') > 0 && isDomain(segs[0]):
		return t, true
	}
	return "", false
}

// lineSuffix returns the index of a ":<digit>" suffix (file.go:12:5,
// file.go:12:func...), or -1.
func lineSuffix(t string) int {
	for i := 1; i+1 < len(t); i++ {
		if t[i] == ':' && isDigit(t[i+1]) {
			return i
		}
	}
	return -1
}

// isFileName reports whether a name without a slash is a file name: a
// known extension after a name (main.go, .env), or a well-known file.
func isFileName(t string) bool {
	if knownFiles[t] {
		return true
	}
	i := strings.LastIndexByte(t, '.')
	if i < 0 || i == len(t)-1 {
		return false
	}
	for j := 0; j < len(t); j++ {
		c := t[j]
		if !(isLetter(c) || isDigit(c) || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return hasKnownExt(t) && (i > 0 || len(t) > 3)
}

// hasKnownExt reports whether a name ends in a known extension, written
// in lower case (main.go; threading.Lock is no file), or is a well-known
// file. A name whose base is a common receiver (self.db, res.json,
// process.env) is member access, not a file.
func hasKnownExt(name string) bool {
	i := strings.LastIndexByte(name, '.')
	if i < 0 || i == len(name)-1 {
		return knownFiles[name]
	}
	if knownFiles[name[strings.LastIndexAny(name, "/\\")+1:]] {
		return true
	}
	ext := name[i+1:]
	if len(ext) > 10 || !knownExts[ext] {
		return false
	}
	// A receiver's member (res.json) is no file, but in a directory
	// (internal/api/client.go) it is one.
	slash := strings.LastIndexAny(name[:i], "/\\")
	return slash >= 0 || !receivers[name[:i]]
}

// receivers are names that precede a member rather than an extension.
var receivers = setOf(`self this cls ctx req res request response obj app os sys process np pd math json http
log logger util utils config cfg opts options db client conn module exports window document console err`)

var knownExts = setOf(`go mod sum py pyi ipynb js jsx mjs cjs ts tsx json jsonc yaml yml toml ini cfg conf env md mdx rst txt
sql sh bash zsh ps1 bat rs java kt kts scala rb php c h cc cpp cxx hpp cs fs swift mm css scss sass less html htm vue
svelte astro proto graphql gql xml csv tsv log tmpl tpl j2 tf hcl lua zig ex exs erl hrl dart jl gradle properties
cmake mk patch diff pem crt plist wasm so dll dylib pyc whl gz tgz zip jar war sqlite sqlite3 parquet ejs hbs pug nim
elm hs ml mli clj cljs edn`)

var knownFiles = setOf(`Makefile Dockerfile Containerfile Jenkinsfile Procfile Gemfile Rakefile Vagrantfile Justfile
Taskfile .env .gitignore .dockerignore .editorconfig .npmrc .nvmrc .bashrc .zshrc .profile CODEOWNERS go.mod go.sum
go.work yarn.lock Cargo.lock poetry.lock Gemfile.lock Pipfile Pipfile.lock uv.lock pnpm-lock.yaml package-lock.json`)

var tlds = setOf(`com org net io dev app ai co gov edu info biz us uk de fr eu ca au jp cn ru nl se ch es it in br me sh cloud tech`)

// isDomain reports whether a dotted name ends in a common top-level domain
// (example.com, api.github.com).
func isDomain(s string) bool {
	i := strings.LastIndexByte(s, '.')
	if i <= 0 || i == len(s)-1 {
		return false
	}
	for j := 0; j < len(s); j++ {
		if c := s[j]; !(c >= 'a' && c <= 'z' || isDigit(c) || c == '.' || c == '-') {
			return false
		}
	}
	return tlds[s[i+1:]]
}

// hostPortLen returns the length of the host:port that opens t, with
// the path that follows it (10.4.2.7:7032, db.internal:5432/app,
// 0.0.0.0:5432 of docker's 0.0.0.0:5432->5432/tcp), or 0. The host is
// localhost, an IPv4 address, or a dotted name ending in a known
// top-level domain or an internal one (.internal, .local, .svc, .lan); a
// file name's extension is no host (main.go:12 is a site).
func hostPortLen(t string) int {
	i := strings.IndexByte(t, ':')
	if i <= 0 || i+2 >= len(t) || !isDigit(t[i+1]) {
		return 0
	}
	host := t[:i]
	if host != "localhost" && !isIPv4(host) {
		low := strings.ToLower(host)
		dot := strings.LastIndexByte(low, '.')
		if dot <= 0 || knownExts[low[dot+1:]] || !(isDomain(low) || internalTLDs[low[dot+1:]] && isHostName(low)) {
			return 0
		}
	}
	j := i + 1
	for j < len(t) && isDigit(t[j]) {
		j++
	}
	if j-i-1 < 2 || j-i-1 > 5 || j < len(t) && (isLetter(t[j]) || t[j] == '.' || t[j] == ':') {
		return 0
	}
	if j < len(t) && t[j] == '/' {
		// A path after the port: up to what cannot be in a URL.
		j += len(urlEnd(t[j:]))
	}
	return j
}

// internalTLDs end the names of hosts inside a network.
var internalTLDs = setOf(`internal local localdomain svc lan corp home intranet`)

// isHostName reports whether a lower-cased name is made of the bytes a
// host name has: letters, digits, dots and hyphens.
func isHostName(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || isDigit(c) || c == '.' || c == '-') {
			return false
		}
	}
	return s != ""
}

// isIPv4 reports whether s is a dotted-quad IPv4 address.
func isIPv4(s string) bool {
	parts := 0
	for _, p := range strings.Split(s, ".") {
		if len(p) == 0 || len(p) > 3 || !allDigits(p) {
			return false
		}
		parts++
	}
	return parts == 4
}

func hasHostPort(t string) bool {
	for _, h := range [...]string{"localhost:", "127.0.0.1:", "0.0.0.0:", "[::1]:"} {
		if strings.HasPrefix(t, h) && len(t) > len(h) && isDigit(t[len(h)]) {
			return true
		}
	}
	return false
}

// symbolOf reports whether t is a code name: snake_case, camelCase, a
// compound PascalCase name (TokenStore, TestRefresh), a dotted name
// (pkg.Func, obj.method), or a name with call parentheses (total()). It
// returns the name without parentheses or arguments.
func symbolOf(t string, code, loose bool) (string, bool) {
	if i := strings.IndexByte(t, '('); i > 0 && t[len(t)-1] == ')' {
		t = t[:i]
		loose = true // a call is code
	}
	if len(t) < 2 || len(t) > 120 {
		return "", false
	}
	if !(isLetter(t[0]) || t[0] == '_' || t[0] == '$') {
		return "", false
	}
	var upper, lower, under, dots int
	camel := false
	for i := 0; i < len(t); i++ {
		c := t[i]
		switch {
		case c >= 'A' && c <= 'Z':
			upper++
			if i > 0 && (t[i-1] >= 'a' && t[i-1] <= 'z') {
				camel = true
			}
		case c >= 'a' && c <= 'z':
			lower++
		case isDigit(c):
		case c == '_':
			under++
		case c == '$':
		case c == '.':
			if i == 0 || i == len(t)-1 || t[i-1] == '.' {
				return "", false
			}
			dots++
		default:
			return "", false
		}
	}
	if upper+lower == 0 {
		return "", false
	}
	if len(t) <= 5 {
		var buf [5]byte
		if u := string(lowerASCII(buf[:0], t)); sizeUnits[u] || gluedUnits[u] {
			return "", false // kB, MiB, ms
		}
	}
	if dots > 0 {
		if !dottedName(t, loose) {
			return "", false
		}
		return t, true
	}
	switch {
	case loose:
		return t, true
	case under > 0 && under < len(t) && upper+lower >= 2:
		return t, true
	case camel && lower > 0:
		// camelCase, or a compound PascalCase name; not CamelCase words
		// with a single capital (McDonald is rare; Total is a word).
		if t[0] >= 'a' && t[0] <= 'z' {
			return t, true
		}
		return t, upper >= 2
	}
	return "", false
}

// numberWithUnit reports the length of a number glued to its unit or
// currency at the start of t: $4,500, 30s, 250ms, 3.5GB, 80%, 2x. In code
// (tool output), only sizes and percentages count.
func numberWithUnit(t string, code bool) (int, bool) {
	i := 0
	currency := false
	if strings.HasPrefix(t, "$") {
		i, currency = 1, true
	} else if r, sz := utf8.DecodeRuneInString(t); r == '€' || r == '£' || r == '¥' || r == '₹' {
		i, currency = sz, true
	}
	start := i
	for i < len(t) && (isDigit(t[i]) || (t[i] == ',' || t[i] == '.') && i > start && i+1 < len(t) && isDigit(t[i+1])) {
		i++
	}
	if i == start {
		return 0, false
	}
	if currency {
		if code {
			return 0, false
		}
		j := i
		if j < len(t) && (t[j] == 'k' || t[j] == 'K' || t[j] == 'M' || t[j] == 'B') {
			j++
		}
		return j, true
	}
	unit := t[i:]
	if unit == "" {
		return 0, false
	}
	var buf [12]byte
	if len(unit) > len(buf) {
		return 0, false
	}
	u := string(lowerASCII(buf[:0], unit))
	if code {
		if sizeUnits[u] || u == "%" {
			return len(t), true
		}
		return 0, false
	}
	if gluedUnits[u] || sizeUnits[u] {
		return len(t), true
	}
	return 0, false
}

var sizeUnits = setOf(`b kb mb gb tb pb kib mib gib tib k m`)

var gluedUnits = setOf(`ns us µs ms s sec secs m min mins h hr hrs d w y % x px em rem pt dpi fps rps qps rpm hz khz mhz ghz
kbps mbps gbps °c °f kg g mg cm mm km ms/op ns/op b/op req/s rps`)

// unitWords follow a number as a separate word: "512 MB", "30 seconds",
// "3 retries". A number before any other word is bare and not listed.
var unitWords = setOf(`ns us ms s sec secs second seconds min mins minute minutes h hr hrs hour hours day days week weeks
month months year years b bytes kb mb gb tb kib mib gib tib kilobytes megabytes gigabytes % percent px req/s requests
rps qps rpm retries attempts times items rows records users connections workers threads goroutines cores cpus lines files
tests tokens characters chars ms/op ns/op b/op allocs/op concurrent replicas pods nodes shards partitions dollars usd eur`)

// sizeWords are the unit words that count in tool output.
var sizeWords = setOf(`b bytes kb mb gb tb kib mib gib tib % percent`)

// unitAfter returns the length of the white space and unit word (one of
// units) at the start of rest, 0 if none ("requests per minute" counts
// whole).
func unitAfter(rest string, units map[string]bool) int {
	i := 0
	for i < len(rest) && (rest[i] == ' ' || rest[i] == '\t') {
		i++
	}
	if i == 0 || i > 2 {
		return 0
	}
	j := i
	for j < len(rest) && !isSpace(rest[j]) {
		j++
	}
	w := trimToken(rest[i:j])
	if w == "" || len(w) > 12 {
		return 0
	}
	var buf [12]byte
	if !units[string(lowerASCII(buf[:0], w))] {
		return 0
	}
	end := i + strings.Index(rest[i:], w) + len(w)
	// "requests per minute", "MB per second"
	if tail := rest[end:]; strings.HasPrefix(tail, " per ") {
		k := end + 5
		m := k
		for m < len(rest) && isLetter(rest[m]) {
			m++
		}
		if m > k && m-k <= 8 {
			end = m
		}
	}
	return end
}

// isBareNumber reports whether t is digits with optional separators.
func isBareNumber(t string) bool {
	if t == "" || !isDigit(t[0]) {
		return false
	}
	for i := 0; i < len(t); i++ {
		if c := t[i]; !isDigit(c) && c != '.' && c != ',' {
			return false
		}
	}
	return isDigit(t[len(t)-1])
}

// isVersion: v1.2, v1.2.3-rc.1, 1.2.3, go1.22, 10.0.0.1.
func isVersion(t string) bool {
	s := t
	switch {
	case len(s) > 1 && (s[0] == 'v' || s[0] == 'V') && isDigit(s[1]):
		s = s[1:]
	case strings.HasPrefix(s, "go") && len(s) > 2 && isDigit(s[2]):
		s = s[2:]
	}
	if i := strings.IndexAny(s, "-+"); i > 0 {
		s = s[:i]
	}
	dots := 0
	if s == "" || !isDigit(s[0]) || !isDigit(s[len(s)-1]) {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case isDigit(c):
		case c == '.':
			if s[i-1] == '.' {
				return false
			}
			dots++
		default:
			return false
		}
	}
	if t[0] == 'v' || t[0] == 'V' || strings.HasPrefix(t, "go") {
		return dots >= 1
	}
	return dots >= 2
}

// isConstraintVersion: a version range of a manifest, ^1.2.3, ~1.2, >=0.110.
func isConstraintVersion(t string) bool {
	s := strings.TrimLeft(t, "^~>=<")
	if len(s) == len(t) || s == "" {
		return false
	}
	return isVersion(s) || strings.Count(s, ".") == 1 && isDigit(s[0]) && isDigit(s[len(s)-1]) && !strings.ContainsFunc(s, func(r rune) bool { return r != '.' && (r < '0' || r > '9') })
}

// isPinned: a package pinned to a version, lodash@4.17.21, requests==2.31.0.
func isPinned(t string) bool {
	if i := strings.LastIndexByte(t, '@'); i > 0 && i+1 < len(t) {
		v := t[i+1:]
		return isDigit(v[0]) || (v[0] == 'v' && len(v) > 1 && isDigit(v[1])) || v == "latest"
	}
	return false
}

// isHash: 7 to 40 (or 64) lower-case hex characters with a digit and a
// letter: a commit or a digest.
func isHash(t string) bool {
	if len(t) < 7 || (len(t) > 40 && len(t) != 64) {
		return false
	}
	digit, letter := false, false
	for i := 0; i < len(t); i++ {
		switch c := t[i]; {
		case isDigit(c):
			digit = true
		case c >= 'a' && c <= 'f':
			letter = true
		default:
			return false
		}
	}
	return digit && letter
}

// dashedHex reports whether t is an id of hex groups joined by dashes
// that is not a UUID: three groups or more, 24 hex digits or more, with
// digits and letters among them (a W3C trace context's
// "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", an X-Ray
// trace id's "1-5759e988-bd862e3fe1be46a994272793").
func dashedHex(t string) bool {
	if len(t) < 26 || len(t) > 100 {
		return false
	}
	groups, hex, run, digit, letter := 1, 0, 0, false, false
	for i := 0; i < len(t); i++ {
		c := t[i]
		switch {
		case c == '-':
			if run == 0 {
				return false
			}
			groups, run = groups+1, 0
			continue
		case isDigit(c):
			digit = true
		case c >= 'a' && c <= 'f', c >= 'A' && c <= 'F':
			letter = true
		default:
			return false
		}
		hex++
		run++
	}
	return run > 0 && groups >= 3 && hex >= 24 && digit && letter
}

func isUUID(t string) bool {
	if len(t) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		c := t[i]
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if c != '-' {
				return false
			}
			continue
		}
		if !isDigit(c) && !(c >= 'a' && c <= 'f') && !(c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

var notTickets = setOf(`UTF ISO SHA MD AES RSA HTTP TLS SSL COVID IPV4 IPV6 X H P ES ECMA CVE-`)

// isErrorCode: an error code as tools print it: an errno name
// (ECONNREFUSED, ENOENT), a Node.js code (ERR_MODULE_NOT_FOUND), or a
// compiler's or linter's code (E0308, TS2345, CS0246, SC2086, F401).
func isErrorCode(t string) bool {
	if len(t) > 40 {
		return false
	}
	if strings.HasPrefix(t, "ERR_") && len(t) > 5 {
		for i := 4; i < len(t); i++ {
			if c := t[i]; !(c >= 'A' && c <= 'Z' || isDigit(c) || c == '_') {
				return false
			}
		}
		return true
	}
	letters := 0
	for letters < len(t) && t[letters] >= 'A' && t[letters] <= 'Z' {
		letters++
	}
	if letters == len(t) {
		// An errno name: E and at least four capitals, not a word.
		return t[0] == 'E' && len(t) >= 5 && len(t) <= 16 && !notErrno[t]
	}
	digits := t[letters:]
	return letters >= 1 && letters <= 5 && len(digits) >= 3 && len(digits) <= 6 && allDigits(digits) &&
		!notCodePrefix[t[:letters]]
}

// Capitals that are words rather than errno names, and prefixes of
// names that are not error codes (SHA256, ISO8601).
var (
	notErrno      = setOf(`ERROR ERRORS EXPECTED EXAMPLE EXPORT ENABLE ENABLED EXECUTE EXISTS ENTRY EVENT EVENTS EMPTY EXTRA EXTERNAL`)
	notCodePrefix = setOf(`SHA MD UTF ISO RFC HTTP X Q V T P`)
)

// isTicket: an issue key such as BILL-231 or GH-12.
// isPrefixedID reports whether t is an object id with a type prefix:
// req_7Hk2mQ9x, ord_gBzbxhp9, cus_N3x8aP2q. The prefix is two to eight
// lower-case letters; the rest, six or more letters and digits with a
// digit, not a word (user_id2 and page_10 are names).
func isPrefixedID(t string) bool {
	i := strings.IndexByte(t, '_')
	if i < 2 || i > 8 || len(t)-i-1 < 6 || len(t) > 64 {
		return false
	}
	for j := 0; j < i; j++ {
		if c := t[j]; c < 'a' || c > 'z' {
			return false
		}
	}
	digit := false
	for j := i + 1; j < len(t); j++ {
		c := t[j]
		if !(isLetter(c) || isDigit(c)) {
			return false
		}
		digit = digit || isDigit(c)
	}
	return digit
}

func isTicket(t string) bool {
	i := strings.IndexByte(t, '-')
	if i < 2 || i > 10 || i == len(t)-1 || len(t)-i-1 > 7 {
		return false
	}
	for j := 0; j < i; j++ {
		if c := t[j]; !(c >= 'A' && c <= 'Z' || j > 0 && isDigit(c)) {
			return false
		}
	}
	if !allDigits(t[i+1:]) {
		return false
	}
	return !notTickets[t[:i]]
}

// isAdvisory reports whether t names a security advisory: CVE-2024-44247,
// GHSA-v32w-h8x8-7fxg.
func isAdvisory(t string) bool {
	switch {
	case strings.HasPrefix(t, "CVE-") && len(t) >= 13 && len(t) <= 20:
		year, num, ok := strings.Cut(t[4:], "-")
		return ok && len(year) == 4 && allDigits(year) && len(num) >= 4 && allDigits(num)
	case strings.HasPrefix(t, "GHSA-") && len(t) == 19:
		for _, part := range strings.Split(t[5:], "-") {
			if len(part) != 4 {
				return false
			}
		}
		return strings.Count(t, "-") == 3
	}
	return false
}

// isKey: a name that may be assigned in text or a command line: NAME,
// name, --flag, -f, a.b.
func isKey(k string) bool {
	k = strings.TrimLeft(k, "-")
	if k == "" || !(isLetter(k[0]) || k[0] == '_') {
		return false
	}
	for i := 0; i < len(k); i++ {
		if c := k[i]; !(isLetter(c) || isDigit(c) || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// isValue: the value of a key=value setting, without quotes or brackets.
func isValue(v string) bool {
	if v == "" {
		return false
	}
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '"', '\'', '[', ']', '{', '}', '(', ')', '<', '>', '`', '=':
			return false
		}
	}
	return true
}

// isEnvKey: an environment variable or a long flag, as assigned in code
// or output: PORT, DATABASE_URL, --timeout.
func isEnvKey(k string) bool {
	if strings.HasPrefix(k, "--") {
		return isKey(k)
	}
	if len(k) < 2 || !(k[0] >= 'A' && k[0] <= 'Z') {
		return false
	}
	for i := 0; i < len(k); i++ {
		if c := k[i]; !(c >= 'A' && c <= 'Z' || isDigit(c) || c == '_') {
			return false
		}
	}
	return true
}

// Error lines.

var errPrefixes = []string{"panic: ", "fatal error: ", "fatal: ", "error: ", "Error: ", "ERROR: ", "ERROR ", "[ERROR] ",
	"error[", "npm ERR! ", "Uncaught ", "FAILED ", "FAIL: ", "ERROR in ", "Segmentation fault", "thread '", "E   ",
	"Exception in thread ", "Error response from daemon: ", "[  FAILED  ] ", "Failure/Error: ", "SUMMARY: AddressSanitizer",
	"SUMMARY: ThreadSanitizer", "SUMMARY: UndefinedBehaviorSanitizer", "SUMMARY: MemorySanitizer", "SUMMARY: LeakSanitizer",
	"Caused by: ", "e: ", "** (", "error • "}

// errPhrases mark an error line of output or an error quoted as code.
var errPhrases = []string{"undefined: ", "cannot use ", "not enough arguments", "too many arguments", "declared and not used",
	"imported and not used", "no such file or directory", "permission denied", "nil pointer dereference",
	"index out of range", "is not defined", "is not a function", "cannot read propert", "unexpected token",
	"connection refused", "command not found", "module not found", "cannot find module", "no module named",
	"address already in use", "out of memory", "segmentation fault", "syntax error", "mismatched types",
	"deadline exceeded", "runtime error: ", "econnrefused", "eaddrinuse", "enoent", "does not exist on type", "is not assignable to",
	"missing return", "undefined reference", "has no attribute", "takes 1 positional argument", "unresolved reference",
	"cannot find symbol", "non-zero exit", "exited with code", "timed out", "status code 5", "401 unauthorized",
	"403 forbidden", "500 internal server error", "502 bad gateway", "503 service unavailable",
	// Structured logs: logfmt and JSON lines at error level.
	"level=error", "level=fatal", "level=panic", "lvl=eror", "lvl=error", "lvl=crit", "severity=error",
	`"level":"error"`, `"level":"fatal"`, `"severity":"error"`}

// errorText returns the error message a line carries, cut to
// maxLineIdent at a word boundary, or "". strict (prose) takes only lines
// shaped like errors (a prefix such as "Error: ", an exception name, a
// compiler location); otherwise error phrases count too.
func errorText(t string, strict bool) string {
	t = strings.TrimSpace(t)
	if len(t) < 6 {
		return ""
	}
	if strings.HasPrefix(t, "E  ") || strings.HasPrefix(t, "E\t") {
		t = strings.TrimSpace(t[1:]) // pytest's marker
	}
	if n := sanitizerMark(t); n > 0 {
		t = strings.TrimSpace(t[n:]) // ==31337==ERROR: AddressSanitizer: ...
		if t == "" {
			return "" // Valgrind's "==31337==" between its records
		}
	}
	if strings.HasPrefix(t, "--- FAIL: ") {
		msg := t
		if i := strings.Index(msg, " ("); i > 0 {
			msg = msg[:i]
		}
		return cutLine(msg)
	}
	if t == "FAIL" || strings.HasPrefix(t, "FAIL\t") || strings.HasPrefix(t, "FAIL ") {
		// Go's summary line (FAIL pkg 0.01s) says nothing more; a test
		// runner's names the test (FAIL src/a.test.ts > case).
		if strings.Contains(t, " > ") || strings.Contains(t, "::") || strings.HasPrefix(t[4:], " - ") {
			return cutLine(t) // or Zephyr's ztest: " FAIL - test_x in 0.02 seconds"
		}
		return ""
	}
	for _, p := range errPrefixes {
		if strings.HasPrefix(t, p) {
			if p == "npm ERR! " && (strings.Contains(t, "A complete log") || strings.HasSuffix(t, "ERR!")) {
				return ""
			}
			return cutLine(t)
		}
	}
	if compilerStyle(t) || exceptionShape(t) || runnerFailure(t) || rubyRaise(t) {
		return cutLine(t)
	}
	if strict || len(t) > 1000 {
		return ""
	}
	if c := t[0]; c == '/' && len(t) > 1 && (t[1] == '/' || t[1] == '*') || c == '#' && len(t) > 1 && t[1] == ' ' {
		return "" // a comment
	}
	var buf [1000]byte
	low := lowerASCII(buf[:0], t)
	for i := 0; i+1 < len(low); i++ {
		if !phraseStart[int(low[i])<<8|int(low[i+1])] {
			continue
		}
		for _, p := range phraseStarts[[2]byte{low[i], low[i+1]}] {
			if len(low)-i >= len(p) && string(low[i:i+len(p)]) == p {
				return cutLine(t)
			}
		}
	}
	return ""
}

// phraseStarts indexes errPhrases by their first two bytes, so that a
// line is matched against all of them in one pass.
var phraseStarts = func() map[[2]byte][]string {
	m := map[[2]byte][]string{}
	for _, p := range errPhrases {
		k := [2]byte{p[0], p[1]}
		m[k] = append(m[k], p)
		phraseStart[int(p[0])<<8|int(p[1])] = true
	}
	return m
}()

// phraseStart marks the byte pairs that start an error phrase.
var phraseStart [1 << 16]bool

// compilerStyle: file.go:12:5: msg, file_test.go:57: msg, a.ts(12,5):
// error TS2322: msg, src/a.ts:12:5 - error TS2322: msg.
func compilerStyle(t string) bool {
	i := strings.IndexByte(t, ':')
	if p := strings.IndexByte(t, '('); p > 0 && (i < 0 || p < i) {
		// a.ts(12,5): error
		if q := strings.Index(t[p:], "): error"); q > 0 && hasKnownExt(t[:p]) {
			return true
		}
		return false
	}
	if i <= 0 || i+1 >= len(t) || !isDigit(t[i+1]) {
		return false
	}
	file := t[:i]
	if strings.IndexByte(file, ' ') >= 0 || !hasKnownExt(file) {
		return false
	}
	j := i + 1
	for j < len(t) && isDigit(t[j]) {
		j++
	}
	nums := 1
	if j+1 < len(t) && t[j] == ':' && isDigit(t[j+1]) {
		j++
		for j < len(t) && isDigit(t[j]) {
			j++
		}
		nums = 2
	}
	rest := t[j:]
	var msg string
	switch {
	case strings.HasPrefix(rest, ": "):
		msg = rest[2:]
		if nums == 1 && len(msg) > 0 && (msg[0] == ' ' || msg[0] == '\t') {
			return false // grep -n of an indented line
		}
	case strings.HasPrefix(rest, " - "):
		msg = rest[3:]
	default:
		return false
	}
	msg = strings.TrimSpace(msg)
	if msg == "" {
		return false
	}
	var buf [64]byte
	head := msg
	if len(head) > 64 {
		head = head[:64]
	}
	lh := string(lowerASCII(buf[:0], head))
	if strings.HasPrefix(lh, "warning") || strings.HasPrefix(lh, "note") || strings.HasPrefix(lh, "info") || strings.HasPrefix(lh, "hint") {
		return false
	}
	if nums == 2 {
		return true
	}
	// file:line: msg is also how grep -n prints an indented line: a test
	// file's log line or an error-sounding message only.
	low := strings.ToLower(file)
	if strings.Contains(low, "test") || strings.Contains(low, "spec") {
		return true
	}
	lm := strings.ToLower(msg)
	for _, w := range []string{"error", "fail", "expected", "want", "got ", "undefined", "cannot", "invalid", "panic", "mismatch"} {
		if strings.Contains(lm, w) {
			return true
		}
	}
	return false
}

// exceptionShape: TypeError: msg, pkg.errors.NotFound: msg,
// AssertionError [ERR_ASSERTION]: msg, Ruby's Mysql2::Error: msg, PHP's
// Illuminate\Database\QueryException: msg, and how Rails logs an
// exception, "ActiveRecord::RecordNotUnique (msg):".
func exceptionShape(t string) bool {
	i := strings.IndexByte(t, ':')
	for i > 0 && i+1 < len(t) && t[i+1] == ':' {
		// Ruby's and C++'s scopes: Mysql2::Error.
		j := strings.IndexByte(t[i+2:], ':')
		if j < 0 {
			i = -1
			break
		}
		i += 2 + j
	}
	if p := strings.Index(t, " ("); p > 0 && (i < 0 || p < i) {
		if strings.HasSuffix(t, "):") {
			i = p // Rails: Name (message):
		} else if q := strings.IndexByte(t[p:], ')'); q > 0 && strings.HasPrefix(t[p+q:], "): ") {
			i = p // .NET: Name (0x80131904): message
		}
	}
	if i <= 0 || i > 80 {
		return false
	}
	name := t[:i]
	if j := strings.IndexByte(name, '['); j > 0 && name[len(name)-1] == ']' {
		name = strings.TrimSuffix(name[:j], " ") // MongoServerError[Code], AssertionError [ERR_X]
	}
	if name == "" || !isLetter(name[0]) {
		return false
	}
	if bracketCode(t[:i]) != "" && name == strings.ToUpper(name) {
		return true // SQLSTATE[23000]: Integrity constraint violation
	}
	for k := 0; k < len(name); k++ {
		if c := name[k]; !(isLetter(c) || isDigit(c) || c == '_' || c == '.' || c == '$' || c == ':' || c == '\\') {
			return false
		}
	}
	if i+1 < len(t) && t[i+1] != ' ' && t[i] != ' ' {
		return false
	}
	if dot := strings.LastIndexByte(name, '.'); dot > 0 && monologLevels[name[dot+1:]] {
		return true // Monolog's "production.ERROR: message" (Laravel, Symfony)
	}
	if strings.Contains(name, "::") {
		// Rails' errors are named for what went wrong, not "Error":
		// ActiveRecord::RecordNotFound.
		last := name[strings.LastIndex(name, "::")+2:]
		for _, suf := range []string{"NotFound", "NotUnique", "Invalid", "Timeout", "Denied", "Unauthorized", "Forbidden"} {
			if strings.HasSuffix(last, suf) && len(last) > len(suf) {
				return true
			}
		}
	}
	for _, suf := range []string{"Error", "Exception", "Exit", "Interrupt", "Fault", "Failure", "Panic", "Rejection"} {
		if strings.HasSuffix(name, suf) && len(name) > len(suf) || name == "Error" {
			return true
		}
	}
	return false
}

// bracketCode returns the error class and code a field of an error line
// opens with, "SQLSTATE[23000]" of "SQLSTATE[23000]:", or
// "MongoServerError[QueryExceededMemoryLimit]", or "".
func bracketCode(f string) string {
	f = strings.TrimRight(f, ":,")
	i := strings.IndexByte(f, '[')
	if i < 2 || !strings.HasSuffix(f, "]") || len(f) > maxIdent {
		return ""
	}
	name, code := f[:i], f[i+1:len(f)-1]
	if code == "" || !isLetter(name[0]) {
		return ""
	}
	for j := 0; j < len(code); j++ {
		if c := code[j]; !(isLetter(c) || isDigit(c) || c == '_' || c == '-' || c == '.') {
			return ""
		}
	}
	upper := true
	for j := 0; j < len(name); j++ {
		if c := name[j]; !(c >= 'A' && c <= 'Z' || isDigit(c) || c == '_') {
			upper = false
		}
		if c := name[j]; !(isLetter(c) || isDigit(c) || c == '_') {
			return ""
		}
	}
	if !upper && !strings.HasSuffix(name, "Error") && !strings.HasSuffix(name, "Exception") {
		return ""
	}
	return f
}

// monologLevels are the levels of Monolog's "channel.LEVEL:" lines that
// report a failure.
var monologLevels = setOf(`ERROR CRITICAL ALERT EMERGENCY`)

// rubyRaise reports whether a line is the first of an uncaught Ruby
// exception's report: the frame that raised it, what it says and its
// class, "config/x.rb:11:in 'Hash#fetch': key not found: \"K\" (KeyError)".
func rubyRaise(t string) bool {
	i := strings.Index(t, ":in ")
	if i <= 0 || !strings.HasSuffix(t, ")") {
		return false
	}
	j := strings.Index(t[i:], "': ")
	k := strings.LastIndex(t, " (")
	if j < 0 || k < i+j {
		return false
	}
	name := t[k+2 : len(t)-1]
	return name != "" && name[0] >= 'A' && name[0] <= 'Z' && !strings.ContainsAny(name, " \t")
}

// cutLine cuts a line to maxLineIdent bytes at a word boundary; the result
// is a prefix of the line, so it stays verbatim.
func cutLine(t string) string {
	t = strings.TrimSpace(t)
	if i := strings.IndexByte(t, '\n'); i >= 0 {
		t = strings.TrimSpace(t[:i])
	}
	if len(t) <= maxLineIdent {
		return t
	}
	cut := maxLineIdent
	for cut > 0 && !utf8.RuneStart(t[cut]) {
		cut--
	}
	if sp := strings.LastIndexByte(t[:cut], ' '); sp > maxLineIdent/2 {
		cut = sp
	}
	return strings.TrimRight(t[:cut], " ,;:")
}

// Declarations and stack frames.

var declPrefixes = []string{"func ", "type ", "def ", "async def ", "class ", "function ", "async function ",
	"export function ", "export async function ", "export default function ", "export class ", "export default class ",
	"export interface ", "export type ", "interface ", "fn ", "pub fn ", "pub async fn ", "async fn ", "pub struct ",
	"struct ", "impl ", "export const ", "const ", "let ", "var ", "public class ", "public interface "}

// declared returns the name a line of code declares (func Name(, def
// name(, class Name, const name = ...), or "". A const, let or var counts
// only for a name shaped like code (camelCase, snake_case).
func declared(t string) string {
	if len(t) < 6 || !isLetter(t[0]) {
		return ""
	}
	for _, p := range declPrefixes {
		if !strings.HasPrefix(t, p) {
			continue
		}
		rest := t[len(p):]
		if p == "func " && strings.HasPrefix(rest, "(") {
			j := strings.IndexByte(rest, ')')
			if j < 0 {
				return ""
			}
			rest = strings.TrimSpace(rest[j+1:])
		}
		j := 0
		for j < len(rest) && (isLetter(rest[j]) || isDigit(rest[j]) || rest[j] == '_' || rest[j] == '$') {
			j++
		}
		name := rest[:j]
		if len(name) < 3 || !(isLetter(name[0]) || name[0] == '_') || keywords[name] {
			return ""
		}
		if p == "const " || p == "let " || p == "var " || p == "export const " || p == "type " {
			if _, ok := symbolOf(name, true, false); !ok && !(p == "type " && name[0] >= 'A' && name[0] <= 'Z') {
				return ""
			}
		}
		return name
	}
	return ""
}

var keywords = setOf(`func type def class function const let var return if else for while new async await struct
interface impl self this true false nil null None True False string int bool any error`)

// frameSymbol returns the function of a stack frame line: "at fn
// (file.js:1:2)", `File "a.py", line 3, in fn`, or Go's
// "pkg.(*T).Method(0x1, ...)".
func frameSymbol(t string) string {
	if _, fn := otherFrame(t); fn != "" {
		return fn
	}
	switch {
	case strings.HasPrefix(t, "at "):
		r := strings.TrimPrefix(strings.TrimPrefix(t[3:], "async "), "new ")
		i := strings.Index(r, " (")
		if i <= 0 {
			return ""
		}
		name := r[:i]
		if strings.ContainsAny(name, "<> /") {
			return ""
		}
		if _, ok := symbolOf(name, true, true); ok {
			return name
		}
		return ""
	case strings.HasPrefix(t, "File \""):
		if i := strings.LastIndex(t, ", in "); i > 0 {
			name := strings.TrimSpace(t[i+5:])
			if _, ok := symbolOf(name, true, true); ok {
				return name
			}
		}
		return ""
	}
	// Go: a frame is a call with its arguments and nothing after them.
	if t[len(t)-1] != ')' || !isLetter(t[0]) || strings.IndexByte(t, ' ') >= 0 {
		return ""
	}
	depth, open := 0, -1
	for i := len(t) - 1; i >= 0; i-- {
		if t[i] == ')' {
			depth++
		} else if t[i] == '(' {
			depth--
			if depth == 0 {
				open = i
				break
			}
		}
	}
	if open <= 0 {
		return ""
	}
	name := t[:open]
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	if !strings.Contains(name, ".") || len(name) > 120 {
		return ""
	}
	return name
}

// Commands.

var commandWords = setOf(`go git gh npm npx yarn pnpm node deno bun python python3 pip pip3 pytest poetry uv cargo rustc
rustup make cmake docker docker-compose podman kubectl helm terraform curl wget ls cat grep rg sed awk find rm mv cp mkdir
touch chmod chown cd tsc jest vitest eslint prettier gofmt goimports golangci-lint staticcheck psql sqlite3 mysql
redis-cli ssh scp rsync tar unzip head tail wc jq bash sh zsh mvn gradle java javac ruby bundle rake rails dotnet swift
xcodebuild brew apt apt-get systemctl journalctl ps kill pkill lsof env export sudo diff patch black ruff mypy flake8
isort tox alembic django-admin flask uvicorn gunicorn just bazel nix pre-commit pnpx ng vite webpack esbuild rollup
hyperfine ab wrk k6 gcloud aws az heroku fly vercel netlify openssl dig nc ping tree less sort uniq xargs tee`)

// isCommand reports whether a line reads as a shell command: its first
// word (after sudo, env assignments and "cd dir &&") is a known program,
// with at least one argument.
func isCommand(c string) bool {
	c = strings.TrimSpace(c)
	for {
		w, rest, ok := strings.Cut(c, " ")
		if !ok {
			return false
		}
		switch {
		case w == "sudo" || w == "time" || w == "env":
			c = strings.TrimSpace(rest)
			continue
		case strings.IndexByte(w, '=') > 0 && isEnvKey(w[:strings.IndexByte(w, '=')]):
			c = strings.TrimSpace(rest)
			continue
		}
		w = strings.TrimPrefix(w, "./")
		return commandWords[w] && strings.TrimSpace(rest) != ""
	}
}

// Character helpers.

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isLower(c byte) bool  { return c >= 'a' && c <= 'z' }

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

func hasLetter(s string) bool {
	for i := 0; i < len(s); i++ {
		if isLetter(s[i]) || s[i] >= utf8.RuneSelf {
			return true
		}
	}
	return false
}

func lowerASCII(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

func setOf(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// stamped reports whether a log prefix holds a time of day or a date.
func stamped(prefix string) bool {
	for i := 0; i < len(prefix); i++ {
		if isDigit(prefix[i]) && (i == 0 || !isDigit(prefix[i-1])) && clockLen(prefix[i:]) > 0 {
			return true
		}
	}
	return false
}

// logPrefix returns the length of what a log collector put before the
// line a program printed, or 0: docker compose's "api-1  | " (v1's
// "api_1  | "), journald's "Nov 05 11:40:48 host java[935]: ", an ISO
// timestamp ("2024-11-05T10:48:57.129Z "), and tags in brackets that
// carry an id, a place or a timestamp (Rails' request id "[7006...] ",
// kubectl --prefix's "[pod/web-7d9/app] ", Monolog's "[2024-11-05
// 10:07:48] "). Prefixes may follow each other.
func logPrefix(t string) int {
	n := 0
	for {
		r := t[n:]
		k := composePrefix(r)
		if k == 0 {
			k = journalPrefix(r)
		}
		if k == 0 {
			k = timePrefix(r)
		}
		if k == 0 {
			k = tagPrefix(r)
		}
		if k == 0 {
			k = logcatPrefix(r)
		}
		if k == 0 {
			k = jobStepPrefix(r)
		}
		if k == 0 || n+k >= len(t) {
			return n
		}
		n += k
	}
}

// composePrefix: "api-1  | ", a compose service with its replica number,
// padded, then "| ".
func composePrefix(t string) int {
	i := 0
	for i < len(t) && (isLetter(t[i]) || isDigit(t[i]) || t[i] == '_' || t[i] == '-' || t[i] == '.') {
		i++
	}
	j := i
	for j > 0 && isDigit(t[j-1]) {
		j--
	}
	if j == i || j < 2 || t[j-1] != '-' && t[j-1] != '_' || i >= len(t) || t[i] != ' ' {
		return 0
	}
	for i < len(t) && t[i] == ' ' {
		i++
	}
	if !strings.HasPrefix(t[i:], "| ") && t[i:] != "|" {
		return 0
	}
	return min(i+2, len(t))
}

// journalPrefix: journald's and syslog's "Nov 05 11:40:48 host prog[935]: ".
func journalPrefix(t string) int {
	if len(t) < 16 || !months[t[:3]] || t[3] != ' ' || t[6] != ' ' || clockLen(t[7:15]) != 8 || t[15] != ' ' {
		return 0
	}
	r := t[16:]
	host, r, ok := strings.Cut(r, " ")
	if !ok || host == "" {
		return 0
	}
	prog, _, ok := strings.Cut(r, ": ")
	if !ok || prog == "" || strings.ContainsAny(prog, " \t") {
		return 0
	}
	return 16 + len(host) + 1 + len(prog) + 2
}

// logcatPrefix: Android's logcat in its default (threadtime) format,
// "02-04 09:04:38.853  9058  9058 E AndroidRuntime: ": a month and day,
// a time, the process and thread ids, a level letter and a tag.
func logcatPrefix(t string) int {
	if len(t) < 20 || !isDigit(t[0]) || !isDigit(t[1]) || t[2] != '-' || !isDigit(t[3]) || !isDigit(t[4]) || t[5] != ' ' {
		return 0
	}
	n := clockLen(t[6:])
	if n == 0 {
		return 0
	}
	f := strings.Fields(t[6+n:])
	if len(f) < 4 || !allDigits(f[0]) || !allDigits(f[1]) || len(f[2]) != 1 || !strings.Contains("VDIWEFA", f[2]) {
		return 0
	}
	// The tag runs to the first ": ", spaces and all.
	lvl := strings.Index(t[6+n:], " "+f[2]+" ")
	if lvl < 0 {
		return 0
	}
	i := 6 + n + lvl + 3
	j := strings.Index(t[i:], ": ")
	if j <= 0 || j > 64 {
		return 0
	}
	return i + j + 2
}

// jobStepPrefix: a CI log as GitHub's gh run view --log prints it, the
// job and the step before the time of each line, tab-separated
// ("build\tTest\t2025-02-04T11:51:13.5040000Z ").
func jobStepPrefix(t string) int {
	job, r, ok := strings.Cut(t, "\t")
	if !ok || job == "" || len(job) > 100 {
		return 0
	}
	step, r, ok := strings.Cut(r, "\t")
	if !ok || step == "" || len(step) > 200 {
		return 0
	}
	k := timePrefix(r)
	if k == 0 {
		return 0
	}
	return len(job) + 1 + len(step) + 1 + k
}

var months = setOf(`Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec`)

// timePrefix: an ISO date and time and a space ("2024-11-05T10:48:57.129Z ",
// "2024-11-05 10:48:57,129 ").
func timePrefix(t string) int {
	i := isoStamp(t)
	if i == 0 || i >= len(t) || t[i] != ' ' {
		return 0
	}
	return i + 1
}

// isoStamp returns the length of the ISO date and time that opens t (see
// clockLen), with its zone (Z, +02:00), or 0.
func isoStamp(t string) int {
	if len(t) < 19 || t[4] != '-' {
		return 0
	}
	i := clockLen(t)
	if i <= 10 {
		return 0 // a time alone, or a date alone
	}
	switch {
	case i < len(t) && t[i] == 'Z':
		i++
	case i < len(t) && (t[i] == '+' || t[i] == '-'):
		i++
		for i < len(t) && (isDigit(t[i]) || t[i] == ':') {
			i++
		}
	}
	return i
}

// tagPrefix: "[tag] " where the tag is one word that holds a digit or a
// slash (a request id, pod/name/container), not a level ("[ERROR]"), or
// a date and time as Monolog and many loggers write it
// ("[2024-11-05 10:07:48] ").
func tagPrefix(t string) int {
	if len(t) < 4 || t[0] != '[' {
		return 0
	}
	end := strings.IndexByte(t, ']')
	if end < 2 || end+1 >= len(t) || t[end+1] != ' ' {
		return 0
	}
	if tag := t[1:end]; isoStamp(tag) != len(tag) && (strings.ContainsAny(tag, " \t") || !strings.ContainsAny(tag, "0123456789/")) {
		return 0
	}
	return end + 2
}
