package evidgen

import (
	"testing"

	"github.com/strata-memory/strata/compact"
	"github.com/strata-memory/strata/tiktoken"
)

// TestSize checks the standard size the documentation gives: 280 to 320
// messages, about 120 tool calls, 250k to 400k o200k tokens as package
// compact counts them.
func TestSize(t *testing.T) {
	tok, err := tiktoken.New(tiktoken.O200kBase)
	if err != nil {
		t.Fatal(err)
	}
	c, err := compact.New(compact.Options{Config: compact.DefaultConfig(), Tokenizer: tok})
	if err != nil {
		t.Fatal(err)
	}
	for _, seed := range []uint64{1, 2} {
		tr := Generate(seed, Standard())
		list, err := compact.Parse(compact.OpenAI, tr.OpenAI())
		if err != nil {
			t.Fatal(err)
		}
		e, err := c.Estimate(compact.Request{Transcript: list})
		if err != nil {
			t.Fatal(err)
		}
		n := e.Total()
		t.Logf("seed %d: %d messages, %d tool calls, %d tokens, labels %v", seed, tr.Messages(), tr.ToolCalls, n, tr.Counts())
		if tr.Messages() < 280 || tr.Messages() > 320 || tr.ToolCalls < 115 || tr.ToolCalls > 140 || n < 250000 || n > 400000 {
			t.Errorf("seed %d: %d messages, %d tool calls, %d tokens", seed, tr.Messages(), tr.ToolCalls, n)
		}
	}
}
