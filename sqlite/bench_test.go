package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/strata-memory/strata"
)

// The write benchmarks append b.N turns of about 270 bytes in batches of
// benchBatch, the way a bulk import does, and report turns/s. Run them
// with a fixed count so the rates are comparable, e.g.
//
//	go test -run x -bench . -benchtime 20000x ./sqlite/
//
// BenchmarkAppendTurns goes through Store.AppendTurns (encoding, dedup by
// ext_id, seq assignment, FTS, counters). BenchmarkBareInsertFTS and
// BenchmarkBareInsertNoFTS insert the same rows into the same schema with
// the same driver and transaction size and nothing else, with and without
// the FTS row: the floor AppendTurns is measured against.

// benchBatch is the number of turns per AppendTurns call or transaction.
const benchBatch = 5000

// benchWords is the vocabulary benchmark turns are drawn from.
var benchWords = func() []string {
	r := rand.New(rand.NewPCG(1, 2))
	const letters = "etaoinshrdlcumwfgypbvkjxqz"
	words := strings.Fields(`the be to of and a in that have I it for not on with he as you do at this
		but his by from they we say her she or an will my one all would there their what so up out if
		about who get which go me when make can like time no just him know take people into year your
		good some could them see other than then now look only come its over think also back after use
		two how our work first well way even new want because any these give day most us deploy server
		database query index memory summary context budget token model prompt release bug fix test`)
	for len(words) < 5000 {
		n := 3 + r.IntN(8)
		var b strings.Builder
		for range n {
			b.WriteByte(letters[min(r.IntN(len(letters)), r.IntN(len(letters)))])
		}
		words = append(words, b.String())
	}
	return words
}()

// benchTurns makes n turns of about 270 bytes of Zipf-distributed words,
// with distinct ext_ids starting at from.
func benchTurns(from, n int) []strata.Turn {
	r := rand.New(rand.NewPCG(uint64(from), 7))
	z := rand.NewZipf(r, 1.1, 2, uint64(len(benchWords)-1))
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	out := make([]strata.Turn, n)
	for i := range out {
		var b strings.Builder
		for b.Len() < 270 {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(benchWords[z.Uint64()])
		}
		b.WriteByte('.')
		role := strata.RoleUser
		if i%2 == 1 {
			role = strata.RoleAssistant
		}
		out[i] = strata.Turn{
			ExtID:   fmt.Sprintf("m%09d", from+i),
			Session: 1 + (from+i)/500,
			Role:    role,
			Content: b.String(),
			Time:    start.Add(time.Duration(from+i) * time.Second),
			Tokens:  60,
		}
	}
	return out
}

