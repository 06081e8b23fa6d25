package strata_test

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/strata-memory/strata"
)

// TestIngestKeepsRepeatedMessages: a live append without ext_id is never
// deduplicated by content, even when the clock does not move; turns with
// ext_ids still are.
func TestIngestKeepsRepeatedMessages(t *testing.T) {
	m := newMemory(t, nil) // its clock stands still
	for _, tr := range []strata.Turn{
		{Role: strata.RoleUser, Content: "yes"},
		{Role: strata.RoleAssistant, Content: "Shall I continue?"},
		{Role: strata.RoleUser, Content: "yes"},
	} {
		if res := ingest(t, m, "z", []strata.Turn{tr}); res.Added != 1 {
			t.Fatalf("ingest %q: %+v, want it added", tr.Content, res)
		}
	}
	// Two identical turns in one live batch are two turns too.
	two := []strata.Turn{{Role: strata.RoleUser, Content: "ok"}, {Role: strata.RoleUser, Content: "ok"}}
	if res := ingest(t, m, "z", two); res.Added != 2 {
		t.Fatalf("ingest of two identical turns: %+v, want both added", res)
	}
	withID := []strata.Turn{{ExtID: "m1", Role: strata.RoleUser, Content: "yes"}}
	ingest(t, m, "z", withID)
	if res := ingest(t, m, "z", withID); res.Added != 0 || res.Skipped != 1 {
		t.Fatalf("second ingest of ext_id m1: %+v, want it skipped", res)
	}
	turns, err := storedTurns(m, "z")
	if err != nil {
		t.Fatal(err)
	}
	if len(turns) != 6 {
		t.Fatalf("%d turns stored, want 6", len(turns))
	}
	ids := map[string]bool{}
	for _, tr := range turns {
		if ids[tr.ExtID] {
			t.Fatalf("ext_id %q stored twice", tr.ExtID)
		}
		ids[tr.ExtID] = true
	}
}

// storedTurns returns every turn of conversation conv, in order.
func storedTurns(m *strata.Memory, conv string) ([]strata.Turn, error) {
	return m.Store().Turns(context.Background(), strata.TurnFilter{Namespace: m.Namespace(), Conversation: conv})
}

// importAll imports turns of (conversation, turn) pairs with Memory.Import.
func importAll(t *testing.T, m *strata.Memory, convs []string, turns []strata.Turn) []strata.IngestResult {
	t.Helper()
	i := 0
	res, err := m.Import(context.Background(), func() (string, strata.Turn, error) {
		if i == len(turns) {
			return "", strata.Turn{}, io.EOF
		}
		i++
		return convs[i-1], turns[i-1], nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestImportBatchesPerConversation: an input whose turns alternate between
// conversations is written one batch per conversation, not one per turn,
// and each conversation keeps its turns in input order.
func TestImportBatchesPerConversation(t *testing.T) {
	m := newMemory(t, nil)
	start := time.Date(2024, 3, 1, 9, 0, 0, 0, time.UTC)
	var convs []string
	var turns []strata.Turn
	for i := 0; i < 120; i++ {
		c := []string{"a", "b", "c"}[i%3]
		convs = append(convs, c)
		turns = append(turns, strata.Turn{ExtID: fmt.Sprintf("%s-%d", c, i), Role: strata.RoleUser,
			Content: fmt.Sprintf("turn %d of %s", i, c), Time: start.Add(time.Duration(i) * time.Minute)})
	}
	res := importAll(t, m, convs, turns)
	if len(res) != 3 {
		t.Fatalf("%d batches written, want 3 (one per conversation)", len(res))
	}
	for _, c := range []string{"a", "b", "c"} {
		got, err := storedTurns(m, c)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 40 {
			t.Fatalf("%s: %d turns, want 40", c, len(got))
		}
		for k := 1; k < len(got); k++ {
			if !got[k].Time.After(got[k-1].Time) {
				t.Fatalf("%s: turn %d is not after turn %d", c, got[k].Seq, got[k-1].Seq)
			}
		}
	}
}

// TestIngestRefusesUnstorableTime: a time the store cannot hold fails the
// batch in validation, before the conversation is created.
func TestIngestRefusesUnstorableTime(t *testing.T) {
	ctx := context.Background()
	m := newMemory(t, nil)
	for _, at := range []time.Time{
		time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC),
	} {
		_, err := m.Ingest(ctx, strata.Batch{Conversation: "late", Turns: []strata.Turn{
			{Role: strata.RoleUser, Content: "fine", Time: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)},
			{Role: strata.RoleUser, Content: "late", Time: at},
		}})
		if strata.ErrorCode(err) != strata.EINVALID {
			t.Fatalf("time %v: err = %v, want EINVALID", at, err)
		}
		if _, err := m.Conversation(ctx, "late"); strata.ErrorCode(err) != strata.ENOTFOUND {
			t.Fatalf("time %v: conversation after a refused batch: err = %v, want ENOTFOUND", at, err)
		}
	}
}
