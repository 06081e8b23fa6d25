package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/postgres"
)

// queryInt returns the single integer the query at dsn answers.
func queryInt(t *testing.T, dsn, sql string, args ...any) int64 {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int64
	if err := conn.QueryRow(ctx, sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// richTurns returns n turns that between them fill every column the
// checksum covers, some left empty: turn 3 has no ext_id, turn 4 no time
// and no content.
func richTurns(prefix string, n int) []strata.Turn {
	in := make([]strata.Turn, n)
	for i := range in {
		in[i] = strata.Turn{ExtID: fmt.Sprintf("%s%d", prefix, i+1), Session: 1 + i/4, SessionLabel: fmt.Sprintf("day %d", 1+i/4),
			Role: strata.RoleUser, Name: "Bo", Content: fmt.Sprintf("turn %d about the otter", i+1),
			Time: t0.Add(time.Duration(i) * time.Minute), Model: "m", Tokens: 7 + i,
			Tags: []string{"river"}, Metadata: map[string]any{"k": "v"}}
		if i%2 == 1 {
			in[i].Role, in[i].Name = strata.RoleAssistant, ""
			in[i].ToolCalls = []strata.ToolCall{{ID: "c1", Name: "look", Arguments: json.RawMessage(`{"at": "weir"}`)}}
			in[i].ToolResults = []strata.ToolResult{{CallID: "c1", Content: "an otter"}}
		}
	}
	if n >= 4 {
		in[2].ExtID = ""
		in[3].Time, in[3].Content = time.Time{}, ""
	}
	return in
}

// wantChecksumError fails unless err is a checksum error naming the turn
// and the conversation.
func wantChecksumError(t *testing.T, what string, err error, conv string, seq int64) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), "checksum") || !strings.Contains(err.Error(), fmt.Sprintf("turn %d:", seq)) ||
		!strings.Contains(err.Error(), fmt.Sprintf("%q", conv)) {
		t.Fatalf("%s: %v; want a checksum error naming turn %d of %q", what, err, seq, conv)
	}
}

