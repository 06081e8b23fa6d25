package compact_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/strata-memory/strata/compact"
	"github.com/strata-memory/strata/compact/checkpoint"
)

func ExamplePrune() {
	long := strings.Repeat("0123456789", 20) // 200 characters
	doc := `[
 {"role":"user","content":"Run the tests three times."},
 {"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"bash","arguments":"{}"}}]},
 {"role":"tool","tool_call_id":"c1","content":"run 1: ` + long + `"},
 {"role":"assistant","content":null,"tool_calls":[{"id":"c2","type":"function","function":{"name":"bash","arguments":"{}"}}]},
 {"role":"tool","tool_call_id":"c2","content":"run 2: ` + long + `"},
 {"role":"assistant","content":null,"tool_calls":[{"id":"c3","type":"function","function":{"name":"bash","arguments":"{}"}}]},
 {"role":"tool","tool_call_id":"c3","content":"run 3: ` + long + `"}
]`
	t, err := compact.Parse(compact.OpenAI, []byte(doc))
	if err != nil {
		panic(err)
	}
	cfg := compact.DefaultConfig()
	cfg.ToolSoftTrimChars, cfg.ToolSoftTrimHead, cfg.ToolSoftTrimTail = 150, 10, 10
	cfg.KeepLastToolResults = 1 // run 3 is protected
	cfg.ToolHardClearAfter = 2  // run 1 is cleared, run 2 trimmed
	st, err := compact.Prune(t, cfg)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%+v\n", st)
	for _, m := range t.Messages {
		if m.IsToolResult() {
			fmt.Printf("%q\n", m.Text())
		}
	}
	// Output:
	// {Trimmed:1 Cleared:1 Skipped:0 CharsRemoved:275}
	// "[Tool output cleared — content was processed in earlier turns]"
	// "run 2: 012\n\n--- trimmed (kept 10 head + 10 tail of 207 chars) ---\n\n0123456789"
	// "run 3: 01234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789"
}

func ExampleCompactor_Compact() {
	var msgs []string
	for i := 1; i <= 4; i++ {
		msgs = append(msgs,
			fmt.Sprintf(`{"role":"user","content":"Question %d: %s"}`, i, strings.Repeat("q", 400)),
			fmt.Sprintf(`{"role":"assistant","content":"Answer %d: %s"}`, i, strings.Repeat("a", 400)))
	}
	t, err := compact.Parse(compact.Anthropic, []byte("["+strings.Join(msgs, ",")+"]"))
	if err != nil {
		panic(err)
	}
	writer := compact.CheckpointFunc(func(ctx context.Context, span []checkpoint.Entry, previous string) (checkpoint.Result, error) {
		return checkpoint.Result{Text: fmt.Sprintf("## Goal\nAnswer questions (%d messages so far).", len(span)), Mode: checkpoint.ModeExtractive}, nil
	})
	cfg := compact.DefaultConfig()
	cfg.KeepRecentTokens = 300
	c, err := compact.New(compact.Options{Config: cfg, Checkpointer: writer})
	if err != nil {
		panic(err)
	}
	res, err := c.Compact(context.Background(), compact.Request{Transcript: t, Force: true})
	if err != nil {
		panic(err)
	}
	fmt.Println("compacted", res.MessagesCompacted, "of", len(t.Messages), "messages; tokens", res.TokensBefore, "->", res.TokensAfter)
	for _, m := range res.Transcript.Messages {
		text := m.Text()
		fmt.Printf("%s: %q\n", m.Role(), text[:min(len(text), 44)])
	}
	fmt.Printf("turns handed to memory: %d, compactions: %d\n", res.State.TurnCount, res.State.CompactionCount)
	// Output:
	// compacted 6 of 8 messages; tokens 856 -> 259
	// user: "[Previous conversation summary]\n\n## Goal\nAns"
	// assistant: "I have the context from our previous convers"
	// user: "Question 4: qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq"
	// assistant: "Answer 4: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	// turns handed to memory: 6, compactions: 1
}
