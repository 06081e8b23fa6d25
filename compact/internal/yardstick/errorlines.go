package yardstick

import (
	"regexp"
	"strings"
)

// The yardstick's notion of an error line and of an identifier is its
// own, written without the checkpoint package's: a measure that used the
// code's classifier would move with the code it measures.

// errorWord matches a line that reports a failure: one of the words
// error, fail, failed, failure, failing, panic, panicked, exception,
// traceback, refused, denied or fatal (case-insensitive, as whole words,
// so "Errorf" or "ECONNREFUSED" alone do not count), an exit status or
// code other than 0, or an HTTP 5xx status.
var errorWord = regexp.MustCompile(`(?i)(?:^|[^a-z0-9_])(?:errors?|fail|failed|failure|failing|panic|panicked|exception|traceback|refused|denied|fatal)(?:$|[^a-z0-9_])|exit (?:status|code):? *[1-9][0-9]*|(?:HTTP/[0-9.]+|status:?) +5[0-9][0-9](?:$|[^0-9])`)

// stackFrame matches a line of a stack trace: a Go frame's file:line
// +0x offset, a Python frame's File "...", line N, or a JavaScript
// frame's "at ... (file:line:col)".
var stackFrame = regexp.MustCompile(`\.[a-z]+:[0-9]+ \+0x[0-9a-f]+\s*$|^\s*File "[^"]+", line [0-9]+|^\s+at .*:[0-9]+:[0-9]+\)?\s*$`)

// maxErrorLine is the longest line that counts as an error line, in
// bytes: a longer one is data (a JSON document on one line, a minified
// file), whose every identifier is not failure evidence because a word
// somewhere in it is "error".
const maxErrorLine = 1000

// ErrorLines returns the error lines of a tool output: each line of at
// most maxErrorLine bytes the errorWord rule matches, and, in an output
// that has one, each stack frame line.
func ErrorLines(output string) []string {
	lines := strings.Split(output, "\n")
	var out []string
	any := false
	for _, l := range lines {
		if len(l) <= maxErrorLine && errorWord.MatchString(l) {
			any = true
			out = append(out, l)
		}
	}
	if !any {
		return nil
	}
	for _, l := range lines {
		if !errorWord.MatchString(l) && stackFrame.MatchString(l) {
			out = append(out, l)
		}
	}
	return out
}

// identifier matches what the yardstick counts as an identifier: URLs,
// host:port pairs, file paths and file:line sites, error codes (E1234,
// TS2345, ECONNREFUSED), test names, hex hashes, UUIDs and prefixed ids
// (req_7Hk2mQ9x).
var identifier = regexp.MustCompile(strings.Join([]string{
	`[a-zA-Z][a-zA-Z0-9+.-]*://[^\s"'<>()\[\]{},;` + "`" + `]+`,
	`(?:localhost|[0-9]{1,3}(?:\.[0-9]{1,3}){3}|[a-zA-Z0-9-]+(?:\.[a-zA-Z0-9-]+)+):[0-9]{2,5}\b`,
	`(?:[\w.-]+/)*[\w-][\w.-]*\.(?:go|py|js|mjs|ts|tsx|jsx|rs|java|kt|rb|c|h|cc|cpp|cs|php|swift|json|ya?ml|toml|sql|md|golden|txt|sh|lock|proto)(?::[0-9]+(?::[0-9]+)?)?\b`,
	`\b[A-Z]{1,5}-?[0-9]{3,5}\b`,
	`\bE[A-Z]{4,}\b`,
	`\bTest[A-Z0-9_]\w*(?:/[\w.-]+)*`,
	`\btest_\w+`,
	`\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`,
	`\b[0-9a-f]{7,64}\b`,
	`\b[a-zA-Z]{2,8}_[A-Za-z0-9]*[0-9][A-Za-z0-9]*\b`,
}, "|"))

// Identifiers returns the identifiers of a line, once each, in order. A
// hex run needs a digit and a letter to count as a hash; a URL loses its
// trailing punctuation.
func Identifiers(line string) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range identifier.FindAllString(line, -1) {
		m = strings.TrimRight(m, ".,:;!?'\"")
		if isHex(m) && (!strings.ContainsAny(m, "0123456789") || !strings.ContainsAny(m, "abcdef")) {
			continue
		}
		if m == "" || seen[m] {
			continue
		}
		seen[m] = true
		out = append(out, m)
	}
	return out
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
