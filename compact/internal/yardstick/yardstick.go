// Package yardstick measures what live compaction keeps of a message
// list: it compacts the list once with package compact (the extractive
// checkpoint writer, no model) and reports the tokens before and after,
// the identifiers of the compacted span and how many of them the
// compacted list still holds, overall and per kind, and whether the list
// is still a valid request (tool calls paired with their results, roles
// in an order the provider accepts).
//
// The identifiers are the checkpoint package's own (checkpoint.Ledger)
// read from the span as the caller passed it, before any pruning; one is
// kept when its text appears, byte for byte, in any string of the
// compacted list (message text, tool arguments, tool results, the
// checkpoint). When the list is only pruned (it fits under the threshold
// once layer 1 has run), the span is every message after the leading
// system messages, and the question is what pruning lost.
package yardstick

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/compact"
	"github.com/strata-memory/strata/compact/checkpoint"
	"github.com/strata-memory/strata/compact/internal/evidgen"
)

// Row is one measurement.
type Row struct {
	Source    string
	Provider  compact.Provider
	Setting   string // "default" or "tight"
	Threshold int
	Keep      int

	Messages      int // in the list before
	Before, After int // tokens, as compact estimates them
	Compacted     bool
	Reason        string // why layer 2 did not run
	SpanMessages  int    // messages compacted (all but the system ones when only pruned)
	Identifiers   int    // in the span
	Kept          int    // of them, in the compacted list
	ByKind        map[string][2]int
	PairsOK       bool
	RolesOK       bool
	Problem       string // the first pairing or role problem
	Lost          []checkpoint.Identifier
	// Scanned and ScannedKept are the same count over every identifier
	// the scanners find in the span (checkpoint.Scan), tool output
	// included.
	Scanned, ScannedKept int
	// Named and NamedKept count the identifiers the conversation names
	// itself: those the scanners find outside tool output (user and
	// assistant text, tool calls' arguments). ListTokens is what listing
	// every scanned identifier once would take, in tokens: more than the
	// list may hold after compaction means no compaction can keep them all.
	Named, NamedKept int
	// Said and SaidKept count the named identifiers that remain when the
	// bodies tool calls write (a file's content, a patch, an edit's old
	// and new text) are left out too: what the conversation says rather
	// than the code it wrote, which the files on disk keep.
	Said, SaidKept int
	ListTokens     int
	CheckpointTok  int

	// ByClass counts, per class, the labelled identifiers (those a
	// generator placed and labelled with the class of their place; see
	// MeasureLabelled) that occur in the span, and how many of them the
	// compacted list keeps: [kept, total]. LabelTokens is what listing
	// each of them once takes, in tokens; LabelsFit says that is at most
	// half of CheckpointBudget, where every one of them could be kept.
	ByClass     map[string][2]int
	LabelTokens int
	LabelsFit   bool
	LostLabels  []Label
	// ErrorIDs and ErrorIDsKept count the identifiers on the error lines
	// of the span's tool output, by the yardstick's own rule (ErrorLine,
	// Identifiers), with no labels and nothing from package checkpoint.
	ErrorIDs, ErrorIDsKept int
	LostErrorIDs           []string
	// ErrorIDTokens and NamedTokens are what listing each error-line
	// identifier, and each named identifier, once takes, in tokens: the
	// least room the checkpoint needs to keep all of them.
	ErrorIDTokens, NamedTokens int
}

// Label is an identifier with the class of the place it was put, as the
// source that placed it knows it.
type Label struct {
	Text, Class string
}

// CheckpointBudget is the extractive checkpoint's budget, in tokens, as
// the documentation gives it.
const CheckpointBudget = 6000

// Rate is the share of the span's identifiers kept.
func (r Row) Rate() float64 {
	if r.Identifiers == 0 {
		return 1
	}
	return float64(r.Kept) / float64(r.Identifiers)
}

// Measure compacts body (a message list in p's form) with cfg, counting
// tokens with tok, and measures the result.
func Measure(ctx context.Context, source string, p compact.Provider, body []byte, cfg compact.Config, tok strata.Tokenizer) (Row, error) {
	return MeasureLabelled(ctx, source, p, body, cfg, tok, nil)
}

