// Package eval measures the quality of context packages on a LoCoMo-format
// file: how many of a question's evidence turns a package built for that
// question quotes raw, at several token budgets, against a plain BM25
// baseline packed into the same budget.
//
// Run imports the file's conversations into a Memory (meant to be over a
// fresh, temporary store), then asks every question of the chosen
// categories that has at least one evidence turn, once per budget (by
// default the categories are all those the file's questions use but
// LoCoMo's 5, adversarial, which has no answer):
// Memory.Context with the question as the query, and the baseline, which
// renders the question's best BM25 turn hits as the text rendering renders
// a turn and keeps them, best first, while their total stays within the
// budget. A question's recall is the share of its evidence turns found as
// items of kind "turn" (summaries do not count). The report's recall is
// the mean of that share over the questions, as LoCoMo's own evaluation
// computes it (each question weighs the same, however many evidence turns
// it has); it also gives the pooled share of all evidence turns, in which
// a question with five evidence turns weighs five times one with one. Both
// come with the latency of both methods per question, and with their
// coverage: the share of the conversation's turns a package represents,
// raw or by a summary, averaged over the questions (the baseline's turns
// are all raw).
package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/formats"
)

// Options say what to measure. Zero fields take the defaults.
type Options struct {
	// Budgets are the token budgets to measure at; default 1000, 2000,
	// 4000. They are measured in increasing order, each once.
	Budgets []int
	// Categories are the question categories to ask. The default is
	// every category the file's questions use except 5, LoCoMo's
	// adversarial category, whose questions have no answer in the
	// conversation: 1, 2, 3 and 4 on LoCoMo, 21 to 24 on RealMem. A
	// category asked for that no question of the file uses is listed in
	// Report.AbsentCategories; if none of them is used, Run fails.
	Categories []int
	// Policy is the pyramid policy of the imported conversations; "" is
	// the Memory's default.
	Policy string
	// OnMiss, if set, is called with every evidence turn a package left
	// out, budget by budget, in the order the questions were asked.
	OnMiss func(Miss)
	// Facts asks every package for its known facts section (the
	// conversations' learnings are read after the import). A known fact
	// from an evidence turn counts as finding that turn.
	Facts bool
}

// Miss is an evidence turn a context package did not quote raw.
type Miss struct {
	Budget       int    `json:"budget"`
	Conversation string `json:"conversation"`
	Question     string `json:"question"`
	Category     int    `json:"category"`
	Evidence     string `json:"evidence"` // the turn's ext id (the file's dia_id)
	Seq          int64  `json:"seq"`
	Speaker      string `json:"speaker"`
	Text         string `json:"text"`
	Tokens       int    `json:"tokens"` // of the turn's text, as stored (its rendering in a package adds a heading)
	// BM25Rank is the turn's rank among the question's BM25 turn hits
	// (1 is the best), 0 when it matches no word of the question or ranks
	// below missRankDepth.
	BM25Rank int `json:"bm25_rank"`
	// Baseline reports whether the BM25 baseline held the turn at the
	// same budget.
	Baseline bool `json:"baseline"`
}

// missRankDepth is how deep Miss.BM25Rank looks.
const missRankDepth = 1000

// DefaultBudgets are the default budgets of Options.
var DefaultBudgets = []int{1000, 2000, 4000}

// Adversarial is LoCoMo's category of questions with no answer in the
// conversation, left out unless Options.Categories names it.
const Adversarial = 5

// CategoryName is the name of a LoCoMo question category, or "" for a
// number LoCoMo does not use. Run names a category by the file's own name
// for it when its questions carry one (realmem_category, written by
// RealMem's converter), else by this.
func CategoryName(c int) string {
	switch c {
	case 1:
		return "multi-hop"
	case 2:
		return "temporal"
	case 3:
		return "open-domain"
	case 4:
		return "single-hop"
	case 5:
		return "adversarial"
	}
	return ""
}

