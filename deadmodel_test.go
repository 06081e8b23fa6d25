package strata_test

import (
	"context"
	"log/slog"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/extractive"
	"github.com/strata-memory/strata/internal/synth"
	"github.com/strata-memory/strata/openai"
)

// closedPort returns the address of a local TCP port nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// countingHandler counts the records logged at warning level or above.
type countingHandler struct {
	mu    sync.Mutex
	warns []string
}

func (h *countingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *countingHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn {
		h.mu.Lock()
		h.warns = append(h.warns, r.Message)
		h.mu.Unlock()
	}
	return nil
}
func (h *countingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *countingHandler) WithGroup(string) slog.Handler      { return h }

// countingCompleter counts the calls it passes on.
type countingCompleter struct {
	strata.Completer
	mu    sync.Mutex
	calls int
}

func (c *countingCompleter) Complete(ctx context.Context, req strata.CompletionRequest) (strata.Completion, error) {
	c.mu.Lock()
	c.calls++
	c.mu.Unlock()
	return c.Completer.Complete(ctx, req)
}

// TestModelEndpointDown: with the model's endpoint refusing connections, a
// pass over 38 pending nodes stops calling it after DeadEndpointFailures
// failed connections (and the calls already in flight), says so once,
// keeps every extractive summary pending with the reason, and the next
// pass tries again.
func TestModelEndpointDown(t *testing.T) {
	client, err := openai.New(openai.Config{BaseURL: (&url.URL{Scheme: "http", Host: closedPort(t), Path: "/v1"}).String(), Model: "tiny"})
	if err != nil {
		t.Fatal(err)
	}
	model := &countingCompleter{Completer: client}
	st := openNewStore(t, filepath.Join(t.TempDir(), "s.db"))
	defer st.Close()
	logs := &countingHandler{}
	// The default backoff (1 s, doubling) and retries: what a user runs.
	m, err := strata.New(strata.Config{Store: st, Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New(),
		Policy: strata.ChunksPolicy(), LLM: strata.LLMOptions{Completer: model}, Tiers: &strata.TierPolicy{Off: true},
		Logger: slog.New(logs)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := m.Ingest(ctx, strata.Batch{Conversation: "c", Turns: synth.New(8).Turns(240)}); err != nil {
		t.Fatal(err)
	}
	if n := len(allNodes(t, m, "c")); n != 38 {
		t.Fatalf("%d nodes, want 38", n)
	}
	for pass := 1; pass <= 2; pass++ {
		before := model.calls
		start := time.Now()
		res, err := m.SummarizePending(ctx, strata.PendingOptions{})
		took := time.Since(start)
		t.Logf("pass %d over 38 pending nodes, endpoint down: %v, %d calls, %+v", pass, took.Round(time.Millisecond), model.calls-before, res)
		if err != nil {
			t.Fatal(err)
		}
		// Four nodes are in flight at once: at most one failed call each.
		if calls := model.calls - before; calls < strata.DeadEndpointFailures || calls > strata.DeadEndpointFailures+4 {
			t.Errorf("pass %d: %d calls to a dead endpoint", pass, calls)
		}
		if res.Skipped != 38 || res.Failed != 0 || res.Summarized != 0 || !strings.Contains(res.Unreachable, "connection refused") {
			t.Errorf("pass %d: result %+v", pass, res)
		}
		for _, n := range allNodes(t, m, "c") {
			if !n.Pending || n.Method != strata.MethodExtractive || n.Summary == "" || n.Fallback != res.Unreachable {
				t.Fatalf("node %s: pending %v method %s fallback %q", n.ID, n.Pending, n.Method, n.Fallback)
			}
		}
		if len(logs.warns) != pass {
			t.Errorf("after pass %d, %d warnings logged: %q", pass, len(logs.warns), logs.warns)
		}
	}
	// The endpoint comes back: the next pass writes every summary.
	model.Completer = &fakeModel{answer: goodReply}
	res, err := m.SummarizePending(ctx, strata.PendingOptions{})
	if err != nil || res.Summarized != 38 || res.Skipped != 0 || res.Unreachable != "" {
		t.Fatalf("endpoint back: %+v, %v", res, err)
	}
	for _, n := range allNodes(t, m, "c") {
		if n.Pending || n.Method != strata.MethodLLM || n.Fallback != "" {
			t.Fatalf("node %s: pending %v method %s fallback %q", n.ID, n.Pending, n.Method, n.Fallback)
		}
	}
}

// TestModelEndpointFlaky: failed connections that are not consecutive do
// not stop a pass; a success resets the count.
func TestModelEndpointFlaky(t *testing.T) {
	refused := &strata.ProviderError{Provider: "fake", Retryable: true, Msg: "network error",
		Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}
	model := &fakeModel{answer: func(n int, req strata.CompletionRequest) (strata.Completion, error) {
		if n%3 != 0 { // two refused connections, then an answer
			return strata.Completion{}, refused
		}
		return goodReply(n, req)
	}}
	m := newLLMMemory(t, filepath.Join(t.TempDir(), "s.db"), model, strata.LLMOptions{Concurrency: 1})
	ctx := context.Background()
	if _, err := m.Ingest(ctx, strata.Batch{Conversation: "c", Turns: synth.New(9).Turns(40)}); err != nil {
		t.Fatal(err)
	}
	res, err := m.SummarizePending(ctx, strata.PendingOptions{})
	if err != nil || res.Summarized != 6 || res.Skipped != 0 || res.Unreachable != "" || model.calls != 18 {
		t.Fatalf("flaky endpoint: %+v, %d calls, %v", res, model.calls, err)
	}
}