// MeasureLabelled is Measure, and also counts, per class, the labels
// whose text occurs in the span and how many of them the compacted list
// keeps. An occurrence is a whole token: the text with no letter, digit
// or underscore right before or after it.
func MeasureLabelled(ctx context.Context, source string, p compact.Provider, body []byte, cfg compact.Config, tok strata.Tokenizer, labels []Label) (Row, error) {
	row := Row{ByClass: map[string][2]int{}, Source: source, Provider: p, Threshold: cfg.CompactionThreshold, Keep: cfg.KeepRecentTokens, ByKind: map[string][2]int{}}
	t, err := compact.Parse(p, body)
	if err != nil {
		return row, fmt.Errorf("%s: %w", source, err)
	}
	row.Messages = len(t.Messages)
	res, err := compactOnce(ctx, t, cfg, tok)
	if err != nil {
		return row, fmt.Errorf("%s: compact: %w", source, err)
	}
	row.Before, row.After, row.Compacted, row.Reason = res.TokensBefore, res.TokensAfter, res.Compacted, res.Reason
	row.CheckpointTok = res.Checkpoint.Tokens
	span, err := row.spanOf(res, t, p)
	if err != nil {
		return row, err
	}
	out := res.Transcript.JSON()
	hay := haystack(out)
	row.countLedger(span, hay)
	row.countScanned(span, hay, tok)
	row.countLabels(span, hay, labels, tok)
	row.countErrorLines(span, hay, tok)
	row.PairsOK, row.RolesOK, row.Problem = Valid(p, out)
	return row, nil
}

// compactOnce compacts t with cfg and the extractive checkpoint.
func compactOnce(ctx context.Context, t *compact.Transcript, cfg compact.Config, tok strata.Tokenizer) (compact.Result, error) {
	w, err := checkpoint.New(checkpoint.Options{Tokenizer: tok})
	if err != nil {
		return compact.Result{}, err
	}
	c, err := compact.New(compact.Options{Config: cfg, Tokenizer: tok, Checkpointer: w})
	if err != nil {
		return compact.Result{}, err
	}
	return c.Compact(ctx, compact.Request{Transcript: t})
}

// spanOf returns the entries measured: the compacted span's, or, when
// nothing was compacted, every message's but the system ones.
func (row *Row) spanOf(res compact.Result, t *compact.Transcript, p compact.Provider) ([]checkpoint.Entry, error) {
	if res.Compacted {
		row.SpanMessages = res.MessagesCompacted
		return res.Span.Entries, nil
	}
	msgs, err := rawMessages(t.JSON(), p)
	if err != nil {
		return nil, err
	}
	var span []checkpoint.Entry
	for _, m := range msgs {
		if role := field(m, "role"); role != "system" && role != "developer" {
			row.SpanMessages++
			span = append(span, flatten(m, p)...)
		}
	}
	return span, nil
}

// countLedger counts, by kind, the identifiers of the span's ledger and
// those the compacted list (hay) keeps.
func (row *Row) countLedger(span []checkpoint.Entry, hay string) {
	for _, id := range checkpoint.Ledger(span, "") {
		k := row.ByKind[id.Kind]
		k[1]++
		row.Identifiers++
		if strings.Contains(hay, id.Text) {
			k[0]++
			row.Kept++
		} else {
			row.Lost = append(row.Lost, id)
		}
		row.ByKind[id.Kind] = k
	}
}

// countScanned counts what the scanner finds in the whole span, in what
// the conversation names (all but tool results) and in what it says (the
// same without the bodies of written files), and what of each is kept.
func (row *Row) countScanned(span []checkpoint.Entry, hay string, tok strata.Tokenizer) {
	var list []string
	for _, id := range checkpoint.Scan(span) {
		row.Scanned++
		list = append(list, id.Text)
		if strings.Contains(hay, id.Text) {
			row.ScannedKept++
		}
	}
	row.ListTokens = tok.Count(strings.Join(list, "\n"))
	var named []checkpoint.Entry
	for _, e := range span {
		if e.Kind != "tool_result" {
			named = append(named, e)
		}
	}
	var namedList []string
	for _, id := range checkpoint.Scan(named) {
		row.Named++
		namedList = append(namedList, id.Text)
		if strings.Contains(hay, id.Text) {
			row.NamedKept++
		}
	}
	if len(namedList) > 0 {
		row.NamedTokens = tok.Count(strings.Join(namedList, "\n"))
	}
	said := make([]checkpoint.Entry, 0, len(named))
	for _, e := range named {
		if e.Kind == "tool_call" {
			e.Text = withoutBodies(e.Text)
		}
		said = append(said, e)
	}
	for _, id := range checkpoint.Scan(said) {
		row.Said++
		if strings.Contains(hay, id.Text) {
			row.SaidKept++
		}
	}
}