// Report is the outcome of a run.
type Report struct {
	File      string `json:"file"`
	Tokenizer string `json:"tokenizer"`
	// Policy is the pyramid policy of the imported conversations.
	Policy        string `json:"policy"`
	Conversations int    `json:"conversations"`
	// Turns counts the turns the file holds, all imported.
	Turns int `json:"turns"`
	// Categories are the categories asked: those of Options.Categories
	// the file uses, by default all it uses but 5, in increasing order.
	Categories []int `json:"categories"`
	// FileCategories are all the categories the file's questions use.
	FileCategories []int `json:"file_categories"`
	// AbsentCategories are the categories of Options.Categories that no
	// question of the file uses; they have no row.
	AbsentCategories []int `json:"absent_categories,omitempty"`
	// Questions is how many questions were asked at each budget: those of
	// the chosen categories with at least one evidence turn.
	Questions int `json:"questions"`
	// EvidenceTurns is the sum over those questions of their evidence
	// turns.
	EvidenceTurns int `json:"evidence_turns"`
	// NoEvidence counts the questions of the chosen categories left out
	// because none of their evidence ids names a turn.
	NoEvidence int `json:"no_evidence"`
	// UnknownEvidence lists, as "conversation:id", the evidence ids of the
	// chosen categories' questions that name no turn; they are ignored.
	UnknownEvidence []string `json:"unknown_evidence"`
	Budgets         []Budget `json:"budgets"`
	// Search is "hybrid" when the Memory has an embedder (the turns and
	// summaries were embedded after the import, in EmbedSeconds), else
	// "lexical".
	Search       string  `json:"search"`
	EmbedSeconds float64 `json:"embed_seconds,omitempty"`
	// With an embedder: its model and dimension, and the vector ranking's
	// weight in the fusion (strata.EmbeddingOptions.Weight).
	EmbedModel   string  `json:"embed_model,omitempty"`
	EmbedDim     int     `json:"embed_dimensions,omitempty"`
	VectorWeight float64 `json:"vector_weight,omitempty"`
	// Facts is Options.Facts: the packages carried known facts.
	Facts bool `json:"facts,omitempty"`
	// ImportSeconds is the time the import took, Seconds the whole run's.
	ImportSeconds float64 `json:"import_seconds"`
	Seconds       float64 `json:"seconds"`
}

// Budget is the outcome at one token budget.
type Budget struct {
	Budget     int   `json:"budget"`
	Overall    Row   `json:"overall"`
	Categories []Row `json:"categories"` // in the order of Report.Categories
}

// Row compares the context packages with the baseline over a set of
// questions: all of them, or one category's.
type Row struct {
	Category     int    `json:"category,omitempty"` // 0 in the overall row
	CategoryName string `json:"category_name,omitempty"`
	Questions    int    `json:"questions"`
	Evidence     int    `json:"evidence"` // evidence turns of the questions
	Context      Score  `json:"context"`
	BM25         Score  `json:"bm25"`
	// Points is Context.Recall minus BM25.Recall, in percentage points.
	Points float64 `json:"points"`
	// PooledPoints is Context.Pooled minus BM25.Pooled, in percentage points.
	PooledPoints float64 `json:"pooled_points"`
}

// Score is how one method did over a set of questions.
type Score struct {
	// Found counts the evidence turns present raw.
	Found int `json:"found"`
	// Recall is the mean over the questions of each question's share of
	// its evidence turns found (0 to 1): LoCoMo's measure.
	Recall float64 `json:"recall"`
	// Pooled is Found over all the questions' evidence turns (0 to 1).
	Pooled float64 `json:"pooled_recall"`
	// Coverage is the mean over the questions of the share of the
	// conversation's turns the package represents, quoted raw or stood
	// for by a summary (0 to 1; see strata.Package.Covered).
	Coverage float64 `json:"coverage"`
	// MeanTokens is the mean size of what was handed over, in tokens.
	MeanTokens float64 `json:"mean_tokens"`
	// P50MS and P99MS are percentiles of the time per question, in
	// milliseconds (nearest rank).
	P50MS float64 `json:"p50_ms"`
	P99MS float64 `json:"p99_ms"`
}

// question is one question to ask.
type question struct {
	conv     string
	text     string
	category int
	evidence []string // ext ids of turns, distinct, in the file's order
}

