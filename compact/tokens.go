package compact

import (
	"math"

	"github.com/strata-memory/strata"
)

// Token estimation. A message costs the tokens of its text, tool calls
// and tool results as the Tokenizer counts them, plus messageOverhead for
// its role and structure; an image costs imageTokens whatever the size of
// its encoding (providers bill images by their pixels, not their base64).
const (
	messageOverhead = 4
	imageTokens     = 1600
)

// Calibration bounds: a provider's reported count may scale the estimate
// by at most this much either way. chars/4 underestimates code and JSON by
// up to about 2x and CJK text by up to about 4x.
const (
	minFactor = 0.5
	maxFactor = 4.0
)

// Usage is what the provider reported for the last call made with (a
// prefix of) this message list. Compact and Estimate scale their estimate
// by InputTokens / (their estimate of that prefix), bounded to 0.5..4, so
// a crude tokenizer such as chars/4 is corrected by the real count.
type Usage struct {
	// InputTokens is the provider's input token count for the call.
	InputTokens int
	// Messages is how many messages of the list, from the first, that call
	// sent (with the same system prompt and tools).
	Messages int
}

// Estimate is a token estimate of a request's input.
type Estimate struct {
	// System counts the system prompt and tools of the list, the leading
	// OpenAI system and developer messages, and Request.SystemTokens.
	System int
	// History counts the other messages.
	History int
	// Factor is the calibration applied: 1 without Request.Usage.
	Factor float64
}

// Total is System + History.
func (e Estimate) Total() int { return e.System + e.History }

// counter estimates tokens with a Tokenizer and a calibration factor.
type counter struct {
	tok    strata.Tokenizer
	factor float64
}

// message returns m's uncalibrated token estimate.
func (c counter) message(m *Message) int {
	n := messageOverhead + c.content(&m.content)
	for _, call := range m.calls {
		n += c.tok.Count(call.name) + c.tok.Count(call.args)
	}
	return n
}

func (c counter) content(ct *content) int {
	switch ct.form {
	case formString:
		return c.tok.Count(ct.text)
	case formParts:
		n := 0
		for _, p := range ct.parts {
			switch p.typ {
			case "text", "refusal", "thinking", "redacted_thinking":
				n += c.tok.Count(p.text)
			case "image", "image_url":
				n += imageTokens
			case "tool_use":
				n += c.tok.Count(p.name) + c.tok.Count(string(p.input))
			case "tool_result":
				n += c.content(&p.result)
			default:
				n += c.tok.Count(string(p.appendJSON(nil)))
			}
		}
		return n
	}
	return 0
}

// scale applies the calibration factor.
func (c counter) scale(n int) int {
	if c.factor == 1 {
		return n
	}
	return int(math.Ceil(float64(n) * c.factor))
}

// leadEnd returns the number of leading messages that are system prompt:
// OpenAI system and developer messages at the start of the list.
func leadEnd(t *Transcript) int {
	i := 0
	if t.Provider == OpenAI {
		for i < len(t.Messages) && (t.Messages[i].role == "system" || t.Messages[i].role == "developer") {
			i++
		}
	}
	return i
}

// estimate returns the estimate of t and each message's calibrated tokens.
// usage, if set, calibrates the counter first; the returned counter
// carries the factor.
func (c counter) estimate(t *Transcript, extraSystem int, usage *Usage) (Estimate, []int, counter, error) {
	toks := make([]int, len(t.Messages))
	for i, m := range t.Messages {
		toks[i] = c.message(m)
	}
	c.factor = 1
	if usage != nil {
		if usage.InputTokens < 1 {
			return Estimate{}, nil, c, strata.Errorf(strata.EINVALID, "usage.input_tokens: %d is below 1", usage.InputTokens)
		}
		if usage.Messages < 1 || usage.Messages > len(t.Messages) {
			return Estimate{}, nil, c, strata.Errorf(strata.EINVALID, "usage.messages: %d is outside 1..%d (the list's length)", usage.Messages, len(t.Messages))
		}
		prefix := c.tok.Count(t.system) + extraSystem
		for _, n := range toks[:usage.Messages] {
			prefix += n
		}
		f := float64(usage.InputTokens) / float64(max(prefix, 1))
		c.factor = math.Min(maxFactor, math.Max(minFactor, f))
		for i := range toks {
			toks[i] = c.scale(toks[i])
		}
	}
	return c.sum(t, extraSystem, toks), toks, c, nil
}

// reestimate is estimate for a transcript derived from one already
// counted: messages it shares with prev (same pointer, same position) keep
// their count.
func (c counter) reestimate(t *Transcript, extraSystem int, prev *Transcript, prevToks []int) (Estimate, []int) {
	toks := make([]int, len(t.Messages))
	for i, m := range t.Messages {
		if i < len(prev.Messages) && prev.Messages[i] == m {
			toks[i] = prevToks[i]
		} else {
			toks[i] = c.scale(c.message(m))
		}
	}
	return c.sum(t, extraSystem, toks), toks
}

// sum totals calibrated message counts into an Estimate.
func (c counter) sum(t *Transcript, extraSystem int, toks []int) Estimate {
	e := Estimate{System: c.scale(c.tok.Count(t.system) + extraSystem), Factor: c.factor}
	lead := leadEnd(t)
	for i, n := range toks {
		if i < lead {
			e.System += n
		} else {
			e.History += n
		}
	}
	return e
}
