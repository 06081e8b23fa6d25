package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/compact"
	"github.com/strata-memory/strata/compact/checkpoint"
)

func runCompact(ctx context.Context, m *Main, args []string) error {
	c := newCompactCmd(m)
	if err := c.fs.parse(args); err != nil {
		return err
	}
	p, err := c.check()
	if err != nil {
		return err
	}
	cfg, err := c.config(m.Getenv)
	if err != nil {
		return err
	}

	var a *app
	defer func() {
		if a != nil {
			a.Close()
		}
	}()
	if *c.fromStore {
		if a, err = m.open(ctx, c.fs.g); err != nil {
			return err
		}
	}
	data, tr, err := c.input(ctx, m, a, p)
	if err != nil {
		return err
	}

	s, err := m.resolve(c.fs.g)
	if err != nil {
		return err
	}
	tok, w, err := newCheckpointer(s, *c.budget)
	if err != nil {
		return err
	}
	if *c.conv != "" && a == nil {
		if a, err = m.open(ctx, c.fs.g); err != nil {
			return err
		}
	}
	remembered := 0
	cm, err := compact.New(compact.Options{Config: cfg, Tokenizer: tok, Checkpointer: w, PreCompact: c.preCompact(m, a, &remembered)})
	if err != nil {
		return err
	}
	req := c.request(tr)
	var res compact.Result
	if a != nil {
		res, err = cm.CompactConversation(ctx, compact.StoreState{Store: a.store, Namespace: a.mem.Namespace()}, *c.conv, req)
	} else {
		res, err = cm.Compact(ctx, req)
	}
	if err != nil {
		// The agent's pipeline gets its list back as it sent it, never an
		// empty one; the error goes to standard error.
		if _, werr := m.Stdout.Write(data); werr != nil {
			return fmt.Errorf("%w (and writing the input back: %v)", err, werr)
		}
		return err
	}
	return c.write(m, compact.NewStats(p, tok.Name(), *c.conv, res, remembered), res.Transcript)
}

// compactCmd holds the flags of 'strata compact'.
type compactCmd struct {
	fs                                                     *cmdline
	provider, conv, hook                                   *string
	force, fromStore, noRemember, stats, noPrune, noDigest *bool
	budget, systemTokens, usageTokens, usageMessages       *int
	// cfg receives the threshold flags given, over STRATA_* and the
	// defaults; cfgFlags maps each flag's name to its value and the
	// field of cfg it sets.
	cfg      compact.Config
	cfgFlags map[string]struct{ val, field *int }
	// set names the flags given on the command line.
	set map[string]bool
}

func newCompactCmd(m *Main) *compactCmd {
	fs := m.command("compact", "[--provider openai|anthropic] [--conversation ID [--from-store]] [--force] [--stats] [--json] < messages.json > compacted.json")
	c := &compactCmd{fs: fs, cfgFlags: map[string]struct{ val, field *int }{}}
	c.provider = fs.String("provider", "openai", "shape of the message list: openai (chat messages) or anthropic (messages)")
	c.conv = fs.String("conversation", "", "keep the checkpoint and counts of this conversation in the store, and remember the compacted span as its turns")
	c.force = fs.Bool("force", false, "compact whatever the threshold (still at a user-turn boundary)")
	c.fromStore = fs.Bool("from-store", false, "with --conversation: compact the conversation's stored turns (an imported Claude Code or Codex session, say) instead of a list on standard input, from where its last compaction stopped; nothing is appended")
	c.noRemember = fs.Bool("no-remember", false, "with --conversation: do not append the compacted span to the conversation's turns")
	c.hook = fs.String("hook", "", "shell command run before each checkpoint, with the span's messages (JSON) on its standard input; if it fails, the input list is written back unchanged and the command exits 1")
	c.stats = fs.Bool("stats", false, "write the statistics as JSON on standard error")
	c.budget = fs.Int("checkpoint-budget", checkpoint.DefaultBudget, "the checkpoint's size limit in tokens")
	c.systemTokens = fs.Int("system-tokens", 0, "tokens the request carries beside the list (a system prompt or tools it does not hold)")
	c.usageTokens = fs.Int("usage-input-tokens", 0, "the input tokens the provider reported for the list's first --usage-messages messages: calibrates the estimate")
	c.usageMessages = fs.Int("usage-messages", 0, "how many messages of the list --usage-input-tokens counted (0: all)")
	intFlag := func(name string, field *int, usage string) {
		c.cfgFlags[name] = struct{ val, field *int }{fs.Int(name, 0, usage), field}
	}
	cfg := &c.cfg
	intFlag("tool-soft-trim-chars", &cfg.ToolSoftTrimChars, "soft-trim tool results longer than this many characters (env STRATA_TOOL_SOFT_TRIM_CHARS, default 4000)")
	intFlag("tool-soft-trim-head", &cfg.ToolSoftTrimHead, "characters kept at the head of a trimmed result (env STRATA_TOOL_SOFT_TRIM_HEAD, default 1500)")
	intFlag("tool-soft-trim-tail", &cfg.ToolSoftTrimTail, "characters kept at the tail (env STRATA_TOOL_SOFT_TRIM_TAIL, default 1500)")
	intFlag("tool-hard-clear-after", &cfg.ToolHardClearAfter, "clear results older than this many tool-result messages; 0 never (env STRATA_TOOL_HARD_CLEAR_AFTER, default 6)")
	intFlag("keep-last-tool-results", &cfg.KeepLastToolResults, "never touch the latest N tool-result messages (env STRATA_KEEP_LAST_TOOL_RESULTS, default 2)")
	intFlag("threshold", &cfg.CompactionThreshold, "compact when the estimated input plus output headroom exceeds this (env STRATA_COMPACTION_THRESHOLD, default 100000)")
	intFlag("keep-recent-tokens", &cfg.KeepRecentTokens, "recent history kept verbatim (env STRATA_KEEP_RECENT_TOKENS, default 20000)")
	intFlag("output-headroom", &cfg.OutputHeadroom, "output tokens assumed when the list has no max_tokens (env STRATA_OUTPUT_HEADROOM, default 16000)")
	c.noPrune = fs.Bool("no-prune", false, "leave tool results alone (layer 1 off; env STRATA_TOOL_PRUNING_ENABLED=false)")
	c.noDigest = fs.Bool("no-clear-digest", false, "a hard-cleared result keeps only the placeholder, without the line naming the identifiers it held (env STRATA_TOOL_CLEAR_DIGEST=false)")
	return c
}