// countLabels counts, by class, the labels whose text occurs in the span
// and those the compacted list keeps.
func (row *Row) countLabels(span []checkpoint.Entry, hay string, labels []Label, tok strata.Tokenizer) {
	var spanText strings.Builder
	for _, e := range span {
		spanText.WriteString(haystack([]byte(e.Text)))
		spanText.WriteByte('\n')
	}
	st := spanText.String()
	var inSpan []string
	for _, l := range labels {
		if !evidgen.ContainsToken(st, l.Text) {
			continue
		}
		inSpan = append(inSpan, l.Text)
		c := row.ByClass[l.Class]
		c[1]++
		if evidgen.ContainsToken(hay, l.Text) {
			c[0]++
		} else {
			row.LostLabels = append(row.LostLabels, l)
		}
		row.ByClass[l.Class] = c
	}
	if len(inSpan) > 0 {
		row.LabelTokens = tok.Count(strings.Join(inSpan, "\n"))
	}
	row.LabelsFit = row.LabelTokens <= CheckpointBudget/2
}

// countErrorLines counts the identifiers on the error lines of the span's
// tool results (by the yardstick's own rule, ErrorLines) and those kept.
func (row *Row) countErrorLines(span []checkpoint.Entry, hay string, tok strata.Tokenizer) {
	seen := map[string]bool{}
	var errList []string
	for _, e := range span {
		if e.Kind != "tool_result" {
			continue
		}
		for _, l := range ErrorLines(e.Text) {
			for _, id := range Identifiers(l) {
				if seen[id] {
					continue
				}
				seen[id] = true
				errList = append(errList, id)
				row.ErrorIDs++
				if evidgen.ContainsToken(hay, id) {
					row.ErrorIDsKept++
				} else {
					row.LostErrorIDs = append(row.LostErrorIDs, id)
				}
			}
		}
	}
	if len(errList) > 0 {
		row.ErrorIDTokens = tok.Count(strings.Join(errList, "\n"))
	}
}

// bodyKeys are the tool-call arguments that carry what a call writes
// rather than what it names: file contents, patches, edits.
var bodyKeys = map[string]bool{"content": true, "contents": true, "file_text": true, "old_string": true,
	"new_string": true, "old_str": true, "new_str": true, "patch": true, "diff": true, "code": true,
	"input": true, "edits": true, "source": true, "body": true, "text": true}

// withoutBodies returns a tool call's JSON arguments without the
// arguments in bodyKeys (the text unchanged if it is not a JSON object).
func withoutBodies(args string) string {
	var m map[string]any
	if json.Unmarshal([]byte(args), &m) != nil {
		return args
	}
	for k := range m {
		if bodyKeys[strings.ToLower(k)] {
			delete(m, k)
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return args
	}
	return string(b)
}

// haystack joins every string of a JSON document, decoding strings that
// are JSON themselves (OpenAI tool arguments), one per line.
func haystack(doc []byte) string {
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		return string(doc)
	}
	var b strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			b.WriteString(x)
			b.WriteByte('\n')
			if s := strings.TrimSpace(x); strings.HasPrefix(s, "{") || strings.HasPrefix(s, "[") {
				var inner any
				if json.Unmarshal([]byte(s), &inner) == nil {
					walk(inner)
				}
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(x[k])
			}
		}
	}
	walk(v)
	return b.String()
}

// rawMessages returns the messages of a list in p's form.
func rawMessages(doc []byte, p compact.Provider) ([]map[string]json.RawMessage, error) {
	var msgs []map[string]json.RawMessage
	trimmed := strings.TrimSpace(string(doc))
	if strings.HasPrefix(trimmed, "{") {
		var body struct {
			Messages []map[string]json.RawMessage `json:"messages"`
		}
		if err := json.Unmarshal(doc, &body); err != nil {
			return nil, fmt.Errorf("%s list: %w", p, err)
		}
		return body.Messages, nil
	}
	if err := json.Unmarshal(doc, &msgs); err != nil {
		return nil, fmt.Errorf("%s list: %w", p, err)
	}
	return msgs, nil
}

func field(m map[string]json.RawMessage, k string) string {
	var s string
	_ = json.Unmarshal(m[k], &s)
	return s
}

type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// text returns content that is a string or an array of text parts.
func text(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []block
	_ = json.Unmarshal(raw, &parts)
	var ts []string
	for _, p := range parts {
		if p.Text != "" {
			ts = append(ts, p.Text)
		}
	}
	return strings.Join(ts, "\n")
}

