package formats

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/strata-memory/strata"
)

// readAll reads every record of input, failing the test on any error.
func readAll(t *testing.T, format, name string, r io.Reader) []Record {
	t.Helper()
	rd, err := Open(format, name, r)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	var out []Record
	for {
		rec, err := rd.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("Next after %d records: %v", len(out), err)
		}
		if err := rec.Turn.Validate(); err != nil {
			t.Fatalf("record %d does not validate: %v", len(out), err)
		}
		if rec.Turn.ExtID == "" {
			t.Fatalf("record %d has no ext_id", len(out))
		}
		out = append(out, rec)
	}
}

func readFile(t *testing.T, format, path string) []Record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return readAll(t, format, path, f)
}

func mustTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

// firstErr returns the first error Next returns (nil if none before EOF).
func firstErr(format, name, input string) error {
	rd, err := Open(format, name, strings.NewReader(input))
	if err != nil {
		return err
	}
	for i := 0; i < 1000; i++ {
		_, err := rd.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
	return errors.New("no end")
}

func TestJSONL(t *testing.T) {
	recs := readFile(t, "jsonl", "testdata/chat.jsonl")
	if len(recs) != 5 {
		t.Fatalf("got %d records, want 5", len(recs))
	}
	want := []Record{
		{Conversation: "c1", Line: 1, Turn: strata.Turn{ExtID: "t1", SessionLabel: "morning", Role: "system",
			Content: "You are helpful.", Time: mustTime("2024-03-01T09:00:00Z")}},
		{Conversation: "c1", Line: 3, Turn: strata.Turn{ExtID: "42", SessionLabel: "morning", Role: "user", Name: "ana",
			Content: "What's the weather in Paris?", Time: time.Unix(1709283605, 0).UTC(), Importance: 0.9,
			Tags: []string{"weather", "paris"}, Metadata: map[string]any{"client": "cli", "n": 2.0}}},
		{Conversation: "c1", Line: 4, Turn: strata.Turn{SessionLabel: "1", Role: "assistant", Model: "gpt-4o",
			Time: mustTime("2024-03-01T09:00:06.5+01:00"),
			ToolCalls: []strata.ToolCall{
				{ID: "call_1", Name: "get_weather", Arguments: json.RawMessage(`{"city": "Paris"}`)},
				{ID: "call_2", Name: "get_time", Arguments: json.RawMessage(`{"tz":"CET"}`)},
				{Name: "noop"},
			}}},
		{Conversation: "c1", Line: 5, Turn: strata.Turn{Role: "tool", ToolResults: []strata.ToolResult{
			{CallID: "call_1", Name: "get_weather", Content: "18°C, sunny"},
			{CallID: "call_2", Content: `{"time":"10:00"}`, IsError: true},
		}}},
		{Conversation: "", Line: 6, Turn: strata.Turn{Role: "user", Content: "a turn for the caller's default conversation"}},
	}
	for i := range want {
		got := recs[i]
		if i >= 2 { // derived ext_ids
			if !strings.HasPrefix(got.Turn.ExtID, "h") {
				t.Errorf("record %d: ext_id %q is not derived", i, got.Turn.ExtID)
			}
			want[i].Turn.ExtID = strata.DeriveExtID(&want[i].Turn, 0)
			want[i].DerivedExtID = true
		}
		if !got.Turn.Time.Equal(want[i].Turn.Time) {
			t.Errorf("record %d: time %v, want %v", i, got.Turn.Time, want[i].Turn.Time)
		}
		got.Turn.Time = want[i].Turn.Time
		if !reflect.DeepEqual(got, want[i]) {
			t.Errorf("record %d:\n got %+v\nwant %+v", i, got, want[i])
		}
	}
}

func TestOpenAIObject(t *testing.T) {
	recs := readFile(t, "openai", "testdata/openai.json")
	if len(recs) != 6 {
		t.Fatalf("got %d records, want 6", len(recs))
	}
	want := []Record{
		{Line: 5, Turn: strata.Turn{Role: "system", Content: "Be brief."}},
		{Line: 6, Turn: strata.Turn{Role: "user", Name: "bob", Content: "What is in this picture?\nAnd how old is it?",
			Metadata: map[string]any{"images": []any{"https://example.com/cat.png"}}}},
		{Line: 11, Turn: strata.Turn{Role: "assistant", Model: "gpt-4o-mini", ToolCalls: []strata.ToolCall{
			{ID: "call_a", Name: "identify", Arguments: json.RawMessage(`{"url": "https://example.com/cat.png"}`)},
			{ID: "call_b", Name: "shout", Arguments: json.RawMessage(`not json`)},
		}}},
		{Line: 15, Turn: strata.Turn{Role: "tool", ToolResults: []strata.ToolResult{{CallID: "call_a", Content: "a cat, about 3 years old"}}}},
		{Line: 16, Turn: strata.Turn{Role: "tool", ToolResults: []strata.ToolResult{{Name: "shout", Content: "NOT JSON"}}}},
		{Line: 17, Turn: strata.Turn{Role: "assistant", Model: "gpt-4o-mini", Content: "A cat, about three."}},
	}
	for i := range want {
		want[i].Conversation = "chat-7"
		want[i].Turn.ExtID = strata.DeriveExtID(&want[i].Turn, 0)
		want[i].DerivedExtID = true
		if !reflect.DeepEqual(recs[i], want[i]) {
			t.Errorf("record %d:\n got %+v\nwant %+v", i, recs[i], want[i])
		}
	}
}

func TestOpenAIArray(t *testing.T) {
	recs := readFile(t, "openai", "testdata/openai_array.json")
	if len(recs) != 5 {
		t.Fatalf("got %d records, want 5", len(recs))
	}
	for i, r := range recs {
		if r.Line != i+2 {
			t.Errorf("record %d: line %d, want %d", i, r.Line, i+2)
		}
		if r.Conversation != "" || !r.Turn.Time.IsZero() {
			t.Errorf("record %d: conversation %q time %v, want none", i, r.Conversation, r.Turn.Time)
		}
	}
	// Messages 1,3 and 2,4 are identical: distinct, derived ids.
	if recs[1].Turn.ExtID == recs[3].Turn.ExtID || recs[3].Turn.ExtID != recs[1].Turn.ExtID+"-1" {
		t.Errorf("duplicate turns: ids %q and %q", recs[1].Turn.ExtID, recs[3].Turn.ExtID)
	}

	// An array of conversation objects, on one line: lines are all 1, the
	// field path gives the position.
	in := `[{"conversation":"a","messages":[{"role":"user","content":"x"}]},{"id":7,"messages":[{"role":"user","content":"y"},{"role":"user"}]}]`
	rd, _ := Open("openai", "convs.json", strings.NewReader(in))
	var convs []string
	var errs []string
	for {
		rec, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		convs = append(convs, rec.Conversation)
	}
	if !reflect.DeepEqual(convs, []string{"a", "7"}) {
		t.Errorf("conversations %q", convs)
	}
	wantErr := `convs.json:1: field "[1].messages[1].content": missing or empty (a turn needs content, tool calls or tool results)`
	if len(errs) != 1 || errs[0] != wantErr {
		t.Errorf("errors %q, want %q", errs, wantErr)
	}
}

func TestLoCoMoReal(t *testing.T) {
	path := os.Getenv("STRATA_LOCOMO")
	if path == "" {
		t.Skip("set STRATA_LOCOMO to the path of locomo-dev.json to run this test")
	}
	recs := readFile(t, "auto", path)
	turns := map[string]int{}
	sessions := map[string]map[string]bool{}
	var order []string
	byID := map[string]Record{}
	for _, r := range recs {
		if turns[r.Conversation] == 0 {
			order = append(order, r.Conversation)
			sessions[r.Conversation] = map[string]bool{}
		}
		turns[r.Conversation]++
		sessions[r.Conversation][r.Turn.SessionLabel] = true
		if r.Conversation == "conv-26" {
			byID[r.Turn.ExtID] = r
		}
	}
	wantTurns := map[string]int{"conv-26": 419, "conv-30": 369, "conv-41": 663, "conv-42": 629, "conv-43": 680}
	if !reflect.DeepEqual(order, []string{"conv-26", "conv-30", "conv-41", "conv-42", "conv-43"}) {
		t.Errorf("conversations %q", order)
	}
	if !reflect.DeepEqual(turns, wantTurns) {
		t.Errorf("turns per conversation %v, want %v", turns, wantTurns)
	}
	if n := len(sessions["conv-26"]); n != 19 {
		t.Errorf("conv-26 has %d sessions, want 19", n)
	}
	d11, d12 := byID["D1:1"], byID["D1:2"]
	if want := time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC); !d11.Turn.Time.Equal(want) {
		t.Errorf("D1:1 time %v, want %v", d11.Turn.Time, want)
	}
	if d := d12.Turn.Time.Sub(d11.Turn.Time); d != time.Second {
		t.Errorf("D1:2 is %v after D1:1, want 1s", d)
	}
	if d11.Turn.Role != "user" || d11.Turn.Name != "Caroline" || d12.Turn.Role != "assistant" || d12.Turn.Name != "Melanie" {
		t.Errorf("D1:1 %s/%s, D1:2 %s/%s", d11.Turn.Role, d11.Turn.Name, d12.Turn.Role, d12.Turn.Name)
	}
	if d11.Turn.SessionLabel != "session_1" || d11.Turn.Content != "Hey Mel! Good to see you! How have you been?" {
		t.Errorf("D1:1 %+v", d11.Turn)
	}
	d15 := byID["D1:5"].Turn
	if d15.Metadata["blip_caption"] != "a photo of a dog walking past a wall with a painting of a woman" ||
		d15.Metadata["image_query"] != "transgender pride flag mural" ||
		!reflect.DeepEqual(d15.Metadata["img_url"], []any{"https://i.redd.it/l7hozpetnhlb1.jpg"}) {
		t.Errorf("D1:5 metadata %v", d15.Metadata)
	}
	// Sessions come in numeric order and times never go back.
	var prev Record
	for i, r := range recs {
		if i > 0 && r.Conversation == prev.Conversation && r.Turn.Time.Before(prev.Turn.Time) {
			t.Fatalf("%s %s (%s) at %v is before %s at %v", r.Conversation, r.Turn.ExtID, r.Turn.SessionLabel, r.Turn.Time, prev.Turn.ExtID, prev.Turn.Time)
		}
		prev = r
	}
	if r := byID["D10:1"]; r.Line <= byID["D9:1"].Line || r.Turn.SessionLabel != "session_10" {
		t.Errorf("D10:1 line %d session %q, D9:1 line %d", r.Line, r.Turn.SessionLabel, byID["D9:1"].Line)
	}
}

