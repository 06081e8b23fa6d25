package proxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/strata-memory/strata/compact"
)

// hopHeaders are not passed on, either way.
var hopHeaders = map[string]bool{
	"Connection": true, "Keep-Alive": true, "Proxy-Authenticate": true, "Proxy-Authorization": true,
	"Te": true, "Trailer": true, "Transfer-Encoding": true, "Upgrade": true,
	"Host": true, "Content-Length": true, "Accept-Encoding": true, "Content-Encoding": true,
}

// forwardHeaders copies the caller's headers for upstream: its API key
// (Authorization, x-api-key) and every other header but hop-by-hop ones,
// strata's own, and an Authorization that carries a strata token (which
// authenticated the request to strata serve and is no key of upstream).
func forwardHeaders(dst, src http.Header) {
	for k, vs := range src {
		if hopHeaders[k] || strings.HasPrefix(k, "X-Strata-") {
			continue
		}
		if k == "Authorization" && len(vs) == 1 && strings.HasPrefix(vs[0], "Bearer strata_") {
			continue
		}
		dst[k] = append([]string(nil), vs...)
	}
	if dst.Get("Content-Type") == "" {
		dst.Set("Content-Type", "application/json")
	}
}

// forward sends body upstream and copies the answer to w: whole, or event
// by event when streaming. When upstream answered 2xx and the reply
// arrived whole, it calls done with the reply as a message before the
// answer's last bytes go to the client, so that a client that has the
// whole reply finds it stored. It returns the upstream's status; an error
// means the client has been answered with one in the provider's format
// (or its stream was cut) and done was not called.
func (p *Proxy) forward(ctx context.Context, w http.ResponseWriter, r *http.Request, c *call, body []byte, done func(*compact.Message)) (int, error) {
	url := p.opt.OpenAIURL + "/chat/completions"
	if c.prov == compact.Anthropic {
		url = p.opt.AnthropicURL + "/v1/messages"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		writeError(w, c.prov, http.StatusInternalServerError, "building the upstream request: "+err.Error())
		return 0, err
	}
	forwardHeaders(req.Header, r.Header)
	if q := r.URL.RawQuery; q != "" {
		req.URL.RawQuery = q
	}
	resp, err := p.opt.Client.Do(req)
	if err != nil {
		p.metrics.upstreamErrors.WithLabelValues(string(c.prov), "unreachable").Inc()
		status, msg := http.StatusBadGateway, "the upstream "+url+" could not be reached: "+upstreamCause(err)
		if ctx.Err() != nil {
			status, msg = http.StatusGatewayTimeout, "the upstream "+url+" did not answer before the request ended: "+upstreamCause(err)
		}
		writeError(w, c.prov, status, msg)
		return 0, err
	}
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		if !hopHeaders[k] {
			w.Header()[k] = vs
		}
	}
	if resp.StatusCode >= 300 {
		// The upstream's own error, status and body, in its own format.
		p.metrics.upstreamErrors.WithLabelValues(string(c.prov), "status").Inc()
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
		return resp.StatusCode, nil
	}
	if c.stream && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return resp.StatusCode, p.relayStream(w, resp, c, done)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		p.metrics.upstreamErrors.WithLabelValues(string(c.prov), "cut").Inc()
		w.Header().Del("Content-Type")
		writeError(w, c.prov, http.StatusBadGateway, "the upstream's answer was cut: "+upstreamCause(err))
		return 0, err
	}
	m, err := replyMessage(c.prov, data)
	if err == nil {
		done(m)
	} else {
		p.metrics.upstreamErrors.WithLabelValues(string(c.prov), "unreadable").Inc()
		p.log.Warn("proxy: the upstream's reply could not be read; the newest turn is not stored", "conversation", c.conv, "error", err.Error())
	}
	w.WriteHeader(resp.StatusCode)
	w.Write(data)
	return resp.StatusCode, err
}

// upstreamCause is the cause of a failed call without the method and URL
// that net/http repeats.
func upstreamCause(err error) string {
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) {
		if inner := ue.Unwrap(); inner != nil {
			return inner.Error()
		}
	}
	return err.Error()
}