// flatten turns one message into checkpoint entries, as package compact
// does for a span: one per text, thinking block, tool call and result.
func flatten(m map[string]json.RawMessage, p compact.Provider) []checkpoint.Entry {
	role := field(m, "role")
	var out []checkpoint.Entry
	if p == compact.OpenAI {
		if role == "tool" {
			return []checkpoint.Entry{{Role: "tool", Kind: "tool_result", CallID: field(m, "tool_call_id"), Text: text(m["content"])}}
		}
		if s := text(m["content"]); s != "" {
			out = append(out, checkpoint.Entry{Role: role, Kind: "text", Text: s})
		}
		var calls []struct {
			ID       string `json:"id"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		}
		_ = json.Unmarshal(m["tool_calls"], &calls)
		for _, c := range calls {
			out = append(out, checkpoint.Entry{Role: role, Kind: "tool_call", Name: c.Function.Name, CallID: c.ID, Text: c.Function.Arguments})
		}
		return out
	}
	var s string
	if json.Unmarshal(m["content"], &s) == nil {
		return []checkpoint.Entry{{Role: role, Kind: "text", Text: s}}
	}
	var blocks []block
	_ = json.Unmarshal(m["content"], &blocks)
	for _, b := range blocks {
		switch b.Type {
		case "text":
			out = append(out, checkpoint.Entry{Role: role, Kind: "text", Text: b.Text})
		case "thinking":
			out = append(out, checkpoint.Entry{Role: role, Kind: "thinking", Text: b.Thinking})
		case "tool_use":
			out = append(out, checkpoint.Entry{Role: role, Kind: "tool_call", Name: b.Name, CallID: b.ID, Text: string(b.Input)})
		case "tool_result":
			out = append(out, checkpoint.Entry{Role: "tool", Kind: "tool_result", CallID: b.ToolUseID, Text: text(b.Content), IsError: b.IsError})
		}
	}
	return out
}

// Valid checks a message list in p's form as the provider would: every
// tool call answered by its result before the conversation goes on, no
// result without its call (pairsOK), and roles in an accepted order
// (rolesOK): for OpenAI, system and developer messages only at the head
// and a user message first after them; for Anthropic, user and assistant
// alternating from a user message. problem names the first failure.
func Valid(p compact.Provider, doc []byte) (pairsOK, rolesOK bool, problem string) {
	msgs, err := rawMessages(doc, p)
	if err != nil {
		return false, false, err.Error()
	}
	v := verdict{pairsOK: true, rolesOK: true}
	if p == compact.OpenAI {
		v.openAI(msgs)
	} else {
		v.anthropic(msgs)
	}
	return v.pairsOK, v.rolesOK, v.problem
}

// verdict is what Valid finds: whether pairs and roles hold, and the
// first failure.
type verdict struct {
	pairsOK, rolesOK bool
	problem          string
}

// fail records a failure of the pairs (pairs) or of the roles.
func (v *verdict) fail(pairs bool, format string, a ...any) {
	if pairs {
		v.pairsOK = false
	} else {
		v.rolesOK = false
	}
	if v.problem == "" {
		v.problem = fmt.Sprintf(format, a...)
	}
}

// openAI checks an OpenAI message list: system and developer messages
// only at the head, a user message first after them, and every tool call
// answered by a tool message before the conversation goes on.
func (v *verdict) openAI(msgs []map[string]json.RawMessage) {
	open := map[string]bool{}
	head := true
	for i, m := range msgs {
		role := field(m, "role")
		switch role {
		case "system", "developer":
			if !head {
				v.fail(false, "message %d: %s message after the conversation started", i, role)
			}
			continue
		case "user", "assistant", "tool":
		default:
			v.fail(false, "message %d: unknown role %q", i, role)
		}
		if head && role != "user" {
			v.fail(false, "message %d: the conversation starts with %s", i, role)
		}
		head = false
		if role == "tool" {
			id := field(m, "tool_call_id")
			if !open[id] {
				v.fail(true, "message %d: tool result %s answers no pending call", i, id)
			}
			delete(open, id)
			continue
		}
		if len(open) > 0 {
			v.fail(true, "message %d: %d tool calls unanswered before it", i, len(open))
			clear(open)
		}
		pend(open, m, compact.OpenAI)
	}
}

// anthropic checks an Anthropic message list: user and assistant
// alternating from a user message, and every tool_use answered by a
// tool_result of the next message.
func (v *verdict) anthropic(msgs []map[string]json.RawMessage) {
	open := map[string]bool{}
	for i, m := range msgs {
		role := field(m, "role")
		want := "user"
		if i%2 == 1 {
			want = "assistant"
		}
		if role != want {
			v.fail(false, "message %d is %s, want %s (roles must alternate from user)", i, role, want)
		}
		for _, e := range flatten(m, compact.Anthropic) {
			if e.Kind != "tool_result" {
				continue
			}
			if !open[e.CallID] {
				v.fail(true, "message %d: tool_result %s answers no tool_use of the message before", i, e.CallID)
			}
			delete(open, e.CallID)
		}
		if len(open) > 0 {
			v.fail(true, "message %d: %d tool_use blocks of the message before unanswered", i, len(open))
			clear(open)
		}
		pend(open, m, compact.Anthropic)
	}
}

// pend marks the tool calls of message m (in p's form) as waiting for
// their results.
func pend(open map[string]bool, m map[string]json.RawMessage, p compact.Provider) {
	for _, e := range flatten(m, p) {
		if e.Kind == "tool_call" {
			open[e.CallID] = true
		}
	}
}

// Table formats rows as two Markdown tables: the measure, and the share
// kept per kind of identifier (kept/total).
func Table(rows []Row) string {
	var b strings.Builder
	b.WriteString("| source | provider | setting | threshold / keep | messages | tokens before → after | compacted | ledger identifiers | kept | named by the conversation | kept | said (named, without written bodies) | kept | all scanned | kept | tokens to list all | pairs | roles |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	ok := func(v bool) string {
		if v {
			return "ok"
		}
		return "BROKEN"
	}
	for _, r := range rows {
		comp := fmt.Sprintf("%d msgs", r.SpanMessages)
		if !r.Compacted {
			comp = "pruned only (" + r.Reason + ")"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %d / %d | %d | %d → %d | %s | %d | %d (%.1f%%) | %d | %d (%.1f%%) | %d | %d (%.1f%%) | %d | %d (%.1f%%) | %d | %s | %s |\n",
			r.Source, r.Provider, r.Setting, r.Threshold, r.Keep, r.Messages, r.Before, r.After, comp, r.Identifiers, r.Kept, 100*r.Rate(),
			r.Named, r.NamedKept, 100*float64(r.NamedKept)/float64(max(1, r.Named)),
			r.Said, r.SaidKept, 100*float64(r.SaidKept)/float64(max(1, r.Said)),
			r.Scanned, r.ScannedKept, 100*float64(r.ScannedKept)/float64(max(1, r.Scanned)), r.ListTokens, ok(r.PairsOK), ok(r.RolesOK))
	}
	b.WriteString("\n| source | provider | setting |")
	for _, k := range checkpoint.Kinds {
		b.WriteString(" " + k + " |")
	}
	b.WriteString("\n|---|---|---|" + strings.Repeat("---|", len(checkpoint.Kinds)) + "\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s |", r.Source, r.Provider, r.Setting)
		for _, k := range checkpoint.Kinds {
			c := r.ByKind[k]
			if c[1] == 0 {
				b.WriteString(" - |")
				continue
			}
			fmt.Fprintf(&b, " %d/%d (%.0f%%) |", c[0], c[1], 100*float64(c[0])/float64(c[1]))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// ClassTable formats, for the rows that have labels or error lines, the
// share of each class's identifiers kept (kept/total in the span), the
// tokens listing the labelled ones takes and whether that fits in half
// the checkpoint budget, and the identifiers on error lines by the
// yardstick's own rule.
func ClassTable(rows []Row, classes []string) string {
	var b strings.Builder
	b.WriteString("| source | provider | setting |")
	for _, c := range classes {
		b.WriteString(" " + c + " |")
	}
	b.WriteString(" labelled, tokens to list | fits in half the budget | error-line identifiers (rule) kept | tokens to list them | named, tokens to list | checkpoint tokens | pairs | roles |\n|---|---|---|")
	b.WriteString(strings.Repeat("---|", len(classes)+8) + "\n")
	ok := func(v bool) string {
		if v {
			return "ok"
		}
		return "BROKEN"
	}
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s |", r.Source, r.Provider, r.Setting)
		all := 0
		for _, c := range classes {
			k := r.ByClass[c]
			all += k[1]
			if k[1] == 0 {
				b.WriteString(" - |")
				continue
			}
			fmt.Fprintf(&b, " %d/%d (%.1f%%) |", k[0], k[1], 100*float64(k[0])/float64(k[1]))
		}
		fits := "-"
		if all > 0 {
			fits = "no"
			if r.LabelsFit {
				fits = "yes"
			}
		}
		fmt.Fprintf(&b, " %d, %d | %s | %d/%d (%.1f%%) | %d | %d | %d | %s | %s |\n", all, r.LabelTokens, fits,
			r.ErrorIDsKept, r.ErrorIDs, 100*float64(r.ErrorIDsKept)/float64(max(1, r.ErrorIDs)), r.ErrorIDTokens, r.NamedTokens,
			r.CheckpointTok, ok(r.PairsOK), ok(r.RolesOK))
	}
	return b.String()
}