func TestLoCoMoMini(t *testing.T) {
	recs := readFile(t, "locomo", "testdata/locomo-mini.json")
	var got []string
	for _, r := range recs {
		got = append(got, r.Conversation+" "+r.Turn.ExtID+" "+r.Turn.SessionLabel+" "+string(r.Turn.Role)+" "+r.Turn.Time.Format(time.RFC3339))
	}
	want := []string{
		"mini-1 D1:1 session_1 user 2023-05-08T13:56:00Z",
		"mini-1 D1:2 session_1 assistant 2023-05-08T13:56:01Z",
		"mini-1 D2:1 session_2 user 2023-09-13T00:09:00Z",
		"mini-1 D10:1 session_10 assistant 2024-03-01T09:05:00Z",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if l := []int{recs[0].Line, recs[1].Line, recs[2].Line, recs[3].Line}; !reflect.DeepEqual(l, []int{13, 14, 18, 9}) {
		t.Errorf("lines %v", l)
	}
	wantMeta := map[string]any{"img_url": []any{"https://example.com/a.jpg"}, "blip_caption": "a photo of a dog", "image_query": "dog park"}
	if !reflect.DeepEqual(recs[1].Turn.Metadata, wantMeta) || recs[0].Turn.Metadata != nil {
		t.Errorf("metadata %v / %v", recs[1].Turn.Metadata, recs[0].Turn.Metadata)
	}
}

func TestDerivedIDs(t *testing.T) {
	in := strings.Join([]string{
		`{"conversation":"a","role":"user","content":"hi"}`,
		`{"conversation":"a","role":"assistant","content":"hello"}`,
		`{"conversation":"a","role":"user","content":"hi"}`,
		`{"conversation":"b","role":"user","content":"hi"}`,
		`{"conversation":"a","role":"user","content":"hi"}`,
		`{"conversation":"a","role":"user","content":"hi","time":"2024-01-01T00:00:00Z"}`,
		`{"conversation":"a","role":"user","content":"hi","ext_id":"mine"}`,
	}, "\n")
	ids := func() []string {
		var out []string
		for _, r := range readAll(t, "jsonl", "ids.jsonl", strings.NewReader(in)) {
			out = append(out, r.Turn.ExtID)
		}
		return out
	}
	first, second := ids(), ids()
	if !reflect.DeepEqual(first, second) {
		t.Errorf("ids differ between reads:\n%q\n%q", first, second)
	}
	hi := strata.Turn{Role: "user", Content: "hi"}
	base := strata.DeriveExtID(&hi, 0)
	want := []string{base, first[1], base + "-1", base, base + "-2", first[5], "mine"}
	if !reflect.DeepEqual(first, want) {
		t.Errorf("ids %q, want %q", first, want)
	}
	if first[5] == base || first[1] == base {
		t.Errorf("different turns derive the same id: %q", first)
	}
}

func TestBadInput(t *testing.T) {
	long := strings.Repeat("x", 5000)
	cases := []struct {
		name, format, input, want string
	}{
		{"malformed line", "jsonl", "{\"role\":\"user\",\"content\":\"a\"}\n\n{\"role\":\"user\",", `f:3: malformed JSON: unexpected end of JSON input`},
		{"not an object", "jsonl", `["user","hi"]`, `f:1: want a JSON object per line, got an array`},
		{"unknown role", "jsonl", `{"role":"bot","content":"hi"}`, `f:1: field "role": unknown role "bot" (want user, assistant, system or tool)`},
		{"missing role", "jsonl", `{"content":"hi"}`, `f:1: field "role": missing (want user, assistant, system or tool)`},
		{"role not a string", "jsonl", `{"role":1,"content":"hi"}`, `f:1: field "role": want a string, got a number`},
		{"unknown field", "jsonl", `{"role":"user","contnet":"hi"}`, `f:1: field "contnet": unknown field (want conversation, session, ext_id, role, name, content, time, model, metadata, importance, tags, tool_calls, tool_results, tokens)`},
		{"invalid utf-8", "jsonl", "{\"role\":\"user\",\"content\":\"caf\xe9\"}", `f:1: field "content": invalid UTF-8`},
		{"lone surrogate", "jsonl", `{"role":"user","content":"a\ud800b"}`, `f:1: field "content": invalid UTF-8`},
		{"lone low surrogate", "jsonl", `{"role":"user","name":"\udc00","content":"x"}`, `f:1: field "name": invalid UTF-8`},
		{"bad time", "jsonl", `{"role":"user","content":"hi","time":"yesterday"}`, `f:1: field "time": cannot parse "yesterday" as a time (want RFC 3339)`},
		{"time in ms", "jsonl", `{"role":"user","content":"hi","time":1709283605000}`, `f:1: field "time": unix seconds 1709283605000 are out of range (want years 1 to 9999; milliseconds?)`},
		{"time type", "jsonl", `{"role":"user","content":"hi","time":true}`, `f:1: field "time": want an RFC 3339 string or unix seconds, got a boolean`},
		{"importance high", "jsonl", `{"role":"user","content":"hi","importance":1.5}`, `f:1: field "importance": 1.5 is outside 0..1`},
		{"importance negative", "jsonl", `{"role":"user","content":"hi","importance":-0.1}`, `f:1: field "importance": -0.1 is outside 0..1`},
		{"importance string", "jsonl", `{"role":"user","content":"hi","importance":"high"}`, `f:1: field "importance": want a number from 0 to 1, got a string`},
		{"empty message", "jsonl", `{"role":"assistant","content":""}`, `f:1: field "content": missing or empty (a turn needs content, tool calls or tool results)`},
		{"no content", "jsonl", `{"role":"user"}`, `f:1: field "content": missing or empty (a turn needs content, tool calls or tool results)`},
		{"tool call without name", "jsonl", `{"role":"assistant","tool_calls":[{"id":"1","arguments":{}}]}`, `f:1: field "tool_calls[0].name": missing`},
		{"tool call unknown field", "jsonl", `{"role":"assistant","tool_calls":[{"name":"f","args":{}}]}`, `f:1: field "tool_calls[0].args": unknown field (want id, name, arguments)`},
		{"tool calls not array", "jsonl", `{"role":"assistant","tool_calls":{"name":"f"}}`, `f:1: field "tool_calls": want an array of objects, got an object`},
		{"tool result is_error", "jsonl", `{"role":"tool","tool_results":[{"content":"x","is_error":"yes"}]}`, `f:1: field "tool_results[0].is_error": want a boolean, got a string`},
		{"metadata not object", "jsonl", `{"role":"user","content":"x","metadata":[1]}`, `f:1: field "metadata": want an object, got an array`},
		{"tags not strings", "jsonl", `{"role":"user","content":"x","tags":[1]}`, `f:1: field "tags": want an array of strings, got an array`},
		{"session object", "jsonl", `{"role":"user","content":"x","session":{}}`, `f:1: field "session": want a string or a number, got an object`},
		{"error after long line", "jsonl", `{"role":"user","content":"` + long + "\"}\n" + `{"role":"user","content":"x","time":"soon"}`, `f:2: field "time": cannot parse "soon" as a time (want RFC 3339)`},

		{"openai unknown role", "openai", "[\n{\"role\":\"user\",\"content\":\"a\"},\n{\"role\":\"robot\",\"content\":\"b\"}\n]", `f:3: field "[1].role": unknown role "robot" (want system, developer, user, assistant, tool or function)`},
		{"openai malformed", "openai", "[\n{\"role\":\"user\",\"content\":\"a\"},\n{\"role\":\"user\" \"content\":\"b\"}\n]", `f:3: malformed JSON: invalid character '"' after object key:value pair`},
		{"openai truncated", "openai", "[\n{\"role\":\"user\",\"content\":\"a\"},\n{\"role\":\"user\",", `f:3: malformed JSON: unexpected end of input`},
		{"openai trailing data", "openai", "[]\n[]", `f:2: malformed JSON: data after the closing ]`},
		{"openai not array", "openai", `"hi"`, `f:1: want a JSON array of messages or an object with "messages", got a string`},
		{"openai no messages", "openai", `{"id":"x"}`, `f:1: field "messages": missing`},
		{"openai bad utf-8", "openai", "{\"messages\":[\n{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"\xff\"}]}]}", `f:2: field "messages[0].content": invalid UTF-8`},
		{"openai empty", "openai", `[{"role":"assistant","content":null}]`, `f:1: field "[0].content": missing or empty (a turn needs content, tool calls or tool results)`},
		{"openai content type", "openai", `[{"role":"user","content":5}]`, `f:1: field "[0].content": want a string, an array of content parts or null, got a number`},
		{"openai tool call type", "openai", `[{"role":"assistant","tool_calls":[{"id":"1","type":"web","web":{}}]}]`, `f:1: field "[0].tool_calls[0].type": unsupported tool call type "web" (want function or custom)`},
		{"openai tool call name", "openai", `[{"role":"assistant","tool_calls":[{"id":"1","type":"function","function":{"arguments":"{}"}}]}]`, `f:1: field "[0].tool_calls[0].function.name": missing`},
		{"openai element not object", "openai", `[{"role":"user","content":"a"}, "b"]`, `f:1: field "[1]": want a JSON object, got a string`},

		{"locomo bad date", "locomo", `[{"sample_id":"s","conversation":{"speaker_a":"A","speaker_b":"B",` + "\n" + `"session_1_date_time":"last tuesday","session_1":[{"speaker":"A","dia_id":"D1:1","text":"hi"}]}}]`, `f:2: field "[0].conversation.session_1_date_time": cannot parse "last tuesday" as a date (want like "1:56 pm on 8 May, 2023")`},
		{"locomo missing date", "locomo", `[{"sample_id":"s","conversation":{"speaker_a":"A","speaker_b":"B","session_1":[{"speaker":"A","text":"hi"}]}}]`, `f:1: field "[0].conversation.session_1_date_time": missing (a session with turns needs a date)`},
		{"locomo stranger", "locomo", "[{\"sample_id\":\"s\",\"conversation\":{\"speaker_a\":\"A\",\"speaker_b\":\"B\",\"session_1_date_time\":\"1:56 pm on 8 May, 2023\",\"session_1\":[\n{\"speaker\":\"A\",\"text\":\"hi\"},\n{\"speaker\":\"C\",\"text\":\"yo\"}]}}]", `f:3: field "[0].conversation.session_1[1].speaker": "C" is neither speaker_a ("A") nor speaker_b ("B")`},
		{"locomo no sample id", "locomo", `[{"conversation":{}}]`, `f:1: field "[0].sample_id": missing`},
		{"locomo empty text", "locomo", `[{"sample_id":"s","conversation":{"speaker_a":"A","speaker_b":"B","session_1_date_time":"1:56 pm on 8 May, 2023","session_1":[{"speaker":"A","text":""}]}}]`, `f:1: field "[0].conversation.session_1[0].text": missing or empty (a turn needs content, tool calls or tool results)`},
		{"locomo not array", "locomo", `{"sample_id":"s"}`, `f:1: want a JSON array of LoCoMo samples, got an object`},

		{"auto nothing fits", "auto", `hello`, `f: cannot detect the format: the input starts with "hello", not a JSON array or object (want jsonl, openai or locomo)`},
		{"auto array of strings", "auto", `["a"]`, `f: cannot detect the format: the input is a JSON array of strings, not of objects (want openai messages or locomo samples)`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := firstErr(c.format, "f", c.input)
			if err == nil {
				t.Fatalf("no error, want %s", c.want)
			}
			if err.Error() != c.want {
				t.Errorf("error\n got %s\nwant %s", err, c.want)
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Errorf("%T is not a *ParseError", err)
			}
			if code := strata.ErrorCode(err); code != strata.EINVALID {
				t.Errorf("ErrorCode = %q, want %q", code, strata.EINVALID)
			}
		})
	}
}

