package proxy

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/compact"
)

// top is what the proxy reads of a request's top-level fields; the rest
// passes through unread.
type top struct {
	Stream   bool   `json:"stream"`
	User     string `json:"user"`
	Metadata struct {
		UserID string `json:"user_id"`
	} `json:"metadata"`
	System json.RawMessage `json:"system"`
}

// readTop decodes the fields the proxy uses, naming the one of the wrong
// type. It decodes those members alone: the messages, most of the body,
// were read by compact.Parse.
func readTop(tr *compact.Transcript) (top, error) {
	var t top
	b := []byte{'{'}
	for _, k := range []string{"stream", "user", "metadata", "system"} {
		if v := tr.Field(k); v != nil {
			if len(b) > 1 {
				b = append(b, ',')
			}
			b = append(append(append(append(b, '"'), k...), '"', ':'), v...)
		}
	}
	b = append(b, '}')
	if err := json.Unmarshal(b, &t); err != nil {
		if te, ok := err.(*json.UnmarshalTypeError); ok {
			return t, fmt.Errorf("%s: want a %s, got a JSON %s", te.Field, te.Type, te.Value)
		}
		return t, err
	}
	return t, nil
}

func bytesValidJSON(b []byte) bool { return json.Valid(b) }

// identity names a request's conversation: the X-Strata-Conversation
// header, else the request's user (OpenAI) or metadata.user_id
// (Anthropic), else "p-" and a digest of the system prompt and the first
// user message, which a client that resends its whole history sends
// unchanged on every call.
func identity(header string, tp top, t *compact.Transcript, lead int) (string, error) {
	if header != "" {
		if err := strata.ValidateConversationID(header); err != nil {
			return "", fmt.Errorf("header %s: %w", HeaderConversation, err)
		}
		return header, nil
	}
	for _, id := range []struct{ field, v string }{{"user", tp.User}, {"metadata.user_id", tp.Metadata.UserID}} {
		if id.v == "" {
			continue
		}
		if err := strata.ValidateConversationID(id.v); err != nil {
			return "", fmt.Errorf("%s: %w", id.field, err)
		}
		return id.v, nil
	}
	h := sha256.New()
	for _, m := range t.Messages[:lead] {
		h.Write([]byte(m.Text()))
		h.Write([]byte{0})
	}
	if len(tp.System) > 0 && string(tp.System) != "null" {
		var s string
		if json.Unmarshal(tp.System, &s) == nil {
			h.Write([]byte(s))
		} else {
			h.Write(tp.System)
		}
	}
	h.Write([]byte{1})
	for _, m := range t.Messages[lead:] {
		if m.Role() == "user" && !m.IsToolResult() {
			h.Write([]byte(m.Text()))
			break
		}
	}
	return "p-" + hex.EncodeToString(h.Sum(nil))[:20], nil
}
