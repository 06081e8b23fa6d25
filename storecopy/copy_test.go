package storecopy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/extractive"
	"github.com/strata-memory/strata/internal/proptest"
	"github.com/strata-memory/strata/internal/race"
	"github.com/strata-memory/strata/internal/synth"
	"github.com/strata-memory/strata/postgres"
	"github.com/strata-memory/strata/sqlite"
	"github.com/strata-memory/strata/storecopy"
)

func open(t testing.TB, dir, name string) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// source builds a store that holds every kind of thing a copy carries:
// two namespaces, calendar and chunk pyramids, warm, cold and expired
// spans, pinned turns, learnings confirmed, rejected and superseded, a
// log of model calls, a compaction state, vectors and tokens, one of them
// revoked.
func source(t testing.TB, dir string) *sqlite.Store {
	t.Helper()
	ctx := context.Background()
	st := open(t, dir, "src.db")
	clock := time.Date(2023, 1, 20, 0, 0, 0, 0, time.UTC)
	now := func() time.Time { return clock }
	for _, ns := range []string{"default", "team"} {
		m, err := strata.New(strata.Config{Store: st, Namespace: ns, Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New(), Now: now,
			Tiers: &strata.TierPolicy{HotChunks: 1, WarmMaxTurns: 120, ColdRetentionDays: 10}})
		if err != nil {
			t.Fatal(err)
		}
		g := synth.New(7)
		for _, conv := range []struct{ id, policy string }{{"a", "calendar"}, {"b", "chunks"}} {
			turns := g.Turns(400)
			if conv.id == "a" {
				turns[40].Content = "Jon's job is teaching at the school now."
				turns[380].Content = "Jon's job is nursing at the hospital since March."
			}
			for i := 0; i < len(turns); i += 100 {
				if _, err := m.Ingest(ctx, strata.Batch{Conversation: conv.id, Policy: conv.policy, Turns: turns[i : i+100]}); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := m.Pin(ctx, conv.id, 5, 1); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := m.Learn(ctx, ""); err != nil {
			t.Fatal(err)
		}
		ls, err := m.Learnings(ctx, strata.LearningFilter{Conversation: "a"})
		if err != nil || len(ls) < 2 {
			t.Fatalf("learnings of %s/a: %d, %v", ns, len(ls), err)
		}
		if _, err := m.SetLearningStatus(ctx, ls[0].ID, strata.LearningConfirmed); err != nil {
			t.Fatal(err)
		}
		if _, err := m.SetLearningStatus(ctx, ls[1].ID, strata.LearningRejected); err != nil {
			t.Fatal(err)
		}
		// Months later, retention expires the oldest cold spans.
		clock = clock.Add(60 * 24 * time.Hour)
		if _, err := m.Retention(ctx, "a", false); err != nil {
			t.Fatal(err)
		}
		clock = clock.Add(-60 * 24 * time.Hour)
		if err := st.RecordCalls(ctx, ns, "a", []strata.Call{{Conversation: "a", Node: "n1", Level: 2, Provider: "openai", Model: "m",
			Attempt: 1, TokensIn: 100, TokensOut: 20, Elapsed: time.Second, Outcome: "ok", At: clock}}); err != nil {
			t.Fatal(err)
		}
		if err := st.SaveCompactionState(ctx, ns, "b", strata.CompactionState{Checkpoint: "## Goal\nship it", TurnCount: 40, CompactionCount: 2, Updated: clock}); err != nil {
			t.Fatal(err)
		}
		nodes, err := st.Nodes(ctx, strata.NodeFilter{Namespace: ns, Conversation: "b", Level: 1, Limit: 3})
		if err != nil || len(nodes) == 0 {
			t.Fatal(nodes, err)
		}
		es := []strata.Embedding{{EmbedRef: strata.EmbedRef{Seq: 7}, Vector: []float32{1, 0, 0}},
			{EmbedRef: strata.EmbedRef{Level: 1, Seq: nodes[0].LastSeq, Node: nodes[0].ID}, Vector: []float32{0, 1, 0.5}}}
		if err := st.PutEmbeddings(ctx, ns, "b", strata.EmbedSpace{Model: "emb", Dim: 3}, es); err != nil {
			t.Fatal(err)
		}
		_, tok, err := strata.NewToken(ns, "ci", clock)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.PutToken(ctx, tok); err != nil {
			t.Fatal(err)
		}
		if ns == "team" {
			if _, err := st.RevokeToken(ctx, tok.ID, clock.Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The source must hold what the copy is meant to carry.
	stats, err := st.Stats(ctx, "default")
	if err != nil {
		t.Fatal(err)
	}
	for _, ts := range stats.Tiers {
		if ts.Spans == 0 {
			t.Fatalf("the source has no %s span: %+v", ts.Tier, stats.Tiers)
		}
	}
	ls, _ := st.Learnings(ctx, strata.LearningFilter{Namespace: "default", Statuses: []string{strata.LearningSuperseded}})
	if len(ls) == 0 {
		t.Fatal("the source has no superseded learning")
	}
	return st
}

// views are what a user reads of a memory: the tree of each conversation
// and the turns under every node, as JSON.
func views(t testing.TB, st strata.Store) string {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	for _, ns := range []string{"default", "team"} {
		m, err := strata.New(strata.Config{Store: st, Namespace: ns, Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New(),
			Tiers: &strata.TierPolicy{Off: true}})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []string{"a", "b"} {
			tree, err := m.Tree(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			j, _ := json.Marshal(tree)
			b.Write(j)
			for _, n := range tree.Nodes {
				_, turns, err := m.Expand(ctx, n.ID)
				if err != nil && strata.ErrorCode(err) != strata.ENOTFOUND { // expired spans say so
					t.Fatal(err)
				}
				j, _ := json.Marshal(turns)
				b.Write(j)
			}
		}
	}
	return b.String()
}

func TestCopyCarriesEverything(t *testing.T) {
	dir := t.TempDir()
	src := source(t, dir)
	dst := open(t, dir, "dst.db")
	ctx := context.Background()
	at := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	for i, p := range []string{"/home/ana/.claude/projects/-app/1.jsonl", "/home/ana/.claude/projects/-app/2.jsonl"} {
		if err := src.SaveWatchState(ctx, "default", p, strata.WatchState{Offset: int64(100 * (i + 1)), Lines: int64(i + 1),
			HeadLen: 10, Head: "h" + p, Updated: at}); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := storecopy.Copy(ctx, src, dst, storecopy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Namespaces != 2 || len(rep.Conversations) != 4 || rep.Tokens != 2 || rep.Watches != 2 {
		t.Errorf("report %+v", rep)
	}
	if a, b := watches(t, src), watches(t, dst); a != b {
		t.Errorf("watch states at the destination:\n%s\nwant\n%s", b, a)
	}
	if ms, err := storecopy.Verify(ctx, src, dst, nil); err != nil || len(ms) != 0 {
		t.Fatalf("verify: %v %v", ms, err)
	}
	if a, b := views(t, src), views(t, dst); a != b {
		t.Errorf("tree and expand differ after the copy")
	}
	toks, _ := dst.Tokens(ctx, "team")
	if len(toks) != 1 || toks[0].Revoked.IsZero() {
		t.Errorf("team's token at the destination: %+v, want it revoked", toks)
	}
	// Copying again adds nothing.
	again, err := storecopy.Copy(ctx, src, dst, storecopy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range again.Conversations {
		if c.Turns+c.Nodes+c.Moves+c.Expired+c.Learnings+c.Calls != 0 {
			t.Errorf("a second copy wrote %+v", c)
		}
	}
	if again.Tokens != 0 || again.Watches != 0 {
		t.Errorf("a second copy added %d tokens and %d watch states", again.Tokens, again.Watches)
	}
	// And back: the copy of the copy is the source.
	back := open(t, dir, "back.db")
	if _, err := storecopy.Copy(ctx, dst, back, storecopy.Options{}); err != nil {
		t.Fatal(err)
	}
	if ms, err := storecopy.Verify(ctx, src, back, nil); err != nil || len(ms) != 0 {
		t.Fatalf("verify the round trip: %v %v", ms, err)
	}
}

// watches lists the watch states of every namespace of st.
func watches(t *testing.T, st strata.Store) string {
	t.Helper()
	var b strings.Builder
	for _, ns := range []string{"default", "team"} {
		fs, err := st.WatchStates(context.Background(), ns)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fs {
			fmt.Fprintf(&b, "%s %q %d %d %d %q %s\n", ns, f.Path, f.Offset, f.Lines, f.HeadLen, f.Head, f.Updated.Format(time.RFC3339Nano))
		}
	}
	return b.String()
}

// TestVerifyFindsDifferences: a destination that lost a turn's content,
// a node or a learning is reported, naming the conversation.
func TestVerifyFindsDifferences(t *testing.T) {
	dir := t.TempDir()
	src := source(t, dir)
	dst := open(t, dir, "dst.db")
	ctx := context.Background()
	if _, err := storecopy.Copy(ctx, src, dst, storecopy.Options{Namespaces: []string{"default"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := dst.SetImportance(ctx, "default", "b", 9, 1); err != nil {
		t.Fatal(err)
	}
	if err := dst.SaveWatchState(ctx, "default", "/w.jsonl", strata.WatchState{Offset: 5, Lines: 1}); err != nil {
		t.Fatal(err)
	}
	ms, err := storecopy.Verify(ctx, src, dst, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := ""
	for _, m := range ms {
		got += m.String() + "\n"
	}
	for _, want := range []string{"default/b: digest of the turns", `default: watch state of "/w.jsonl" only in the destination`, "team: conversations [\"a\" \"b\"] in the source, [] in the destination"} {
		if !strings.Contains(got, want) {
			t.Errorf("verify reported:\n%s\nwant a line with %q", got, want)
		}
	}
}

// TestCopyRefusesAnotherConversation: a destination conversation that is
// not a copy of the source's is left alone, with an error naming it.
func TestCopyRefusesAnotherConversation(t *testing.T) {
	dir := t.TempDir()
	src := source(t, dir)
	dst := open(t, dir, "dst.db")
	ctx := context.Background()
	m, err := strata.New(strata.Config{Store: dst, Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Ingest(ctx, strata.Batch{Conversation: "a", Policy: "calendar", Turns: []strata.Turn{{ExtID: "mine", Role: strata.RoleUser, Content: "my own turn"}}}); err != nil {
		t.Fatal(err)
	}
	before, err := storecopy.DigestOf(ctx, dst, "default", "a")
	if err != nil {
		t.Fatal(err)
	}
	_, err = storecopy.Copy(ctx, src, dst, storecopy.Options{})
	if strata.ErrorCode(err) != strata.ECONFLICT || !strings.Contains(err.Error(), "default/a") {
		t.Fatalf("copy over another conversation: %v, want ECONFLICT naming default/a", err)
	}
	after, err := storecopy.DigestOf(ctx, dst, "default", "a")
	if err != nil || after != before {
		t.Errorf("the destination's conversation changed: %+v -> %+v (%v)", before, after, err)
	}
}

// cutStore cancels the copy's context after a number of writes, as a kill
// between two transactions would stop it.
type cutStore struct {
	strata.Store
	left   *atomic.Int64
	cancel context.CancelFunc
}

func (c cutStore) wrote() {
	if c.left.Add(-1) == 0 {
		c.cancel()
	}
}

func (c cutStore) EnsureConversation(ctx context.Context, v strata.Conversation) (strata.Conversation, error) {
	defer c.wrote()
	return c.Store.EnsureConversation(ctx, v)
}

func (c cutStore) UpdateConversation(ctx context.Context, ns, id string, u strata.ConversationUpdate) (strata.Conversation, error) {
	defer c.wrote()
	return c.Store.UpdateConversation(ctx, ns, id, u)
}

func (c cutStore) AppendTurns(ctx context.Context, ns, id string, ts []strata.Turn) ([]strata.Turn, error) {
	defer c.wrote()
	return c.Store.AppendTurns(ctx, ns, id, ts)
}

func (c cutStore) PutNodes(ctx context.Context, ns, id string, nodes []strata.Node) error {
	defer c.wrote()
	return c.Store.PutNodes(ctx, ns, id, nodes)
}

func (c cutStore) Demote(ctx context.Context, ns, id string, ids []string, to strata.Tier, at time.Time) ([]strata.Move, error) {
	defer c.wrote()
	return c.Store.Demote(ctx, ns, id, ids, to, at)
}

func (c cutStore) Expire(ctx context.Context, ns, id string, ids []string, rule string, at time.Time, dry bool) ([]strata.Expiry, error) {
	defer c.wrote()
	return c.Store.Expire(ctx, ns, id, ids, rule, at, dry)
}

func (c cutStore) AddLearnings(ctx context.Context, ns, id string, ls []strata.Learning) ([]strata.Learning, error) {
	defer c.wrote()
	return c.Store.AddLearnings(ctx, ns, id, ls)
}

func (c cutStore) RecordCalls(ctx context.Context, ns, id string, calls []strata.Call) error {
	defer c.wrote()
	return c.Store.RecordCalls(ctx, ns, id, calls)
}

func (c cutStore) SaveCompactionState(ctx context.Context, ns, id string, s strata.CompactionState) error {
	defer c.wrote()
	return c.Store.SaveCompactionState(ctx, ns, id, s)
}

func (c cutStore) PutEmbeddings(ctx context.Context, ns, id string, sp strata.EmbedSpace, es []strata.Embedding) error {
	defer c.wrote()
	return c.Store.PutEmbeddings(ctx, ns, id, sp, es)
}

// TestCopyResumes (property): a copy stopped after any number of writes
// and run again leaves the destination equal to the source.
func TestCopyResumes(t *testing.T) {
	// A copy runs on one goroutine; its cases take half a minute each
	// under the detector.
	race.SkipOneGoroutine(t)
	dir := t.TempDir()
	src := source(t, dir)
	ctx := context.Background()
	// Count the writes of a whole copy with a batch small enough to make
	// many of them.
	var n atomic.Int64
	n.Store(1 << 40)
	full := open(t, dir, "full.db")
	if _, err := storecopy.Copy(ctx, src, cutStore{full, &n, func() {}}, storecopy.Options{Batch: 150}); err != nil {
		t.Fatal(err)
	}
	writes := 1<<40 - n.Load()
	t.Logf("a whole copy makes %d writes", writes)
	defer proptest.Bound(12, 12)() // it skips under the detector
	rapid.Check(t, func(rt *rapid.T) {
		cut := rapid.Int64Range(1, writes-1).Draw(rt, "cut")
		dst, err := sqlite.Open(ctx, filepath.Join(dir, "cut.db"))
		if err != nil {
			rt.Fatal(err)
		}
		defer func() {
			dst.Close()
			for _, suffix := range []string{"", "-wal", "-shm"} {
				_ = os.Remove(filepath.Join(dir, "cut.db"+suffix))
			}
			_ = os.RemoveAll(filepath.Join(dir, "archive", "cut"))
		}()
		cctx, cancel := context.WithCancel(ctx)
		var left atomic.Int64
		left.Store(cut)
		if _, err := storecopy.Copy(cctx, src, cutStore{dst, &left, cancel}, storecopy.Options{Batch: 150}); err == nil {
			rt.Fatalf("the copy cut after %d of %d writes did not stop", cut, writes)
		}
		cancel()
		if _, err := storecopy.Copy(ctx, src, dst, storecopy.Options{Batch: 150}); err != nil {
			rt.Fatalf("resuming after %d writes: %v", cut, err)
		}
		if ms, err := storecopy.Verify(ctx, src, dst, nil); err != nil || len(ms) != 0 {
			rt.Fatalf("after a cut at write %d of %d and a resume: %v %v", cut, writes, ms, err)
		}
	})
}

// TestCopyRefusesUnstorableSource: a source written before strata's one
// definition of valid input may hold a NUL in a turn's name or in a
// conversation id, which PostgreSQL cannot store. The copy names every
// such record and writes nothing, to PostgreSQL (with STRATA_TEST_POSTGRES)
// and to SQLite alike, rather than failing half way on every run; once the
// records are gone from the source, it copies.
func TestCopyRefusesUnstorableSource(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := open(t, dir, "src.db")
	at := time.Date(2024, 1, 1, 9, 0, 0, 0, time.UTC)
	for _, conv := range []string{"good", "bad-name", "id\x00nul"} {
		if _, err := src.EnsureConversation(ctx, strata.Conversation{Namespace: "default", ID: conv, Policy: "chunks", Created: at}); err != nil {
			t.Fatal(err)
		}
		tr := strata.Turn{ExtID: "t1", Role: strata.RoleUser, Content: "hello", Time: at, Session: 1}
		if conv == "bad-name" {
			tr.Name = "J\x00n"
		}
		if _, err := src.AppendTurns(ctx, "default", conv, []strata.Turn{tr}); err != nil {
			t.Fatal(err)
		}
	}
	dsts := map[string]strata.Store{"sqlite": open(t, dir, "dst.db")}
	if dsn := os.Getenv("STRATA_TEST_POSTGRES"); dsn != "" {
		pg, drop, err := postgres.OpenScratch(ctx, dsn, "strata_copycheck")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { pg.Close(); drop() })
		dsts["postgres"] = pg
	}
	for name, dst := range dsts {
		_, err := storecopy.Copy(ctx, src, dst, storecopy.Options{})
		if strata.ErrorCode(err) != strata.EINVALID || !strings.Contains(err.Error(), "nothing was copied") ||
			!strings.Contains(err.Error(), `default/bad-name turn 1 (ext_id "t1"): name: contains a NUL`) ||
			!strings.Contains(err.Error(), `default/"id\x00nul": conversation id: contains a NUL`) {
			t.Fatalf("%s: copy of a source with a NUL: %v; want invalid naming both records", name, err)
		}
		if cs, err := dst.Conversations(ctx, "default"); err != nil || len(cs) != 0 {
			t.Fatalf("%s: a refused copy wrote %d conversations (%v)", name, len(cs), err)
		}
	}
	for _, conv := range []string{"bad-name", "id\x00nul"} {
		if _, err := src.DeleteConversation(ctx, "default", conv, "not storable", at); err != nil {
			t.Fatal(err)
		}
	}
	for name, dst := range dsts {
		rep, err := storecopy.Copy(ctx, src, dst, storecopy.Options{})
		if err != nil || len(rep.Conversations) != 1 || rep.Conversations[0].Turns != 1 {
			t.Fatalf("%s: copy once the records are gone: %+v, %v", name, rep, err)
		}
	}
}
