// Package shipgen generates synthetic, labelled coding-agent sessions for
// measuring what a context compactor keeps of a long session. It is a
// held-out source: it was written without reading the compactor, its
// documentation or its yardstick, from a description of the labels only,
// so what it plants is not shaped by what the compactor is known to keep.
// It reuses the neutral message types and the serializers of package
// opsgen.
//
// The session is an agent maintaining Tidewater, a parcel shipping
// product built on other stacks than the sibling generators: a Laravel 11
// API on PHP 8.3 (composer, artisan migrate, PHPUnit, the Laravel log), an
// iOS client and its Swift package (swift build, swift test, xcodebuild
// test, XCTest, crash reports with thread backtraces), a Vue front end
// built with Vite, unit-tested with Vitest, end-to-end tested with
// Playwright and linted with ESLint, and the infrastructure: Terraform on
// AWS, kubectl and Helm on a staging cluster, nginx in front of PHP-FPM,
// MongoDB (mongosh) for tracking events and Elasticsearch for shipment
// search. The agent runs builds and tests that fail and pass, reads
// stack traces, crash reports, pod events and logs, calls the API with an
// HTTP client, reads and searches many files, edits and writes some, and
// commits. Its user gives tasks with constraints, answers its questions
// with decisions and sometimes pastes an error or a link.
//
// Every identifier the generator plants is recorded as an opsgen.Label
// with the class of the place it was put:
//
//   - error_line: on a line of a tool output that the generator wrote as
//     the report of a failure (the failing test, the exception and its
//     message, stack frames of the project and of vendor code, "previous
//     exception" and "Caused by" lines, an HTTP 5xx status line, its error
//     body and request id, the failing resource and the cloud API's
//     request id, the crashed thread). Those lines are the Result's
//     ErrLines. A read of a log or a crash report, or a listing of pods,
//     that shows a failure may have ErrLines while it exited 0.
//   - passing_output: in the output of a command or read that succeeded,
//     off any error line.
//   - file_written: the path of a file the session creates (first named
//     by the write), or an identifier of the content written or edited.
//   - user_turn: in a user message.
//
// An identifier of error_line, passing_output or user_turn occurs only in
// places of its class, and an identifier of file_written content only in
// the arguments of the write that put it; a written path may also be
// named by later commands and their outputs. No planted identifier is a
// substring of another one or of the generator's filler text. The agent
// never repeats an error_line identifier in its text or its commands: it
// refers to what it saw in words, or selects by label and by file.
//
// The kind says what the identifier is: url, hostport, code (an
// application or provider error code), site (a source position: file:line
// or file:line:col, PHP's file(line) in PHP stack traces, or Terraform's
// "file line N"), test, hash, uuid, id, path, host, version, env, key or
// sql_state (a SQLSTATE or a driver's error class).
//
// The same seed and options give the same session, byte for byte.
package shipgen

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/strata-memory/strata/compact/internal/opsgen"
)

// Standard is a session of about 120 tool calls (120 to 135: the last
// task is finished) and 300-380k o200k tokens in the OpenAI form.
func Standard() opsgen.Options { return opsgen.Options{ToolCalls: 120, OutputScale: 5.0} }

// Long is a session of about 360 tool calls (360 to 390) and 0.8-1.0M
// o200k tokens in the OpenAI form.
func Long() opsgen.Options { return opsgen.Options{ToolCalls: 360, OutputScale: 4.3} }

// Generate returns the session of the seed.
func Generate(seed uint64, o opsgen.Options) *opsgen.Transcript {
	if o.ToolCalls < 1 {
		o.ToolCalls = 1
	}
	if o.OutputScale <= 0 {
		o.OutputScale = 1
	}
	g := newGen(seed, o)
	g.session()
	return g.tr
}

// gen is the state of one session being written.
type gen struct {
	seed  uint64
	r     *rand.Rand
	o     opsgen.Options
	tr    *opsgen.Transcript
	reg   registry
	w     *world
	now   time.Time
	calls int
	ids   map[string]bool // tool call ids drawn
	size  int             // bytes written so far
	adj   float64         // steers the output scale toward the session's size
}

