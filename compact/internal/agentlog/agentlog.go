// Package agentlog turns the session files coding agents write into the
// message lists package compact reads, to measure compaction on real
// transcripts:
//
//   - ClaudeCode reads a Claude Code session (a JSONL file of user and
//     assistant records, one content block per assistant record) and
//     returns an Anthropic Messages body: records of one message (the same
//     message.id) and consecutive records of one role are merged into one
//     message, tool_result blocks first in a user message, so that roles
//     alternate and every tool_use is answered by the next message.
//     Records that are not conversation (summaries, system records such
//     as compaction boundaries and hook reports, file-history snapshots,
//     queue operations) and meta user records (command caveats) are
//     skipped; so are sidechain (subagent) records, unless the file holds
//     nothing else. Blocks are kept as written, thinking signatures
//     included.
//   - Codex reads a Codex CLI rollout (session_meta, response_item,
//     event_msg and turn_context records) and returns an OpenAI Chat
//     Completions message array: the session's instructions as a system
//     message, response_item messages as they are (their text parts
//     joined), function, custom and local shell calls as an assistant
//     message's tool_calls, and their outputs as tool messages (an output
//     written as {"output": ..., "metadata": {"exit_code": ...}} is
//     unwrapped to its exit code and text). Reasoning items (encrypted,
//     or summaries a chat message has no field for), events and turn
//     contexts are skipped.
//
// Both check the result: a tool call with no result, or a result with no
// call, is an error naming the file and line of the record.
package agentlog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Stats describe a conversion.
type Stats struct {
	Records   int // JSONL records read
	Skipped   int // records that are not conversation, or not kept
	Messages  int // messages written
	ToolCalls int
}

// record is one line of a JSONL file.
type record struct {
	line int
	raw  []byte
}

// readLines reads the non-empty lines of a JSONL file, checking that each
// is a JSON object.
func readLines(r io.Reader, name string) ([]record, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	var out []record
	n := 0
	for sc.Scan() {
		n++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		if !json.Valid(b) || b[0] != '{' {
			return nil, fmt.Errorf("%s:%d: not a JSON object", name, n)
		}
		out = append(out, record{line: n, raw: append([]byte(nil), b...)})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", name, n+1, err)
	}
	return out, nil
}

// Formats of File.
const (
	FormatClaudeCode = "claude-code" // an Anthropic Messages body
	FormatCodex      = "codex"       // an OpenAI message array
)

// File converts the session file at path, telling the two formats apart
// by their first record: Codex rollouts start with a session_meta (older
// ones with a response_item), Claude Code sessions with anything else.
func File(path string) (body []byte, format string, st Stats, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, "", Stats{}, err
	}
	name := filepath.Base(path)
	var first struct {
		Type string `json:"type"`
	}
	line, _, _ := bytes.Cut(bytes.TrimSpace(data), []byte("\n"))
	if err := json.Unmarshal(line, &first); err != nil {
		return nil, "", Stats{}, fmt.Errorf("%s:1: not a JSON object", name)
	}
	if first.Type == "session_meta" || first.Type == "response_item" {
		body, st, err = Codex(bytes.NewReader(data), name)
		return body, FormatCodex, st, err
	}
	body, st, err = ClaudeCode(bytes.NewReader(data), name)
	return body, FormatClaudeCode, st, err
}
