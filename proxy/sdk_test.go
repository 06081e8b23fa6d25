package proxy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	anth "github.com/anthropics/anthropic-sdk-go/v2"
	anthopt "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	oaopt "github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/proxy"
)

// lockedWriter lets handlers log while a test reads.
type lockedWriter struct {
	mu sync.Mutex
	b  *bytes.Buffer
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func newLogger(b *bytes.Buffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(&lockedWriter{b: b}, nil))
}

const apiKey = "sk-secret-key-4711"

func openAIClient(r *rig, conv string, opts ...oaopt.RequestOption) openai.Client {
	base := []oaopt.RequestOption{oaopt.WithBaseURL(r.proxy.URL + "/v1/"), oaopt.WithAPIKey(apiKey), oaopt.WithMaxRetries(0)}
	if conv != "" {
		base = append(base, oaopt.WithHeader(proxy.HeaderConversation, conv))
	}
	return openai.NewClient(append(base, opts...)...)
}

func anthropicClient(r *rig, conv string) anth.Client {
	opts := []anthopt.RequestOption{anthopt.WithBaseURL(r.proxy.URL), anthopt.WithAPIKey(apiKey), anthopt.WithMaxRetries(0)}
	if conv != "" {
		opts = append(opts, anthopt.WithHeader(proxy.HeaderConversation, conv))
	}
	return anth.NewClient(opts...)
}

var weatherTool = openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
	Name:       "get_weather",
	Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}},
})

// openAIRound sends msgs and returns the reply message as a param, and
// the proxy's response headers.
func openAIRound(t *testing.T, c openai.Client, stream bool, msgs []openai.ChatCompletionMessageParamUnion) (openai.ChatCompletionMessage, http.Header) {
	t.Helper()
	ctx := context.Background()
	params := openai.ChatCompletionNewParams{Model: "fake", Messages: msgs, Tools: []openai.ChatCompletionToolUnionParam{weatherTool}}
	var resp *http.Response
	if !stream {
		cc, err := c.Chat.Completions.New(ctx, params, oaopt.WithResponseInto(&resp), oaopt.WithJSONSet("x_vendor_flag", map[string]any{"keep": true}))
		if err != nil {
			t.Fatal(err)
		}
		return cc.Choices[0].Message, resp.Header
	}
	s := c.Chat.Completions.NewStreaming(ctx, params, oaopt.WithResponseInto(&resp), oaopt.WithJSONSet("x_vendor_flag", map[string]any{"keep": true}))
	var acc openai.ChatCompletionAccumulator
	for s.Next() {
		acc.AddChunk(s.Current())
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return acc.Choices[0].Message, resp.Header
}

// TestOpenAIClient drives the proxy with openai-go through a tool round
// and a plain turn, streamed and not: the upstream gets the caller's key
// and the fields strata does not know, the client gets the replies and
// strata's headers, and every message is stored once, the system prompt
// never.
func TestOpenAIClient(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run("stream="+strconv.FormatBool(stream), func(t *testing.T) {
			r := newRig(t, proxy.Options{Mode: proxy.ModeMemory})
			c := openAIClient(r, "trip")
			msgs := []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("You plan trips."), openai.UserMessage("What is the weather in Paris?")}
			reply, h := openAIRound(t, c, stream, msgs)
			if len(reply.ToolCalls) != 1 || reply.ToolCalls[0].Function.Arguments != `{"city":"Paris"}` {
				t.Fatalf("reply %+v: want one get_weather call", reply)
			}
			if h.Get(proxy.HeaderConversation) != "trip" || h.Get(proxy.HeaderMode) != "memory" || h.Get(proxy.HeaderReshaped) != "false" {
				t.Fatalf("headers %v", h)
			}
			if n, err := strconv.Atoi(h.Get(proxy.HeaderReceived)); err != nil || n <= 0 || h.Get(proxy.HeaderUpstream) != h.Get(proxy.HeaderReceived) {
				t.Fatalf("token headers: received %q upstream %q", h.Get(proxy.HeaderReceived), h.Get(proxy.HeaderUpstream))
			}
			got := r.up.last(t)
			if got.Path != "/v1/chat/completions" || got.Header.Get("Authorization") != "Bearer "+apiKey {
				t.Fatalf("upstream got path %s, Authorization %q", got.Path, got.Header.Get("Authorization"))
			}
			if !bytes.Contains(got.Body, []byte(`"x_vendor_flag"`)) || !bytes.Contains(got.Body, []byte(`"get_weather"`)) {
				t.Fatalf("upstream body lost fields: %s", got.Body)
			}
			msgs = append(msgs, reply.ToParam(), openai.ToolMessage(`{"sky":"clear","celsius":21}`, reply.ToolCalls[0].ID))
			reply, _ = openAIRound(t, c, stream, msgs)
			if reply.Content != sunny {
				t.Fatalf("reply %q", reply.Content)
			}
			msgs = append(msgs, reply.ToParam(), openai.UserMessage("Thanks, that helps."))
			reply, _ = openAIRound(t, c, stream, msgs)
			if reply.Content != "You said: Thanks, that helps." {
				t.Fatalf("reply %q", reply.Content)
			}
			ts := r.turns(t, "trip")
			want := []string{"user: What is the weather in Paris?", "assistant: call get_weather {\"city\":\"Paris\"}",
				"tool: result call_1 {\"sky\":\"clear\",\"celsius\":21}", "assistant: " + sunny,
				"user: Thanks, that helps.", "assistant: You said: Thanks, that helps."}
			checkTurns(t, ts, want)
			assertNoKey(t, r)
		})
	}
}