func newGen(seed uint64, o opsgen.Options) *gen {
	g := &gen{
		seed: seed,
		r:    rand.New(rand.NewPCG(seed, seed^0x73686970676e3031)),
		o:    o,
		tr:   &opsgen.Transcript{System: systemPrompt},
		ids:  map[string]bool{},
		adj:  1,
	}
	g.reg.fixed = fixedText()
	g.reg.seen = map[string]bool{}
	g.now = time.Date(2024, time.November, 4+int(seed%18), 9, 5+int(seed%41), 0, 0, time.UTC)
	g.w = newWorld(g)
	return g
}

// root is where the product's repository is checked out.
const root = "/Users/dev/src/tidewater"

const systemPrompt = `You are a software engineering agent working in the Tidewater repository at /Users/dev/src/tidewater on a macOS workstation. kubectl, helm and Terraform are configured for the staging environment (AWS eu-west-1, namespace tidewater-staging); production is out of bounds.

Tidewater is a parcel shipping product. The repository holds:
- api/: the Laravel 11 API on PHP 8.3 (composer, artisan, PHPUnit 11; MariaDB on staging, SQLite in tests, queues on SQS). It logs to storage/logs/laravel.log.
- ios/: the iOS app (Tidewater.xcodeproj, scheme Tidewater) and the TidewaterKit Swift package (swift build, swift test, XCTest).
- web/: the customer dashboard in Vue 3 and TypeScript, built with Vite, unit tests in Vitest, end-to-end tests in Playwright, linted with ESLint.
- infra/: Terraform for AWS (envs/staging and modules), the Helm chart of the API and its workers, the nginx configuration of the API pods.
- data/: mongosh scripts for the tracking event store (MongoDB) and the Elasticsearch templates of shipment search.

Tools:
- bash: run a shell command in the repository; returns its combined output and exit status.
- read_file: read a file; lines are numbered.
- write_file: create or overwrite a file with the given content.
- replace_in_file: replace one exact occurrence of old_text with new_text in a file.
- search: search file contents with a regular expression (ripgrep); returns path:line:text matches.
- http_request: send an HTTP request; returns the status line, headers and body.

Work in small verified steps: reproduce a problem before changing code, run the relevant tests after each change, and keep changes minimal. Follow the user's constraints. Never push to main, never apply to production. Ask when a decision belongs to the user. Keep explanations short.`

// registry keeps planted identifiers apart: none is a substring of
// another, of the fixed text of the generator, or of a filler token.
type registry struct {
	fixed  string          // the fixed vocabularies, joined
	labels []string        // planted identifiers other than paths
	paths  []string        // written paths, which filler may name
	filler []string        // random tokens of unlabelled text
	seen   map[string]bool // every token planted or drawn
}

// free says s can be planted.
func (r *registry) free(s string) bool {
	// An identifier holds a digit or a punctuation mark, so that no word
	// of the agent's prose can be one.
	if s == "" || r.seen[s] || strings.Contains(r.fixed, s) || !strings.ContainsAny(s, "0123456789-_.:/()[]") {
		return false
	}
	for _, xs := range [][]string{r.labels, r.paths} {
		for _, l := range xs {
			if strings.Contains(l, s) || strings.Contains(s, l) {
				return false
			}
		}
	}
	for _, f := range r.filler {
		if strings.Contains(f, s) {
			return false
		}
	}
	return true
}

// clean says filler s holds no planted identifier (paths aside, which
// later commands may name).
func (r *registry) clean(s string) bool {
	for _, l := range r.labels {
		if strings.Contains(s, l) {
			return false
		}
	}
	return true
}

