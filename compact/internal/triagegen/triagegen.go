// Package triagegen generates synthetic coding-agent sessions for
// measuring what a context compactor keeps. It is a held-out source: it
// was written without reading the compaction code or its documentation,
// from a description of the labels only, so the sessions are not shaped
// by what the compactor is known to keep. It reuses the neutral message
// types and the serializers of package opsgen.
//
// The session is an agent triaging and fixing bugs across a billing
// product built on other stacks than the sibling generators: a Kotlin
// backend built with Gradle and tested with JUnit 5, a Ruby on Rails
// admin app tested with RSpec, a C++ pricing library built with CMake and
// tested with ctest and GoogleTest (under AddressSanitizer), and an
// Elixir notifier tested with mix. The agent runs builds and tests that
// fail and pass, reads sanitizer reports, stack traces with "Caused by:"
// chains and failed health checks, calls local servers with curl and an
// HTTP client, queries MySQL and Redis, tails logs and journals, searches
// and reads many files, edits and writes some, and commits. Its user
// gives tasks with constraints, answers its questions with decisions and
// sometimes pastes an error or a link.
//
// Every identifier the generator plants is recorded as an opsgen.Label
// with the class of the place it was put:
//
//   - error_line: on a line of a tool output that the generator wrote as
//     the report of a failure (the failing test, the exception and its
//     message, stack and sanitizer frames, "Caused by:" lines, an HTTP
//     5xx status line, its error body and request id). Those lines are
//     the Result's ErrLines. A log or journal read that shows a failure
//     may have ErrLines while its command exited 0.
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
// substring of another one or of the generator's filler text. The kind
// says what the identifier is: url, hostport, code, site (file:line),
// test, hash, uuid, id, path, host, version, env, key or sql_state.
//
// The same seed and options give the same session, byte for byte.
package triagegen

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/strata-memory/strata/compact/internal/opsgen"
)

// Standard is a session of about 120 tool calls and 300-380k o200k tokens
// in the OpenAI form.
func Standard() opsgen.Options { return opsgen.Options{ToolCalls: 120, OutputScale: 3.4} }

// Long is a session of about 370 tool calls and 0.8-1.0M o200k tokens in
// the OpenAI form.
func Long() opsgen.Options { return opsgen.Options{ToolCalls: 360, OutputScale: 3.0} }

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
	size  int             // bytes of text written so far
	adj   float64         // steers the output scale toward the session's size
}

func newGen(seed uint64, o opsgen.Options) *gen {
	g := &gen{
		seed: seed,
		r:    rand.New(rand.NewPCG(seed, seed^0x7472696167656e31)),
		o:    o,
		tr:   &opsgen.Transcript{System: systemPrompt},
		ids:  map[string]bool{},
		adj:  1,
	}
	g.reg.static = staticText()
	g.reg.seen = map[string]bool{}
	g.now = time.Date(2024, time.November, 4+int(seed%20), 8, 40+int(seed%17), 0, 0, time.UTC)
	g.w = newWorld(g)
	return g
}

const systemPrompt = `You are a software engineering agent working in the Quire billing monorepo at /home/dev/quire on a Linux workstation with access to a staging environment.

The repository holds:
- billing/: the Kotlin backend (Gradle multi-project: common, invoicing, ledger, payments, api), JUnit 5 tests, Flyway migrations, Spring Boot.
- admin/: the Ruby on Rails admin app (RSpec, MySQL through mysql2, Sidekiq on Redis).
- pricing/: the C++17 pricing library (CMake, GoogleTest through ctest; the build-asan tree is configured with AddressSanitizer).
- notifier/: the Elixir webhook and e-mail notifier (mix, ExUnit).
- deploy/: compose files, systemd units, nginx configuration and rollout scripts.

Tools:
- bash: run a shell command; returns its combined output. The exit status is reported with the result.
- read_file: read a file; lines are numbered.
- write_file: create or overwrite a file with the given content.
- replace_in_file: replace one exact occurrence of old_text with new_text in a file.
- http_request: send an HTTP request and return the status line, headers and body.

Work in small verified steps: reproduce a problem before changing code, run the relevant tests after each change, and keep changes minimal. Follow the user's constraints. Do not push to main or touch production. Ask when a decision belongs to the user. Keep explanations short.`

// registry keeps planted identifiers unique: none is a substring of
// another, of the fixed vocabularies, or of a random filler token.
type registry struct {
	static string          // the fixed vocabularies, joined
	labels []string        // planted identifiers other than paths
	paths  []string        // planted paths: later filler may name them
	filler []string        // random tokens of unlabelled text
	seen   map[string]bool // every string planted or drawn
}

// labelFree says s can be planted.
func (r *registry) labelFree(s string) bool {
	if r.seen[s] || strings.Contains(r.static, s) {
		return false
	}
	for _, l := range r.labels {
		if strings.Contains(l, s) || strings.Contains(s, l) {
			return false
		}
	}
	for _, p := range r.paths {
		if strings.Contains(p, s) || strings.Contains(s, p) {
			return false
		}
	}
	for _, f := range r.filler {
		if strings.Contains(f, s) {
			return false
		}
	}
	return true
}

// fillerFree says s holds no planted identifier (paths aside).
func (r *registry) fillerFree(s string) bool {
	for _, l := range r.labels {
		if strings.Contains(s, l) {
			return false
		}
	}
	return true
}

