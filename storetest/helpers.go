package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/strata-memory/strata"
)

// base is the time of the first turn the suite makes. It has nanoseconds,
// so stores that keep less precision fail.
var base = time.Date(2024, 3, 1, 12, 0, 0, 123456789, time.UTC)

// ensure creates conversation id in namespace ns.
func ensure(t *testing.T, s strata.Store, ns, id string) strata.Conversation {
	t.Helper()
	c, err := s.EnsureConversation(t.Context(), strata.Conversation{Namespace: ns, ID: id, Policy: "chunks"})
	if err != nil {
		t.Fatalf("EnsureConversation(%q, %q): %v", ns, id, err)
	}
	return c
}

// mkTurns makes n turns whose ext_ids are prefix-1 .. prefix-n, alternating
// user and assistant, one minute apart from base, in session 1.
func mkTurns(prefix string, n int) []strata.Turn {
	out := make([]strata.Turn, n)
	for i := range out {
		role := strata.RoleUser
		if i%2 == 1 {
			role = strata.RoleAssistant
		}
		out[i] = strata.Turn{
			ExtID:   fmt.Sprintf("%s-%d", prefix, i+1),
			Session: 1,
			Role:    role,
			Content: fmt.Sprintf("message %d of %s", i+1, prefix),
			Time:    base.Add(time.Duration(i) * time.Minute),
			Tokens:  5 + i,
		}
	}
	return out
}

// appendTurns appends turns and fails the test on error.
func appendTurns(t *testing.T, s strata.Store, ns, conv string, turns []strata.Turn) []strata.Turn {
	t.Helper()
	got, err := s.AppendTurns(t.Context(), ns, conv, turns)
	if err != nil {
		t.Fatalf("AppendTurns(%q, %q, %d turns): %v", ns, conv, len(turns), err)
	}
	return got
}

// allTurns returns every turn of a conversation.
func allTurns(t *testing.T, s strata.Store, ns, conv string) []strata.Turn {
	t.Helper()
	got, err := s.Turns(t.Context(), strata.TurnFilter{Namespace: ns, Conversation: conv})
	if err != nil {
		t.Fatalf("Turns(%q, %q): %v", ns, conv, err)
	}
	return got
}

// seqs returns the seqs of turns.
func seqs(turns []strata.Turn) []int64 {
	out := make([]int64, len(turns))
	for i, t := range turns {
		out[i] = t.Seq
	}
	return out
}

// extIDs returns the ext_ids of turns.
func extIDs(turns []strata.Turn) []string {
	out := make([]string, len(turns))
	for i, t := range turns {
		out[i] = t.ExtID
	}
	return out
}

// seqRange returns from..to.
func seqRange(from, to int64) []int64 {
	var out []int64
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

// wantCode fails the test unless err carries code.
func wantCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	if got := strata.ErrorCode(err); got != code {
		t.Errorf("%s: error %v has code %q, want %q", what, err, got, code)
	}
}

// sameTime reports whether two times are the same instant (both zero
// counts as the same).
func sameTime(a, b time.Time) bool {
	if a.IsZero() || b.IsZero() {
		return a.IsZero() == b.IsZero()
	}
	return a.Equal(b)
}

// jsonOf returns v's JSON encoding, with empty collections as null, for
// comparing values that went through a store's JSON encoding.
func jsonOf(v any) string {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			return "null"
		}
	case []string:
		if len(x) == 0 {
			return "null"
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "error: " + err.Error()
	}
	return string(b)
}

