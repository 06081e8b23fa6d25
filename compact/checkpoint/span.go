package checkpoint

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
)

// actKind is what a tool call does.
type actKind uint8

const (
	actOther actKind = iota
	actRead          // reads or searches: read_file, grep, glob, ls
	actWrite         // changes a file: edit_file, write_file, apply_patch
	actRun           // runs a shell command
)

// action is a tool call and its result.
type action struct {
	call, result int // entry indexes; result is -1 when the span has none
	tool         string
	kind         actKind
	command      string   // the shell command ("" if none), its first line
	paths        []string // path arguments
	gone         []string // paths the call deletes or renames away
	failed       bool     // the result is an error or shows error lines
	errLine      string   // the first error line of the result
	// outcome is what the result shows of a check (a test, build or lint
	// run): only what the writer read counts.
	outcome outcome
}

// outcome is the result of a check, as its output shows it.
type outcome uint8

const (
	outUnknown outcome = iota // no output, or one cleared before the writer read it
	outPassed
	outFailed
)

// spanInfo is what the ledger and the extractive writer both need to know
// about a span: tool calls paired with their results, and the outcome of
// each.
type spanInfo struct {
	entries []Entry
	// skip marks entries that are themselves a checkpoint (the summary
	// message of an earlier compaction); earlier is the last one's text.
	skip    []bool
	earlier string
	args    []map[string]any // per entry: a tool call's parsed arguments
	actions []action
	act     []int32 // per entry: index of its action, -1 if none
	// Per tool result: its first error line and how many it has.
	firstErr []string
	errs     []int32
}

// Argument names of tool calls, by what they hold.
var (
	commandKeys = setOf(`command cmd script shell_command commandline command_line`)
	pathKeys    = setOf(`path file_path filepath file filename file_name target_file notebook_path old_path new_path
source destination src dst dir directory cwd workdir working_directory relative_path target abs_path absolute_path`)
	urlKeys     = setOf(`url uri endpoint href link`)
	patternKeys = setOf(`pattern query regex glob search search_term include name symbol`)
	contentKeys = setOf(`content contents old_string new_string old_str new_str file_text text patch diff code insert
new_source source_code body input edits replacement`)
)

func analyze(span []Entry) *spanInfo {
	span = unwrapped(span)
	n := len(span)
	si := &spanInfo{entries: span, skip: make([]bool, n), args: make([]map[string]any, n), act: make([]int32, n),
		firstErr: make([]string, n), errs: make([]int32, n)}
	pendingByID := map[string]int{}
	pendingByName := map[string][]int{}
	var pendingAll []int
	for i, e := range span {
		si.act[i] = -1
		switch e.Kind {
		case "tool_call":
			a := action{call: i, result: -1, tool: strings.ToLower(e.Name)}
			var v any
			if json.Unmarshal([]byte(e.Text), &v) == nil {
				if m, ok := v.(map[string]any); ok {
					si.args[i] = m
				}
			}
			a.describe(si.args[i], e.Text)
			si.actions = append(si.actions, a)
			ai := len(si.actions) - 1
			si.act[i] = int32(ai)
			if e.CallID != "" {
				pendingByID[e.CallID] = ai
			}
			pendingByName[a.tool] = append(pendingByName[a.tool], ai)
			pendingAll = append(pendingAll, ai)
		case "tool_result":
			ai := -1
			if e.CallID != "" {
				if x, ok := pendingByID[e.CallID]; ok {
					ai = x
					delete(pendingByID, e.CallID)
				}
			}
			if ai < 0 {
				q := pendingByName[strings.ToLower(e.Name)]
				if e.Name == "" {
					q = pendingAll
				}
				for _, x := range q {
					if si.actions[x].result < 0 {
						ai = x
						break
					}
				}
			}
			if ai >= 0 && si.actions[ai].result < 0 {
				si.actions[ai].result = i
				si.act[i] = int32(ai)
			}
		default:
			if (e.Role == "user" || e.Role == "assistant") && isCheckpointText(e.Text) {
				si.skip[i] = true
				si.earlier = e.Text
			}
		}
	}
	return si
}

