package kilngen

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	"github.com/strata-memory/strata/compact/internal/opsgen"
	"github.com/strata-memory/strata/tiktoken"
)

// tokensPerCall is the o200k size of the OpenAI form, per tool call, that
// an OutputScale of 1 asks for.
const tokensPerCall = 2800

// Standard sizes a session of about 110-130 tool calls and 280k-380k o200k
// tokens in the OpenAI form.
func Standard() opsgen.Options { return opsgen.Options{ToolCalls: 112, OutputScale: 1.04} }

// Long sizes a session of about 340-420 tool calls and 0.75M-1.0M o200k
// tokens in the OpenAI form.
func Long() opsgen.Options { return opsgen.Options{ToolCalls: 348, OutputScale: 0.9} }

// Generate returns the session of the seed, sized by o.
func Generate(seed uint64, o opsgen.Options) *opsgen.Transcript {
	if o.ToolCalls <= 0 {
		o.ToolCalls = Standard().ToolCalls
	}
	if o.OutputScale <= 0 {
		o.OutputScale = 1
	}
	target := float64(o.ToolCalls) * tokensPerCall * o.OutputScale
	tok, err := tiktoken.New(tiktoken.O200kBase)
	size := func(t *opsgen.Transcript) float64 {
		b := t.OpenAI()
		if err != nil {
			return float64(len(b)) / 3.4
		}
		return float64(tok.Count(string(b)))
	}
	// The size grows about linearly with the length, with some noise (a
	// longer output can change which labels a task plants, and so which
	// task comes next): rescale the length from each measure, damped as
	// the tries go on, and keep the closest.
	length := 2.0
	t := build(seed, o.ToolCalls, length)
	n := size(t)
	best, bestN := t, n
	for i := 0; i < 9 && math.Abs(n-target) > 0.04*target; i++ {
		// A tenth of the size does not scale with the length.
		next := length * (target - 0.1*n) / (0.9 * n)
		damp := 1 / (1 + 0.25*float64(i))
		length = math.Max(0.15, length+(next-length)*damp)
		t = build(seed, o.ToolCalls, length)
		n = size(t)
		if math.Abs(n-target) < math.Abs(bestN-target) {
			best, bestN = t, n
		}
	}
	return best
}

// gen holds a session being generated.
type gen struct {
	r      *rand.Rand
	seed   uint64
	step   uint64  // messages so far: each reseeds r (see reseed)
	length float64 // multiplies the line counts of long outputs
	want   int     // tool calls asked for
	calls  int
	msgs   []opsgen.Message

	used   map[string]bool // every identifier handed out
	words  []string        // word-like identifiers, checked for substrings
	class  map[string]opsgen.Class
	labels []opsgen.Label
	count  map[opsgen.Class]int
	limit  map[opsgen.Class]int

	sites map[string][]int // line numbers handed out per file base name
	fails []int            // lines of the last failing output's sites in its file
	touch []string         // files written or edited since the last commit
	area  string           // the area of the task at hand
	files map[string]*file // contents of files read so far
	clock time.Time
	w     *world
}

// Label targets per tool call asked for.
var perCall = map[opsgen.Class]float64{
	opsgen.ErrorLine:     0.40,
	opsgen.PassingOutput: 1.30,
	opsgen.FileWritten:   0.225,
	opsgen.UserTurn:      0.225,
}

func build(seed uint64, calls int, length float64) *opsgen.Transcript {
	g := &gen{
		r:      rand.New(rand.NewPCG(seed, 0x6b696c6e67656e)),
		seed:   seed,
		length: length,
		want:   calls,
		used:   map[string]bool{},
		class:  map[string]opsgen.Class{},
		count:  map[opsgen.Class]int{},
		limit:  map[opsgen.Class]int{},
		sites:  map[string][]int{},
		files:  map[string]*file{},
	}
	for c, f := range perCall {
		g.limit[c] = int(math.Round(f * float64(calls)))
	}
	g.clock = time.Date(2025, time.Month(3+g.r.IntN(6)), 1+g.r.IntN(27), 8+g.r.IntN(3), g.r.IntN(60), g.r.IntN(60), 0, time.UTC)
	g.w = newWorld(g)
	g.session()
	return &opsgen.Transcript{System: systemPrompt, Messages: g.msgs, Labels: g.labels, ToolCalls: g.calls}
}

