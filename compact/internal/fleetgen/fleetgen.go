// Package fleetgen generates synthetic coding-agent sessions for
// measuring what a context compactor keeps. It is a held-out source: it
// was written without reading the compaction code or its documentation,
// from a description of the labels only. It reuses the neutral message
// types and the serializers of package opsgen.
//
// The session is an agent maintaining Rookery, a field-service product
// built on other stacks than the sibling generators: a C#/.NET 8 service
// (MSBuild, xUnit, EF Core migrations on SQL Server, ASP.NET Core logs),
// a Flutter/Dart technician app (flutter test, flutter analyze, dart pub)
// with its Android host (adb logcat crashes and ANR traces), and the
// operations around them: Ansible playbooks, GitHub Actions jobs, an
// HAProxy front end and Azure (az) resources. The agent builds and tests,
// reads failures and logs, reads and searches many files, edits and
// writes some, verifies and commits. Its user gives tasks with
// constraints, answers its questions with decisions and sometimes pastes
// an error or a link.
//
// Every identifier the generator plants is an opsgen.Label with the
// class of the place it was put:
//
//   - error_line: on a line of a tool output written as the report of a
//     failure (the failing test, the exception and its message, stack
//     frames, inner exceptions, a 5xx status line, an error body, a
//     request or correlation id, the failing host). Those lines are the
//     Result's ErrLines; a log read that shows a failure may have them
//     while its command exited 0.
//   - passing_output: in the output of a command or read that succeeded,
//     off any error line.
//   - file_written: the path of a file the session creates, or an
//     identifier of content written or edited.
//   - user_turn: in a user message.
//
// An identifier of error_line, passing_output or user_turn occurs only in
// places of its class, and one of file_written content only in the
// arguments of the write that put it; a written path may be named later.
// No planted identifier is a substring of another or of filler text. The
// agent never repeats an error_line identifier in its text or commands.
//
// The same seed and options give the same session, byte for byte.
package fleetgen

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/strata-memory/strata/compact/internal/opsgen"
)

// Standard is a session of about 120 tool calls and 300-380k o200k tokens
// in the OpenAI form.
func Standard() opsgen.Options { return opsgen.Options{ToolCalls: 120, OutputScale: 6.0} }

// Long is a session of about 360 tool calls and 0.8-1.0M o200k tokens in
// the OpenAI form.
func Long() opsgen.Options { return opsgen.Options{ToolCalls: 360, OutputScale: 5.5} }

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

// gen is the state of one generated session.
type gen struct {
	seed  uint64
	r     *rand.Rand
	o     opsgen.Options
	tr    *opsgen.Transcript
	reg   registry
	w     *world
	now   time.Time
	calls int
	ids   map[string]bool // call ids drawn
	size  int             // bytes written so far
	adj   float64         // steers the output scale toward the session's size
}

func newGen(seed uint64, o opsgen.Options) *gen {
	g := &gen{
		seed: seed,
		r:    rand.New(rand.NewPCG(seed, seed^0x666c656574676e31)),
		o:    o,
		tr:   &opsgen.Transcript{System: systemPrompt},
		ids:  map[string]bool{},
		adj:  1,
	}
	g.reg.static = staticText()
	g.reg.seen = map[string]bool{}
	g.now = time.Date(2025, time.February, 3+int(seed%20), 9, 5+int(seed%41), 0, 0, time.UTC)
	g.w = newWorld(g)
	return g
}

const systemPrompt = `You are a coding agent working in the Rookery repository at /home/dev/rookery on a Linux workstation. Rookery schedules field-service visits for technicians.

The repository holds:
- server/: the .NET 8 service (Rookery.sln: Rookery.Api, Rookery.Domain, Rookery.Infrastructure with EF Core on SQL Server; xUnit test projects under server/tests).
- mobile/: the Flutter technician app (package rookery_field), its Android host under mobile/android.
- ops/: Ansible playbooks and inventories, the HAProxy configuration, Azure notes.
- .github/workflows/: the CI jobs.

Tools:
- shell: run a command; returns its output, and its exit status with the result.
- read_file: read a file; lines are numbered.
- write_file: create or overwrite a file with the given content.
- replace_in_file: replace one exact occurrence of old_text with new_text in a file.
- grep: search files for a pattern; prints path:line:text.
- http: send an HTTP request; returns the status line, headers and body.

Reproduce a problem before changing code, run the relevant tests after each change, keep changes small and follow the user's constraints. Never push to main or change production without being asked. Ask when a decision belongs to the user. Keep explanations short.`

// registry keeps planted identifiers apart: none is a substring of
// another, of the fixed text, or of a random filler token.
type registry struct {
	static string          // fixed vocabularies and templates, joined
	labels []string        // planted identifiers other than paths
	paths  []string        // planted paths: later text may name them
	filler []string        // random tokens of unlabelled text
	seen   map[string]bool // every string planted or drawn
}

