package sqlite_test

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/sqlite"
	"github.com/strata-memory/strata/storetest"
)

// openAt opens the store at path, closed when t ends.
func openAt(t *testing.T, path string) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// openTemp opens a store in a new temporary directory.
func openTemp(t *testing.T) *sqlite.Store {
	t.Helper()
	return openAt(t, filepath.Join(t.TempDir(), "t.db"))
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) strata.Store { return openNew(t) })
}

// TestConcurrentRollups appends through two handles on one file, as two
// processes would.
func TestConcurrentRollups(t *testing.T) {
	storetest.RunConcurrentRollups(t, func(t *testing.T) (strata.Store, strata.Store, func()) {
		path := filepath.Join(t.TempDir(), "t.db")
		newStoreFile(t, path)
		var two [2]*sqlite.Store
		for i := range two {
			s, err := sqlite.Open(t.Context(), path)
			if err != nil {
				t.Fatalf("Open(%s): %v", path, err)
			}
			two[i] = s
		}
		return two[0], two[1], func() { two[0].Close(); two[1].Close() }
	})
}

// rawDB opens the file at path with database/sql directly, bypassing the
// store, for inspecting and tampering with it.
func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestWAL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	openAt(t, path)
	var mode string
	if err := rawDB(t, path).QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if mode != "wal" {
		t.Errorf("journal_mode = %q, want wal", mode)
	}
}

func TestCreatesDirectory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b c", "q?x#y%z", "t.db")
	s := openAt(t, path)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("Open did not create %s: %v", path, err)
	}
	if s.Path() != path {
		t.Errorf("Path() = %q, want %q", s.Path(), path)
	}
}

func TestOpenInvalid(t *testing.T) {
	for _, p := range []string{"", ":memory:", "file:x.db?mode=memory"} {
		if _, err := sqlite.Open(t.Context(), p); strata.ErrorCode(err) != strata.EINVALID {
			t.Errorf("Open(%q) = %v, want an EINVALID error", p, err)
		}
	}
}

// schemaState returns the versions recorded in schema_migrations and PRAGMA
// user_version.
func schemaState(t *testing.T, path string) (versions []int, userVersion int) {
	t.Helper()
	db := rawDB(t, path)
	rows, err := db.Query(`SELECT version FROM schema_migrations ORDER BY version`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var v int
		rows.Scan(&v)
		versions = append(versions, v)
	}
	if err := db.QueryRow(`PRAGMA user_version`).Scan(&userVersion); err != nil {
		t.Fatal(err)
	}
	return versions, userVersion
}