// check returns the provider the flags name, or a usage error for flags
// that do not go together.
func (c *compactCmd) check() (compact.Provider, error) {
	p, err := compact.ParseProvider(*c.provider)
	if err != nil {
		return p, usagef("%v", err)
	}
	if *c.noRemember && *c.conv == "" {
		return p, usagef("--no-remember needs --conversation")
	}
	if *c.fromStore && *c.conv == "" {
		return p, usagef("--from-store needs --conversation")
	}
	if *c.fromStore && p != compact.OpenAI {
		return p, usagef("--from-store writes OpenAI chat messages: leave --provider at openai")
	}
	return p, nil
}

// config returns the thresholds: the defaults, then STRATA_*, then the
// flags given.
func (c *compactCmd) config(getenv func(string) string) (compact.Config, error) {
	env, err := compact.ConfigFromEnv(getenv)
	if err != nil {
		return compact.Config{}, err
	}
	c.cfg = env
	// Running the command asks for compaction: layer 2 is on unless the
	// environment turns it off.
	if getenv("STRATA_COMPACTION_ENABLED") == "" {
		c.cfg.CompactionEnabled = true
	}
	if *c.noPrune {
		c.cfg.ToolPruningEnabled = false
	}
	if *c.noDigest {
		c.cfg.ToolClearDigest = false
	}
	c.set = map[string]bool{}
	c.fs.Visit(func(f *flag.Flag) { c.set[f.Name] = true })
	for name, f := range c.cfgFlags {
		if c.set[name] {
			*f.field = *f.val
		}
	}
	if err := c.cfg.Validate(); err != nil {
		return compact.Config{}, err
	}
	return c.cfg, nil
}

// input reads the message list: the conversation's stored turns with
// --from-store (a is then its store), standard input otherwise. It
// returns the bytes read, to be written back if compaction fails, and
// the list parsed.
func (c *compactCmd) input(ctx context.Context, m *Main, a *app, p compact.Provider) ([]byte, *compact.Transcript, error) {
	var data []byte
	var failed []string
	var err error
	if *c.fromStore {
		if data, failed, err = storedList(ctx, a, *c.conv); err != nil {
			return nil, nil, err
		}
		// The span is stored already: appending it again would store it
		// twice under other ids.
		*c.noRemember = true
	} else if data, err = io.ReadAll(m.Stdin); err != nil {
		return nil, nil, fmt.Errorf("read standard input: %w", err)
	}
	tr, err := compact.Parse(p, data)
	if err != nil {
		if *c.fromStore {
			return nil, nil, fmt.Errorf("conversation %s: %w", *c.conv, err)
		}
		return nil, nil, fmt.Errorf("standard input: %w", err)
	}
	// The tool's own word that a stored result failed, which OpenAI's
	// form cannot carry.
	tr.MarkFailed(failed...)
	return data, tr, nil
}

// newCheckpointer returns the tokenizer and the checkpoint writer the
// settings configure.
func newCheckpointer(s settings, budget int) (strata.Tokenizer, *checkpoint.Writer, error) {
	tok, err := newTokenizer(s.Tokenizer)
	if err != nil {
		return nil, nil, err
	}
	llm, err := s.LLM.completer()
	if err != nil {
		return nil, nil, err
	}
	w, err := checkpoint.New(checkpoint.Options{LLM: llm, Model: s.LLM.Model, Tokenizer: tok, Budget: budget})
	if err != nil {
		return nil, nil, err
	}
	return tok, w, nil
}

