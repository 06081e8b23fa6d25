// Package streamgen generates synthetic coding-agent sessions with
// labelled identifiers, as a held-out test source for strata's context
// compaction. It was written without reading the compaction code or its
// documentation, from the label contract only: the neutral types and
// serializers of opsgen and the meaning of the four label classes.
//
// A session follows an agent that maintains Eddy, the streaming analytics
// product of an invented company, Marlow Labs. Its monorepo holds Scala
// 2.13 and Scala 3 modules built with sbt and tested with ScalaTest, an
// Apache Spark rollup job run on Dataproc, Kafka consumers and producers,
// Airflow DAGs, a dbt project on BigQuery, ClickHouse migrations, a Cloud
// Run ingest service, a Bazel build of one module and a Nix flake. The
// agent compiles and tests, reads compiler errors, ScalaTest failures,
// Spark driver logs, Kafka broker logs and consumer group tables, Airflow
// task logs, dbt runs, ClickHouse exceptions, gcloud and bq errors, Bazel
// and Nix build failures; it reads and searches many files, edits and
// writes some, verifies and commits. Its user gives tasks with
// constraints, answers the agent's questions with decisions and sometimes
// pastes an error or a link.
//
// Every identifier the generator plants is labelled with the class of the
// place it was put:
//
//   - error_line: on one of the lines of a tool output that report a
//     failure (Result.ErrLines): the message and exception, stack frames
//     and causes, the failing test or task, an error body, the failing
//     host or request id;
//   - passing_output: in the output of a command or read that succeeded,
//     off its failure lines;
//   - file_written: the path of a file the session creates, or an
//     identifier of the content it writes or edits (a written path may be
//     named again later, the rest never);
//   - user_turn: in a message of the user.
//
// An identifier of error_line, passing_output or user_turn occurs in
// places of its class only, never in the agent's own text or commands, and
// no planted identifier is a substring of another. Generate gives the same
// session, byte for byte, for the same seed and options.
package streamgen

import (
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	"github.com/strata-memory/strata/compact/internal/opsgen"
)

// Standard sizes a session of about 120 tool calls and 300k-380k o200k
// tokens in the OpenAI form.
func Standard() opsgen.Options { return opsgen.Options{ToolCalls: 118, OutputScale: 1.82} }

// Long sizes a session of about 340-420 tool calls and 0.8M-1.0M o200k
// tokens in the OpenAI form.
func Long() opsgen.Options { return opsgen.Options{ToolCalls: 356, OutputScale: 1.9} }

// Generate returns the session of the seed, sized by o.
func Generate(seed uint64, o opsgen.Options) *opsgen.Transcript {
	g := newGen(seed, o)
	g.run()
	g.prune()
	return &g.t
}

// gen holds the state of one session being generated.
type gen struct {
	r      *rand.Rand
	o      opsgen.Options
	t      opsgen.Transcript
	byText map[string]int
	now    time.Time
	w      *world
	// dropped counts labels removed by prune because their text also
	// landed in a place of another class.
	dropped int
	// bytes counts the bytes of the call arguments and outputs so far.
	bytes int
}

func newGen(seed uint64, o opsgen.Options) *gen {
	if o.ToolCalls <= 0 {
		o.ToolCalls = Standard().ToolCalls
	}
	if o.OutputScale <= 0 {
		o.OutputScale = 1
	}
	g := &gen{
		r:      rand.New(rand.NewPCG(seed, 0x5eed_57a7_a11c_e0d1)),
		o:      o,
		byText: map[string]int{},
	}
	start := time.Date(2025, time.February, 3, 8, 40, 0, 0, time.UTC)
	g.now = start.Add(time.Duration(g.r.IntN(60*24)) * time.Hour).Add(time.Duration(g.r.IntN(3600)) * time.Second)
	g.w = newWorld(g)
	return g
}

// Random helpers.

func (g *gen) intn(n int) int {
	if n <= 0 {
		return 0
	}
	return g.r.IntN(n)
}

// between returns a number in [lo, hi].
func (g *gen) between(lo, hi int) int { return lo + g.intn(hi-lo+1) }

func (g *gen) chance(p float64) bool { return g.r.Float64() < p }

func (g *gen) pick(xs []string) string { return xs[g.intn(len(xs))] }

// bytesPerCall is how many bytes of output and arguments a tool call
// brings on average at OutputScale 1.
const bytesPerCall = 4300

// sc scales a length of a long output by the options' OutputScale, and
// by how far the session is from its size so far, so that sessions of
// different seeds come out about the same size.
func (g *gen) sc(n int) int {
	f := g.o.OutputScale
	if g.t.ToolCalls >= 4 && g.bytes > 0 {
		// Calls past the options' count finish the last task; they get a
		// smaller share, so that the session's size depends little on how
		// many calls that task takes.
		calls := float64(min(g.t.ToolCalls, g.o.ToolCalls)) + 0.3*float64(max(g.t.ToolCalls-g.o.ToolCalls, 0))
		p := calls * bytesPerCall * g.o.OutputScale / float64(g.bytes)
		f *= min(max(p*p, 0.4), 3.0)
	}
	v := int(float64(n)*f + 0.5)
	if v < 1 {
		v = 1
	}
	return v
}

