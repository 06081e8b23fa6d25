package sqlite_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/extractive"
	"github.com/strata-memory/strata/internal/race"
	"github.com/strata-memory/strata/internal/synth"
	"github.com/strata-memory/strata/sqlite"
	"github.com/strata-memory/strata/storetest"
)

// TestConformanceSummaryIndex runs the store contract with every
// conversation's summaries ranked by the in-memory index.
func TestConformanceSummaryIndex(t *testing.T) {
	if !runVariants {
		t.Skip("the suite runs once in TestConformance (and the variants without the race detector)")
	}
	defer sqlite.SetSummaryIndexMinTurns(0)()
	storetest.Run(t, func(t *testing.T) strata.Store { return openTemp(t) })
}

// summaryQueries returns queries made of words of the turns the store
// holds (and their other forms, for the stemmer), with some that match
// nothing; none was chosen for its result.
func summaryQueries(turns []strata.Turn, n int) []string {
	var words []string
	seen := map[string]bool{}
	for _, t := range turns[:200] {
		for _, w := range strings.Fields(strings.ToLower(t.Text())) {
			w = strings.Trim(w, ".,;:!?'\"()")
			if len(w) >= 3 && !seen[w] {
				seen[w] = true
				words = append(words, w)
			}
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	qs := []string{"zyxwvut", "deploying deployed deploy", "the of and"}
	for len(qs) < n {
		k := 1 + r.IntN(4)
		var q []string
		for range k {
			w := words[r.IntN(len(words))]
			switch r.IntN(4) {
			case 0:
				w += "ing"
			case 1:
				w += "s"
			}
			q = append(q, w)
		}
		qs = append(qs, strings.Join(q, " "))
	}
	return qs
}

// sameHits fails t unless the two rankings agree: the same scores (to
// rounding) in the same order, and the same summaries or turns, read
// alike, among the hits of each score (hits whose scores differ only by
// rounding may come in either order), except those tied with the last
// (which of several tied hits a limit keeps is FTS5's choice).
func sameHits(t *testing.T, what, query string, got, want []strata.Hit) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s, %q: %d hits in memory, %d from FTS5", what, query, len(got), len(want))
	}
	if len(want) == 0 {
		return
	}
	name := func(h strata.Hit) (string, string) {
		if h.Turn != nil {
			return fmt.Sprintf("turn %d", h.Turn.Seq), h.Turn.Text()
		}
		return h.Node.ID, h.Node.Summary
	}
	near := func(x, y float64) bool { return math.Abs(x-y) <= 1e-9*math.Abs(y) }
	last := want[len(want)-1].Score
	texts := map[string]string{}
	for i := range want {
		if !near(got[i].Score, want[i].Score) {
			t.Fatalf("%s, %q: hit %d scores %v in memory, %v from FTS5", what, query, i, got[i].Score, want[i].Score)
		}
		n, text := name(want[i])
		texts[n] = text
	}
	for i := 0; i < len(want); {
		j := i + 1
		for j < len(want) && near(want[j].Score, want[i].Score) {
			j++
		}
		if near(want[i].Score, last) {
			break
		}
		group := map[string]bool{}
		for _, h := range want[i:j] {
			n, _ := name(h)
			group[n] = true
		}
		for k, h := range got[i:j] {
			n, text := name(h)
			if !group[n] {
				wn, _ := name(want[i+k])
				t.Fatalf("%s, %q: hit %d is %s in memory, %s from FTS5", what, query, i+k, n, wn)
			}
			if text != texts[n] {
				t.Fatalf("%s, %q: %s read differently", what, query, n)
			}
		}
		i = j
	}
}

// searchesAgree runs sq on mem and on other and fails t unless their hits
// agree (sameHits).
func searchesAgree(t *testing.T, what string, mem, other *sqlite.Store, sq strata.SearchQuery) {
	t.Helper()
	got, err := mem.Search(t.Context(), sq)
	if err != nil {
		t.Fatal(err)
	}
	want, err := other.Search(t.Context(), sq)
	if err != nil {
		t.Fatal(err)
	}
	sameHits(t, what, sq.Text, got, want)
}

// indexedAndPlain returns a store holding importHistory's conversation
// with in-memory indexes, and another on the same file without.
func indexedAndPlain(t *testing.T) (path string, mem, plain *sqlite.Store) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "s.db")
	mem = openAt(t, path)
	plain, err := sqlite.Open(t.Context(), path, sqlite.WithSummaryIndex(false))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { plain.Close() })
	importHistory(t, mem)
	return path, mem, plain
}

// rankQueries is how many queries the tests that compare the in-memory
// indexes with FTS5 ask at each stage.
const rankQueries = 60