// benchStore opens a new store with one conversation for a benchmark.
func benchStore(b *testing.B) *Store {
	b.Helper()
	s, err := Open(context.Background(), filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	if _, err := s.EnsureConversation(context.Background(), strata.Conversation{Namespace: "ns", ID: "c"}); err != nil {
		b.Fatal(err)
	}
	return s
}

// runBatches calls write with consecutive batches of b.N turns, making
// each batch outside the timer, and reports turns/s.
func runBatches(b *testing.B, write func(turns []strata.Turn) error) {
	b.Helper()
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; {
		b.StopTimer()
		turns := benchTurns(done, min(benchBatch, b.N-done))
		b.StartTimer()
		if err := write(turns); err != nil {
			b.Fatal(err)
		}
		done += len(turns)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "turns/s")
}

func BenchmarkAppendTurns(b *testing.B) {
	s := benchStore(b)
	ctx := context.Background()
	runBatches(b, func(turns []strata.Turn) error {
		got, err := s.AppendTurns(ctx, "ns", "c", turns)
		if err == nil && len(got) != len(turns) {
			err = fmt.Errorf("appended %d of %d turns", len(got), len(turns))
		}
		return err
	})
}

func BenchmarkBareInsertFTS(b *testing.B)   { benchBare(b, true) }
func BenchmarkBareInsertNoFTS(b *testing.B) { benchBare(b, false) }

// benchBare inserts turns with a plain prepared INSERT per row (and one
// into turns_fts if fts) in one transaction per batch: no ext_id check, no
// encoding, no counters.
func benchBare(b *testing.B, fts bool) {
	s := benchStore(b)
	ctx := context.Background()
	var pk int64
	if err := s.w.QueryRow(`SELECT pk FROM conversations`).Scan(&pk); err != nil {
		b.Fatal(err)
	}
	sc := scope(pk, "ns")
	seq := int64(0)
	runBatches(b, func(turns []strata.Turn) error {
		tx, err := s.w.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		ins, err := tx.Prepare(`INSERT INTO turns (conversation, seq, ext_id, session, session_label, role, name,
			content, time, model, tool_calls, tool_results, tokens, importance, tags, metadata)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer ins.Close()
		var fi *sql.Stmt
		if fts {
			if fi, err = tx.Prepare(`INSERT INTO turns_fts (rowid, text, scope) VALUES (?, ?, ?)`); err != nil {
				return err
			}
			defer fi.Close()
		}
		for i := range turns {
			t := &turns[i]
			seq++
			res, err := ins.Exec(pk, seq, t.ExtID, t.Session, t.SessionLabel, string(t.Role), t.Name,
				t.Content, t.Time.UnixNano(), t.Model, nil, nil, t.Tokens, t.Importance, nil, nil)
			if err != nil {
				return err
			}
			if fts {
				id, _ := res.LastInsertId()
				if _, err := fi.Exec(id, t.Content, sc); err != nil {
					return err
				}
			}
		}
		return tx.Commit()
	})
}

// BenchmarkSearch measures a 3-word OR query over 20,000 turns, namespace
// wide and within the conversation.
func BenchmarkSearch(b *testing.B) {
	s := benchStore(b)
	ctx := context.Background()
	for from := 0; from < 20000; from += benchBatch {
		if _, err := s.AppendTurns(ctx, "ns", "c", benchTurns(from, benchBatch)); err != nil {
			b.Fatal(err)
		}
	}
	for _, conv := range []string{"", "c"} {
		b.Run("conversation="+conv, func(b *testing.B) {
			for b.Loop() {
				if _, err := s.Search(ctx, strata.SearchQuery{Namespace: "ns", Conversation: conv,
					Text: "deploy the database index", K: 10}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkExpandCold reads the 100 turns under a macro node whose ten
// micro spans are cold (archived), the way 'strata expand' does, from a
// conversation of 2,000 turns in one day's segment (the worst case: a
// read verifies the whole segment). It reports the median (p50-ms) as
// well as the mean.
func BenchmarkExpandCold(b *testing.B) {
	benchExpand(b, strata.TierCold)
}

// BenchmarkExpandHot is the baseline: the same turns from their rows.
func BenchmarkExpandHot(b *testing.B) {
	benchExpand(b, strata.TierHot)
}

// BenchmarkExpandWarm is the same over warm spans (compressed CTF blocks).
func BenchmarkExpandWarm(b *testing.B) {
	benchExpand(b, strata.TierWarm)
}

func benchExpand(b *testing.B, tier strata.Tier) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(b.TempDir(), "x.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if _, err := s.EnsureConversation(ctx, strata.Conversation{Namespace: "ns", ID: "c", Policy: "chunks"}); err != nil {
		b.Fatal(err)
	}
	turns := benchTurns(0, 2000)
	for i := range turns {
		turns[i].Time = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Second)
	}
	if _, err := s.AppendTurns(ctx, "ns", "c", turns); err != nil {
		b.Fatal(err)
	}
	var nodes []strata.Node
	var ids []string
	for first := int64(1); first <= 2000; first += 10 {
		id := strata.NodeID("ns", "c", 1, first, first+9)
		nodes = append(nodes, strata.Node{ID: id, Level: 1, FirstSeq: first, LastSeq: first + 9, Summary: "s"})
		ids = append(ids, id)
	}
	if err := s.PutNodes(ctx, "ns", "c", nodes); err != nil {
		b.Fatal(err)
	}
	if tier != strata.TierHot {
		if _, err := s.Demote(ctx, "ns", "c", ids, tier, time.Now()); err != nil {
			b.Fatal(err)
		}
	}
	durs := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		from := int64(1 + (i%20)*100)
		t0 := time.Now()
		got, err := s.Turns(ctx, strata.TurnFilter{Namespace: "ns", Conversation: "c", FromSeq: from, ToSeq: from + 99})
		durs = append(durs, time.Since(t0))
		if err != nil || len(got) != 100 {
			b.Fatalf("%d turns, %v", len(got), err)
		}
	}
	b.StopTimer()
	sort.Slice(durs, func(i, j int) bool { return durs[i] < durs[j] })
	b.ReportMetric(float64(durs[len(durs)/2])/1e6, "p50-ms")
}