func TestMigrationsIdempotent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	for i := range 3 {
		s, err := sqlite.Open(t.Context(), path)
		if err != nil {
			t.Fatalf("Open #%d: %v", i+1, err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		versions, uv := schemaState(t, path)
		var want []int
		for v := 1; v <= sqlite.SchemaVersion(); v++ {
			want = append(want, v)
		}
		if fmt.Sprint(versions) != fmt.Sprint(want) || uv != sqlite.SchemaVersion() {
			t.Errorf("after open #%d: schema_migrations %v, user_version %d; want %v and %d",
				i+1, versions, uv, want, sqlite.SchemaVersion())
		}
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	future := sqlite.SchemaVersion() + 1
	if _, err := rawDB(t, path).Exec(`INSERT INTO schema_migrations (version, name, applied) VALUES (?, 'from the future', 0)`, future); err != nil {
		t.Fatal(err)
	}
	_, err = sqlite.Open(t.Context(), path)
	if err == nil || strata.ErrorCode(err) != strata.ECONFLICT || !strings.Contains(err.Error(), fmt.Sprint(future)) {
		t.Errorf("Open of a file with schema version %d = %v, want an ECONFLICT error naming the version", future, err)
	}
}

func TestReopenKeepsData(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "t.db")
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.EnsureConversation(ctx, strata.Conversation{Namespace: "ns", ID: "c", Policy: "chunks"}); err != nil {
		t.Fatal(err)
	}
	when := time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC)
	if _, err := s.AppendTurns(ctx, "ns", "c", []strata.Turn{
		{ExtID: "a", Role: strata.RoleUser, Content: "the walrus migrates north", Time: when, Session: 1, Tokens: 5},
		{ExtID: "b", Role: strata.RoleAssistant, Content: "noted", Time: when.Add(time.Second), Session: 2, Tokens: 1},
	}); err != nil {
		t.Fatal(err)
	}
	node := strata.Node{ID: strata.NodeID("ns", "c", 1, 1, 2), Level: 1, FirstSeq: 1, LastSeq: 2, Summary: "walrus talk"}
	if err := s.PutNodes(ctx, "ns", "c", []strata.Node{node}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = openAt(t, path)
	c, err := s.Conversation(ctx, "ns", "c")
	if err != nil || c.Turns != 2 || c.Sessions != 2 || c.Policy != "chunks" || !c.First.Equal(when) {
		t.Errorf("reopened Conversation = %+v, %v", c, err)
	}
	turns, err := s.Turns(ctx, strata.TurnFilter{Namespace: "ns", Conversation: "c"})
	if err != nil || len(turns) != 2 || turns[0].Content != "the walrus migrates north" || !turns[0].Time.Equal(when) {
		t.Errorf("reopened Turns = %+v, %v", turns, err)
	}
	hits, err := s.Search(ctx, strata.SearchQuery{Namespace: "ns", Text: "walrus", K: 5})
	if err != nil || len(hits) != 2 {
		t.Errorf("reopened Search(walrus) = %d hits, %v; want the turn and the summary", len(hits), err)
	}
	// Appending continues the sequence, and dedup still sees old ext_ids.
	got, err := s.AppendTurns(ctx, "ns", "c", []strata.Turn{
		{ExtID: "a", Role: strata.RoleUser, Content: "dup"},
		{ExtID: "c", Role: strata.RoleUser, Content: "third"},
	})
	if err != nil || len(got) != 1 || got[0].Seq != 3 {
		t.Errorf("AppendTurns after reopen = %+v, %v; want only c with seq 3", got, err)
	}
}

func TestBigTurn(t *testing.T) {
	ctx := t.Context()
	s := openTemp(t)
	if _, err := s.EnsureConversation(ctx, strata.Conversation{Namespace: "ns", ID: "c"}); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for i := 0; b.Len() < bigTurnSize; i++ {
		fmt.Fprintf(&b, "Paragraph %d — ünïcode, 数字, tabs\tand newlines.\n", i)
	}
	b.WriteString("The end: archaeopteryx.")
	big := b.String()
	if _, err := s.AppendTurns(ctx, "ns", "c", []strata.Turn{{ExtID: "big", Role: strata.RoleUser, Content: big, Tokens: 1}}); err != nil {
		t.Fatal(err)
	}
	turns, err := s.Turns(ctx, strata.TurnFilter{Namespace: "ns", Conversation: "c"})
	if err != nil || len(turns) != 1 || turns[0].Content != big {
		t.Fatalf("the %d-byte turn did not come back whole (err %v)", len(big), err)
	}
	for _, q := range []string{"archaeopteryx", "数字"} {
		hits, err := s.Search(ctx, strata.SearchQuery{Namespace: "ns", Text: q, K: 1})
		if err != nil || len(hits) != 1 {
			t.Errorf("Search(%q) in the big turn = %d hits, %v", q, len(hits), err)
		}
	}
	st, err := s.Stats(ctx, "ns")
	if err != nil {
		t.Fatal(err)
	}
	if st.ContentBytes != int64(len(big)) || st.Bytes < int64(len(big)) || st.Location != s.Path() {
		t.Errorf("Stats = content %d bytes, %d on disk at %q; want %d, at least that, at %q",
			st.ContentBytes, st.Bytes, st.Location, len(big), s.Path())
	}
}

func TestUnspacedScripts(t *testing.T) {
	ctx := t.Context()
	s := openTemp(t)
	if _, err := s.EnsureConversation(ctx, strata.Conversation{Namespace: "ns", ID: "c"}); err != nil {
		t.Fatal(err)
	}
	texts := []string{
		"我们明天去北京开会。",
		"東京の天気は晴れです",
		"我的猫很可爱",
		"สวัสดีครับ วันนี้อากาศดีมาก",
		"iPhone12を買った",
		"नमस्ते दुनिया",
		"Le café était fermé",
		"コンピューターを再起動してください",
	}
	var turns []strata.Turn
	for i, tx := range texts {
		turns = append(turns, strata.Turn{ExtID: fmt.Sprint(i), Role: strata.RoleUser, Content: tx})
	}
	if _, err := s.AppendTurns(ctx, "ns", "c", turns); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		q    string
		want int // index in texts, -1 for no hit
	}{
		{"北京", 0}, {"去北京", 0}, {"南京", -1}, {"天気", 1}, {"東京の天気", 1}, {"猫", 2},
		{"อากาศ", 3}, {"สวัสดี", 3}, {"iphone12", 4}, {"買った", 4},
		{"दुनिया", 5}, {"नमस्ते", 5}, {"cafe", 6}, {"ETAIT", 6}, {"コンピューター", 7}, {"再起動", 7},
	} {
		hits, err := s.Search(ctx, strata.SearchQuery{Namespace: "ns", Text: tc.q, K: 3})
		if err != nil {
			t.Errorf("Search(%q): %v", tc.q, err)
			continue
		}
		switch {
		case tc.want < 0 && len(hits) > 0:
			t.Errorf("Search(%q) found %q, want nothing", tc.q, hits[0].Turn.Content)
		case tc.want >= 0 && (len(hits) == 0 || hits[0].Turn.Content != texts[tc.want]):
			var got []string
			for _, h := range hits {
				got = append(got, h.Turn.Content)
			}
			t.Errorf("Search(%q) = %q, want %q first", tc.q, got, texts[tc.want])
		}
	}
}

// TestTwoStoresOneFile appends from two Stores (two connection pools) on the
// same file at once: the second writer waits for the first instead of
// failing with SQLITE_BUSY, and nothing is lost.
func TestTwoStoresOneFile(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "t.db")
	stores := []*sqlite.Store{openAt(t, path), openAt(t, path)}
	if _, err := stores[0].EnsureConversation(ctx, strata.Conversation{Namespace: "ns", ID: "c"}); err != nil {
		t.Fatal(err)
	}
	const batches, per = 10, 20
	var wg sync.WaitGroup
	errs := make(chan error, 2*batches)
	for i, s := range stores {
		wg.Go(func() {
			for b := range batches {
				turns := make([]strata.Turn, per)
				for k := range turns {
					turns[k] = strata.Turn{ExtID: fmt.Sprintf("s%d-%d-%d", i, b, k), Role: strata.RoleUser, Content: "x"}
				}
				if _, err := s.AppendTurns(ctx, "ns", "c", turns); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("AppendTurns: %v", err)
	}
	c, err := stores[1].Conversation(ctx, "ns", "c")
	if err != nil || c.Turns != 2*batches*per {
		t.Errorf("Conversation = %d turns, %v; want %d", c.Turns, err, 2*batches*per)
	}
}

// TestDaySegments: a store whose archive holds the day segments of earlier
// versions reads them, and writes month segments beside them.
func TestDaySegments(t *testing.T) {
	storetest.RunDaySegments(t, func(t *testing.T) (strata.Store, storetest.Legacy) {
		s := openTemp(t)
		return s, sqlite.DaySegments(s)
	})
}
