package moorgen

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path"
	"strings"
	"time"

	"github.com/strata-memory/strata/compact/internal/opsgen"
	"github.com/strata-memory/strata/tiktoken"
)

// gen is a session being generated: its random source, its clock, the
// messages so far, every token it has drawn (labelled or not) and the
// labels it has planted.
type gen struct {
	r       *rand.Rand
	scale   float64
	now     time.Time
	msgs    []opsgen.Message
	calls   int
	used    map[string]bool         // every fresh token drawn
	class   map[string]opsgen.Class // the class of each label
	labels  []opsgen.Label
	lines   map[string][]string // line numbers handed out per base name
	touched map[string]bool     // files written or edited: not read again
	content map[string]string   // what a file read printed, to print it again
	dropped int                 // labels the final check took back
	size    float64             // estimated tokens of text so far
	perCall float64             // estimated tokens per call the session aims at
	base    float64             // the output scale the options ask for
	scaled  float64             // the sum over calls of the scale they ran at
	made    int                 // steps made so far (some not yet in a round)
	target  int                 // the tool calls the options ask for
	pid     int                 // the process id of the JVM logging now
	tok     *tiktoken.Tokenizer // counts the session's size
	denoNew []string            // Deno test files the session wrote
	gwFault int                 // what broke the gateway bridge last
	topic   string              // what the current task is about
}

func newGen(seed uint64, o opsgen.Options) *gen {
	scale := o.OutputScale
	if scale <= 0 {
		scale = 1
	}
	r := rand.New(rand.NewPCG(seed, 0x6d6f6f7268656e))
	tok, _ := tiktoken.New(tiktoken.O200kBase)
	start := time.Date(2025, time.Month(2+r.IntN(8)), 1+r.IntN(27), 7+r.IntN(3), r.IntN(60), r.IntN(60), 0, time.UTC)
	return &gen{
		r:       r,
		scale:   nominal * scale,
		base:    nominal * scale,
		perCall: 2700 * scale,
		target:  o.ToolCalls,
		now:     start,
		used:    map[string]bool{},
		class:   map[string]opsgen.Class{},
		lines:   map[string][]string{},
		touched: map[string]bool{},
		content: map[string]string{},
		tok:     tok,
	}
}

// nominal is the scale of outputs at OutputScale 1 before steering.
const nominal = 2.2

// steer sets the output scale after each round so that the session's
// size keeps to its target of tokens per call: it measures the tokens a
// call gives per unit of scale so far and aims the next calls at the
// target plus a share of the shortfall (or minus a share of the excess).
func (g *gen) steer() {
	if g.made < 3 || g.scaled == 0 {
		return
	}
	const horizon = 8
	// Calls past the asked-for number (the last task finishing) aim at
	// less, so that a long last task does not carry the session over.
	const tail = 0.4
	made := float64(g.made)
	target := float64(g.target)
	want := g.perCall * min(made, target)
	next := g.perCall
	if made > target {
		want += tail * g.perCall * (made - target)
	}
	if made >= target {
		next = tail * g.perCall
	}
	perUnit := g.size / g.scaled
	need := next + (want-g.size)/horizon
	g.scale = min(2.5*g.base, max(0.25*g.base, need/perUnit))
}

// tokens counts the o200k tokens text takes in the OpenAI form (a JSON
// string). The tokenizer's vocabulary is built into the binary; should it
// fail to load, a rough estimate of a token per four bytes stands in.
func (g *gen) tokens(text string) float64 {
	b, _ := json.Marshal(text)
	if g.tok == nil {
		return float64(len(b)) / 4
	}
	return float64(g.tok.Count(string(b)))
}

// ---- randomness ----

func (g *gen) pick(xs []string) string { return xs[g.r.IntN(len(xs))] }

func (g *gen) between(lo, hi int) int { return lo + g.r.IntN(hi-lo+1) }

func (g *gen) chance(p float64) bool { return g.r.Float64() < p }

// n scales a count of output lines by the session's output scale.
func (g *gen) n(lo, hi int) int {
	return max(1, int(float64(g.between(lo, hi))*g.scale))
}

func (g *gen) secs(lo, hi float64) float64 { return lo + g.r.Float64()*(hi-lo) }

// tick advances the session clock by a few seconds to a few minutes.
func (g *gen) tick(lo, hi int) time.Time {
	g.now = g.now.Add(time.Duration(g.between(lo, hi))*time.Second + time.Duration(g.r.IntN(1000))*time.Millisecond)
	return g.now
}

const (
	hexDigits = "0123456789abcdef"
	alnum     = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	lowernum  = "abcdefghijklmnopqrstuvwxyz0123456789"
	crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
)

func (g *gen) chars(set string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = set[g.r.IntN(len(set))]
	}
	return string(b)
}

