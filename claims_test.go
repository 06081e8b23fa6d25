package strata_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/extractive"
	"github.com/strata-memory/strata/internal/hashembed"
	"github.com/strata-memory/strata/internal/synth"
	"github.com/strata-memory/strata/sqlite"
)

// putCounter wraps a real store and counts, across every store that
// shares it, how many times each turn or node got a vector, and can hold
// Demote calls.
type putCounter struct {
	strata.Store
	mu      *sync.Mutex
	puts    map[string]int // by conversation and EmbedRef
	demotes *atomic.Int32
	// demote, if set, is called before each Demote.
	demote func()
}

func (s *putCounter) PutEmbeddings(ctx context.Context, ns, conv string, space strata.EmbedSpace, es []strata.Embedding) error {
	err := s.Store.PutEmbeddings(ctx, ns, conv, space, es)
	if err == nil {
		s.mu.Lock()
		for _, e := range es {
			s.puts[fmt.Sprintf("%s %d %d %s", conv, e.Level, e.Seq, e.Node)]++
		}
		s.mu.Unlock()
	}
	return err
}

func (s *putCounter) Demote(ctx context.Context, ns, conv string, ids []string, to strata.Tier, at time.Time) ([]strata.Move, error) {
	if s.demotes != nil {
		s.demotes.Add(1)
	}
	if s.demote != nil {
		s.demote()
	}
	return s.Store.Demote(ctx, ns, conv, ids, to, at)
}

// slowEmbedder is hashembed's embedder taking a little time per call, as
// a real one does, so that two processes overlap.
type slowEmbedder struct{ *hashembed.Embedder }

func (e slowEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	time.Sleep(2 * time.Millisecond)
	return e.Embedder.Embed(ctx, texts)
}

// TestPassClaimsEachUnitOnce: two Memories over one database file (two
// server processes) run Pass at the same time, round after round, over a
// conversation that grows by 40 turns a round, with a model for both
// levels and an embedder. Every node goes to the model exactly once, every
// turn and summary gets its vector exactly once, and nothing is left
// pending or unembedded.
func TestPassClaimsEachUnitOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	model := &fakeModel{answer: func(n int, req strata.CompletionRequest) (strata.Completion, error) {
		time.Sleep(3 * time.Millisecond) // a model takes a while: the passes overlap
		return goodReply(n, req)
	}}
	emb := slowEmbedder{hashembed.New("hash-a", 32)}
	counts := &putCounter{mu: &sync.Mutex{}, puts: map[string]int{}}
	open := func() *strata.Memory {
		st, err := sqlite.Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		m, err := strata.New(strata.Config{Store: &putCounter{Store: st, mu: counts.mu, puts: counts.puts},
			Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New(), Policy: llmPolicy,
			LLM:      strata.LLMOptions{Completer: model, Concurrency: 3, Backoff: time.Millisecond},
			Embedder: emb, Embedding: strata.EmbeddingOptions{BatchSize: 8, Concurrency: 2}})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	a, b := open(), open()
	ctx := context.Background()
	gen := synth.New(7)
	for round := range 8 {
		if _, err := a.Ingest(ctx, strata.Batch{Conversation: "c", Turns: gen.Turns(40)}); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for _, m := range []*strata.Memory{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := m.Pass(ctx); err != nil {
					t.Errorf("round %d: pass: %v", round, err)
				}
			}()
		}
		wg.Wait()
	}
	// The last round's passes may each have left to the other what it
	// held; one more pass each finds nothing left to do.
	for _, m := range []*strata.Memory{a, b} {
		if _, err := m.Pass(ctx); err != nil {
			t.Fatal(err)
		}
	}
	nodes := allNodes(t, a, "c")
	if len(nodes) != 32+16 {
		t.Fatalf("%d nodes, want 48 (32 micros, 16 minis)", len(nodes))
	}
	calls, err := a.Store().Calls(ctx, a.Namespace(), "c")
	if err != nil {
		t.Fatal(err)
	}
	perNode := map[string]int{}
	for _, c := range calls {
		perNode[c.Node]++
	}
	for _, n := range nodes {
		if n.Pending || n.Method != strata.MethodLLM {
			t.Errorf("node %s: pending %v, method %s; want a model summary", n.ID, n.Pending, n.Method)
		}
		if perNode[n.ID] != 1 {
			t.Errorf("node %s went to the model %d times, want once", n.ID, perNode[n.ID])
		}
	}
	if model.calls != len(nodes) || len(calls) != len(nodes) {
		t.Errorf("the model was called %d times (%d logged) for %d nodes", model.calls, len(calls), len(nodes))
	}
	counts.mu.Lock()
	defer counts.mu.Unlock()
	twice := 0
	for ref, n := range counts.puts {
		if n != 1 {
			twice++
			if twice <= 5 {
				t.Errorf("%s got a vector %d times, want once", ref, n)
			}
		}
	}
	if want := 320 + len(nodes); len(counts.puts) != want || twice > 0 {
		t.Errorf("%d items got vectors (%d of them more than once), want %d once each", len(counts.puts), twice, want)
	}
	left, err := a.Store().Unembedded(ctx, strata.EmbedFilter{Namespace: a.Namespace(), Conversation: "c",
		Space: strata.EmbedSpace{Model: "hash-a", Dim: 32}})
	if err != nil || len(left) != 0 {
		t.Errorf("%d items left without a vector (%v)", len(left), err)
	}
}

