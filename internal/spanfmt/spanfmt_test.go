package spanfmt

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/archive"
)

func sample() []strata.Turn {
	tm := time.Date(2024, 3, 1, 23, 30, 0, 5, time.FixedZone("x", 3600))
	return []strata.Turn{
		{Seq: 7, ExtID: "D1:3", Session: 2, SessionLabel: "s<1>", Role: strata.RoleUser, Name: "Ana", Time: tm,
			Content: "Hi & <b>bye</b>\n\ttab", Tokens: 9},
		{Seq: 8, Role: strata.RoleAssistant, Content: "calling", Model: "m-1", Importance: 0.25, Tags: []string{"a", "b"},
			Metadata:    map[string]any{"k": "v", "n": 2.5},
			ToolCalls:   []strata.ToolCall{{ID: "c1", Name: "get", Arguments: json.RawMessage(`{ "x" : "<y>" }`)}},
			ToolResults: []strata.ToolResult{{CallID: "c1", Content: "ok <3"}}},
		{Seq: 9, Role: strata.RoleSystem},
	}
}

// TestRecordGolden pins the archive record format byte for byte: a
// segment written by one version (or one store) must read the same in
// every other.
func TestRecordGolden(t *testing.T) {
	turns := sample()
	turns[1].ToolCalls = append(turns[1].ToolCalls, strata.ToolCall{Name: "bin", Arguments: json.RawMessage("\xff\xfe")},
		strata.ToolCall{Name: "none"})
	want := []string{
		`["D1:3","s<1>","user","Ana","2024-03-01T22:30:00.000000005Z","Hi & <b>bye</b>\n\ttab"]`,
		`["","","assistant","","","calling",{"model":"m-1","tool_calls":[{"id":"c1","name":"get","arguments":"{ \"x\" : \"\u003cy\u003e\" }"},{"name":"bin","arguments_bytes":"//4="},{"name":"none"}],"tool_results":[{"call_id":"c1","content":"ok \u003c3"}],"importance":0.25,"tags":["a","b"],"metadata":{"k":"v","n":2.5}}]`,
		`["","","system","","",""]`,
	}
	for i := range turns {
		rec, err := Record(&turns[i])
		if err != nil {
			t.Fatal(err)
		}
		if rec.Seq != turns[i].Seq || string(rec.Line) != want[i] {
			t.Fatalf("turn %d: record %d %s\nwant %d %s", i, rec.Seq, rec.Line, turns[i].Seq, want[i])
		}
		back, err := DecodeRecord(rec.Line, &turns[i])
		if err != nil || !SameTurn(&back, &turns[i]) {
			t.Fatalf("turn %d: decodes to %+v, %v", i, back, err)
		}
		if back.Time.Location() != time.UTC {
			t.Fatalf("turn %d: time %v not in UTC", i, back.Time)
		}
	}
}

// TestRecordFormat1 reads a record as earlier versions wrote it: one
// object with every field by name, the session and tokens included.
func TestRecordFormat1(t *testing.T) {
	line := `{"ext_id":"e","session":3,"session_label":"s","role":"tool","name":"n","content":"c","time":"2023-05-08T13:56:00Z",` +
		`"model":"m","tool_calls":[{"name":"f","arguments":"{}"}],"tool_results":[{"call_id":"x","content":"r"}],"tokens":5,` +
		`"importance":0.5,"tags":["t"],"metadata":{"a":1}}`
	got, err := DecodeRecord([]byte(line), &strata.Turn{Seq: 4, Session: 99, Tokens: 99})
	if err != nil {
		t.Fatal(err)
	}
	want := strata.Turn{Seq: 4, ExtID: "e", Session: 3, SessionLabel: "s", Role: strata.RoleTool, Name: "n", Content: "c",
		Time: time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC), Model: "m", Tokens: 5, Importance: 0.5,
		ToolCalls:   []strata.ToolCall{{Name: "f", Arguments: json.RawMessage("{}")}},
		ToolResults: []strata.ToolResult{{CallID: "x", Content: "r"}}, Tags: []string{"t"}, Metadata: map[string]any{"a": 1.0}}
	if !SameTurn(&got, &want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	// Format 2 takes the session and the tokens from the row.
	rec, _ := Record(&want)
	got, err = DecodeRecord(rec.Line, &strata.Turn{Seq: 4, Session: 7, Tokens: 8})
	if err != nil || got.Session != 7 || got.Tokens != 8 {
		t.Fatalf("format 2: session %d tokens %d, %v", got.Session, got.Tokens, err)
	}
}