// sample is the part of a LoCoMo sample Run reads itself; the turns are
// read by package formats.
type sample struct {
	ID json.RawMessage `json:"sample_id"`
	QA []struct {
		Question string          `json:"question"`
		Evidence json.RawMessage `json:"evidence"`
		Category json.RawMessage `json:"category"`
		// CategoryName is the category's name in RealMem, kept by its
		// converter beside the number.
		CategoryName string `json:"realmem_category"`
	} `json:"qa"`
}

// categories lists the categories the samples' questions use, in
// increasing order, and names those whose questions carry a name (the
// first name met for each). A category that is not a number is skipped,
// as its question is.
func categories(samples []sample) ([]int, map[int]string) {
	var cats []int
	names := map[int]string{}
	for _, s := range samples {
		for _, qa := range s.QA {
			var c int
			if json.Unmarshal(qa.Category, &c) != nil {
				continue
			}
			if !slices.Contains(cats, c) {
				cats = append(cats, c)
			}
			if n := strings.ToLower(strings.TrimSpace(qa.CategoryName)); n != "" && names[c] == "" {
				names[c] = n
			}
		}
	}
	slices.Sort(cats)
	return cats, names
}

// Run imports file into m, asks its questions at every budget, and
// reports evidence recall and latency for Memory.Context and for the BM25
// baseline. m should be over a fresh store: conversations it already holds
// with the file's sample ids are added to, and a different policy for one
// of them is an error. Errors about the file name it.
func Run(ctx context.Context, m *strata.Memory, file string, o Options) (Report, error) {
	start := time.Now()
	o, err := o.withDefaults()
	if err != nil {
		return Report{}, err
	}
	if o.Policy != "" {
		if _, err := m.Policy(o.Policy); err != nil {
			return Report{}, err
		}
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return Report{}, err
	}
	samples, err := parseSamples(file, data)
	if err != nil {
		return Report{}, err
	}
	rep := Report{File: file, Tokenizer: m.Tokenizer().Name(), UnknownEvidence: []string{}}
	fileCats, names := categories(samples)
	rep.FileCategories = fileCats
	rep.Categories, rep.AbsentCategories = chooseCategories(fileCats, o.Categories)
	names = categoryNames(rep.Categories, names)

	turns, convs, err := importFile(ctx, m, file, data, o, &rep)
	if err != nil {
		return rep, err
	}
	if err := prepare(ctx, m, file, o, convs, &rep); err != nil {
		return rep, err
	}

	// The file is imported before its categories are judged, so that a
	// file that is not well formed says so first.
	if err := checkCategories(file, fileCats, o.Categories, rep.Categories); err != nil {
		return rep, err
	}
	o.Categories = rep.Categories
	qs := questions(samples, o.Categories, turns, &rep)
	if len(qs) == 0 {
		return rep, fmt.Errorf("%s: no question of categories %v has an evidence turn", file, o.Categories)
	}
	rep.Questions = len(qs)
	for _, q := range qs {
		rep.EvidenceTurns += len(q.evidence)
	}
	// Per question, for OnMiss: the BM25 rank of each evidence turn, read
	// once. Only those numbers are kept from one budget to the next: a
	// hit's strings point into the whole span block it was decoded from.
	ranks := make([][]int, len(qs))
	for _, b := range o.Budgets {
		br, err := measure(ctx, m, qs, b, o, names, ranks)
		if err != nil {
			return rep, err
		}
		rep.Budgets = append(rep.Budgets, br)
	}
	rep.Seconds = time.Since(start).Seconds()
	return rep, nil
}

// chooseCategories returns the categories of the file's to ask, given
// those asked for (by default all but the adversarial), and those asked
// for that the file does not hold.
func chooseCategories(fileCats, asked []int) (cats, absent []int) {
	if len(asked) == 0 {
		for _, c := range fileCats {
			if c > 0 && c != Adversarial {
				cats = append(cats, c)
			}
		}
		return cats, nil
	}
	for _, c := range asked {
		if slices.Contains(fileCats, c) {
			cats = append(cats, c)
		} else {
			absent = append(absent, c)
		}
	}
	return cats, absent
}