// plant draws from mk until the text is free, records it as a label of
// class c and kind, and returns it.
func (g *gen) plant(c opsgen.Class, kind string, mk func() string) string {
	for range 4000 {
		s := mk()
		if !g.reg.free(s) {
			continue
		}
		g.reg.seen[s] = true
		// Only a written path may be named again by later text.
		if kind == "path" && c == opsgen.FileWritten {
			g.reg.paths = append(g.reg.paths, s)
		} else {
			g.reg.labels = append(g.reg.labels, s)
		}
		g.tr.Labels = append(g.tr.Labels, opsgen.Label{Text: s, Class: c, Kind: kind})
		return s
	}
	panic("shipgen: no free identifier of kind " + kind)
}

// errID, passID, fileID and userID plant an identifier of their class.
func (g *gen) errID(kind string, mk func() string) string {
	return g.plant(opsgen.ErrorLine, kind, mk)
}

func (g *gen) passID(kind string, mk func() string) string {
	return g.plant(opsgen.PassingOutput, kind, mk)
}

func (g *gen) fileID(kind string, mk func() string) string {
	return g.plant(opsgen.FileWritten, kind, mk)
}

func (g *gen) userID(kind string, mk func() string) string {
	return g.plant(opsgen.UserTurn, kind, mk)
}

// errFixed plants a fixed text, such as a SQLSTATE, that the caller
// writes on an error line; it is planted once, the first time it is free.
func (g *gen) errFixed(kind, text string) string {
	if g.reg.free(text) {
		g.plant(opsgen.ErrorLine, kind, func() string { return text })
	}
	return text
}

// fill draws a random token for unlabelled text, one that holds no
// planted identifier; identifiers planted later are drawn outside it.
func (g *gen) fill(mk func() string) string {
	for range 4000 {
		s := mk()
		if !g.reg.clean(s) {
			continue
		}
		if !g.reg.seen[s] {
			g.reg.seen[s] = true
			g.reg.filler = append(g.reg.filler, s)
		}
		return s
	}
	panic("shipgen: no clean filler token")
}

// out is a tool output being written: its lines, which of them report a
// failure, and the exit status.
type out struct {
	lines []string
	errs  []int
	exit  int
	read  bool
}

// add appends lines of context (s may hold several, split at "\n").
func (o *out) add(s string) { o.lines = append(o.lines, strings.Split(s, "\n")...) }

func (o *out) addf(format string, a ...any) { o.add(fmt.Sprintf(format, a...)) }

// err appends lines that report the failure.
func (o *out) err(s string) {
	for _, l := range strings.Split(s, "\n") {
		o.errs = append(o.errs, len(o.lines))
		o.lines = append(o.lines, l)
	}
}

func (o *out) errf(format string, a ...any) { o.err(fmt.Sprintf(format, a...)) }

func (o *out) text() string { return strings.Join(o.lines, "\n") }

// tcall is a tool call about to be made.
type tcall struct {
	name string
	args []opsgen.Arg
	run  func(o *out)
}

// round appends an assistant message with text and calls, then the
// message of their results.
func (g *gen) round(text string, calls ...tcall) {
	g.steer()
	g.size += len(text)
	msg := opsgen.Message{Role: "assistant", Text: text}
	var res []opsgen.Result
	for _, c := range calls {
		id := g.callID()
		msg.Calls = append(msg.Calls, opsgen.Call{ID: id, Name: c.name, Args: c.args})
		o := &out{}
		if c.run != nil {
			c.run(o)
		}
		for _, a := range c.args {
			g.size += len(a.Value) + len(a.Key)
		}
		txt := o.text()
		g.size += len(txt)
		res = append(res, opsgen.Result{CallID: id, Output: txt, Exit: o.exit, Read: o.read, ErrLines: o.errs})
		g.calls++
		g.tick(15, 140)
	}
	g.tr.Messages = append(g.tr.Messages, msg, opsgen.Message{Role: "tool", Results: res})
	g.tr.ToolCalls = g.calls
}

// say appends an assistant message without calls: an answer, or a
// question the user answers next.
func (g *gen) say(text string) {
	g.size += len(text)
	g.tr.Messages = append(g.tr.Messages, opsgen.Message{Role: "assistant", Text: text})
}

