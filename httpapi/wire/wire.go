// Package wire holds the JSON bodies of strata's HTTP API that are not
// types of the engine itself: what the server (package httpapi) decodes
// and answers, and what the Go client (package client) sends and reads.
// One definition serves both, so they cannot drift apart.
//
// The struct tags other than json (doc, enum, minimum...) are read by the
// server to generate the OpenAPI document and to validate requests; they
// change nothing in the JSON. The package imports only the standard
// library, the root package and compact (whose report a compaction route
// answers with), so a client need not link the server.
package wire

import (
	"encoding/json"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/compact"
)

// TurnIn is a turn as a client sends it: only role is required. seq,
// session and tokens are the engine's to assign.
type TurnIn struct {
	ExtID        string              `json:"ext_id,omitempty" maxLength:"256" doc:"The caller's id of the turn, unique in its conversation; a turn whose ext_id is stored already is skipped. Without one the turn is always added."`
	Role         strata.Role         `json:"role" enum:"user,assistant,system,tool" doc:"Who produced the turn."`
	Name         string              `json:"name,omitempty" doc:"The speaker's name."`
	Content      string              `json:"content,omitempty" doc:"The text of the turn."`
	Time         time.Time           `json:"time,omitzero" doc:"When the turn was said (RFC 3339); the server's clock if absent."`
	SessionLabel string              `json:"session_label,omitempty" doc:"A label of the session the turn opens."`
	Model        string              `json:"model,omitempty"`
	ToolCalls    []strata.ToolCall   `json:"tool_calls,omitempty"`
	ToolResults  []strata.ToolResult `json:"tool_results,omitempty"`
	Importance   float64             `json:"importance,omitempty" minimum:"0" maximum:"1" doc:"0.8 and above pins the turn as a milestone."`
	Tags         []string            `json:"tags,omitempty"`
	Metadata     map[string]any      `json:"metadata,omitempty"`
}

// UnmarshalJSON reads a turn, refusing the zero time given explicitly
// (0001-01-01T00:00:00Z): the engine reads a zero time as "not given" and
// would stamp the turn with the clock, so that the same input would give
// another pyramid. A time left out (or null) is not given.
func (t *TurnIn) UnmarshalJSON(data []byte) error {
	type plain TurnIn
	var in struct {
		plain
		Time json.RawMessage `json:"time"`
	}
	if err := json.Unmarshal(data, &in); err != nil {
		return err
	}
	*t = TurnIn(in.plain)
	if len(in.Time) == 0 || string(in.Time) == "null" {
		return nil
	}
	if err := json.Unmarshal(in.Time, &t.Time); err != nil {
		return err
	}
	if t.Time.IsZero() {
		return strata.Errorf(strata.EINVALID, "time: %s is the zero time, which reads as no time (leave the field out to stamp the turn with the server's clock)", in.Time)
	}
	return nil
}

// Turn is the engine's turn of t.
func (t TurnIn) Turn() strata.Turn {
	return strata.Turn{ExtID: t.ExtID, Role: t.Role, Name: t.Name, Content: t.Content, Time: t.Time,
		SessionLabel: t.SessionLabel, Model: t.Model, ToolCalls: t.ToolCalls, ToolResults: t.ToolResults,
		Importance: t.Importance, Tags: t.Tags, Metadata: t.Metadata}
}

// AppendRequest is the body of POST /v1/conversations/{id}/turns.
type AppendRequest struct {
	Turns    []TurnIn `json:"turns" minItems:"1" doc:"The turns, in order."`
	Policy   string   `json:"policy,omitempty" doc:"The pyramid policy if this append creates the conversation."`
	TimeZone string   `json:"time_zone,omitempty" doc:"The IANA time zone if this append creates the conversation."`
}

// CreateRequest is the body of POST /v1/conversations.
type CreateRequest struct {
	ID       string `json:"id" minLength:"1" maxLength:"256" doc:"The conversation id, chosen by the caller."`
	Policy   string `json:"policy,omitempty" doc:"Its pyramid policy: chunks, calendar, sessions or a configured one (default: the server's)."`
	TimeZone string `json:"time_zone,omitempty" doc:"The IANA zone its calendar periods close in (default: the server's)."`
}

// ConversationList is the answer of GET /v1/conversations.
type ConversationList struct {
	Conversations []strata.Conversation `json:"conversations"`
}

// ContextRequest is the body of POST /v1/conversations/{id}/context.
type ContextRequest struct {
	Query    string           `json:"query,omitempty" doc:"What the next prompt is about."`
	Budget   int              `json:"budget" minimum:"1" doc:"Hard token budget of the whole rendered package."`
	Format   string           `json:"format,omitempty" enum:"text,markdown,ctf" doc:"Rendering the budget is counted on (default text)."`
	Sections []strata.Section `json:"sections,omitempty" doc:"Fixed texts at the top of the package, counted against the budget."`
	Now      time.Time        `json:"now,omitzero" doc:"What relative times in the query count from (default: the conversation's newest turn)."`
	Facts    bool             `json:"facts,omitempty" doc:"Add a known-facts section: the conversation's current learnings that bear on the query, within 15% of the budget. The learnings no pass has read yet are read first."`
}

