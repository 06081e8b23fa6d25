package checkpoint_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/compact/checkpoint"
	"github.com/strata-memory/strata/compact/internal/agentgen"
	"github.com/strata-memory/strata/internal/race"
	"github.com/strata-memory/strata/tiktoken"
)

// work is a short span of an agent fixing a test.
func work() []checkpoint.Entry {
	return []checkpoint.Entry{
		user("Fix the failing TestApplyDiscount in internal/billing. Don't change the public API."),
		said("I'll run the test first."),
		{Role: "assistant", Kind: "tool_call", Name: "bash", CallID: "c1", Text: `{"command": "go test ./internal/billing/ -run TestApplyDiscount"}`},
		{Role: "tool", Kind: "tool_result", Name: "bash", CallID: "c1", IsError: true,
			Text: "--- FAIL: TestApplyDiscount (0.00s)\n    discount_test.go:41: applyDiscount(1999, 15) = 1699, want 1700\nFAIL"},
		said("It truncates. I'll round half up instead of truncating, since totals are compared to the cent."),
		{Role: "assistant", Kind: "tool_call", Name: "edit_file", CallID: "c2", Text: `{"path": "internal/billing/discount.go", "old_string": "a / 100", "new_string": "(a + 50) / 100"}`},
		{Role: "tool", Kind: "tool_result", Name: "edit_file", CallID: "c2", Text: "Edited internal/billing/discount.go"},
		{Role: "assistant", Kind: "tool_call", Name: "bash", CallID: "c3", Text: `{"command": "go test ./internal/billing/ -run TestApplyDiscount"}`},
		{Role: "tool", Kind: "tool_result", Name: "bash", CallID: "c3", Text: "ok  \texample.com/shop/internal/billing\t0.012s"},
		said("Fixed `applyDiscount` in `internal/billing/discount.go`; the test passes.\n\nNext steps:\n- Add a case for negative amounts.\n- Run `go test ./...`."),
	}
}

func newWriter(t testing.TB, o checkpoint.Options) *checkpoint.Writer {
	t.Helper()
	if o.Backoff == 0 {
		o.Backoff = time.Millisecond
	}
	w, err := checkpoint.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestExtractiveSections(t *testing.T) {
	res, err := newWriter(t, checkpoint.Options{}).Checkpoint(context.Background(), work(), "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Mode != checkpoint.ModeExtractive || res.Update || res.Completion != nil {
		t.Fatalf("mode %q update %v completion %v", res.Mode, res.Update, res.Completion)
	}
	s, err := checkpoint.Parse(res.Text)
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name string
		got  []string
		want string
	}{
		{"goal", []string{s.Goal}, "Fix the failing TestApplyDiscount in internal/billing."},
		{"constraints", s.Constraints, "Don't change the public API."},
		{"done edit", s.Done, "Edited `internal/billing/discount.go`"},
		{"done check", s.Done, "`go test ./internal/billing/ -run TestApplyDiscount` passes"},
		{"done reply", s.Done, "Fixed `applyDiscount` in `internal/billing/discount.go`; the test passes."},
		{"decision", s.Decisions, "It truncates. I'll round half up instead of truncating, since totals are compared to the cent."},
		{"next", s.NextSteps, "Run `go test ./...`."},
	}
	for _, c := range checks {
		found := false
		for _, g := range c.got {
			if g == c.want || c.name == "decision" && strings.Contains(c.want, g) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: %q not in %q", c.name, c.want, c.got)
		}
	}
	if len(s.InProgress) != 0 {
		t.Errorf("in progress = %q, want none (the test passes again)", s.InProgress)
	}
	for _, want := range []string{"discount_test.go:41: applyDiscount(1999, 15) = 1699, want 1700", "--- FAIL: TestApplyDiscount"} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("ledger misses %q:\n%s", want, res.Text)
		}
	}
}

