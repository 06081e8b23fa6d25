// Package stratamcp serves a strata Memory as a Model Context Protocol
// server: tools that let an MCP client (Claude Desktop, Claude Code, an IDE
// agent) remember turns, search them, ask for a budgeted context package,
// zoom into a period, expand a summary into its turns and list what was
// learned. The tools only translate between MCP and the engine: every
// behaviour, validation included, lives in strata.Memory.
package stratamcp

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/strata-memory/strata"
)

// DefaultBudget is the token budget of a context call that gives none.
const DefaultBudget = 2000

// DefaultK is the number of hits a recall call that gives none returns.
const DefaultK = 10

// NewServer returns an MCP server whose tools act on mem. version is the
// server's version as announced to clients.
func NewServer(mem *strata.Memory, version string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "strata", Title: "strata long-term memory", Version: version}, &mcp.ServerOptions{
		Instructions: "strata is long-term memory for conversations. Store what is said with remember, " +
			"then use context to get a token-budgeted package of the relevant history before answering, " +
			"recall to search it, zoom to read a period's turns, expand to read the turns under a summary, " +
			"and learnings for the facts learned so far.",
	})
	t := &tools{mem: mem}
	mcp.AddTool(s, &mcp.Tool{
		Name: "remember",
		Description: "Append turns (messages) to a conversation's long-term memory. The conversation is created on first use. " +
			"Give each turn a role (user, assistant, system or tool) and its content; give an ext_id to make retries safe " +
			"(a turn whose ext_id is already stored is skipped). Returns how many turns were added and skipped.",
		Annotations: &mcp.ToolAnnotations{IdempotentHint: false, DestructiveHint: ptr(false)},
	}, t.remember)
	mcp.AddTool(s, &mcp.Tool{
		Name: "recall",
		Description: "Search remembered turns and summaries for a query (BM25, fused with vector similarity when an " +
			"embedder is configured). Use it to find where something was said; each hit gives its conversation, " +
			"turn ext_id or summary node id, turn numbers, time and text.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, t.recall)
	mcp.AddTool(s, &mcp.Tool{
		Name: "context",
		Description: "Get the most useful history of a conversation for the next prompt, within a token budget: " +
			"milestones, the freshest turns, summaries covering all older history, and the query's best matches; " +
			"with facts, also the known facts learned from it that bear on the query. " +
			"The text is ready to put in a prompt; the items say where each part came from (turn ext_ids, summary node ids " +
			"that expand can open).",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, t.context)
	mcp.AddTool(s, &mcp.Tool{
		Name: "zoom",
		Description: "Read every turn of a conversation in one period: a day (2023-05-08), an ISO week (2023-W19), " +
			"a month (2023-05), a range (2023-05-08..2023-05-10) or an expression such as \"yesterday\", " +
			"\"last week\" or \"in March\" (relative to the conversation's newest turn).",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, t.zoom)
	mcp.AddTool(s, &mcp.Tool{
		Name: "expand",
		Description: "Read the exact turns under a summary node, by its node id (as context and recall give them), " +
			"whatever storage tier holds them.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, t.expand)
	mcp.AddTool(s, &mcp.Tool{
		Name: "learnings",
		Description: "List the key facts learned from a conversation (or from every conversation), each with the " +
			"summary node and turns it came from. By default only facts in force (auto and confirmed) are listed.",
	}, t.learnings)
	mcp.AddTool(s, &mcp.Tool{
		Name: "forget",
		Description: "Delete a conversation and everything remembered of it (turns, summaries, vectors, learnings, archived " +
			"history), for good, keeping only an audit record of what went. Use it only when the user asks to forget; " +
			"confirm must be true.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true), IdempotentHint: false},
	}, t.forget)
	return s
}

// Serve runs an MCP server over mem on the transport t until the client
// disconnects or ctx is done.
func Serve(ctx context.Context, mem *strata.Memory, version string, t mcp.Transport) error {
	return NewServer(mem, version).Run(ctx, t)
}

func ptr[T any](v T) *T { return &v }

// tools holds the tool handlers.
type tools struct{ mem *strata.Memory }

// toolError wraps an engine error so the tool result names the tool; the
// engine's message names the field and the problem.
func toolError(tool string, err error) error {
	return fmt.Errorf("%s: %w", tool, err)
}

// stamp formats a time for output ("" for the zero time).
func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// TurnIn is one turn given to remember.
type TurnIn struct {
	Role    string `json:"role" jsonschema:"who spoke: user, assistant, system or tool"`
	Name    string `json:"name,omitempty" jsonschema:"the speaker's name, if the role is not enough (e.g. Caroline)"`
	Content string `json:"content" jsonschema:"what was said"`
	Time    string `json:"time,omitempty" jsonschema:"when it was said, RFC 3339 (2023-05-08T13:56:00Z); default: now"`
	ExtID   string `json:"ext_id,omitempty" jsonschema:"a stable id of the turn; a turn whose ext_id is already stored is skipped, so retries are safe"`
}

// RememberIn is the input of remember.
type RememberIn struct {
	Conversation string   `json:"conversation" jsonschema:"the conversation id (created on first use)"`
	Turns        []TurnIn `json:"turns" jsonschema:"the turns to append, oldest first"`
}

func (t *tools) remember(ctx context.Context, _ *mcp.CallToolRequest, in RememberIn) (*mcp.CallToolResult, strata.IngestResult, error) {
	if len(in.Turns) == 0 {
		return nil, strata.IngestResult{}, fmt.Errorf("remember: turns: give at least one turn")
	}
	b := strata.Batch{Conversation: in.Conversation, Turns: make([]strata.Turn, len(in.Turns))}
	for i, ti := range in.Turns {
		tu := strata.Turn{Role: strata.Role(ti.Role), Name: ti.Name, Content: ti.Content, ExtID: ti.ExtID}
		if ti.Time != "" {
			tm, err := time.Parse(time.RFC3339, ti.Time)
			if err != nil {
				return nil, strata.IngestResult{}, fmt.Errorf("remember: conversation %q turn %d: time: %q is not an RFC 3339 time such as 2023-05-08T13:56:00Z", in.Conversation, i+1, ti.Time)
			}
			if tm.IsZero() {
				// The engine reads the zero time as "no time" and would
				// stamp the turn with the clock: refused, as on every path.
				return nil, strata.IngestResult{}, fmt.Errorf("remember: conversation %q turn %d: time: %q is the zero time, which reads as no time (leave time out to use the current time)", in.Conversation, i+1, ti.Time)
			}
			tu.Time = tm
		}
		b.Turns[i] = tu
	}
	res, err := t.mem.Ingest(ctx, b)
	if err != nil {
		return nil, res, toolError("remember", err)
	}
	return nil, res, nil
}

// RecallIn is the input of recall.
type RecallIn struct {
	Query        string `json:"query" jsonschema:"what to look for, in words"`
	Conversation string `json:"conversation,omitempty" jsonschema:"search only this conversation (default: every conversation)"`
	K            int    `json:"k,omitempty" jsonschema:"the number of hits (default 10)"`
}

// Hit is one search hit.
type Hit struct {
	Kind         string  `json:"kind" jsonschema:"turn or summary"`
	Conversation string  `json:"conversation"`
	ExtID        string  `json:"ext_id,omitempty" jsonschema:"the turn's ext_id (turn hits)"`
	NodeID       string  `json:"node_id,omitempty" jsonschema:"the summary's node id (summary hits; expand opens it)"`
	Level        int     `json:"level,omitempty"`
	FirstSeq     int64   `json:"first_seq" jsonschema:"the first turn number covered"`
	LastSeq      int64   `json:"last_seq" jsonschema:"the last turn number covered"`
	Start        string  `json:"start"`
	End          string  `json:"end"`
	Score        float64 `json:"score"`
	Text         string  `json:"text"`
}

// RecallOut is the output of recall.
type RecallOut struct {
	Hits []Hit `json:"hits"`
}

func (t *tools) recall(ctx context.Context, _ *mcp.CallToolRequest, in RecallIn) (*mcp.CallToolResult, RecallOut, error) {
	out := RecallOut{Hits: []Hit{}}
	if strings.TrimSpace(in.Query) == "" {
		return nil, out, fmt.Errorf("recall: query: give the words to look for")
	}
	if in.K < 0 {
		return nil, out, fmt.Errorf("recall: k: %d is negative", in.K)
	}
	k := in.K
	if k == 0 {
		k = DefaultK
	}
	if in.Conversation != "" {
		if _, err := t.mem.Conversation(ctx, in.Conversation); err != nil {
			return nil, out, toolError("recall", err)
		}
	}
	hits, err := t.mem.Search(ctx, in.Conversation, in.Query, k)
	if err != nil {
		return nil, out, toolError("recall", err)
	}
	for _, h := range hits {
		o := Hit{Kind: h.Kind, Conversation: h.Conversation, Score: h.Score}
		if tu := h.Turn; tu != nil {
			o.ExtID, o.FirstSeq, o.LastSeq = tu.ExtID, tu.Seq, tu.Seq
			o.Start, o.End = stamp(tu.Time), stamp(tu.Time)
			o.Text = tu.Speaker() + ": " + tu.Text()
		}
		if n := h.Node; n != nil {
			o.NodeID, o.Level, o.FirstSeq, o.LastSeq = n.ID, n.Level, n.FirstSeq, n.LastSeq
			o.Start, o.End, o.Text = stamp(n.Start), stamp(n.End), n.Summary
		}
		out.Hits = append(out.Hits, o)
	}
	return nil, out, nil
}

// ContextIn is the input of context.
type ContextIn struct {
	Conversation string `json:"conversation" jsonschema:"the conversation id"`
	Query        string `json:"query,omitempty" jsonschema:"what the next prompt is about; its matches and the periods it names get more room"`
	Budget       int    `json:"budget,omitempty" jsonschema:"the hard token budget of the whole package (default 2000)"`
	Format       string `json:"format,omitempty" jsonschema:"text (default) or markdown"`
	Facts        bool   `json:"facts,omitempty" jsonschema:"add a known-facts section: the conversation's current learnings that bear on the query, each with the turn it came from, within 15% of the budget"`
}

// Item is the provenance of one part of a context package.
type Item struct {
	Kind      string `json:"kind" jsonschema:"turn, summary or learning"`
	Reason    string `json:"reason" jsonschema:"why it is in: pinned, fact, fresh, coverage, relevance"`
	ExtID     string `json:"ext_id,omitempty" jsonschema:"the turn's ext_id (turn items; for a known fact, the turn it came from)"`
	NodeID    string `json:"node_id,omitempty" jsonschema:"the summary's node id (summary items; expand opens it)"`
	Level     int    `json:"level,omitempty"`
	LevelName string `json:"level_name,omitempty"`
	FirstSeq  int64  `json:"first_seq"`
	LastSeq   int64  `json:"last_seq"`
	Start     string `json:"start"`
	End       string `json:"end"`
	Tokens    int    `json:"tokens"`
}

// ContextOut is the output of context.
type ContextOut struct {
	Conversation string `json:"conversation"`
	Text         string `json:"text" jsonschema:"the rendered package, ready for a prompt"`
	Tokens       int    `json:"tokens" jsonschema:"the tokens of text"`
	Budget       int    `json:"budget"`
	Tokenizer    string `json:"tokenizer"`
	Turns        int64  `json:"turns" jsonschema:"the turns in the conversation"`
	Items        []Item `json:"items" jsonschema:"where each part of the package came from"`
}

func (t *tools) context(ctx context.Context, _ *mcp.CallToolRequest, in ContextIn) (*mcp.CallToolResult, ContextOut, error) {
	budget := in.Budget
	if budget == 0 {
		budget = DefaultBudget
	}
	if in.Format != "" && in.Format != strata.FormatText && in.Format != strata.FormatMarkdown {
		return nil, ContextOut{}, fmt.Errorf("context: format: %q is not text or markdown", in.Format)
	}
	if in.Facts && in.Conversation != "" {
		// The facts no pass has read yet first, as the learnings tool does.
		if _, err := t.mem.Learn(ctx, in.Conversation); err != nil {
			return nil, ContextOut{}, toolError("context", err)
		}
	}
	pkg, err := t.mem.Context(ctx, strata.ContextRequest{Conversation: in.Conversation, Query: in.Query, Budget: budget,
		Format: in.Format, Facts: in.Facts})
	if err != nil {
		return nil, ContextOut{}, toolError("context", err)
	}
	out := ContextOut{Conversation: pkg.Conversation, Text: pkg.Rendered, Tokens: pkg.Tokens, Budget: pkg.Budget,
		Tokenizer: pkg.Tokenizer, Turns: pkg.Turns, Items: make([]Item, 0, len(pkg.Items))}
	for _, it := range pkg.Items {
		out.Items = append(out.Items, Item{Kind: it.Kind, Reason: it.Reason, ExtID: it.ExtID, NodeID: it.NodeID,
			Level: it.Level, LevelName: it.LevelName, FirstSeq: it.FirstSeq, LastSeq: it.LastSeq,
			Start: stamp(it.Start), End: stamp(it.End), Tokens: it.Tokens})
	}
	// The rendered text first, as a model reads it, then the provenance in
	// lines, for clients that show only text: the node ids are what expand
	// takes.
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: pkg.Rendered},
		&mcp.TextContent{Text: provenance(out.Items)}}}
	return res, out, nil
}

// provenance lists where each item of a package came from, one line each.
func provenance(items []Item) string {
	var b strings.Builder
	b.WriteString("Provenance (expand takes a summary's node id):\n")
	for _, it := range items {
		span := fmt.Sprintf("turn %d", it.FirstSeq)
		if it.LastSeq != it.FirstSeq {
			span = fmt.Sprintf("turns %d-%d", it.FirstSeq, it.LastSeq)
		}
		id := "ext_id " + it.ExtID
		switch it.Kind {
		case strata.KindSummary:
			id = "node " + it.NodeID + " (" + it.LevelName + ")"
		case strata.KindLearning: // where it was said; it has no time of its own
			if it.ExtID != "" {
				span += ", ext_id " + it.ExtID
			}
			fmt.Fprintf(&b, "- %s from %s, %s\n", it.Kind, span, it.Reason)
			continue
		}
		fmt.Fprintf(&b, "- %s %s, %s, %s .. %s, %s\n", it.Kind, id, span, it.Start, it.End, it.Reason)
	}
	return b.String()
}

// TurnOut is one stored turn.
type TurnOut struct {
	Seq     int64  `json:"seq" jsonschema:"the turn's number in its conversation"`
	ExtID   string `json:"ext_id"`
	Role    string `json:"role"`
	Name    string `json:"name,omitempty"`
	Time    string `json:"time"`
	Content string `json:"content" jsonschema:"what was said, with any tool calls and results"`
}

func turnsOut(ts []strata.Turn) []TurnOut {
	out := make([]TurnOut, 0, len(ts))
	for _, tu := range ts {
		out = append(out, TurnOut{Seq: tu.Seq, ExtID: tu.ExtID, Role: string(tu.Role), Name: tu.Name,
			Time: stamp(tu.Time), Content: tu.Text()})
	}
	return out
}

// ZoomIn is the input of zoom.
type ZoomIn struct {
	Conversation string `json:"conversation" jsonschema:"the conversation id"`
	When         string `json:"when" jsonschema:"the period: 2023-05-08, 2023-W19, 2023-05, 2023-05-08..2023-05-10, or an expression such as yesterday, last week, in March"`
}

// ZoomOut is the output of zoom.
type ZoomOut struct {
	Conversation string    `json:"conversation"`
	Period       string    `json:"period" jsonschema:"the period read, as a label"`
	Start        string    `json:"start"`
	End          string    `json:"end" jsonschema:"the end of the period (exclusive)"`
	Turns        []TurnOut `json:"turns"`
}

func (t *tools) zoom(ctx context.Context, _ *mcp.CallToolRequest, in ZoomIn) (*mcp.CallToolResult, ZoomOut, error) {
	if strings.TrimSpace(in.When) == "" {
		return nil, ZoomOut{}, fmt.Errorf("zoom: when: give a period such as 2023-05-08 or last week")
	}
	p, err := t.mem.ZoomPeriod(ctx, in.Conversation, in.When, time.Time{})
	if err != nil {
		return nil, ZoomOut{}, toolError("zoom", err)
	}
	ts, err := t.mem.Zoom(ctx, in.Conversation, p)
	if err != nil {
		return nil, ZoomOut{}, toolError("zoom", err)
	}
	return nil, ZoomOut{Conversation: in.Conversation, Period: p.Label(), Start: stamp(p.Start), End: stamp(p.End),
		Turns: turnsOut(ts)}, nil
}

// ExpandIn is the input of expand.
type ExpandIn struct {
	NodeID string `json:"node_id" jsonschema:"the summary node id, as context and recall give it"`
}

// NodeOut is a summary node.
type NodeOut struct {
	ID           string `json:"id"`
	Conversation string `json:"conversation"`
	Level        int    `json:"level"`
	FirstSeq     int64  `json:"first_seq"`
	LastSeq      int64  `json:"last_seq"`
	Start        string `json:"start"`
	End          string `json:"end"`
	Tier         string `json:"tier,omitempty"`
	Summary      string `json:"summary"`
}

// ExpandOut is the output of expand.
type ExpandOut struct {
	Node  NodeOut   `json:"node"`
	Turns []TurnOut `json:"turns"`
}

func (t *tools) expand(ctx context.Context, _ *mcp.CallToolRequest, in ExpandIn) (*mcp.CallToolResult, ExpandOut, error) {
	if in.NodeID == "" {
		return nil, ExpandOut{}, fmt.Errorf("expand: node_id: give a summary node id (context and recall list them)")
	}
	n, ts, err := t.mem.Expand(ctx, in.NodeID)
	if err != nil {
		// An expired span names what remains in the error.
		return nil, ExpandOut{}, toolError("expand", err)
	}
	return nil, ExpandOut{
		Node: NodeOut{ID: n.ID, Conversation: n.Conversation, Level: n.Level, FirstSeq: n.FirstSeq, LastSeq: n.LastSeq,
			Start: stamp(n.Start), End: stamp(n.End), Tier: string(n.Tier), Summary: n.Summary},
		Turns: turnsOut(ts),
	}, nil
}

// LearningsIn is the input of learnings.
type LearningsIn struct {
	Conversation string `json:"conversation,omitempty" jsonschema:"the conversation id (default: every conversation)"`
	Status       string `json:"status,omitempty" jsonschema:"only learnings with this status: auto, confirmed, rejected, superseded, or all (default: auto and confirmed)"`
	Subject      string `json:"subject,omitempty" jsonschema:"only learnings about this subject, as listed"`
}

// LearningOut is one learning.
type LearningOut struct {
	ID           int64  `json:"id"`
	Conversation string `json:"conversation"`
	Subject      string `json:"subject"`
	Text         string `json:"text"`
	Status       string `json:"status"`
	Node         string `json:"node" jsonschema:"the summary node it came from"`
	FirstSeq     int64  `json:"first_seq"`
	LastSeq      int64  `json:"last_seq"`
	SupersededBy int64  `json:"superseded_by,omitempty"`
}

// LearningsOut is the output of learnings.
type LearningsOut struct {
	Learnings []LearningOut `json:"learnings"`
}

func (t *tools) learnings(ctx context.Context, _ *mcp.CallToolRequest, in LearningsIn) (*mcp.CallToolResult, LearningsOut, error) {
	out := LearningsOut{Learnings: []LearningOut{}}
	f := strata.LearningFilter{Conversation: in.Conversation, Subject: in.Subject}
	switch in.Status {
	case "":
		f.Statuses = []string{strata.LearningAuto, strata.LearningConfirmed}
	case "all":
	case strata.LearningAuto, strata.LearningConfirmed, strata.LearningRejected, strata.LearningSuperseded:
		f.Statuses = []string{in.Status}
	default:
		return nil, out, fmt.Errorf("learnings: status: %q is not auto, confirmed, rejected, superseded or all", in.Status)
	}
	// Listing first reads the facts no pass has read yet, as the CLI does.
	if _, err := t.mem.Learn(ctx, in.Conversation); err != nil {
		return nil, out, toolError("learnings", err)
	}
	ls, err := t.mem.Learnings(ctx, f)
	if err != nil {
		return nil, out, toolError("learnings", err)
	}
	for _, l := range ls {
		out.Learnings = append(out.Learnings, LearningOut{ID: l.ID, Conversation: l.Conversation, Subject: l.Subject,
			Text: l.Text, Status: l.Status, Node: l.Node, FirstSeq: l.FirstSeq, LastSeq: l.LastSeq, SupersededBy: l.SupersededBy})
	}
	return nil, out, nil
}

// ForgetIn is the input of forget.
type ForgetIn struct {
	Conversation string `json:"conversation" jsonschema:"the conversation id to delete"`
	Confirm      bool   `json:"confirm" jsonschema:"must be true: nothing brings the conversation back"`
	Reason       string `json:"reason,omitempty" jsonschema:"why, kept in the audit record"`
}

func (t *tools) forget(ctx context.Context, _ *mcp.CallToolRequest, in ForgetIn) (*mcp.CallToolResult, strata.Deletion, error) {
	if in.Conversation == "" {
		return nil, strata.Deletion{}, fmt.Errorf("forget: conversation: give the conversation id to delete")
	}
	if !in.Confirm {
		return nil, strata.Deletion{}, fmt.Errorf("forget: confirm: must be true to delete %q for good", in.Conversation)
	}
	d, err := t.mem.DeleteConversation(ctx, in.Conversation, in.Reason)
	if err != nil {
		return nil, strata.Deletion{}, toolError("forget", err)
	}
	return nil, d, nil
}
