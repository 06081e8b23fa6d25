package proxy_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/strata-memory/strata/compact"
	"github.com/strata-memory/strata/proxy"
)

// oaMsg is an OpenAI chat message as a test client builds it.
type oaMsg struct {
	Role       string   `json:"role"`
	Name       string   `json:"name,omitempty"`
	Content    *string  `json:"content"`
	ToolCalls  []oaCall `json:"tool_calls,omitempty"`
	ToolCallID string   `json:"tool_call_id,omitempty"`
}

type oaCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

func text(s string) *string { return &s }

// chat is a client that resends its whole history on every call, as chat
// apps do, through the proxy's OpenAI route.
type chat struct {
	r       *rig
	conv    string
	headers map[string]string
	msgs    []oaMsg
}

// send appends msgs, calls the proxy, appends the reply and returns the
// proxy's response headers.
func (c *chat) send(t *testing.T, msgs ...oaMsg) http.Header { return c.sendT(t, msgs...) }

// sendT is send for any test's T.
func (c *chat) sendT(t tb, msgs ...oaMsg) http.Header {
	t.Helper()
	c.msgs = append(c.msgs, msgs...)
	body, _ := json.Marshal(map[string]any{"model": "m", "messages": c.msgs})
	h := map[string]string{proxy.HeaderConversation: c.conv}
	for k, v := range c.headers {
		h[k] = v
	}
	resp, b := c.r.post(t, "/v1/chat/completions", string(body), h)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	var cc struct {
		Choices []struct {
			Message oaMsg `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(b, &cc); err != nil {
		t.Fatal(err)
	}
	c.msgs = append(c.msgs, cc.Choices[0].Message)
	return resp.Header
}

// checkPairs fails unless list (an OpenAI request body) is a valid chat:
// every assistant tool call answered by the tool messages right after it,
// and every tool message answering a call of that assistant message.
func checkPairs(t *testing.T, body []byte) {
	t.Helper()
	var req struct {
		Messages []oaMsg `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	ms := req.Messages
	for i := 0; i < len(ms); i++ {
		m := ms[i]
		if m.Role == "tool" {
			t.Fatalf("messages[%d]: a tool message answers no call just before it: %s", i, body)
		}
		if m.Role != "assistant" || len(m.ToolCalls) == 0 {
			continue
		}
		want := map[string]bool{}
		for _, c := range m.ToolCalls {
			want[c.ID] = true
		}
		for i+1 < len(ms) && ms[i+1].Role == "tool" {
			i++
			if !want[ms[i].ToolCallID] {
				t.Fatalf("messages[%d]: answers %q, not a call of its assistant message", i, ms[i].ToolCallID)
			}
			delete(want, ms[i].ToolCallID)
		}
		if len(want) > 0 && i+1 < len(ms) {
			t.Fatalf("messages[%d]: calls %v left unanswered", i, want)
		}
	}
}

func filler(n int, topic string) string {
	return strings.Repeat(topic+" is on my mind today, and ", n/6)
}

// TestMemoryMode: once the history is over the budget, what goes upstream
// is the system prompt, a context package, its acknowledgement and the
// newest turn as sent (tool rounds whole), within the budget plus the
// newest turn; the client's history is stored once; the headers say so.
func TestMemoryMode(t *testing.T) {
	const budget = 600
	r := newRig(t, proxy.Options{Mode: proxy.ModeMemory, Budget: budget})
	c := &chat{r: r, conv: "long", msgs: []oaMsg{{Role: "system", Content: text("You are terse.")}}}
	topics := []string{"sailing", "the orchard", "my sister Ada", "the weather", "the bakery", "chess", "the garden", "my trip to Lyon"}
	reshaped := 0
	for i, topic := range topics {
		h := c.send(t, oaMsg{Role: "user", Content: text(fmt.Sprintf("Turn %d: %s", i, filler(60, topic)))})
		if strings.Contains(topic, "weather") {
			// The reply called get_weather: answer it and let the model go on.
			call := c.msgs[len(c.msgs)-1].ToolCalls[0]
			h = c.send(t, oaMsg{Role: "tool", ToolCallID: call.ID, Content: text(`{"sky":"grey"}`)})
		}
		got := r.up.last(t)
		checkPairs(t, got.Body)
		recv, _ := strconv.Atoi(h.Get(proxy.HeaderReceived))
		up, _ := strconv.Atoi(h.Get(proxy.HeaderUpstream))
		if h.Get(proxy.HeaderReshaped) != "true" {
			if recv > budget {
				t.Fatalf("turn %d: %d tokens received, over the budget, but not reshaped", i, recv)
			}
			continue
		}
		reshaped++
		tr, err := compact.Parse(compact.OpenAI, got.Body)
		if err != nil {
			t.Fatal(err)
		}
		ms := tr.Messages
		if ms[0].Role() != "system" || !strings.HasPrefix(ms[1].Text(), proxy.MemoryPrefix) || ms[2].Text() != proxy.MemoryAck {
			t.Fatalf("turn %d: upstream got %s", i, got.Body)
		}
		// The newest turn goes as sent, from the newest user message.
		tail := 0
		for j := len(c.msgs) - 2; j >= 0; j-- {
			if c.msgs[j].Role == "user" {
				tail = j
				break
			}
		}
		sent := len(c.msgs) - 1 - tail // the client's messages from the newest user one, without the reply
		if len(ms)-3 != sent || ms[3].Text() != *c.msgs[tail].Content {
			t.Fatalf("turn %d: upstream got %d messages after the package, want the newest %d", i, len(ms)-3, sent)
		}
		newest := 0
		for _, m := range ms[3:] {
			newest += strata4(m.JSON())
		}
		if up > budget+newest || up >= recv {
			t.Fatalf("turn %d: %d tokens upstream, %d received: want at most the budget %d plus the newest turn's %d", i, up, recv, budget, newest)
		}
		cov := h.Get(proxy.HeaderCoverage)
		if n, total, ok := strings.Cut(cov, "/"); !ok || n == "" || total == "" {
			t.Fatalf("coverage header %q", cov)
		}
	}
	if reshaped < 3 {
		t.Fatalf("reshaped %d calls, want most of them", reshaped)
	}
	// Every message of the client's history but the system prompt, once.
	if got, want := len(r.turns(t, "long")), len(c.msgs)-1; got != want {
		t.Fatalf("stored %d turns, want %d", got, want)
	}
}

// strata4 is a generous count of a message's tokens in chars/4 (its JSON
// is longer than what the estimate counts).
func strata4(b []byte) int { return (len(b) + 3) / 4 }

// TestCompactMode: the list is compacted with its state kept per
// conversation; the next call, which resends the whole history, goes up
// with the checkpoint in place of what the first compaction took out.
func TestCompactMode(t *testing.T) {
	cfg := compact.DefaultConfig()
	cfg.CompactionEnabled = true
	cfg.CompactionThreshold = 1500
	cfg.KeepRecentTokens = 400
	cfg.OutputHeadroom = 0
	r := newRig(t, proxy.Options{Mode: proxy.ModeCompact, Compact: cfg})
	c := &chat{r: r, conv: "agent", msgs: []oaMsg{{Role: "system", Content: text("You are an agent.")}}}
	compacted := 0
	for i, topic := range []string{"parsing", "the weather", "indexing", "caching", "logging", "testing"} {
		h := c.send(t, oaMsg{Role: "user", Content: text(fmt.Sprintf("Step %d: %s", i, filler(300, topic)))})
		if strings.Contains(topic, "weather") {
			call := c.msgs[len(c.msgs)-1].ToolCalls[0]
			h = c.send(t, oaMsg{Role: "tool", ToolCallID: call.ID, Content: text(filler(400, "grey sky"))})
		}
		got := r.up.last(t)
		checkPairs(t, got.Body)
		if h.Get(proxy.HeaderMode) != "compact" {
			t.Fatalf("mode header %q", h.Get(proxy.HeaderMode))
		}
		if strings.Contains(string(got.Body), strings.TrimSpace(compact.SummaryPrefix)) {
			compacted++
			up, _ := strconv.Atoi(h.Get(proxy.HeaderUpstream))
			recv, _ := strconv.Atoi(h.Get(proxy.HeaderReceived))
			if up >= recv {
				t.Fatalf("step %d: %d tokens upstream, %d received", i, up, recv)
			}
			if !strings.Contains(string(got.Body), fmt.Sprintf("Step %d:", i)) {
				t.Fatalf("step %d: the newest message did not go up", i)
			}
			tr, err := compact.Parse(compact.OpenAI, got.Body)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range tr.Messages {
				if m.Text() == *c.msgs[1].Content {
					t.Fatalf("step %d: the first step went up whole after compaction", i)
				}
			}
		}
	}
	if compacted < 2 {
		t.Fatalf("%d calls went up compacted, want the later ones", compacted)
	}
	if got, want := len(r.turns(t, "agent")), len(c.msgs)-1; got != want {
		t.Fatalf("stored %d turns, want %d", got, want)
	}
}

// TestPassThrough: in off mode, and in memory mode under the budget, the
// body goes upstream byte for byte, fields strata does not know and
// whitespace included.
func TestPassThrough(t *testing.T) {
	body := "{\n  \"model\": \"m\",\n  \"messages\": [ {\"role\":\"user\",\"content\":\"hi\", \"x_part\": [1, 2.50]} ],\n  \"logit_bias\": {\"50256\": -100},\n  \"x_unknown\": {\"nested\": [true, null]}\n}"
	for _, mode := range []proxy.Mode{proxy.ModeOff, proxy.ModeMemory, proxy.ModeCompact} {
		r := newRig(t, proxy.Options{Mode: mode})
		resp, b := r.post(t, "/v1/chat/completions", body, map[string]string{proxy.HeaderConversation: "x"})
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: status %d: %s", mode, resp.StatusCode, b)
		}
		if got := r.up.last(t).Body; string(got) != body {
			t.Fatalf("%s: upstream got\n%s\nwant\n%s", mode, got, body)
		}
	}
}

// TestModeHeader: a request may ask for another mode; a bad one is a 400.
func TestModeHeader(t *testing.T) {
	r := newRig(t, proxy.Options{Mode: proxy.ModeMemory})
	resp, _ := r.post(t, "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, map[string]string{proxy.HeaderMode: "off"})
	if resp.Header.Get(proxy.HeaderMode) != "off" {
		t.Fatalf("mode %q", resp.Header.Get(proxy.HeaderMode))
	}
	resp, _ = r.post(t, "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"a side question"}]}`,
		map[string]string{proxy.HeaderConversation: "side", proxy.HeaderRemember: "false"})
	if resp.StatusCode != http.StatusOK || len(r.turns(t, "side")) != 0 {
		t.Fatalf("status %d, %d turns stored: want 200 and none", resp.StatusCode, len(r.turns(t, "side")))
	}
	// Over the budget, with nothing stored to draw a package from: the
	// list goes whole.
	long := fmt.Sprintf(`{"model":"m","messages":[{"role":"user","content":%q},{"role":"assistant","content":"ok"},{"role":"user","content":"and?"}]}`, filler(30000, "the sea"))
	resp, body := r.post(t, "/v1/chat/completions", long, map[string]string{proxy.HeaderConversation: "side-2", proxy.HeaderRemember: "false"})
	if resp.StatusCode != http.StatusOK || resp.Header.Get(proxy.HeaderReshaped) != "false" || len(r.turns(t, "side-2")) != 0 {
		t.Fatalf("status %d, reshaped %q: %s", resp.StatusCode, resp.Header.Get(proxy.HeaderReshaped), body)
	}
	resp, b := r.post(t, "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, map[string]string{proxy.HeaderMode: "shrink"})
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(wireError(t, false, b), "X-Strata-Mode") {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
}

// TestIdentity: the header wins, then user, then a digest of the system
// prompt and first user message that stays the same as the history grows.
func TestIdentity(t *testing.T) {
	r := newRig(t, proxy.Options{Mode: proxy.ModeOff})
	conv := func(body string, h map[string]string) string {
		t.Helper()
		resp, b := r.post(t, "/v1/chat/completions", body, h)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d: %s", resp.StatusCode, b)
		}
		return resp.Header.Get(proxy.HeaderConversation)
	}
	one := `{"model":"m","messages":[{"role":"system","content":"S"},{"role":"user","content":"first"}]}`
	two := `{"model":"m","messages":[{"role":"system","content":"S"},{"role":"user","content":"first"},{"role":"assistant","content":"You said: first"},{"role":"user","content":"second"}]}`
	other := `{"model":"m","messages":[{"role":"system","content":"S2"},{"role":"user","content":"first"}]}`
	a, b, c := conv(one, nil), conv(two, nil), conv(other, nil)
	if !strings.HasPrefix(a, "p-") || a != b || a == c {
		t.Fatalf("digests %q %q %q: want the first two equal, the third different", a, b, c)
	}
	if got := conv(`{"model":"m","user":"u-7","messages":[{"role":"user","content":"hi"}]}`, nil); got != "u-7" {
		t.Fatalf("user: %q", got)
	}
	if got := conv(`{"model":"m","user":"u-7","messages":[{"role":"user","content":"hi"}]}`, map[string]string{proxy.HeaderConversation: "h-1"}); got != "h-1" {
		t.Fatalf("header: %q", got)
	}
	checkTurns(t, r.turns(t, a), []string{"user: first", "assistant: You said: first", "user: second", "assistant: You said: second"})
}

// TestMemoryModeAnthropic: the same reshaping on the Messages API: the
// top-level system prompt and other fields stay, the package and its
// acknowledgement open the messages, and the newest turn (a tool round
// here) follows as sent.
func TestMemoryModeAnthropic(t *testing.T) {
	r := newRig(t, proxy.Options{Mode: proxy.ModeMemory, Budget: 400})
	var msgs []json.RawMessage
	add := func(role, content string) {
		b, _ := json.Marshal(map[string]any{"role": role, "content": content})
		msgs = append(msgs, b)
	}
	for i := 0; i < 6; i++ {
		add("user", fmt.Sprintf("Note %d: %s", i, filler(120, "the harbour")))
		add("assistant", fmt.Sprintf("Noted %d.", i))
	}
	add("user", "What is the weather in Paris?")
	msgs = append(msgs, json.RawMessage(`{"role":"assistant","content":[{"type":"tool_use","id":"toolu_9","name":"get_weather","input":{"city":"Paris"}}]}`),
		json.RawMessage(`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_9","content":"grey"}]}`))
	body, _ := json.Marshal(map[string]any{"model": "m", "max_tokens": 64, "system": "Be brief.", "x_extra": 7, "messages": msgs})
	resp, b := r.post(t, "/v1/messages", string(body), map[string]string{proxy.HeaderConversation: "harbour"})
	if resp.StatusCode != http.StatusOK || resp.Header.Get(proxy.HeaderReshaped) != "true" {
		t.Fatalf("status %d, reshaped %q: %s", resp.StatusCode, resp.Header.Get(proxy.HeaderReshaped), b)
	}
	var got struct {
		System   string            `json:"system"`
		Extra    int               `json:"x_extra"`
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(r.up.last(t).Body, &got); err != nil {
		t.Fatal(err)
	}
	tr, err := compact.Parse(compact.Anthropic, r.up.last(t).Body)
	if err != nil {
		t.Fatal(err)
	}
	ms := tr.Messages
	if got.System != "Be brief." || got.Extra != 7 || len(ms) != 5 || !strings.HasPrefix(ms[0].Text(), proxy.MemoryPrefix) ||
		ms[1].Text() != proxy.MemoryAck || ms[2].Text() != "What is the weather in Paris?" || !ms[4].IsToolResult() {
		t.Fatalf("upstream got %s", r.up.last(t).Body)
	}
	if string(got.Messages[3]) != string(msgs[len(msgs)-2]) || string(got.Messages[4]) != string(msgs[len(msgs)-1]) {
		t.Fatalf("the tool round did not go as sent: %s", r.up.last(t).Body)
	}
	if n := len(r.turns(t, "harbour")); n != len(msgs)+1 {
		t.Fatalf("stored %d turns, want %d", n, len(msgs)+1)
	}
}
