// Command strata is long-term memory for LLM conversations: import turns,
// browse the summary pyramid, and get a token-budgeted context package.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"time"

	"github.com/strata-memory/strata"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(exitCode(NewMain().Run(ctx, os.Args[1:]), os.Stderr))
}

// exitCode prints err, if any, to stderr and returns the process's exit
// status: 0 for none, 2 for a mistake in the command line, 1 otherwise.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "strata:", err)
	var u usageError
	if errors.As(err, &u) {
		return 2
	}
	return 1
}

// Main is the CLI: its streams and environment are fields so tests can run
// it in-process.
type Main struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
	// IsTerminal reports whether stderr is a terminal (for progress bars).
	IsTerminal bool
	// Now is the clock the engine reads (nil: time.Now): when periods
	// close, when spans go cold, and how long ago.
	Now func() time.Time
	// explainers are the stores the command opened: Run passes its
	// error through each, so that a full disk or a read-only file is
	// said in words.
	explainers []explainer
	// flagSets, when set, collects the flag set of every command line
	// parsed: the completion scripts read the commands' flags so.
	flagSets *[]*flag.FlagSet
}

// NewMain returns a Main over the process's streams and environment.
func NewMain() *Main {
	return &Main{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv,
		IsTerminal: isTerminal(os.Stderr)}
}

// usageError is a mistake in the command line (exit status 2).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// command is one entry of the command table, from which the general
// help, 'strata help CMD' and the shell completion scripts are made.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, m *Main, args []string) error
	// subs are the command's subcommands, the word that follows its
	// name ('strata token create'), if it has any.
	subs []string
}

func commands() []command {
	return []command{
		{name: "demo", summary: "import a sample conversation shipped in the binary; show its tree and a context", run: runDemo},
		{name: "import", summary: "import turns from files (jsonl, openai, locomo, Claude Code, Codex, ChatGPT, Anthropic)", run: runImport},
		{name: "watch", summary: "follow transcript files and folders as they grow and import new turns (default: ~/.claude/projects)", run: runWatch},
		{name: "add", summary: "add one turn to a conversation", run: runAdd},
		{name: "rollup", summary: "close every complete span of a conversation's pyramid", run: runRollup},
		{name: "tree", summary: "show a conversation's summary pyramid", run: runTree},
		{name: "review", summary: "list summaries over budget or kept extractive because the model failed", run: runReview},
		{name: "learnings", summary: "list the key facts learned from the conversation; confirm or reject them", run: runLearnings, subs: []string{"confirm", "reject", "reopen"}},
		{name: "context", summary: "assemble a context package within a token budget", run: runContext},
		{name: "search", summary: "search turns and summaries (BM25, hybrid with an embedder)", run: runSearch},
		{name: "embed", summary: "compute the missing vectors of turns and summaries (needs an embedder)", run: runEmbed},
		{name: "reembed", summary: "drop vectors of another model or dimension and compute them anew", run: runReembed},
		{name: "expand", summary: "show the exact turns under a summary node, whatever their tier", run: runExpand},
		{name: "compact", summary: "compact an agent's message list: prune old tool output, checkpoint older history", run: runCompact},
		{name: "zoom", summary: "show the whole turns of a day, week, month or range, whatever their tier", run: runZoom},
		{name: "pin", summary: "pin a turn as a milestone, or mark a day important", run: runPin},
		{name: "policy", summary: "show a pyramid policy, or move a conversation to another and rebuild it", run: runPolicy, subs: []string{"show", "set"}},
		{name: "tier", summary: "move old spans to warm and cold storage (and expire per the retention rule)", run: runTier},
		{name: "retention", summary: "delete archived raw content past cold_retention_days (--dry-run shows it)", run: runRetention},
		{name: "ctf", summary: "encode JSONL turns as Compact Turn Format, or decode it back", run: runCTF, subs: []string{"encode", "decode"}},
		{name: "list", summary: "list conversations", run: runList},
		{name: "forget", summary: "delete a conversation and everything it holds, keeping an audit record", run: runForget},
		{name: "token", summary: "create, list or revoke the server's bearer tokens (one namespace each)", run: runToken, subs: []string{"create", "list", "revoke"}},
		{name: "stats", summary: "counts and bytes on disk", run: runStats},
		{name: "migrate", summary: "bring the store's schema to this build's version (SQLite or PostgreSQL)", run: runMigrate},
		{name: "copy", summary: "copy a store into another (SQLite and PostgreSQL, either way), resumably, and verify it", run: runCopy},
		{name: "export", summary: "write a conversation's primer files: daily, weekly, monthly, upload package", run: runExport, subs: []string{"primers"}},
		{name: "eval", summary: "measure context quality on a LoCoMo-format file: evidence recall per budget against a BM25 baseline", run: runEval},
		{name: "serve", summary: "serve the store over HTTP: JSON API under /v1, OpenAPI at /openapi.json (a token per request; --no-auth: loopback only)", run: runServe},
		{name: "proxy", summary: "serve OpenAI and Anthropic model APIs in front of an upstream, with memory: each turn remembered, history reshaped (loopback only)", run: runProxy},
		{name: "tokens", summary: "count the tokens of standard input", run: runTokens},
		{name: "mcp", summary: "serve the memory to MCP clients (Claude Desktop, Claude Code) over stdio", run: runMCP},
		{name: "completion", summary: "print a shell completion script: strata completion bash|zsh|fish", run: runCompletion, subs: completionShells},
		{name: "version", summary: "print strata's version", run: runVersion},
		{name: "help", summary: "show the help of strata, or of one command: strata help COMMAND [SUBCOMMAND]", run: runHelp},
	}
}