// outcomes sets each action's failed and errLine from its result, once
// the collector has counted the results' error lines.
func (si *spanInfo) outcomes() {
	for i := range si.actions {
		a := &si.actions[i]
		if a.result < 0 {
			continue
		}
		res := si.entries[a.result]
		a.failed = res.IsError || si.errs[a.result] > 0
		a.errLine = si.firstErr[a.result]
		if a.command == "" || !isCheck(a.command) {
			continue
		}
		read := res.Text
		items, cleared := clearedDigest(read)
		if cleared {
			read = items // what the digest kept of it
		}
		marker := failureLine(read)
		switch {
		case a.failed || marker != "":
			a.failed, a.outcome = true, outFailed
			if a.errLine == "" {
				a.errLine = marker
			}
		case cleared:
			a.outcome = outUnknown
		default:
			a.outcome = outPassed
		}
	}
}

// isCleared reports whether a tool result is a placeholder left where an
// output was cleared (by strata's pruning or an agent's own: "[Tool
// output cleared ...]", "[Old tool result content cleared]"), with or
// without a digest of what it held.
func isCleared(text string) bool {
	t := strings.TrimSpace(text)
	if !strings.HasPrefix(t, "[") {
		return false
	}
	end := strings.IndexByte(t, ']')
	if end < 0 || end > 120 {
		return false
	}
	head := strings.ToLower(t[:end])
	return strings.Contains(head, "cleared") || strings.Contains(head, "removed") || strings.Contains(head, "omitted")
}

// outputFailed returns what scanOutput asks of a tool's output text: did
// it fail? isErr (its tool said so) answers at once; otherwise
// failureLine is read, once, when first asked, so that the head and the
// tail of a long output (scanBounded) share the answer.
func outputFailed(text string, isErr bool) func() bool {
	asked, failed := false, isErr
	return func() bool {
		if !asked && !failed {
			asked, failed = true, failureLine(text) != ""
		}
		return failed
	}
}

// unwrapExit reads a tool output a harness wrapped with its exit status
// in JSON, as Codex CLI's older shell tool does: {"output": text,
// "metadata": {"exit_code": n, ...}}. It returns the text, whether the
// status is not zero, and whether output was such a wrapper.
func unwrapExit(output string) (text string, failed, ok bool) {
	t := strings.TrimSpace(output)
	if len(t) < 20 || t[0] != '{' || t[len(t)-1] != '}' || !strings.Contains(t, `"metadata"`) || !strings.Contains(t, `"exit_code"`) {
		return output, false, false
	}
	var w struct {
		Output   *string `json:"output"`
		Metadata *struct {
			ExitCode *int `json:"exit_code"`
		} `json:"metadata"`
	}
	if json.Unmarshal([]byte(t), &w) != nil || w.Output == nil || w.Metadata == nil || w.Metadata.ExitCode == nil {
		return output, false, false
	}
	return *w.Output, *w.Metadata.ExitCode != 0, true
}

// unwrapped returns span with its tool results' wrapped outputs (see
// unwrapExit) unwrapped, a wrapper's non-zero status marking its result
// failed: span itself when it holds none.
func unwrapped(span []Entry) []Entry {
	var out []Entry
	for i, e := range span {
		if e.Kind != "tool_result" && e.Role != "tool" {
			continue
		}
		text, failed, ok := unwrapExit(e.Text)
		if !ok {
			continue
		}
		if out == nil {
			out = append([]Entry(nil), span...)
		}
		out[i].Text, out[i].IsError = text, e.IsError || failed
	}
	if out == nil {
		return span
	}
	return out
}

// failureLine returns the first line of a check's output that says it
// failed, or "": a test runner's FAIL, FAILED or "N failed" summary, a
// panic, an error line, a traceback, npm ERR!, a non-zero exit status.
// It is stricter than a guess: a line must open with the marker, or
// report a count of failures or an exit status.
func failureLine(text string) string {
	found := ""
	scanBounded(text, func(s string) {
		for found == "" && len(s) > 0 {
			line := s
			if i := strings.IndexByte(s, '\n'); i >= 0 {
				line, s = s[:i], s[i+1:]
			} else {
				s = ""
			}
			t := strings.TrimSpace(strings.Trim(strings.TrimSpace(line), "=-*#"))
			if t == "" {
				continue
			}
			if failureMarked(t) {
				found = cutLine(strings.TrimSpace(line))
			}
		}
	})
	return found
}

