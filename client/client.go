// Package client calls a strata server's HTTP API (strata serve) from Go:
// every route of docs/http.md, from appending turns and asking for a
// context package to the pyramid, learnings and compaction. Errors carry
// the HTTP status and map back to strata's error codes, so errors.Is and
// strata.ErrorCode work as in process.
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
	"github.com/strata-memory/strata/httpapi/wire"
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

// The request and answer bodies are package wire's, shared with the
// server; these names are the ones a caller of this package meets most.
type (
	// Turn is a turn to append. The server assigns seq, session and
	// tokens; a zero Time means the server's clock.
	Turn = wire.TurnIn
	// ContextRequest asks for a context package.
	ContextRequest = wire.ContextRequest
	// Hit is one search result: a turn or a summary node.
	Hit = wire.SearchHit
	// CompactRequest is a message list to compact, with per-request
	// overrides of the server's thresholds.
	CompactRequest = wire.CompactRequest
	// CompactResult is what a compaction did and the list to send.
	CompactResult = wire.CompactResult
)

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

// Append appends turns to a conversation (creating it with the server's
// policy and time zone), idempotently by ext_id.
func (c *Client) Append(ctx context.Context, conversation string, turns []Turn) (strata.IngestResult, error) {
	return c.AppendBatch(ctx, conversation, wire.AppendRequest{Turns: turns})
}

// AppendBatch appends a batch whose policy and time zone apply if it
// creates the conversation; for an existing conversation they must be its
// own (ECONFLICT otherwise).
func (c *Client) AppendBatch(ctx context.Context, conversation string, b wire.AppendRequest) (strata.IngestResult, error) {
	var res strata.IngestResult
	err := c.do(ctx, http.MethodPost, convPath(conversation, "/turns"), nil, b, &res)
	return res, err
}

// CreateConversation creates a conversation with no turns yet, with its
// pyramid policy and time zone ("": the server's). Creating it again with
// the same settings returns it; with others it is ECONFLICT.
func (c *Client) CreateConversation(ctx context.Context, id, policy, timeZone string) (strata.Conversation, error) {
	var conv strata.Conversation
	err := c.do(ctx, http.MethodPost, "/v1/conversations", nil,
		wire.CreateRequest{ID: id, Policy: policy, TimeZone: timeZone}, &conv)
	return conv, err
}