// fresh draws from f until it gives a text never drawn before.
func (g *gen) fresh(f func() string) string {
	for range 1000 {
		s := f()
		if s != "" && !g.used[s] {
			g.used[s] = true
			return s
		}
	}
	panic("moorgen: fresh: no new value")
}

// hex is a fresh hex string of n digits with a digit and a letter in it.
func (g *gen) hex(n int) string {
	return g.fresh(func() string {
		s := g.chars(hexDigits, n)
		if !strings.ContainsAny(s, "0123456789") || !strings.ContainsAny(s, "abcdef") {
			return ""
		}
		return s
	})
}

func (g *gen) hexf(n int) func() string { return func() string { return g.hex(n) } }

func (g *gen) uuid() string {
	return g.fresh(func() string {
		return fmt.Sprintf("%s-%s-4%s-%c%s-%s", g.chars(hexDigits, 8), g.chars(hexDigits, 4), g.chars(hexDigits, 3),
			"89ab"[g.r.IntN(4)], g.chars(hexDigits, 3), g.chars(hexDigits, 12))
	})
}

// ulid is a fresh ULID-looking id.
func (g *gen) ulid() string {
	return g.fresh(func() string { return "01J" + g.chars(crockford, 23) })
}

// prefixed is a fresh id such as req_7Hk2mQ9xW1 (with a digit in it).
func (g *gen) prefixed(prefix, sep string, n int) string {
	return g.fresh(func() string {
		s := g.chars(alnum, n)
		if !strings.ContainsAny(s, "0123456789") {
			return ""
		}
		return prefix + sep + s
	})
}

func (g *gen) port() int {
	for {
		p := g.between(20000, 61000)
		k := fmt.Sprintf("port %d", p)
		if !g.used[k] {
			g.used[k] = true
			return p
		}
	}
}

// ip is a fresh private address of the Moorhen network.
func (g *gen) ip() string {
	return g.fresh(func() string {
		return fmt.Sprintf("10.%d.%d.%d", g.between(20, 29), g.between(0, 15), g.between(2, 250))
	})
}

var consulNames = []string{"mqtt-broker", "moorhen-ingest", "moorhen-registry", "moorhen-dashboard", "mongo-telemetry", "redis-fleet", "vault", "renode-farm"}

// remote is a fresh host:port of another machine (never loopback).
func (g *gen) remote() string {
	p := g.port()
	if g.chance(0.5) {
		return fmt.Sprintf("%s:%d", g.ip(), p)
	}
	return g.fresh(func() string {
		return fmt.Sprintf("%s-%d.node.hel1.consul:%d", g.pick(consulNames), g.between(1, 9), p)
	})
}

func (g *gen) hostport() string {
	p := g.port()
	switch g.r.IntN(3) {
	case 0:
		return fmt.Sprintf("%s:%d", g.ip(), p)
	case 1:
		return fmt.Sprintf("127.0.0.1:%d", p)
	default:
		return g.fresh(func() string {
			return fmt.Sprintf("%s-%d.node.hel1.consul:%d", g.pick(consulNames), g.between(1, 9), p)
		})
	}
}

var urlPaths = []string{"api/v2/devices", "api/v2/leases", "api/v2/channels", "api/v1/fleet/depots", "internal/flush", "api/v1/alerts", "api/v2/provision", "healthz/deep", "api/v1/positions"}

func (g *gen) url() string {
	return g.fresh(func() string {
		return fmt.Sprintf("http://%s/%s/%s", g.hostport(), g.pick(urlPaths), g.chars(lowernum, 6))
	})
}

// code is a fresh application error code such as MHR-4417.
func (g *gen) codeOf(prefix string) func() string {
	return func() string {
		return g.fresh(func() string { return fmt.Sprintf("%s-%d", prefix, g.between(1000, 9999)) })
	}
}

// serial is a fresh device serial such as MTG-0412-7C2A.
func (g *gen) serial() string {
	return g.fresh(func() string {
		return fmt.Sprintf("MTG-%04d-%s", g.between(1, 9999), strings.ToUpper(g.chars(hexDigits, 4)))
	})
}

// clientID is a fresh MQTT client id of a tag.
func (g *gen) clientID() string {
	return g.fresh(func() string { return "mtag-" + g.chars(hexDigits, 10) })
}

// addr is a fresh 32-bit address as a fault dump prints it.
func (g *gen) addr(region string) string {
	return g.fresh(func() string {
		if region == "ram" {
			return fmt.Sprintf("0x2000%s", g.chars(hexDigits, 4))
		}
		return fmt.Sprintf("0x000%s", g.chars(hexDigits, 5))
	})
}

// objectID is a fresh MongoDB ObjectId.
func (g *gen) objectID() string { return g.hex(24) }

// ---- labels ----