// A bad record can be skipped: Next goes on with the next one. A syntax
// error in a JSON document ends it.
func TestNextAfterError(t *testing.T) {
	in := "{\"role\":\"user\",\"content\":\"a\"}\n{\"role\":\"bot\",\"content\":\"b\"}\nnot json\n{\"role\":\"user\",\"content\":\"c\"}\n"
	rd, _ := Open("jsonl", "f", strings.NewReader(in))
	var got []string
	for {
		rec, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			got = append(got, "err")
			continue
		}
		got = append(got, rec.Turn.Content)
	}
	if want := []string{"a", "err", "err", "c"}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}

	rd, _ = Open("openai", "f", strings.NewReader(`[{"role":"user","content":"a"},{"role":"x","content":"b"},{"role":"user","content":"c"}, oops]`))
	got = nil
	var last error
	for i := 0; i < 10; i++ {
		rec, err := rd.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				t.Fatal("EOF after a syntax error")
			}
			if last != nil && err.Error() == last.Error() {
				break
			}
			got = append(got, "err")
			last = err
			continue
		}
		got = append(got, rec.Turn.Content)
	}
	if want := []string{"a", "err", "c", "err"}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestParseError(t *testing.T) {
	e := &ParseError{File: "chat.jsonl", Line: 12, Field: "time", Msg: `cannot parse "yesterday" as a time (want RFC 3339)`}
	if got, want := e.Error(), `chat.jsonl:12: field "time": cannot parse "yesterday" as a time (want RFC 3339)`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	wrapped := errors.Join(errors.New("import"), e)
	if strata.ErrorCode(wrapped) != strata.EINVALID {
		t.Errorf("wrapped ParseError has code %q", strata.ErrorCode(wrapped))
	}
	if _, err := Open("csv", "x", strings.NewReader("")); strata.ErrorCode(err) != strata.EINVALID {
		t.Errorf("unknown format: %v", err)
	}
}

