package compact_test

import (
	"strings"
	"testing"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/compact"
)

// A document with fields and blocks strata does not know, odd whitespace
// and escapes.
var oddOpenAI = `{
  "model": "gpt-5",  "temperature": 0.2,
  "tools": [{"type":"function","function":{"name":"bash","parameters":{"type":"object"}}}],
  "messages": [
    {"role": "system", "content": "Be \u0062rief & <careful>"},
    {"role":"user","content":[{"type":"text","text":"look"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA","detail":"low"}},{"type":"input_audio","input_audio":{"data":"UklGR","format":"wav"}}], "name":"maya"},
    {"role":"assistant","content":null,"refusal":null,"annotations":[],"tool_calls":[{"id":"call_1","type":"function","function":{"name":"bash","arguments":"{\"cmd\":\"ls -la\"}"}},{"id":"call_2","type":"custom","custom":{"name":"patch","input":"*** Begin"}}]},
    {"role":"tool","tool_call_id":"call_1","content":"OLD_OUTPUT_1","x_vendor":{"k":[1,2,3]}},
    {"role":"tool","tool_call_id":"call_2","content":"OLD_OUTPUT_2"},
    {"role":"assistant","content":"ok","audio":{"id":"a1"}},
    {"role":"user","content":"next"}
  ],
  "metadata": {"trace":"t-1"}
}`

var oddAnthropic = `{"model":"claude-x","max_tokens":4096,
 "system":[{"type":"text","text":"You are terse.","cache_control":{"type":"ephemeral"}}],
 "messages":[
  {"role":"user","content":[{"type":"text","text":"hi"},{"type":"document","source":{"type":"text","data":"doc"}},{"type":"future_block","payload":{"a":"\u00e9"}}]},
  {"role":"assistant","content":[{"type":"thinking","thinking":"hmm","signature":"SIG"},{"type":"redacted_thinking","data":"ENC"},{"type":"server_tool_use","id":"s1","name":"web_search","input":{"q":"x"}},{"type":"tool_use","id":"tu_1","name":"bash","input":{"cmd":"make"},"cache_control":{"type":"ephemeral"}}]},
  {"role":"user","content":[{"type":"tool_result","tool_use_id":"tu_1","content":[{"type":"text","text":"OLD_OUTPUT_1","citations":null}],"x_extra":true},{"type":"text","text":"and also"}]},
  {"role":"assistant","content":"fine","stop_reason":"end_turn"},
  {"role":"user","content":"next"}
 ],
 "stream":false}`

func TestRoundTripUnchangedIsByteForByte(t *testing.T) {
	docs := map[compact.Provider]string{compact.OpenAI: oddOpenAI, compact.Anthropic: oddAnthropic}
	for _, p := range providers {
		t.Run(string(p), func(t *testing.T) {
			tr := mustParse(t, p, docs[p])
			if got := string(tr.JSON()); got != docs[p] {
				t.Fatalf("round trip changed the document:\n%s", got)
			}
			// A clone (as Compact makes) that changes nothing also does.
			if got := string(tr.Clone().JSON()); got != docs[p] {
				t.Fatal("clone changed the document")
			}
		})
	}
}

// After a change, every message and block strata did not change keeps its
// bytes, and the changed message keeps its unknown fields.
func TestRoundTripUnknownSurvivesPrune(t *testing.T) {
	docs := map[compact.Provider]string{compact.OpenAI: oddOpenAI, compact.Anthropic: oddAnthropic}
	for _, p := range providers {
		t.Run(string(p), func(t *testing.T) {
			cfg := compact.DefaultConfig()
			cfg.KeepLastToolResults = 0
			cfg.ToolHardClearAfter = 0
			cfg.ToolSoftTrimChars, cfg.ToolSoftTrimHead, cfg.ToolSoftTrimTail = 110, 3, 3
			// Make the results long enough to trim: re-parse with longer outputs.
			long := strings.Repeat("L", 200)
			doc := strings.ReplaceAll(docs[p], "OLD_OUTPUT_1", "OLD_OUTPUT_1"+long)
			doc = strings.ReplaceAll(doc, "OLD_OUTPUT_2", "OLD_OUTPUT_2"+long)
			tr := mustParse(t, p, doc)
			before := make([]string, len(tr.Messages))
			for i, m := range tr.Messages {
				before[i] = string(m.JSON())
			}
			st := prune(t, tr, cfg)
			if st.Trimmed == 0 {
				t.Fatal("nothing trimmed")
			}
			out := marshal(t, tr)
			changed := 0
			for i, m := range tr.Messages {
				if string(m.JSON()) == before[i] {
					if !strings.Contains(out, before[i]) {
						t.Fatalf("unchanged message %d is not in the output byte for byte", i)
					}
					continue
				}
				changed++
				if !m.IsToolResult() {
					t.Fatalf("message %d (%s) changed", i, m.Role())
				}
			}
			if changed != st.Trimmed && p == compact.OpenAI {
				t.Fatalf("%d messages changed, %d trimmed", changed, st.Trimmed)
			}
			// Unknown fields and blocks, top-level fields, escapes.
			for _, want := range map[compact.Provider][]string{
				compact.OpenAI: {`"x_vendor":{"k":[1,2,3]}`, `"model": "gpt-5"`, `"metadata": {"trace":"t-1"}`,
					`"temperature": 0.2`, `"Be \u0062rief & <careful>"`, `"audio":{"id":"a1"}`},
				compact.Anthropic: {`"x_extra":true`, `"citations":null`, `{"type":"text","text":"and also"}`,
					`"system":[{"type":"text","text":"You are terse.","cache_control":{"type":"ephemeral"}}]`,
					`{"type":"future_block","payload":{"a":"\u00e9"}}`, `"stream":false`},
			}[p] {
				if !strings.Contains(out, want) {
					t.Fatalf("output lost %s:\n%s", want, out)
				}
			}
			if !strings.Contains(out, `"OLD\n\n--- trimmed (kept 3 head + 3 tail of 212 chars) ---\n\nLLL"`) {
				t.Fatalf("no trimmed result in output:\n%s", out)
			}
		})
	}
}