func TestExtractiveInProgressAndUpdate(t *testing.T) {
	first := work()[:5] // ends after the failure and the plan, before the fix
	w := newWriter(t, checkpoint.Options{})
	r1, err := w.Checkpoint(context.Background(), first, "")
	if err != nil {
		t.Fatal(err)
	}
	s1, _ := checkpoint.Parse(r1.Text)
	if len(s1.InProgress) == 0 || !strings.Contains(s1.InProgress[0], "fails: `discount_test.go:41") {
		t.Fatalf("in progress = %q, want the failing check\n%s", s1.InProgress, r1.Text)
	}
	rest := append([]checkpoint.Entry{user("Go on, and keep the timeout at 30s.")}, work()[5:]...)
	r2, err := w.Checkpoint(context.Background(), rest, r1.Text)
	if err != nil {
		t.Fatal(err)
	}
	s2, _ := checkpoint.Parse(r2.Text)
	if !r2.Update {
		t.Fatal("not an update")
	}
	if !strings.HasPrefix(s2.Goal, s1.Goal) || !strings.Contains(s2.Goal, "Latest request: Go on, and keep the timeout at 30s.") {
		t.Errorf("goal = %q", s2.Goal)
	}
	for _, it := range s2.InProgress {
		if strings.Contains(it, "fails") {
			t.Errorf("the fixed check is still in progress: %q", s2.InProgress)
		}
	}
	if !reflect.DeepEqual(s2.Constraints[:len(s1.Constraints)], s1.Constraints) || !contains(s2.Constraints, "Go on, and keep the timeout at 30s.") {
		t.Errorf("constraints = %q", s2.Constraints)
	}
	if !contains(s2.Decisions, s1.Decisions[0]) {
		t.Errorf("decisions lost: %q", s2.Decisions)
	}
	if !contains(s2.Done, "`go test ./internal/billing/ -run TestApplyDiscount` passes") {
		t.Errorf("done = %q", s2.Done)
	}
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func TestPromptSelection(t *testing.T) {
	m := &fakeModel{reply: plausible}
	w := newWriter(t, checkpoint.Options{LLM: m, Model: "small"})
	r1, err := w.Checkpoint(context.Background(), work()[:5], "")
	if err != nil {
		t.Fatal(err)
	}
	r2, err := w.Checkpoint(context.Background(), work()[5:], r1.Text)
	if err != nil {
		t.Fatal(err)
	}
	reqs := m.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d calls", len(reqs))
	}
	first, second := reqs[0], reqs[1]
	if !strings.Contains(first.System, "You write checkpoints") || strings.Contains(first.System, "up to date") {
		t.Errorf("first compaction's system prompt:\n%s", first.System)
	}
	if !strings.HasPrefix(first.User, "Conversation to checkpoint:") ||
		!strings.Contains(first.User, `**Tool call:** bash({"command":"go test ./internal/billing/ -run TestApplyDiscount"})`) ||
		!strings.Contains(first.User, "**Tool result (bash, error):** --- FAIL: TestApplyDiscount") {
		t.Errorf("first compaction's user prompt:\n%s", first.User)
	}
	if !strings.Contains(second.System, "keep the checkpoint of an agent's working session up to date") ||
		!strings.Contains(second.System, "Move items from In Progress to Done") {
		t.Errorf("update's system prompt:\n%s", second.System)
	}
	if !strings.Contains(second.User, "## Current Checkpoint\n\n"+r1.Text+"\n\n## New Messages\n\n") {
		t.Errorf("update's user prompt:\n%s", second.User)
	}
	if first.Model != "small" || first.MaxTokens != checkpoint.DefaultBudget {
		t.Errorf("model %q max tokens %d", first.Model, first.MaxTokens)
	}
	if r1.Mode != checkpoint.ModeLLM || r1.Update || !r2.Update || r2.Completion == nil || len(r2.Calls) != 1 {
		t.Errorf("r1 %q %v, r2 update %v completion %v calls %d", r1.Mode, r1.Update, r2.Update, r2.Completion, len(r2.Calls))
	}
}