// free says s can be planted.
func (r *registry) free(s string) bool {
	if r.seen[s] || strings.Contains(r.static, s) {
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

// clean says filler s holds no planted identifier other than a path.
func (r *registry) clean(s string) bool {
	for _, l := range r.labels {
		if strings.Contains(s, l) {
			return false
		}
	}
	return true
}

// plant draws from mk until a free identifier comes, and records it as a
// label of class c.
func (g *gen) plant(c opsgen.Class, kind string, mk func() string) string {
	for range 3000 {
		s := mk()
		if !g.reg.free(s) {
			continue
		}
		g.reg.seen[s] = true
		if kind == "path" {
			g.reg.paths = append(g.reg.paths, s)
		} else {
			g.reg.labels = append(g.reg.labels, s)
		}
		g.tr.Labels = append(g.tr.Labels, opsgen.Label{Text: s, Class: c, Kind: kind})
		return s
	}
	panic("fleetgen: no free identifier of kind " + kind)
}

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

// errFixed plants a fixed text, such as an error number, the first time
// an error line shows it; later error lines may repeat it.
func (g *gen) errFixed(kind, s string) string {
	if g.reg.free(s) {
		g.plant(opsgen.ErrorLine, kind, func() string { return s })
	}
	return s
}

// fill draws a random token for unlabelled text, one holding no planted
// identifier; later identifiers are drawn outside it.
func (g *gen) fill(mk func() string) string {
	for range 3000 {
		s := mk()
		if g.reg.clean(s) {
			if !g.reg.seen[s] {
				g.reg.seen[s] = true
				g.reg.filler = append(g.reg.filler, s)
			}
			return s
		}
	}
	panic("fleetgen: no clean filler token")
}

// out is a tool output being written.
type out struct {
	lines []string
	errs  []int
	exit  int
	read  bool
}

// add appends filler lines (s may hold several).
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
	msg := opsgen.Message{Role: "assistant", Text: text}
	g.size += len(text)
	var res []opsgen.Result
	for _, c := range calls {
		id := g.callID()
		msg.Calls = append(msg.Calls, opsgen.Call{ID: id, Name: c.name, Args: c.args})
		o := &out{}
		if c.run != nil {
			c.run(o)
		}
		for _, a := range c.args {
			g.size += len(a.Value)
		}
		g.size += len(o.text())
		res = append(res, opsgen.Result{CallID: id, Output: o.text(), Exit: o.exit, Read: o.read, ErrLines: o.errs})
		g.calls++
		g.tick(15, 140)
	}
	g.tr.Messages = append(g.tr.Messages, msg, opsgen.Message{Role: "tool", Results: res})
	g.tr.ToolCalls = g.calls
}

// say appends an assistant message without calls; a user message must
// follow it.
func (g *gen) say(text string) {
	g.size += len(text)
	g.tr.Messages = append(g.tr.Messages, opsgen.Message{Role: "assistant", Text: text})
}

func (g *gen) user(text string) {
	g.size += len(text)
	g.tr.Messages = append(g.tr.Messages, opsgen.Message{Role: "user", Text: text})
	g.tick(90, 900)
}

// callID draws an id of letters only, so no identifier, each of which
// holds a digit or a mark, is part of one.
func (g *gen) callID() string {
	for {
		s := g.rs(letters, 24)
		if !g.ids[s] {
			g.ids[s] = true
			return s
		}
	}
}

func (g *gen) tick(lo, hi int) { g.now = g.now.Add(time.Duration(g.between(lo, hi)) * time.Second) }

// scale returns n scaled by the output scale in force, at least 1.
func (g *gen) scale(n int) int { return max(1, int(float64(n)*g.sc()+0.5)) }

func (g *gen) sc() float64 { return g.o.OutputScale * g.adj }

// bytesPerCall is about how much text a session holds per tool call at
// output scale 1.
const bytesPerCall = 1390

// steer sets the scale of the next outputs so the session ends near its
// budget: which tasks a seed draws would otherwise swing its size widely.
func (g *gen) steer() {
	unit := bytesPerCall * g.o.OutputScale
	budget := float64(g.o.ToolCalls)*unit - float64(g.size)
	left := float64(max(g.o.ToolCalls-g.calls, 8))
	g.adj = min(5, max(0.2, budget/(left*unit)))
}

func pick[T any](g *gen, xs ...T) T { return xs[g.r.IntN(len(xs))] }

func (g *gen) chance(p float64) bool { return g.r.Float64() < p }

func (g *gen) between(lo, hi int) int { return lo + g.r.IntN(hi-lo+1) }

// The calls of the agent's tools.

func shell(cmd string, run func(o *out)) tcall {
	return tcall{name: "shell", args: []opsgen.Arg{{Key: "command", Value: cmd}}, run: run}
}

func readCall(path string, run func(o *out)) tcall {
	return tcall{name: "read_file", args: []opsgen.Arg{{Key: "path", Value: path}}, run: func(o *out) {
		o.read = true
		run(o)
	}}
}

func grepCall(pattern, path string, run func(o *out)) tcall {
	return tcall{name: "grep", args: []opsgen.Arg{{Key: "pattern", Value: pattern}, {Key: "path", Value: path}}, run: func(o *out) {
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
		o.addf("Replaced 1 occurrence in %s", path)
	}}
}

func httpCall(method, url, body string, run func(o *out)) tcall {
	args := []opsgen.Arg{{Key: "method", Value: method}, {Key: "url", Value: url}}
	if body != "" {
		args = append(args, opsgen.Arg{Key: "headers", Value: `{"Content-Type": "application/json", "Authorization": "Bearer $ROOKERY_DEV_TOKEN"}`}, opsgen.Arg{Key: "body", Value: body})
	}
	return tcall{name: "http", args: args, run: run}
}
