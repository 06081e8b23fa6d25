package compact

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/strata-memory/strata/compact/checkpoint"
)

// ClearedPlaceholder replaces a hard-cleared tool result.
const ClearedPlaceholder = "[Tool output cleared — content was processed in earlier turns]"

var placeholderRunes = utf8.RuneCountInString(ClearedPlaceholder)

// DigestMaxChars caps the digest line a hard-cleared result keeps (with
// Config.ToolClearDigest): about 100 tokens. The line is
// checkpoint.DigestPrefix and the identifiers the output held, separated
// by "; ": error codes, URLs, paths and other ids (ports, hashes,
// versions, key=value settings), each kind represented before any is
// complete (see checkpoint.Digest).
const DigestMaxChars = 400

// DigestFailMaxChars caps the digest line of a result with an error line
// (a failing test or build, a stack trace, an error log): about 350
// tokens. Its first error line, then what its error lines and stack
// frames name, then its other error lines come first.
const DigestFailMaxChars = 1400

// markerRoom is the room a trim marker needs: the longest marker, with
// three 10-digit numbers, is 80 characters.
const markerRoom = 100

// PruneStats says what Prune did.
type PruneStats struct {
	Trimmed int // results soft-trimmed to head + tail
	Cleared int // results replaced by ClearedPlaceholder
	// Skipped counts results outside the protected zone left whole
	// because they carry an image (or another non-text part).
	Skipped int
	// CharsRemoved is the net number of characters (runes) the results
	// lost, markers and placeholders counted.
	CharsRemoved int
}

func (s *PruneStats) add(o PruneStats) {
	s.Trimmed += o.Trimmed
	s.Cleared += o.Cleared
	s.Skipped += o.Skipped
	s.CharsRemoved += o.CharsRemoved
}

// Prune is layer 1: it shortens old tool results in t, in place, and needs
// no model. It does nothing when cfg.ToolPruningEnabled is false.
//
// Tool results are counted in tool-result messages from the end: an
// Anthropic user message with tool_result blocks is one, and so is a run
// of consecutive OpenAI tool messages (the answers to one assistant
// message's parallel calls). The last cfg.KeepLastToolResults of them are
// protected: the model has just acted on them. Results more than
// cfg.ToolHardClearAfter messages old are replaced by ClearedPlaceholder
// (unless they are no longer than it); the others in between that are
// longer than cfg.ToolSoftTrimChars characters keep their first
// ToolSoftTrimHead and last ToolSoftTrimTail characters around a marker:
//
//	--- trimmed (kept 1500 head + 1500 tail of 24000 chars) ---
//
// With cfg.ToolClearDigest, the line under the marker is the digest of
// the part cut out (see checkpoint.Digest), as long as the room the
// trimmed result leaves below ToolSoftTrimChars allows, so that a
// trimmed result is not trimmed again. Characters are runes: a cut
// never falls inside a UTF-8 sequence. Results that carry an image are
// left whole, and nothing else is ever changed: user text, assistant
// messages (text, tool calls, thinking) and unknown fields stay byte for
// byte. A message Prune changes is replaced by a changed copy in
// t.Messages; the old *Message is left as it was. Pruning an already
// pruned transcript changes nothing more until results age. Prune
// returns an EINVALID error if cfg does not validate.
func Prune(t *Transcript, cfg Config) (PruneStats, error) {
	if err := cfg.Validate(); err != nil {
		return PruneStats{}, err
	}
	if !cfg.ToolPruningEnabled {
		return PruneStats{}, nil
	}
	return prune(t, cfg), nil
}

type pruneAction uint8

const (
	actTrim pruneAction = iota + 1
	actClear
)

func prune(t *Transcript, cfg Config) PruneStats {
	var st PruneStats
	age := 0
	n := len(t.Messages)
	for i := n - 1; i >= 0; i-- {
		m := t.Messages[i]
		if !m.toolResult {
			continue
		}
		// A run of OpenAI tool messages answers one assistant message.
		if !(t.Provider == OpenAI && i+1 < n && t.Messages[i+1].role == "tool") {
			age++
		}
		if age <= cfg.KeepLastToolResults {
			continue
		}
		act := actTrim
		if cfg.ToolHardClearAfter > 0 && age > cfg.ToolHardClearAfter {
			act = actClear
		}
		if m.role == "tool" {
			c, ok, s := pruneContent(&m.content, act, cfg, m.failed)
			st.add(s)
			if ok {
				nm := *m
				nm.raw = nil
				nm.content = c
				t.Messages[i] = &nm
			}
			continue
		}
		var parts []*part
		for j, p := range m.content.parts {
			if p.typ != "tool_result" {
				continue
			}
			c, ok, s := pruneContent(&p.result, act, cfg, p.isError)
			st.add(s)
			if !ok {
				continue
			}
			if parts == nil {
				parts = append([]*part(nil), m.content.parts...)
			}
			np := *p
			np.raw = nil
			np.result = c
			parts[j] = &np
		}
		if parts != nil {
			nm := *m
			nm.raw = nil
			nm.content.parts = parts
			t.Messages[i] = &nm
		}
	}
	return st
}