const systemPrompt = `You are a senior engineer working as a coding agent in the Kilnworks monorepo checked out at /home/dev/ember. The repository holds Ember, a loyalty and payouts product for independent coffee roasters: the iOS app and its Swift packages (ios/), the ember-ledger service in Haskell (services/ember-ledger/), the reward contracts in Solidity with Foundry (contracts/), the glaze pricing-rule compiler in OCaml (tools/glaze/), Terraform and Ansible for the AWS estate (infra/), and Helm charts for the EKS clusters (deploy/helm/).

Tools:
- bash(command): run a shell command in the repository root and return its combined output.
- read_file(path): print a file with line numbers.
- grep(pattern, path): search files under path for a regular expression.
- write_file(path, content): create or overwrite a file.
- replace_in_file(path, old, new): replace one exact occurrence of old with new in a file.

Work in small verified steps. Never apply infrastructure changes to production without the user's go-ahead. Keep commits focused and explain what you changed.`

// ---- randomness ----

func (g *gen) pick(xs []string) string { return xs[g.r.IntN(len(xs))] }
func (g *gen) between(lo, hi int) int  { return lo + g.r.IntN(hi-lo+1) }
func (g *gen) chance(p float64) bool   { return g.r.Float64() < p }

// n is a count of lines of a long output, scaled by the length.
func (g *gen) n(lo, hi int) int {
	return max(1, int(math.Round(float64(g.between(lo, hi))*g.length)))
}

// tick advances the session clock by a few seconds to minutes.
func (g *gen) tick(lo, hi int) time.Time {
	g.clock = g.clock.Add(time.Duration(g.between(lo, hi)) * time.Second)
	return g.clock
}

// dur is a duration of lo to hi milliseconds.
func (g *gen) dur(lo, hi int) time.Duration {
	return time.Duration(g.between(lo, hi)) * time.Millisecond
}

// failed records the line of a failure's site in its file.
func (g *gen) failed(line int) { g.fails = append(g.fails, line) }

// takeFails returns the sites of the last failing output, last line
// first (so fixing them in order does not shift the others).
func (g *gen) takeFails() []int {
	f := g.fails
	g.fails = nil
	sort.Sort(sort.Reverse(sort.IntSlice(f)))
	return f
}

// ---- labels ----

// allowed says whether a label of class c may be planted now: labels are
// paced over the session so each class reaches its target at its end.
func (g *gen) allowed(c opsgen.Class) bool {
	lim := g.limit[c]
	prog := math.Min(1, float64(g.calls+6)/float64(g.want))
	slack := 3
	if c == opsgen.PassingOutput {
		slack = 8
	}
	pace := int(math.Ceil(float64(lim)*prog)) + slack
	return g.count[c] < min(lim, pace)
}

// plant labels text with class c when the pace allows, and returns it.
func (g *gen) plant(text string, c opsgen.Class, kind string) string {
	if old, ok := g.class[text]; ok {
		if old != c {
			panic(fmt.Sprintf("kilngen: %q planted as %s and %s", text, old, c))
		}
		return text
	}
	if !g.allowed(c) {
		return text
	}
	g.class[text] = c
	g.count[c]++
	g.labels = append(g.labels, opsgen.Label{Text: text, Class: c, Kind: kind})
	return text
}

// passing plants text as PassingOutput when ok, and leaves it unlabelled
// otherwise (it is then in a failed command's output, off its failure
// lines).
func (g *gen) passing(ok bool, text, kind string) string {
	if ok {
		return g.plant(text, opsgen.PassingOutput, kind)
	}
	return text
}

