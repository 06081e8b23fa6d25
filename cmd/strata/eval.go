package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/eval"
	"github.com/strata-memory/strata/extractive"
	"github.com/strata-memory/strata/postgres"
	"github.com/strata-memory/strata/sqlite"
)

func runEval(ctx context.Context, m *Main, args []string) error {
	fs := m.command("eval", "[--budgets 1000,2000,4000] [--categories N,...] [--policy NAME] [--misses OUT.jsonl] [--json] FILE  |  eval --learnings [--samples ID,...] FILE")
	budgets := fs.String("budgets", "1000,2000,4000", "token budgets to measure at, comma-separated")
	cats := fs.String("categories", "", "question categories to ask, comma-separated (default: every category the file's questions use but 5, LoCoMo's adversarial, which has no answer)")
	policy := fs.String("policy", "", "pyramid policy of the imported conversations: chunks, calendar, sessions or one of the config file (default: the config's)")
	misses := fs.String("misses", "", "write every evidence turn a package missed to this file, one JSON object per line")
	facts := fs.Bool("facts", false, "give every package its known facts section; a fact from an evidence turn counts as finding it")
	learnings := fs.Bool("learnings", false, "measure learnings against the file's observations instead of context packages against its questions")
	samples := fs.String("samples", "", "with --learnings: only these sample ids, comma-separated (default: all)")
	if err := fs.parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("eval: give one LoCoMo-format FILE")
	}
	if *learnings {
		return runEvalLearnings(ctx, m, fs.g, fs.Arg(0), *policy, *samples, *fs.json)
	}
	if *samples != "" {
		return usagef("eval: --samples goes with --learnings")
	}
	o := eval.Options{Policy: *policy, Facts: *facts}
	var err error
	if o.Budgets, err = intList("--budgets", *budgets); err != nil {
		return err
	}
	if *cats != "" {
		if o.Categories, err = intList("--categories", *cats); err != nil {
			return err
		}
	}

	mem, cleanup, err := m.scratchMemory(ctx, fs.g)
	if err != nil {
		return err
	}
	defer cleanup()
	var ml *missLog
	if *misses != "" {
		if ml, err = createMissLog(*misses); err != nil {
			return err
		}
		o.OnMiss = ml.add
	}
	rep, err := eval.Run(ctx, mem, fs.Arg(0), o)
	if ml != nil {
		// The file is flushed and closed whatever the run's outcome.
		if ferr := ml.close(); err == nil {
			err = ferr
		}
	}
	if err != nil {
		return err
	}
	if *fs.json {
		return writeJSON(m.Stdout, rep)
	}
	printEval(m, rep)
	if ml != nil {
		fmt.Fprintln(m.Stdout, ml.summary(rep))
	}
	return nil
}

// missLog is eval's --misses file: a JSON line per evidence turn a
// package missed, written as the run goes, with counts by budget.
type missLog struct {
	path   string
	f      *os.File
	w      *bufio.Writer
	enc    *json.Encoder
	err    error          // the first write error
	missed map[int][2]int // by budget: evidence turns missed, and of them those matching no word
}

func createMissLog(path string) (*missLog, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--misses: %w", err)
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return &missLog{path: path, f: f, w: w, enc: enc, missed: map[int][2]int{}}, nil
}

// add writes and counts a miss (eval.Options.OnMiss).
func (l *missLog) add(x eval.Miss) {
	if l.err == nil {
		l.err = l.enc.Encode(x)
	}
	c := l.missed[x.Budget]
	c[0]++
	if x.BM25Rank == 0 {
		c[1]++
	}
	l.missed[x.Budget] = c
}

// close flushes and closes the file, and returns the first error of its
// writes.
func (l *missLog) close() error {
	if l.err == nil {
		l.err = l.w.Flush()
	}
	if err := l.f.Close(); l.err == nil {
		l.err = err
	}
	if l.err != nil {
		return fmt.Errorf("--misses %s: %w", l.path, l.err)
	}
	return nil
}

// summary is the line that counts the misses of each of rep's budgets.
func (l *missLog) summary(rep eval.Report) string {
	var parts []string
	for _, b := range rep.Budgets {
		c := l.missed[b.Budget]
		parts = append(parts, fmt.Sprintf("%d at %d (%d match no word of their question)", c[0], b.Budget, c[1]))
	}
	return fmt.Sprintf("missed evidence turns: %s; written to %s", strings.Join(parts, ", "), l.path)
}