// checkCategories says why no question is to be asked, if none is: cats
// are the chosen categories of those asked for (none: the default).
func checkCategories(file string, fileCats, asked, cats []int) error {
	switch {
	case len(fileCats) == 0:
		return fmt.Errorf("%s: no question to ask: the file holds no question with a category", file)
	case len(cats) == 0 && len(asked) == 0:
		return fmt.Errorf("%s: no question to ask: the file's questions are of categories %v; "+
			"%d, LoCoMo's adversarial, is asked only when named", file, fileCats, Adversarial)
	case len(cats) == 0:
		return fmt.Errorf("%s: no question of categories %v: the file's questions are of categories %v",
			file, asked, fileCats)
	}
	return nil
}

// importFile imports the file's conversations into m and returns the ext
// ids of every conversation's turns and the conversations, in file order.
func importFile(ctx context.Context, m *strata.Memory, file string, data []byte, o Options, rep *Report) (map[string]map[string]bool, []string, error) {
	turns := map[string]map[string]bool{}
	var convs []string
	r, err := formats.Open(formats.LoCoMo, file, bytes.NewReader(data))
	if err != nil {
		return nil, nil, err
	}
	t0 := time.Now()
	_, err = m.ImportWith(ctx, strata.ImportOptions{Policy: o.Policy}, func() (string, strata.Turn, error) {
		rec, err := r.Next()
		if err != nil {
			return "", strata.Turn{}, err
		}
		ids := turns[rec.Conversation]
		if ids == nil {
			ids = map[string]bool{}
			turns[rec.Conversation] = ids
			convs = append(convs, rec.Conversation)
		}
		ids[rec.Turn.ExtID] = true
		rep.Turns++
		return rec.Conversation, rec.Turn, nil
	})
	if err != nil {
		var pe *formats.ParseError
		if errors.As(err, &pe) {
			return nil, nil, err
		}
		return nil, nil, fmt.Errorf("%s: import: %w", file, err)
	}
	rep.ImportSeconds = time.Since(t0).Seconds()
	return turns, convs, nil
}

// prepare readies the imported conversations for the questions: their
// learnings if asked for, and their vectors if m has an embedder. It
// notes in rep how, and the conversations' policy.
func prepare(ctx context.Context, m *strata.Memory, file string, o Options, convs []string, rep *Report) error {
	if o.Facts {
		rep.Facts = true
		for _, c := range convs {
			if _, err := m.Learn(ctx, c); err != nil {
				return fmt.Errorf("%s: learnings of %s: %w", file, c, err)
			}
		}
	}
	// With an embedder, every turn and summary gets its vector before
	// the questions, so that Context searches them as it would in use.
	rep.Search = "lexical"
	t0 := time.Now()
	switch res, err := m.Embed(ctx, strata.EmbedRequest{}); {
	case err == nil:
		rep.Search = "hybrid"
		rep.EmbedSeconds = time.Since(t0).Seconds()
		rep.EmbedModel, rep.EmbedDim, rep.VectorWeight = res.Model, res.Dim, m.Embedding().Weight
	case !errors.Is(err, strata.ErrNoEmbedder):
		return fmt.Errorf("%s: embed: %w", file, err)
	}
	rep.Conversations = len(convs)
	if len(convs) > 0 {
		p, err := m.PolicyOf(ctx, convs[0])
		if err != nil {
			return err
		}
		rep.Policy = p.Name
	}
	return nil
}

// categoryNames names each of cats by the file's name for it, else by
// LoCoMo's.
func categoryNames(cats []int, file map[int]string) map[int]string {
	names := map[int]string{}
	for _, c := range cats {
		if n := file[c]; n != "" {
			names[c] = n
		} else {
			names[c] = CategoryName(c)
		}
	}
	return names
}