// replyMessage is the assistant message of a non-streamed answer.
func replyMessage(prov compact.Provider, data []byte) (*compact.Message, error) {
	if prov == compact.OpenAI {
		var resp struct {
			Choices []struct {
				Message json.RawMessage `json:"message"`
			} `json:"choices"`
		}
		if err := json.Unmarshal(data, &resp); err != nil {
			return nil, fmt.Errorf("reply: %w", err)
		}
		if len(resp.Choices) == 0 || len(resp.Choices[0].Message) == 0 {
			return nil, errors.New("reply: no choices[0].message")
		}
		return compact.ParseMessage(prov, resp.Choices[0].Message)
	}
	var resp struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(data, &resp); err != nil {
		return nil, fmt.Errorf("reply: %w", err)
	}
	if resp.Content == nil {
		return nil, errors.New("reply: no content")
	}
	raw, _ := json.Marshal(map[string]json.RawMessage{"role": json.RawMessage(`"assistant"`), "content": resp.Content})
	return compact.ParseMessage(prov, raw)
}

// relayStream copies an event stream to w, each event flushed as it
// ends, while assembling the reply. When the event that ends a whole
// stream ([DONE], message_stop) arrives, done gets the reply before that
// event goes to the client.
func (p *Proxy) relayStream(w http.ResponseWriter, resp *http.Response, c *call, done func(*compact.Message)) error {
	w.WriteHeader(resp.StatusCode)
	rc := http.NewResponseController(w)
	rc.Flush()
	var asm assembler = &openAIAssembler{}
	if c.prov == compact.Anthropic {
		asm = &anthropicAssembler{}
	}
	br := bufio.NewReaderSize(resp.Body, 64<<10)
	var event, data []byte // the lines of the event being read, and its data
	hasData := false
	finished := false
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A long line: read the rest of it.
			full := append([]byte(nil), line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = br.ReadSlice('\n')
				full = append(full, line...)
			}
			line = full
		}
		event = append(event, line...)
		l := bytes.TrimRight(line, "\r\n")
		end := len(line) > 0 && len(l) == 0 // a blank line ends the event
		if bytes.HasPrefix(l, []byte("data:")) {
			if hasData {
				data = append(data, '\n')
			}
			data = append(data, bytes.TrimPrefix(bytes.TrimPrefix(l, []byte("data:")), []byte(" "))...)
			hasData = true
		}
		if end || err != nil {
			if hasData {
				asm.event(data)
			}
			if asm.done() && !finished {
				finished = true
				if e := asm.failed(); e != "" {
					p.log.Warn("proxy: the upstream's stream reported an error; the newest turn is not stored", "conversation", c.conv, "error", e)
				} else if m, aerr := asm.message(); aerr != nil {
					p.log.Warn("proxy: the streamed reply could not be assembled; the newest turn is not stored", "conversation", c.conv, "error", aerr.Error())
				} else {
					done(m)
				}
			}
			if _, werr := w.Write(event); werr != nil {
				return fmt.Errorf("writing to the client: %w", werr)
			}
			rc.Flush()
			event, data, hasData = event[:0], data[:0], false
		}
		if err != nil {
			if errors.Is(err, io.EOF) && finished {
				return nil
			}
			p.metrics.upstreamErrors.WithLabelValues(string(c.prov), "cut").Inc()
			if errors.Is(err, io.EOF) {
				return errors.New("the upstream's stream ended before its last event")
			}
			return fmt.Errorf("the upstream's stream was cut: %w", err)
		}
	}
}

// assembler rebuilds a streamed reply from its events.
type assembler interface {
	event(data []byte)
	done() bool
	failed() string
	message() (*compact.Message, error)
}

// openAIAssembler rebuilds choice 0 of a chat completion stream.
type openAIAssembler struct {
	finished bool
	err      string
	role     string
	content  strings.Builder
	refusal  strings.Builder
	calls    []*oaCall
}

type oaCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