func (g *gen) fromAlphabet(alpha string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alpha[g.intn(len(alpha))]
	}
	return string(b)
}

func (g *gen) hex(n int) string { return g.fromAlphabet("0123456789abcdef", n) }

func (g *gen) alnum(n int) string {
	return g.fromAlphabet("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", n)
}

func (g *gen) lower(n int) string { return g.fromAlphabet("abcdefghijklmnopqrstuvwxyz", n) }

func (g *gen) lowerDigits(n int) string {
	return g.fromAlphabet("abcdefghijklmnopqrstuvwxyz0123456789", n)
}

// nixHash is a store path hash in Nix's base-32 alphabet.
func (g *gen) nixHash() string { return g.fromAlphabet("0123456789abcdfghijklmnpqrsvwxyz", 32) }

func (g *gen) b64(n int) string {
	return g.fromAlphabet("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", n)
}

func (g *gen) uuid() string {
	h := g.hex(32)
	return h[0:8] + "-" + h[8:12] + "-4" + h[13:16] + "-" + string("89ab"[g.intn(4)]) + h[17:20] + "-" + h[20:32]
}

// tick advances the session clock by a few seconds to a few minutes.
func (g *gen) tick(lo, hi int) time.Time {
	g.now = g.now.Add(time.Duration(g.between(lo, hi)) * time.Second)
	return g.now
}

// Labels.

// plant registers an identifier made by mk as planted in a place of
// class c and returns it. A text already planted in the same class is
// returned as it is; a text that is planted in another class, or is a
// substring of a planted text or contains one, is made anew. If mk keeps
// making such texts, plant returns the last one unlabelled.
func (g *gen) plant(c opsgen.Class, kind string, mk func() string) string {
	var s string
	for try := 0; try < 40; try++ {
		s = mk()
		if i, ok := g.byText[s]; ok {
			if g.t.Labels[i].Class == c && g.t.Labels[i].Kind == kind {
				return s
			}
			continue
		}
		if g.clashes(s) {
			continue
		}
		g.byText[s] = len(g.t.Labels)
		g.t.Labels = append(g.t.Labels, opsgen.Label{Text: s, Class: c, Kind: kind})
		return s
	}
	return s
}

func (g *gen) clashes(s string) bool {
	for _, l := range g.t.Labels {
		if strings.Contains(l.Text, s) || strings.Contains(s, l.Text) {
			return true
		}
	}
	return false
}

// Shorthands for the four classes.

func (g *gen) E(kind string, mk func() string) string { return g.plant(opsgen.ErrorLine, kind, mk) }
func (g *gen) P(kind string, mk func() string) string { return g.plant(opsgen.PassingOutput, kind, mk) }
func (g *gen) W(kind string, mk func() string) string { return g.plant(opsgen.FileWritten, kind, mk) }
func (g *gen) U(kind string, mk func() string) string { return g.plant(opsgen.UserTurn, kind, mk) }

// fixed returns a maker of one constant text.
func fixed(s string) func() string { return func() string { return s } }

// Messages.

// res is the result of one call as a generator builds it.
type res struct {
	out  string
	exit int
	read bool
	errs []int
}

// call is one tool call with its result.
type call struct {
	name string
	args []opsgen.Arg
	r    res
}

func (g *gen) user(text string) {
	g.tick(30, 600)
	g.add(opsgen.Message{Role: "user", Text: text})
}

func (g *gen) say(text string) {
	g.add(opsgen.Message{Role: "assistant", Text: text})
}

// add appends m to the session, keeping the roles of the Anthropic form
// alternating: an assistant message that follows an assistant message
// is merged into it (its text after the previous one, a blank line
// between, its calls after the previous calls), and so is a user message
// that follows a user message. A tool message (the results of the calls
// of the assistant message before it) is appended as it is. The Anthropic
// form sends a tool message as a user message, into which a user text
// cannot be merged; a user message right after one gets a short
// assistant message before it (no task does that today).
func (g *gen) add(m opsgen.Message) {
	if n := len(g.t.Messages); n > 0 && m.Role != "tool" {
		last := &g.t.Messages[n-1]
		switch {
		case last.Role == m.Role:
			last.Text = joinText(last.Text, m.Text)
			last.Calls = append(last.Calls, m.Calls...)
			return
		case m.Role == "user" && last.Role == "tool":
			g.t.Messages = append(g.t.Messages, opsgen.Message{Role: "assistant", Text: "Those are the results so far."})
		}
	}
	g.t.Messages = append(g.t.Messages, m)
}

// joinText joins two message texts with a blank line between.
func joinText(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n\n" + b
}

