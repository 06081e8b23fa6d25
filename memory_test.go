package strata_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/extractive"
	"github.com/strata-memory/strata/formats"
	"github.com/strata-memory/strata/internal/hashembed"
	"github.com/strata-memory/strata/internal/synth"
)

// newMemory opens a Memory over a fresh SQLite file.
func newMemory(t testing.TB, tok strata.Tokenizer) *strata.Memory {
	t.Helper()
	st := openNewStore(t, filepath.Join(t.TempDir(), "strata.db"))
	t.Cleanup(func() { st.Close() })
	if tok == nil {
		tok = strata.CharEstimator{}
	}
	m, err := strata.New(strata.Config{Store: st, Tokenizer: tok, Summarizer: extractive.New(),
		Now: func() time.Time { return time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func ingest(t testing.TB, m *strata.Memory, conv string, turns []strata.Turn) strata.IngestResult {
	t.Helper()
	res, err := m.Ingest(context.Background(), strata.Batch{Conversation: conv, Turns: turns})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestPyramidShape(t *testing.T) {
	tests := []struct {
		turns               int
		micro, mini, macro  int
		openMicro, openMini int64
	}{
		{0, 0, 0, 0, 0, 0},
		{9, 0, 0, 0, 9, 9},
		{10, 1, 0, 0, 0, 10},
		{19, 1, 0, 0, 9, 19},
		{20, 2, 1, 0, 0, 0},
		{99, 9, 4, 0, 9, 19},
		{100, 10, 5, 1, 0, 0},
		{419, 41, 20, 4, 9, 19},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.turns), func(t *testing.T) {
			m := newMemory(t, nil)
			ctx := context.Background()
			turns := synth.New(1).Turns(tt.turns)
			if tt.turns == 0 {
				// An empty batch creates nothing, not even the conversation.
				res := ingest(t, m, "c", nil)
				if res.Added != 0 {
					t.Fatalf("added %d", res.Added)
				}
				if _, err := m.Conversation(ctx, "c"); strata.ErrorCode(err) != strata.ENOTFOUND {
					t.Fatalf("conversation after an empty batch: err %v, want ENOTFOUND", err)
				}
				return
			}
			ingest(t, m, "c", turns)
			tree, err := m.Tree(ctx, "c")
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]strata.TreeLevel{}
			for _, l := range tree.Levels {
				got[l.Name] = l
			}
			if got["micro"].Nodes != tt.micro || got["mini"].Nodes != tt.mini || got["macro"].Nodes != tt.macro {
				t.Fatalf("nodes micro/mini/macro = %d/%d/%d, want %d/%d/%d", got["micro"].Nodes, got["mini"].Nodes,
					got["macro"].Nodes, tt.micro, tt.mini, tt.macro)
			}
			if got["micro"].OpenTurns != tt.openMicro || got["mini"].OpenTurns != tt.openMini {
				t.Fatalf("open turns micro/mini = %d/%d, want %d/%d", got["micro"].OpenTurns, got["mini"].OpenTurns, tt.openMicro, tt.openMini)
			}
			checkTree(t, tree)
		})
	}
}

// checkTree verifies the pyramid is a tree: each level tiles turns from 1
// without gaps or overlaps, and each node's children are the consecutive
// nodes of the level below inside its span.
func checkTree(t *testing.T, tree *strata.Tree) {
	t.Helper()
	byLevel := map[int][]strata.TreeNode{}
	for _, n := range tree.Nodes {
		byLevel[n.Level] = append(byLevel[n.Level], n)
	}
	for lvl, ns := range byLevel {
		next := int64(1)
		for _, n := range ns {
			if n.FirstSeq != next || n.LastSeq < n.FirstSeq {
				t.Fatalf("level %d node %s spans %d-%d, want it to start at %d", lvl, n.ID, n.FirstSeq, n.LastSeq, next)
			}
			next = n.LastSeq + 1
			if n.Summary == "" {
				t.Fatalf("level %d node %s has no summary", lvl, n.ID)
			}
		}
		if lvl > 1 {
			below := byLevel[lvl-1]
			for _, n := range ns {
				inside := int64(0)
				for _, c := range below {
					if c.FirstSeq >= n.FirstSeq && c.LastSeq <= n.LastSeq {
						inside += c.LastSeq - c.FirstSeq + 1
					}
				}
				if inside != n.LastSeq-n.FirstSeq+1 {
					t.Fatalf("level %d node %s: children cover %d of its %d turns", lvl, n.ID, inside, n.LastSeq-n.FirstSeq+1)
				}
			}
		}
	}
}

// TestDeterministicAndIdempotent ingests the same turns into two stores,
// one in a single batch and one in small batches with repeats, and expects
// the same pyramid byte for byte.
func TestDeterministicAndIdempotent(t *testing.T) {
	ctx := context.Background()
	turns := synth.New(7).Turns(263)
	a := newMemory(t, nil)
	ingest(t, a, "c", turns)
	again := ingest(t, a, "c", turns)
	if again.Added != 0 || again.Skipped != len(turns) || again.Nodes != 0 {
		t.Fatalf("second ingest: %+v, want nothing added", again)
	}
	b := newMemory(t, nil)
	for i := 0; i < len(turns); i += 17 {
		lo := max(0, i-5) // overlap: the first turns of each batch repeat
		ingest(t, b, "c", turns[lo:min(i+17, len(turns))])
	}
	ta, err := a.Tree(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	tb, err := b.Tree(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	if ta.Turns != 263 || tb.Turns != 263 {
		t.Fatalf("turns %d and %d, want 263", ta.Turns, tb.Turns)
	}
	if len(ta.Nodes) != len(tb.Nodes) {
		t.Fatalf("%d nodes vs %d", len(ta.Nodes), len(tb.Nodes))
	}
	for i := range ta.Nodes {
		x, y := ta.Nodes[i], tb.Nodes[i]
		if x.ID != y.ID || x.Summary != y.Summary || x.Tokens != y.Tokens {
			t.Fatalf("node %d differs:\n%+v\n%+v", i, x, y)
		}
	}
	if n, err := a.Rollup(ctx, "c"); err != nil || n != 0 {
		t.Fatalf("rollup again made %d nodes (err %v), want 0", n, err)
	}
}

func TestSessions(t *testing.T) {
	ctx := context.Background()
	m := newMemory(t, nil)
	t0 := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	turn := func(id string, at time.Duration, label string) strata.Turn {
		return strata.Turn{ExtID: id, Role: strata.RoleUser, Content: "hello " + id, Time: t0.Add(at), SessionLabel: label}
	}
	ingest(t, m, "gap", []strata.Turn{turn("1", 0, ""), turn("2", 29*time.Minute, ""), turn("3", 61*time.Minute, "")})
	ingest(t, m, "gap", []strata.Turn{turn("4", 62*time.Minute, ""), turn("5", 5*time.Hour, "")})
	ingest(t, m, "label", []strata.Turn{turn("1", 0, "a"), turn("2", time.Second, "a"), turn("3", 2*time.Second, "b"), turn("4", 10*time.Hour, "b")})
	for conv, want := range map[string][]int{"gap": {1, 1, 2, 2, 3}, "label": {1, 1, 2, 2}} {
		ts, err := m.Store().Turns(ctx, strata.TurnFilter{Namespace: m.Namespace(), Conversation: conv})
		if err != nil {
			t.Fatal(err)
		}
		var got []int
		for _, x := range ts {
			got = append(got, x.Session)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: sessions %v, want %v", conv, got, want)
		}
	}
}

func TestIngestRejectsBadTurnAtomically(t *testing.T) {
	ctx := context.Background()
	m := newMemory(t, nil)
	ingest(t, m, "c", synth.New(3).Turns(5))
	bad := synth.New(4).Turns(4)
	bad[2].Role = "robot"
	_, err := m.Ingest(ctx, strata.Batch{Conversation: "c", Turns: bad})
	if err == nil || strata.ErrorCode(err) != strata.EINVALID || !strings.Contains(err.Error(), "turn 3") || !strings.Contains(err.Error(), "role") {
		t.Fatalf("err = %v, want EINVALID naming turn 3 and role", err)
	}
	c, err := m.Conversation(ctx, "c")
	if err != nil || c.Turns != 5 {
		t.Fatalf("conversation has %d turns (err %v), want the 5 from before", c.Turns, err)
	}
	if _, err := m.Ingest(ctx, strata.Batch{Conversation: "", Turns: bad[:1]}); strata.ErrorCode(err) != strata.EINVALID {
		t.Fatalf("empty conversation id: err %v", err)
	}
}

// TestDerivedExtIDs: Import derives the missing ext_ids from content, so
// identical turns of one input stay distinct and a re-import adds nothing;
// Ingest, a live append, derives none, so the same turns again are new.
func TestDerivedExtIDs(t *testing.T) {
	ctx := context.Background()
	m := newMemory(t, nil)
	at := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	same := strata.Turn{Role: strata.RoleUser, Content: "ok", Time: at}
	turns := []strata.Turn{same, same, {Role: strata.RoleAssistant, Content: "ok", Time: at}}
	convs := []string{"c", "c", "c"}
	if r := importAll(t, m, convs, turns); r[0].Added != 3 {
		t.Fatalf("added %d, want 3: identical turns stay distinct", r[0].Added)
	}
	if r := importAll(t, m, convs, turns); r[0].Added != 0 {
		t.Fatalf("re-import added %d, want 0", r[0].Added)
	}
	if r := ingest(t, m, "c", turns); r.Added != 3 {
		t.Fatalf("live ingest of the same turns added %d, want 3", r.Added)
	}
	c, _ := m.Conversation(ctx, "c")
	if c.Turns != 6 {
		t.Fatalf("turns %d, want 6", c.Turns)
	}
}

// TestConcurrentIngest runs writers on one conversation at once, with
// overlapping batches: every turn is stored once and the pyramid is whole.
func TestConcurrentIngest(t *testing.T) {
	ctx := context.Background()
	m := newMemory(t, nil)
	turns := synth.New(21).Turns(600)
	errs := make(chan error, 6)
	for w := 0; w < 6; w++ {
		go func() {
			var err error
			for i := w * 50; i < len(turns) && err == nil; i += 150 {
				_, err = m.Ingest(ctx, strata.Batch{Conversation: "c", Turns: turns[i:min(i+200, len(turns))]})
			}
			errs <- err
		}()
	}
	for w := 0; w < 6; w++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	tree, err := m.Tree(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	if tree.Turns != 600 {
		t.Fatalf("%d turns, want 600", tree.Turns)
	}
	checkTree(t, tree)
	if tree.Levels[0].Nodes != 6 {
		t.Fatalf("%d macro nodes, want 6", tree.Levels[0].Nodes)
	}
}

var errEOF = io.EOF

// TestPyramidGolden writes the pyramid of the demo conversation (every
// node's span, status and summary) to a golden file: a change in rollups or
// summaries shows up as a reviewable diff.
func TestPyramidGolden(t *testing.T) {
	ctx := context.Background()
	m := newMemory(t, o200k(t))
	f, err := os.Open(filepath.Join("cmd", "strata", "demo.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	turns := readJSONL(t, "demo.jsonl", f)
	ingest(t, m, "demo", turns)
	tree, err := m.Tree(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	checkTree(t, tree)
	var b strings.Builder
	for _, l := range tree.Levels {
		fmt.Fprintf(&b, "level %d %s: %d nodes, %d open turns\n", l.Level, l.Name, l.Nodes, l.OpenTurns)
	}
	for _, n := range tree.Nodes {
		fmt.Fprintf(&b, "\n== %s level %d turns %d-%d %s..%s %d/%d tokens %s themes=%v\n%s\n", n.ID, n.Level, n.FirstSeq, n.LastSeq,
			n.Start.Format(time.RFC3339), n.End.Format(time.RFC3339), n.Tokens, n.SourceTokens, n.Status, n.Themes, n.Summary)
	}
	path := filepath.Join("testdata", "pyramid-demo.golden")
	if *update {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(want) != b.String() {
		t.Errorf("pyramid differs from %s (run go test -update and review the diff)", path)
	}
}

func TestImportPipeline(t *testing.T) {
	// Import's batches are lowered from ImportBatch (5000) to 500, so
	// that 1200 turns make the three batches (two whole, then a part)
	// that 12000 turns make at the real size.
	defer strata.SetImportBatch(500)()
	ctx := context.Background()
	turns := synth.New(31).Turns(1200)
	feed := func(ts []strata.Turn, failAt int, failErr error) func() (string, strata.Turn, error) {
		i := 0
		return func() (string, strata.Turn, error) {
			if i == failAt {
				return "", strata.Turn{}, failErr
			}
			if i == len(ts) {
				return "", strata.Turn{}, io.EOF
			}
			i++
			return "c", ts[i-1], nil
		}
	}
	t.Run("same pyramid as Ingest", func(t *testing.T) {
		a, b := newMemory(t, nil), newMemory(t, nil)
		res, err := a.Import(ctx, feed(turns, -1, nil))
		if err != nil || len(res) != 3 {
			t.Fatalf("Import: %d results, %v", len(res), err)
		}
		ingest(t, b, "c", turns)
		ta, _ := a.Tree(ctx, "c")
		tb, _ := b.Tree(ctx, "c")
		if len(ta.Nodes) != len(tb.Nodes) || len(ta.Nodes) != 120+60+12 {
			t.Fatalf("%d nodes by Import, %d by Ingest", len(ta.Nodes), len(tb.Nodes))
		}
		for i := range ta.Nodes {
			if ta.Nodes[i].ID != tb.Nodes[i].ID || ta.Nodes[i].Summary != tb.Nodes[i].Summary {
				t.Fatalf("node %d differs", i)
			}
		}
	})
	t.Run("reader error keeps what came before", func(t *testing.T) {
		m := newMemory(t, nil)
		boom := fmt.Errorf("disk on fire")
		_, err := m.Import(ctx, feed(turns, 700, boom))
		if err != boom {
			t.Fatalf("err %v, want the reader's", err)
		}
		c, _ := m.Conversation(ctx, "c")
		if c.Turns != 500 {
			t.Fatalf("%d turns stored, want the first batch of 500", c.Turns)
		}
		// Importing the whole input again completes it.
		if _, err := m.Import(ctx, feed(turns, -1, nil)); err != nil {
			t.Fatal(err)
		}
		tree, _ := m.Tree(ctx, "c")
		checkTree(t, tree)
		if tree.Turns != 1200 || tree.Levels[0].Nodes != 12 {
			t.Fatalf("after resuming: %d turns, %d macros", tree.Turns, tree.Levels[0].Nodes)
		}
	})
	t.Run("bad turn stops the import at its batch", func(t *testing.T) {
		m := newMemory(t, nil)
		bad := append([]strata.Turn(nil), turns...)
		bad[601].Role = "robot"
		_, err := m.Import(ctx, feed(bad, -1, nil))
		if strata.ErrorCode(err) != strata.EINVALID || !strings.Contains(err.Error(), "role") {
			t.Fatalf("err %v, want EINVALID about the role", err)
		}
		c, _ := m.Conversation(ctx, "c")
		if c.Turns != 500 {
			t.Fatalf("%d turns stored, want only the first batch", c.Turns)
		}
	})
}

// readJSONL reads every turn of a JSONL input named name.
func readJSONL(t *testing.T, name string, in io.Reader) []strata.Turn {
	t.Helper()
	r, err := formats.Open(formats.JSONL, name, in)
	if err != nil {
		t.Fatal(err)
	}
	var turns []strata.Turn
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return turns
		}
		if err != nil {
			t.Fatal(err)
		}
		turns = append(turns, rec.Turn)
	}
}

// TestForNamespaceParts: every part of a Memory that ForNamespace made
// (appends, rollups, the model pass, embeddings, tier moves) works in the
// new namespace, and none of its work lands in the first.
func TestForNamespaceParts(t *testing.T) {
	ctx := context.Background()
	st := openNewStore(t, filepath.Join(t.TempDir(), "strata.db"))
	defer st.Close()
	model := &fakeModel{answer: goodReply}
	m, err := strata.New(strata.Config{Store: st, Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New(),
		Policy: llmPolicy, LLM: strata.LLMOptions{Completer: model, Backoff: time.Millisecond},
		Embedder: hashembed.New("hash-a", 16), DeferTiers: true,
		Tiers: &strata.TierPolicy{HotChunks: 0, WarmMaxTurns: 10},
		Now:   func() time.Time { return time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.ForNamespace("team-b")
	if err != nil {
		t.Fatal(err)
	}
	turns := make([]strata.Turn, 20)
	for i := range turns {
		turns[i] = strata.Turn{ExtID: fmt.Sprintf("t%d", i), Role: strata.RoleUser, Content: fmt.Sprintf("note %d of the second team", i)}
	}
	if res := ingest(t, b, "c", turns); res.Added != 20 || res.Nodes != 3 || res.Moved != 0 {
		t.Fatalf("ingest: added %d, nodes %d, moved %d; want 20, 3 (two micro, one mini), 0 (tiers deferred)", res.Added, res.Nodes, res.Moved)
	}
	sum, err := b.SummarizePending(ctx, strata.PendingOptions{})
	if err != nil || sum.Summarized != 3 {
		t.Fatalf("summarize pending: %d summarized (%v), want 3", sum.Summarized, err)
	}
	emb, err := b.Embed(ctx, strata.EmbedRequest{})
	if err != nil || emb.Turns != 20 || emb.Nodes != 3 {
		t.Fatalf("embed: %d turns, %d nodes (%v); want 20, 3", emb.Turns, emb.Nodes, err)
	}
	moved, err := b.Tier(ctx, "c")
	if err != nil || len(moved.Moves) == 0 {
		t.Fatalf("tier: %d moves (%v), want some", len(moved.Moves), err)
	}
	if hits, err := b.Search(ctx, "c", "second team", 5); err != nil || len(hits) == 0 {
		t.Fatalf("search in the namespace: %d hits (%v)", len(hits), err)
	}

	// The first namespace holds none of it.
	if cs, err := m.Conversations(ctx); err != nil || len(cs) != 0 {
		t.Fatalf("first namespace: conversations %+v (%v), want none", cs, err)
	}
	if _, err := m.Tier(ctx, "c"); strata.ErrorCode(err) != strata.ENOTFOUND {
		t.Fatalf("first namespace: tier of c: %v, want ENOTFOUND", err)
	}
	if sum, err := m.SummarizePending(ctx, strata.PendingOptions{}); err != nil || sum.Summarized != 0 || sum.Calls != 0 {
		t.Fatalf("first namespace: summarize pending: %+v (%v), want nothing", sum, err)
	}
	if emb, err := m.Embed(ctx, strata.EmbedRequest{}); err != nil || emb.Turns+emb.Nodes != 0 {
		t.Fatalf("first namespace: embed: %+v (%v), want nothing", emb, err)
	}
	if model.calls != 3 {
		t.Fatalf("model calls: %d, want 3", model.calls)
	}
}
