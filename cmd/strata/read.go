package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/ctf"
	"github.com/strata-memory/strata/httpapi"
)

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// oneLine shortens s to at most n runes on one line, for terminal display
// only (--json always carries the whole text).
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

func day(t time.Time) string { return t.UTC().Format("2006-01-02 15:04") }

func runTree(ctx context.Context, m *Main, args []string) error {
	fs := m.command("tree", "--conversation ID [--depth N] [--json]")
	conv := fs.String("conversation", "", "conversation id (required)")
	depth := fs.Int("depth", -1, "levels to show below the top level (default: all, or none past 300 nodes)")
	if err := fs.parse(args); err != nil {
		return err
	}
	if err := requireConversation(*conv); err != nil {
		return err
	}
	a, err := m.openReading(ctx, fs.g)
	if err != nil {
		return err
	}
	defer a.Close()
	t, err := a.mem.Tree(ctx, *conv)
	if err != nil {
		return err
	}
	if *fs.json {
		return writeJSON(m.Stdout, t)
	}
	printTreeHeader(m.Stdout, t)
	if *depth < 0 {
		*depth = len(t.Levels)
		if len(t.Nodes) > 300 {
			*depth = 0
			fmt.Fprintf(m.Stderr, "(%d nodes: showing the top level; --depth N shows N levels below it)\n", len(t.Nodes))
		}
	}
	newTreePrinter(m.Stdout, t, *depth).print()
	return nil
}

// printTreeHeader prints the conversation's counts and its levels.
func printTreeHeader(w io.Writer, t *strata.Tree) {
	fmt.Fprintf(w, "%s: %d turns, %d sessions, policy %s", t.Conversation, t.Turns, t.Sessions, t.Policy)
	if t.TimeZone != "" {
		fmt.Fprintf(w, ", time zone %s", t.TimeZone)
	}
	fmt.Fprintln(w)
	var counters []string
	for _, l := range t.Levels {
		fmt.Fprintf(w, "  level %d %-7s %5d nodes, %d open turns\n", l.Level, l.Name, l.Nodes, l.OpenTurns)
		counters = append([]string{fmt.Sprintf("%s_seq %d", l.Name, l.Pending)}, counters...)
	}
	fmt.Fprintf(w, "  counters: %s\n", strings.Join(counters, ", "))
	fmt.Fprintln(w)
}

// treePrinter prints a tree's nodes, each under the node of the level
// above that holds it, depth levels below the top.
type treePrinter struct {
	w       io.Writer
	t       *strata.Tree
	depth   int
	byLevel map[int][]strata.TreeNode
	names   map[int]string // level names by level
	top     int
}

func newTreePrinter(w io.Writer, t *strata.Tree, depth int) *treePrinter {
	p := &treePrinter{w: w, t: t, depth: depth, byLevel: map[int][]strata.TreeNode{}, names: map[int]string{}}
	for _, n := range t.Nodes {
		p.byLevel[n.Level] = append(p.byLevel[n.Level], n)
		p.top = max(p.top, n.Level)
	}
	for _, l := range t.Levels {
		p.names[l.Level] = l.Name
	}
	return p
}

// print prints the roots, nodes not inside a node of the level above,
// each with its nodes below, then the turns no span holds yet.
func (p *treePrinter) print() {
	covered := int64(0)
	for lvl := p.top; lvl >= 1; lvl-- {
		for _, n := range p.byLevel[lvl] {
			if n.FirstSeq > covered {
				p.show(n, 0)
			}
		}
		if ns := p.byLevel[lvl]; len(ns) > 0 {
			covered = max(covered, ns[len(ns)-1].LastSeq)
		}
	}
	if covered < p.t.Turns {
		fmt.Fprintf(p.w, "open  turns %d-%d (raw, no complete span yet)\n", covered+1, p.t.Turns)
	}
}

// show prints node n, indented, then the nodes it holds.
func (p *treePrinter) show(n strata.TreeNode, indent int) {
	w := p.w
	pad := strings.Repeat("  ", indent)
	key := ""
	if n.Key != "" {
		key = "[" + n.Key + "]  "
	}
	tier := ""
	if n.Tier != "" {
		tier = "  " + string(n.Tier)
	}
	fmt.Fprintf(w, "%s%-5s %s  %sturns %d-%d  %s .. %s  %d/%d tokens%s\n", pad, p.names[n.Level], n.ID, key,
		n.FirstSeq, n.LastSeq, day(n.Start), day(n.End), n.Tokens, n.SourceTokens, tier)
	if a := n.Aggregates.String(); a != "" {
		fmt.Fprintf(w, "%s      stats: %s\n", pad, oneLine(a, 102-2*indent))
	}
	fmt.Fprintf(w, "%s      %s\n", pad, oneLine(n.Summary, 110-2*indent))
	if indent >= p.depth {
		return
	}
	for _, c := range p.byLevel[n.Level-1] {
		if c.FirstSeq >= n.FirstSeq && c.LastSeq <= n.LastSeq {
			p.show(c, indent+1)
		}
	}
}

