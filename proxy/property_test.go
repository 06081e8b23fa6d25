package proxy_test

import (
	"strconv"
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-memory/strata/proxy"
)

// TestStoredOnceProperty: whatever the conversation (repeated texts,
// tool rounds, retried calls), a client that resends its whole history on
// each call ends with the conversation stored as it holds it: each
// message once, in order, the system prompt never.
func TestStoredOnceProperty(t *testing.T) {
	n := 0
	for _, mode := range []proxy.Mode{proxy.ModeOff, proxy.ModeMemory} {
		r := newRig(t, proxy.Options{Mode: mode, Budget: 300})
		rapid.Check(t, func(rt *rapid.T) {
			n++
			c := &chat{r: r, conv: "prop-" + strconv.Itoa(n), msgs: []oaMsg{{Role: "system", Content: text("S")}}}
			words := []string{"yes", "no", "tell me about the weather", "again", "a longer message about the orchard and the river"}
			calls := rapid.IntRange(1, 8).Draw(rt, "calls")
			for i := 0; i < calls; i++ {
				w := rapid.SampledFrom(words).Draw(rt, "text")
				c.sendT(rt, oaMsg{Role: "user", Content: text(w)})
				if last := c.msgs[len(c.msgs)-1]; len(last.ToolCalls) > 0 {
					c.sendT(rt, oaMsg{Role: "tool", ToolCallID: last.ToolCalls[0].ID, Content: text("grey")})
				}
				if rapid.Bool().Draw(rt, "retry") {
					// The client sends the same call again (a retry after a
					// timeout), then keeps the second reply.
					c.msgs = c.msgs[:len(c.msgs)-1]
					c.sendT(rt)
				}
			}
			ts := r.turns(rt, c.conv)
			if len(ts) != len(c.msgs)-1 {
				rt.Fatalf("stored %d turns, the client holds %d messages", len(ts), len(c.msgs)-1)
			}
			for i, tn := range ts {
				m := c.msgs[i+1]
				want := ""
				if m.Content != nil {
					want = *m.Content
				}
				if string(tn.Role) != m.Role || tn.Content != want && m.Role != "tool" {
					rt.Fatalf("turn %d: %s %q, the client holds %s %q", i, tn.Role, tn.Content, m.Role, want)
				}
			}
		})
	}
}
