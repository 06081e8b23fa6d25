package ctf

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/strata-memory/strata"
)

// fullTurns exercises every field, with the values a store holds.
func fullTurns() []strata.Turn {
	t0 := time.Date(2026, 1, 15, 10, 0, 0, 123456789, time.UTC)
	return []strata.Turn{
		{
			Seq: 1, ExtID: "m-1", Session: 1, SessionLabel: "session_1", Role: strata.RoleUser,
			Name: "Caroline", Content: "What's the weather in Paris?\nAnd\tin Rome?", Time: t0,
			Tokens: 12, Importance: 0.85, Tags: []string{"weather", "a|b", "-", ""},
			Metadata: map[string]any{"lang": "en", "score": 1.5, "n": float64(3), "nested": map[string]any{"ok": true, "list": []any{"x", nil}}},
		},
		{
			Seq: 2, ExtID: "m-2", Session: 1, SessionLabel: "session_1", Role: strata.RoleAssistant,
			Model: "gpt-4o", Time: t0.Add(time.Second),
			ToolCalls: []strata.ToolCall{
				{ID: "c1", Name: "weather", Arguments: json.RawMessage(`{"city": "Paris",  "units":"C"}`)},
				{ID: "c2", Name: "weather", Arguments: json.RawMessage("{\n  \"city\": \"Rome\"\n}\n")},
				{Name: "noop"},
				{Name: "scalar", Arguments: json.RawMessage(`"a string"`)},
			},
			Tokens: 30,
		},
		{
			Seq: 3, ExtID: "m-3", Session: 1, SessionLabel: "session_1", Role: strata.RoleTool,
			Time: t0.Add(2 * time.Second),
			ToolResults: []strata.ToolResult{
				{CallID: "c1", Name: "weather", Content: "18°C, sunny\t␉"},
				{CallID: "c2", Content: "error: <timeout> & retry", IsError: true},
			},
			Tokens: 9,
		},
		{
			Seq: 4, ExtID: "-", Session: 2, SessionLabel: "session 2", Role: strata.RoleAssistant,
			Name: "-", Content: "-", Model: "-", Time: time.Date(2026, 1, 16, 0, 0, 0, 0, time.UTC),
			Importance: 1,
		},
		{Seq: 5, ExtID: "m-5", Session: 2, Role: strata.RoleSystem, Content: ""},
	}
}