func runContext(ctx context.Context, m *Main, args []string) error {
	fs := m.command("context", "--conversation ID --budget N [--query Q] [--format text|markdown|ctf|upload] [--section TITLE=FILE]... [--now T] [--facts] [--json]")
	conv := fs.String("conversation", "", "conversation id (required)")
	query := fs.String("query", "", "what the next prompt is about (optional)")
	budget := fs.Int("budget", 2000, "hard token budget of the whole package")
	format := fs.String("format", "text", "rendering: text, markdown, or ctf (raw turns as Compact Turn Format rows)")
	now := fs.String("now", "", "what relative times in the query count from (default: the conversation's newest turn)")
	facts := fs.Bool("facts", false, "add a known-facts section: the learnings that bear on the query, within 15% of the budget (reads the learnings not yet read first, so it writes)")
	var sections sectionFlags
	fs.Var(&sections, "section", "a fixed section at the top, TITLE=FILE (repeatable; - for stdin), counted against the budget")
	maxBytes := fs.Int("max-bytes", 0, "with --format upload (003's upload package): its byte cap (default 35840); --budget caps its tokens only if given")
	if err := fs.parse(args); err != nil {
		return err
	}
	ref, err := parseNow(*now)
	if err != nil {
		return err
	}
	secs, err := sections.load(m)
	if err != nil {
		return err
	}
	if err := requireConversation(*conv); err != nil {
		return err
	}
	if *format == "upload" {
		return runUpload(ctx, m, fs, *conv, ref, secs, *budget, *maxBytes)
	}
	set, err := m.resolve(fs.g)
	if err != nil {
		return err
	}
	// Known facts first read the learnings not yet read, which writes (a
	// read-only store shows those read before).
	set.reads, set.existing = !*facts, *facts
	a, err := m.openSettings(ctx, set)
	if err != nil {
		return err
	}
	defer a.Close()
	if *facts && !set.ReadOnly {
		if err := learnFirst(ctx, m, a.mem, *conv); err != nil {
			return err
		}
	}
	req := strata.ContextRequest{Conversation: *conv, Query: *query, Budget: *budget, Format: *format, Now: ref,
		Sections: secs, Facts: *facts}
	if *format == ctf.FormatCTF {
		req.Renderer = ctf.ContextRenderer{}
	}
	pkg, err := a.mem.Context(ctx, req)
	if err != nil {
		return err
	}
	if *fs.json {
		return writeJSON(m.Stdout, pkg)
	}
	io.WriteString(m.Stdout, pkg.Rendered)
	fmt.Fprintf(m.Stderr, "(%d of %d tokens, %s; %d items)\n", pkg.Tokens, pkg.Budget, pkg.Tokenizer, len(pkg.Items))
	return nil
}

// sectionFlags collects --section TITLE=FILE flags.
type sectionFlags []string

func (s *sectionFlags) String() string { return strings.Join(*s, ", ") }

func (s *sectionFlags) Set(v string) error {
	if i := strings.IndexByte(v, '='); i <= 0 || i == len(v)-1 {
		return fmt.Errorf("want TITLE=FILE, got %q", v)
	}
	*s = append(*s, v)
	return nil
}

// load reads the sections' files.
func (s sectionFlags) load(m *Main) ([]strata.Section, error) {
	var out []strata.Section
	for _, v := range s {
		title, path, _ := strings.Cut(v, "=")
		var data []byte
		var err error
		if path == "-" {
			data, err = io.ReadAll(m.Stdin)
		} else {
			data, err = os.ReadFile(path)
		}
		if err != nil {
			return nil, fmt.Errorf("--section %s: %w", title, err)
		}
		if !utf8.Valid(data) {
			return nil, fmt.Errorf("--section %s: %s is not UTF-8 text", title, path)
		}
		out = append(out, strata.Section{Title: title, Text: string(data)})
	}
	return out, nil
}