// SearchHit is the public JSON shape of one search hit, as the search
// route and 'strata search --json' print it: a turn (ext_id, one seq) or
// a summary node (node_id, level, its span).
type SearchHit struct {
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

// NewSearchHit flattens an engine hit into its public shape.
func NewSearchHit(h strata.Hit) SearchHit {
	s := SearchHit{Kind: h.Kind, Conversation: h.Conversation, Score: h.Score}
	if t := h.Turn; t != nil {
		s.ExtID, s.FirstSeq, s.LastSeq, s.Start, s.End = t.ExtID, t.Seq, t.Seq, t.Time, t.Time
		s.Text = t.Speaker() + ": " + t.Text()
	}
	if n := h.Node; n != nil {
		s.NodeID, s.Level, s.FirstSeq, s.LastSeq, s.Start, s.End, s.Text = n.ID, n.Level, n.FirstSeq, n.LastSeq, n.Start, n.End, n.Summary
	}
	return s
}

// SearchResult is the answer of GET /v1/search.
type SearchResult struct {
	Hits []SearchHit `json:"hits"`
}

// TurnPage is a page of a conversation's turns in seq order.
type TurnPage struct {
	Conversation string        `json:"conversation"`
	Turns        []strata.Turn `json:"turns"`
	Next         int64         `json:"next,omitempty" doc:"The from of the next page; absent on the last page."`
}

// ZoomResult is the answer of GET /v1/conversations/{id}/zoom: the whole
// turns of a period, as 'strata zoom --json' prints them.
type ZoomResult struct {
	Conversation string        `json:"conversation"`
	Period       string        `json:"period"`
	Start        time.Time     `json:"start"`
	End          time.Time     `json:"end"`
	Turns        int           `json:"turns"`
	Items        []strata.Item `json:"items"`
}

// Expansion is the answer of GET /v1/nodes/{id}/expand: a summary node
// and the exact turns under it.
type Expansion struct {
	Node  strata.Node   `json:"node"`
	Turns []strata.Turn `json:"turns"`
}

// NamespaceStats is the answer of GET /v1/stats: the counts of the
// token's namespace, as 'strata stats --json' prints them.
type NamespaceStats struct {
	Namespace string `json:"namespace"`
	Tokenizer string `json:"tokenizer"`
	Nodes     int64  `json:"nodes"`
	strata.Stats
}

// LearningList is the answer of GET /v1/conversations/{id}/learnings.
type LearningList struct {
	Learnings []strata.Learning `json:"learnings"`
}

// CompactRequest is the body of both compaction routes.
type CompactRequest struct {
	Provider string          `json:"provider,omitempty" enum:"openai,anthropic" doc:"Shape of the message list (default openai)."`
	Messages json.RawMessage `json:"messages" doc:"The message list: a JSON array of messages, or the request object holding messages (and system for Anthropic). What strata does not change comes back byte for byte."`
	Force    bool            `json:"force,omitempty" doc:"Compact whatever the threshold (still at a user-turn boundary)."`
	// Per-request overrides of the server's thresholds.
	Threshold        int  `json:"threshold,omitempty" minimum:"1" doc:"Compact when the estimated input plus output headroom exceeds this many tokens."`
	KeepRecentTokens int  `json:"keep_recent_tokens,omitempty" minimum:"1" doc:"Recent history kept verbatim, in tokens."`
	SystemTokens     int  `json:"system_tokens,omitempty" minimum:"0" doc:"Tokens the request carries beside the list (a system prompt or tools it does not hold)."`
	NoRemember       bool `json:"no_remember,omitempty" doc:"With a conversation: do not append the compacted span to its turns (the checkpoint is still kept)."`
}

// CompactStats is what a compaction did, in the shape of
// 'strata compact --json'.
type CompactStats = compact.Stats

// CompactResult is the answer of both compaction routes: what was done,
// and the list to send, in the shape it came in.
type CompactResult struct {
	Stats    CompactStats    `json:"stats"`
	Messages json.RawMessage `json:"messages" doc:"The list to send, in the shape it came in."`
}

// NodePage is the answer of GET /v1/conversations/{id}/nodes: a page of
// one level's nodes over a range of turns, in seq order.
type NodePage struct {
	Conversation string        `json:"conversation"`
	Level        int           `json:"level"`
	Name         string        `json:"name" doc:"The level's name (micro, day, session...)."`
	Nodes        []strata.Node `json:"nodes"`
	Next         int64         `json:"next,omitempty" doc:"The from of the next page; absent on the last page."`
}

// ImportantMarks is the answer of POST /v1/conversations/{id}/important:
// the periods of the conversation now marked important.
type ImportantMarks struct {
	Conversation string   `json:"conversation"`
	Important    []string `json:"important"`
}