func (o Options) withDefaults() (Options, error) {
	if len(o.Budgets) == 0 {
		o.Budgets = DefaultBudgets
	}
	for _, b := range o.Budgets {
		if b <= 0 {
			return o, strata.Errorf(strata.EINVALID, "budget %d: must be a positive number of tokens", b)
		}
	}
	for _, c := range o.Categories {
		if c <= 0 {
			return o, strata.Errorf(strata.EINVALID, "category %d: question categories are positive numbers", c)
		}
	}
	o.Budgets = slices.Compact(slices.Sorted(slices.Values(o.Budgets)))
	o.Categories = slices.Compact(slices.Sorted(slices.Values(o.Categories)))
	return o, nil
}

// decodeFile decodes data, the contents of file, into v, and names the
// line of a syntax error, or of a value of the wrong type with what the
// file should have been (want).
func decodeFile(file string, data []byte, v any, want string) error {
	err := json.Unmarshal(data, v)
	if err == nil {
		return nil
	}
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Errorf("%s:%d: not JSON: %v", file, lineAt(data, se.Offset), err)
	case errors.As(err, &te):
		return fmt.Errorf("%s:%d: not %s: %v", file, lineAt(data, te.Offset), want, err)
	}
	return fmt.Errorf("%s: %w", file, err)
}

// parseSamples reads the samples' ids and questions.
func parseSamples(file string, data []byte) ([]sample, error) {
	var samples []sample
	if err := decodeFile(file, data, &samples, "a LoCoMo file (a JSON list of samples with sample_id, conversation and qa)"); err != nil {
		return nil, err
	}
	if samples == nil {
		return nil, fmt.Errorf("%s: not a LoCoMo file: want a JSON list of samples, got null", file)
	}
	return samples, nil
}

// lineAt is the 1-based line of byte offset off in data.
func lineAt(data []byte, off int64) int {
	off = min(max(off, 0), int64(len(data)))
	return 1 + bytes.Count(data[:off], []byte{'\n'})
}

// questions lists the questions of the chosen categories that have an
// evidence turn, and notes in rep those left out and the evidence ids that
// name no turn. A category that is not a number leaves its question out;
// evidence that cannot be read counts as none.
func questions(samples []sample, cats []int, turns map[string]map[string]bool, rep *Report) []question {
	var qs []question
	for _, s := range samples {
		conv := jsonID(s.ID)
		for _, qa := range s.QA {
			var cat int
			if json.Unmarshal(qa.Category, &cat) != nil || !slices.Contains(cats, cat) {
				continue
			}
			var ev []string
			for _, id := range evidenceIDs(qa.Evidence) {
				if turns[conv][id] {
					ev = append(ev, id)
				} else {
					rep.UnknownEvidence = append(rep.UnknownEvidence, conv+":"+id)
				}
			}
			if len(ev) == 0 {
				rep.NoEvidence++
				continue
			}
			qs = append(qs, question{conv: conv, text: qa.Question, category: cat, evidence: ev})
		}
	}
	return qs
}

// jsonID reads a sample id written as a string or a number.
func jsonID(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return strings.TrimSpace(string(raw))
}

