// Package client calls a strata server's HTTP API (strata serve) from Go:
// append turns, ask for a context package, search, read and forget
// conversations. Errors carry the HTTP status and map back to strata's
// error codes, so errors.Is and strata.ErrorCode work as in process.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/strata-memory/strata"
)

// Client calls one server with one token.
type Client struct {
	base  string
	token string
	http  *http.Client
}

// New returns a Client of the server at baseURL (http://127.0.0.1:7700)
// that sends token as its bearer token ("" for a server without tokens).
// A nil hc means a client with a 60-second timeout.
func New(baseURL, token string, hc *http.Client) *Client {
	if hc == nil {
		hc = &http.Client{Timeout: 60 * time.Second}
	}
	return &Client{base: strings.TrimRight(baseURL, "/"), token: token, http: hc}
}

// Turn is a turn to append. The server assigns seq, session and tokens.
type Turn struct {
	ExtID        string              `json:"ext_id,omitempty"`
	Role         strata.Role         `json:"role"`
	Name         string              `json:"name,omitempty"`
	Content      string              `json:"content,omitempty"`
	Time         time.Time           `json:"time,omitzero"`
	SessionLabel string              `json:"session_label,omitempty"`
	Model        string              `json:"model,omitempty"`
	ToolCalls    []strata.ToolCall   `json:"tool_calls,omitempty"`
	ToolResults  []strata.ToolResult `json:"tool_results,omitempty"`
	Importance   float64             `json:"importance,omitempty"`
	Tags         []string            `json:"tags,omitempty"`
	Metadata     map[string]any      `json:"metadata,omitempty"`
}

// ContextRequest asks for a context package.
type ContextRequest struct {
	Query    string           `json:"query,omitempty"`
	Budget   int              `json:"budget"`
	Format   string           `json:"format,omitempty"`
	Sections []strata.Section `json:"sections,omitempty"`
}

// Hit is one search result.
type Hit struct {
	Kind         string    `json:"kind"`
	Conversation string    `json:"conversation"`
	ExtID        string    `json:"ext_id"`
	NodeID       string    `json:"node_id"`
	Level        int       `json:"level"`
	FirstSeq     int64     `json:"first_seq"`
	LastSeq      int64     `json:"last_seq"`
	Start        time.Time `json:"start"`
	End          time.Time `json:"end"`
	Score        float64   `json:"score"`
	Text         string    `json:"text"`
}

// Error is an answer of the server other than 2xx.
type Error struct {
	Status int    // the HTTP status
	Detail string // the server's explanation
}

func (e *Error) Error() string {
	return fmt.Sprintf("strata server: %d %s: %s", e.Status, http.StatusText(e.Status), e.Detail)
}

// Unwrap gives the strata error the status stands for (ENOTFOUND for 404,
// EINVALID for 400, 413 and 422, ECONFLICT for 409), so that
// strata.ErrorCode reads it.
func (e *Error) Unwrap() error {
	code := strata.EINTERNAL
	switch e.Status {
	case http.StatusNotFound:
		code = strata.ENOTFOUND
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity:
		code = strata.EINVALID
	case http.StatusConflict:
		code = strata.ECONFLICT
	}
	return strata.Errorf(code, "%s", e.Detail)
}

// Append appends turns to a conversation (creating it), idempotently by
// ext_id.
func (c *Client) Append(ctx context.Context, conversation string, turns []Turn) (strata.IngestResult, error) {
	var res strata.IngestResult
	err := c.do(ctx, http.MethodPost, "/v1/conversations/"+url.PathEscape(conversation)+"/turns", nil,
		map[string]any{"turns": turns}, &res)
	return res, err
}

// Context returns a context package of a conversation.
func (c *Client) Context(ctx context.Context, conversation string, req ContextRequest) (*strata.Package, error) {
	var pkg strata.Package
	if err := c.do(ctx, http.MethodPost, "/v1/conversations/"+url.PathEscape(conversation)+"/context", nil, req, &pkg); err != nil {
		return nil, err
	}
	return &pkg, nil
}

// Search ranks turns and summaries against query, in one conversation or
// ("") in all; k <= 0 asks for the server's default.
func (c *Client) Search(ctx context.Context, conversation, query string, k int) ([]Hit, error) {
	q := url.Values{"q": {query}}
	if conversation != "" {
		q.Set("conversation", conversation)
	}
	if k > 0 {
		q.Set("k", strconv.Itoa(k))
	}
	var out struct {
		Hits []Hit `json:"hits"`
	}
	err := c.do(ctx, http.MethodGet, "/v1/search", q, nil, &out)
	return out.Hits, err
}

// Conversations lists the conversations of the token's namespace.
func (c *Client) Conversations(ctx context.Context) ([]strata.Conversation, error) {
	var out struct {
		Conversations []strata.Conversation `json:"conversations"`
	}
	err := c.do(ctx, http.MethodGet, "/v1/conversations", nil, nil, &out)
	return out.Conversations, err
}

// Conversation returns one conversation.
func (c *Client) Conversation(ctx context.Context, id string) (strata.Conversation, error) {
	var conv strata.Conversation
	err := c.do(ctx, http.MethodGet, "/v1/conversations/"+url.PathEscape(id), nil, nil, &conv)
	return conv, err
}

// Forget deletes a conversation and everything it holds, and returns the
// audit record the server keeps.
func (c *Client) Forget(ctx context.Context, id, reason string) (strata.Deletion, error) {
	var d strata.Deletion
	var q url.Values
	if reason != "" {
		q = url.Values{"reason": {reason}}
	}
	err := c.do(ctx, http.MethodDelete, "/v1/conversations/"+url.PathEscape(id), q, nil, &d)
	return d, err
}

// do sends one request and decodes a 2xx answer into out.
func (c *Client) do(ctx context.Context, method, path string, q url.Values, in, out any) error {
	u := c.base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("strata client: encoding the request: %w", err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return fmt.Errorf("strata client: %w", err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("strata client: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("strata client: reading the answer: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		var p struct {
			Detail string `json:"detail"`
			Errors []struct {
				Message  string `json:"message"`
				Location string `json:"location"`
			} `json:"errors"`
		}
		detail := strings.TrimSpace(string(data))
		if json.Unmarshal(data, &p) == nil && p.Detail != "" {
			detail = p.Detail
			for _, e := range p.Errors {
				detail += "; " + e.Location + ": " + e.Message
			}
		}
		return &Error{Status: resp.StatusCode, Detail: detail}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("strata client: decoding the answer of %s %s: %w", method, path, err)
	}
	return nil
}