// TestTierPassClaimedPerConversation: while one process moves a
// conversation's spans, another's pass leaves that conversation's tiers
// alone; the first finishes the moves.
func TestTierPassClaimedPerConversation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	ctx := context.Background()
	open := func(demote func(), demotes *atomic.Int32, tiers *strata.TierPolicy) *strata.Memory {
		st, err := sqlite.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		m, err := strata.New(strata.Config{Store: &putCounter{Store: st, demote: demote, demotes: demotes},
			Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New(), Tiers: tiers})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	// The turns come in with tiering off: 8 closed micro spans, all hot.
	loader := open(nil, nil, &strata.TierPolicy{Off: true})
	if _, err := loader.Ingest(ctx, strata.Batch{Conversation: "c", Turns: synth.New(3).Turns(85)}); err != nil {
		t.Fatal(err)
	}
	inDemote, resume := make(chan struct{}), make(chan struct{})
	var once sync.Once
	a := open(func() {
		once.Do(func() {
			close(inDemote)
			<-resume
		})
	}, nil, nil)
	var bDemotes atomic.Int32
	b := open(nil, &bDemotes, nil)

	aDone := make(chan strata.Pass, 1)
	go func() {
		pass, err := a.RollupAll(ctx)
		if err != nil {
			t.Errorf("a: %v", err)
		}
		aDone <- pass
	}()
	select {
	case <-inDemote:
	case <-time.After(30 * time.Second):
		t.Fatal("a never began to move spans")
	}
	pass, err := b.RollupAll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := bDemotes.Load(); n != 0 || len(pass.Moved) != 0 {
		t.Errorf("while a moved the spans of c, b moved them too (%d Demote calls, moved %v)", n, pass.Moved)
	}
	close(resume)
	if pa := <-aDone; pa.Moved["c"] != 6 {
		t.Errorf("a moved %v, want the 6 spans outside the 2 hot ones", pa.Moved)
	}
	// Once a is done, b's passes find the work done.
	if pass, err := b.RollupAll(ctx); err != nil || len(pass.Moved) != 0 {
		t.Errorf("b after a: moved %v, %v", pass.Moved, err)
	}
}