func TestHugeLine(t *testing.T) {
	content := strings.Repeat("0123456789abcdé ", 10<<20/17+1)
	var b bytes.Buffer
	b.WriteString(`{"role":"user","content":"short"}` + "\n")
	line, _ := json.Marshal(map[string]any{"role": "assistant", "content": content})
	b.Write(line)
	b.WriteString("\n" + `{"role":"user","content":"after"}` + "\n")
	if b.Len() < 10<<20 {
		t.Fatalf("input is only %d bytes", b.Len())
	}
	for _, format := range []string{"jsonl", "auto"} {
		recs := readAll(t, format, "big.jsonl", bytes.NewReader(b.Bytes()))
		if len(recs) != 3 || recs[1].Turn.Content != content || recs[2].Turn.Content != "after" || recs[2].Line != 3 {
			t.Fatalf("%s: got %d records", format, len(recs))
		}
	}
	// The same turn in an OpenAI array.
	arr, _ := json.Marshal([]map[string]any{{"role": "user", "content": "q"}, {"role": "assistant", "content": content}})
	recs := readAll(t, "auto", "big.json", bytes.NewReader(arr))
	if len(recs) != 2 || recs[1].Turn.Content != content {
		t.Fatalf("openai: got %d records", len(recs))
	}
}

func TestDetect(t *testing.T) {
	var real []byte
	if p := os.Getenv("STRATA_LOCOMO"); p != "" {
		real, _ = os.ReadFile(p)
	}
	cases := []struct {
		name, input, want string
	}{
		{"jsonl", `{"role":"user","content":"hi"}` + "\n" + `{"role":"user","content":"ho"}`, "jsonl"},
		{"jsonl model first", `{"model":"x","role":"user","content":"hi"}`, "jsonl"},
		{"openai object", "\n  {\"model\":\"m\",\n \"messages\":[]}", "openai"},
		{"openai array", `[{"role":"user","content":"hi"}]`, "openai"},
		{"openai empty array", ` [ ] `, "openai"},
		{"openai conversations", `[{"conversation":"c1","messages":[]}]`, "openai"},
		{"openai content first", `[{"content":"hi","role":"user"}]`, "openai"},
		{"locomo", `[{"sample_id":"s","conversation":{}}]`, "locomo"},
		{"locomo conversation first", `[{"conversation":{"speaker_a":"A"},"sample_id":"s"}]`, "locomo"},
		{"locomo qa first", `[{"qa":[{"question":"q"}],`, "locomo"},
		{"locomo real", string(real[:min(len(real), peekSize)]), "locomo"},
		{"empty", "", "jsonl"},
		{"blank", " \n\t ", "jsonl"},
		{"bom", "\xef\xbb\xbf[{\"role\":\"user\"}]", "openai"},
	}
	for _, c := range cases {
		if c.name == "locomo real" && len(real) == 0 {
			continue // STRATA_LOCOMO is not set
		}
		got, err := Detect([]byte(c.input))
		if err != nil || got != c.want {
			t.Errorf("%s: Detect = %q, %v; want %q", c.name, got, err, c.want)
		}
	}
	for _, bad := range []string{"hello", "42", `["a","b"]`, `[{"x":1}]`, `[[1]]`} {
		if got, err := Detect([]byte(bad)); err == nil || strata.ErrorCode(err) != strata.EINVALID {
			t.Errorf("Detect(%q) = %q, %v; want an EINVALID error", bad, got, err)
		}
	}
	// auto reads each test file as its own format.
	for path, n := range map[string]int{"testdata/chat.jsonl": 5, "testdata/openai.json": 6, "testdata/openai_array.json": 5, "testdata/locomo-mini.json": 4} {
		if recs := readFile(t, "auto", path); len(recs) != n {
			t.Errorf("auto %s: %d records, want %d", path, len(recs), n)
		}
	}
}