func runSearch(ctx context.Context, m *Main, args []string) error {
	fs := m.command("search", "[--conversation ID] [-k N] [--json] QUERY")
	conv := fs.String("conversation", "", "conversation id (default: every conversation)")
	k := fs.Int("k", 10, "number of hits")
	if err := fs.parse(args); err != nil {
		return err
	}
	query := strings.Join(fs.Args(), " ")
	if strings.TrimSpace(query) == "" {
		return usagef("search: give a QUERY")
	}
	if *k <= 0 {
		return usagef("search: -k must be positive")
	}
	a, err := m.openReading(ctx, fs.g)
	if err != nil {
		return err
	}
	defer a.Close()
	if *conv != "" {
		if _, err := a.mem.Conversation(ctx, *conv); err != nil {
			return err
		}
	}
	hits, err := a.mem.Search(ctx, *conv, query, *k)
	if err != nil {
		return err
	}
	out := struct {
		Hits []httpapi.SearchHit `json:"hits"`
	}{Hits: []httpapi.SearchHit{}}
	for _, h := range hits {
		out.Hits = append(out.Hits, httpapi.NewSearchHit(h))
	}
	if *fs.json {
		return writeJSON(m.Stdout, out)
	}
	if len(out.Hits) == 0 {
		fmt.Fprintln(m.Stdout, "no hits")
	}
	for _, h := range out.Hits {
		where := h.ExtID
		if h.Kind == strata.KindSummary {
			where = h.NodeID
		}
		span := fmt.Sprintf("turn %d", h.FirstSeq)
		if h.LastSeq != h.FirstSeq {
			span = fmt.Sprintf("turns %d-%d", h.FirstSeq, h.LastSeq)
		}
		fmt.Fprintf(m.Stdout, "%6.2f  %-7s %s  %s  %s  %s\n        %s\n", h.Score, h.Kind, h.Conversation, where,
			span, day(h.Start), oneLine(h.Text, 100))
	}
	return nil
}

func runExpand(ctx context.Context, m *Main, args []string) error {
	fs := m.command("expand", "NODE_ID [--json]")
	if err := fs.parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("expand: give one NODE_ID (see 'strata tree')")
	}
	a, err := m.openReading(ctx, fs.g)
	if err != nil {
		return err
	}
	defer a.Close()
	n, turns, err := a.mem.Expand(ctx, fs.Arg(0))
	if err != nil && (n.ID == "" || turns == nil) {
		return err
	}
	// An expired span shows what remains, then fails with why.
	if *fs.json {
		if werr := writeJSON(m.Stdout, struct {
			Node  strata.Node   `json:"node"`
			Turns []strata.Turn `json:"turns"`
		}{n, turns}); err == nil {
			return werr
		}
		return err
	}
	tier := ""
	if n.Tier != "" {
		tier = ", " + string(n.Tier)
	}
	fmt.Fprintf(m.Stdout, "%s: level %d, turns %d-%d of %s, %s .. %s%s\n\n", n.ID, n.Level, n.FirstSeq, n.LastSeq,
		n.Conversation, day(n.Start), day(n.End), tier)
	for _, t := range turns {
		fmt.Fprintf(m.Stdout, "[%d %s %s] %s: %s\n", t.Seq, t.ExtID, day(t.Time), t.Speaker(), t.Text())
	}
	return err
}

func runList(ctx context.Context, m *Main, args []string) error {
	fs := m.command("list", "[--json]")
	if err := fs.parse(args); err != nil {
		return err
	}
	a, err := m.openReading(ctx, fs.g)
	if err != nil {
		return err
	}
	defer a.Close()
	cs, err := a.mem.Conversations(ctx)
	if err != nil {
		return err
	}
	if *fs.json {
		if cs == nil {
			cs = []strata.Conversation{}
		}
		return writeJSON(m.Stdout, struct {
			Conversations []strata.Conversation `json:"conversations"`
		}{cs})
	}
	for _, c := range cs {
		fmt.Fprintf(m.Stdout, "%-20s %7d turns %4d sessions  %s .. %s  policy %s\n", c.ID, c.Turns, c.Sessions,
			day(c.First), day(c.Last), c.Policy)
	}
	return nil
}