func TestModelReplyRepaired(t *testing.T) {
	formatted := checkpoint.Sections{Goal: "Repaired goal.", Done: []string{"Fixed it."}}.Format()
	tests := []struct {
		name     string
		reply    func(int, strata.CompletionRequest) (strata.Completion, error)
		calls    int
		mode     string
		fallback bool
		want     []string // in the text
		not      []string // not in the text
	}{
		{name: "missing sections come from the extractive checkpoint",
			reply: text("## Goal\nShip the discount fix.\n\n## Next Steps\n1. Deploy it."), calls: 1, mode: "llm",
			want: []string{"## Goal\nShip the discount fix.", "1. Deploy it.", "- [x] Edited `internal/billing/discount.go`",
				"- Don't change the public API.", "## Key Decisions\n- I'll round half up instead of truncating"}},
		{name: "dropped identifiers go to Critical Context",
			reply: text(checkpoint.Sections{Goal: "Fix a test.", Done: []string{"Fixed the rounding."}}.Format()), calls: 1, mode: "llm",
			want: []string{"discount_test.go:41: applyDiscount(1999, 15) = 1699, want 1700", "go test ./internal/billing/ -run TestApplyDiscount",
				"internal/billing/discount.go", "applyDiscount"}},
		{name: "notes that only list identifiers go to the ledger",
			reply: text("## Goal\nFix a test.\n\n## Critical Context\n- `internal/billing/discount.go`, `applyDiscount`\n- The staging database is read-only until Friday.\n- paths: made/up/file.go"),
			calls: 1, mode: "llm",
			want: []string{"- The staging database is read-only until Friday."},
			not:  []string{"`internal/billing/discount.go`, `applyDiscount`", "made/up/file.go"}},
		{name: "a reply not in the format is repaired once",
			reply: func(n int, req strata.CompletionRequest) (strata.Completion, error) {
				if n == 1 {
					return strata.Completion{Text: "We fixed the rounding bug."}, nil
				}
				if !strings.Contains(req.System, "You reformat summaries") || req.User != "We fixed the rounding bug." {
					return strata.Completion{}, errors.New("unexpected repair request")
				}
				return strata.Completion{Text: formatted}, nil
			}, calls: 2, mode: "llm", want: []string{"## Goal\nRepaired goal.", "- [x] Fixed it."}},
		{name: "a reply that stays out of the format falls back",
			reply: text("Just prose, twice."), calls: 2, mode: "extractive", fallback: true,
			want: []string{"## Goal\nFix the failing TestApplyDiscount in internal/billing."}},
		{name: "an empty reply falls back without a repair",
			reply: text("  \n"), calls: 1, mode: "extractive", fallback: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &fakeModel{reply: tt.reply}
			res, err := newWriter(t, checkpoint.Options{LLM: m}).Checkpoint(context.Background(), work(), "")
			if err != nil {
				t.Fatal(err)
			}
			if len(m.requests()) != tt.calls || len(res.Calls) != tt.calls || res.Mode != tt.mode || (res.Fallback != "") != tt.fallback {
				t.Fatalf("calls %d/%d mode %q fallback %q", len(m.requests()), len(res.Calls), res.Mode, res.Fallback)
			}
			if _, err := checkpoint.Parse(res.Text); err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(res.Text, w) {
					t.Errorf("missing %q in:\n%s", w, res.Text)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(res.Text, n) {
					t.Errorf("unexpected %q in:\n%s", n, res.Text)
				}
			}
		})
	}
}

