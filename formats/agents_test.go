package formats

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/strata-memory/strata"
)

const (
	claudeFixture = "testdata/claude/projects/-home-ana-shop/5a1e0c2b-7d4f-4b8e-9c3a-2f6d8e1b0a94.jsonl"
	codexFixture  = "testdata/codex-rollout-2026-03-02T10-00-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl"
	chatgptFix    = "testdata/chatgpt-conversations.json"
	anthropicFix  = "testdata/anthropic-request.json"
)

// shape is what a test checks of each record: role, conversation,
// session, content, tool calls and results, time.
func roles(recs []Record) string {
	var b []string
	for _, r := range recs {
		b = append(b, string(r.Turn.Role))
	}
	return strings.Join(b, " ")
}

// checkPairs checks that every tool result answers an earlier call by id,
// under the name of that call, and that every call is answered, except
// those named in open.
func checkPairs(t *testing.T, recs []Record, open ...string) {
	t.Helper()
	calls := map[string]string{}
	for _, r := range recs {
		for _, c := range r.Turn.ToolCalls {
			calls[c.ID] = c.Name
		}
		for _, res := range r.Turn.ToolResults {
			name, ok := calls[res.CallID]
			if !ok || name != res.Name {
				t.Errorf("line %d: result for %q (%s) answers no earlier call", r.Line, res.CallID, res.Name)
			}
			delete(calls, res.CallID)
		}
	}
	for _, id := range open {
		delete(calls, id)
	}
	if len(calls) > 0 {
		t.Errorf("calls without results: %v", calls)
	}
}

// checkTimes checks that every record has a time and that times never go
// backwards.
func checkTimes(t *testing.T, recs []Record) {
	t.Helper()
	var prev time.Time
	for _, r := range recs {
		if r.Turn.Time.IsZero() || r.Turn.Time.Before(prev) {
			t.Errorf("line %d: time %v after %v", r.Line, r.Turn.Time, prev)
		}
		prev = r.Turn.Time
	}
}

func countsOf(t *testing.T, format, path string) Counts {
	t.Helper()
	return recs2counts(t, path)
}

func TestClaudeCode(t *testing.T) {
	recs := readFile(t, Auto, claudeFixture)
	if got, want := roles(recs), "user assistant tool tool assistant system user user assistant"; got != want {
		t.Fatalf("roles %q, want %q", got, want)
	}
	checkPairs(t, recs)
	checkTimes(t, recs)
	for _, r := range recs {
		if r.Conversation != "-home-ana-shop" {
			t.Errorf("line %d: conversation %q, want the project folder's name", r.Line, r.Conversation)
		}
	}
	// The four records of message msg_A1 are one turn: its text, its
	// thinking, both tool calls, the first record's uuid and time.
	a := recs[1].Turn
	if a.ExtID != "a-1" || recs[1].Line != 3 || a.Content != "I'll run the checkout tests and read the handler." ||
		a.Metadata["thinking"] != "Run the test first." || a.Metadata["message_id"] != "msg_A1" ||
		len(a.ToolCalls) != 2 || a.ToolCalls[0].Name != "Bash" || a.ToolCalls[1].ID != "toolu_2" ||
		string(a.ToolCalls[1].Arguments) != `{"file_path":"/home/ana/shop/checkout/total.go"}` ||
		a.Model != "claude-sonnet-4-5" || !a.Time.Equal(mustTime("2026-03-02T09:00:02Z")) {
		t.Errorf("merged assistant turn: %+v", a)
	}
	if res := recs[2].Turn.ToolResults[0]; !res.IsError || res.Name != "Bash" || !strings.Contains(res.Content, "want 1199") || recs[2].Turn.ExtID != "u-2" {
		t.Errorf("error result: %+v", recs[2].Turn)
	}
	if res := recs[3].Turn.ToolResults[0]; res.IsError || !strings.HasPrefix(res.Content, "func Total") {
		t.Errorf("block result: %+v", res)
	}
	if s := recs[5].Turn; s.Metadata["compact_summary"] != true || !strings.Contains(s.Content, "rounds VAT down") {
		t.Errorf("compact summary: %+v", s)
	}
	for i, r := range recs {
		want := "5a1e0c2b-7d4f-4b8e-9c3a-2f6d8e1b0a94"
		if i >= 7 {
			want += "/agent-b7c1"
			if r.Turn.Metadata["sidechain"] != true || r.Turn.Metadata["agent_id"] != "b7c1" {
				t.Errorf("sidechain record %d: %+v", i, r.Turn.Metadata)
			}
		}
		if r.Turn.SessionLabel != want {
			t.Errorf("record %d: session %q, want %q", i, r.Turn.SessionLabel, want)
		}
	}
	c := countsOf(t, Auto, claudeFixture)
	if c.Records != 18 || c.Kept != 12 || c.Turns != 9 || c.SkippedTotal() != 6 ||
		c.Skipped["file-history-snapshot"] != 1 || c.Skipped["queue-operation"] != 1 || c.Skipped["meta"] != 1 ||
		c.Skipped["system/compact_boundary"] != 1 || c.Skipped["system/stop_hook_summary"] != 1 || c.Skipped["summary"] != 1 {
		t.Errorf("counts %+v", c)
	}
	// Read from elsewhere (standard input), the conversation comes from
	// the working directory, named as Claude Code names its folder.
	data, _ := os.ReadFile(claudeFixture)
	for _, r := range readAll(t, Auto, "stdin", strings.NewReader(string(data))) {
		if r.Conversation != "-home-ana-shop" {
			t.Fatalf("from stdin: conversation %q", r.Conversation)
		}
	}
	if got := projectName("/Users/ana/my.app_2"); got != "-Users-ana-my-app-2" {
		t.Errorf("projectName = %q", got)
	}
	if got := projectFolder("/h/.claude/projects/-h-x/5a1e/subagents/agent-b7c1.jsonl"); got != "-h-x" {
		t.Errorf("projectFolder of a subagent file = %q", got)
	}
}