// TestHotRowChecksum: a value changed in a hot turn's row behind the
// store's back (with SQL) is an error that names the conversation and
// the turn on every read of the row, where it was served as it read;
// each column the checksum covers is tried, and a pin, which changes the
// importance only, leaves the row readable.
func TestHotRowChecksum(t *testing.T) {
	ctx := context.Background()
	dsn := newSchema(t, testDSN(t))
	s := openAt(t, dsn)
	if _, err := s.EnsureConversation(ctx, strata.Conversation{Namespace: "ns", ID: "c"}); err != nil {
		t.Fatal(err)
	}
	in, err := s.AppendTurns(ctx, "ns", "c", richTurns("c", 12))
	if err != nil {
		t.Fatal(err)
	}
	if n := queryInt(t, dsn, `SELECT count(*) FROM turns WHERE crc IS NULL`); n != 0 {
		t.Fatalf("%d appended rows have no checksum", n)
	}
	all := strata.TurnFilter{Namespace: "ns", Conversation: "c"}
	got, err := s.Turns(ctx, all)
	if err != nil || !reflect.DeepEqual(got, in) {
		t.Fatalf("Turns: %v; want the appended turns back", err)
	}

	// A pin and an unpin change the importance, which the checksum leaves
	// out: the row reads as before.
	for _, imp := range []float64{0.9, 0} {
		if _, err := s.SetImportance(ctx, "ns", "c", 5, imp); err != nil {
			t.Fatalf("SetImportance(%v): %v", imp, err)
		}
		if got, err := s.Turns(ctx, all); err != nil || got[4].Importance != imp {
			t.Fatalf("Turns after setting the importance of turn 5 to %v: %v", imp, err)
		}
	}

	exec(t, dsn, `UPDATE turns SET content = convert_to(replace(convert_from(content, 'UTF8'), 'otter', 'otteR'), 'UTF8') WHERE seq = 7`)
	_, err = s.Turns(ctx, all)
	wantChecksumError(t, "Turns", err, "c", 7)
	_, err = s.Turns(ctx, strata.TurnFilter{Namespace: "ns", Conversation: "c", Seqs: []int64{7}})
	wantChecksumError(t, "Turns of the one turn", err, "c", 7)
	_, err = s.Search(ctx, strata.SearchQuery{Namespace: "ns", Conversation: "c", Text: "otter", K: 50})
	wantChecksumError(t, "Search", err, "c", 7)
	_, err = s.Search(ctx, strata.SearchQuery{Namespace: "ns", Text: "otter", K: 50})
	wantChecksumError(t, "Search of the namespace", err, "c", 7)
	_, err = s.SetImportance(ctx, "ns", "c", 7, 0.9)
	wantChecksumError(t, "SetImportance", err, "c", 7)
	_, err = s.Unembedded(ctx, strata.EmbedFilter{Namespace: "ns", Conversation: "c", Space: strata.EmbedSpace{Model: "m"}})
	wantChecksumError(t, "Unembedded", err, "c", 7)
	// The turns around it still read.
	if got, err := s.Turns(ctx, strata.TurnFilter{Namespace: "ns", Conversation: "c", ToSeq: 6}); err != nil || len(got) != 6 {
		t.Fatalf("Turns 1-6: %d, %v", len(got), err)
	}

	// Every column of the checksum, each in a conversation of its own;
	// turn 3 has no ext_id, turn 4 no time and empty content.
	for i, change := range []struct {
		seq int64
		set string
	}{
		{2, "seq = 100"}, {2, "ext_id = 'x'"}, {2, "ext_id = NULL"}, {3, "ext_id = 'x'"}, {2, "session = 9"},
		{2, "session_label = 'x'"}, {2, "role = 'user'"}, {1, "name = 'Al'"}, {2, "content = content || '\\x00'::bytea"},
		{2, "content = NULL"}, {4, "content = '\\x20'::bytea"}, {2, "time = time + 1"}, {2, "time = NULL"},
		{4, "time = 0"}, {2, "model = ''"}, {2, "tool_calls = '[]'"}, {1, "tool_calls = '[]'"},
		{2, "tool_results = NULL"}, {2, "tokens = tokens + 1"}, {2, "tags = NULL"}, {2, `metadata = '{"k": "w"}'`},
	} {
		conv := fmt.Sprintf("c%d", i)
		if _, err := s.EnsureConversation(ctx, strata.Conversation{Namespace: "ns", ID: conv}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.AppendTurns(ctx, "ns", conv, richTurns(conv, 4)); err != nil {
			t.Fatal(err)
		}
		seq := change.seq
		if strings.HasPrefix(change.set, "seq =") {
			// The turn's index rows refer to its seq.
			exec(t, dsn, `DELETE FROM turn_index WHERE seq = $1 AND conversation = (SELECT pk FROM conversations WHERE id = $2)`,
				change.seq, conv)
			seq = 100
		}
		exec(t, dsn, `UPDATE turns SET `+change.set+` WHERE seq = $1 AND conversation = (SELECT pk FROM conversations WHERE id = $2)`,
			change.seq, conv)
		_, err := s.Turns(ctx, strata.TurnFilter{Namespace: "ns", Conversation: conv})
		wantChecksumError(t, change.set, err, conv, seq)
	}
}

// TestHotRowChecksumTiers: a row that gives its content to a warm or
// cold span drops its checksum, and one that takes it back (a pin of a
// stub, ReplaceNodes, ResetPyramid) gets it again, which reads check; a
// pinned row that stays whole keeps its own.
func TestHotRowChecksumTiers(t *testing.T) {
	ctx := context.Background()
	dsn := newSchema(t, testDSN(t))
	s := openAt(t, dsn)
	ids, want := spans(t, s, "ns", "c")
	if _, err := s.Demote(ctx, "ns", "c", ids[:2], strata.TierWarm, day0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Demote(ctx, "ns", "c", ids[1:4], strata.TierCold, day0); err != nil {
		t.Fatal(err)
	}
	sums := func() (stubs, summed, hot int64) {
		return queryInt(t, dsn, `SELECT count(*) FROM turns WHERE tier <> 0 AND crc IS NOT NULL`),
			queryInt(t, dsn, `SELECT count(*) FROM turns WHERE tier = 0 AND crc IS NOT NULL`),
			queryInt(t, dsn, `SELECT count(*) FROM turns WHERE tier = 0`)
	}
	// 8 warm turns (one pinned, which stays whole and hot), 24 cold.
	if stubs, summed, hot := sums(); stubs != 0 || summed != hot || hot != 48-31 {
		t.Fatalf("after the moves: %d stubs with a checksum, %d of %d hot rows with one; want 0, 17 of 17", stubs, summed, hot)
	}
	all := strata.TurnFilter{Namespace: "ns", Conversation: "c"}
	if got, err := s.Turns(ctx, all); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("Turns after the moves: %v", err)
	}
	exec(t, dsn, `UPDATE turns SET tokens = tokens + 1 WHERE seq = 7`)
	_, err := s.Turns(ctx, all)
	wantChecksumError(t, "Turns of the pinned row of a warm span", err, "c", 7)
	exec(t, dsn, `UPDATE turns SET tokens = tokens - 1 WHERE seq = 7`)

	// A pin of a warm stub and of a cold one brings them back whole.
	for _, seq := range []int64{3, 20} {
		if _, err := s.SetImportance(ctx, "ns", "c", seq, 0.9); err != nil {
			t.Fatal(err)
		}
		want[seq-1].Importance = 0.9
	}
	if stubs, summed, hot := sums(); stubs != 0 || summed != hot || hot != 19 {
		t.Fatalf("after the pins: %d stubs with a checksum, %d of %d hot rows with one; want 0, 19 of 19", stubs, summed, hot)
	}
	exec(t, dsn, `UPDATE turns SET name = 'Al' WHERE seq = 20`)
	_, err = s.Turns(ctx, all)
	wantChecksumError(t, "Turns of a pinned cold row", err, "c", 20)
	exec(t, dsn, `UPDATE turns SET name = 'Bo' WHERE seq = 20`)
	// The unpin slims the row again.
	if _, err := s.SetImportance(ctx, "ns", "c", 20, 0); err != nil {
		t.Fatal(err)
	}
	want[19].Importance = 0
	if stubs, summed, hot := sums(); stubs != 0 || summed != hot || hot != 18 {
		t.Fatalf("after the unpin: %d stubs with a checksum, %d of %d hot rows with one; want 0, 18 of 18", stubs, summed, hot)
	}

	// ReplaceNodes gives the cold span 2 back to its rows.
	if _, err := s.ReplaceNodes(ctx, "ns", "c", ids[2:3], nil); err != nil {
		t.Fatal(err)
	}
	if stubs, summed, hot := sums(); stubs != 0 || summed != hot || hot != 26 {
		t.Fatalf("after ReplaceNodes: %d stubs with a checksum, %d of %d hot rows with one; want 0, 26 of 26", stubs, summed, hot)
	}
	exec(t, dsn, `UPDATE turns SET content = content || ' '::bytea WHERE seq = 18`)
	_, err = s.Turns(ctx, all)
	wantChecksumError(t, "Turns of a row ReplaceNodes restored", err, "c", 18)
	exec(t, dsn, `UPDATE turns SET content = substring(content FROM 1 FOR length(content) - 1) WHERE seq = 18`)

	// ResetPyramid gives every span back.
	if _, err := s.ResetPyramid(ctx, "ns", "c", ""); err != nil {
		t.Fatal(err)
	}
	if stubs, summed, hot := sums(); stubs != 0 || summed != hot || hot != 48 {
		t.Fatalf("after ResetPyramid: %d stubs with a checksum, %d of %d hot rows with one; want 0, 48 of 48", stubs, summed, hot)
	}
	if got, err := s.Turns(ctx, all); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("Turns after ResetPyramid: %v", err)
	}
	for _, seq := range []int64{2, 12, 30} { // warm, warm then cold, cold
		exec(t, dsn, `UPDATE turns SET session_label = 'x' WHERE seq = $1`, seq)
		_, err = s.Turns(ctx, all)
		wantChecksumError(t, "Turns of a row ResetPyramid restored", err, "c", seq)
		exec(t, dsn, `UPDATE turns SET session_label = '' WHERE seq = $1`, seq)
	}
}