func (g *gen) errl(text, kind string) string  { return g.plant(text, opsgen.ErrorLine, kind) }
func (g *gen) usr(text, kind string) string   { return g.plant(text, opsgen.UserTurn, kind) }
func (g *gen) wrote(text, kind string) string { return g.plant(text, opsgen.FileWritten, kind) }

// ---- outputs ----

// out builds a tool output line by line, remembering the failure lines.
type out struct {
	lines []string
	errs  []int
}

func (o *out) add(s string, bad bool) {
	for _, l := range strings.Split(s, "\n") {
		if bad {
			o.errs = append(o.errs, len(o.lines))
		}
		o.lines = append(o.lines, l)
	}
}

// ok adds passing lines; bad adds failure lines.
func (o *out) ok(s string)                     { o.add(s, false) }
func (o *out) bad(s string)                    { o.add(s, true) }
func (o *out) okf(format string, a ...any)     { o.add(fmt.Sprintf(format, a...), false) }
func (o *out) badf(format string, a ...any)    { o.add(fmt.Sprintf(format, a...), true) }
func (o *out) lines0() int                     { return len(o.lines) }
func (o *out) text() string                    { return strings.Join(o.lines, "\n") }
func (o *out) addAll(lines []string, bad bool) { o.add(strings.Join(lines, "\n"), bad) }

// act is one tool call with its result.
type act struct {
	call opsgen.Call
	res  opsgen.Result
}

func (g *gen) callID() string {
	return g.fresh(func() string { return g.chars(alnum, 24) })
}

var exitStyles = []string{
	"[exit code: %d]",
	"Process exited with code %d",
	"exit status %d",
	"(command failed, exit %d)",
	"--- exit %d ---",
	"returncode=%d",
}

// sh is a bash call. A failed run sometimes ends with a harness exit line.
func (g *gen) sh(cmd string, o *out, exit int) act {
	if exit != 0 && g.chance(0.3) {
		o.ok("")
		o.okf(g.pick(exitStyles), exit)
	}
	return g.mkAct("bash", []opsgen.Arg{{Key: "command", Value: cmd}}, o, exit, false)
}

func (g *gen) mkAct(name string, args []opsgen.Arg, o *out, exit int, read bool) act {
	id := g.callID()
	var errs []int
	if len(o.errs) > 0 {
		errs = append([]int(nil), o.errs...)
	}
	return act{
		call: opsgen.Call{ID: id, Name: name, Args: args},
		res:  opsgen.Result{CallID: id, Output: o.text(), Exit: exit, Read: read, ErrLines: errs},
	}
}

// say is an assistant message with its calls, and the results of them.
func (g *gen) say(text string, acts ...act) {
	m := opsgen.Message{Role: "assistant", Text: text}
	var rs []opsgen.Result
	for _, a := range acts {
		m.Calls = append(m.Calls, a.call)
		rs = append(rs, a.res)
	}
	g.msgs = append(g.msgs, m)
	if len(acts) > 0 {
		g.msgs = append(g.msgs, opsgen.Message{Role: "tool", Results: rs})
		g.calls += len(acts)
	}
	g.reseed()
	g.tick(5, 90)
}

func (g *gen) user(text string) {
	g.msgs = append(g.msgs, opsgen.Message{Role: "user", Text: text})
	g.reseed()
	g.tick(30, 900)
}

// reseed gives each message of the session its own random stream, so
// that how long an output was drawn (the length) does not change what
// the session does next: its tasks, branches and calls stay the same
// and only the outputs grow or shrink with the length.
func (g *gen) reseed() {
	g.step++
	g.r = rand.New(rand.NewPCG(g.seed^0x9e3779b97f4a7c15, g.step*0x2545f4914f6cdd1d+0x6b696c6e))
}

// ---- file tools ----