// pruneContent returns c trimmed or cleared, and whether it changed.
// failed says its tool reported the result as an error (is_error).
func pruneContent(c *content, act pruneAction, cfg Config, failed bool) (content, bool, PruneStats) {
	if !c.allText() {
		return content{}, false, PruneStats{Skipped: 1}
	}
	runes := c.textRunes()
	switch act {
	case actClear:
		if runes <= placeholderRunes {
			return content{}, false, PruneStats{}
		}
		text := c.joined(false)
		if strings.HasPrefix(text, ClearedPlaceholder) {
			return content{}, false, PruneStats{} // cleared already, with its digest
		}
		out, n := ClearedPlaceholder, placeholderRunes
		if cfg.ToolClearDigest {
			if d := digestOf(text, failed, DigestMaxChars, DigestFailMaxChars); d != "" {
				out += "\n" + d
				n += 1 + utf8.RuneCountInString(d)
			}
		}
		if n >= runes {
			return content{}, false, PruneStats{}
		}
		return c.withText(out, n), true, PruneStats{Cleared: 1, CharsRemoved: runes - n}
	default:
		if runes <= cfg.ToolSoftTrimChars {
			return content{}, false, PruneStats{}
		}
		// The digest of what the cut drops (an error in the middle of a
		// long log) goes under the marker, in the room the trimmed
		// text leaves below ToolSoftTrimChars, so that pruning the
		// result again changes nothing.
		room := 0
		if cfg.ToolClearDigest {
			room = cfg.ToolSoftTrimChars - cfg.ToolSoftTrimHead - cfg.ToolSoftTrimTail - markerRoom - 1
		}
		s, n := softTrim(c.joined(false), runes, cfg.ToolSoftTrimHead, cfg.ToolSoftTrimTail, func(middle string) string {
			if room < len(checkpoint.DigestPrefix)+20 {
				return ""
			}
			return digestOf(middle, failed, min(DigestMaxChars, room), min(DigestFailMaxChars, room))
		})
		return c.withText(s, n), true, PruneStats{Trimmed: 1, CharsRemoved: runes - n}
	}
}

// digestOf is checkpoint.Digest of text, or checkpoint.DigestFailed when
// its tool reported it as failed.
func digestOf(text string, failed bool, limit, failLimit int) string {
	if failed {
		return checkpoint.DigestFailed(text, limit, failLimit)
	}
	return checkpoint.Digest(text, limit, failLimit)
}

// softTrim keeps the first head and last tail runes of s (which has runes
// runes) around a marker, followed by what digest makes of the part cut
// out (nothing when it returns ""), and returns the result and its rune
// count.
func softTrim(s string, runes, head, tail int, digest func(middle string) string) (string, int) {
	hb := 0
	for k := 0; k < head; k++ {
		_, size := utf8.DecodeRuneInString(s[hb:])
		hb += size
	}
	tb := len(s)
	for k := 0; k < tail; k++ {
		_, size := utf8.DecodeLastRuneInString(s[:tb])
		tb -= size
	}
	marker := make([]byte, 0, 80)
	marker = append(marker, "\n\n--- trimmed (kept "...)
	marker = strconv.AppendInt(marker, int64(head), 10)
	marker = append(marker, " head + "...)
	marker = strconv.AppendInt(marker, int64(tail), 10)
	marker = append(marker, " tail of "...)
	marker = strconv.AppendInt(marker, int64(runes), 10)
	marker = append(marker, " chars) ---\n"...)
	d := digest(s[hb:tb])
	out := make([]byte, 0, hb+len(marker)+len(d)+2+len(s)-tb)
	out = append(out, s[:hb]...)
	out = append(out, marker...)
	n := head + tail + len(marker) // the marker is ASCII
	if d != "" {
		out = append(out, d...)
		out = append(out, '\n')
		n += utf8.RuneCountInString(d) + 1
	}
	out = append(out, '\n')
	out = append(out, s[tb:]...)
	return string(out), n + 1
}

// withText returns content of c's form holding s (of runes runes): a
// string stays a string; text parts merge into one text part that keeps
// the first part's other fields, and those of later parts it lacks.
func (c *content) withText(s string, runes int) content {
	if c.form != formParts || len(c.parts) == 0 {
		return content{form: formString, text: s, runes: runes}
	}
	if len(c.parts) == 1 {
		p := *c.parts[0]
		p.raw, p.text, p.runes = nil, s, runes
		return content{form: formParts, parts: []*part{&p}}
	}
	ms := append([]member(nil), c.parts[0].members...)
	for _, p := range c.parts[1:] {
		for _, mb := range p.members {
			if _, ok := lookup(ms, mb.key); !ok {
				ms = append(ms, mb)
			}
		}
	}
	return content{form: formParts, parts: []*part{{typ: "text", members: ms, text: s, runes: runes}}}
}
