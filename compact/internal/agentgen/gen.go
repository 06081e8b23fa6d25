package agentgen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/strata-memory/strata/compact/checkpoint"
)

// gen builds one transcript.
type gen struct {
	r         *rand.Rand
	thinking  bool
	lang      *language
	project   project
	tools     toolStyle
	msgs      []Message
	truth     []checkpoint.Identifier
	truthSeen map[string]bool
}

// plant records text as an identifier a continuing agent needs, and
// returns it.
func (g *gen) plant(kind, text string) string {
	k := kind + "\x00" + strings.ToLower(text)
	if !g.truthSeen[k] {
		g.truthSeen[k] = true
		g.truth = append(g.truth, checkpoint.Identifier{Kind: kind, Text: text})
	}
	return text
}

func (g *gen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }

func (g *gen) chance(p float64) bool { return g.r.Float64() < p }

func (g *gen) user(text string) { g.msgs = append(g.msgs, Message{Role: "user", Text: text}) }

// think returns thinking for an assistant message, or "" when the
// transcript has none or the seed skips this one.
func (g *gen) think(text string) string {
	if !g.thinking || !g.chance(0.7) {
		return ""
	}
	if text == "" {
		text = g.pick(reasoning...)
	}
	return text + " " + g.some(reasoning, 2+g.r.IntN(5))
}

// some returns n sentences of pool, in an order of the seed's choosing.
func (g *gen) some(pool []string, n int) string {
	var out []string
	for _, i := range g.r.Perm(len(pool))[:min(n, len(pool))] {
		out = append(out, pool[i])
	}
	return strings.Join(out, " ")
}

// explain adds, now and then, a sentence or two of explanation to what
// the assistant says between tool calls.
func (g *gen) explain(text string) string {
	if text == "" || !g.chance(0.5) {
		return text
	}
	return text + " " + g.some(asides, 1+g.r.IntN(2))
}

// reasoning is what an agent thinks between steps, whatever the task.
var reasoning = []string{
	"Before changing anything I want to see the exact failure rather than guess from the name of the test.",
	"If the change touches shared code, other callers may rely on the current behaviour, so I should check them first.",
	"The user asked to keep the change small, so a targeted fix is better than a refactor here.",
	"Running only the affected package first keeps the feedback loop short; the full suite can come after.",
	"It is worth reading the surrounding code as well, since the bug might sit in a helper rather than where it surfaces.",
	"I should keep the public API stable and avoid renaming exported functions unless I am asked to.",
	"There may already be a test that covers this path; extending it is better than writing a new one.",
	"The error message points at the symptom, and the cause is probably one call earlier.",
	"Once this passes I will run the whole suite to make sure nothing else regressed.",
	"I need to mention any remaining risk in my summary, so the user can decide what to do about it.",
	"The logs only show the last attempt, so earlier failures might have had a different cause.",
	"Configuration is loaded once at startup, which means a change there needs a restart to take effect.",
	"A quick look at the git history should tell me whether this behaviour is intended or a regression.",
	"I should not assume the tests are right either; the expectation itself could be outdated.",
	"Concurrency could matter here, because the handler runs on many goroutines or workers at once.",
	"The simplest explanation that fits all the symptoms is usually the right one, so I will start there.",
	"Keeping the diff focused will make the review easier for whoever reads it next.",
	"If the build breaks after this, the compiler output will point straight at the call sites I missed.",
	"I also want to avoid touching generated files, since they would be overwritten anyway.",
	"The naming in this package is a bit inconsistent, but cleaning that up is out of scope for this request.",
}

// asides are what the assistant adds to a step for the user's benefit.
var asides = []string{
	"This keeps the behaviour for existing callers unchanged.",
	"The rest of the file looks fine to me.",
	"I'll keep an eye on the other call sites while I'm at it.",
	"Nothing else in the package seems to depend on this.",
	"That matches what the error message suggested.",
	"It should not affect the public API.",
	"I'm checking this before I change anything, to be sure of the cause.",
	"This is the only place where the value is computed.",
	"The tests around this code are thin, so I'll be careful.",
	"That also explains why it only showed up recently.",
}

// closings end the assistant's final replies.
var closings = []string{
	"I kept the change minimal and did not touch unrelated code.",
	"Let me know if you want me to also update the documentation.",
	"I did not change any public function signatures.",
	"If you want, I can open a pull request with these changes.",
	"There were no other failures in the full test run.",
	"I left a short comment in the code explaining why the change is needed.",
	"The change is covered by the existing tests; I did not need new fixtures.",
	"Nothing was committed yet, so you can review the diff first.",
}

// step is an assistant message with one tool call, and its result.
func (g *gen) step(thinking, text string, c Call, output string, isErr bool) {
	g.msgs = append(g.msgs, Message{Role: "assistant", Thinking: g.think(thinking), Text: g.explain(text), Calls: []Call{c}})
	g.msgs = append(g.msgs, Message{Role: "tool", Result: &Result{CallID: c.ID, Name: c.Name, Output: output, IsError: isErr}})
}

