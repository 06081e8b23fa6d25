// Command strata is long-term memory for LLM conversations: import turns,
// browse the summary pyramid, and get a token-budgeted context package.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"time"

	"github.com/strata-memory/strata"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	m := NewMain()
	if err := m.Run(ctx, os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(2)
		}
		fmt.Fprintln(os.Stderr, "strata:", err)
		var u usageError
		if errors.As(err, &u) {
			os.Exit(2)
		}
		os.Exit(1)
	}
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

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, m *Main, args []string) error
}

func commands() []command {
	return []command{
		{"demo", "import a sample conversation shipped in the binary; show its tree and a context", runDemo},
		{"import", "import turns from files (jsonl, openai, locomo, Claude Code, Codex, ChatGPT, Anthropic)", runImport},
		{"watch", "follow transcript files and folders as they grow and import new turns (default: ~/.claude/projects)", runWatch},
		{"add", "add one turn to a conversation", runAdd},
		{"rollup", "close every complete span of a conversation's pyramid", runRollup},
		{"tree", "show a conversation's summary pyramid", runTree},
		{"review", "list summaries over budget or kept extractive because the model failed", runReview},
		{"learnings", "list the key facts learned from the conversation; confirm or reject them", runLearnings},
		{"context", "assemble a context package within a token budget", runContext},
		{"search", "search turns and summaries (BM25, hybrid with an embedder)", runSearch},
		{"embed", "compute the missing vectors of turns and summaries (needs an embedder)", runEmbed},
		{"reembed", "drop vectors of another model or dimension and compute them anew", runReembed},
		{"expand", "show the exact turns under a summary node, whatever their tier", runExpand},
		{"compact", "compact an agent's message list: prune old tool output, checkpoint older history", runCompact},
		{"zoom", "show the whole turns of a day, week, month or range, whatever their tier", runZoom},
		{"pin", "pin a turn as a milestone, or mark a day important", runPin},
		{"policy", "show a pyramid policy, or move a conversation to another and rebuild it", runPolicy},
		{"tier", "move old spans to warm and cold storage (and expire per the retention rule)", runTier},
		{"retention", "delete archived raw content past cold_retention_days (--dry-run shows it)", runRetention},
		{"ctf", "encode JSONL turns as Compact Turn Format, or decode it back", runCTF},
		{"list", "list conversations", runList},
		{"forget", "delete a conversation and everything it holds, keeping an audit record", runForget},
		{"token", "create, list or revoke the server's bearer tokens (one namespace each)", runToken},
		{"stats", "counts and bytes on disk", runStats},
		{"migrate", "bring the store's schema to this build's version (SQLite or PostgreSQL)", runMigrate},
		{"copy", "copy a store into another (SQLite and PostgreSQL, either way), resumably, and verify it", runCopy},
		{"export", "write a conversation's primer files: daily, weekly, monthly, upload package", runExport},
		{"eval", "measure context quality on a LoCoMo-format file: evidence recall per budget against a BM25 baseline", runEval},
		{"serve", "serve the store over HTTP: JSON API under /v1, OpenAPI at /openapi.json (a token per request; --no-auth: loopback only)", runServe},
		{"proxy", "serve OpenAI and Anthropic model APIs in front of an upstream, with memory: each turn remembered, history reshaped (loopback only)", runProxy},
		{"tokens", "count the tokens of standard input", runTokens},
		{"mcp", "serve the memory to MCP clients (Claude Desktop, Claude Code) over stdio", runMCP},
	}
}

// Run runs the command line args (without the program name).
func (m *Main) Run(ctx context.Context, args []string) error {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		m.usage(m.Stdout)
		if len(args) == 0 {
			return usagef("no command given")
		}
		return nil
	}
	if args[0] == "version" || args[0] == "--version" {
		fmt.Fprintln(m.Stdout, "strata", version)
		return nil
	}
	for _, c := range commands() {
		if c.name == args[0] {
			err := c.run(ctx, m, args[1:])
			for _, x := range m.explainers {
				err = x.Explain(err)
			}
			m.explainers = nil
			return err
		}
	}
	return usagef("unknown command %q (run 'strata help')", args[0])
}

const version = "0.1.0-dev"

func (m *Main) usage(w io.Writer) {
	fmt.Fprintln(w, "strata: long-term memory for LLM conversations")
	fmt.Fprintln(w, "\nUsage: strata COMMAND [flags]\n\nCommands:")
	cs := commands()
	sort.SliceStable(cs, func(i, j int) bool { return false })
	for _, c := range cs {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nEvery command takes --db PATH (or STRATA_DB) and --config FILE (or STRATA_CONFIG);")
	fmt.Fprintln(w, "read commands take --json. Run 'strata COMMAND -h' for a command's flags.")
}

// cmdline is a subcommand's flags: its own, the global ones, and --json.
type cmdline struct {
	*flag.FlagSet
	g    *globals
	json *bool
}

// command returns the flags of a subcommand, which reports errors as usage
// errors and prints its help on -h.
func (m *Main) command(name, usage string) *cmdline {
	fs := flag.NewFlagSet("strata "+name, flag.ContinueOnError)
	fs.SetOutput(m.Stderr)
	fs.Usage = func() {
		fmt.Fprintf(m.Stderr, "Usage: strata %s %s\n\nFlags:\n", name, usage)
		fs.PrintDefaults()
	}
	return &cmdline{FlagSet: fs, g: m.addGlobals(fs), json: fs.Bool("json", false, "print JSON")}
}

// parse parses args, turning flag errors into usage errors.
func (c *cmdline) parse(args []string) error {
	fs := c.FlagSet
	if err := fs.Parse(interleave(fs, args)); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
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