func (a *openAIAssembler) event(data []byte) {
	if string(data) == "[DONE]" {
		a.finished = true
		return
	}
	var ev struct {
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
		Choices []struct {
			Index int `json:"index"`
			Delta struct {
				Role      string  `json:"role"`
				Content   *string `json:"content"`
				Refusal   *string `json:"refusal"`
				ToolCalls []struct {
					Index    int    `json:"index"`
					ID       string `json:"id"`
					Type     string `json:"type"`
					Function struct {
						Name      string `json:"name"`
						Arguments string `json:"arguments"`
					} `json:"function"`
				} `json:"tool_calls"`
			} `json:"delta"`
		} `json:"choices"`
	}
	if json.Unmarshal(data, &ev) != nil {
		return
	}
	if ev.Error != nil {
		a.err = ev.Error.Message
		return
	}
	for _, ch := range ev.Choices {
		if ch.Index != 0 {
			continue
		}
		d := ch.Delta
		if d.Role != "" {
			a.role = d.Role
		}
		if d.Content != nil {
			a.content.WriteString(*d.Content)
		}
		if d.Refusal != nil {
			a.refusal.WriteString(*d.Refusal)
		}
		for _, tc := range d.ToolCalls {
			for len(a.calls) <= tc.Index {
				a.calls = append(a.calls, &oaCall{Type: "function"})
			}
			cl := a.calls[tc.Index]
			if tc.ID != "" {
				cl.ID = tc.ID
			}
			if tc.Type != "" {
				cl.Type = tc.Type
			}
			cl.Function.Name += tc.Function.Name
			cl.Function.Arguments += tc.Function.Arguments
		}
	}
}

func (a *openAIAssembler) done() bool     { return a.finished }
func (a *openAIAssembler) failed() string { return a.err }

func (a *openAIAssembler) message() (*compact.Message, error) {
	msg := map[string]any{"role": "assistant"}
	switch {
	case a.content.Len() > 0:
		msg["content"] = a.content.String()
	case a.refusal.Len() > 0:
		msg["content"] = a.refusal.String()
	case len(a.calls) == 0:
		msg["content"] = ""
	default:
		msg["content"] = nil
	}
	if len(a.calls) > 0 {
		msg["tool_calls"] = a.calls
	}
	raw, err := json.Marshal(msg)
	if err != nil {
		return nil, err
	}
	return compact.ParseMessage(compact.OpenAI, raw)
}

// anthropicAssembler rebuilds a Messages stream's content blocks.
type anthropicAssembler struct {
	stopped bool
	err     string
	blocks  []map[string]any
	partial []strings.Builder // tool_use input JSON, by block
}

func (a *anthropicAssembler) event(data []byte) {
	var ev struct {
		Type         string          `json:"type"`
		Index        int             `json:"index"`
		ContentBlock json.RawMessage `json:"content_block"`
		Delta        struct {
			Type        string `json:"type"`
			Text        string `json:"text"`
			PartialJSON string `json:"partial_json"`
			Thinking    string `json:"thinking"`
			Signature   string `json:"signature"`
		} `json:"delta"`
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(data, &ev) != nil {
		return
	}
	switch ev.Type {
	case "content_block_start":
		var b map[string]any
		if json.Unmarshal(ev.ContentBlock, &b) != nil {
			return
		}
		for len(a.blocks) <= ev.Index {
			a.blocks = append(a.blocks, nil)
			a.partial = append(a.partial, strings.Builder{})
		}
		a.blocks[ev.Index] = b
	case "content_block_delta":
		if ev.Index >= len(a.blocks) || a.blocks[ev.Index] == nil {
			return
		}
		b := a.blocks[ev.Index]
		switch ev.Delta.Type {
		case "text_delta":
			s, _ := b["text"].(string)
			b["text"] = s + ev.Delta.Text
		case "input_json_delta":
			a.partial[ev.Index].WriteString(ev.Delta.PartialJSON)
		case "thinking_delta":
			s, _ := b["thinking"].(string)
			b["thinking"] = s + ev.Delta.Thinking
		case "signature_delta":
			s, _ := b["signature"].(string)
			b["signature"] = s + ev.Delta.Signature
		}
	case "message_stop":
		a.stopped = true
	case "error":
		a.err = ev.Error.Message
	}
}

func (a *anthropicAssembler) done() bool     { return a.stopped }
func (a *anthropicAssembler) failed() string { return a.err }

func (a *anthropicAssembler) message() (*compact.Message, error) {
	content := make([]map[string]any, 0, len(a.blocks))
	for i, b := range a.blocks {
		if b == nil {
			continue
		}
		if b["type"] == "tool_use" || b["type"] == "server_tool_use" {
			input := json.RawMessage("{}")
			if s := a.partial[i].String(); s != "" {
				if !json.Valid([]byte(s)) {
					return nil, fmt.Errorf("content[%d]: the tool_use input streamed is not JSON", i)
				}
				input = json.RawMessage(s)
			}
			b["input"] = input
		}
		content = append(content, b)
	}
	raw, err := json.Marshal(map[string]any{"role": "assistant", "content": content})
	if err != nil {
		return nil, err
	}
	return compact.ParseMessage(compact.Anthropic, raw)
}
