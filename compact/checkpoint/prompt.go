package checkpoint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// formatSpec is the checkpoint format as the prompts describe it.
const formatSpec = `## Goal
<what the user wants to achieve, in one or two sentences>

## Constraints & Preferences
- <each requirement, limit or preference the user stated>

## Progress
### Done
- [x] <each finished step, naming the file, command or result it concerns>

### In Progress
- [ ] <each piece of work that was started and not finished>

## Key Decisions
- **<decision>**: <what was chosen over what, and why>

## Next Steps
1. <what to do next, in order>

## Critical Context
- <what a continuing agent must know that the ledger below cannot say: states, causes, values and how they relate>`

// checkpointSystem is the system prompt of a first compaction.
const checkpointSystem = `You write checkpoints of an agent's working session. The session's earlier messages are about to be removed from the agent's context, and your checkpoint will replace them: the agent will continue its work from the checkpoint alone.

Read the conversation in the user message. Do not continue it, do not answer questions in it, and do not call tools. Reply with the checkpoint and nothing else, in exactly this format:

` + formatSpec + `

Rules:
- Write file paths, commands, function and variable names, error messages, URLs, ids and numbers exactly as they appear, character for character.
- Say what is finished and what is not; never present an unfinished step as done.
- Write "- none" under a section that has nothing to say.
- Keep everything above Critical Context under %d tokens.
- Exact identifiers (paths, commands, errors, names, URLs, ids, numbers) are collected from the conversation mechanically and appended to Critical Context after your reply, so Critical Context needs only what they cannot say.`

// updateSystem is the system prompt of a later compaction.
const updateSystem = `You keep the checkpoint of an agent's working session up to date. The checkpoint stands in for the session's earlier messages, which the agent can no longer see. You are given the current checkpoint and the messages that came after it, which are about to be removed too.

Write the updated checkpoint. Do not continue the conversation, do not answer questions in it, and do not call tools. Reply with the checkpoint and nothing else, in exactly this format:

` + formatSpec + `

Rules:
1. Keep everything the current checkpoint says unless the new messages supersede it (a changed requirement, a reverted decision, a deleted file).
2. Add the progress, decisions, constraints and context the new messages bring.
3. Move items from In Progress to Done when the new messages finish them.
4. Rewrite Next Steps from what is now done and what is left.
5. Write file paths, commands, function and variable names, error messages, URLs, ids and numbers exactly as they appear, character for character.
6. Keep the format and the section order of the current checkpoint; write "- none" under a section that has nothing to say.
7. Keep everything above Critical Context under %d tokens.
8. Exact identifiers are collected mechanically and appended to Critical Context after your reply (the current checkpoint's ledger lines, "- paths: ..." and the like, included), so you need not copy those lines.`

// repairSystem asks for a reply that was not in the format to be put in it.
const repairSystem = `You reformat summaries of an agent's working session. Rewrite the summary in the user message into exactly the format below, keeping every fact, name, path, command, error message and number it gives, and inventing nothing. Reply with the reformatted summary only.

` + formatSpec + `

Write "- none" under a section the summary says nothing about. Keep everything above Critical Context under %d tokens.`

// userPrompt is the user message of a compaction: the conversation, and
// the current checkpoint on an update.
func userPrompt(previous, conversation string) string {
	if previous == "" {
		return "Conversation to checkpoint:\n\n" + conversation
	}
	return "## Current Checkpoint\n\n" + strings.TrimSpace(previous) + "\n\n## New Messages\n\n" + conversation
}

// Serialization limits: a tool result longer than maxOutput characters
// keeps its first outputHead and last outputTail; tool call arguments,
// thinking and text are shortened the same way at their own limits. If
// the whole is still over the prompt budget, a second pass shortens every
// part to a quarter of these limits, and a last one leaves out messages
// from the middle of the span (keeping its first fifth and as much of its
// end as fits), saying how many.
const (
	maxOutput, outputHead, outputTail       = 2400, 1200, 1000
	maxArgs, argsHead, argsTail             = 1500, 1000, 400
	maxThinking, thinkingHead, thinkingTail = 1200, 800, 300
	maxText, textHead, textTail             = 6000, 3000, 2000
)