// step appends one assistant message with its calls (merged into the
// assistant message before it, if any) and the tool message with their
// results.
func (g *gen) step(text string, cs ...call) {
	am := opsgen.Message{Role: "assistant", Text: text}
	tm := opsgen.Message{Role: "tool"}
	for _, c := range cs {
		id := g.alnum(24)
		am.Calls = append(am.Calls, opsgen.Call{ID: id, Name: c.name, Args: c.args})
		g.bytes += len(c.r.out)
		for _, a := range c.args {
			g.bytes += len(a.Value)
		}
		tm.Results = append(tm.Results, opsgen.Result{CallID: id, Output: c.r.out, Exit: c.r.exit, Read: c.r.read, ErrLines: c.r.errs})
		g.t.ToolCalls++
		g.tick(3, 90)
	}
	g.add(am)
	g.add(tm)
}

func bash(cmd string, r res) call {
	return call{name: "bash", args: []opsgen.Arg{{Key: "command", Value: cmd}}, r: r}
}

func readCall(path string, r res) call {
	r.read = true
	return call{name: "read_file", args: []opsgen.Arg{{Key: "path", Value: path}}, r: r}
}

func grepCall(pattern, path string, r res) call {
	r.read = true
	return call{name: "grep", args: []opsgen.Arg{{Key: "pattern", Value: pattern}, {Key: "path", Value: path}}, r: r}
}

func writeCall(path, content string) call {
	return call{name: "write_file", args: []opsgen.Arg{{Key: "path", Value: path}, {Key: "content", Value: content}},
		r: res{out: "Wrote " + itoa(strings.Count(content, "\n")+1) + " lines to " + path}}
}

func replaceCall(path, old, new string) call {
	return call{name: "replace_in_file", args: []opsgen.Arg{{Key: "path", Value: path}, {Key: "old", Value: old}, {Key: "new", Value: new}},
		r: res{out: "Replaced 1 occurrence in " + path}}
}

// out builds a tool output line by line, remembering which lines report
// the failure.
type out struct {
	lines []string
	errs  []int
}

// add appends text, which may hold several lines.
func (b *out) add(text string) {
	b.lines = append(b.lines, strings.Split(text, "\n")...)
}

// err appends text as failure lines.
func (b *out) err(text string) {
	for _, l := range strings.Split(text, "\n") {
		b.errs = append(b.errs, len(b.lines))
		b.lines = append(b.lines, l)
	}
}

func (b *out) res(exit int) res {
	return res{out: strings.Join(b.lines, "\n"), exit: exit, errs: b.errs}
}

// prune removes the labels whose text landed in a place of another class
// or nowhere in a place of its own, so that the labels keep their
// contract whatever the filler happened to produce.
func (g *gen) prune() {
	ps := placesOf(&g.t)
	var all strings.Builder
	starts := make([]int, len(ps))
	for i, p := range ps {
		starts[i] = all.Len()
		all.WriteString(p.text)
		all.WriteByte(0)
	}
	text := all.String()
	keep := g.t.Labels[:0]
	for _, l := range g.t.Labels {
		ok, own := true, false
		firstWrite := -1
		for off := 0; ; {
			i := strings.Index(text[off:], l.Text)
			if i < 0 {
				break
			}
			at := off + i
			off = at + 1
			pi := sort.Search(len(starts), func(k int) bool { return starts[k] > at }) - 1
			p := ps[pi]
			switch {
			case p.class == l.Class:
				own = true
				if firstWrite < 0 {
					firstWrite = p.msg
				}
			case l.Class == opsgen.FileWritten && l.Kind == "path" && firstWrite >= 0 && p.msg > firstWrite:
			default:
				ok = false
			}
		}
		if ok && own {
			keep = append(keep, l)
		} else {
			g.dropped++
		}
	}
	g.t.Labels = keep
}

// place is a piece of the session's text and the class of place it is.
type place struct {
	text  string
	class opsgen.Class // "" when it is no labelled place
	msg   int
}

// placesOf cuts a transcript into places: user texts, assistant texts,
// call arguments (file_written for writes) and tool output lines.
func placesOf(t *opsgen.Transcript) []place {
	ps := []place{{text: t.System, msg: -1}}
	for mi, m := range t.Messages {
		switch m.Role {
		case "user":
			ps = append(ps, place{m.Text, opsgen.UserTurn, mi})
		case "assistant":
			ps = append(ps, place{m.Text, "", mi})
			for _, c := range m.Calls {
				var cl opsgen.Class
				if c.Writes() {
					cl = opsgen.FileWritten
				}
				for _, a := range c.Args {
					ps = append(ps, place{a.Value, cl, mi})
				}
			}
		case "tool":
			for _, r := range m.Results {
				errs := map[int]bool{}
				for _, e := range r.ErrLines {
					errs[e] = true
				}
				for li, line := range strings.Split(r.Output, "\n") {
					var cl opsgen.Class
					switch {
					case errs[li]:
						cl = opsgen.ErrorLine
					case r.Exit == 0:
						cl = opsgen.PassingOutput
					}
					ps = append(ps, place{line, cl, mi})
				}
			}
		}
	}
	return ps
}

func itoa(n int) string {
	neg := n < 0
	if neg {
		n = -n
	}
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			break
		}
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}
