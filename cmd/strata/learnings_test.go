package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

func TestLearningsCommand(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	mustRun(t, db, "import", writeJSONL(t, dir, "c", 60))
	var out struct {
		Learnings []struct {
			ID     int64  `json:"id"`
			Status string `json:"status"`
			Text   string `json:"text"`
		} `json:"learnings"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, db, "learnings", "--json")), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Learnings) == 0 || out.Learnings[0].Status != "auto" {
		t.Fatalf("learnings: %+v", out.Learnings)
	}
	id := fmt.Sprint(out.Learnings[0].ID)
	if got := mustRun(t, db, "learnings", "confirm", id); !strings.HasPrefix(got, "#"+id+" confirmed: ") {
		t.Errorf("confirm: %s", got)
	}
	if got := mustRun(t, db, "learnings", "--status", "confirmed"); !strings.Contains(got, out.Learnings[0].Text[:20]) {
		t.Errorf("confirmed list: %s", got)
	}
	ctxOut := mustRun(t, db, "context", "--conversation", "c", "--budget", "1000")
	if !strings.Contains(ctxOut, "[learning, confirmed, from turn") {
		t.Errorf("the confirmed learning is not in the context:\n%s", ctxOut)
	}
	// A subcommand after the flags is not taken for a listing.
	if _, _, err := run(t, db, "", "learnings", "--json", "expand", id); err == nil || !strings.Contains(err.Error(), `unexpected "expand"`) {
		t.Errorf("learnings --json expand %s: %v, want an error naming expand", id, err)
	}
	exp := mustRun(t, db, "learnings", "expand", id)
	if !strings.HasPrefix(exp, "#"+id+" confirmed: ") || !strings.Contains(exp, "  [turn ") {
		t.Errorf("expand: %s", exp)
	}
	for _, bad := range [][]string{{"learnings", "expand", "99999"}, {"learnings", "expand"}, {"learnings", "confirm"}, {"learnings", "reject", "x"}, {"learnings", "confirm", "99999"}} {
		if _, _, err := run(t, db, "", bad...); err == nil {
			t.Errorf("strata %s: no error", strings.Join(bad, " "))
		}
	}
}