func TestModelError(t *testing.T) {
	refused := &strata.ProviderError{Provider: "fake", Status: 400, Msg: "bad request"}
	busy := &strata.ProviderError{Provider: "fake", Status: 429, Retryable: true, Msg: "slow down"}
	tests := []struct {
		name    string
		retries int
		reply   func(int, strata.CompletionRequest) (strata.Completion, error)
		calls   int
		ok      bool
	}{
		{"refused is not retried", 0, func(int, strata.CompletionRequest) (strata.Completion, error) { return strata.Completion{}, refused }, 1, false},
		{"other errors are not retried", 0, func(int, strata.CompletionRequest) (strata.Completion, error) {
			return strata.Completion{}, errors.New("broken")
		}, 1, false},
		{"retryable is retried", 0, func(n int, r strata.CompletionRequest) (strata.Completion, error) {
			if n < 3 {
				return strata.Completion{}, busy
			}
			return plausible(n, r)
		}, 3, true},
		{"retries run out", 0, func(int, strata.CompletionRequest) (strata.Completion, error) { return strata.Completion{}, busy }, 3, false},
		{"no retries", -1, func(int, strata.CompletionRequest) (strata.Completion, error) { return strata.Completion{}, busy }, 1, false},
		{"the repair call fails", 0, func(n int, _ strata.CompletionRequest) (strata.Completion, error) {
			if n == 1 {
				return strata.Completion{Text: "prose"}, nil
			}
			return strata.Completion{}, refused
		}, 2, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &fakeModel{reply: tt.reply}
			res, err := newWriter(t, checkpoint.Options{LLM: m, Retries: tt.retries}).Checkpoint(context.Background(), work(), "")
			if got := len(m.requests()); got != tt.calls {
				t.Errorf("%d calls, want %d", got, tt.calls)
			}
			if tt.ok {
				if err != nil || res.Mode != checkpoint.ModeLLM {
					t.Fatalf("err %v mode %q", err, res.Mode)
				}
				return
			}
			// A failed model gives the extractive checkpoint, saying why.
			if err != nil || res.Mode != checkpoint.ModeExtractive || !strings.Contains(res.Text, "TestApplyDiscount") {
				t.Fatalf("err %v mode %q text %q: want the extractive checkpoint", err, res.Mode, res.Text)
			}
			want := "bad request"
			switch tt.name {
			case "other errors are not retried":
				want = "broken"
			case "retries run out", "no retries":
				want = "slow down"
			}
			if !strings.HasPrefix(res.Fallback, "the model call failed: ") || !strings.Contains(res.Fallback, want) {
				t.Errorf("fallback %q does not say the call failed with %q", res.Fallback, want)
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	m := &fakeModel{reply: plausible}
	if _, err := newWriter(t, checkpoint.Options{LLM: m}).Checkpoint(ctx, work(), ""); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v", err)
	}
}

func TestDeterministic(t *testing.T) {
	for seed := int64(1); seed <= 6; seed++ {
		tr := agentgen.Generate(seed, agentgen.Options{Tasks: 6})
		span := tr.Entries()
		half := span[:len(span)/2]
		for _, o := range []checkpoint.Options{{}, {LLM: &fakeModel{reply: plausible}}} {
			a, err := newWriter(t, o).Checkpoint(context.Background(), span, "")
			if err != nil {
				t.Fatal(err)
			}
			cp := append([]checkpoint.Entry(nil), span...)
			b, err := newWriter(t, o).Checkpoint(context.Background(), cp, "")
			if err != nil {
				t.Fatal(err)
			}
			if a.Text != b.Text || !reflect.DeepEqual(a.Ledger, b.Ledger) || a.Omitted != b.Omitted {
				t.Fatalf("seed %d: two runs differ:\n%s\n---\n%s", seed, a.Text, b.Text)
			}
			p, _ := newWriter(t, o).Checkpoint(context.Background(), half, "")
			u1, _ := newWriter(t, o).Checkpoint(context.Background(), span[len(span)/2:], p.Text)
			u2, _ := newWriter(t, o).Checkpoint(context.Background(), span[len(span)/2:], p.Text)
			if u1.Text != u2.Text {
				t.Fatalf("seed %d: two updates differ", seed)
			}
		}
	}
}

// verbose answers with sections far over any budget.
func verbose(int, strata.CompletionRequest) (strata.Completion, error) {
	long := strings.Repeat("The assistant reviewed the code and its tests in detail. ", 40)
	var s checkpoint.Sections
	s.Goal = long
	for i := 0; i < 30; i++ {
		s.Constraints = append(s.Constraints, long)
		s.Done = append(s.Done, long)
		s.Decisions = append(s.Decisions, long)
		s.NextSteps = append(s.NextSteps, long)
		s.Notes = append(s.Notes, long)
	}
	return strata.Completion{Text: s.Format()}, nil
}

func TestBudgetNeverExceeded(t *testing.T) {
	race.SkipOneGoroutine(t)
	o200k, err := tiktoken.New(tiktoken.O200kBase)
	if err != nil {
		t.Fatal(err)
	}
	toks := []strata.Tokenizer{strata.CharEstimator{}, o200k}
	models := map[string]strata.Completer{"extractive": nil, "plausible": &fakeModel{reply: plausible}, "verbose": &fakeModel{reply: verbose}}
	for seed := int64(1); seed <= 5; seed++ {
		tr := agentgen.Generate(seed, agentgen.Options{Tasks: 4 + int(seed)*5})
		span := tr.Entries()
		for _, budget := range []int{checkpoint.MinBudget, 400, 1000, 3000} {
			for _, tok := range toks {
				for name, m := range models {
					o := checkpoint.Options{Budget: budget, Tokenizer: tok, LLM: m}
					prev := ""
					for _, part := range [][]checkpoint.Entry{span[:len(span)/2], span[len(span)/2:]} {
						res, err := newWriter(t, o).Checkpoint(context.Background(), part, prev)
						if err != nil {
							t.Fatal(err)
						}
						if n := tok.Count(res.Text); n > budget || n != res.Tokens {
							t.Fatalf("seed %d budget %d %s %s: %d tokens (Result.Tokens %d)", seed, budget, tok.Name(), name, n, res.Tokens)
						}
						// Goal and Critical Context are always there; the
						// other sections when they have something.
						if !strings.HasPrefix(res.Text, "## Goal\n") || !strings.Contains(res.Text, "\n## Critical Context\n") ||
							strings.Contains(res.Text, "- none") {
							t.Fatalf("seed %d budget %d %s %s: not in the format:\n%s", seed, budget, tok.Name(), name, res.Text)
						}
						if s, err := checkpoint.Parse(res.Text); err != nil || s.Goal == "" {
							t.Fatalf("seed %d budget %d %s %s: does not parse back (%v):\n%s", seed, budget, tok.Name(), name, err, res.Text)
						}
						prev = res.Text
					}
				}
			}
		}
	}
}

func TestOptionsValidate(t *testing.T) {
	for _, o := range []checkpoint.Options{{Budget: -1}, {Budget: checkpoint.MinBudget - 1}, {PromptBudget: -5}, {PromptBudget: 999}} {
		if _, err := checkpoint.New(o); strata.ErrorCode(err) != strata.EINVALID {
			t.Errorf("New(%+v) = %v, want EINVALID", o, err)
		}
	}
	if _, err := checkpoint.New(checkpoint.Options{Budget: checkpoint.MinBudget, PromptBudget: 1000}); err != nil {
		t.Error(err)
	}
}

func TestCheckpointMessageInSpan(t *testing.T) {
	w := newWriter(t, checkpoint.Options{})
	r1, _ := w.Checkpoint(context.Background(), work()[:5], "")
	prev, _ := checkpoint.Parse(r1.Text)
	prev.Ledger = append(prev.Ledger, checkpoint.Identifier{Kind: "path", Text: "config/app.yaml"})
	span := append([]checkpoint.Entry{
		user("[Previous conversation summary]\n\n" + prev.Format()),
		said("I have the context from our previous conversation. Let's continue."),
	}, work()[5:]...)
	r2, err := w.Checkpoint(context.Background(), span, "")
	if err != nil {
		t.Fatal(err)
	}
	s, _ := checkpoint.Parse(r2.Text)
	if !r2.Update || !strings.HasPrefix(s.Goal, "Fix the failing TestApplyDiscount") {
		t.Fatalf("update %v, goal %q", r2.Update, s.Goal)
	}
	if strings.Contains(r2.Text, "[Previous conversation summary]") || strings.Contains(r2.Text, "I have the context") {
		t.Errorf("the summary pair was read as conversation:\n%s", r2.Text)
	}
	if !strings.Contains(r2.Text, "config/app.yaml") {
		t.Errorf("the earlier ledger is lost:\n%s", r2.Text)
	}
}

func TestSerialize(t *testing.T) {
	long := strings.Repeat("a line of build output\n", 400)
	s := checkpoint.Serialize([]checkpoint.Entry{
		user("Build it."),
		{Role: "assistant", Kind: "thinking", Text: "Run the build."},
		call("bash", "{\n  \"command\": \"make\"\n}"),
		{Role: "tool", Kind: "tool_result", Name: "bash", Text: "START\n" + long + "END", IsError: true},
		said("Done."),
	})
	for _, want := range []string{"**User:** Build it.", "**Assistant (thinking):** Run the build.", `**Tool call:** bash({"command":"make"})`,
		"**Tool result (bash, error):** START\n", "characters cut ...]\n", "END\n\n**Assistant:** Done."} {
		if !strings.Contains(s, want) {
			t.Errorf("missing %q in:\n%s", want, s)
		}
	}
	if len(s) > 3000 {
		t.Errorf("long output not shortened: %d bytes", len(s))
	}
	// Over the prompt budget, the middle of the span is left out.
	tr := agentgen.Generate(7, agentgen.Options{Tasks: 40})
	m := &fakeModel{reply: plausible}
	if _, err := newWriter(t, checkpoint.Options{LLM: m, PromptBudget: 4000}).Checkpoint(context.Background(), tr.Entries(), ""); err != nil {
		t.Fatal(err)
	}
	u := m.requests()[0].User
	if n := (strata.CharEstimator{}).Count(u); n > 4100 || !strings.Contains(u, "messages left out ...]") {
		t.Errorf("prompt of %d tokens, marker %v", n, strings.Contains(u, "messages left out"))
	}
}