func TestRecordErrors(t *testing.T) {
	row := &strata.Turn{Seq: 1}
	for _, c := range []struct{ line, want string }{
		{`["a","b","user"]`, "3 elements, want 6 or 7"},
		{`["a","b","user","n",5,"c"]`, "time:"},
		{`["a","b","user","n","yesterday","c"]`, "time:"},
		{`["a","b","user","n","","c",{"tool_calls":"x"}]`, "tool_calls"},
		{`["a","b","user","n","","c",{"tags":{"x":1}}]`, "tags"},
		{`not json`, "invalid character"},
	} {
		if _, err := DecodeRecord([]byte(c.line), row); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.line, err, c.want)
		}
	}
	// A record that decodes to another turn fails the check.
	tu := sample()[0]
	rec, _ := EncodeRecord(&tu)
	other := tu
	other.Content += "!"
	if err := CheckRecord(rec.Line, &other); err == nil || !strings.Contains(err.Error(), "does not round-trip") {
		t.Fatalf("CheckRecord of another turn: %v", err)
	}
}

// TestBlockGolden pins the warm block's content (CTF) and checks the
// round trip and CheckBlock.
func TestBlockGolden(t *testing.T) {
	turns := sample()
	block, err := EncodeBlock(turns)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := archive.Decompress(block)
	if err != nil {
		t.Fatal(err)
	}
	want := "#CTF v1 turns=3 fields=seq,ext_id,session,session_label,role,name,content,time,model,tool_calls,tool_results,tokens,importance,tags,metadata\n" +
		"7\tD1:3\t2\ts<1>\tuser\tAna\tHi & <b>bye</b>␊␉tab\t2024-03-01T22:30:00.000000005Z\t\t\t\t9\t0\t\t\n" +
		"8\t\t0\t\tassistant\t\tcalling\t-\tm-1\t[{\"id\":\"c1\",\"name\":\"get\",\"arguments\":\"{ \\\"x\\\" : \\\"<y>\\\" }\"}]\t[{\"call_id\":\"c1\",\"content\":\"ok <3\"}]\t0\t0.25\t[\"a\",\"b\"]\t{\"k\":\"v\",\"n\":2.5}\n" +
		"9\t\t0\t\tsystem\t\t\t-\t\t\t\t0\t0\t\t\n"
	if string(raw) != want {
		t.Fatalf("block holds\n%q\nwant\n%q", raw, want)
	}
	if err := CheckBlock(block, turns); err != nil {
		t.Fatal(err)
	}
	back, _ := DecodeBlock(block)
	if back[2].ToolCalls != nil || back[2].Tags != nil || back[2].Metadata != nil || back[0].Time.Location() != time.UTC {
		t.Fatalf("decoded turns are not normalized: %+v", back)
	}
	if err := CheckBlock(block, turns[:2]); err == nil || !strings.Contains(err.Error(), "3 turns, want 2") {
		t.Fatalf("CheckBlock of fewer turns: %v", err)
	}
	changed := sample()
	changed[1].ToolCalls[0].Arguments = json.RawMessage(`{"x":"<y>"}`) // same JSON, other bytes
	if err := CheckBlock(block, changed); err == nil || !strings.Contains(err.Error(), "turn 8 does not round-trip") {
		t.Fatalf("CheckBlock with other argument bytes: %v", err)
	}
	block[len(block)-1] ^= 1
	if err := CheckBlock(block, turns); !errors.Is(err, archive.ErrCorrupt) {
		t.Fatalf("CheckBlock of a damaged block: %v", err)
	}
}