// Run runs the command line args (without the program name). A request
// for help (-h, --help, 'strata help [COMMAND]') prints it to Stdout and
// returns nil.
func (m *Main) Run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		m.usage(m.Stdout)
		return usagef("no command given")
	}
	switch args[0] {
	case "-h", "-help", "--help":
		args = append([]string{"help"}, args[1:]...)
	case "--version":
		args[0] = "version"
	}
	c, ok := lookup(args[0])
	if !ok {
		return usagef("unknown command %q (run 'strata help')", args[0])
	}
	err := c.run(ctx, m, args[1:])
	for _, x := range m.explainers {
		err = x.Explain(err)
	}
	m.explainers = nil
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return err
}

// lookup returns the command named name.
func lookup(name string) (command, bool) {
	for _, c := range commands() {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

const version = "0.1.0-dev"

func (m *Main) usage(w io.Writer) {
	fmt.Fprintln(w, "strata: long-term memory for LLM conversations")
	fmt.Fprintln(w, "\nUsage: strata COMMAND [flags]\n\nCommands:")
	cs := commands()
	width := 0
	for _, c := range cs {
		width = max(width, len(c.name))
	}
	for _, c := range cs {
		fmt.Fprintf(w, "  %-*s %s\n", width, c.name, c.summary)
	}
	fmt.Fprintln(w, "\nEvery command takes --db PATH (or STRATA_DB) and --config FILE (or STRATA_CONFIG);")
	fmt.Fprintln(w, "read commands take --json. Run 'strata help COMMAND' (or 'strata COMMAND -h') for a command's flags.")
}

// runHelp prints the general help, or with a command's name that
// command's: its summary, usage line and flags.
func runHelp(ctx context.Context, m *Main, args []string) error {
	if len(args) == 0 || isHelpFlag(args[0]) || args[0] == "help" {
		m.usage(m.Stdout)
		return nil
	}
	c, ok := lookup(args[0])
	if !ok {
		return usagef("help: unknown command %q (run 'strata help' for the list)", args[0])
	}
	if len(args) > 2 {
		return usagef("help: want 'strata help COMMAND [SUBCOMMAND]', got %q", args)
	}
	if len(args) == 2 && !slices.Contains(c.subs, args[1]) {
		if len(c.subs) == 0 {
			return usagef("help: %s has no subcommands", c.name)
		}
		return usagef("help: %s has no subcommand %q (it has %s)", c.name, args[1], strings.Join(c.subs, ", "))
	}
	err := c.run(ctx, m, append(slices.Clone(args[1:]), "-h"))
	if err == nil {
		// Every command answers -h with flag.ErrHelp; one that ran
		// instead is a bug in it.
		return fmt.Errorf("help: strata %s did not print its help", strings.Join(args, " "))
	}
	return err
}

// runVersion prints strata's version.
func runVersion(ctx context.Context, m *Main, args []string) error {
	if len(args) > 0 && isHelpFlag(args[0]) {
		m.printHelp("version", "Usage: strata version")
		return flag.ErrHelp
	}
	if len(args) > 0 {
		return usagef("version takes no arguments")
	}
	fmt.Fprintln(m.Stdout, "strata", version)
	return nil
}

// isHelpFlag reports whether arg asks for help.
func isHelpFlag(arg string) bool { return arg == "-h" || arg == "-help" || arg == "--help" }

// printHelp prints, on Stdout, the help of a command that has no flags of
// its own or whose subcommand is missing: its summary and usage text.
func (m *Main) printHelp(name, usage string) {
	fmt.Fprint(m.Stdout, summaryLine(name))
	if usage != "" {
		fmt.Fprintln(m.Stdout, strings.TrimRight(usage, "\n"))
	}
}

// summaryLine is the first line of a command's help: its name and
// summary from the command table, and a blank line.
func summaryLine(name string) string {
	word, _, _ := strings.Cut(name, " ")
	c, ok := lookup(word)
	if !ok {
		return ""
	}
	return fmt.Sprintf("strata %s: %s\n\n", word, c.summary)
}

// cmdline is a subcommand's flags: its own, the global ones, and --json.
type cmdline struct {
	*flag.FlagSet
	m    *Main
	name string
	g    *globals
	json *bool
}

// command returns the flags of a subcommand, which reports errors as usage
// errors and prints its help on -h.
func (m *Main) command(name, usage string) *cmdline {
	fs := flag.NewFlagSet("strata "+name, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: strata %s %s\n\nFlags:\n", name, usage)
		fs.PrintDefaults()
	}
	return &cmdline{FlagSet: fs, m: m, name: name, g: m.addGlobals(fs), json: fs.Bool("json", false, "print JSON")}
}

// parse parses args, turning flag errors into usage errors. Help asked
// for with -h or --help goes to Stdout, after the command's summary, and
// parse returns flag.ErrHelp; a mistake's message and the usage go to
// Stderr.
func (c *cmdline) parse(args []string) error {
	fs := c.FlagSet
	var out bytes.Buffer
	fs.SetOutput(&out)
	err := fs.Parse(interleave(fs, args))
	fs.SetOutput(c.m.Stderr)
	if c.m.flagSets != nil {
		*c.m.flagSets = append(*c.m.flagSets, fs)
	}
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(c.m.Stdout, summaryLine(c.name))
		c.m.Stdout.Write(out.Bytes())
		return err
	}
	c.m.Stderr.Write(out.Bytes())
	if err != nil {
		return usageError{err.Error()}
	}
	return nil
}

// interleave moves flags after positional arguments to the front, so
// "strata search --conversation c QUERY -k 5" works as users expect.
func interleave(fs *flag.FlagSet, args []string) []string {
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if len(a) > 1 && a[0] == '-' {
			flags = append(flags, a)
			name := strings.TrimLeft(a, "-")
			if strings.Contains(name, "=") {
				continue
			}
			f := fs.Lookup(name)
			if f == nil {
				continue
			}
			if bf, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && bf.IsBoolFlag() {
				continue
			}
			if i+1 < len(args) {
				flags = append(flags, args[i+1])
				i++
			}
			continue
		}
		pos = append(pos, a)
	}
	return append(flags, append([]string{"--"}, pos...)...)
}

func requireConversation(id string) error {
	if id == "" {
		return usagef("--conversation is required")
	}
	return nil
}

var _ = strata.DefaultNamespace