// TestSummaryIndexRanksAsFTS5: the in-memory index ranks summaries as
// FTS5 does, and stays in step with writes made through another store
// on the same file (another process), with a Vacuum that compresses every
// text, and with a log that no longer holds what it missed.
func TestSummaryIndexRanksAsFTS5(t *testing.T) {
	// Ranking, not concurrency: ingesting 3000 turns takes minutes under
	// the detector, and TestSummaryIndexConcurrent checks the indexes
	// under concurrent writers and readers there.
	race.SkipOneGoroutine(t)
	defer sqlite.SetSummaryIndexMinTurns(0)()
	ctx := t.Context()
	path, mem, plain := indexedAndPlain(t)
	gen := synth.New(11) // importHistory's turns, then more of the same conversation
	queries := summaryQueries(gen.Turns(3000), rankQueries)
	compare := func(stage string, other *sqlite.Store) {
		t.Helper()
		for _, q := range queries {
			for _, k := range []int{1, 10, 48} {
				sq := strata.SearchQuery{Namespace: strata.DefaultNamespace, Conversation: "c", Text: q, K: k, Kind: strata.KindSummary}
				searchesAgree(t, fmt.Sprintf("%s, k %d", stage, k), mem, other, sq)
			}
		}
	}
	check := func(stage string) { t.Helper(); compare(stage, plain) }
	check("after the import")

	// Another store on the file writes new summaries.
	m2, err := strata.New(strata.Config{Store: plain, Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New(),
		Tiers: &strata.TierPolicy{Off: true}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m2.Ingest(ctx, strata.Batch{Conversation: "c", Turns: gen.Turns(1200)}); err != nil {
		t.Fatal(err)
	}
	check("after writes by another store")

	// Vacuum rewrites every text compressed.
	if err := plain.Vacuum(ctx); err != nil {
		t.Fatal(err)
	}
	check("after a vacuum")

	// The log keeps only its newest entries: a reader that fell behind them
	// loads the conversation again.
	if _, err := m2.Ingest(ctx, strata.Batch{Conversation: "c", Turns: gen.Turns(400)}); err != nil {
		t.Fatal(err)
	}
	if _, err := rawDB(t, path).Exec(`DELETE FROM node_fts_log WHERE seq < (SELECT max(seq) FROM node_fts_log)`); err != nil {
		t.Fatal(err)
	}
	check("after the log was trimmed")

	// Emptied by hand, the log goes on numbering where it was.
	if _, err := m2.Ingest(ctx, strata.Batch{Conversation: "c", Turns: gen.Turns(300)}); err != nil {
		t.Fatal(err)
	}
	if _, err := rawDB(t, path).Exec(`DELETE FROM node_fts_log`); err != nil {
		t.Fatal(err)
	}
	if _, err := m2.Ingest(ctx, strata.Batch{Conversation: "c", Turns: gen.Turns(100)}); err != nil {
		t.Fatal(err)
	}
	check("after the log was emptied")

	// With a second conversation in the file FTS5 counts words over both:
	// so does the index, from FTS5's records; and the index kept in step
	// agrees with one loaded afresh by another process.
	if _, err := m2.Ingest(ctx, strata.Batch{Conversation: "d", Policy: "chunks", Turns: synth.New(12).Turns(300)}); err != nil {
		t.Fatal(err)
	}
	if _, err := m2.Ingest(ctx, strata.Batch{Conversation: "c", Turns: gen.Turns(200)}); err != nil {
		t.Fatal(err)
	}
	check("with a second conversation")
	compare("with a second conversation, loaded afresh", openAt(t, path))

	// Removing the conversation removes its summaries from the index.
	if _, err := m2.DeleteConversation(ctx, "c", "test"); err != nil {
		t.Fatal(err)
	}
	for _, st := range []*sqlite.Store{mem, plain} {
		_, err := st.Search(ctx, strata.SearchQuery{Namespace: strata.DefaultNamespace, Conversation: "c", Text: queries[5], Kind: strata.KindSummary})
		if strata.ErrorCode(err) != strata.ENOTFOUND {
			t.Fatalf("search of a deleted conversation: %v", err)
		}
	}
}

// TestSummaryIndexConcurrent: searches and writes at once on one store
// (run under -race); afterwards the summary and turn indexes agree with
// FTS5.
func TestSummaryIndexConcurrent(t *testing.T) {
	defer sqlite.SetSummaryIndexMinTurns(0)()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "s.db")
	st := openAt(t, path)
	m, err := strata.New(strata.Config{Store: st, Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New(),
		Tiers: &strata.TierPolicy{Off: true}})
	if err != nil {
		t.Fatal(err)
	}
	gen := synth.New(21)
	first := gen.Turns(1000)
	if _, err := m.Ingest(ctx, strata.Batch{Conversation: "c", Policy: "chunks", Turns: first}); err != nil {
		t.Fatal(err)
	}
	queries := summaryQueries(first, 20)
	done := make(chan struct{})
	errs := make(chan error, 4)
	for w := range 4 {
		go func() {
			for i := 0; ; i++ {
				select {
				case <-done:
					errs <- nil
					return
				default:
				}
				q := strata.SearchQuery{Namespace: strata.DefaultNamespace, Conversation: "c", Text: queries[(i+w)%len(queries)], K: 20,
					FromSeq: int64(500 * (w % 2))} // both kinds; the turns of a window in two of the four
				if _, err := st.Search(ctx, q); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for range 10 {
		if _, err := m.Ingest(ctx, strata.Batch{Conversation: "c", Turns: gen.Turns(100)}); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	plain, err := sqlite.Open(ctx, path, sqlite.WithSummaryIndex(false))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	for _, q := range queries {
		searchesAgree(t, "after concurrent writes", st, plain,
			strata.SearchQuery{Namespace: strata.DefaultNamespace, Conversation: "c", Text: q, K: 48, Kind: strata.KindSummary})
		searchesAgree(t, "after concurrent writes", st, plain,
			strata.SearchQuery{Namespace: strata.DefaultNamespace, Conversation: "c", Text: q, K: 24, Kind: strata.KindTurn, FromSeq: 500})
	}
}

// TestTurnIndexRanksAsFTS5: a search of the newest turns (FromSeq) ranked
// by the in-memory window index gives FTS5's hits and scores, through
// appends by another store, tier moves that take turns out of the index
// or into blocks, a log trimmed past what the index missed, and windows
// that start before the index or far after it.
func TestTurnIndexRanksAsFTS5(t *testing.T) {
	// Ranking, not concurrency: ingesting 3000 turns takes minutes under
	// the detector, and TestSummaryIndexConcurrent checks the indexes
	// under concurrent writers and readers there.
	race.SkipOneGoroutine(t)
	defer sqlite.SetSummaryIndexMinTurns(0)()
	ctx := t.Context()
	path, mem, plain := indexedAndPlain(t)
	gen := synth.New(11)
	queries := summaryQueries(gen.Turns(3000), rankQueries*2/3)
	total := int64(3000)
	check := func(stage string, windows ...int64) {
		t.Helper()
		for _, w := range windows {
			from := max(total-w+1, 2)
			for _, q := range queries {
				for _, k := range []int{1, 24} {
					sq := strata.SearchQuery{Namespace: strata.DefaultNamespace, Conversation: "c", Text: q, K: k,
						Kind: strata.KindTurn, FromSeq: from}
					searchesAgree(t, fmt.Sprintf("%s, from %d, k %d", stage, from, k), mem, plain, sq)
				}
			}
		}
	}
	check("after the import", 1000, 400)

	m2, err := strata.New(strata.Config{Store: plain, Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New(),
		Tiers: &strata.TierPolicy{HotChunks: 20, WarmMaxTurns: 600}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m2.Ingest(ctx, strata.Batch{Conversation: "c", Turns: gen.Turns(800)}); err != nil {
		t.Fatal(err)
	}
	total += 800
	check("after appends by another store", 1000, 3000)

	if _, err := m2.Tier(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	check("after a tier pass", 1000, 2500)

	if _, err := m2.Ingest(ctx, strata.Batch{Conversation: "c", Turns: gen.Turns(300)}); err != nil {
		t.Fatal(err)
	}
	total += 300
	if _, err := m2.Tier(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	if _, err := rawDB(t, path).Exec(`DELETE FROM turn_fts_log WHERE seq < (SELECT max(seq) FROM turn_fts_log)`); err != nil {
		t.Fatal(err)
	}
	check("after the log was trimmed", 1000, 200)

	// The window moves on by more than half of what the index loaded.
	if _, err := m2.Ingest(ctx, strata.Batch{Conversation: "c", Turns: gen.Turns(700)}); err != nil {
		t.Fatal(err)
	}
	total += 700
	check("after the window moved on", 1000)

	// A second conversation: its turns count in FTS5's statistics, those
	// before the window (counted once, again after they change) and those
	// after it (counted on each query).
	other := synth.New(31)
	if _, err := m2.Ingest(ctx, strata.Batch{Conversation: "d", Policy: "chunks", Turns: other.Turns(1200)}); err != nil {
		t.Fatal(err)
	}
	check("with a second conversation", 1000)
	if _, err := m2.Ingest(ctx, strata.Batch{Conversation: "c", Turns: gen.Turns(1500)}); err != nil {
		t.Fatal(err)
	}
	total += 1500
	if _, err := m2.Ingest(ctx, strata.Batch{Conversation: "d", Turns: other.Turns(300)}); err != nil {
		t.Fatal(err)
	}
	check("with a second conversation before and after the window", 1000, 300)
	// Appending to "d" moves more of its older turns cold (their rows are
	// before the window's: the counts kept must be asked again).
	if _, err := m2.Ingest(ctx, strata.Batch{Conversation: "d", Turns: other.Turns(300)}); err != nil {
		t.Fatal(err)
	}
	check("after the second conversation's turns went cold", 300, 1000) // 300 first: the index it has, not a new one
}
