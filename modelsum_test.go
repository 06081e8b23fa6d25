package strata_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/extractive"
	"github.com/strata-memory/strata/internal/synth"
	"github.com/strata-memory/strata/sqlite"
)

// fakeModel is a Completer for tests: answer decides each reply.
type fakeModel struct {
	mu      sync.Mutex
	calls   int
	users   []string
	systems []string
	answer  func(n int, req strata.CompletionRequest) (strata.Completion, error)
}

func (f *fakeModel) Name() string { return "fake" }

func (f *fakeModel) Complete(ctx context.Context, req strata.CompletionRequest) (strata.Completion, error) {
	f.mu.Lock()
	f.calls++
	n := f.calls
	f.users = append(f.users, req.User)
	f.systems = append(f.systems, req.System)
	f.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return strata.Completion{}, err
	}
	c, err := f.answer(n, req)
	if c.Model == "" {
		c.Model = "fake-1"
	}
	return c, err
}

// goodReply summarizes a prompt in the asked form, naming no identifier,
// in about 20 tokens.
func goodReply(_ int, req strata.CompletionRequest) (strata.Completion, error) {
	return strata.Completion{Text: "SUMMARY:\nThe speakers caught up and made plans together.\nFACTS:\n- They made plans.\nTHEMES: plans, friends",
		InputTokens: len(req.User) / 4, OutputTokens: 20, FinishReason: "stop"}, nil
}

var llmPolicy = strata.Policy{Name: "llmchunks", Levels: []strata.Level{
	{Name: "micro", Kind: strata.KindCount, Span: 10, Budget: 100, Summarizer: strata.MethodLLM},
	{Name: "mini", Kind: strata.KindCount, Span: 2, Budget: 160, Summarizer: strata.MethodLLM},
}}