// TestPeriod: a turn goes to its UTC month, unless its span names the
// turn's UTC day (a span made cold when segments were days).
func TestPeriod(t *testing.T) {
	tests := []struct {
		named []string
		at    time.Time
		want  string
	}{
		{nil, time.Date(2024, 3, 1, 0, 30, 0, 0, time.FixedZone("x", 3600)), "2024-02"},
		{nil, time.Date(2024, 3, 1, 23, 59, 59, 0, time.UTC), "2024-03"},
		{nil, time.Time{}, "0001-01"},
		{[]string{"2024-02-29"}, time.Date(2024, 3, 1, 0, 30, 0, 0, time.FixedZone("x", 3600)), "2024-02-29"},
		{[]string{"2024-02-29"}, time.Date(2024, 2, 28, 12, 0, 0, 0, time.UTC), "2024-02"},
		{[]string{"2024-02", "2024-03-01"}, time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC), "2024-03-01"},
		{[]string{"2024-02", "2024-03-01"}, time.Date(2024, 2, 1, 12, 0, 0, 0, time.UTC), "2024-02"},
		{[]string{"0001-01-01"}, time.Time{}, "0001-01-01"},
	}
	for _, c := range tests {
		if got := Period(c.named, c.at); got != c.want {
			t.Errorf("Period(%q, %v) = %s, want %s", c.named, c.at, got, c.want)
		}
	}
}

func TestToolCallsJSON(t *testing.T) {
	calls := []strata.ToolCall{{ID: "1", Name: "f", Arguments: json.RawMessage(`{"a": [1, 2]}`)}, {Name: "g", Arguments: json.RawMessage("\x00\xff")}, {Name: "h"}}
	b, err := ToolCallsJSON(calls)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `[{"id":"1","name":"f","arguments":"{\"a\": [1, 2]}"},{"name":"g","arguments_bytes":"AP8="},{"name":"h"}]` {
		t.Fatalf("stored as %s", b)
	}
	back, err := ParseToolCalls(b)
	if err != nil || len(back) != 3 || string(back[0].Arguments) != `{"a": [1, 2]}` || string(back[1].Arguments) != "\x00\xff" || back[2].Arguments != nil {
		t.Fatalf("parsed %+v, %v", back, err)
	}
	if _, err := ParseToolCalls([]byte(`{"x":1}`)); err == nil {
		t.Fatal("an object parsed as tool calls")
	}
}

// TestColdMove: a turn goes to its month's segment until that segment
// holds MaxMonthBytes, then to its day's; each month's size is asked once;
// a span's turns name their periods once each, in the order met.
func TestColdMove(t *testing.T) {
	asked := map[string]int{}
	sizes := map[string]int64{"2024-03": MaxMonthBytes, "2024-04": MaxMonthBytes - 1}
	c := ColdMove{Size: func(p string) (int64, error) {
		asked[p]++
		return sizes[p], nil
	}}
	for _, x := range []struct {
		at   time.Time
		want string
	}{
		{time.Date(2024, 3, 5, 23, 0, 0, 0, time.UTC), "2024-03-05"},
		{time.Date(2024, 3, 6, 1, 0, 0, 0, time.UTC), "2024-03-06"},
		{time.Date(2024, 4, 1, 0, 0, 0, 0, time.UTC), "2024-04"},
		{time.Date(2024, 4, 30, 0, 0, 0, 0, time.UTC), "2024-04"},
		{time.Date(2024, 5, 2, 0, 0, 0, 0, time.UTC), "2024-05"},
	} {
		got, err := c.period(x.at)
		if err != nil || got != x.want {
			t.Fatalf("period(%s) = %q, %v; want %q", x.at, got, err, x.want)
		}
		if err := c.Add(1, &strata.Turn{Seq: int64(len(c.Records) + 1), Role: strata.RoleUser, Time: x.at}); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := c.SpanPeriods(1), []string{"2024-03-05", "2024-03-06", "2024-04", "2024-05"}; !slices.Equal(got, want) {
		t.Fatalf("span 1 names %q, want %q", got, want)
	}
	if got := c.SpanPeriods(0); got != nil {
		t.Fatalf("span 0, given no turn, names %q", got)
	}
	if got, want := c.Periods(), []string{"2024-03-05", "2024-03-06", "2024-04", "2024-05"}; !slices.Equal(got, want) {
		t.Fatalf("Periods = %q, want %q", got, want)
	}
	for p, n := range asked {
		if n != 1 {
			t.Fatalf("the size of %s was asked %d times", p, n)
		}
	}
}