// scratchMemory opens a Memory over a new SQLite file in a temporary
// folder, never the configured store, with the configured tokenizer,
// policies, assembly and tiers and the extractive summarizer; cleanup
// closes it and removes the folder. When the configured store is a
// PostgreSQL database, the scratch store is a new schema in it instead,
// dropped by cleanup, so that the measure is of that store.
func (m *Main) scratchMemory(ctx context.Context, g *globals) (*strata.Memory, func(), error) {
	s, err := m.resolve(g)
	if err != nil {
		return nil, nil, err
	}
	tok, err := newTokenizer(s.Tokenizer)
	if err != nil {
		return nil, nil, err
	}
	var st strata.Store
	var cleanup func()
	if isPostgres(s.DB) {
		pg, drop, err := postgres.OpenScratch(ctx, s.DB, "strata_eval")
		if err != nil {
			return nil, nil, err
		}
		st, cleanup = pg, func() { pg.Close(); drop() }
	} else {
		dir, err := os.MkdirTemp("", "strata-eval-")
		if err != nil {
			return nil, nil, err
		}
		lite, err := sqlite.Open(ctx, filepath.Join(dir, "eval.db"))
		if err != nil {
			os.RemoveAll(dir)
			return nil, nil, err
		}
		st, cleanup = lite, func() { lite.Close(); os.RemoveAll(dir) }
	}
	emb, err := s.Embed.embedder()
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	mem, err := strata.New(strata.Config{Store: st, Tokenizer: tok, Summarizer: extractive.New(),
		Embedder: emb, Embedding: s.Embed.Options,
		Policy: s.Policy, Policies: s.Policies, TimeZone: s.TimeZone, SessionGap: s.SessionGap,
		Assembly: s.Assembly, Tiers: &s.Tiers})
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	return mem, cleanup, nil
}

// intList reads a comma-separated list of positive numbers.
func intList(flag, s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n <= 0 {
			return nil, usagef("eval: %s: %q is not a positive number", flag, f)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, usagef("eval: %s: give at least one number", flag)
	}
	return out, nil
}