// TestClaudeCodeWatchedTail reads a file from the middle of an assistant
// message, as a reader started at a saved offset would: the rest of the
// message is a turn of its own, under the uuid of its first record, so
// reading the whole file later adds the merged turn without losing either.
func TestClaudeCodeWatchedTail(t *testing.T) {
	data, _ := os.ReadFile(claudeFixture)
	lines := strings.SplitAfter(string(data), "\n")
	recs := readAll(t, Auto, claudeFixture, strings.NewReader(strings.Join(lines[4:], "")))
	if recs[0].Turn.ExtID != "a-3" || len(recs[0].Turn.ToolCalls) != 2 || recs[0].Conversation != "-home-ana-shop" {
		t.Errorf("tail: %+v", recs[0])
	}
}

func TestCodex(t *testing.T) {
	recs := readFile(t, Auto, codexFixture)
	if got, want := roles(recs), "system system user assistant tool assistant tool assistant tool assistant tool assistant system"; got != want {
		t.Fatalf("roles %q, want %q", got, want)
	}
	checkPairs(t, recs)
	checkTimes(t, recs)
	for _, r := range recs {
		if r.Conversation != "-srv-api" || r.Turn.SessionLabel != "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b" {
			t.Errorf("line %d: conversation %q session %q", r.Line, r.Conversation, r.Turn.SessionLabel)
		}
	}
	a := recs[3].Turn
	if a.Metadata["reasoning"] != "**Checking the health handler**" || a.Model != "gpt-5.1-codex" || len(a.ToolCalls) != 1 ||
		a.ToolCalls[0].Name != "exec_command" || !json.Valid(a.ToolCalls[0].Arguments) || recs[3].Line != 7 {
		t.Errorf("reasoning and exec_command: %+v (line %d)", a, recs[3].Line)
	}
	if res := recs[4].Turn.ToolResults[0]; res.IsError || res.Name != "exec_command" || !strings.HasSuffix(res.Content, "503") || recs[4].Turn.Metadata["exit_code"] != 0.0 {
		t.Errorf("exec output: %+v %v", res, recs[4].Turn.Metadata)
	}
	if c := recs[5].Turn.ToolCalls[0]; c.Name != "apply_patch" || !strings.HasPrefix(string(c.Arguments), "*** Begin Patch\n") {
		t.Errorf("apply_patch call: %+v", c)
	}
	if res := recs[6].Turn.ToolResults[0]; res.Content != "Success. Updated the following files:\nM health.go\n" || res.IsError {
		t.Errorf("apply_patch output (older JSON wrapping): %+v", res)
	}
	if res := recs[8].Turn.ToolResults[0]; !res.IsError || recs[8].Turn.Metadata["exit_code"] != 1.0 {
		t.Errorf("failed command: %+v %v", res, recs[8].Turn.Metadata)
	}
	if c := recs[9].Turn.ToolCalls[0]; c.Name != "update_plan" {
		t.Errorf("update_plan: %+v", c)
	}
	if s := recs[12].Turn; s.Metadata["compact_summary"] != true {
		t.Errorf("compacted: %+v", s)
	}
	c := countsOf(t, Auto, codexFixture)
	if c.Records != 19 || c.Kept != 14 || c.Turns != 13 || c.SkippedTotal() != 5 || c.Skipped["event_msg/token_count"] != 1 {
		t.Errorf("counts %+v", c)
	}
}

