package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/ctf"
	"github.com/strata-memory/strata/formats"
)

func runCTF(ctx context.Context, m *Main, args []string) error {
	if len(args) == 0 || (args[0] != "encode" && args[0] != "decode") {
		if len(args) > 0 && isHelpFlag(args[0]) {
			m.printHelp("ctf", ctfUsage)
			return flag.ErrHelp
		}
		return usagef("ctf: want 'strata ctf encode' or 'strata ctf decode'\n%s", ctfUsage)
	}
	fs := m.command("ctf "+args[0], "< INPUT > OUTPUT")
	fields := fs.String("fields", "", "encode: comma-separated fields (default: every field some turn of the input has)")
	derivedIDs := fs.Bool("derived-ids", false, "encode: write, for turns without an ext_id, the one import derives")
	if err := fs.parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("ctf %s reads standard input and takes no arguments", args[0])
	}
	if args[0] == "encode" {
		return ctfEncode(m, *fields, *derivedIDs)
	}
	return ctfDecode(m)
}

const ctfUsage = `Usage:
  strata ctf encode [--fields role,name,content] [--derived-ids] < turns.jsonl > turns.ctf
  strata ctf decode < turns.ctf > turns.jsonl

encode reads JSONL turns (the import format) and writes one CTF block of
the fields the input carries; the ext_ids import derives for turns without
one are written only with --derived-ids. decode reads a CTF block and
writes JSONL turns that 'strata import' reads.
The format is described in docs/ctf.md.`

// ctfEncode turns JSONL turns on standard input into one CTF block, of
// the fields listed or else of those some turn of the input has. A turn
// the input gives no ext_id has an empty one unless derivedIDs asks for
// the id import would derive.
func ctfEncode(m *Main, fieldList string, derivedIDs bool) error {
	r, err := formats.Open(formats.JSONL, "stdin", m.Stdin)
	if err != nil {
		return err
	}
	var turns []strata.Turn
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if rec.DerivedExtID && !derivedIDs {
			rec.Turn.ExtID = ""
		}
		turns = append(turns, rec.Turn)
	}
	var fields []string
	if fieldList != "" {
		fields = splitList(fieldList)
	}
	b, err := ctf.EncodeTurns(turns, fields)
	if err != nil {
		return err
	}
	_, err = m.Stdout.Write(b)
	return err
}

// ctfDecode turns a CTF block on standard input into JSONL turns. It
// refuses, with the line and field, every turn that 'strata import' would
// refuse, so that its output always imports: it writes nothing unless the
// whole block is good.
func ctfDecode(m *Main) error {
	d, err := ctf.NewTurnDecoder(m.Stdin)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	for {
		t, err := d.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if err := checkDecoded(&t); err != nil {
			var se *strata.Error
			msg := err.Error()
			if errors.As(err, &se) {
				msg = se.Message
			}
			field := ""
			if i := strings.Index(msg, ": "); i > 0 && !strings.ContainsAny(msg[:i], " \"") {
				field, msg = msg[:i], msg[i+2:]
			}
			return &ctf.Error{Line: d.Line(), Field: field, Msg: msg}
		}
		line, err := jsonlLine(&t)
		if err != nil {
			return fmt.Errorf("line %d: %w", d.Line(), err)
		}
		out.Write(line)
		out.WriteByte('\n')
	}
	_, err = m.Stdout.Write(out.Bytes())
	return err
}

// checkDecoded checks a decoded turn as the import does: a known role
// (written in lower case on the way out), some content, and the fields
// Turn.Validate checks.
func checkDecoded(t *strata.Turn) error {
	if t.Role == "" {
		return strata.Errorf(strata.EINVALID, "role: missing (want user, assistant, system or tool)")
	}
	r, err := strata.ParseRole(string(t.Role))
	if err != nil {
		return strata.Errorf(strata.EINVALID, "role: %s", err.(*strata.Error).Message)
	}
	t.Role = r
	if t.Content == "" && len(t.ToolCalls) == 0 && len(t.ToolResults) == 0 {
		return strata.Errorf(strata.EINVALID, "content: missing or empty (a turn needs content, tool calls or tool results)")
	}
	return t.Validate()
}

// jsonlLine renders a turn in the JSONL import format: the session label
// as "session", tool-call arguments as their exact text.
func jsonlLine(t *strata.Turn) ([]byte, error) {
	type call struct {
		ID        string `json:"id,omitempty"`
		Name      string `json:"name"`
		Arguments string `json:"arguments,omitempty"`
	}
	rec := struct {
		Session     string              `json:"session,omitempty"`
		ExtID       string              `json:"ext_id,omitempty"`
		Role        strata.Role         `json:"role"`
		Name        string              `json:"name,omitempty"`
		Content     string              `json:"content"`
		Time        string              `json:"time,omitempty"`
		Model       string              `json:"model,omitempty"`
		ToolCalls   []call              `json:"tool_calls,omitempty"`
		ToolResults []strata.ToolResult `json:"tool_results,omitempty"`
		Importance  float64             `json:"importance,omitempty"`
		Tags        []string            `json:"tags,omitempty"`
		Metadata    map[string]any      `json:"metadata,omitempty"`
	}{Session: t.SessionLabel, ExtID: t.ExtID, Role: t.Role, Name: t.Name, Content: t.Content, Model: t.Model,
		ToolResults: t.ToolResults, Importance: t.Importance, Tags: t.Tags, Metadata: t.Metadata}
	if !t.Time.IsZero() {
		rec.Time = t.Time.UTC().Format("2006-01-02T15:04:05.999999999Z07:00")
	}
	for _, c := range t.ToolCalls {
		rec.ToolCalls = append(rec.ToolCalls, call{ID: c.ID, Name: c.Name, Arguments: string(c.Arguments)})
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(rec); err != nil {
		return nil, fmt.Errorf("turn %s: %w", t.ExtID, err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range bytes.Split([]byte(s), []byte(",")) {
		if f := string(bytes.TrimSpace(f)); f != "" {
			out = append(out, f)
		}
	}
	return out
}
