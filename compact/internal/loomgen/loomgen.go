package loomgen

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/strata-memory/strata/compact/internal/opsgen"
	"github.com/strata-memory/strata/tiktoken"
)

// Standard is a session of about 120 tool calls and 330k o200k tokens in
// the OpenAI form.
func Standard() opsgen.Options { return opsgen.Options{ToolCalls: 114, OutputScale: 1} }

// Long is a session of about 370 tool calls and 880k o200k tokens in the
// OpenAI form.
func Long() opsgen.Options { return opsgen.Options{ToolCalls: 362, OutputScale: 0.86} }

// tokensPerCall is the budget of o200k tokens a tool call brings to the
// session at OutputScale 1: its output, its arguments and its share of
// the talk around it.
const tokensPerCall = 2870

// maxOutput caps one output, in tokens, at OutputScale 1.
const maxOutput = 26000

// Generate returns the session for seed with options o. Zero options mean
// Standard; a zero field takes Standard's value.
func Generate(seed uint64, o opsgen.Options) *opsgen.Transcript {
	if o.ToolCalls <= 0 {
		o.ToolCalls = Standard().ToolCalls
	}
	if o.OutputScale <= 0 {
		o.OutputScale = Standard().OutputScale
	}
	g := newGen(seed, o)
	g.session()
	return g.t
}

// gen is the state of one session being generated.
type gen struct {
	r   *rand.Rand
	o   opsgen.Options
	t   *opsgen.Transcript
	tok *tiktoken.Tokenizer

	// used holds every identifier handed out, planted or not; amb lists
	// the ones not planted (ambient), labels the planted ones.
	used   map[string]bool
	amb    []string
	labels []string

	target int // token budget of the session
	spent  int // tokens of the session so far (OpenAI form, estimated)
	calls  int
	wsum   float64 // output weights asked for so far, for want
	now    time.Time
	last   int // index of the last task run, to avoid running it twice in a row
	round  int // how many times the task list was gone through
}

func newGen(seed uint64, o opsgen.Options) *gen {
	tok, err := tiktoken.New("o200k_base")
	if err != nil {
		panic(err) // embedded vocabulary: cannot fail
	}
	g := &gen{
		r:    rand.New(rand.NewPCG(seed, seed^0x6c6f6f6d6669656c)),
		o:    o,
		t:    &opsgen.Transcript{},
		tok:  tok,
		used: map[string]bool{},
		last: -1,
	}
	g.target = int(float64(o.ToolCalls) * tokensPerCall * o.OutputScale)
	g.now = time.Date(2025, time.Month(1+g.r.IntN(11)), 1+g.r.IntN(27), 7+g.r.IntN(3), g.r.IntN(60), g.r.IntN(60), 0, time.UTC)
	return g
}

// task is one piece of work the user asks for, from the user's message to
// the agent's last word on it.
type task func(g *gen)

var tasks = []task{
	(*gen).taskPretrain,
	(*gen).taskTune,
	(*gen).taskTriton,
	(*gen).taskTracking,
	(*gen).taskJulia,
	(*gen).taskRCheck,
	(*gen).taskFortran,
	(*gen).taskShuttle,
	(*gen).taskGateway,
	(*gen).taskZig,
	(*gen).taskWindows,
	(*gen).taskConda,
	(*gen).taskMinio,
	(*gen).taskAlerts,
}

func (g *gen) session() {
	g.t.System = systemPrompt
	g.spent = g.count(systemPrompt) + 10
	var order []int
	for i := 0; g.calls < g.o.ToolCalls; i++ {
		if i%len(tasks) == 0 {
			order = g.r.Perm(len(tasks))
			if order[0] == g.last {
				order[0], order[len(order)-1] = order[len(order)-1], order[0]
			}
			if i > 0 {
				g.round++
			}
		}
		k := order[i%len(tasks)]
		g.last = k
		g.now = g.now.Add(time.Duration(g.n(20, 240)) * time.Minute)
		tasks[k](g)
	}
	g.say(g.pick(
		"That's everything on the list. Each change above was verified with the run that follows it; nothing is left half-applied.",
		"All done for now. The fixes are in place and the last run of each one passed; say if you want any of them reverted or followed up.",
		"Wrapping up here: every task you gave me today has a passing run after its change. I left the jobs and services running as they are.",
	))
	g.t.ToolCalls = g.calls
}

// count estimates the o200k tokens s takes as a JSON string value.
func (g *gen) count(s string) int {
	return g.tok.Count(jsonText(s))
}