// file is a file of the repository as the session has seen it.
type file struct {
	path    string
	lines   []string
	ids     []fid           // identifiers in its content, labelled when a read shows them
	tests   []string        // names of the tests a test file holds
	written map[string]bool // lines the session wrote: no output shows them again
	hidden  bool            // a failure named a test it does not hold: not read again
}

// fid is an identifier in a file's content.
type fid struct{ text, kind string }

// id records an identifier of the content and returns it.
func (f *file) id(text, kind string) string {
	f.ids = append(f.ids, fid{text, kind})
	return text
}

// shown plants the identifiers of f that a passing read printed.
func (g *gen) shown(f *file, printed string) {
	for _, d := range f.ids {
		if strings.Contains(printed, d.text) {
			g.plant(d.text, opsgen.PassingOutput, d.kind)
		}
	}
}

func (f *file) isWritten(i int) bool { return f.written[f.lines[i]] }

// read is a read_file call of path; a file the session has edited is
// shown by a range that leaves out what it wrote.
func (g *gen) read(path string) act {
	f := g.file(path)
	for i := range f.lines {
		if f.isWritten(i) {
			lo, hi := g.cleanWindow(f)
			return g.readRange(path, lo, hi)
		}
	}
	var o out
	for i, l := range f.lines {
		o.okf("%6d\t%s", i+1, l)
	}
	g.shown(f, o.text())
	return g.mkAct("read_file", []opsgen.Arg{{Key: "path", Value: path}}, &o, 0, true)
}

// cleanWindow is the longest run of lines (1-based, inclusive) of f
// without a written line.
func (g *gen) cleanWindow(f *file) (int, int) {
	bestLo, bestHi, lo := 1, 0, 1
	for i := 0; i <= len(f.lines); i++ {
		if i == len(f.lines) || f.isWritten(i) {
			if i-lo+1 > bestHi-bestLo+1 {
				bestLo, bestHi = lo, i
			}
			lo = i + 2
		}
	}
	return bestLo, bestHi
}

// readRange is a bash call printing lines lo..hi of path with numbers,
// narrowed to leave out lines the session wrote.
func (g *gen) readRange(path string, lo, hi int) act {
	f := g.file(path)
	lo = max(1, lo)
	hi = min(len(f.lines), hi)
	mid := (lo + hi) / 2
	for i := mid; i >= lo; i-- {
		if f.isWritten(i - 1) {
			lo = i + 1
			break
		}
	}
	for i := max(mid, lo); i <= hi; i++ {
		if f.isWritten(i - 1) {
			hi = i - 1
			break
		}
	}
	if hi < lo {
		lo, hi = g.cleanWindow(f)
	}
	var o out
	for i := lo; i <= hi; i++ {
		o.okf("%6d\t%s", i, f.lines[i-1])
	}
	g.shown(f, o.text())
	return g.mkAct("bash", []opsgen.Arg{{Key: "command", Value: fmt.Sprintf("cat -n %s | sed -n '%d,%dp'", path, lo, hi)}}, &o, 0, true)
}

// grepAct is a grep call; hits are lines of the files given.
func (g *gen) grepAct(pattern, dir string, hits int, paths []string, match func(*file) []int) act {
	var o out
	n := 0
	for _, p := range paths {
		f := g.file(p)
		for _, i := range match(f) {
			if n >= hits || f.isWritten(i) {
				continue
			}
			o.okf("%s:%d:%s", p, i+1, f.lines[i])
			g.shown(f, f.lines[i])
			n++
		}
	}
	exit := 0
	if n == 0 {
		exit = 1
	}
	return g.mkAct("grep", []opsgen.Arg{{Key: "pattern", Value: pattern}, {Key: "path", Value: dir}}, &o, exit, true)
}

// markWritten records lines the session wrote in f.
func (f *file) markWritten(lines []string) {
	if f.written == nil {
		f.written = map[string]bool{}
	}
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			f.written[l] = true
		}
	}
}