// Context returns a context package of a conversation.
func (c *Client) Context(ctx context.Context, conversation string, req ContextRequest) (*strata.Package, error) {
	var pkg strata.Package
	if err := c.do(ctx, http.MethodPost, convPath(conversation, "/context"), nil, req, &pkg); err != nil {
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
	var out wire.SearchResult
	err := c.do(ctx, http.MethodGet, "/v1/search", q, nil, &out)
	return out.Hits, err
}

// Conversations lists the conversations of the token's namespace.
func (c *Client) Conversations(ctx context.Context) ([]strata.Conversation, error) {
	var out wire.ConversationList
	err := c.do(ctx, http.MethodGet, "/v1/conversations", nil, nil, &out)
	return out.Conversations, err
}

// Conversation returns one conversation.
func (c *Client) Conversation(ctx context.Context, id string) (strata.Conversation, error) {
	var conv strata.Conversation
	err := c.do(ctx, http.MethodGet, convPath(id, ""), nil, nil, &conv)
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
	err := c.do(ctx, http.MethodDelete, convPath(id, ""), q, nil, &d)
	return d, err
}

// Tree returns a conversation's summary pyramid: its levels and nodes.
func (c *Client) Tree(ctx context.Context, conversation string) (*strata.Tree, error) {
	var t strata.Tree
	if err := c.do(ctx, http.MethodGet, convPath(conversation, "/tree"), nil, nil, &t); err != nil {
		return nil, err
	}
	return &t, nil
}

// Zoom returns the whole turns of a period, whatever their tier. when is
// a period label or a time expression (2023-05-08, 2023-W19, 2023-05,
// last week); relative ones count from now, or from the conversation's
// newest turn if now is zero.
func (c *Client) Zoom(ctx context.Context, conversation, when string, now time.Time) (wire.ZoomResult, error) {
	q := url.Values{"when": {when}}
	if !now.IsZero() {
		q.Set("now", now.Format(time.RFC3339Nano))
	}
	var z wire.ZoomResult
	err := c.do(ctx, http.MethodGet, convPath(conversation, "/zoom"), q, nil, &z)
	return z, err
}

// Turns returns a page of a conversation's turns in seq order, from seq
// from (1 if 0) to seq to (the last if 0), at most limit (100 if 0, at
// most 1,000), whole whatever their tier. The page's Next is the from of
// the following page, 0 on the last.
func (c *Client) Turns(ctx context.Context, conversation string, from, to int64, limit int) (wire.TurnPage, error) {
	q := url.Values{}
	for k, v := range map[string]int64{"from": from, "to": to, "limit": int64(limit)} {
		if v != 0 {
			q.Set(k, strconv.FormatInt(v, 10))
		}
	}
	var p wire.TurnPage
	err := c.do(ctx, http.MethodGet, convPath(conversation, "/turns"), q, nil, &p)
	return p, err
}

// Expand returns a summary node and the exact turns under it, whatever
// their tier. With a conversation, the node must belong to it.
func (c *Client) Expand(ctx context.Context, node, conversation string) (wire.Expansion, error) {
	var q url.Values
	if conversation != "" {
		q = url.Values{"conversation": {conversation}}
	}
	var e wire.Expansion
	err := c.do(ctx, http.MethodGet, "/v1/nodes/"+url.PathEscape(node)+"/expand", q, nil, &e)
	return e, err
}

// Stats returns the counts and bytes of the token's namespace.
func (c *Client) Stats(ctx context.Context) (wire.NamespaceStats, error) {
	var st wire.NamespaceStats
	err := c.do(ctx, http.MethodGet, "/v1/stats", nil, nil, &st)
	return st, err
}

// Pin sets the importance of a conversation's turn seq: 1 pins it as a
// milestone (as does anything from 0.8), 0 unpins it. It returns the turn.
func (c *Client) Pin(ctx context.Context, conversation string, seq int64, importance float64) (strata.Turn, error) {
	q := url.Values{"importance": {strconv.FormatFloat(importance, 'g', -1, 64)}}
	var t strata.Turn
	err := c.do(ctx, http.MethodPost, convPath(conversation, "/turns/"+strconv.FormatInt(seq, 10)+"/pin"), q, nil, &t)
	return t, err
}

// Learnings lists the key facts learned from a conversation: by default
// ("") those auto and confirmed; "all", or one status (auto, confirmed,
// rejected, superseded).
func (c *Client) Learnings(ctx context.Context, conversation, status string) ([]strata.Learning, error) {
	var q url.Values
	if status != "" {
		q = url.Values{"status": {status}}
	}
	var out wire.LearningList
	err := c.do(ctx, http.MethodGet, convPath(conversation, "/learnings"), q, nil, &out)
	return out.Learnings, err
}

// ConfirmLearning marks a learning confirmed and returns it.
func (c *Client) ConfirmLearning(ctx context.Context, id int64) (strata.Learning, error) {
	return c.setLearning(ctx, id, "confirm")
}

// RejectLearning marks a learning rejected and returns it.
func (c *Client) RejectLearning(ctx context.Context, id int64) (strata.Learning, error) {
	return c.setLearning(ctx, id, "reject")
}

func (c *Client) setLearning(ctx context.Context, id int64, verb string) (strata.Learning, error) {
	var l strata.Learning
	err := c.do(ctx, http.MethodPost, "/v1/learnings/"+strconv.FormatInt(id, 10)+"/"+verb, nil, nil, &l)
	return l, err
}

// Compact compacts an agent's message list statelessly: old tool output
// pruned and, over the threshold (or with Force), the older span replaced
// by a checkpoint. The list comes back in the shape it was sent.
func (c *Client) Compact(ctx context.Context, req CompactRequest) (CompactResult, error) {
	var res CompactResult
	err := c.do(ctx, http.MethodPost, "/v1/compact", nil, req, &res)
	return res, err
}

// CompactConversation compacts as Compact does, keeping the
// conversation's checkpoint and counts on the server (so the next
// compaction updates it) and, unless req.NoRemember, appending the
// compacted span to the conversation's turns.
func (c *Client) CompactConversation(ctx context.Context, conversation string, req CompactRequest) (CompactResult, error) {
	var res CompactResult
	err := c.do(ctx, http.MethodPost, convPath(conversation, "/compact"), nil, req, &res)
	return res, err
}

// convPath is the path of a conversation's route, its id escaped.
func convPath(id, rest string) string { return "/v1/conversations/" + url.PathEscape(id) + rest }

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

// Nodes returns a page of one level's nodes whose spans meet the turns
// from..to (0: from the first, to the last), at most limit (<= 0: 200);
// the page's Next is the following page's from.
func (c *Client) Nodes(ctx context.Context, conversation string, level int, from, to int64, limit int) (wire.NodePage, error) {
	q := url.Values{"level": {strconv.Itoa(level)}}
	for k, v := range map[string]int64{"from": from, "to": to, "limit": int64(limit)} {
		if v > 0 {
			q.Set(k, strconv.FormatInt(v, 10))
		}
	}
	var p wire.NodePage
	err := c.do(ctx, http.MethodGet, convPath(conversation, "/nodes"), q, nil, &p)
	return p, err
}

// MarkImportant marks a day, week or month of a conversation important
// (false clears the mark) and returns the conversation's marks.
func (c *Client) MarkImportant(ctx context.Context, conversation, period string, important bool) ([]string, error) {
	q := url.Values{"period": {period}, "important": {strconv.FormatBool(important)}}
	var out wire.ImportantMarks
	err := c.do(ctx, http.MethodPost, convPath(conversation, "/important"), q, nil, &out)
	return out.Important, err
}

// Resummarize writes a node's summary again, and those over it, and
// returns the node as now stored.
func (c *Client) Resummarize(ctx context.Context, node string) (strata.Node, error) {
	var n strata.Node
	err := c.do(ctx, http.MethodPost, "/v1/nodes/"+url.PathEscape(node)+"/resummarize", nil, nil, &n)
	return n, err
}