// plant draws an identifier from f, retrying until it is new and neither
// holds nor is held by a label planted before, records it with class c
// and kind, and returns it.
func (g *gen) plant(c opsgen.Class, kind string, f func() string) string {
	for range 200 {
		s := f()
		if len(s) < 6 || g.class[s] != "" || g.clashes(s) {
			continue
		}
		g.used[s] = true
		g.class[s] = c
		g.labels = append(g.labels, opsgen.Label{Text: s, Class: c, Kind: kind})
		return s
	}
	panic("moorgen: plant: cannot draw a label of kind " + kind)
}

func (g *gen) clashes(s string) bool {
	for _, l := range g.labels {
		if strings.Contains(l.Text, s) || strings.Contains(s, l.Text) {
			return true
		}
	}
	return false
}

// The four classes, short.
func (g *gen) E(kind string, f func() string) string { return g.plant(opsgen.ErrorLine, kind, f) }
func (g *gen) P(kind string, f func() string) string { return g.plant(opsgen.PassingOutput, kind, f) }
func (g *gen) W(kind string, f func() string) string { return g.plant(opsgen.FileWritten, kind, f) }
func (g *gen) U(kind string, f func() string) string { return g.plant(opsgen.UserTurn, kind, f) }

// lineFor hands out a fresh line number of a file: two lines of one base
// name never share a number nor is one number's text a prefix of
// another's, so "x.c:21" can never be found inside "x.c:214".
func (g *gen) lineFor(file string) int {
	b := path.Base(file)
	for {
		n := g.between(14, 940)
		s := fmt.Sprint(n)
		ok := true
		for _, u := range g.lines[b] {
			if strings.HasPrefix(u, s) || strings.HasPrefix(s, u) {
				ok = false
				break
			}
		}
		if ok {
			g.lines[b] = append(g.lines[b], s)
			return n
		}
	}
}

// site plants base:line of file with class c and returns the line.
func (g *gen) site(c opsgen.Class, file string) int {
	return g.siteForm(c, file, func(b string, n int) string { return fmt.Sprintf("%s:%d", b, n) })
}

// siteForm plants a site of file written by form (for the forms of
// Maven, Erlang and others) and returns its line.
func (g *gen) siteForm(c opsgen.Class, file string, form func(base string, line int) string) int {
	b := path.Base(file)
	var n int
	g.plant(c, "site", func() string { n = g.lineFor(b); return form(b, n) })
	return n
}

// ---- outputs ----

// out builds a tool output line by line, remembering which lines report
// the failure.
type out struct {
	lines []string
	errs  []int
}

func (o *out) add(s string) { o.lines = append(o.lines, strings.Split(s, "\n")...) }

func (o *out) addf(format string, a ...any) { o.add(fmt.Sprintf(format, a...)) }

func (o *out) fail(s string) {
	for _, l := range strings.Split(s, "\n") {
		o.errs = append(o.errs, len(o.lines))
		o.lines = append(o.lines, l)
	}
}

func (o *out) failf(format string, a ...any) { o.fail(fmt.Sprintf(format, a...)) }

func (o *out) String() string { return strings.Join(o.lines, "\n") }

// tail keeps the last n lines, as piping through tail -n does.
func (o *out) tail(n int) *out {
	if len(o.lines) <= n {
		return o
	}
	cut := len(o.lines) - n
	t := &out{lines: o.lines[cut:]}
	for _, i := range o.errs {
		if i >= cut {
			t.errs = append(t.errs, i-cut)
		}
	}
	return t
}

// step is one tool call and its result.
type step struct {
	call opsgen.Call
	res  opsgen.Result
}

// account adds a new step in the session's size and steers the
// scale of the outputs to come.
func (g *gen) account(s step) step {
	g.size += g.tokens(s.res.Output)
	for _, a := range s.call.Args {
		g.size += g.tokens(a.Value)
	}
	g.made++
	g.scaled += g.scale
	g.steer()
	return s
}

// sh is a shell command and what it printed. A command that exits
// non-zero reports its failure on at least one line, and only such a
// command has failure lines: the harness adds the exit status line.
func (g *gen) sh(cmd string, o *out, exit int) step {
	if (exit != 0) != (len(o.errs) > 0) {
		panic(fmt.Sprintf("moorgen: exit %d with %d failure lines: %s", exit, len(o.errs), cmd))
	}
	if exit != 0 {
		o.failf("[process exited with code %d]", exit)
	}
	g.tick(5, 240)
	return g.account(step{opsgen.Call{Name: "shell", Args: []opsgen.Arg{{Key: "command", Value: cmd}}},
		opsgen.Result{Output: o.String(), Exit: exit, ErrLines: o.errs}})
}

// shRead is a shell command that prints what it read (cat, ls, git show).
func (g *gen) shRead(cmd, output string) step {
	g.tick(2, 20)
	return g.account(step{opsgen.Call{Name: "shell", Args: []opsgen.Arg{{Key: "command", Value: cmd}}},
		opsgen.Result{Output: output, Read: true}})
}

