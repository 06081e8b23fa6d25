package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/formats"
)

// fileResult is the public JSON shape of one imported file.
type fileResult struct {
	File          string                `json:"file"`
	Conversations []strata.IngestResult `json:"conversations"`
	Invalid       []invalidLine         `json:"invalid,omitempty"`
	// Records counts the source records of an agent transcript (claude-code,
	// codex, chatgpt): read, kept in turns, and skipped on purpose by kind.
	Records *formats.Counts `json:"records,omitempty"`
}

type invalidLine struct {
	Line  int    `json:"line"`
	Error string `json:"error"`
}

func runImport(ctx context.Context, m *Main, args []string) error {
	fs := m.command("import", "[--format auto|jsonl|openai|locomo|claude-code|codex|chatgpt|anthropic] [--conversation ID] [--policy NAME] [--tz ZONE] [--skip-invalid] [--json] FILE... (- for stdin)")
	format := fs.String("format", "auto", "input format: auto, jsonl, openai, locomo, claude-code, codex, chatgpt or anthropic")
	conv := fs.String("conversation", "", "conversation for turns whose source names none")
	skip := fs.Bool("skip-invalid", false, "import the valid turns and report each invalid line, instead of importing nothing")
	var opts strata.ImportOptions
	fs.StringVar(&opts.Policy, "policy", "", "pyramid policy of conversations this import creates: chunks, calendar, sessions or one of the config file (default: the config's)")
	fs.StringVar(&opts.TimeZone, "tz", "", "time zone calendar periods of new conversations close in, like Europe/Berlin (default: the config's, else UTC)")
	if err := fs.parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usagef("import: give at least one FILE (or - for standard input)")
	}
	a, err := m.open(ctx, fs.g)
	if err != nil {
		return err
	}
	defer a.Close()
	var results []fileResult
	for _, path := range fs.Args() {
		res, err := m.importFile(ctx, a, path, *format, *conv, *skip, opts)
		if err != nil {
			reportCommitted(m, append(results, res))
			return err
		}
		results = append(results, res)
	}
	if *fs.json {
		return writeJSON(m.Stdout, struct {
			Files []fileResult `json:"files"`
		}{results})
	}
	for _, r := range results {
		var added, skipped, nodes int
		for _, c := range r.Conversations {
			added, skipped, nodes = added+c.Added, skipped+c.Skipped, nodes+c.Nodes
		}
		fmt.Fprintf(m.Stdout, "%s: %d conversations, %d turns added, %d already present, %d nodes made\n",
			r.File, len(r.Conversations), added, skipped, nodes)
		for _, c := range r.Conversations {
			fmt.Fprintf(m.Stdout, "  %-20s %6d added %6d present %5d nodes\n", c.Conversation, c.Added, c.Skipped, c.Nodes)
		}
		if len(r.Invalid) > 0 {
			fmt.Fprintf(m.Stdout, "  %d invalid lines skipped (listed on stderr)\n", len(r.Invalid))
		}
		if c := r.Records; c != nil {
			fmt.Fprintf(m.Stdout, "  %d records read, %d kept in %d turns, %d skipped on purpose%s\n",
				c.Records, c.Kept, c.Turns, c.SkippedTotal(), skippedKinds(c.Skipped))
		}
	}
	return nil
}