// plant draws identifiers from mk until one is free, records it as a
// label of class c and kind, and returns it.
func (g *gen) plant(c opsgen.Class, kind string, mk func() string) string {
	for range 2000 {
		s := mk()
		if !g.reg.labelFree(s) {
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
	panic("triagegen: no free identifier of kind " + kind)
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

// errOnce plants text, already written on an error line, as an error
// label if it is free (a fixed text, such as a SQL state, is planted
// once).
func (g *gen) errOnce(kind, text string) {
	if g.reg.labelFree(text) {
		g.plant(opsgen.ErrorLine, kind, func() string { return text })
	}
}

// fill draws a random token for unlabelled text: one that holds no
// planted identifier. Later identifiers are drawn outside it.
func (g *gen) fill(mk func() string) string {
	for range 2000 {
		s := mk()
		if g.reg.fillerFree(s) {
			if !g.reg.seen[s] {
				g.reg.seen[s] = true
				g.reg.filler = append(g.reg.filler, s)
			}
			return s
		}
	}
	panic("triagegen: no free filler token")
}

// out is a tool output being written: its lines, the lines that report
// a failure, the exit status.
type out struct {
	lines []string
	errs  []int
	exit  int
	read  bool
}

// add appends filler lines (s may hold several, split at "\n").
func (o *out) add(s string) { o.lines = append(o.lines, strings.Split(s, "\n")...) }

// addf appends a formatted filler line.
func (o *out) addf(format string, a ...any) { o.add(fmt.Sprintf(format, a...)) }

// err appends lines that report the failure.
func (o *out) err(s string) {
	for _, l := range strings.Split(s, "\n") {
		o.errs = append(o.errs, len(o.lines))
		o.lines = append(o.lines, l)
	}
}

// errf appends a formatted failure line.
func (o *out) errf(format string, a ...any) { o.err(fmt.Sprintf(format, a...)) }

func (o *out) text() string { return strings.Join(o.lines, "\n") }

// tcall is a tool call about to be made: its name, arguments, and what
// writes its output.
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
		g.tick(20, 150)
	}
	g.tr.Messages = append(g.tr.Messages, msg, opsgen.Message{Role: "tool", Results: res})
	g.tr.ToolCalls = g.calls
}

// say appends an assistant message without calls.
func (g *gen) say(text string) {
	g.size += len(text)
	g.tr.Messages = append(g.tr.Messages, opsgen.Message{Role: "assistant", Text: text})
}

// user appends a user message.
func (g *gen) user(text string) {
	g.size += len(text)
	g.tr.Messages = append(g.tr.Messages, opsgen.Message{Role: "user", Text: text})
	g.tick(60, 600)
}

// callID draws an id of letters only: no planted identifier, all of
// which hold a digit or a punctuation mark, can be part of one.
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
func (g *gen) tick(lo, hi int) { g.now = g.now.Add(time.Duration(lo+g.r.IntN(hi-lo+1)) * time.Second) }

// scale returns n scaled by the output scale, at least 1.
func (g *gen) scale(n int) int { return max(1, int(float64(n)*g.sc()+0.5)) }

// sc is the output scale in force: the options' scale, steered.
func (g *gen) sc() float64 { return g.o.OutputScale * g.adj }

// bytesPerCall is about how much text a session holds per tool call at
// output scale 1.
const bytesPerCall = 2450

// steer sets the scale of the next outputs so that the session ends
// near bytesPerCall × OutputScale a call: which tasks a seed draws, and
// how long their outputs happen to be, would otherwise swing its size
// by a third. The outputs left to write share what is left of the
// budget.
func (g *gen) steer() {
	unit := bytesPerCall * g.o.OutputScale
	budget := float64(g.o.ToolCalls)*unit - float64(g.size)
	left := float64(max(g.o.ToolCalls-g.calls, 8))
	g.adj = min(2.5, max(0.4, budget/(left*unit)))
}

// pick returns one of xs.
func pick[T any](g *gen, xs ...T) T { return xs[g.r.IntN(len(xs))] }

// chance is true with probability p.
func (g *gen) chance(p float64) bool { return g.r.Float64() < p }

// between returns an int in [lo, hi].
func (g *gen) between(lo, hi int) int { return lo + g.r.IntN(hi-lo+1) }

// shell, read, write, replace and request build the calls of the tools.
func shell(cmd string, run func(o *out)) tcall {
	return tcall{name: "bash", args: []opsgen.Arg{{Key: "command", Value: cmd}}, run: run}
}

func readCall(path string, run func(o *out)) tcall {
	return tcall{name: "read_file", args: []opsgen.Arg{{Key: "path", Value: path}}, run: func(o *out) {
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
		o.addf("Replaced 1 occurrence in %s (%d lines changed)", path, strings.Count(repl, "\n")+1)
	}}
}

func requestCall(method, url, body string, run func(o *out)) tcall {
	args := []opsgen.Arg{{Key: "method", Value: method}, {Key: "url", Value: url}}
	if body != "" {
		args = append(args, opsgen.Arg{Key: "headers", Value: `{"Content-Type": "application/json", "Authorization": "Bearer $QUIRE_STAGING_TOKEN"}`}, opsgen.Arg{Key: "body", Value: body})
	}
	return tcall{name: "http_request", args: args, run: run}
}