// TestClaimOfDeadProcessIsTakenOver: a process killed while the model
// writes a summary leaves its claim on that node. Another process's pass
// leaves the node (and the level above, which waits for it) alone while
// the claim lasts, and takes it over once the claim has ended, so the work
// resumes after a restart.
func TestClaimOfDeadProcessIsTakenOver(t *testing.T) {
	if dir := os.Getenv("STRATA_CLAIM_CHILD"); dir != "" {
		claimChild(t, dir)
		return
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "s.db")
	var offset atomic.Int64 // the survivor's clock runs this far ahead
	model := &fakeModel{answer: goodReply}
	st, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	m, err := strata.New(strata.Config{Store: st, Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New(),
		Policy: llmPolicy, Tiers: &strata.TierPolicy{Off: true},
		LLM: strata.LLMOptions{Completer: model, Concurrency: 1, Backoff: time.Millisecond},
		Now: func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// Two micros and the mini over them, all pending.
	if _, err := m.Ingest(ctx, strata.Batch{Conversation: "c", Turns: synth.New(5).Turns(20)}); err != nil {
		t.Fatal(err)
	}

	// The other process claims the first micro, calls the model, and is
	// killed before the model answers.
	child := exec.Command(os.Args[0], "-test.run=^TestClaimOfDeadProcessIsTakenOver$", "-test.count=1")
	child.Env = append(os.Environ(), "STRATA_CLAIM_CHILD="+dir)
	out := &lockedBuffer{}
	child.Stdout, child.Stderr = out, out
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(dir, "calling")
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(marker); err == nil {
			break
		}
		if time.Now().After(deadline) {
			child.Process.Kill()
			child.Wait()
			t.Fatalf("the child never called its model:\n%s", out.String())
		}
	}
	if err := child.Process.Kill(); err != nil { // SIGKILL: nothing is released
		t.Fatal(err)
	}
	child.Wait()
	first := strata.NodeID(m.Namespace(), "c", 1, 1, 10)

	// While the dead process's claim lasts, the survivor writes the second
	// micro only: the first is claimed, and the mini waits for it.
	res, err := m.SummarizePending(ctx, strata.PendingOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Summarized != 1 || model.calls != 1 {
		t.Fatalf("while the claim lasts: %+v, %d model calls; want the second micro only", res, model.calls)
	}
	for _, n := range allNodes(t, m, "c") {
		if wantPending := n.ID == first || n.Level == 2; n.Pending != wantPending {
			t.Errorf("node %s (level %d, %d..%d): pending %v, want %v", n.ID, n.Level, n.FirstSeq, n.LastSeq, n.Pending, wantPending)
		}
	}
	if res.Claimed != 1 {
		t.Errorf("Claimed = %d, want 1: the node another process holds", res.Claimed)
	}

	// Past the claim's end, the survivor takes the node over and the mini
	// follows.
	offset.Store(int64(time.Hour))
	res, err = m.SummarizePending(ctx, strata.PendingOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Summarized != 2 || model.calls != 3 || res.Claimed != 0 {
		t.Fatalf("after the claim ended: %+v, %d model calls in all; want the first micro and the mini", res, model.calls)
	}
	calls, err := st.Calls(ctx, m.Namespace(), "c")
	if err != nil {
		t.Fatal(err)
	}
	perNode := map[string]int{}
	for _, c := range calls {
		perNode[c.Node]++
	}
	for _, n := range allNodes(t, m, "c") {
		if n.Pending || n.Method != strata.MethodLLM || perNode[n.ID] != 1 {
			t.Errorf("node %s: pending %v, method %s, %d logged calls; want one model summary", n.ID, n.Pending, n.Method, perNode[n.ID])
		}
	}
}

// claimChild is the process TestClaimOfDeadProcessIsTakenOver kills: it
// writes pending summaries with a model that never answers, and marks the
// moment it calls it.
func claimChild(t *testing.T, dir string) {
	st, err := sqlite.Open(context.Background(), filepath.Join(dir, "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	model := &fakeModel{answer: func(int, strata.CompletionRequest) (strata.Completion, error) {
		if err := os.WriteFile(filepath.Join(dir, "calling"), nil, 0o644); err != nil {
			t.Error(err)
		}
		time.Sleep(time.Hour) // killed here
		return strata.Completion{}, nil
	}}
	m, err := strata.New(strata.Config{Store: st, Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New(),
		Policy: llmPolicy, Tiers: &strata.TierPolicy{Off: true},
		LLM: strata.LLMOptions{Completer: model, Concurrency: 1}})
	if err != nil {
		t.Fatal(err)
	}
	m.SummarizePending(context.Background(), strata.PendingOptions{})
	t.Fatal("the model answered")
}

// lockedBuffer collects a child's output.
type lockedBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b = append(l.b, p...)
	return len(p), nil
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.b)
}

// TestPendingPassesOfOneProcess: two passes of one Memory at once (the
// worker and a request, say) share its holder, which the store lets renew
// its own claims; each node still goes to the model once.
func TestPendingPassesOfOneProcess(t *testing.T) {
	model := &fakeModel{answer: func(n int, req strata.CompletionRequest) (strata.Completion, error) {
		time.Sleep(3 * time.Millisecond)
		return goodReply(n, req)
	}}
	m := newLLMMemory(t, filepath.Join(t.TempDir(), "s.db"), model, strata.LLMOptions{Concurrency: 3})
	ctx := context.Background()
	if _, err := m.Ingest(ctx, strata.Batch{Conversation: "c", Turns: synth.New(9).Turns(200)}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := m.SummarizePending(ctx, strata.PendingOptions{}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if _, err := m.SummarizePending(ctx, strata.PendingOptions{}); err != nil {
		t.Fatal(err)
	}
	nodes := allNodes(t, m, "c")
	if model.calls != len(nodes) {
		t.Errorf("%d model calls for %d nodes, want one each", model.calls, len(nodes))
	}
	for _, n := range nodes {
		if n.Pending {
			t.Errorf("node %s still pending", n.ID)
		}
	}
}