// jsonText is s as encoding/json writes it, without the quotes.
func jsonText(s string) string {
	plain := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' || c >= 0x80 {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// want is how many tokens an output of weight w should take, so that the
// session lands on its budget: the budget left, shared among the calls
// left, in proportion to the weights asked for so far.
func (g *gen) want(w float64) int {
	g.wsum += w
	left := g.o.ToolCalls - g.calls
	if left < 6 {
		left = 6
	}
	rem := g.target - g.spent
	if rem < 0 {
		rem = 0
	}
	// mean weight of a call so far, with a prior of 0.75 for eight calls
	avg := (g.wsum + 6) / float64(g.calls+8)
	x := float64(rem) / float64(left) * w / avg * (0.75 + 0.5*g.r.Float64())
	hi := maxOutput * g.o.OutputScale
	if x > hi {
		x = hi
	}
	if x < 120 {
		x = 120
	}
	return int(x)
}

// user appends a user message.
func (g *gen) user(text string) {
	g.t.Messages = append(g.t.Messages, opsgen.Message{Role: "user", Text: text})
	g.spent += g.count(text) + 8
}

// say appends an assistant message without calls, or adds text to the
// one before it.
func (g *gen) say(text string) {
	if m := g.lastTalk(); m != nil {
		m.Text += "\n\n" + text
	} else {
		g.t.Messages = append(g.t.Messages, opsgen.Message{Role: "assistant", Text: text})
	}
	g.spent += g.count(text) + 8
}

// lastTalk is the last message if it is the assistant's without calls:
// the message a turn or a say goes on with.
func (g *gen) lastTalk() *opsgen.Message {
	if n := len(g.t.Messages); n > 0 {
		if m := &g.t.Messages[n-1]; m.Role == "assistant" && len(m.Calls) == 0 {
			return m
		}
	}
	return nil
}

// pend is a call and what makes its output.
type pend struct {
	call opsgen.Call
	run  func(o *out)
}

// turn appends an assistant message with text and calls, then the
// message of their results, made in order.
func (g *gen) turn(text string, ps ...pend) {
	est := g.count(text) + 8
	m := g.lastTalk()
	if m == nil {
		g.t.Messages = append(g.t.Messages, opsgen.Message{Role: "assistant", Text: text})
		m = &g.t.Messages[len(g.t.Messages)-1]
	} else if text != "" {
		m.Text += "\n\n" + text
	}
	for _, p := range ps {
		m.Calls = append(m.Calls, p.call)
		est += g.count(opsgen.ArgsJSON(p.call.Args)) + 24
	}
	g.spent += est
	res := opsgen.Message{Role: "tool"}
	for _, p := range ps {
		g.now = g.now.Add(time.Duration(g.n(4, 150)) * time.Second)
		o := &out{g: g}
		p.run(o)
		text := strings.Join(o.lines, "\n")
		res.Results = append(res.Results, opsgen.Result{
			CallID:   p.call.ID,
			Output:   text,
			Exit:     o.exit,
			Read:     o.read,
			ErrLines: o.errs,
		})
		g.spent += g.count(text) + 16
		g.calls++
	}
	g.t.Messages = append(g.t.Messages, res)
}

func (g *gen) callID() string {
	return g.fresh(func() string { return g.chars(alnum, 24) })
}

func (g *gen) bash(cmd string, run func(o *out)) pend {
	return pend{opsgen.Call{ID: g.callID(), Name: "bash", Args: []opsgen.Arg{{Key: "command", Value: cmd}}}, run}
}

func (g *gen) readFile(path string, run func(o *out)) pend {
	return pend{opsgen.Call{ID: g.callID(), Name: "read_file", Args: []opsgen.Arg{{Key: "path", Value: path}}}, func(o *out) {
		o.read = true
		run(o)
	}}
}

func (g *gen) grep(pattern, path string, run func(o *out)) pend {
	return pend{opsgen.Call{ID: g.callID(), Name: "grep", Args: []opsgen.Arg{{Key: "pattern", Value: pattern}, {Key: "path", Value: path}}}, func(o *out) {
		o.read = true
		run(o)
	}}
}

func (g *gen) writeFile(path, content string) pend {
	return pend{opsgen.Call{ID: g.callID(), Name: "write_file", Args: []opsgen.Arg{{Key: "path", Value: path}, {Key: "content", Value: content}}}, func(o *out) {
		o.addf("Wrote %d bytes to %s", len(content), path)
	}}
}

func (g *gen) replace(path, old, new string) pend {
	return pend{opsgen.Call{ID: g.callID(), Name: "replace_in_file", Args: []opsgen.Arg{{Key: "path", Value: path}, {Key: "old", Value: old}, {Key: "new", Value: new}}}, func(o *out) {
		o.addf("Replaced 1 occurrence in %s", path)
	}}
}

const systemPrompt = `You are a coding agent working for Loomfield's research-computing team on Warp, the model-training and simulation platform. You have a shell on the Warp login node (/srv/warp is the monorepo checkout) with SLURM, Ray, Docker, Julia, R, gfortran/OpenMPI, Leiningen, OpenResty, Zig, PowerShell 7 (remoting to the Windows build agents), mamba, mc (MinIO), promtool/amtool, and the MLflow and W&B CLIs.

Tools:
- bash(command): run a command; you get its combined output and exit status.
- read_file(path): print a file.
- grep(pattern, path): search files under a path.
- write_file(path, content): create or overwrite a file.
- replace_in_file(path, old, new): replace one exact occurrence of old with new.

Work in small verified steps. Prefer reading logs and code before changing anything. Ask the user before anything destructive (restarts, drains, deletes) and follow the constraints they give. Keep messages short.`