// TestHotRowChecksumMigration: migration 9 gives every hot row of a store
// written before it its checksum (in batches: more rows than one batch),
// leaves the stubs of warm and cold spans without one, and reads then
// check them.
func TestHotRowChecksumMigration(t *testing.T) {
	ctx := context.Background()

	// A store written at version 8, its rows as version 8 wrote them.
	dsn := newSchema(t, testDSN(t))
	if err := postgres.MigrateAsBefore(ctx, dsn, 8); err != nil {
		t.Fatal(err)
	}
	const n = 4321
	exec(t, dsn, `INSERT INTO conversations (namespace, id, created, turns) VALUES ('ns', 'old', 1, $1)`, n)
	exec(t, dsn, `INSERT INTO turns (conversation, seq, ext_id, session, session_label, role, name, content, time, model,
			tool_calls, tool_results, tokens, tags, metadata, size)
		SELECT c.pk, g, CASE WHEN g % 3 = 0 THEN NULL ELSE 'old-' || g END, 1 + g / 10, 'day ' || (1 + g / 10),
			CASE WHEN g % 2 = 0 THEN 'assistant' ELSE 'user' END, CASE WHEN g % 2 = 0 THEN '' ELSE 'Bo' END,
			convert_to('turn ' || g || ' about the otter', 'UTF8'), CASE WHEN g % 7 = 0 THEN NULL ELSE 1700000000000000000 + g END,
			CASE WHEN g % 2 = 0 THEN 'm' ELSE '' END,
			CASE WHEN g % 2 = 0 THEN '[{"name":"look","arguments":"{}"}]' END,
			CASE WHEN g % 4 = 0 THEN '[{"content":"an otter"}]' END,
			g % 50, CASE WHEN g % 5 = 0 THEN '["river"]' END, CASE WHEN g % 6 = 0 THEN '{"k":"v"}' END,
			length('turn ' || g || ' about the otter')
		FROM conversations c, generate_series(1, $1) g`, n)
	s := openAt(t, dsn)
	if v, err := s.Version(ctx); err != nil || v != postgres.SchemaVersion() {
		t.Fatalf("upgraded store at version %d (%v), want %d", v, err, postgres.SchemaVersion())
	}
	if summed := queryInt(t, dsn, `SELECT count(crc) FROM turns`); summed != n {
		t.Fatalf("%d of %d hot rows have a checksum", summed, n)
	}
	all := strata.TurnFilter{Namespace: "ns", Conversation: "old"}
	got, err := s.Turns(ctx, all)
	if err != nil || len(got) != n {
		t.Fatalf("Turns of the upgraded store: %d, %v; want %d", len(got), err, n)
	}
	if g := got[3999]; g.ExtID != "old-4000" || g.Model != "m" || len(g.ToolCalls) != 1 || len(g.ToolResults) != 1 ||
		len(g.Tags) != 1 || g.Tokens != 0 || g.Content != "turn 4000 about the otter" {
		t.Fatalf("turn 4000 reads as %+v", g)
	}
	exec(t, dsn, `UPDATE turns SET content = convert_to('turn 4001 about the otters', 'UTF8') WHERE seq = 4001`)
	_, err = s.Turns(ctx, all)
	wantChecksumError(t, "Turns of a changed upgraded row", err, "old", 4001)

	// A store with warm and cold spans, its checksums dropped as a store
	// at version 8 has none.
	dsn = newSchema(t, testDSN(t))
	s = openAt(t, dsn)
	ids, want := spans(t, s, "ns", "c")
	if _, err := s.Demote(ctx, "ns", "c", ids[:1], strata.TierWarm, day0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Demote(ctx, "ns", "c", ids[1:3], strata.TierCold, day0); err != nil {
		t.Fatal(err)
	}
	s.Close()
	exec(t, dsn, `ALTER TABLE turns DROP COLUMN crc;
		ALTER TABLE learnings DROP COLUMN about, DROP COLUMN attribute, DROP COLUMN value, DROP COLUMN fact_when, DROP COLUMN sources;
		DELETE FROM schema_migrations WHERE version >= 9`)
	s = openAt(t, dsn)
	if stubs, summed, hot := queryInt(t, dsn, `SELECT count(*) FROM turns WHERE tier <> 0 AND crc IS NOT NULL`),
		queryInt(t, dsn, `SELECT count(crc) FROM turns WHERE tier = 0`),
		queryInt(t, dsn, `SELECT count(*) FROM turns WHERE tier = 0`); stubs != 0 || summed != hot || hot != 25 {
		t.Fatalf("after the upgrade: %d stubs with a checksum, %d of %d hot rows with one; want 0, 25 of 25", stubs, summed, hot)
	}
	all = strata.TurnFilter{Namespace: "ns", Conversation: "c"}
	if got, err := s.Turns(ctx, all); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("Turns after the upgrade: %v", err)
	}
	exec(t, dsn, `UPDATE turns SET role = 'user' WHERE seq = 40`)
	_, err = s.Turns(ctx, all)
	wantChecksumError(t, "Turns of a changed upgraded row", err, "c", 40)
}
