package strata_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/extractive"
	"github.com/strata-memory/strata/sqlite"
	"github.com/strata-memory/strata/tiktoken"
)

func ExampleMemory_Context() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "strata-example-")
	defer os.RemoveAll(dir)
	st, err := sqlite.Open(ctx, filepath.Join(dir, "memory.db"))
	if err != nil {
		panic(err)
	}
	defer st.Close()
	tok, _ := tiktoken.New("o200k_base")
	mem, err := strata.New(strata.Config{Store: st, Tokenizer: tok, Summarizer: extractive.New()})
	if err != nil {
		panic(err)
	}
	at := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	_, err = mem.Ingest(ctx, strata.Batch{Conversation: "c1", Turns: []strata.Turn{
		{ExtID: "m1", Role: strata.RoleUser, Name: "Maya", Content: "Our flour supplier is Millers Mill, €0.92/kg.", Time: at},
		{ExtID: "m2", Role: strata.RoleAssistant, Content: "Noted: Millers Mill at €0.92/kg.", Time: at.Add(time.Minute)},
	}})
	if err != nil {
		panic(err)
	}
	pkg, err := mem.Context(ctx, strata.ContextRequest{Conversation: "c1", Query: "flour price", Budget: 200})
	if err != nil {
		panic(err)
	}
	fmt.Print(pkg.Rendered)
	fmt.Println(pkg.Tokens <= 200)
	// Output:
	// # Memory of conversation c1: 2 turns, 2026-03-02 to 2026-03-02 (UTC)
	// Summaries stand for older turns; raw turns are quoted as said.
	//
	// [turn 1 m1, Mon 2026-03-02 09:00] Maya: Our flour supplier is Millers Mill, €0.92/kg.
	// [turn 2, 09:01] assistant: Noted: Millers Mill at €0.92/kg.
	//
	// true
}