// TestAnthropicClient is TestOpenAIClient with anthropic-sdk-go.
func TestAnthropicClient(t *testing.T) {
	tool := anth.ToolUnionParam{OfTool: &anth.ToolParam{Name: "get_weather",
		InputSchema: anth.ToolInputSchemaParam{Properties: map[string]any{"city": map[string]any{"type": "string"}}}}}
	for _, stream := range []bool{false, true} {
		t.Run("stream="+strconv.FormatBool(stream), func(t *testing.T) {
			r := newRig(t, proxy.Options{Mode: proxy.ModeMemory})
			c := anthropicClient(r, "")
			ctx := context.Background()
			round := func(msgs []anth.MessageParam) (anth.Message, http.Header) {
				t.Helper()
				params := anth.MessageNewParams{Model: "fake", MaxTokens: 256, Messages: msgs, Tools: []anth.ToolUnionParam{tool},
					System:   []anth.TextBlockParam{{Text: "You plan trips."}},
					Metadata: anth.MetadataParam{UserID: anth.String("user-42")}}
				var resp *http.Response
				if !stream {
					m, err := c.Messages.New(ctx, params, anthopt.WithResponseInto(&resp))
					if err != nil {
						t.Fatal(err)
					}
					return *m, resp.Header
				}
				s := c.Messages.NewStreaming(ctx, params, anthopt.WithResponseInto(&resp))
				var m anth.Message
				for s.Next() {
					if err := m.Accumulate(s.Current()); err != nil {
						t.Fatal(err)
					}
				}
				if err := s.Err(); err != nil {
					t.Fatal(err)
				}
				return m, resp.Header
			}
			msgs := []anth.MessageParam{anth.NewUserMessage(anth.NewTextBlock("What is the weather in Paris?"))}
			reply, h := round(msgs)
			if len(reply.Content) != 2 || reply.Content[1].Type != "tool_use" || string(reply.Content[1].Input) != `{"city":"Paris"}` && string(reply.Content[1].Input) != `{"city": "Paris"}` {
				t.Fatalf("reply %+v: want text and a get_weather call", reply.Content)
			}
			if h.Get(proxy.HeaderConversation) != "user-42" {
				t.Fatalf("conversation header %q, want the metadata.user_id", h.Get(proxy.HeaderConversation))
			}
			got := r.up.last(t)
			// This SDK sends its key as a bearer token; others as x-api-key.
			if got.Path != "/v1/messages" || got.Header.Get("X-Api-Key") != apiKey && got.Header.Get("Authorization") != "Bearer "+apiKey {
				t.Fatalf("upstream got path %s, headers %v: want the caller's key", got.Path, got.Header)
			}
			msgs = append(msgs, reply.ToParam(), anth.NewUserMessage(anth.NewToolResultBlock(reply.Content[1].ID, "clear, 21C", false)))
			reply, _ = round(msgs)
			if reply.Content[0].Text != sunny {
				t.Fatalf("reply %+v", reply.Content)
			}
			msgs = append(msgs, reply.ToParam(), anth.NewUserMessage(anth.NewTextBlock("Thanks.")))
			reply, _ = round(msgs)
			if reply.Content[0].Text != "You said: Thanks." {
				t.Fatalf("reply %+v", reply.Content)
			}
			checkTurns(t, r.turns(t, "user-42"), []string{"user: What is the weather in Paris?",
				"assistant: Let me look. call get_weather {\"city\":\"Paris\"}", "tool: result toolu_1 clear, 21C",
				"assistant: " + sunny, "user: Thanks.", "assistant: You said: Thanks."})
			assertNoKey(t, r)
		})
	}
}

// checkTurns compares stored turns with want, one "role: text" each, the
// text with tool calls as "call NAME ARGS" and results as "result ID
// CONTENT"; JSON arguments are compared compacted.
func checkTurns(t *testing.T, ts []strata.Turn, want []string) {
	t.Helper()
	var got []string
	for _, tn := range ts {
		parts := []string{}
		if tn.Content != "" {
			parts = append(parts, tn.Content)
		}
		for _, c := range tn.ToolCalls {
			var b bytes.Buffer
			if json.Compact(&b, c.Arguments) != nil {
				b.Write(c.Arguments)
			}
			parts = append(parts, "call "+c.Name+" "+b.String())
		}
		for _, res := range tn.ToolResults {
			parts = append(parts, "result "+res.CallID+" "+res.Content)
		}
		got = append(got, string(tn.Role)+": "+strings.Join(parts, " "))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("stored turns:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// assertNoKey checks that the API key is in neither the store's file nor
// the log.
func assertNoKey(t *testing.T, r *rig) {
	t.Helper()
	r.px.Wait()  // the rollups after the replies
	r.st.Close() // flush the WAL into the file
	for _, p := range []string{r.path, r.path + "-wal"} {
		b, err := os.ReadFile(p)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(apiKey)) {
			t.Fatalf("%s holds the API key", p)
		}
	}
	if strings.Contains(r.logs.String(), apiKey) {
		t.Fatal("the log holds the API key")
	}
}

var _ = io.EOF
