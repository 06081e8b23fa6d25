package tiermove

import (
	"strings"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/internal/spanfmt"
)

func TestStubMismatch(t *testing.T) {
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	copyOf := strata.Turn{Seq: 4, ExtID: "m4", Session: 2, Role: strata.RoleUser, Name: "Ana", SessionLabel: "s2", Time: at, Tokens: 7, Content: "hi"}
	stub := func(f func(*strata.Turn)) strata.Turn {
		r := copyOf
		r.Content = ""
		f(&r)
		return r
	}
	sqlite, postgres := Kept{}, Kept{ExtID: true, ColdRole: true}
	for _, c := range []struct {
		name string
		row  strata.Turn
		tier int
		kept Kept
		want string // a part of the message; "" for a match
	}{
		{"same warm", stub(func(*strata.Turn) {}), spanfmt.TierWarm, postgres, ""},
		{"cold row without name and label", stub(func(r *strata.Turn) { r.Name, r.SessionLabel = "", "" }), spanfmt.TierCold, postgres, ""},
		{"warm row without name", stub(func(r *strata.Turn) { r.Name = "" }), spanfmt.TierWarm, sqlite, "name and session label"},
		{"cold row without role, kept role", stub(func(r *strata.Turn) { r.Role = "" }), spanfmt.TierCold, postgres, "role"},
		{"cold row without role, role left to the segment", stub(func(r *strata.Turn) { r.Role = "" }), spanfmt.TierCold, sqlite, ""},
		{"warm row without role", stub(func(r *strata.Turn) { r.Role = "" }), spanfmt.TierWarm, sqlite, "role"},
		{"other role, cold", stub(func(r *strata.Turn) { r.Role = strata.RoleAssistant }), spanfmt.TierCold, sqlite, "role"},
		{"ext_id kept", stub(func(r *strata.Turn) { r.ExtID = "m5" }), spanfmt.TierCold, postgres, "ext_id"},
		{"ext_id not kept", stub(func(r *strata.Turn) { r.ExtID = "m5" }), spanfmt.TierCold, sqlite, ""},
		{"session", stub(func(r *strata.Turn) { r.Session = 3 }), spanfmt.TierWarm, sqlite, "session 2, row 3"},
		{"time", stub(func(r *strata.Turn) { r.Time = at.Add(time.Second) }), spanfmt.TierWarm, sqlite, "time"},
		{"tokens", stub(func(r *strata.Turn) { r.Tokens = 8 }), spanfmt.TierCold, postgres, "tokens 7, row 8"},
	} {
		got := stubMismatch(c.row, copyOf, c.tier, c.kept)
		if (got == "") != (c.want == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
