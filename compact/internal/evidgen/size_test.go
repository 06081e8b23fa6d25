package evidgen

import (
	"testing"

	"github.com/strata-memory/strata/tiktoken"
)

// TestSize checks the standard size the documentation gives: 280 to 320
// messages, about 120 tool calls, 250k to 400k o200k tokens.
func TestSize(t *testing.T) {
	tok, err := tiktoken.New(tiktoken.O200kBase)
	if err != nil {
		t.Fatal(err)
	}
	for _, seed := range []uint64{1, 2} {
		tr := Generate(seed, Standard())
		n := tok.Count(string(tr.OpenAI()))
		t.Logf("seed %d: %d messages, %d tool calls, %d tokens, labels %v", seed, tr.Messages(), tr.ToolCalls, n, tr.Counts())
		if tr.Messages() < 280 || tr.Messages() > 320 || tr.ToolCalls < 115 || tr.ToolCalls > 135 || n < 250000 || n > 400000 {
			t.Errorf("seed %d: %d messages, %d tool calls, %d tokens", seed, tr.Messages(), tr.ToolCalls, n)
		}
	}
}