func newLLMMemory(t *testing.T, path string, model strata.Completer, o strata.LLMOptions) *strata.Memory {
	t.Helper()
	st, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	o.Completer = model
	if o.Backoff == 0 {
		o.Backoff = time.Millisecond
	}
	m, err := strata.New(strata.Config{Store: st, Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New(),
		Policy: llmPolicy, LLM: o, Tiers: &strata.TierPolicy{Off: true},
		Now: func() time.Time { return time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func allNodes(t *testing.T, m *strata.Memory, conv string) []strata.Node {
	t.Helper()
	ns, err := m.Store().Nodes(context.Background(), strata.NodeFilter{Namespace: m.Namespace(), Conversation: conv})
	if err != nil {
		t.Fatal(err)
	}
	return ns
}

// identTurns are 40 turns naming identifiers a summary must keep.
func identTurns() []strata.Turn {
	turns := synth.New(21).Turns(40)
	for i := range turns {
		if i%5 == 0 {
			turns[i].Content = fmt.Sprintf("Deploy build-%d to /srv/app%d before 2024-0%d-1%d, ticket OPS-%d.", 100+i, i, 1+i%9, i%10, 4000+i)
		}
	}
	return turns
}

func TestModelSummaries(t *testing.T) {
	model := &fakeModel{answer: goodReply}
	m := newLLMMemory(t, filepath.Join(t.TempDir(), "s.db"), model, strata.LLMOptions{Concurrency: 3})
	ctx := context.Background()
	if _, err := m.Ingest(ctx, strata.Batch{Conversation: "c", Turns: identTurns()}); err != nil {
		t.Fatal(err)
	}
	// The rollup waited for no model: every node is extractive and pending.
	if model.calls != 0 {
		t.Fatalf("ingest made %d model calls", model.calls)
	}
	for _, n := range allNodes(t, m, "c") {
		if !n.Pending || n.Method != strata.MethodExtractive {
			t.Fatalf("node %s after ingest: pending %v, method %s", n.ID, n.Pending, n.Method)
		}
	}
	res, err := m.SummarizePending(ctx, strata.PendingOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Summarized != 6 || res.Calls != 6 || res.Failed != 0 {
		t.Fatalf("result %+v, want 6 nodes in 6 calls", res)
	}
	id := regexp.MustCompile(`build-\d+|/srv/app\d+|OPS-\d+`)
	for _, n := range allNodes(t, m, "c") {
		if n.Pending || n.Method != strata.MethodLLM || n.Model != "fake-1" || n.Status != strata.StatusOK {
			t.Errorf("node %s: pending %v, method %s, model %q, status %s", n.ID, n.Pending, n.Method, n.Model, n.Status)
		}
		if !strings.HasPrefix(n.Summary, "The speakers caught up") || len(n.Facts) != 1 || len(n.Themes) != 2 {
			t.Errorf("node %s: summary %q facts %v themes %v", n.ID, n.Summary, n.Facts, n.Themes)
		}
		// The model named no identifier: those of the extractive summary
		// are appended.
		if n.Level == 1 && !id.MatchString(n.Summary) {
			t.Errorf("node %s lost the span's identifiers: %q", n.ID, n.Summary)
		}
	}
	// Minis were written from the micros' model summaries.
	last := model.users[len(model.users)-1]
	if !strings.Contains(last, "The speakers caught up") {
		t.Errorf("the mini's prompt does not hold its children's model summaries:\n%s", last)
	}
	calls, err := m.Store().Calls(ctx, m.Namespace(), "c")
	if err != nil || len(calls) != 6 || calls[0].Provider != "fake" || calls[0].TokensOut != 20 || calls[0].Outcome != "ok" {
		t.Fatalf("call log %+v, %v", calls, err)
	}
	// Nothing is left: a second pass calls nobody.
	if res, _ := m.SummarizePending(ctx, strata.PendingOptions{}); res.Calls != 0 {
		t.Errorf("second pass made %d calls", res.Calls)
	}
}

// TestModelOverBudget: a model that always answers over budget is asked
// three times per node, then the node serves its extractive summary, which
// fits, and keeps the model's last reply marked over_budget.
func TestModelOverBudget(t *testing.T) {
	model := &fakeModel{answer: func(_ int, req strata.CompletionRequest) (strata.Completion, error) {
		return strata.Completion{Text: "SUMMARY:\n" + strings.Repeat("So much to say about everything. ", 80), FinishReason: "stop"}, nil
	}}
	m := newLLMMemory(t, filepath.Join(t.TempDir(), "s.db"), model, strata.LLMOptions{})
	ctx := context.Background()
	if _, err := m.Ingest(ctx, strata.Batch{Conversation: "c", Turns: synth.New(2).Turns(10)}); err != nil {
		t.Fatal(err)
	}
	res, err := m.SummarizePending(ctx, strata.PendingOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.OverBudget != 1 || res.Calls != 3 || model.calls != 3 {
		t.Fatalf("result %+v, %d calls; want one node over budget after 3 calls", res, model.calls)
	}
	n := allNodes(t, m, "c")[0]
	if n.Status != strata.StatusOK || n.Method != strata.MethodExtractive || n.Tokens > 100 ||
		n.Rejected == nil || n.Rejected.Status != strata.StatusOverBudget || n.Rejected.Tokens <= 100 {
		t.Errorf("node: status %s method %s tokens %d rejected %+v", n.Status, n.Method, n.Tokens, n.Rejected)
	}
	// The retries asked for less, more firmly each time.
	if strings.Contains(model.systems[0], "limit is") || !strings.Contains(model.systems[1], "the limit is 100") ||
		!strings.Contains(model.systems[2], "CRITICAL: the summary must be under 75 tokens") {
		t.Errorf("system prompts of the three tries:\n%s", strings.Join(model.systems, "\n----\n"))
	}
	calls, _ := m.Store().Calls(ctx, m.Namespace(), "c")
	for i, c := range calls {
		if c.Outcome != strata.StatusOverBudget || c.Attempt != i+1 {
			t.Errorf("call %d: %+v", i, c)
		}
	}
}

// TestModelFailures: retryable errors are retried, a dead model leaves the
// extractive summary with the reason, and RetryFailed upgrades it later.
func TestModelFailures(t *testing.T) {
	var down atomic.Bool
	model := &fakeModel{answer: func(n int, req strata.CompletionRequest) (strata.Completion, error) {
		if down.Load() {
			return strata.Completion{}, &strata.ProviderError{Provider: "fake", Status: 500, Retryable: true, Msg: "internal error"}
		}
		if n == 1 {
			return strata.Completion{}, &strata.ProviderError{Provider: "fake", Status: 429, Retryable: true, RetryAfter: time.Millisecond, Msg: "slow down"}
		}
		return goodReply(n, req)
	}}
	m := newLLMMemory(t, filepath.Join(t.TempDir(), "s.db"), model, strata.LLMOptions{Concurrency: 1, ErrorRetries: 2})
	ctx := context.Background()
	if _, err := m.Ingest(ctx, strata.Batch{Conversation: "c", Turns: synth.New(3).Turns(10)}); err != nil {
		t.Fatal(err)
	}
	res, err := m.SummarizePending(ctx, strata.PendingOptions{})
	if err != nil || res.Summarized != 1 || res.Calls != 2 {
		t.Fatalf("after a 429: %+v, %v; want one node in two calls", res, err)
	}
	// The model goes down; new nodes keep their extractive summaries.
	down.Store(true)
	if _, err := m.Ingest(ctx, strata.Batch{Conversation: "c", Turns: synth.New(3).Turns(20)[10:]}); err != nil {
		t.Fatal(err)
	}
	res, err = m.SummarizePending(ctx, strata.PendingOptions{})
	if err != nil || res.Failed != 2 || res.Calls != 6 {
		t.Fatalf("model down: %+v, %v; want 2 failed nodes after 3 calls each", res, err)
	}
	for _, n := range allNodes(t, m, "c") {
		if n.FirstSeq == 11 || n.Level == 2 {
			if n.Pending || n.Method != strata.MethodExtractive || !strings.Contains(n.Fallback, "HTTP 500") || n.Summary == "" {
				t.Errorf("node %s: pending %v method %s fallback %q", n.ID, n.Pending, n.Method, n.Fallback)
			}
		}
	}
	// Back up: RetryFailed upgrades them.
	down.Store(false)
	res, err = m.SummarizePending(ctx, strata.PendingOptions{RetryFailed: true})
	if err != nil || res.Retried != 2 || res.Summarized != 2 {
		t.Fatalf("retry failed: %+v, %v", res, err)
	}
	for _, n := range allNodes(t, m, "c") {
		if n.Method != strata.MethodLLM || n.Fallback != "" {
			t.Errorf("node %s after the retry: method %s fallback %q", n.ID, n.Method, n.Fallback)
		}
	}
}

// TestModelRestart: a pass cancelled mid-run leaves its work pending in the
// store; a new Memory over the same file finishes it.
func TestModelRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	ctx, cancel := context.WithCancel(context.Background())
	model := &fakeModel{answer: func(n int, req strata.CompletionRequest) (strata.Completion, error) {
		if n == 3 {
			cancel() // the process dies while its third call runs
			return strata.Completion{}, context.Canceled
		}
		return goodReply(n, req)
	}}
	m := newLLMMemory(t, path, model, strata.LLMOptions{Concurrency: 1})
	if _, err := m.Ingest(context.Background(), strata.Batch{Conversation: "c", Turns: synth.New(4).Turns(40)}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.SummarizePending(ctx, strata.PendingOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled pass: %v", err)
	}
	pending := 0
	for _, n := range allNodes(t, m, "c") {
		if n.Pending {
			pending++
		}
	}
	if pending != 4 {
		t.Fatalf("%d nodes pending after the cancelled pass, want 4", pending)
	}
	again := newLLMMemory(t, path, &fakeModel{answer: goodReply}, strata.LLMOptions{})
	res, err := again.SummarizePending(context.Background(), strata.PendingOptions{})
	if err != nil || res.Summarized != 4 {
		t.Fatalf("after the restart: %+v, %v", res, err)
	}
}

// TestModelDeferAndPrompts: with Defer, level-1 nodes wait for their span
// to leave the hot tier; a prompts folder overrides a level's prompt, and
// a broken one is refused at New.
func TestModelDeferAndPrompts(t *testing.T) {
	model := &fakeModel{answer: goodReply}
	st := openNewStore(t, filepath.Join(t.TempDir(), "s.db"))
	defer st.Close()
	prompts := fstest.MapFS{"micro.tmpl": {Data: []byte(`{{define "task"}}Write a haiku of {{.Budget}} tokens.{{end}}`)}}
	cfg := strata.Config{Store: st, Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New(), Policy: llmPolicy,
		LLM:   strata.LLMOptions{Completer: model, Defer: true, Prompts: prompts},
		Tiers: &strata.TierPolicy{HotChunks: 2}}
	m, err := strata.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := m.Ingest(ctx, strata.Batch{Conversation: "c", Turns: synth.New(5).Turns(50)}); err != nil {
		t.Fatal(err)
	}
	for _, n := range allNodes(t, m, "c") {
		want := n.Level == 2 || n.Tier != strata.TierHot
		if n.Pending != want {
			t.Errorf("node level %d tier %s: pending %v, want %v", n.Level, n.Tier, n.Pending, want)
		}
	}
	if _, err := m.SummarizePending(ctx, strata.PendingOptions{}); err != nil {
		t.Fatal(err)
	}
	haiku := 0
	for _, sys := range model.systems {
		if strings.Contains(sys, "Write a haiku of 100 tokens.") {
			haiku++
		}
	}
	if haiku != 3 { // the three cold or warm micros; the mini keeps its own prompt
		t.Errorf("%d of %d prompts used the overriding micro.tmpl", haiku, len(model.systems))
	}
	cfg.LLM.Prompts = fstest.MapFS{"micro.tmpl": {Data: []byte(`{{define "task"}}{{.Nope`)}}
	if _, err := strata.New(cfg); strata.ErrorCode(err) != strata.EINVALID || !strings.Contains(err.Error(), "micro.tmpl") {
		t.Errorf("a broken prompt: %v", err)
	}
}

// TestModelTimeoutsAndBadReplies: a model that never answers in time is
// retried with a longer timeout each try, then the node keeps its
// extractive summary; an empty reply does too; a reply that ignores the
// asked form is taken whole as the summary.
func TestModelTimeoutsAndBadReplies(t *testing.T) {
	for _, tt := range []struct {
		name     string
		answer   func(int, strata.CompletionRequest) (strata.Completion, error)
		method   string
		fallback string
		calls    int
	}{
		{"slow", nil, strata.MethodExtractive, "model failed", 3},
		{"empty", func(int, strata.CompletionRequest) (strata.Completion, error) {
			return strata.Completion{Text: "SUMMARY:\n\nFACTS:\n- nothing"}, nil
		}, strata.MethodExtractive, "model gave an empty summary", 1},
		{"no form", func(int, strata.CompletionRequest) (strata.Completion, error) {
			return strata.Completion{Text: "They met and talked about work."}, nil
		}, strata.MethodLLM, "", 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var model *fakeModel
			model = &fakeModel{answer: tt.answer}
			slow := &slowModel{fakeModel: model}
			// Every model gets a timeout no busy machine runs out of; the
			// slow one says its call's deadline passed as soon as it is
			// called, so no test waits for a clock.
			var c strata.Completer = model
			if tt.answer == nil {
				c = slow
			}
			m := newLLMMemory(t, filepath.Join(t.TempDir(), "s.db"), c, strata.LLMOptions{Timeout: time.Minute, ErrorRetries: 2})
			ctx := context.Background()
			if _, err := m.Ingest(ctx, strata.Batch{Conversation: "c", Turns: synth.New(6).Turns(10)}); err != nil {
				t.Fatal(err)
			}
			res, err := m.SummarizePending(ctx, strata.PendingOptions{})
			if err != nil || res.Calls != tt.calls {
				t.Fatalf("result %+v, %v; want %d calls", res, err, tt.calls)
			}
			n := allNodes(t, m, "c")[0]
			if n.Method != tt.method || !strings.Contains(n.Fallback, tt.fallback) || n.Summary == "" || n.Pending {
				t.Errorf("node: method %s fallback %q summary %q", n.Method, n.Fallback, n.Summary)
			}
			if tt.answer == nil {
				// Each retry is given half the first timeout more than the
				// one before (60 s, 90 s, 120 s); the margin of 20 s is
				// for the time between setting a deadline and reading it.
				for i := 1; i < len(slow.deadlines); i++ {
					if slow.deadlines[i] < slow.deadlines[i-1]+20*time.Second {
						t.Errorf("timeouts %v do not grow by 30 s a retry", slow.deadlines)
					}
				}
			}
		})
	}
}

// slowModel never answers in time: it records how long each call was
// given and returns the error of a call whose deadline passed, as a
// client does when its model is too slow, without waiting for it.
type slowModel struct {
	*fakeModel
	mu        sync.Mutex
	deadlines []time.Duration
}

func (s *slowModel) Complete(ctx context.Context, req strata.CompletionRequest) (strata.Completion, error) {
	if d, ok := ctx.Deadline(); ok {
		s.mu.Lock()
		s.deadlines = append(s.deadlines, time.Until(d).Round(time.Millisecond))
		s.mu.Unlock()
	}
	s.fakeModel.mu.Lock()
	s.fakeModel.calls++
	s.fakeModel.mu.Unlock()
	return strata.Completion{}, fmt.Errorf("fake model: no reply in time: %w", context.DeadlineExceeded)
}

// TestModelReplyMadeStorable: a model that answers with NUL and invalid
// UTF-8 (and fails once with them in its error) has its reply stored as
// text every store keeps (PostgreSQL refuses both), not refused and not
// written raw.
func TestModelReplyMadeStorable(t *testing.T) {
	model := &fakeModel{answer: func(n int, req strata.CompletionRequest) (strata.Completion, error) {
		if n == 1 {
			return strata.Completion{}, &strata.ProviderError{Status: 500, Retryable: true, Msg: "bad\x00gateway \xff"}
		}
		return strata.Completion{Text: "SUMMARY:\nThe speakers\x00 made plans \xff\xfe together.\nFACTS:\n- A\x00B.\nTHEMES: pl\xffans",
			Model: "fake\x00-2", FinishReason: "stop"}, nil
	}}
	m := newLLMMemory(t, filepath.Join(t.TempDir(), "s.db"), model, strata.LLMOptions{Concurrency: 1})
	ctx := context.Background()
	if _, err := m.Ingest(ctx, strata.Batch{Conversation: "c", Turns: identTurns()[:10]}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.SummarizePending(ctx, strata.PendingOptions{}); err != nil {
		t.Fatal(err)
	}
	ok := func(what, s string) {
		t.Helper()
		if err := strata.CheckText(what, s); err != nil {
			t.Errorf("%v (%q)", err, s)
		}
	}
	for _, n := range allNodes(t, m, "c") {
		if n.Method != strata.MethodLLM {
			t.Errorf("node %s: method %s, want the model's summary", n.ID, n.Method)
		}
		ok("summary", n.Summary)
		ok("model", n.Model)
		for _, f := range append(append([]string{}, n.Facts...), n.Themes...) {
			ok("fact or theme", f)
		}
	}
	calls, err := m.Store().Calls(ctx, m.Namespace(), "c")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range calls {
		ok("call outcome", c.Outcome)
		ok("call model", c.Model)
	}
}