// user appends a user message.
func (g *gen) user(text string) {
	g.size += len(text)
	g.tr.Messages = append(g.tr.Messages, opsgen.Message{Role: "user", Text: text})
	g.tick(90, 900)
}

// callID draws a call id of letters only, so that no planted identifier
// (each holds a digit or a punctuation mark) can be part of one.
func (g *gen) callID() string {
	for {
		s := g.rs(letters, 24)
		if !g.ids[s] {
			g.ids[s] = true
			return s
		}
	}
}

// tick moves the clock on by lo to hi seconds.
func (g *gen) tick(lo, hi int) {
	g.now = g.now.Add(time.Duration(g.between(lo, hi)) * time.Second)
}

// bytesPerCall is about how much text a session holds per tool call at
// output scale 1.
const bytesPerCall = 1630

// steer sets the scale of the next outputs so that the session ends near
// bytesPerCall × OutputScale a call: the tasks a seed draws, and the
// length of their outputs, would otherwise swing its size by a third.
// What is left of the budget is shared by the calls left to make; a
// session still well short of it when its calls are made takes one more
// task (see session).
func (g *gen) steer() {
	unit := bytesPerCall * g.o.OutputScale
	left := float64(max(g.o.ToolCalls-g.calls, 10))
	budget := float64(g.o.ToolCalls)*unit - float64(g.size)
	g.adj = min(2.4, max(0.35, budget/(left*unit)))
}

// sc is the output scale in force.
func (g *gen) sc() float64 { return g.o.OutputScale * g.adj }

// scale returns n scaled by the output scale in force, at least 1.
func (g *gen) scale(n int) int { return max(1, int(float64(n)*g.sc()+0.5)) }

// pick returns one of xs.
func pick[T any](g *gen, xs ...T) T { return xs[g.r.IntN(len(xs))] }

func (g *gen) chance(p float64) bool { return g.r.Float64() < p }

// between returns an int in [lo, hi].
func (g *gen) between(lo, hi int) int { return lo + g.r.IntN(hi-lo+1) }

// The calls of the agent's tools.

func shell(cmd string, run func(o *out)) tcall {
	return tcall{name: "bash", args: []opsgen.Arg{{Key: "command", Value: cmd}}, run: run}
}

func readCall(path string, run func(o *out)) tcall {
	return tcall{name: "read_file", args: []opsgen.Arg{{Key: "path", Value: path}}, run: func(o *out) {
		o.read = true
		run(o)
	}}
}

func searchCall(pattern, path, glob string, run func(o *out)) tcall {
	args := []opsgen.Arg{{Key: "pattern", Value: pattern}, {Key: "path", Value: path}}
	if glob != "" {
		args = append(args, opsgen.Arg{Key: "glob", Value: glob})
	}
	return tcall{name: "search", args: args, run: func(o *out) {
		o.read = true
		run(o)
	}}
}

func writeCall(path, content string) tcall {
	return tcall{name: "write_file", args: []opsgen.Arg{{Key: "path", Value: path}, {Key: "content", Value: content}}, run: func(o *out) {
		o.addf("Wrote %d bytes to %s", len(content), path)
	}}
}

func replaceCall(path, old, repl string) tcall {
	return tcall{name: "replace_in_file", args: []opsgen.Arg{{Key: "path", Value: path}, {Key: "old_text", Value: old}, {Key: "new_text", Value: repl}}, run: func(o *out) {
		o.addf("Replaced 1 occurrence in %s (+%d -%d lines)", path, strings.Count(repl, "\n")+1, strings.Count(old, "\n")+1)
	}}
}

func requestCall(method, url, headers, body string, run func(o *out)) tcall {
	args := []opsgen.Arg{{Key: "method", Value: method}, {Key: "url", Value: url}}
	if headers != "" {
		args = append(args, opsgen.Arg{Key: "headers", Value: headers})
	}
	if body != "" {
		args = append(args, opsgen.Arg{Key: "body", Value: body})
	}
	return tcall{name: "http_request", args: args, run: run}
}