// touched records that the session changed path.
func (g *gen) touched(path string) {
	for _, p := range g.touch {
		if p == path {
			return
		}
	}
	g.touch = append(g.touch, path)
}

// carriesWritten says s holds an identifier planted in written content.
func (g *gen) carriesWritten(s string) bool {
	for _, l := range g.labels {
		if l.Class == opsgen.FileWritten && l.Kind != "path" && strings.Contains(s, l.Text) {
			return true
		}
	}
	return false
}

// write is a write_file call creating path with content.
func (g *gen) write(path, content string) act {
	g.wrote(path, "path")
	g.touched(path)
	f := &file{path: path, lines: strings.Split(content, "\n")}
	f.markWritten(f.lines)
	g.files[path] = f
	var o out
	o.okf("Wrote %d bytes to %s", len(content), path)
	return g.mkAct("write_file", []opsgen.Arg{{Key: "path", Value: path}, {Key: "content", Value: content}}, &o, 0, false)
}

// edit is a replace_in_file call replacing line i (0-based) of path, and
// count-1 lines after it, by the new lines.
func (g *gen) edit(path string, i, count int, repl []string) act {
	g.touched(path)
	f := g.file(path)
	i = max(0, min(i, len(f.lines)-count))
	old := strings.Join(f.lines[i:i+count], "\n")
	kept := map[string]bool{}
	for _, l := range f.lines[i : i+count] {
		kept[l] = true
	}
	var fresh []string
	for _, l := range repl {
		if !kept[l] && g.carriesWritten(l) {
			fresh = append(fresh, l)
		}
	}
	f.markWritten(fresh)
	nl := append(append(append([]string(nil), f.lines[:i]...), repl...), f.lines[i+count:]...)
	f.lines = nl
	var o out
	o.okf("Replaced 1 occurrence in %s (%d lines -> %d lines)", path, count, len(repl))
	return g.mkAct("replace_in_file", []opsgen.Arg{{Key: "path", Value: path}, {Key: "old", Value: old}, {Key: "new", Value: strings.Join(repl, "\n")}}, &o, 0, false)
}

// file returns the file at path, making up its content on first sight.
func (g *gen) file(path string) *file {
	if f, ok := g.files[path]; ok {
		return f
	}
	f := &file{path: path}
	f.lines = g.synth(f)
	g.files[path] = f
	return f
}

// setLine puts text at line n (1-based) of path, growing the file if
// needed, so that a later read shows what an error quoted.
func (g *gen) setLine(path string, n int, text string) {
	f := g.file(path)
	for len(f.lines) < n {
		f.lines = append(f.lines, "")
	}
	f.lines[n-1] = text
}

// editable is the index of a run of count lines of path that a
// replacement may take as old: not blank, unique in the file, and without
// an identifier of the content.
func (g *gen) editable(path string, count int) int {
	f := g.file(path)
	all := strings.Join(f.lines, "\n")
	for tries := 0; tries < 300; tries++ {
		i := g.between(len(f.lines)/6, max(len(f.lines)/6, len(f.lines)-count-1))
		if i+count > len(f.lines) {
			continue
		}
		old := strings.Join(f.lines[i:i+count], "\n")
		if len(strings.TrimSpace(f.lines[i])) < 10 || strings.Count(all, old) != 1 || carriesID(f, old) {
			continue
		}
		return i
	}
	for i := range f.lines {
		if i+count <= len(f.lines) && !carriesID(f, strings.Join(f.lines[i:i+count], "\n")) && strings.TrimSpace(f.lines[i]) != "" {
			return i
		}
	}
	return 0
}

func carriesID(f *file, s string) bool {
	for _, d := range f.ids {
		if strings.Contains(s, d.text) {
			return true
		}
	}
	return false
}

func indentOf(s string) string { return s[:len(s)-len(strings.TrimLeft(s, " \t"))] }
