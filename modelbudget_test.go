package strata_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/extractive"
	"github.com/strata-memory/strata/primers"
)

// hugeReply answers every prompt with about 6,000 tokens (as CharEstimator
// counts them), whatever the level's budget.
func hugeReply(_ int, req strata.CompletionRequest) (strata.Completion, error) {
	text := "SUMMARY:\n" + strings.Repeat("The friends went over every detail of their plans once more. ", 390)
	return strata.Completion{Text: text, InputTokens: len(req.User) / 4, OutputTokens: 6000, FinishReason: "stop"}, nil
}

// calendarModelMemory opens a calendar Memory with model summaries on every
// level over a fresh SQLite file, its clock far past the turns.
func calendarModelMemory(t *testing.T, model strata.Completer) *strata.Memory {
	t.Helper()
	st := openNewStore(t, filepath.Join(t.TempDir(), "s.db"))
	t.Cleanup(func() { st.Close() })
	p := strata.CalendarPolicy()
	for i := range p.Levels {
		p.Levels[i].Summarizer = strata.MethodLLM
	}
	m, err := strata.New(strata.Config{Store: st, Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New(),
		Policies: []strata.Policy{p}, LLM: strata.LLMOptions{Completer: model, Backoff: time.Millisecond},
		Tiers: &strata.TierPolicy{Off: true},
		Now:   func() time.Time { return time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// overBudgetSessions are two sessions a week from April to the middle of
// June 2023, and a busy one on the last day: May is a closed month, the
// week of June 5 a closed week, June 14 today. Today's 400 turns (about
// 45 KB) alone exceed an upload package's 35 KB, so the package shows the
// closed periods as their summaries, not as raw turns.
func overBudgetSessions() []session {
	var ss []session
	for d := time.Date(2023, 4, 3, 0, 0, 0, 0, time.UTC); d.Before(time.Date(2023, 6, 12, 0, 0, 0, 0, time.UTC)); d = d.AddDate(0, 0, 3) {
		ss = append(ss, session{at: d.Format("2006-01-02") + " 18:00", label: d.Format("s0102"), n: 12})
	}
	return append(ss, session{at: "2023-06-14 09:00", label: "today", n: 400})
}

// TestModelReplyOverBudgetKeepsFit: a model that answers 6,000 tokens to
// every level (budgets 500, 1,000 and 2,000) never replaces the extractive
// summaries that fit. Each node serves its extractive summary, keeps the
// model's last reply as Rejected, is listed by Review and asked again by
// RetryFailed; the monthly primer stays under 003's 15 KB, the upload
// package shows May (Long-Term Context) and the week of June 5 (This
// Week) as their extractive summaries beside today, and the context
// package shows summaries.
func TestModelReplyOverBudgetKeepsFit(t *testing.T) {
	model := &fakeModel{answer: hugeReply}
	m := calendarModelMemory(t, model)
	ctx := context.Background()
	ingestSessions(t, m, "c", "calendar", overBudgetSessions())
	res, err := m.SummarizePending(ctx, strata.PendingOptions{})
	if err != nil {
		t.Fatal(err)
	}
	nodes := allNodes(t, m, "c")
	if res.OverBudget != len(nodes) || res.Summarized != 0 || res.Calls != 3*len(nodes) {
		t.Fatalf("result %+v over %d nodes; want every node over budget after three calls", res, len(nodes))
	}
	p, _ := m.PolicyOf(ctx, "c")
	for _, n := range nodes {
		budget := p.Levels[n.Level-1].Budget
		if n.Tokens > budget || n.Method != strata.MethodExtractive || n.Status != strata.StatusOK ||
			strings.Contains(n.Summary, "every detail of their plans") {
			t.Fatalf("node %s (level %d, budget %d) serves %d tokens, method %s, status %s", n.ID, n.Level, budget, n.Tokens, n.Method, n.Status)
		}
		r := n.Rejected
		if r == nil || r.Status != strata.StatusOverBudget || r.Tokens <= budget || r.Budget != budget ||
			!strings.Contains(r.Summary, "every detail of their plans") || r.Model != "fake-1" {
			t.Fatalf("node %s keeps the rejected reply %+v", n.ID, r)
		}
		if !strings.Contains(n.Fallback, "over budget") || n.Pending {
			t.Errorf("node %s: fallback %q pending %v", n.ID, n.Fallback, n.Pending)
		}
	}
	// Review lists every one of them; RetryFailed asks the model again.
	rev, err := m.Review(ctx, "c")
	if err != nil || len(rev) != len(nodes) {
		t.Fatalf("review lists %d nodes of %d, %v", len(rev), len(nodes), err)
	}

	// The monthly primer holds May's extractive summary: under 15 KB.
	dir := t.TempDir()
	if _, err := primers.Export(ctx, m, "c", dir, time.Time{}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, primers.MonthlyDir, "2023-05.md"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("monthly primer 2023-05.md: %d bytes", fi.Size())
	if fi.Size() > 15*1024 {
		t.Errorf("monthly primer of %d bytes, over 003's 15 KB", fi.Size())
	}
	// Today does not fit the upload package raw: it keeps the long-term
	// context and This Week, as the nodes' extractive summaries, beside
	// today's summary and newest turns; no rejected reply shows.
	pkg := upload(t, m, strata.UploadRequest{Conversation: "c"})
	t.Logf("upload package: %d bytes, sections %v, merged %v, dropped %v", pkg.Bytes, titles(pkg), pkg.Merged, pkg.Dropped)
	if got := strings.Join(titles(pkg), "|"); !strings.Contains(got, "Long-Term Context|") ||
		!strings.HasSuffix(got, "|This Week|Earlier Today|Today Session 01") {
		t.Errorf("upload sections %v, merged %v, dropped %v", titles(pkg), pkg.Merged, pkg.Dropped)
	}
	if strings.Contains(pkg.Markdown, "every detail of their plans") {
		t.Errorf("the upload package shows a rejected reply")
	}
	for title, key := range map[string]string{"Long-Term Context": "2023-05", "This Week": "2023-W23"} {
		i := slices.IndexFunc(pkg.Sections, func(s strata.UploadSection) bool { return s.Title == title })
		j := slices.IndexFunc(nodes, func(n strata.Node) bool { return n.Key == key })
		if i < 0 || j < 0 {
			t.Errorf("%s: section %d, node %s %d", title, i, key, j)
			continue
		}
		s, n := pkg.Sections[i], nodes[j]
		sum := strings.TrimSpace(n.Summary)
		if s.Key != key || s.FirstSeq != n.FirstSeq || s.LastSeq != n.LastSeq || sum == "" || !strings.Contains(pkg.Markdown, sum) {
			t.Errorf("%s shows %s (turns %d-%d), not the extractive summary of node %s (%s, turns %d-%d):\n%s",
				title, s.Key, s.FirstSeq, s.LastSeq, n.ID, n.Key, n.FirstSeq, n.LastSeq, n.Summary)
		}
	}
	// A context package shows the history's summaries.
	cp, err := m.Context(ctx, strata.ContextRequest{Conversation: "c", Budget: 2000})
	if err != nil {
		t.Fatal(err)
	}
	sums := 0
	for _, it := range cp.Items {
		if it.Kind == strata.KindSummary {
			sums++
		}
	}
	t.Logf("context package at 2,000 tokens: %d items, %d summaries", len(cp.Items), sums)
	if sums == 0 {
		t.Errorf("the context package shows no summary: %d items", len(cp.Items))
	}

	before := model.calls
	res, err = m.SummarizePending(ctx, strata.PendingOptions{RetryFailed: true})
	if err != nil || res.Retried != len(nodes) || model.calls-before != 3*len(nodes) {
		t.Fatalf("retry failed: %+v, %d calls, %v", res, model.calls-before, err)
	}
}

// TestModelRetryLegacyOverBudget: a node stored before replies over budget
// were kept aside (a model summary over budget, served) is asked again by
// RetryFailed, and then serves its extractive summary.
func TestModelRetryLegacyOverBudget(t *testing.T) {
	model := &fakeModel{answer: hugeReply}
	m := newLLMMemory(t, filepath.Join(t.TempDir(), "s.db"), model, strata.LLMOptions{})
	ctx := context.Background()
	if _, err := m.Ingest(ctx, strata.Batch{Conversation: "c", Turns: identTurns()[:10]}); err != nil {
		t.Fatal(err)
	}
	legacy := allNodes(t, m, "c")[0]
	legacy.Summary = strings.Repeat("An old reply that ran far too long. ", 60)
	legacy.Tokens, legacy.Method, legacy.Status, legacy.Model, legacy.Pending = 540, strata.MethodLLM, strata.StatusOverBudget, "old-1", false
	if err := m.Store().PutNodes(ctx, m.Namespace(), "c", []strata.Node{legacy}); err != nil {
		t.Fatal(err)
	}
	if res, err := m.SummarizePending(ctx, strata.PendingOptions{}); err != nil || res.Calls != 0 {
		t.Fatalf("a pass without RetryFailed: %+v, %v", res, err)
	}
	res, err := m.SummarizePending(ctx, strata.PendingOptions{RetryFailed: true})
	if err != nil || res.Retried != 1 || res.OverBudget != 1 || res.Calls != 3 {
		t.Fatalf("retry: %+v, %v", res, err)
	}
	n := allNodes(t, m, "c")[0]
	if n.Method != strata.MethodExtractive || n.Tokens > 100 || n.Rejected == nil || strings.Contains(n.Summary, "An old reply") {
		t.Errorf("node after the retry: method %s, %d tokens, rejected %v:\n%s", n.Method, n.Tokens, n.Rejected != nil, n.Summary)
	}
}

// wordySummarizer writes summaries of about 300 tokens, over any budget
// of llmPolicy.
type wordySummarizer struct{}

func (wordySummarizer) Summarize(_ context.Context, req strata.SummaryRequest) (strata.Summary, error) {
	return strata.Summary{Text: strings.Repeat("Every word of the span, kept. ", 40), Method: strata.MethodExtractive}, nil
}

// TestModelOverBudgetShorterServed: when no summary fits, the node serves
// the shorter one: the model's if it is shorter than the extractive one,
// else the extractive one with the model's reply kept aside.
func TestModelOverBudgetShorterServed(t *testing.T) {
	for _, tt := range []struct {
		name   string
		words  int // of the model's reply, about 1.6 tokens each
		method string
	}{{"model shorter", 100, strata.MethodLLM}, {"extractive shorter", 400, strata.MethodExtractive}} {
		t.Run(tt.name, func(t *testing.T) {
			model := &fakeModel{answer: func(int, strata.CompletionRequest) (strata.Completion, error) {
				return strata.Completion{Text: "SUMMARY:\n" + strings.Repeat("Ana and Ben talk. ", tt.words/4), FinishReason: "stop"}, nil
			}}
			st := openNewStore(t, filepath.Join(t.TempDir(), "s.db"))
			defer st.Close()
			m, err := strata.New(strata.Config{Store: st, Tokenizer: strata.CharEstimator{}, Summarizer: wordySummarizer{},
				Policy: llmPolicy, LLM: strata.LLMOptions{Completer: model, Backoff: time.Millisecond}, Tiers: &strata.TierPolicy{Off: true}})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if _, err := m.Ingest(ctx, strata.Batch{Conversation: "c", Turns: identTurns()[:10]}); err != nil {
				t.Fatal(err)
			}
			if res, err := m.SummarizePending(ctx, strata.PendingOptions{}); err != nil || res.OverBudget != 1 {
				t.Fatalf("result %+v, %v", res, err)
			}
			n := allNodes(t, m, "c")[0]
			if n.Method != tt.method || n.Status != strata.StatusOverBudget || (n.Rejected != nil) != (tt.method == strata.MethodExtractive) {
				t.Errorf("node: method %s, status %s, %d tokens, rejected %+v", n.Method, n.Status, n.Tokens, n.Rejected)
			}
		})
	}
}