// evidenceIDs reads a question's evidence: a list of dia ids, some of them
// several ids in one string ("D8:6; D9:17") or padded with spaces. It
// splits on semicolons, commas and white space and drops repeats; a single
// string instead of a list is read as a list of one.
func evidenceIDs(raw json.RawMessage) []string {
	var list []string
	if json.Unmarshal(raw, &list) != nil {
		var one string
		if json.Unmarshal(raw, &one) != nil {
			return nil
		}
		list = []string{one}
	}
	var ids []string
	for _, s := range list {
		for _, id := range strings.FieldsFunc(s, func(r rune) bool {
			return r == ';' || r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r'
		}) {
			if !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	return ids
}

// tally accumulates one method's outcome over a set of questions.
type tally struct {
	evidence, found int
	recall          float64 // sum of the questions' recall
	coverage        float64 // sum of the questions' coverage
	tokens          int
	times           []time.Duration
}

func (t *tally) add(evidence, found, tokens int, coverage float64, d time.Duration) {
	t.evidence += evidence
	t.coverage += coverage
	t.found += found
	if evidence > 0 {
		t.recall += float64(found) / float64(evidence)
	}
	t.tokens += tokens
	t.times = append(t.times, d)
}

func (t *tally) score() Score {
	s := Score{Found: t.found, P50MS: millis(percentile(t.times, 50)), P99MS: millis(percentile(t.times, 99))}
	if t.evidence > 0 {
		s.Pooled = float64(t.found) / float64(t.evidence)
	}
	if n := len(t.times); n > 0 {
		s.Recall = t.recall / float64(n)
		s.Coverage = t.coverage / float64(n)
		s.MeanTokens = float64(t.tokens) / float64(n)
	}
	return s
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// percentile is the p-th percentile of ds by the nearest-rank method: the
// smallest value at least p% of the values are at or below; 0 for none.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(ds))
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// row is a Row's two tallies.
type row struct {
	questions  int
	ctx, bm25  tally
	cat        int
	categoryOf string
}

func (r *row) result() Row {
	out := Row{Category: r.cat, CategoryName: r.categoryOf, Questions: r.questions, Evidence: r.ctx.evidence,
		Context: r.ctx.score(), BM25: r.bm25.score()}
	out.Points = 100 * (out.Context.Recall - out.BM25.Recall)
	out.PooledPoints = 100 * (out.Context.Pooled - out.BM25.Pooled)
	return out
}

// measure asks every question at one budget.
func measure(ctx context.Context, m *strata.Memory, qs []question, budget int, o Options, names map[int]string,
	ranks [][]int) (Budget, error) {
	cats := o.Categories
	all := &row{}
	byCat := map[int]*row{}
	for _, c := range cats {
		byCat[c] = &row{cat: c, categoryOf: names[c]}
	}
	for qi, q := range qs {
		if err := ctx.Err(); err != nil {
			return Budget{}, err
		}
		t0 := time.Now()
		pkg, err := m.Context(ctx, strata.ContextRequest{Conversation: q.conv, Query: q.text, Budget: budget,
			Format: strata.FormatText, Facts: o.Facts})
		d := time.Since(t0)
		if err != nil {
			return Budget{}, fmt.Errorf("context of %s at budget %d for %q: %w", q.conv, budget, q.text, err)
		}
		raw := map[string]bool{}
		for _, it := range pkg.Items {
			if it.Kind == strata.KindTurn || o.Facts && it.Kind == strata.KindLearning && it.Reason == strata.ReasonFact && it.ExtID != "" {
				raw[it.ExtID] = true
			}
		}
		cFound := count(q.evidence, raw)

		t0 = time.Now()
		got, tokens, err := baseline(ctx, m, q.conv, q.text, budget)
		bd := time.Since(t0)
		if err != nil {
			return Budget{}, fmt.Errorf("baseline of %s at budget %d for %q: %w", q.conv, budget, q.text, err)
		}
		bFound := count(q.evidence, got)
		if o.OnMiss != nil && cFound < len(q.evidence) {
			if err := reportMisses(ctx, m, q, budget, raw, got, &ranks[qi], o.OnMiss); err != nil {
				return Budget{}, err
			}
		}

		for _, r := range []*row{all, byCat[q.category]} {
			r.questions++
			r.ctx.add(len(q.evidence), cFound, pkg.Tokens, share(pkg.Covered(), pkg.Turns), d)
			r.bm25.add(len(q.evidence), bFound, tokens, share(int64(len(got)), pkg.Turns), bd)
		}
	}
	b := Budget{Budget: budget, Overall: all.result()}
	for _, c := range cats {
		b.Categories = append(b.Categories, byCat[c].result())
	}
	return b, nil
}

// reportMisses calls onMiss with each evidence turn of q that raw (the
// ext ids the package quotes) lacks; got is what the baseline held. *rank
// holds the BM25 rank of each of q's evidence turns (in q.evidence's
// order) once a budget has read them.
func reportMisses(ctx context.Context, m *strata.Memory, q question, budget int, raw, got map[string]bool,
	rank *[]int, onMiss func(Miss)) error {
	var ids []string
	for _, id := range q.evidence {
		if !raw[id] {
			ids = append(ids, id)
		}
	}
	ts, err := m.Store().Turns(ctx, strata.TurnFilter{Namespace: m.Namespace(), Conversation: q.conv, ExtIDs: ids})
	if err != nil {
		return fmt.Errorf("evidence turns of %s for %q: %w", q.conv, q.text, err)
	}
	if *rank == nil {
		hits, err := m.Store().Search(ctx, strata.SearchQuery{Namespace: m.Namespace(), Conversation: q.conv, Text: q.text,
			K: missRankDepth, Kind: strata.KindTurn})
		if err != nil {
			return fmt.Errorf("search of %s for %q: %w", q.conv, q.text, err)
		}
		*rank = evidenceRanks(q.evidence, hits)
	}
	byID := map[string]strata.Turn{}
	for _, t := range ts {
		byID[t.ExtID] = t
	}
	for _, id := range ids {
		t := byID[id]
		onMiss(Miss{Budget: budget, Conversation: q.conv, Question: q.text, Category: q.category, Evidence: id,
			Seq: t.Seq, Speaker: t.Speaker(), Text: t.Text(), Tokens: t.Tokens, BM25Rank: (*rank)[slices.Index(q.evidence, id)],
			Baseline: got[id]})
	}
	return nil
}

// evidenceRanks is the rank among hits (1 is the best, 0 for none) of the
// turn of each of evidence's ext ids. It keeps no string of hits.
func evidenceRanks(evidence []string, hits []strata.Hit) []int {
	ranks := make([]int, len(evidence))
	for i, h := range hits {
		if h.Turn == nil {
			continue
		}
		if j := slices.Index(evidence, h.Turn.ExtID); j >= 0 && ranks[j] == 0 {
			ranks[j] = i + 1
		}
	}
	return ranks
}

// share is n over of, 0 when of is 0.
func share(n, of int64) float64 {
	if of == 0 {
		return 0
	}
	return float64(n) / float64(of)
}

// count is how many of ids are in set.
func count(ids []string, set map[string]bool) int {
	n := 0
	for _, id := range ids {
		if set[id] {
			n++
		}
	}
	return n
}

// baseline is plain BM25 retrieval of turns packed into a budget: the
// query's turn hits, best first, each rendered as the text rendering of a
// context package renders a turn, kept while their total stays within the
// budget (it stops at the first hit that does not fit). It returns the ext
// ids of the turns kept and the token count of their joined rendering,
// which never exceeds budget.
func baseline(ctx context.Context, m *strata.Memory, conv, query string, budget int) (map[string]bool, int, error) {
	hits, err := m.Store().Search(ctx, strata.SearchQuery{Namespace: m.Namespace(), Conversation: conv, Text: query,
		K: max(200, budget/10), Kind: strata.KindTurn})
	if err != nil {
		return nil, 0, err
	}
	tok := m.Tokenizer()
	var parts []string
	var ids []string
	used := 0
	for _, h := range hits {
		if h.Turn == nil {
			continue
		}
		s := renderTurn(*h.Turn)
		n := tok.Count(s)
		if used+n > budget {
			break
		}
		used += n
		parts = append(parts, s)
		ids = append(ids, h.Turn.ExtID)
	}
	// The parts were counted one by one; merges across their boundaries
	// can only change the whole's count a little, but the budget is a hard
	// limit, so the whole is counted and trimmed if need be.
	total := tok.Count(strings.Join(parts, ""))
	for total > budget && len(parts) > 0 {
		parts, ids = parts[:len(parts)-1], ids[:len(ids)-1]
		total = tok.Count(strings.Join(parts, ""))
	}
	got := make(map[string]bool, len(ids))
	for _, id := range ids {
		got[id] = true
	}
	return got, total, nil
}

// textRenderer is the text rendering of context packages.
var textRenderer, _ = strata.NewRenderer(strata.FormatText)

// renderTurn renders a turn as the text rendering of a context package
// does, with its leading separator.
func renderTurn(t strata.Turn) string {
	it := strata.TurnItem(t, strata.ReasonRelevance)
	return textRenderer.Item(&it)
}