// steps is an assistant message with several tool calls, answered in
// order.
func (g *gen) steps(thinking, text string, calls []Call, outputs []string) {
	g.msgs = append(g.msgs, Message{Role: "assistant", Thinking: g.think(thinking), Text: text, Calls: calls})
	for i, c := range calls {
		g.msgs = append(g.msgs, Message{Role: "tool", Result: &Result{CallID: c.ID, Name: c.Name, Output: outputs[i]}})
	}
}

func (g *gen) final(text string) {
	g.msgs = append(g.msgs, Message{Role: "assistant", Text: text + "\n\n" + g.some(closings, 1+g.r.IntN(3))})
}

// callID makes a provider-looking tool call id.
func (g *gen) callID() string {
	const digits = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	var b strings.Builder
	b.WriteString(g.tools.idPrefix)
	for i := 0; i < 24; i++ {
		b.WriteByte(digits[g.r.IntN(len(digits))])
	}
	return b.String()
}

// obj writes a JSON object with its keys in the given order; values are
// strings, bools or ints.
func obj(kv ...any) string {
	var b bytes.Buffer
	b.WriteByte('{')
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(kv[i])
		v, _ := json.Marshal(kv[i+1])
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.String()
}

// toolStyle is a family of tool names and argument shapes, as different
// agents have them.
type toolStyle struct {
	idPrefix string
	read     func(path string) (name, args string)
	edit     func(path, old, new string) (name, args string)
	write    func(path, content string) (name, args string)
	shell    func(cmd, why string) (name, args string)
	// grep is a search tool; nil searches with grep through the shell.
	grep func(pattern, dir string) (name, args string)
	// edited and wrote are the results of a successful edit and write.
	edited, wrote func(path string) string
	// readOut formats file content as the read tool returns it.
	readOut func(content string) string
}

var toolStyles = []toolStyle{
	{ // function tools named by verb
		idPrefix: "call_",
		read:     func(p string) (string, string) { return "read_file", obj("path", p) },
		edit: func(p, o, n string) (string, string) {
			return "edit_file", obj("path", p, "old_string", o, "new_string", n)
		},
		write: func(p, c string) (string, string) { return "write_file", obj("path", p, "content", c) },
		shell: func(c, _ string) (string, string) { return "shell", obj("command", c) },
		edited: func(p string) string {
			return "Edited " + p + ": 1 replacement."
		},
		wrote:   func(p string) string { return "Wrote " + p },
		readOut: func(c string) string { return c },
	},
	{ // capitalized tools with file_path, numbered read output
		idPrefix: "toolu_01",
		read:     func(p string) (string, string) { return "Read", obj("file_path", p) },
		edit: func(p, o, n string) (string, string) {
			return "Edit", obj("file_path", p, "old_string", o, "new_string", n)
		},
		write: func(p, c string) (string, string) { return "Write", obj("file_path", p, "content", c) },
		shell: func(c, why string) (string, string) { return "Bash", obj("command", c, "description", why) },
		grep: func(pat, dir string) (string, string) {
			return "Grep", obj("pattern", pat, "path", dir, "output_mode", "content", "-n", true)
		},
		edited: func(p string) string {
			return "The file " + p + " has been updated. Here's the result of running `cat -n` on a snippet of the edited file."
		},
		wrote: func(p string) string { return "File created successfully at: " + p },
		readOut: func(c string) string {
			var b strings.Builder
			for i, l := range strings.Split(c, "\n") {
				fmt.Fprintf(&b, "%6d→%s\n", i+1, l)
			}
			return b.String()
		},
	},
	{ // one editor tool with sub-commands, and bash
		idPrefix: "toolu_01",
		read: func(p string) (string, string) {
			return "str_replace_based_edit_tool", obj("command", "view", "path", p)
		},
		edit: func(p, o, n string) (string, string) {
			return "str_replace_based_edit_tool", obj("command", "str_replace", "path", p, "old_str", o, "new_str", n)
		},
		write: func(p, c string) (string, string) {
			return "str_replace_based_edit_tool", obj("command", "create", "path", p, "file_text", c)
		},
		shell: func(c, _ string) (string, string) { return "bash", obj("command", c) },
		edited: func(p string) string {
			return "The file " + p + " has been edited. Review the changes and make sure they are as expected."
		},
		wrote: func(p string) string { return "File created successfully at: " + p },
		readOut: func(c string) string {
			var b strings.Builder
			for i, l := range strings.Split(c, "\n") {
				fmt.Fprintf(&b, "%6d\t%s\n", i+1, l)
			}
			return b.String()
		},
	},
}

// Tool calls through the transcript's style.