// readFile reads a whole file of the repository with line numbers.
func (g *gen) readFile(rel, content string) step {
	g.tick(1, 10)
	return g.account(step{opsgen.Call{Name: "read_file", Args: []opsgen.Arg{{Key: "path", Value: root + "/" + rel}}},
		opsgen.Result{Output: numbered(content, 1), Read: true}})
}

// readRange reads part of a file.
func (g *gen) readRange(rel, content string, from int) step {
	n := strings.Count(content, "\n")
	g.tick(1, 10)
	return g.account(step{opsgen.Call{Name: "read_file", Args: []opsgen.Arg{{Key: "path", Value: root + "/" + rel},
		{Key: "offset", Value: fmt.Sprint(from)}, {Key: "limit", Value: fmt.Sprint(n)}}},
		opsgen.Result{Output: numbered(content, from), Read: true}})
}

func (g *gen) search(pattern, dir, output string) step {
	g.tick(1, 10)
	return g.account(step{opsgen.Call{Name: "search", Args: []opsgen.Arg{{Key: "pattern", Value: pattern}, {Key: "path", Value: root + "/" + dir}}},
		opsgen.Result{Output: output, Read: true}})
}

func (g *gen) listFiles(dir string, files []string) step {
	g.tick(1, 5)
	return g.account(step{opsgen.Call{Name: "list_files", Args: []opsgen.Arg{{Key: "path", Value: root + "/" + dir}}},
		opsgen.Result{Output: strings.Join(files, "\n"), Read: true}})
}

// write creates a file; its path is planted as file_written by the caller.
func (g *gen) write(rel, content string) step {
	g.touched[rel] = true
	g.tick(5, 60)
	return g.account(step{opsgen.Call{Name: "write_file", Args: []opsgen.Arg{{Key: "path", Value: root + "/" + rel}, {Key: "content", Value: content}}},
		opsgen.Result{Output: fmt.Sprintf("Wrote %d lines (%d bytes) to %s", strings.Count(content, "\n"), len(content), rel)}})
}

func (g *gen) replace(rel, old, new string) step {
	g.touched[rel] = true
	g.tick(5, 60)
	return g.account(step{opsgen.Call{Name: "replace_in_file", Args: []opsgen.Arg{{Key: "path", Value: root + "/" + rel}, {Key: "old", Value: old}, {Key: "new", Value: new}}},
		opsgen.Result{Output: fmt.Sprintf("Edited %s: replaced 1 occurrence (%d lines -> %d lines)", rel, strings.Count(old, "\n")+1, strings.Count(new, "\n")+1)}})
}

// numbered prefixes each line with its number, as the read tool prints.
func numbered(s string, from int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	var b strings.Builder
	for i, l := range lines {
		fmt.Fprintf(&b, "%6d\t%s\n", from+i, l)
	}
	return b.String()
}

// ---- messages ----

// round appends an assistant message with text and the steps' calls, and
// the message of their results. Text the agent said just before joins
// the same message.
func (g *gen) round(text string, steps ...step) {
	if len(steps) == 0 {
		g.say(text)
		return
	}
	m := opsgen.Message{Role: "assistant", Text: text}
	if k := len(g.msgs) - 1; k >= 0 && g.msgs[k].Role == "assistant" {
		m.Text = joinText(g.msgs[k].Text, text)
		g.msgs = g.msgs[:k]
	}
	res := opsgen.Message{Role: "tool"}
	for _, s := range steps {
		id := g.fresh(func() string { return g.chars(alnum, 24) })
		s.call.ID, s.res.CallID = id, id
		m.Calls = append(m.Calls, s.call)
		res.Results = append(res.Results, s.res)
	}
	g.calls += len(steps)
	g.msgs = append(g.msgs, m, res)

}

// say appends assistant text (joining the agent's text just before).
func (g *gen) say(text string) {
	if text == "" {
		return
	}
	g.size += g.tokens(text)
	if k := len(g.msgs) - 1; k >= 0 && g.msgs[k].Role == "assistant" {
		g.msgs[k].Text = joinText(g.msgs[k].Text, text)
		return
	}
	g.msgs = append(g.msgs, opsgen.Message{Role: "assistant", Text: text})
}

// user appends a user message; the agent always speaks between a tool
// round and the user.
func (g *gen) user(text string) {
	if k := len(g.msgs) - 1; k >= 0 && g.msgs[k].Role != "assistant" {
		panic("moorgen: a user message after a " + g.msgs[k].Role + " message")
	}
	g.tick(60, 900)
	g.size += g.tokens(text)
	g.msgs = append(g.msgs, opsgen.Message{Role: "user", Text: text})
}

func joinText(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n\n" + b
}
