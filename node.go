package strata

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"time"
)

// Node status values.
const (
	StatusOK          = "ok"
	StatusOverBudget  = "over_budget"
	StatusNeedsReview = "needs_review"
)

// Summary methods.
const (
	MethodExtractive = "extractive"
	MethodLLM        = "llm"
	MethodAggregate  = "aggregate"
)

// Node summarizes a contiguous span of turns at one level of the pyramid.
// Level 1 nodes cover turns directly; a level k node covers consecutive
// level k-1 nodes, listed in Children.
type Node struct {
	ID           string    `json:"id"`
	Conversation string    `json:"conversation"`
	Level        int       `json:"level"`
	FirstSeq     int64     `json:"first_seq"`
	LastSeq      int64     `json:"last_seq"`
	Start        time.Time `json:"start"`
	End          time.Time `json:"end"`
	// Key names the node's group where its level has one: the period of a
	// calendar level ("2023-05-08", "2023-W19", "2023-05") or the session
	// of a session level ("session 12"); empty for count levels.
	Key          string   `json:"key,omitempty"`
	Children     []string `json:"children,omitempty"`
	Summary      string   `json:"summary"`
	Facts        []string `json:"facts,omitempty"`
	Themes       []string `json:"themes,omitempty"`
	SourceTokens int      `json:"source_tokens"`
	Tokens       int      `json:"tokens"`
	Method       string   `json:"method"`
	Status       string   `json:"status"`
	Fallback     string   `json:"fallback,omitempty"`
	// Model names the model that wrote an llm summary.
	Model string `json:"model,omitempty"`
	// Pending marks a node whose level summarizes with a model and whose
	// model summary is not written yet: its extractive summary stands
	// until then (see Memory.Summarize).
	Pending bool `json:"pending,omitempty"`
	// Rejected is the model's last reply when no try came back within the
	// level's budget: the node serves the shorter summary, the extractive
	// one when it fits, and keeps the reply here for `strata review`. Its
	// Fallback says why, so a retry of failed nodes asks the model again.
	// Nil when the node serves the model's summary or the model failed.
	Rejected *RejectedReply `json:"rejected,omitempty"`
	// Aggregates holds statistics over the numeric and label metadata of
	// the span's turns (002's aggregation), nil when they carry none.
	Aggregates *Aggregates `json:"aggregates,omitempty"`
	// Derived marks a summary whose words all come from its children's
	// summaries or its turns (an extractive digest of level 2 or above).
	// Stores keep it out of the full-text index: what it says is indexed
	// already, and search finds it there.
	Derived bool `json:"derived,omitempty"`
	// Tier is where the raw content of a level-1 node's span lives (set by
	// the store; empty for higher levels).
	Tier Tier `json:"tier,omitempty"`
	// ColdAt is when a level-1 node's span went cold, by the clock of the
	// pass that archived it (set by the store; zero for a span that never
	// went cold). Retention counts from it.
	ColdAt  time.Time `json:"cold_at,omitzero"`
	Created time.Time `json:"created"`
}

// RejectedReply is a model's summary that a node keeps without serving it.
type RejectedReply struct {
	Summary string `json:"summary"`
	Tokens  int    `json:"tokens"` // of Summary, as the Memory's tokenizer counts them
	Budget  int    `json:"budget"` // the budget the node was summarized for
	Model   string `json:"model,omitempty"`
	// Status says why it is not served: StatusOverBudget.
	Status string `json:"status"`
}

// Turns is the number of turns the node covers.
func (n *Node) Turns() int64 { return n.LastSeq - n.FirstSeq + 1 }

// NodeID derives a node's id from what identifies it, so that the same input
// always yields the same pyramid and a re-run rollup cannot duplicate a node.
func NodeID(namespace, conversation string, level int, firstSeq, lastSeq int64) string {
	h := sha256.New()
	for _, s := range []string{namespace, conversation, strconv.Itoa(level),
		strconv.FormatInt(firstSeq, 10), strconv.FormatInt(lastSeq, 10)} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return "n" + hex.EncodeToString(h.Sum(nil))[:16]
}
