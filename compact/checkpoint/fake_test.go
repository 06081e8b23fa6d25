package checkpoint_test

import (
	"context"
	"strings"
	"sync"

	"github.com/strata-memory/strata"
)

// fakeModel is a Completer for tests: reply decides each answer (n counts
// calls from 1), and every request is kept.
type fakeModel struct {
	mu    sync.Mutex
	reqs  []strata.CompletionRequest
	reply func(n int, req strata.CompletionRequest) (strata.Completion, error)
}

func (f *fakeModel) Name() string { return "fake" }

func (f *fakeModel) Complete(ctx context.Context, req strata.CompletionRequest) (strata.Completion, error) {
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	n := len(f.reqs)
	f.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return strata.Completion{}, err
	}
	c, err := f.reply(n, req)
	if err == nil && c.Model == "" {
		c.Model = "fake-1"
	}
	return c, err
}

func (f *fakeModel) requests() []strata.CompletionRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]strata.CompletionRequest(nil), f.reqs...)
}

// text answers every call with the same text.
func text(s string) func(int, strata.CompletionRequest) (strata.Completion, error) {
	return func(int, strata.CompletionRequest) (strata.Completion, error) {
		return strata.Completion{Text: s, FinishReason: "stop", OutputTokens: len(s) / 4}, nil
	}
}

// plausible is a deterministic stand-in for a small summarizing model: it
// takes the first user message as the goal, writes a few generic
// sentences, and keeps some of the identifier-like words it read (every
// third one, at most 12), the way a model keeps some names and drops
// others. Given a prompt that asks for the checkpoint's sections it
// answers in them; given any other prompt, in one paragraph with the same
// words.
func plausible(_ int, req strata.CompletionRequest) (strata.Completion, error) {
	conv := req.User
	if i := strings.Index(conv, "## New Messages"); i >= 0 {
		conv = conv[i:]
	}
	goal := "Continue the work."
	if i := strings.Index(conv, "**User:** "); i >= 0 {
		g := conv[i+len("**User:** "):]
		if j := strings.IndexAny(g, ".?\n"); j > 0 {
			g = g[:j+1]
		}
		goal = strings.TrimSpace(g)
	}
	var words []string
	seen := map[string]bool{}
	for _, f := range strings.Fields(conv) {
		w := strings.Trim(f, ".,;:()[]{}\"'`*")
		if len(w) < 4 || seen[w] || strings.HasPrefix(w, "**") || !looksLikeIdentifier(w) {
			continue
		}
		seen[w] = true
		words = append(words, w)
	}
	var kept []string
	for i, w := range words {
		if i%3 == 0 && len(kept) < 12 {
			kept = append(kept, w)
		}
	}
	for len(kept) < 12 {
		kept = append(kept, "the code")
	}
	var out string
	if strings.Contains(req.System, "## Critical Context") {
		out = "## Goal\n" + goal + "\n\n## Constraints & Preferences\n- Keep the change small.\n\n## Progress\n### Done\n" +
			"- [x] Looked into " + kept[0] + " and " + kept[1] + ".\n- [x] Made the change in " + kept[2] + ".\n\n" +
			"### In Progress\n- [ ] Finish the work on " + kept[3] + ".\n\n## Key Decisions\n" +
			"- **Approach**: kept the existing design and fixed the cause.\n\n## Next Steps\n1. Run the tests again.\n" +
			"2. Check " + kept[4] + ".\n\n## Critical Context\n- The work touched " + strings.Join(kept[5:], ", ") + ".\n"
	} else {
		out = "The user asked: " + goal + " The assistant looked into " + kept[0] + " and " + kept[1] +
			", made the change in " + kept[2] + " and is finishing the work on " + kept[3] +
			". It kept the existing design and fixed the cause. Next it will run the tests again and check " + kept[4] +
			". The work touched " + strings.Join(kept[5:], ", ") + "."
	}
	return strata.Completion{Text: out, FinishReason: "stop", InputTokens: len(req.User) / 4, OutputTokens: len(out) / 4}, nil
}

func looksLikeIdentifier(w string) bool {
	var lower, upper bool
	for i := 0; i < len(w); i++ {
		switch c := w[i]; {
		case c == '/' || c == '_' || c >= '0' && c <= '9':
			return true
		case c == '.' && i > 0 && i < len(w)-1:
			return true
		case c >= 'a' && c <= 'z':
			lower = true
		case c >= 'A' && c <= 'Z':
			upper = upper || i > 0
		}
	}
	return lower && upper
}