// skippedKinds lists the kinds of records skipped, most first, like
// " (file-history-snapshot 10, meta 1)".
func skippedKinds(m map[string]int) string {
	if len(m) == 0 {
		return ""
	}
	kinds := make([]string, 0, len(m))
	for k := range m {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool {
		if m[kinds[i]] != m[kinds[j]] {
			return m[kinds[i]] > m[kinds[j]]
		}
		return kinds[i] < kinds[j]
	})
	for i, k := range kinds {
		kinds[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return " (" + strings.Join(kinds, ", ") + ")"
}

// reportCommitted tells, on stderr, what an import that is about to fail
// has stored: the files before the failing one (each imported whole) and
// the part of the failing one written before its error. Stored turns stay
// stored; importing the same files again adds only what is missing.
func reportCommitted(m *Main, results []fileResult) {
	var lines []string
	for _, r := range results {
		var added, convs int
		for _, c := range r.Conversations {
			added += c.Added
			if c.Added > 0 {
				convs++
			}
		}
		if added > 0 {
			lines = append(lines, fmt.Sprintf("  %s: %d turns added to %d conversations", r.File, added, convs))
		}
	}
	if len(lines) == 0 {
		fmt.Fprintln(m.Stderr, "import failed; nothing was stored")
		return
	}
	fmt.Fprintln(m.Stderr, "import failed; stored before the failure (importing the same files again adds only what is missing):")
	for _, l := range lines {
		fmt.Fprintln(m.Stderr, l)
	}
}

// importFile reads a file twice: the first pass parses and validates every
// record, so a bad line fails the import before anything is written; the
// second pass ingests in batches. Standard input is spooled to a temporary
// file for the second pass.
func (m *Main) importFile(ctx context.Context, a *app, path, format, defConv string, skipInvalid bool, opts strata.ImportOptions) (fileResult, error) {
	res := fileResult{File: path}
	f, name, size, cleanup, err := m.openInput(path)
	if err != nil {
		return res, err
	}
	defer cleanup()

	src, done := m.progress(f, size, "checking "+filepath.Base(name))
	defer done() // on the error paths; at the end of the pass too, below
	bad, convs, err := m.checkRecords(src, name, format, defConv, skipInvalid, &res)
	if err != nil {
		return res, err
	}
	done()

	if err := checkPolicies(ctx, a, convs, opts); err != nil {
		return res, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return res, err
	}
	src, done2 := m.progress(f, size, "importing "+filepath.Base(name))
	defer done2()
	err = ingestRecords(ctx, a, src, name, format, defConv, bad, opts, &res)
	return res, err
}

// checkRecords is the first pass of importFile: it parses and validates
// every record of src and returns the lines skipped as invalid (with
// skipInvalid; each noted in res and on stderr) and the conversations
// named. Any other bad record is the error.
func (m *Main) checkRecords(src io.Reader, name, format, defConv string, skipInvalid bool, res *fileResult) (map[int]bool, map[string]bool, error) {
	r, err := formats.Open(format, name, src)
	if err != nil {
		return nil, nil, err
	}
	bad := map[int]bool{}
	var last error
	convs := map[string]bool{}
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return bad, convs, nil
		}
		if err == nil {
			convs[first(rec.Conversation, defConv)] = true
			err = checkRecordConversation(rec, name, defConv)
		}
		if err == nil {
			continue
		}
		var pe *formats.ParseError
		if !skipInvalid || !errors.As(err, &pe) || pe.Line <= 0 || bad[pe.Line] || (last != nil && last.Error() == err.Error()) {
			if skipInvalid && len(bad) > 0 {
				return nil, nil, fmt.Errorf("%w (cannot continue past this error; nothing imported)", err)
			}
			return nil, nil, err
		}
		last = err
		bad[pe.Line] = true
		res.Invalid = append(res.Invalid, invalidLine{Line: pe.Line, Error: err.Error()})
		fmt.Fprintf(m.Stderr, "skipped: %v\n", err)
	}
}

// checkRecordConversation refuses a record of file name that names no
// conversation when there is no default, or names an invalid one.
func checkRecordConversation(rec formats.Record, name, defConv string) error {
	if rec.Conversation == "" && defConv == "" {
		return &formats.ParseError{File: name, Line: rec.Line, Field: "conversation", Msg: "missing (the source names no conversation: give --conversation)"}
	}
	if rec.Conversation != "" {
		if cerr := strata.ValidateConversationID(rec.Conversation); cerr != nil {
			return &formats.ParseError{File: name, Line: rec.Line, Field: "conversation", Msg: cerr.Error()}
		}
	}
	return nil
}