// preCompact returns the hook run before each checkpoint: the user's
// --hook, then, with --conversation, appending the span to the
// conversation's turns in a and counting them in remembered.
func (c *compactCmd) preCompact(m *Main, a *app, remembered *int) compact.Hook {
	var pre compact.Hook
	if *c.hook != "" {
		pre = shellHook(m, *c.hook, *c.conv)
	}
	if *c.conv != "" && !*c.noRemember {
		// The user's hook first: if it fails, nothing is stored.
		pre = compact.Hooks(pre, compact.Remember(a.mem, *c.conv, nil), compact.Counter(remembered))
	}
	return pre
}

// request returns the compaction request for tr.
func (c *compactCmd) request(tr *compact.Transcript) compact.Request {
	req := compact.Request{Transcript: tr, Force: *c.force, SystemTokens: *c.systemTokens}
	if c.set["usage-input-tokens"] {
		n := *c.usageMessages
		if n == 0 {
			n = len(tr.Messages)
		}
		req.Usage = &compact.Usage{InputTokens: *c.usageTokens, Messages: n}
	}
	return req
}

// write writes the compacted list on standard output (with the
// statistics, as JSON, with --json), and the statistics on standard
// error with --stats, or as a line when that is a terminal.
func (c *compactCmd) write(m *Main, st compact.Stats, tr *compact.Transcript) error {
	if *c.fs.json {
		return writeJSON(m.Stdout, struct {
			Stats    compact.Stats       `json:"stats"`
			Messages *compact.Transcript `json:"messages"`
		}{st, tr})
	}
	if _, err := m.Stdout.Write(tr.JSON()); err != nil {
		return err
	}
	fmt.Fprintln(m.Stdout)
	if *c.stats {
		return writeJSON(m.Stderr, st)
	}
	if m.IsTerminal {
		fmt.Fprintln(m.Stderr, compactLine(st))
	}
	return nil
}

// compactLine is the one-line account a terminal gets.
func compactLine(s compact.Stats) string {
	line := fmt.Sprintf("compact: %d -> %d tokens (%s); %d results trimmed, %d cleared", s.TokensBefore, s.TokensAfter,
		s.Tokenizer, s.ResultsTrimmed, s.ResultsCleared)
	switch {
	case s.Fallback:
		line += fmt.Sprintf("; checkpoint failed (%s): %d messages dropped, recent window kept", s.Error, s.MessagesCompacted)
	case s.Compacted:
		line += fmt.Sprintf("; %d messages compacted into a %s checkpoint with %d identifiers (compaction %d)",
			s.MessagesCompacted, s.Mode, s.IdentifiersKept, s.CompactionCount)
	default:
		line += "; not compacted: " + s.Reason
	}
	if s.TurnsRemembered > 0 {
		line += fmt.Sprintf("; %d turns remembered in %s", s.TurnsRemembered, s.Conversation)
	}
	return line
}

// shellHook runs command with sh -c before each checkpoint, the span's
// messages on its standard input and STRATA_CONVERSATION and
// STRATA_COMPACTION_NUMBER in its environment. Its output goes to
// standard error; a failure aborts the compaction.
func shellHook(m *Main, command, conversation string) compact.Hook {
	return func(ctx context.Context, span compact.Span) error {
		cmd := exec.CommandContext(ctx, "sh", "-c", command)
		cmd.Stdin = bytes.NewReader(span.JSON())
		cmd.Stdout, cmd.Stderr = m.Stderr, m.Stderr
		cmd.Env = append(os.Environ(), "STRATA_CONVERSATION="+conversation,
			"STRATA_COMPACTION_NUMBER="+strconv.Itoa(span.Number))
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("pre-compaction hook %q: %w", command, err)
		}
		return nil
	}
}

// storedList is the list compact --from-store compacts: conversation
// conv's turns as OpenAI messages, from where its last compaction stopped
// (compact.StoredList), and the calls whose results failed
// (compact.FailedCalls).
func storedList(ctx context.Context, a *app, conv string) ([]byte, []string, error) {
	if _, err := a.mem.Conversation(ctx, conv); err != nil {
		return nil, nil, err
	}
	turns, err := a.store.Turns(ctx, strata.TurnFilter{Namespace: a.mem.Namespace(), Conversation: conv})
	if err != nil {
		return nil, nil, err
	}
	if len(turns) == 0 {
		return nil, nil, strata.Errorf(strata.EINVALID, "conversation %s has no turns to compact", conv)
	}
	st, err := compact.StoreState{Store: a.store, Namespace: a.mem.Namespace()}.Load(ctx, conv)
	if err != nil {
		return nil, nil, err
	}
	list, err := compact.StoredList(turns, st)
	if err != nil {
		return nil, nil, fmt.Errorf("conversation %s: %w", conv, err)
	}
	return list, compact.FailedCalls(turns), nil
}
