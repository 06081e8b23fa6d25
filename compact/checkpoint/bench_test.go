package checkpoint_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/compact/checkpoint"
	"github.com/strata-memory/strata/compact/internal/agentgen"
	"github.com/strata-memory/strata/tiktoken"
)

// BenchmarkLedger collects the ledger of generated spans of 40 and 160
// tasks (about 850 and 3,400 entries, 95k and 380k tokens).
func BenchmarkLedger(b *testing.B) {
	for _, tasks := range []int{40, 160} {
		span := agentgen.Generate(1, agentgen.Options{Tasks: tasks}).Entries()
		b.Run(fmt.Sprintf("entries=%d", len(span)), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				checkpoint.Ledger(span, "")
			}
		})
	}
}

// BenchmarkCheckpoint writes extractive checkpoints of the same spans at
// the default budget, counted as characters / 4 and with o200k.
func BenchmarkCheckpoint(b *testing.B) {
	o200k, err := tiktoken.New(tiktoken.O200kBase)
	if err != nil {
		b.Fatal(err)
	}
	for _, tasks := range []int{40, 160} {
		span := agentgen.Generate(1, agentgen.Options{Tasks: tasks}).Entries()
		for _, tok := range []strata.Tokenizer{strata.CharEstimator{}, o200k} {
			w, _ := checkpoint.New(checkpoint.Options{Tokenizer: tok})
			b.Run(fmt.Sprintf("entries=%d/%s", len(span), tok.Name()), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					if _, err := w.Checkpoint(context.Background(), span, ""); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