func printEval(m *Main, r eval.Report) {
	w := m.Stdout
	fmt.Fprintf(w, "%s: %d conversations, %d turns imported in %.1fs (policy %s, tokenizer %s)\n",
		r.File, r.Conversations, r.Turns, r.ImportSeconds, r.Policy, r.Tokenizer)
	if r.Search == "hybrid" {
		fmt.Fprintf(w, "search: hybrid (BM25 and vectors of %s, %d dimensions, vector weight %g; embedded in %.1fs)\n",
			r.EmbedModel, r.EmbedDim, r.VectorWeight, r.EmbedSeconds)
	} else {
		fmt.Fprintln(w, "search: lexical (BM25 only; configure an embedder for hybrid search)")
	}
	if r.Facts {
		fmt.Fprintln(w, "known facts: on (a fact from an evidence turn counts as finding it)")
	}
	fmt.Fprintf(w, "%d questions of categories %s with %d evidence turns", r.Questions, joinInts(r.Categories), r.EvidenceTurns)
	var notAsked []int
	for _, c := range r.FileCategories {
		if !slices.Contains(r.Categories, c) {
			notAsked = append(notAsked, c)
		}
	}
	if len(notAsked) > 0 {
		fmt.Fprintf(w, " (not asked: the file's %s %s)", plural(len(notAsked), "category", "categories"), joinNamed(notAsked))
	}
	fmt.Fprintln(w)
	if len(r.AbsentCategories) > 0 {
		fmt.Fprintf(w, "%s %s asked for: no question of the file is of %s (the file's categories: %s)\n",
			plural(len(r.AbsentCategories), "category", "categories"), joinInts(r.AbsentCategories),
			plural(len(r.AbsentCategories), "it", "them"), joinInts(r.FileCategories))
	}
	fmt.Fprintf(w, "recall: each question's share of its evidence turns quoted raw, averaged over the questions (LoCoMo's measure);\n"+
		"pooled: the share of all %d evidence turns quoted raw;\n"+
		"cover: the share of the conversation's turns a package quotes or summarizes, averaged over the questions\n\n", r.EvidenceTurns)
	fmt.Fprintf(w, "%6s  %9s  %6s  %6s  %6s  %6s  %6s  %6s  %6s  %6s  %6s  %8s  %8s\n", "budget", "questions", "recall", "bm25",
		"+pts", "pooled", "bm25", "+pts", "cover", "p50 ms", "p99 ms", "bm25 p50", "bm25 p99")
	for _, b := range r.Budgets {
		o := b.Overall
		fmt.Fprintf(w, "%6d  %9d  %5.1f%%  %5.1f%%  %+6.1f  %5.1f%%  %5.1f%%  %+6.1f  %5.1f%%  %6.1f  %6.1f  %8.1f  %8.1f\n",
			b.Budget, o.Questions, 100*o.Context.Recall, 100*o.BM25.Recall, o.Points,
			100*o.Context.Pooled, 100*o.BM25.Pooled, o.PooledPoints, 100*o.Context.Coverage,
			o.Context.P50MS, o.Context.P99MS, o.BM25.P50MS, o.BM25.P99MS)
	}
	fmt.Fprintln(w, "\nper category (recall strata / bm25, pooled strata / bm25, questions):")
	for _, b := range r.Budgets {
		parts := make([]string, len(b.Categories))
		for i, c := range b.Categories {
			name := strconv.Itoa(c.Category)
			if c.CategoryName != "" {
				name += " (" + c.CategoryName + ")"
			}
			if c.Questions == 0 {
				parts[i] = name + " no question with an evidence turn"
				continue
			}
			parts[i] = fmt.Sprintf("%s %.1f%% / %.1f%%, pooled %.1f%% / %.1f%% (%d)", name,
				100*c.Context.Recall, 100*c.BM25.Recall, 100*c.Context.Pooled, 100*c.BM25.Pooled, c.Questions)
		}
		fmt.Fprintf(w, "  at %d:\n    %s\n", b.Budget, strings.Join(parts, "\n    "))
	}
	if r.NoEvidence > 0 || len(r.UnknownEvidence) > 0 {
		fmt.Fprintf(w, "\nleft out: %d questions with no evidence turn; %d evidence ids that name no turn", r.NoEvidence, len(r.UnknownEvidence))
		if len(r.UnknownEvidence) > 0 {
			fmt.Fprintf(w, " (%s)", strings.Join(r.UnknownEvidence, ", "))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "took %.1fs\n", r.Seconds)
}

// joinNamed joins category numbers, each with its LoCoMo name if it has
// one.
func joinNamed(cs []int) string {
	s := make([]string, len(cs))
	for i, c := range cs {
		s[i] = strconv.Itoa(c)
		if n := eval.CategoryName(c); n != "" {
			s[i] += " (" + n + ")"
		}
	}
	return strings.Join(s, ", ")
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

// plural is one if n is 1, else many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// runEvalLearnings is eval --learnings.
func runEvalLearnings(ctx context.Context, m *Main, g *globals, file, policy, samples string, asJSON bool) error {
	o := eval.LearningsOptions{Policy: policy}
	for _, s := range strings.Split(samples, ",") {
		if s = strings.TrimSpace(s); s != "" {
			o.Samples = append(o.Samples, s)
		}
	}
	mem, cleanup, err := m.scratchMemory(ctx, g)
	if err != nil {
		return err
	}
	defer cleanup()
	rep, err := eval.RunLearnings(ctx, mem, file, o)
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(m.Stdout, rep)
	}
	w := m.Stdout
	fmt.Fprintf(w, "%s: learnings against the observations' turns\n", rep.File)
	fmt.Fprintln(w, "from cited: learnings from a turn an observation cites; covered: observations with a learning from their turn;\n"+
		"personal: learnings in the first or second person; resolved: relative time expressions with their date")
	fmt.Fprintf(w, "%-10s %6s %9s %12s %14s %14s %14s %12s\n", "sample", "turns", "learnings", "observations", "from cited", "covered", "personal", "resolved")
	line := func(r eval.LearningsRow) {
		name := r.Sample
		if name == "" {
			name = "all"
		}
		fmt.Fprintf(w, "%-10s %6d %9d %12d %6d %5.1f%% %6d %5.1f%% %6d %5.1f%% %4d/%-4d %5.1f%%\n", name, r.Turns, r.Learnings, r.Observations,
			r.FromCited, 100*r.FromCitedShare, r.Covered, 100*r.CoveredShare, r.Personal, 100*r.PersonalShare,
			r.Resolved, r.Relative, 100*r.ResolvedShare)
	}
	for _, r := range rep.Samples {
		line(r)
	}
	line(rep.Overall)
	fmt.Fprintf(w, "took %.1fs\n", rep.Seconds)
	return nil
}