func TestChatGPT(t *testing.T) {
	recs := readFile(t, Auto, chatgptFix)
	if got, want := roles(recs), "user assistant user assistant tool assistant user assistant"; got != want {
		t.Fatalf("roles %q, want %q (the active branch only)", got, want)
	}
	checkPairs(t, recs)
	checkTimes(t, recs[:6])
	checkTimes(t, recs[6:])
	ids := []string{"u1", "a1b", "u2", "c1", "x1", "a2", "q", "ans"}
	for i, r := range recs {
		conv := "6789abcd-0000-4000-8000-000000000001"
		if i >= 6 {
			conv = "6789abcd-0000-4000-8000-000000000002"
		}
		if r.Turn.ExtID != ids[i] || r.Conversation != conv {
			t.Errorf("record %d: ext_id %q conversation %q", i, r.Turn.ExtID, r.Conversation)
		}
	}
	if u := recs[0].Turn; !u.Time.Equal(time.Unix(1767261601, 5e8)) || u.Metadata["conversation_title"] != "Sourdough schedule" {
		t.Errorf("first turn: %+v", u)
	}
	if img := recs[2].Turn.Metadata["images"]; img == nil || recs[2].Turn.Content != "Is it ready? And how many grams of salt for 1 kg of flour at 2%?" {
		t.Errorf("image message: %+v", recs[2].Turn)
	}
	if c := recs[3].Turn.ToolCalls; len(c) != 1 || c[0].Name != "python" || string(c[0].Arguments) != "print(1000 * 0.02)" || recs[3].Turn.Model != "o3" {
		t.Errorf("code call: %+v", recs[3].Turn)
	}
	if res := recs[4].Turn.ToolResults; len(res) != 1 || res[0].CallID != "c1" || res[0].Content != "20.0" {
		t.Errorf("execution output: %+v", res)
	}
	if !recs[5].Turn.Time.Equal(recs[4].Turn.Time) {
		t.Errorf("a message without create_time takes the previous one's: %v", recs[5].Turn.Time)
	}
	c := countsOf(t, Auto, chatgptFix)
	if c.Records != 13 || c.Kept != 8 || c.Turns != 8 || c.Skipped["other branch"] != 1 || c.Skipped["hidden"] != 1 || c.Skipped["thoughts"] != 1 || c.Skipped["no message"] != 2 {
		t.Errorf("counts %+v", c)
	}
}

func TestAnthropic(t *testing.T) {
	recs := readFile(t, Auto, anthropicFix)
	if got, want := roles(recs), "system user assistant tool user assistant tool assistant"; got != want {
		t.Fatalf("roles %q, want %q", got, want)
	}
	checkPairs(t, recs)
	a := recs[2].Turn
	if a.Content != "Checking CI." || a.Metadata["thinking"] != "Check CI first." || a.Model != "claude-sonnet-4-5" ||
		string(a.ToolCalls[0].Arguments) != `{"cmd": "gh run list --limit 1"}` {
		t.Errorf("assistant: %+v", a)
	}
	if res := recs[6].Turn.ToolResults[0]; !res.IsError || res.Content != "remote: Permission denied (403)" || res.Name != "run" {
		t.Errorf("error result: %+v", res)
	}
	if recs[4].Turn.Content != "Also push the tag." || recs[0].Turn.Content != "You are a release assistant for the billing service." {
		t.Errorf("text beside a tool result, system: %+v %+v", recs[4].Turn, recs[0].Turn)
	}
	// A bare list of Anthropic messages, as strata compact reads and
	// writes them, is detected too.
	list := `[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"ls","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"a.go"}]}]`
	if f, _ := Detect([]byte(list)); f != Anthropic {
		t.Errorf("Detect(list) = %q", f)
	}
	recs = readAll(t, Auto, "list.json", strings.NewReader(list))
	if roles(recs) != "user assistant tool" {
		t.Errorf("list roles %q", roles(recs))
	}
	checkPairs(t, recs)
}