func TestEmpty(t *testing.T) {
	for _, format := range Formats() {
		for _, in := range []string{"", " \n\t\r\n", "\xef\xbb\xbf"} {
			rd, err := Open(format, "e", strings.NewReader(in))
			if err != nil {
				t.Fatalf("%s %q: Open: %v", format, in, err)
			}
			for i := 0; i < 2; i++ {
				if _, err := rd.Next(); err != io.EOF {
					t.Errorf("%s %q: Next = %v, want io.EOF", format, in, err)
				}
			}
		}
	}
}

func FuzzJSONL(f *testing.F) {
	seed, _ := os.ReadFile("testdata/chat.jsonl")
	f.Add(seed)
	f.Add([]byte(`{"role":"user","content":"a\ud800"}`))
	f.Add([]byte(`{"role":"assistant","tool_calls":[{"name":"f","arguments":"{\"a\":[1,2]}"}]}`))
	f.Add([]byte(`{"role":"user","content":"x","time":-1.5e3}` + "\n\n" + `{"role":"tool","tool_results":[{"content":[1]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, format := range []string{"jsonl", "auto"} {
			rd, err := Open(format, "fuzz", bytes.NewReader(data))
			if err != nil {
				continue
			}
			var last error
			for i := 0; ; i++ {
				if i > len(data)+2 {
					t.Fatalf("%s: more results than input bytes", format)
				}
				rec, err := rd.Next()
				if err == io.EOF || (err != nil && err == last) {
					break // the end, or an error that ends the input
				}
				if err != nil {
					if strata.ErrorCode(err) != strata.EINVALID {
						t.Fatalf("%s: error %v has code %q", format, err, strata.ErrorCode(err))
					}
					last = err
					continue
				}
				if err := rec.Turn.Validate(); err != nil {
					t.Fatalf("%s: record does not validate: %v", format, err)
				}
				if rec.Turn.ExtID == "" {
					t.Fatalf("%s: record without ext_id", format)
				}
			}
		}
	})
}

// FuzzOpen feeds the JSON document formats: no input makes a reader panic
// or loop, and every record validates.
func FuzzOpen(f *testing.F) {
	for _, p := range []string{"testdata/openai.json", "testdata/openai_array.json", "testdata/locomo-mini.json"} {
		b, _ := os.ReadFile(p)
		f.Add(b)
	}
	f.Add([]byte(`[{"conversation":"a","messages":[{"role":"tool","content":[{"type":"x"}]}]}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, format := range []string{"auto", "openai", "locomo"} {
			rd, err := Open(format, "fuzz", bytes.NewReader(data))
			if err != nil {
				continue
			}
			var last error
			for i := 0; ; i++ {
				if i > len(data)+2 {
					t.Fatalf("%s: more results than input bytes", format)
				}
				rec, err := rd.Next()
				if err == io.EOF || (err != nil && err == last) {
					break
				}
				if err != nil {
					if strata.ErrorCode(err) != strata.EINVALID {
						t.Fatalf("%s: error %v has code %q", format, err, strata.ErrorCode(err))
					}
					last = err
					continue
				}
				if err := rec.Turn.Validate(); err != nil || rec.Turn.ExtID == "" {
					t.Fatalf("%s: bad record %+v: %v", format, rec, err)
				}
			}
		}
	})
}

// TestToolArgumentsExact: tool-call arguments are the exact bytes given,
// in both formats that carry them: a string's text whether or not it is
// JSON, spacing kept; any other JSON value as written.
func TestToolArgumentsExact(t *testing.T) {
	cases := []struct{ wire, want string }{
		{`"{\"a\": tru"`, `{"a": tru`},
		{`" {\"a\" :  true}\n"`, " {\"a\" :  true}\n"},
		{`{ "a" :  [1, 2] }`, `{ "a" :  [1, 2] }`},
		{`"\"quoted\""`, `"quoted"`},
		{`"   "`, `   `},
		{`""`, ``},
		{`null`, ``},
	}
	for _, c := range cases {
		for _, in := range []struct{ format, text string }{
			{"jsonl", `{"role":"assistant","tool_calls":[{"id":"1","name":"f","arguments":` + c.wire + `}]}`},
			{"openai", `[{"role":"assistant","tool_calls":[{"id":"1","type":"function","function":{"name":"f","arguments":` + c.wire + `}}]}]`},
		} {
			r, err := Open(in.format, "f", strings.NewReader(in.text))
			if err != nil {
				t.Fatal(err)
			}
			rec, err := r.Next()
			if err != nil {
				t.Errorf("%s %s: %v", in.format, c.wire, err)
				continue
			}
			if got := string(rec.Turn.ToolCalls[0].Arguments); got != c.want {
				t.Errorf("%s %s: arguments %q, want %q", in.format, c.wire, got, c.want)
			}
		}
	}
	r, _ := Open("jsonl", "f", strings.NewReader(`{"role":"assistant","tool_calls":[{"name":"f","arguments":"{\"a\":\"\ud800\"}"}]}`))
	if _, err := r.Next(); err == nil || !strings.Contains(err.Error(), `invalid UTF-8`) {
		t.Errorf("a lone surrogate in arguments: %v, want an error naming the field", err)
	}
}
