package evidgen

import (
	"bytes"
	"testing"

	"github.com/strata-memory/strata/compact"
)

// TestLabels checks that every label is where its class says and
// nowhere else, that every class is present, and that both forms parse
// as the lists package compact reads.
func TestLabels(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3, 4, 5, 6} {
		tr := Generate(seed, Standard())
		if err := tr.Verify(); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		n := tr.Counts()
		for _, c := range Classes {
			if n[c] == 0 {
				t.Errorf("seed %d: no %s identifier", seed, c)
			}
		}
		if tr.ToolCalls < 120 || tr.Messages() < 250 {
			t.Errorf("seed %d: %d tool calls, %d messages", seed, tr.ToolCalls, tr.Messages())
		}
		for _, p := range []compact.Provider{compact.OpenAI, compact.Anthropic} {
			body := tr.OpenAI()
			if p == compact.Anthropic {
				body = tr.Anthropic()
			}
			if _, err := compact.Parse(p, body); err != nil {
				t.Fatalf("seed %d %s: %v", seed, p, err)
			}
		}
	}
}

func TestLabelsLong(t *testing.T) {
	if err := Generate(1, Long()).Verify(); err != nil {
		t.Fatal(err)
	}
}

func TestDeterministic(t *testing.T) {
	a, b := Generate(7, Standard()), Generate(7, Standard())
	if !bytes.Equal(a.OpenAI(), b.OpenAI()) || !bytes.Equal(a.Anthropic(), b.Anthropic()) {
		t.Fatal("the same seed gave two transcripts")
	}
	if c := Generate(8, Standard()); bytes.Equal(a.OpenAI(), c.OpenAI()) {
		t.Fatal("two seeds gave one transcript")
	}
}