func TestParseErrorsNameIndexAndField(t *testing.T) {
	tests := []struct {
		name string
		p    compact.Provider
		doc  string
		want string
	}{
		{"not json", compact.OpenAI, `[{"role":"user",}]`, "malformed JSON at byte"},
		{"scalar document", compact.OpenAI, `"hello"`, `want a JSON array of messages or an object with "messages", got a string`},
		{"no messages", compact.Anthropic, `{"model":"x"}`, "messages: missing"},
		{"messages not array", compact.Anthropic, `{"messages":{}}`, "messages: want an array of messages, got an object"},
		{"message not object", compact.OpenAI, `[{"role":"user","content":"a"}, 7]`, "messages[1]: want a message object, got a number"},
		{"no role", compact.OpenAI, `[{"content":"a"}]`, "messages[0].role: missing"},
		{"role not string", compact.OpenAI, `[{"role":1}]`, "messages[0].role: want a string, got a number"},
		{"unknown openai role", compact.OpenAI, `[{"role":"function","content":"a"}]`, `messages[0].role: unknown role "function"`},
		{"anthropic system role", compact.Anthropic, `[{"role":"system","content":"a"}]`, `messages[0].role: "system" is not a message role here`},
		{"content wrong type", compact.OpenAI, `[{"role":"user","content":5}]`, "messages[0].content: want a string or an array of content parts, got a number"},
		{"part not object", compact.OpenAI, `[{"role":"user","content":["a"]}]`, "messages[0].content[0]: want a content part object, got a string"},
		{"part without type", compact.Anthropic, `[{"role":"user","content":[{"text":"a"}]}]`, "messages[0].content[0].type: missing"},
		{"text without text", compact.Anthropic, `[{"role":"user","content":[{"type":"text"}]}]`, "messages[0].content[0].text: missing"},
		{"anthropic content missing", compact.Anthropic, `[{"role":"user"}]`, "messages[0].content: missing"},
		{"tool without id", compact.OpenAI, `[{"role":"tool","content":"x"}]`, "messages[0].tool_call_id: missing"},
		{"call without id", compact.OpenAI, `[{"role":"assistant","tool_calls":[{"type":"function","function":{"name":"a","arguments":"{}"}}]}]`, "messages[0].tool_calls[0].id: missing"},
		{"call without name", compact.OpenAI, `[{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"arguments":"{}"}}]}]`, "messages[0].tool_calls[0].function.name: missing"},
		{"calls on user", compact.OpenAI, `[{"role":"user","content":"a","tool_calls":[]}]`, "messages[0].tool_calls: only assistant messages make tool calls"},
		{"tool_result without id", compact.Anthropic,
			`[{"role":"user","content":"a"},{"role":"assistant","content":"b"},{"role":"user","content":[{"type":"text","text":"x"},{"type":"text","text":"y"},{"type":"image","source":{}},{"type":"tool_result","content":"z"}]}]`,
			"messages[2].content[3]: tool_result without tool_use_id"},
		{"tool_use without name", compact.Anthropic, `[{"role":"assistant","content":[{"type":"tool_use","id":"t"}]}]`, "messages[0].content[0]: tool_use without name"},
		{"tool_result in assistant", compact.Anthropic, `[{"role":"assistant","content":[{"type":"tool_result","tool_use_id":"t"}]}]`, "messages[0].content[0]: tool_result in an assistant message"},
		{"tool_use in user", compact.Anthropic, `[{"role":"user","content":[{"type":"tool_use","id":"t","name":"n"}]}]`, "messages[0].content[0]: tool_use in a user message"},
		{"nested bad block", compact.Anthropic, `[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":3}]}]}]`, "messages[0].content[0].content[0].text: want a string, got a number"},
		{"is_error not bool", compact.Anthropic, `[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","is_error":"yes"}]}]`, "messages[0].content[0].is_error: want a boolean, got a string"},
		{"bad system", compact.Anthropic, `{"system":5,"messages":[]}`, "system: want a string or an array of text blocks, got a number"},
		{"bad max_tokens", compact.Anthropic, `{"max_tokens":"lots","messages":[]}`, "max_tokens: want a non-negative integer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := compact.Parse(tt.p, []byte(tt.doc))
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("err = %q, want %q...", err, tt.want)
			}
			if strata.ErrorCode(err) != strata.EINVALID {
				t.Fatalf("code = %s, want invalid", strata.ErrorCode(err))
			}
		})
	}
	if _, err := compact.Parse("gemini", []byte(`[]`)); err == nil {
		t.Fatal("unknown provider accepted")
	}
}