var failurePrefixes = []string{"FAIL", "--- FAIL", "panic:", "fatal error:", "fatal:", "Error:", "error:", "ERROR",
	"error[", "Traceback (most recent call last)", "npm ERR!", "npm error", "Exception", "✗", "✖", "×", "FAILURE",
	"BUILD FAILED", "make: ***", "Segmentation fault"}

func failureMarked(t string) bool {
	for _, p := range failurePrefixes {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	// The head of a line is enough for a count or a status; it is
	// lowered in place, without an allocation.
	var buf [256]byte
	l := lowerASCII(buf[:0], t[:min(len(t), len(buf))])
	if i := bytes.Index(l, failedWord); i > 0 && isDigit(l[i-1]) {
		return nonZeroBefore(string(l[:i])) // pytest "1 failed", jest "2 failed"
	}
	if bytes.Contains(l, exitWord) {
		for _, p := range exitStatuses {
			if i := bytes.Index(l, p); i >= 0 {
				rest := l[i+len(p):]
				if len(rest) > 0 && isDigit(rest[0]) && !(rest[0] == '0' && (len(rest) == 1 || !isDigit(rest[1]))) {
					return true
				}
			}
		}
	}
	return false
}

var (
	failedWord = []byte(" failed")
	exitWord   = []byte("exit")
	// exitStatuses are the ways a harness or a tool writes a command's
	// exit status, lowered: "exit status 1", "Exit code: 2", "exited with
	// code 1", "exited with status 3", "Exit status: 1", JSON's
	// "exit_code": 1 and "exitCode": 1, and exit_code=1.
	exitStatuses = [][]byte{[]byte("exit status "), []byte("exit code "), []byte("exited with code "), []byte("exit code: "),
		[]byte("exited with status "), []byte("exit status: "), []byte(`exit_code":`), []byte(`exit_code": `),
		[]byte(`exitcode":`), []byte(`exitcode": `), []byte("exit_code="), []byte("exitcode=")}
)

// nonZeroBefore reports whether the digits that end s are not all zeros.
func nonZeroBefore(s string) bool {
	i := len(s)
	for i > 0 && isDigit(s[i-1]) {
		i--
	}
	return strings.Trim(s[i:], "0") != ""
}

// isCheckpointText reports whether a message is a checkpoint: at least
// four of the section headings, or the Goal and Critical Context ones.
func isCheckpointText(s string) bool {
	if len(s) < 40 || !strings.Contains(s, "Goal") || !strings.Contains(s, "Critical Context") {
		return false
	}
	_, info := parse(s)
	// Format leaves empty sections out: Goal and Critical Context are
	// always there.
	return info.headings >= 4 || info.seen[secGoal] && info.seen[secCritical]
}

// describe fills what a tool call does from its arguments.
func (a *action) describe(args map[string]any, raw string) {
	name := a.tool
	editorCmd := ""
	if strings.Contains(name, "editor") || name == "str_replace_based_edit_tool" {
		editorCmd, _ = args["command"].(string)
	}
	switch {
	case editorCmd != "":
		if editorCmd == "view" {
			a.kind = actRead
		} else {
			a.kind = actWrite
		}
	case containsAny(name, "edit", "write", "create", "patch", "replace", "insert", "save", "delete", "remove",
		"rename", "move", "update_file", "append"):
		a.kind = actWrite
	case containsAny(name, "bash", "shell", "terminal", "exec", "run", "command", "cmd", "powershell", "console"):
		a.kind = actRun
	case containsAny(name, "read", "view", "cat", "open", "grep", "search", "glob", "find", "list", "ls", "fetch", "get"):
		a.kind = actRead
	}
	if args == nil {
		if a.kind == actRun {
			a.command = firstLine(raw)
		}
		return
	}
	keys := sortedKeys(args)
	for _, k := range keys {
		lk := strings.ToLower(k)
		switch v := args[k].(type) {
		case string:
			switch {
			case commandKeys[lk] && editorCmd == "":
				if a.command == "" {
					a.command = firstLine(v)
				}
			case pathKeys[lk]:
				if p := strings.TrimSpace(v); p != "" && !strings.ContainsAny(p, "\n\r") && len(p) <= maxIdent {
					a.paths = append(a.paths, p)
				}
			}
		case []any:
			if commandKeys[lk] && a.command == "" {
				a.command = firstLine(argvCommand(v))
			}
		}
	}
	if a.command != "" && a.kind == actOther {
		a.kind = actRun
	}
	if len(a.paths) > 0 {
		switch {
		case containsAny(name, "delete", "remove"):
			a.gone = append(a.gone, a.paths...)
		case containsAny(name, "rename", "move"):
			a.gone = append(a.gone, a.paths[0])
		}
	}
	if a.command != "" {
		a.gone = append(a.gone, removedBy(a.command)...)
	}
}

// argvCommand joins a command given as an argument vector; bash -c
// "script" is the script.
func argvCommand(v []any) string {
	var parts []string
	for _, x := range v {
		if s, ok := x.(string); ok {
			parts = append(parts, s)
		}
	}
	if len(parts) >= 3 && (parts[0] == "bash" || parts[0] == "sh" || parts[0] == "zsh" || strings.HasSuffix(parts[0], "/bash") || strings.HasSuffix(parts[0], "/sh")) &&
		strings.HasPrefix(parts[1], "-") && strings.Contains(parts[1], "c") {
		return parts[len(parts)-1]
	}
	return strings.Join(parts, " ")
}

// removedBy returns the paths a shell command deletes (rm, git rm) or
// renames away (mv, git mv: the source).
func removedBy(cmd string) []string {
	var out []string
	for _, part := range splitShell(cmd) {
		f := strings.Fields(part)
		if len(f) > 0 && f[0] == "sudo" {
			f = f[1:]
		}
		if len(f) > 1 && f[0] == "git" && (f[1] == "rm" || f[1] == "mv") {
			f = f[1:]
		}
		if len(f) < 2 {
			continue
		}
		var args []string
		for _, x := range f[1:] {
			if !strings.HasPrefix(x, "-") {
				args = append(args, strings.Trim(x, `"'`))
			}
		}
		switch f[0] {
		case "rm":
			out = append(out, args...)
		case "mv":
			if len(args) >= 2 {
				out = append(out, args[:len(args)-1]...)
			}
		}
	}
	return out
}

// splitShell splits a command line at &&, || and ; (quotes are not
// parsed: good enough for finding rm and mv).
func splitShell(cmd string) []string {
	f := func(r rune) bool { return r == ';' || r == '&' || r == '|' || r == '\n' }
	return strings.FieldsFunc(cmd, f)
}

// checkCommands start the test, build and lint runs whose success marks
// earlier errors fixed.
var checkCommands = []string{"go test", "go build", "go vet", "pytest", "python -m pytest", "python3 -m pytest",
	"npm test", "npm run", "npx ", "yarn test", "yarn build", "yarn run", "pnpm test", "pnpm run", "pnpm build",
	"cargo test", "cargo build", "cargo check", "make", "tsc", "jest", "vitest", "mvn ", "gradle", "./gradlew",
	"dotnet test", "dotnet build", "ruff", "mypy", "eslint", "tox", "bazel test", "bazel build", "python -m unittest",
	"golangci-lint", "staticcheck"}

// isCheck reports whether a command runs tests, a build or a linter.
func isCheck(cmd string) bool {
	for _, part := range splitShell(cmd) {
		p := strings.TrimSpace(part)
		for _, c := range checkCommands {
			if strings.HasPrefix(p, c) {
				return true
			}
		}
	}
	return false
}

// checkScopes returns what a test or build command covers: the paths it
// names (without ./ and /...), or nil and true when it covers everything
// (no path, or ./...).
func checkScopes(cmd string) (scopes []string, all bool) {
	for _, f := range strings.Fields(cmd) {
		f = strings.Trim(f, `"'`)
		if f == "./..." || f == "..." {
			return nil, true
		}
		if strings.HasPrefix(f, "-") {
			continue
		}
		if p, ok := pathOf(f); ok || strings.HasPrefix(f, "./") {
			if !ok {
				p = f
			}
			p = normPath(p)
			p = strings.TrimSuffix(strings.TrimSuffix(p, "..."), "/")
			if p != "" {
				scopes = append(scopes, p)
			}
		}
	}
	return scopes, len(scopes) == 0
}

// normPath lower-cases a path and drops a leading ./ and a trailing /.
func normPath(p string) string {
	p = strings.ToLower(p)
	for strings.HasPrefix(p, "./") {
		p = p[2:]
	}
	return strings.TrimSuffix(p, "/")
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	return cutLine(s)
}

func containsAny(s string, subs ...string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
