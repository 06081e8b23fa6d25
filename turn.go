package strata

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Role is who produced a turn.
type Role string

// The four roles a turn can have.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleSystem    Role = "system"
	RoleTool      Role = "tool"
)

// ParseRole returns the Role named by s (case-insensitive), or an EINVALID
// error naming the value.
func ParseRole(s string) (Role, error) {
	switch r := Role(strings.ToLower(strings.TrimSpace(s))); r {
	case RoleUser, RoleAssistant, RoleSystem, RoleTool:
		return r, nil
	}
	return "", Errorf(EINVALID, "unknown role %q (want user, assistant, system or tool)", s)
}

// ToolCall is a request by an assistant turn to run a tool. Arguments are
// the exact bytes the model produced, kept byte for byte: usually JSON, but
// text that is not (a truncated output such as {"a": tru) is kept as it
// is, never quoted or reformatted. They must be valid UTF-8.
//
// In JSON a ToolCall carries its arguments as a string holding that text
// ({"name":"f","arguments":"{\"a\": tru"}), as OpenAI's API does, so
// that any text survives; reading, a string is that text and any other
// JSON value is kept as written.
type ToolCall struct {
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// toolCallJSON is a ToolCall as JSON: the arguments a string of their text.
type toolCallJSON struct {
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// MarshalJSON writes the call with its arguments as a JSON string of their
// exact text.
func (c ToolCall) MarshalJSON() ([]byte, error) {
	out := toolCallJSON{ID: c.ID, Name: c.Name}
	if len(c.Arguments) > 0 {
		if !utf8.Valid(c.Arguments) {
			return nil, Errorf(EINVALID, "tool call %s: arguments: invalid UTF-8", c.Name)
		}
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(string(c.Arguments)); err != nil {
			return nil, err
		}
		out.Arguments = json.RawMessage(strings.TrimSuffix(b.String(), "\n"))
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads a call: arguments given as a string are that
// string's text; any other JSON value is kept as written.
func (c *ToolCall) UnmarshalJSON(data []byte) error {
	var in toolCallJSON
	if err := json.Unmarshal(data, &in); err != nil {
		return err
	}
	*c = ToolCall{ID: in.ID, Name: in.Name}
	a := in.Arguments
	switch {
	case len(a) == 0 || string(a) == "null":
	case a[0] == '"':
		var s string
		if err := json.Unmarshal(a, &s); err != nil {
			return err
		}
		if s != "" {
			c.Arguments = json.RawMessage(s)
		}
	default:
		c.Arguments = append(json.RawMessage(nil), a...)
	}
	return nil
}

// ToolResult is the output of a tool, carried by a tool turn.
type ToolResult struct {
	CallID  string `json:"call_id,omitempty"`
	Name    string `json:"name,omitempty"`
	Content string `json:"content"`
	IsError bool   `json:"is_error,omitempty"`
}

// Turn is one message of a conversation.
//
// Content is stored whole, whatever its size. Seq is the 1-based position of
// the turn in its conversation and Session the 1-based ordinal of its
// session; both are assigned on ingest. ExtID is the caller's id, unique per
// conversation; when a source has none, one is derived from the turn itself
// (see DeriveExtID) so that re-importing the same input adds nothing.
type Turn struct {
	Seq          int64          `json:"seq,omitempty"`
	ExtID        string         `json:"ext_id"`
	Session      int            `json:"session,omitempty"`
	SessionLabel string         `json:"session_label,omitempty"`
	Role         Role           `json:"role"`
	Name         string         `json:"name,omitempty"`
	Content      string         `json:"content"`
	Time         time.Time      `json:"time"`
	Model        string         `json:"model,omitempty"`
	ToolCalls    []ToolCall     `json:"tool_calls,omitempty"`
	ToolResults  []ToolResult   `json:"tool_results,omitempty"`
	Tokens       int            `json:"tokens"`
	Importance   float64        `json:"importance,omitempty"`
	Tags         []string       `json:"tags,omitempty"`
	Metadata     map[string]any `json:"metadata,omitempty"`
}

// Pinned reports whether the turn is a milestone (importance >= 0.8).
func (t *Turn) Pinned() bool { return t.Importance >= PinnedImportance }

// PinnedImportance is the importance from which a turn is a milestone.
const PinnedImportance = 0.8

// Speaker is the name to show for the turn: its speaker name, or its role.
func (t *Turn) Speaker() string {
	if t.Name != "" {
		return t.Name
	}
	return string(t.Role)
}

// Text is the turn as a model reads it: its content, followed by its tool
// calls and tool results, one per line. Token counts are taken over Text.
func (t *Turn) Text() string {
	if len(t.ToolCalls) == 0 && len(t.ToolResults) == 0 {
		return t.Content
	}
	var b strings.Builder
	b.WriteString(t.Content)
	for _, c := range t.ToolCalls {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("[tool call ")
		b.WriteString(c.Name)
		if c.ID != "" {
			b.WriteString(" id=" + c.ID)
		}
		b.WriteString("] ")
		b.Write(c.Arguments)
	}
	for _, r := range t.ToolResults {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("[tool result")
		if r.Name != "" {
			b.WriteString(" " + r.Name)
		}
		if r.CallID != "" {
			b.WriteString(" id=" + r.CallID)
		}
		if r.IsError {
			b.WriteString(" error")
		}
		b.WriteString("] ")
		b.WriteString(r.Content)
	}
	return b.String()
}

// Validate checks the fields a caller sets. It returns an EINVALID error
// naming the first bad field. It refuses everything a store would refuse,
// so that a batch or a file that passes it is never stopped half way by
// the store (see valid.go for the one definition): text that is not valid
// UTF-8 or holds NUL, an ext_id over MaxIDBytes, a turn over MaxTurnBytes,
// an unknown role, an importance outside 0..1, and a time outside the
// storable range (see MinTime and MaxTime; the zero time means "not
// given" and passes).
func (t *Turn) Validate() error {
	if _, err := ParseRole(string(t.Role)); err != nil {
		return Errorf(EINVALID, "role: %s", err.(*Error).Message)
	}
	for _, f := range [...]struct{ name, s string }{
		{"content", t.Content}, {"name", t.Name}, {"ext_id", t.ExtID},
		{"session", t.SessionLabel}, {"model", t.Model},
	} {
		if err := CheckText(f.name, f.s); err != nil {
			return err
		}
	}
	if len(t.ExtID) > MaxIDBytes {
		return Errorf(EINVALID, "ext_id: %d bytes long, at most %d", len(t.ExtID), MaxIDBytes)
	}
	if err := CheckTime(t.Time); err != nil {
		return Errorf(EINVALID, "time: %s", err.(*Error).Message)
	}
	if t.Importance < 0 || t.Importance > 1 || t.Importance != t.Importance {
		return Errorf(EINVALID, "importance: %v is outside 0..1", t.Importance)
	}
	for i, c := range t.ToolCalls {
		if c.Name == "" {
			return Errorf(EINVALID, "tool_calls[%d].name: missing", i)
		}
		if err := CheckText(fmt.Sprintf("tool_calls[%d].name", i), c.Name); err != nil {
			return err
		}
		if err := CheckText(fmt.Sprintf("tool_calls[%d].id", i), c.ID); err != nil {
			return err
		}
		if err := checkBytes(fmt.Sprintf("tool_calls[%d].arguments", i), c.Arguments); err != nil {
			return err
		}
	}
	for i, r := range t.ToolResults {
		for _, f := range [...]struct{ name, s string }{{"content", r.Content}, {"name", r.Name}, {"call_id", r.CallID}} {
			if err := CheckText(fmt.Sprintf("tool_results[%d].%s", i, f.name), f.s); err != nil {
				return err
			}
		}
	}
	for i, tag := range t.Tags {
		if err := CheckText(fmt.Sprintf("tags[%d]", i), tag); err != nil {
			return err
		}
	}
	meta := 0
	if len(t.Metadata) > 0 {
		for k, v := range t.Metadata {
			if s, ok := v.(string); ok && !utf8.ValidString(s) {
				return CheckText("metadata."+k, s)
			}
		}
		js, err := json.Marshal(t.Metadata)
		if err != nil {
			return Errorf(EINVALID, "metadata: cannot be written as JSON: %v", err)
		}
		// As the store will hold it: values of any Go type become JSON.
		var v any
		if err := json.Unmarshal(js, &v); err != nil {
			return Errorf(EINVALID, "metadata: cannot be read back as JSON: %v", err)
		}
		if err := checkMetadata("metadata", v); err != nil {
			return err
		}
		meta = metadataSize(v)
	}
	if n := t.Size() - metadataSize(t.Metadata) + meta; n > MaxTurnBytes {
		field := "turn"
		if len(t.Content) > MaxTurnBytes {
			field = "content"
		}
		return Errorf(EINVALID, "%s: the turn is %d bytes (content, tool calls and results, names and metadata), over the limit of %d (%d MiB)",
			field, n, MaxTurnBytes, MaxTurnBytes>>20)
	}
	return nil
}

// MinTime and MaxTime bound the times a store keeps: stores hold a time
// as nanoseconds since 1970 in 64 bits, which covers 1677-09-21 to
// 2262-04-11.
var (
	MinTime = time.Unix(0, math.MinInt64).UTC()
	MaxTime = time.Unix(0, math.MaxInt64).UTC()
)

// CheckTime returns an EINVALID error if t is neither the zero time nor
// within MinTime..MaxTime. A parser that reads a time a source gives
// should also refuse the zero time itself (0001-01-01T00:00:00Z), which
// would otherwise read as "no time" and be stamped with the clock.
func CheckTime(t time.Time) error {
	if t.IsZero() || (!t.Before(MinTime) && !t.After(MaxTime)) {
		return nil
	}
	return Errorf(EINVALID, "%s is outside the storable range (%s to %s)",
		t.Format(time.RFC3339Nano), MinTime.Format(time.DateOnly), MaxTime.Format(time.DateOnly))
}

// DeriveExtID returns a stable id for a turn that has none, from its role,
// speaker, time and content, and occurrence: the number of earlier turns in
// the same input that derive the same hash. Importing the same input twice
// derives the same ids, so the second import adds nothing; two identical
// turns in one input stay two turns.
func DeriveExtID(t *Turn, occurrence int) string {
	h := sha256.New()
	h.Write([]byte(t.Role))
	h.Write([]byte{0})
	h.Write([]byte(t.Name))
	h.Write([]byte{0})
	if !t.Time.IsZero() {
		h.Write([]byte(t.Time.UTC().Format(time.RFC3339Nano)))
	}
	h.Write([]byte{0})
	h.Write([]byte(t.Text()))
	id := "h" + hex.EncodeToString(h.Sum(nil))[:20]
	if occurrence > 0 {
		id += "-" + strconv.Itoa(occurrence)
	}
	return id
}

// LiveExtID returns a new id for a turn appended live without one: "r"
// and 20 random hex digits (80 bits). A live append is never deduplicated
// by content, so its id must differ from every other turn's even when the
// content repeats. It is random rather than derived from the seq the turn
// will take because several processes may append to one store: only the
// store's transaction knows the seq for sure, and two processes predicting
// the same seq for the same "yes" would derive the same id and drop one.
// Once stored the id is fixed, like any other ext_id.
func LiveExtID() string {
	var b [10]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("strata: reading random bytes: " + err.Error()) // crypto/rand does not fail on supported systems
	}
	return "r" + hex.EncodeToString(b[:])
}

// Conversation is an ordered stream of turns in a namespace.
type Conversation struct {
	Namespace string    `json:"namespace"`
	ID        string    `json:"id"`
	Policy    string    `json:"policy"`
	Created   time.Time `json:"created"`
	Turns     int64     `json:"turns"`
	Sessions  int       `json:"sessions"`
	First     time.Time `json:"first,omitempty"`
	Last      time.Time `json:"last,omitempty"`
	// TimeZone is the IANA name of the zone the conversation's calendar
	// periods close in; "" is UTC.
	TimeZone string `json:"time_zone,omitempty"`
	// Important lists the periods marked important (labels such as
	// "2023-05-08"): their nodes keep more detail.
	Important []string `json:"important,omitempty"`
	// LearnedSeq is the last turn whose level-1 node's facts Memory.Learn
	// has recorded as learnings.
	LearnedSeq int64 `json:"learned_seq,omitempty"`
}

// IsImportant reports whether the period key (a node's Key) is marked
// important; an empty key never is. The part of a week in its second
// month ("2026-W40 (2026-10)") is marked with its week.
func (c Conversation) IsImportant(key string) bool {
	key = PartBase(key)
	if key == "" {
		return false
	}
	for _, k := range c.Important {
		if k == key {
			return true
		}
	}
	return false
}

// Location returns the conversation's time zone (UTC if none or unknown).
func (c Conversation) Location() *time.Location {
	loc, err := LoadTimeZone(c.TimeZone)
	if err != nil {
		return time.UTC
	}
	return loc
}

// ConversationUpdate names the settings of a conversation to change; nil
// fields stay as they are.
type ConversationUpdate struct {
	TimeZone   *string
	Important  *[]string
	LearnedSeq *int64
}

// LoadTimeZone loads an IANA time zone by name ("" and "UTC" are UTC), or
// returns an EINVALID error naming it.
func LoadTimeZone(name string) (*time.Location, error) {
	if name == "" || name == "UTC" {
		return time.UTC, nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, Errorf(EINVALID, "time zone %q: not a known IANA zone name (like Europe/Berlin)", name)
	}
	return loc, nil
}

// DefaultNamespace scopes reads and writes when the caller names none.
const DefaultNamespace = "default"