func TestParseProvider(t *testing.T) {
	for in, want := range map[string]compact.Provider{"openai": compact.OpenAI, " Anthropic ": compact.Anthropic} {
		if got, err := compact.ParseProvider(in); err != nil || got != want {
			t.Fatalf("ParseProvider(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := compact.ParseProvider("bard"); err == nil || !strings.Contains(err.Error(), `"bard"`) {
		t.Fatalf("err = %v", err)
	}
}

func TestEstimateTokens(t *testing.T) {
	// chars/4 per message plus 4 for its role and structure.
	doc := list(oaSystem(strings.Repeat("s", 400)), oaUser(strings.Repeat("u", 40)), oaAssistant(strings.Repeat("a", 41)))
	c, err := compact.New(compact.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := c.Estimate(compact.Request{Transcript: mustParse(t, compact.OpenAI, doc), SystemTokens: 7})
	if err != nil {
		t.Fatal(err)
	}
	if e.System != 100+4+7 || e.History != (10+4)+(11+4) || e.Factor != 1 {
		t.Fatalf("estimate = %+v, want system 111, history 29", e)
	}
	// An image costs a fixed amount, not its base64 length.
	img := `{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + strings.Repeat("A", 400000) + `"}}]}`
	e, _ = c.Estimate(compact.Request{Transcript: mustParse(t, compact.Anthropic, list(img))})
	if e.History != 1600+4 {
		t.Fatalf("image message = %d tokens, want 1604", e.History)
	}
	// The Anthropic system prompt and tools count as system tokens.
	e, _ = c.Estimate(compact.Request{Transcript: mustParse(t, compact.Anthropic, `{"system":"`+strings.Repeat("x", 80)+`","messages":[]}`)})
	if e.System != 20 {
		t.Fatalf("system = %d, want 20", e.System)
	}
	// An exact tokenizer is used when configured.
	w, _ := compact.New(compact.Options{Tokenizer: wordTokenizer{}})
	e, _ = w.Estimate(compact.Request{Transcript: mustParse(t, compact.OpenAI, list(oaUser("one two three")))})
	if e.History != 3+4 {
		t.Fatalf("words: history = %d, want 7", e.History)
	}
}

func TestEstimateCalibratedByUsage(t *testing.T) {
	c, _ := compact.New(compact.Options{})
	tr := mustParse(t, compact.OpenAI, list(oaUser(strings.Repeat("u", 396)), oaAssistant(strings.Repeat("a", 396)), oaUser(strings.Repeat("v", 396))))
	// Each message is 99 + 4 = 103 tokens by chars/4.
	tests := []struct {
		usage      compact.Usage
		factor     float64
		wantHistor int
	}{
		{compact.Usage{InputTokens: 309, Messages: 2}, 1.5, 3 * 155}, // 309/206
		{compact.Usage{InputTokens: 103, Messages: 1}, 1, 309},
		{compact.Usage{InputTokens: 10000, Messages: 1}, 4, 3 * 412}, // bounded above
		{compact.Usage{InputTokens: 1, Messages: 3}, 0.5, 3 * 52},    // bounded below
	}
	for _, tt := range tests {
		u := tt.usage
		e, err := c.Estimate(compact.Request{Transcript: tr, Usage: &u})
		if err != nil {
			t.Fatal(err)
		}
		if e.Factor != tt.factor || e.History != tt.wantHistor {
			t.Fatalf("usage %+v: estimate %+v, want factor %v history %d", u, e, tt.factor, tt.wantHistor)
		}
	}
	for _, u := range []compact.Usage{{InputTokens: 0, Messages: 1}, {InputTokens: 5, Messages: 4}, {InputTokens: 5, Messages: 0}} {
		if _, err := c.Estimate(compact.Request{Transcript: tr, Usage: &u}); err == nil || !strings.HasPrefix(err.Error(), "usage.") {
			t.Fatalf("usage %+v: err = %v, want one naming the usage field", u, err)
		}
	}
}