func TestTurnsRoundTrip(t *testing.T) {
	turns := fullTurns()
	b, err := EncodeTurns(turns, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", b)
	if !bytes.HasPrefix(b, []byte("#CTF v1 turns=5 fields=seq,ext_id,session,session_label,role,name,content,time,model,tool_calls,tool_results,tokens,importance,tags,metadata\n")) {
		t.Errorf("header %q", b[:bytes.IndexByte(b, '\n')])
	}
	got, err := DecodeTurns(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, turns) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, turns)
	}
	// Arguments come back byte for byte, whitespace and all.
	if a := string(got[1].ToolCalls[1].Arguments); a != "{\n  \"city\": \"Rome\"\n}\n" {
		t.Errorf("arguments %q", a)
	}
	// The whole block has one line per turn.
	if n := bytes.Count(b, []byte{'\n'}); n != len(turns)+1 {
		t.Errorf("%d lines", n)
	}

	// The streaming encoder and decoder agree with the block functions.
	var buf bytes.Buffer
	e, err := NewTurnEncoder(&buf, TurnFields(), len(turns))
	if err != nil {
		t.Fatal(err)
	}
	for i := range turns {
		if err := e.Encode(&turns[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), b) {
		t.Errorf("TurnEncoder wrote\n%s", buf.Bytes())
	}
	d, err := NewTurnDecoder(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if d.Header().Fields[0] != "seq" {
		t.Error("header")
	}
	for i := 0; ; i++ {
		tr, err := d.Next()
		if err == io.EOF {
			break
		}
		if err != nil || !reflect.DeepEqual(tr, turns[i]) {
			t.Fatalf("turn %d: %+v %v", i, tr, err)
		}
	}
}

// The normalizations the round trip makes: times in UTC without a monotonic
// reading, empty lists and maps as nil, empty arguments as nil.
func TestTurnsNormalize(t *testing.T) {
	paris := time.FixedZone("CET", 3600)
	in := []strata.Turn{{
		Role: "user", Content: "x", Time: time.Date(2026, 1, 15, 11, 0, 0, 5, paris),
		ToolCalls: []strata.ToolCall{{Name: "f", Arguments: json.RawMessage{}}},
		Tags:      []string{}, Metadata: map[string]any{},
		ToolResults: []strata.ToolResult{},
	}, {Role: "user", Time: time.Now()}}
	b, err := EncodeTurns(in, []string{"role", "content", "time", "tool_calls", "tool_results", "tags", "metadata"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeTurns(b)
	if err != nil {
		t.Fatal(err)
	}
	want := []strata.Turn{{
		Role: "user", Content: "x", Time: time.Date(2026, 1, 15, 10, 0, 0, 5, time.UTC),
		ToolCalls: []strata.ToolCall{{Name: "f"}},
	}, {Role: "user", Time: in[1].Time.UTC()}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v\n%s", got, want, b)
	}
}

func TestTurnsFields(t *testing.T) {
	turns := fullTurns()
	b, err := EncodeTurns(turns[:2], []string{"role", "name", "content"})
	if err != nil {
		t.Fatal(err)
	}
	want := "#CTF v1 turns=2 fields=role,name,content\n" +
		"user\tCaroline\tWhat's the weather in Paris?␊And␉in Rome?\n" +
		"assistant\t\t\n"
	if string(b) != want {
		t.Errorf("got\n%q\nwant\n%q", b, want)
	}
	// Default fields: only those in use.
	b, _ = EncodeTurns([]strata.Turn{{Role: "user", Content: "hi"}, {Role: "assistant", Name: "Bot", Content: "hello"}}, nil)
	if want := "#CTF v1 turns=2 fields=role,name,content\nuser\t\thi\nassistant\tBot\thello\n"; string(b) != want {
		t.Errorf("default fields:\n%q\nwant\n%q", b, want)
	}
	b, _ = EncodeTurns(nil, nil)
	if want := "#CTF v1 turns=0 fields=role,content\n"; string(b) != want {
		t.Errorf("no turns: %q", b)
	}
	if got, err := DecodeTurns(b); err != nil || len(got) != 0 {
		t.Errorf("no turns: %v %v", got, err)
	}
	for _, f := range [][]string{{"role", "nope"}, {"time", "timestamp"}, {"role", "role"}, {}} {
		if _, err := EncodeTurns(turns, f); err == nil {
			t.Errorf("fields %q: no error", f)
		}
	}
}

func TestTurnsEncodeErrors(t *testing.T) {
	bad := "bad \xff"
	for _, c := range []struct {
		turn  strata.Turn
		field string
	}{
		{strata.Turn{Content: bad}, "content"},
		{strata.Turn{Name: bad}, "name"},
		{strata.Turn{ExtID: bad}, "ext_id"},
		{strata.Turn{Role: strata.Role(bad)}, "role"},
		{strata.Turn{Model: bad}, "model"},
		{strata.Turn{SessionLabel: bad}, "session_label"},
		{strata.Turn{ToolCalls: []strata.ToolCall{{Name: "f", Arguments: json.RawMessage(`"` + bad + `"`)}}}, "tool_calls"},
		{strata.Turn{ToolResults: []strata.ToolResult{{Content: bad}}}, "tool_results"},
		{strata.Turn{Tags: []string{"ok", bad}}, "tags"},
		{strata.Turn{Metadata: map[string]any{"k": []any{bad}}}, "metadata"},
		{strata.Turn{Metadata: map[string]any{"k": math.NaN()}}, "metadata"},
		{strata.Turn{Metadata: map[string]any{"k": make(chan int)}}, "metadata"},
		{strata.Turn{Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}, "time"},
	} {
		turns := []strata.Turn{{Role: "user"}, c.turn}
		_, err := EncodeTurns(turns, TurnFields())
		checkErr(t, c.field, err, "row 2, field "+c.field+":")
	}
}

// The original sketch's examples decode to the turns they stand for.
func TestTurnsSketch(t *testing.T) {
	at := func(s string) time.Time {
		tm, err := time.Parse("2006-01-02T15:04:05", s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	for _, c := range []struct {
		in   string
		want []strata.Turn
	}{
		{
			"#CTF v1 turns=2 fields=role,content,timestamp,model\n" +
				"user\thello\t2026-01-15T10:00:00\t-\n" +
				"assistant\thi there\t2026-01-15T10:00:01\tgpt-4o",
			[]strata.Turn{
				{Role: "user", Content: "hello", Time: at("2026-01-15T10:00:00")},
				{Role: "assistant", Content: "hi there", Time: at("2026-01-15T10:00:01"), Model: "gpt-4o"},
			},
		},
		{
			"#CTF v1 turns=2 fields=role,content,timestamp,model\n" +
				"user\tHow do I use the CLI?\t2026-01-15T10:00:00\t-\n" +
				"assistant\tRun the tool with --help\t2026-01-15T10:00:01\tgpt-4o",
			[]strata.Turn{
				{Role: "user", Content: "How do I use the CLI?", Time: at("2026-01-15T10:00:00")},
				{Role: "assistant", Content: "Run the tool with --help", Time: at("2026-01-15T10:00:01"), Model: "gpt-4o"},
			},
		},
		{
			"#CTF v1 turns=2 fields=role,content,timestamp,model\n" +
				"user\twho are you\t2026-01-15T16:20:06\t-\n" +
				"assistant\tI'm an AI language model...\t2026-01-15T16:20:09\tgpt-4o\n",
			[]strata.Turn{
				{Role: "user", Content: "who are you", Time: at("2026-01-15T16:20:06")},
				{Role: "assistant", Content: "I'm an AI language model...", Time: at("2026-01-15T16:20:09"), Model: "gpt-4o"},
			},
		},
		{
			// The sketch's escapes, fractional seconds, an offset.
			"#CTF v1 turns=2 fields=role,content,timestamp,model\n" +
				"user\tline one␊␉indented\t2026-01-15T10:00:00.25\t-\n" +
				"assistant\tok\t2026-01-15T12:00:00+02:00\t",
			[]strata.Turn{
				{Role: "user", Content: "line one\n\tindented", Time: at("2026-01-15T10:00:00").Add(250 * time.Millisecond)},
				{Role: "assistant", Content: "ok", Time: at("2026-01-15T10:00:00")},
			},
		},
	} {
		got, err := DecodeTurns([]byte(c.in))
		if err != nil {
			t.Fatalf("%q: %v", c.in, err)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q:\n got %+v\nwant %+v", c.in, got, c.want)
		}
	}
}

func TestTurnsDecodeErrors(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"#CTF v1 fields=role,mood\nuser\thappy\n", []string{"line 1, field mood:", "not a turn field"}},
		{"#CTF v1 fields=time,timestamp\n", []string{"line 1, field timestamp:", "same turn field"}},
		{"#CTF v1 type=summaries count=0 fields=role\n", []string{"line 1:", "type=summaries is not a turn block"}},
		{"#CTF v1 fields=role,seq\nuser\t1\nuser\tx\n", []string{"line 3, field seq:", `"x" is not an integer`}},
		{"#CTF v1 fields=role,session\nuser\t1.5\n", []string{"line 2, field session:", "not an integer"}},
		{"#CTF v1 fields=role,tokens\nuser\t99999999999999999999\n", []string{"line 2, field tokens:"}},
		{"#CTF v1 fields=role,importance\nuser\thigh\n", []string{"line 2, field importance:", "not a number"}},
		{"#CTF v1 fields=role,time\nuser\tyesterday\n", []string{"line 2, field time:", "not an RFC 3339 time"}},
		{"#CTF v1 fields=role,time\nuser\t0001-01-01T00:00:00Z\n", []string{"line 2, field time:", "zero time"}},
		{"#CTF v1 fields=role,timestamp\nuser\t2026-13-01T00:00:00\n", []string{"line 2, field timestamp:"}},
		{"#CTF v1 fields=role,tool_calls\nuser\t[{\"name\":\n", []string{"line 2, field tool_calls:", "JSON"}},
		{"#CTF v1 fields=role,tool_calls\nuser\t[{\"name\":\"f\",\"arguments\":\"\\x\"}]\n", []string{"line 2, field tool_calls:"}},
		{"#CTF v1 fields=role,tool_results\nuser\t{}\n", []string{"line 2, field tool_results:"}},
		{"#CTF v1 fields=role,tags\nuser\ta|b\n", []string{"line 2, field tags:", "array of strings"}},
		{"#CTF v1 fields=role,metadata\nuser\t[1]\n", []string{"line 2, field metadata:", "object"}},
		{"#CTF v1 fields=role,content\nuser\tbad ␛x\n", []string{"line 2, field content:", "bad escape"}},
		{"#CTF v1 turns=2 fields=role,content\nuser\thi\n", []string{"line 1:", "turns=2 but the block has 1 rows"}},
	} {
		_, err := DecodeTurns([]byte(c.in))
		checkErr(t, c.in, err, c.want...)
	}
}

// Arguments written by hand as raw JSON are kept as written.
func TestTurnsRawArguments(t *testing.T) {
	in := "#CTF v1 fields=role,tool_calls\nassistant\t[{\"id\":\"c1\",\"name\":\"f\",\"arguments\":{\"a\": [1, 2]}},{\"name\":\"g\",\"arguments\":null}]\n"
	got, err := DecodeTurns([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []strata.ToolCall{{ID: "c1", Name: "f", Arguments: json.RawMessage(`{"a": [1, 2]}`)}, {Name: "g"}}
	if !reflect.DeepEqual(got[0].ToolCalls, want) {
		t.Fatalf("got %+v", got[0].ToolCalls)
	}
	b, _ := EncodeTurns(got, nil)
	if !strings.Contains(string(b), `"arguments":"{\"a\": [1, 2]}"`) {
		t.Errorf("re-encoded as %s", b)
	}
}