func TestDetectAgents(t *testing.T) {
	for path, want := range map[string]string{claudeFixture: ClaudeCode, codexFixture: Codex, chatgptFix: ChatGPT, anthropicFix: Anthropic} {
		data, _ := os.ReadFile(path)
		if got, err := Detect(data); got != want || err != nil {
			t.Errorf("%s: Detect = %q, %v; want %q", path, got, err, want)
		}
	}
	for _, c := range []struct{ in, want string }{
		{`{"type":"queue-operation","operation":"enqueue","timestamp":"2026-01-02T15:27:24.302Z"}`, ClaudeCode},
		{`{"parentUuid":null,"type":"user"}`, ClaudeCode},
		{`{"type":"summary","summary":"x","leafUuid":"u"}`, ClaudeCode},
		{`{"timestamp":"t","type":"event_msg","payload":{"type":"token_count"}}`, Codex},
		{`{"title":"t","mapping":{}}`, ChatGPT},
		{`[{"title":"t","create_time":1,"mapping":{}}]`, ChatGPT},
		{`{"model":"m","system":"be brief","messages":[]}`, Anthropic},
		// What other formats read stays as it was.
		{`{"role":"user","content":"the type \"tool_use\" and \"system\": words"}`, JSONL},
		{`{"messages":[{"role":"user","content":"\"type\":\"tool_use\""}]}`, OpenAI},
		{`[{"role":"system","content":"s"},{"role":"user","content":"u"}]`, OpenAI},
		{`{"conversation":"c","session":"s","role":"user","content":"hi"}`, JSONL},
	} {
		if got, err := Detect([]byte(c.in)); got != c.want || err != nil {
			t.Errorf("Detect(%s) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

// TestAgentsBadInput checks that malformed records are refused with the
// file, the line and the field, and that reading goes on after them.
func TestAgentsBadInput(t *testing.T) {
	cc := func(extra string) string {
		return `{"type":"user","uuid":"u1","sessionId":"s","cwd":"/w","timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"ok"}}` + "\n" + extra + "\n" +
			`{"type":"user","uuid":"u3","sessionId":"s","cwd":"/w","timestamp":"2026-01-01T00:00:02Z","message":{"role":"user","content":"after"}}` + "\n"
	}
	cx := func(extra string) string {
		return `{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"s","cwd":"/w"}}` + "\n" + extra + "\n"
	}
	cases := []struct {
		format, input, want string
	}{
		{ClaudeCode, cc(`{"type":"user","sessionId":"s","timestamp":"2026-01-01T00:00:01Z","message":{"role":"user","content":"x"}}`), `s.jsonl:2: field "uuid": missing`},
		{ClaudeCode, cc(`{"type":"user","uuid":"u2","sessionId":"s","timestamp":"yesterday","message":{"role":"user","content":"x"}}`), `s.jsonl:2: field "timestamp": cannot parse "yesterday" as a time (want RFC 3339)`},
		{ClaudeCode, cc(`{"type":"user","uuid":"u2","sessionId":"s","message":{"role":"user","content":[{"type":"tool_result","content":"x"}]}}`), `s.jsonl:2: field "message.content[0].tool_use_id": missing`},
		{ClaudeCode, cc(`{"type":"assistant","uuid":"u2","sessionId":"s","message":{"id":"m","content":[{"type":"tool_use","id":"t","input":{}}]}}`), `s.jsonl:2: field "message.content[0].name": missing`},
		{ClaudeCode, cc(`{"type":"user","uuid":"u2","sessionId":"s"}`), `s.jsonl:2: field "message": missing`},
		{ClaudeCode, cc(`{"type":"user","uuid":"u2",`), `s.jsonl:2: malformed JSON`},
		{ClaudeCode, cc(`{"type":"user","uuid":"u2","sessionId":"s","message":{"role":"user","content":"\udc00"}}`), `s.jsonl:2: field "message.content": invalid UTF-8`},
		{Codex, cx(`{"timestamp":"2026-01-01T00:00:01Z","type":"response_item","payload":{"type":"function_call","arguments":"{}","call_id":"c"}}`), `s.jsonl:2: field "payload.name": missing`},
		{Codex, cx(`{"timestamp":"2026-01-01T00:00:01Z","type":"response_item","payload":{"type":"function_call_output","output":"x"}}`), `s.jsonl:2: field "payload.call_id": missing`},
		{Codex, cx(`{"timestamp":"2026-01-01T00:00:01Z","type":"response_item"}`), `s.jsonl:2: field "payload": missing`},
		{ClaudeCode, cc(`{"type":"user","uuid":"u2","sessionId":"s","timestamp":"0001-01-01T00:00:00Z","message":{"role":"user","content":"x"}}`), `s.jsonl:2: field "timestamp": "0001-01-01T00:00:00Z" is the zero time, which reads as no time`},
		{ClaudeCode, cc(`{"type":"user","uuid":"u2","sessionId":"s","timestamp":"0001-01-01T00:00:00.000Z","message":{"role":"user","content":"x"}}`), `s.jsonl:2: field "timestamp": "0001-01-01T00:00:00.000Z" is the zero time`},
		{ClaudeCode, cc(`{"type":"user","uuid":"u2","sessionId":"s","message":{"role":"user","content":"a\u0000b"}}`), `s.jsonl:2: field "content": contains a NUL character`},
		{Codex, cx(`{"timestamp":"0001-01-01T00:00:00Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"x"}]}}`), `s.jsonl:2: field "timestamp": "0001-01-01T00:00:00Z" is the zero time, which reads as no time`},
		{Codex, cx(`{"timestamp":"2026-01-01T00:00:01Z","type":"response_item","payload":{"type":"message","role":"robot","content":[]}}`), `s.jsonl:2: field "payload.role": unknown role "robot"`},
		{ChatGPT, `[{"id":"c","mapping":{"a":{"message":null,"parent":null}}}]`, `s.jsonl:1: field "[0].current_node": missing`},
		{ChatGPT, "[{\"id\":\"c\",\"current_node\":\"b\",\n\"mapping\":{\n\"a\":{\"message\":null,\"parent\":null},\n\"b\":{\"message\":{\"id\":\"b\",\"author\":{\"role\":\"user\"},\"create_time\":\"noon\",\"content\":{\"content_type\":\"text\",\"parts\":[\"x\"]}},\"parent\":\"a\"}}}]",
			`s.jsonl:4: field "[0].mapping[\"b\"].message.create_time": want unix seconds, got a string`},
		{ChatGPT, `[{"id":"c","current_node":"b","mapping":{"b":{"message":null,"parent":"zz"}}}]`, `field "[0].mapping": node "zz" (on the branch of current_node) is missing`},
		{Anthropic, "{\"system\":\"s\",\"messages\":[\n{\"role\":\"user\",\"content\":\"hi\"},\n{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"content\":\"x\"}]}]}", `s.jsonl:3: field "messages[1].content[0].tool_use_id": missing`},
		{Anthropic, `{"system":"s","messages":[{"role":"robot","content":"hi"}]}`, `field "messages[0].role": unknown role "robot"`},
	}
	for _, c := range cases {
		err := firstErr(c.format, "s.jsonl", c.input)
		var pe *ParseError
		if err == nil || !errors.As(err, &pe) || !strings.Contains(err.Error(), c.want) || strata.ErrorCode(err) != strata.EINVALID {
			t.Errorf("%s %.60q: error %v, want one containing %q", c.format, c.input, err, c.want)
		}
	}
	// After a bad line the next records are read.
	rd, _ := Open(ClaudeCode, "s.jsonl", strings.NewReader(cc(`{"type":"user"}`)))
	var got []string
	for {
		rec, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			got = append(got, "error")
			continue
		}
		got = append(got, rec.Turn.ExtID)
	}
	if strings.Join(got, " ") != "u1 error u3" {
		t.Errorf("records around a bad line: %v", got)
	}
}