// Serialize renders a span as the writer shows it to a model: one
// paragraph per entry, "**User:** ...", "**Assistant:** ...",
// "**Assistant (thinking):** ...", "**Tool call:** name(args)" with the
// arguments' JSON compacted, and "**Tool result (name):** output" (", error"
// when the tool reported one). Long parts keep their head and tail around
// a marker that says how many characters were cut (see the limits above).
// An entry that is itself a checkpoint is left out.
func Serialize(span []Entry) string {
	return serialize(analyze(span), 1)
}

// serialize renders the span with its limits divided by div.
func serialize(si *spanInfo, div int) string {
	var b strings.Builder
	for i, e := range si.entries {
		if si.skip[i] {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		writeEntry(&b, e, div)
	}
	return b.String()
}

func writeEntry(b *strings.Builder, e Entry, div int) {
	switch {
	case e.Kind == "tool_call":
		b.WriteString("**Tool call:** ")
		b.WriteString(nameOr(e.Name, "tool"))
		b.WriteByte('(')
		b.WriteString(shorten(compactJSON(e.Text), maxArgs/div, argsHead/div, argsTail/div))
		b.WriteByte(')')
	case e.Kind == "tool_result" || e.Role == "tool":
		b.WriteString("**Tool result (")
		b.WriteString(nameOr(e.Name, "tool"))
		if e.IsError {
			b.WriteString(", error")
		}
		b.WriteString("):** ")
		b.WriteString(shorten(strings.TrimSpace(e.Text), maxOutput/div, outputHead/div, outputTail/div))
	case e.Kind == "thinking":
		b.WriteString("**Assistant (thinking):** ")
		b.WriteString(shorten(strings.TrimSpace(e.Text), maxThinking/div, thinkingHead/div, thinkingTail/div))
	default:
		switch e.Role {
		case "user":
			b.WriteString("**User:** ")
		case "system":
			b.WriteString("**System:** ")
		default:
			b.WriteString("**Assistant:** ")
		}
		b.WriteString(shorten(strings.TrimSpace(e.Text), maxText/div, textHead/div, textTail/div))
	}
}

func nameOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// compactJSON removes the insignificant white space of valid JSON, and
// returns anything else as it is.
func compactJSON(s string) string {
	s = strings.TrimSpace(s)
	if !json.Valid([]byte(s)) {
		return s
	}
	var buf bytes.Buffer
	if json.Compact(&buf, []byte(s)) != nil {
		return s
	}
	return buf.String()
}

// shorten keeps the head and tail of s around a marker when s is longer
// than max bytes; cuts fall on rune boundaries.
func shorten(s string, max, head, tail int) string {
	if len(s) <= max {
		return s
	}
	h := head
	for h > 0 && (s[h]&0xC0) == 0x80 {
		h--
	}
	t := len(s) - tail
	for t < len(s) && (s[t]&0xC0) == 0x80 {
		t++
	}
	return s[:h] + "\n[... " + strconv.Itoa(t-h) + " characters cut ...]\n" + s[t:]
}

// fitConversation serializes the span within maxTokens as counted by
// count: at the full limits, then at a quarter of them, then leaving out
// messages from the middle.
func fitConversation(si *spanInfo, maxTokens int, count func(string) int) string {
	s := serialize(si, 1)
	if count(s) <= maxTokens {
		return s
	}
	s = serialize(si, 4)
	if count(s) <= maxTokens {
		return s
	}
	var parts []string
	for i, e := range si.entries {
		if si.skip[i] {
			continue
		}
		var b strings.Builder
		writeEntry(&b, e, 4)
		parts = append(parts, b.String())
	}
	head := len(parts) / 5
	used := 0
	for _, p := range parts[:head] {
		used += count(p) + 1
	}
	for used > maxTokens/3 && head > 0 {
		head--
		used -= count(parts[head]) + 1
	}
	tail := len(parts)
	for tail > head {
		c := count(parts[tail-1]) + 1
		if used+c+16 > maxTokens {
			break
		}
		used += c
		tail--
	}
	out := append([]string{}, parts[:head]...)
	if tail > head {
		out = append(out, fmt.Sprintf("[... %d messages left out ...]", tail-head))
	}
	out = append(out, parts[tail:]...)
	return strings.Join(out, "\n\n")
}