func (g *gen) readCall(path string) Call {
	n, a := g.tools.read(path)
	return Call{ID: g.callID(), Name: n, Args: a}
}

func (g *gen) editCall(path, old, new string) Call {
	n, a := g.tools.edit(path, old, new)
	return Call{ID: g.callID(), Name: n, Args: a}
}

func (g *gen) writeCall(path, content string) Call {
	n, a := g.tools.write(path, content)
	return Call{ID: g.callID(), Name: n, Args: a}
}

func (g *gen) shellCall(cmd, why string) Call {
	n, a := g.tools.shell(cmd, why)
	return Call{ID: g.callID(), Name: n, Args: a}
}

// grepCall searches for pattern under dir with the style's search tool,
// or grep -rn through the shell (a command, planted).
func (g *gen) grepCall(pattern, dir string) Call {
	if g.tools.grep != nil {
		n, a := g.tools.grep(pattern, dir)
		return Call{ID: g.callID(), Name: n, Args: a}
	}
	return g.shellCall(g.plant(checkpoint.KindCommand, fmt.Sprintf("grep -rn %q %s", pattern, dir)), "search")
}

// project is the repository the agent works on.
type project struct {
	org, name, module string
	port              int
	domains           []domain
	host              string // the production host
}

type domain struct {
	dir   string
	nouns []string
}

var domains = []domain{
	{"billing", []string{"invoice", "discount", "tax", "refund", "payment"}},
	{"auth", []string{"token", "session", "claims", "password", "login"}},
	{"inventory", []string{"stock", "reservation", "sku", "warehouse", "shipment"}},
	{"notify", []string{"webhook", "email", "template", "digest", "delivery"}},
	{"search", []string{"index", "query", "ranking", "cursor", "facet"}},
	{"upload", []string{"chunk", "upload", "checksum", "quota", "thumbnail"}},
	{"orders", []string{"order", "cart", "checkout", "coupon", "receipt"}},
}

var verbs = []string{"parse", "apply", "compute", "validate", "load", "refresh", "reserve", "send", "build", "resolve",
	"normalize", "fetch", "encode", "decode", "flush", "merge", "render", "schedule", "sync", "format", "split", "round"}

var orgs = []string{"acme", "northwind", "globex", "initech", "hooli", "umbrella", "wayne-labs", "stark-ind"}

var projects = []string{"billing-api", "shopfront", "ledger-svc", "notes-app", "inventory-svc", "mailer", "storefront",
	"payments-gw", "catalog", "dispatch"}

var ports = []int{3000, 5000, 8000, 8080, 8081, 8443, 9000, 9090}

func newProject(r *rand.Rand, l *language) project {
	p := project{org: orgs[r.IntN(len(orgs))], name: projects[r.IntN(len(projects))], port: ports[r.IntN(len(ports))]}
	p.module = "github.com/" + p.org + "/" + p.name
	p.host = "api." + strings.ReplaceAll(p.org, "-", "") + ".example.com"
	for _, i := range r.Perm(len(domains))[:4] {
		p.domains = append(p.domains, domains[i])
	}
	return p
}

// names of one piece of code the task is about.
type target struct {
	dom      domain
	noun     string
	verb     string
	fn       string // the function
	typ      string // its type
	src      string // its file
	test     string // its test file
	testName string
}

func (g *gen) target() target {
	d := g.project.domains[g.r.IntN(len(g.project.domains))]
	t := target{dom: d, noun: d.nouns[g.r.IntN(len(d.nouns))], verb: verbs[g.r.IntN(len(verbs))]}
	l := g.lang
	t.fn = l.fn(t.verb, t.noun)
	t.typ = l.typ(t.noun)
	t.src = l.src(&g.project, d.dir, t.noun)
	t.test = l.test(&g.project, d.dir, t.noun)
	t.testName = l.testName(t.verb, t.noun, g.pick("rounds half up", "handles empty input", "keeps order", "rejects negative values", "is idempotent"))
	return t
}

// hex returns n random lower-case hex digits, with at least one letter
// and one digit.
func (g *gen) hex(n int) string {
	const digits = "0123456789abcdef"
	for {
		b := make([]byte, n)
		for i := range b {
			b[i] = digits[g.r.IntN(16)]
		}
		s := string(b)
		if strings.ContainsAny(s, "abcdef") && strings.ContainsAny(s, "0123456789") {
			return s
		}
	}
}

func (g *gen) uuid() string {
	h := g.hex(32)
	return h[:8] + "-" + h[8:12] + "-4" + h[13:16] + "-a" + h[17:20] + "-" + h[20:]
}

// otherFns returns n function names of the domain other than fn.
func (g *gen) otherFns(t target, n int) []string {
	var out []string
	seen := map[string]bool{t.fn: true}
	for len(out) < n {
		f := g.lang.fn(verbs[g.r.IntN(len(verbs))], t.dom.nouns[g.r.IntN(len(t.dom.nouns))])
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