// ingestRecords is the second pass of importFile: it imports the records
// of src but those on the bad lines, and adds the counts to res.
func ingestRecords(ctx context.Context, a *app, src io.Reader, name, format, defConv string, bad map[int]bool, opts strata.ImportOptions, res *fileResult) error {
	r, err := formats.Open(format, name, src)
	if err != nil {
		return err
	}
	// Memory.Import parses, appends and rolls up at once, on separate
	// goroutines.
	results, err := a.mem.ImportWith(ctx, opts, func() (string, strata.Turn, error) {
		for {
			rec, err := r.Next()
			if err != nil {
				var pe *formats.ParseError
				if errors.As(err, &pe) && bad[pe.Line] {
					continue
				}
				return "", strata.Turn{}, err
			}
			if bad[rec.Line] {
				continue
			}
			if rec.Conversation == "" {
				rec.Conversation = defConv
			}
			return rec.Conversation, rec.Turn, nil
		}
	})
	if c, ok := r.(formats.Counter); ok {
		counts := c.Counts()
		res.Records = &counts
	}
	res.addResults(results)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// addResults adds an import's results to r's, one per conversation.
func (r *fileResult) addResults(results []strata.IngestResult) {
	byConv := map[string]int{}
	for _, ir := range results {
		i, ok := byConv[ir.Conversation]
		if !ok {
			i = len(r.Conversations)
			byConv[ir.Conversation] = i
			r.Conversations = append(r.Conversations, strata.IngestResult{Conversation: ir.Conversation})
		}
		c := &r.Conversations[i]
		c.Received += ir.Received
		c.Added += ir.Added
		c.Skipped += ir.Skipped
		c.Nodes += ir.Nodes
	}
}

// checkPolicies refuses, before anything is written, an import that names
// a policy or time zone that does not exist, or a policy other than that
// of a conversation it would add to.
func checkPolicies(ctx context.Context, a *app, convs map[string]bool, opts strata.ImportOptions) error {
	if opts.TimeZone != "" {
		if _, err := strata.LoadTimeZone(opts.TimeZone); err != nil {
			return err
		}
	}
	if opts.Policy == "" {
		return nil
	}
	if _, err := a.mem.Policy(opts.Policy); err != nil {
		return err
	}
	for id := range convs {
		c, err := a.mem.Conversation(ctx, id)
		if strata.ErrorCode(err) == strata.ENOTFOUND {
			continue
		}
		if err != nil {
			return err
		}
		if c.Policy != opts.Policy {
			return strata.Errorf(strata.ECONFLICT, "conversation %q has policy %q, not %q; nothing imported (change it with: strata policy set --conversation %s %s)",
				id, c.Policy, opts.Policy, id, opts.Policy)
		}
	}
	return nil
}

// progress wraps r in a progress bar on stderr when stderr is a terminal
// and the input is large enough to wait for; done clears the bar.
func (m *Main) progress(r io.Reader, size int64, what string) (io.Reader, func()) {
	if !m.IsTerminal || size <= 1<<20 {
		return r, func() {}
	}
	bar := progressbar.NewOptions64(size, progressbar.OptionSetWriter(m.Stderr),
		progressbar.OptionSetDescription(what), progressbar.OptionShowBytes(true),
		progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
	return io.TeeReader(r, bar), func() { bar.Finish() }
}

// openInput opens path, or spools standard input to a temporary file when
// path is "-".
func (m *Main) openInput(path string) (*os.File, string, int64, func(), error) {
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, "", 0, nil, err
		}
		var size int64
		if st, err := f.Stat(); err == nil {
			size = st.Size()
		}
		return f, path, size, func() { f.Close() }, nil
	}
	f, err := os.CreateTemp("", "strata-stdin-*")
	if err != nil {
		return nil, "", 0, nil, err
	}
	// The copy is unlinked as soon as it is open, so that nothing is left
	// behind however the process ends (on systems that cannot remove an
	// open file, it is removed when closed instead).
	removed := os.Remove(f.Name()) == nil
	cleanup := func() {
		f.Close()
		if !removed {
			os.Remove(f.Name())
		}
	}
	n, err := io.Copy(f, m.Stdin)
	if err != nil {
		cleanup()
		return nil, "", 0, nil, fmt.Errorf("read standard input: %w", err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		cleanup()
		return nil, "", 0, nil, err
	}
	return f, "stdin", n, cleanup, nil
}

func runAdd(ctx context.Context, m *Main, args []string) error {
	fs := m.command("add", "--conversation ID --role ROLE [flags] [CONTENT] (content from stdin if not given)")
	conv := fs.String("conversation", "", "conversation id (required)")
	role := fs.String("role", "user", "user, assistant, system or tool")
	name := fs.String("name", "", "speaker name")
	extID := fs.String("ext-id", "", "your id for the turn (default: derived from the turn)")
	at := fs.String("time", "", "time of the turn, RFC 3339 (default: now)")
	session := fs.String("session", "", "session label (default: a new session after an idle gap)")
	model := fs.String("model", "", "model that wrote the turn")
	importance := fs.Float64("importance", 0, "0..1; 0.8 and above is a milestone")
	policy := fs.String("policy", "", "pyramid policy if this creates the conversation: chunks, calendar, sessions or one of the config file")
	tz := fs.String("tz", "", "time zone if this creates the conversation, like Europe/Berlin")
	if err := fs.parse(args); err != nil {
		return err
	}
	if err := requireConversation(*conv); err != nil {
		return err
	}
	var content string
	if fs.NArg() > 0 {
		content = strings.Join(fs.Args(), " ")
	} else {
		data, err := io.ReadAll(m.Stdin)
		if err != nil {
			return err
		}
		content = string(data)
	}
	r, err := strata.ParseRole(*role)
	if err != nil {
		return usagef("--role: %v", err)
	}
	if content == "" {
		return usagef("add: the content is empty (a turn needs text; give it as arguments or on standard input)")
	}
	t := strata.Turn{ExtID: *extID, Role: r, Name: *name, Content: content, Model: *model,
		SessionLabel: *session, Importance: *importance}
	if *at != "" {
		tm, err := time.Parse(time.RFC3339Nano, *at)
		if err != nil {
			return usagef("--time %q: want RFC 3339, like 2026-03-02T09:14:05Z", *at)
		}
		if tm.IsZero() {
			return usagef("--time %q is the zero time, which reads as no time: leave --time out to use the current time", *at)
		}
		if err := strata.CheckTime(tm); err != nil {
			return usagef("--time: %v", err)
		}
		t.Time = tm
	}
	a, err := m.open(ctx, fs.g)
	if err != nil {
		return err
	}
	defer a.Close()
	res, err := a.mem.Ingest(ctx, strata.Batch{Conversation: *conv, Turns: []strata.Turn{t}, Policy: *policy, TimeZone: *tz})
	if err != nil {
		return err
	}
	if *fs.json {
		return writeJSON(m.Stdout, res)
	}
	if res.Added == 0 {
		fmt.Fprintf(m.Stdout, "%s: already present, nothing added\n", *conv)
		return nil
	}
	c, err := a.mem.Conversation(ctx, *conv)
	if err != nil {
		return err
	}
	fmt.Fprintf(m.Stdout, "%s: turn %d added (%d nodes made)\n", *conv, c.Turns, res.Nodes)
	return nil
}

func runRollup(ctx context.Context, m *Main, args []string) error {
	fs := m.command("rollup", "[--conversation ID] [--wait] [--retry-failed] [--watch [--every D]] [--json]")
	conv := fs.String("conversation", "", "conversation id (default: every conversation)")
	wait := fs.Bool("wait", false, "then write the model summaries that are due (levels with summarizer llm), and wait for them")
	retry := fs.Bool("retry-failed", false, "with --wait: ask the model again for the nodes it failed (implies --wait)")
	watch := fs.Bool("watch", false, "keep running: a pass over every conversation each --every, closing periods as they end (Ctrl-C stops)")
	every := fs.Duration("every", time.Minute, "time between passes with --watch")
	if err := fs.parse(args); err != nil {
		return err
	}
	if *watch && *conv != "" {
		return usagef("rollup --watch runs over every conversation; drop --conversation")
	}
	a, err := m.open(ctx, fs.g)
	if err != nil {
		return err
	}
	defer a.Close()
	if *watch {
		return watchRollups(ctx, m, a, *every, *fs.json)
	}
	ids, made, err := rollupOnce(ctx, a, *conv)
	if err != nil {
		return err
	}
	var sum *strata.PendingResult
	if *wait || *retry {
		res, err := a.mem.SummarizePending(ctx, strata.PendingOptions{Conversation: *conv, RetryFailed: *retry})
		if err != nil {
			return err
		}
		sum = &res
		if _, err := a.mem.Learn(ctx, *conv); err != nil {
			return err
		}
	}
	if *fs.json {
		out := map[string]any{"made": made}
		if sum != nil {
			out["summaries"] = sum
		}
		return writeJSON(m.Stdout, out)
	}
	for _, id := range ids {
		fmt.Fprintf(m.Stdout, "%s: %d nodes made\n", id, made[id])
	}
	if sum != nil {
		printPending(m, a, sum, *retry)
	}
	return nil
}

// watchRollups runs a pass over every conversation each period until ctx
// ends (Ctrl-C), saying what each made.
func watchRollups(ctx context.Context, m *Main, a *app, every time.Duration, asJSON bool) error {
	err := a.mem.Watch(ctx, every, func(p strata.Pass, err error) {
		if err != nil {
			fmt.Fprintf(m.Stderr, "%s: pass failed: %v\n", p.At.Format(time.RFC3339), err)
		}
		if asJSON {
			writeJSON(m.Stdout, p)
			return
		}
		for id, n := range p.Made {
			fmt.Fprintf(m.Stdout, "%s: %s: %d nodes made\n", p.At.Format(time.RFC3339), id, n)
		}
		if p.Summaries != nil && p.Summaries.Unreachable != "" {
			fmt.Fprintf(m.Stdout, "%s: %d nodes stay pending: %s\n", p.At.Format(time.RFC3339), p.Summaries.Skipped, p.Summaries.Unreachable)
		}
		if e := p.Embedded; e != nil && e.Turns+e.Nodes > 0 {
			fmt.Fprintf(m.Stdout, "%s: embedded %d turns and %d summaries\n", p.At.Format(time.RFC3339), e.Turns, e.Nodes)
		}
	})
	if errors.Is(err, context.Canceled) {
		return nil // stopped by the user
	}
	return err
}

// rollupOnce closes the complete spans of conversation conv, or of every
// conversation if conv is "", and returns the conversations' ids and the
// nodes made in each.
func rollupOnce(ctx context.Context, a *app, conv string) ([]string, map[string]int, error) {
	if conv != "" {
		n, err := a.mem.Rollup(ctx, conv)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", conv, err)
		}
		return []string{conv}, map[string]int{conv: n}, nil
	}
	pass, err := a.mem.RollupAll(ctx)
	if err != nil {
		return nil, nil, err
	}
	cs, err := a.mem.Conversations(ctx)
	if err != nil {
		return nil, nil, err
	}
	var ids []string
	for _, c := range cs {
		ids = append(ids, c.ID)
	}
	return ids, pass.Made, nil
}

// printPending says what writing the pending model summaries did.
func printPending(m *Main, a *app, sum *strata.PendingResult, retried bool) {
	fmt.Fprintf(m.Stdout, "model summaries: %d written, %d over budget, %d kept extractive (model failed), %d calls",
		sum.Summarized, sum.OverBudget, sum.Failed, sum.Calls)
	if retried {
		fmt.Fprintf(m.Stdout, ", %d failed nodes retried", sum.Retried)
	}
	fmt.Fprintln(m.Stdout)
	if sum.Unreachable != "" {
		fmt.Fprintf(m.Stdout, "%d nodes stay pending: %s\n", sum.Skipped, sum.Unreachable)
	}
	if sum.Claimed > 0 {
		fmt.Fprintf(m.Stdout, "%d nodes left to another process that holds their claim (a claim its process left behind ends within %s)\n",
			sum.Claimed, a.mem.ClaimTTL())
	}
}