func runStats(ctx context.Context, m *Main, args []string) error {
	fs := m.command("stats", "[--cost [--conversation ID]] [--json]")
	cost := fs.Bool("cost", false, "what model summaries cost (tokens, calls, retries) against the tokens they save per use, per level")
	conv := fs.String("conversation", "", "with --cost: one conversation")
	if err := fs.parse(args); err != nil {
		return err
	}
	a, err := m.openReading(ctx, fs.g)
	if err != nil {
		return err
	}
	defer a.Close()
	if *cost {
		return runCost(ctx, m, a, *conv, *fs.json)
	}
	st, err := a.mem.Stats(ctx)
	if err != nil {
		return err
	}
	out := statsOut{Namespace: a.set.Namespace, Tokenizer: a.mem.Tokenizer().Name(), Stats: st}
	for _, l := range st.Levels {
		out.Nodes += l.Nodes
	}
	if *fs.json {
		return writeJSON(m.Stdout, out)
	}
	w := m.Stdout
	fmt.Fprintf(w, "store        %s (%s on disk)\n", st.Location, bytesHuman(st.Bytes))
	fmt.Fprintf(w, "namespace    %s\n", out.Namespace)
	fmt.Fprintf(w, "conversations %d\n", st.Conversations)
	fmt.Fprintf(w, "turns        %d (%s of content, %d tokens by %s)\n", st.Turns, bytesHuman(st.ContentBytes), st.TurnTokens, out.Tokenizer)
	for _, l := range st.Levels {
		ratio := 0.0
		if l.SummaryTokens > 0 {
			ratio = float64(l.SourceTokens) / float64(l.SummaryTokens)
		}
		fmt.Fprintf(w, "level %d      %d nodes, %d summary tokens over %d source tokens (%.1fx)\n", l.Level, l.Nodes, l.SummaryTokens, l.SourceTokens, ratio)
	}
	fmt.Fprintf(w, "tokens       %d of raw history, %d of summaries\n", st.TurnTokens, st.SummaryTokens)
	printTiers(w, "", st.Tiers, st.Archive)
	printEmbeddings(w, "", st.Search, st.Embeddings)
	if st.FreeBytes > 0 {
		fmt.Fprintf(w, "free         %s inside the database file ('strata tier --vacuum' returns it)\n", bytesHuman(st.FreeBytes))
	}
	for _, c := range st.PerConversation {
		fmt.Fprintf(w, "\n%s: %d turns, %d sessions, %s; tokens %d raw, %d in summaries\n", c.ID, c.Turns, c.Sessions,
			bytesHuman(c.ContentBytes), c.TurnTokens, c.SummaryTokens)
		keys := make([]string, 0, len(c.Counters))
		for k := range c.Counters {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var parts []string
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%s %d", k, c.Counters[k]))
		}
		fmt.Fprintf(w, "  policy %s; counters: %s\n", c.Policy, strings.Join(parts, ", "))
		printTiers(w, "  ", c.Tiers, c.Archive)
		if c.Embeddings != nil {
			printEmbeddings(w, "  ", c.Search, c.Embeddings)
		}
	}
	return nil
}

// printTiers writes one line per tier and one for the archive.
func printTiers(w io.Writer, indent string, tiers []strata.TierStats, ar strata.ArchiveStats) {
	for _, t := range tiers {
		if t.Spans == 0 && t.Turns == 0 {
			continue
		}
		stored := ""
		if t.Tier != strata.TierExpired {
			stored = ", stored in " + bytesHuman(t.StoredBytes)
		}
		fmt.Fprintf(w, "%s%-12s %d spans, %d turns, %s of content%s\n", indent, string(t.Tier), t.Spans, t.Turns, bytesHuman(t.Bytes), stored)
	}
	if ar.Segments > 0 {
		fmt.Fprintf(w, "%s%-12s %d segments, %d turns, %s (%s raw, %.1fx)\n", indent, "archive", ar.Segments, ar.Records,
			bytesHuman(ar.Bytes), bytesHuman(ar.RawBytes), ar.Ratio)
	}
}

type statsOut struct {
	Namespace string `json:"namespace"`
	Tokenizer string `json:"tokenizer"`
	Nodes     int64  `json:"nodes"`
	strata.Stats
}

func bytesHuman(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

func runTokens(ctx context.Context, m *Main, args []string) error {
	fs := m.command("tokens", "[--tokenizer NAME] [--json] < FILE")
	if err := fs.parse(args); err != nil {
		return err
	}
	s, err := m.resolve(fs.g)
	if err != nil {
		return err
	}
	tok, err := newTokenizer(s.Tokenizer)
	if err != nil {
		return err
	}
	data, err := io.ReadAll(m.Stdin)
	if err != nil {
		return err
	}
	if !utf8.Valid(data) {
		return fmt.Errorf("standard input is not valid UTF-8")
	}
	n := tok.Count(string(data))
	if *fs.json {
		return writeJSON(m.Stdout, map[string]any{"tokenizer": tok.Name(), "tokens": n, "bytes": len(data)})
	}
	fmt.Fprintln(m.Stdout, n)
	return nil
}