// diffTurn returns how got differs from want, field by field, or "".
func diffTurn(want, got strata.Turn) string {
	var d []string
	add := func(field string, w, g any) { d = append(d, fmt.Sprintf("%s: got %#v, want %#v", field, g, w)) }
	if got.Seq != want.Seq {
		add("Seq", want.Seq, got.Seq)
	}
	if got.ExtID != want.ExtID {
		add("ExtID", want.ExtID, got.ExtID)
	}
	if got.Session != want.Session {
		add("Session", want.Session, got.Session)
	}
	if got.SessionLabel != want.SessionLabel {
		add("SessionLabel", want.SessionLabel, got.SessionLabel)
	}
	if got.Role != want.Role {
		add("Role", want.Role, got.Role)
	}
	if got.Name != want.Name {
		add("Name", want.Name, got.Name)
	}
	if got.Content != want.Content {
		if len(want.Content) > 200 || len(got.Content) > 200 {
			d = append(d, fmt.Sprintf("Content: got %d bytes, want %d bytes (different)", len(got.Content), len(want.Content)))
		} else {
			add("Content", want.Content, got.Content)
		}
	}
	if !sameTime(want.Time, got.Time) {
		add("Time", want.Time.Format(time.RFC3339Nano), got.Time.Format(time.RFC3339Nano))
	}
	if got.Model != want.Model {
		add("Model", want.Model, got.Model)
	}
	if len(got.ToolCalls) != len(want.ToolCalls) {
		add("len(ToolCalls)", len(want.ToolCalls), len(got.ToolCalls))
	} else {
		for i, w := range want.ToolCalls {
			g := got.ToolCalls[i]
			if g.ID != w.ID || g.Name != w.Name || !bytes.Equal(g.Arguments, w.Arguments) {
				add(fmt.Sprintf("ToolCalls[%d]", i),
					fmt.Sprintf("{%q %q %q}", w.ID, w.Name, w.Arguments), fmt.Sprintf("{%q %q %q}", g.ID, g.Name, g.Arguments))
			}
		}
	}
	if len(got.ToolResults) != len(want.ToolResults) {
		add("len(ToolResults)", len(want.ToolResults), len(got.ToolResults))
	} else {
		for i, w := range want.ToolResults {
			if got.ToolResults[i] != w {
				add(fmt.Sprintf("ToolResults[%d]", i), w, got.ToolResults[i])
			}
		}
	}
	if got.Tokens != want.Tokens {
		add("Tokens", want.Tokens, got.Tokens)
	}
	if got.Importance != want.Importance {
		add("Importance", want.Importance, got.Importance)
	}
	if !(len(got.Tags) == 0 && len(want.Tags) == 0) && !slices.Equal(got.Tags, want.Tags) {
		add("Tags", want.Tags, got.Tags)
	}
	if jsonOf(got.Metadata) != jsonOf(want.Metadata) {
		add("Metadata", jsonOf(want.Metadata), jsonOf(got.Metadata))
	}
	if len(d) == 0 {
		return ""
	}
	return fmt.Sprintf("turn %q: %v", want.ExtID, d)
}

// diffNode returns how got differs from want, field by field, or "".
func diffNode(want, got strata.Node) string {
	var d []string
	add := func(field string, w, g any) { d = append(d, fmt.Sprintf("%s: got %#v, want %#v", field, g, w)) }
	if got.ID != want.ID {
		add("ID", want.ID, got.ID)
	}
	if got.Conversation != want.Conversation {
		add("Conversation", want.Conversation, got.Conversation)
	}
	if got.Level != want.Level {
		add("Level", want.Level, got.Level)
	}
	if got.Derived != want.Derived {
		add("Derived", want.Derived, got.Derived)
	}
	if got.FirstSeq != want.FirstSeq || got.LastSeq != want.LastSeq {
		add("span", [2]int64{want.FirstSeq, want.LastSeq}, [2]int64{got.FirstSeq, got.LastSeq})
	}
	for _, tm := range []struct {
		name string
		w, g time.Time
	}{{"Start", want.Start, got.Start}, {"End", want.End, got.End}, {"Created", want.Created, got.Created}} {
		if !sameTime(tm.w, tm.g) {
			add(tm.name, tm.w.Format(time.RFC3339Nano), tm.g.Format(time.RFC3339Nano))
		}
	}
	for _, l := range []struct {
		name string
		w, g []string
	}{{"Children", want.Children, got.Children}, {"Facts", want.Facts, got.Facts}, {"Themes", want.Themes, got.Themes}} {
		if jsonOf(l.w) != jsonOf(l.g) {
			add(l.name, l.w, l.g)
		}
	}
	if got.Summary != want.Summary {
		add("Summary", want.Summary, got.Summary)
	}
	if got.SourceTokens != want.SourceTokens || got.Tokens != want.Tokens {
		add("tokens", [2]int{want.SourceTokens, want.Tokens}, [2]int{got.SourceTokens, got.Tokens})
	}
	if got.Key != want.Key || got.Model != want.Model || got.Pending != want.Pending {
		add("key/model/pending", [3]any{want.Key, want.Model, want.Pending}, [3]any{got.Key, got.Model, got.Pending})
	}
	if jsonOf(got.Rejected) != jsonOf(want.Rejected) {
		add("Rejected", jsonOf(want.Rejected), jsonOf(got.Rejected))
	}
	if jsonOf(got.Aggregates) != jsonOf(want.Aggregates) {
		add("Aggregates", jsonOf(want.Aggregates), jsonOf(got.Aggregates))
	}
	if got.Method != want.Method || got.Status != want.Status || got.Fallback != want.Fallback {
		add("method/status/fallback", [3]string{want.Method, want.Status, want.Fallback},
			[3]string{got.Method, got.Status, got.Fallback})
	}
	if len(d) == 0 {
		return ""
	}
	return fmt.Sprintf("node %q: %v", want.ID, d)
}

// ctx is the context of a test.
func ctx(t *testing.T) context.Context { return t.Context() }
