package compact_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/strata-memory/strata/compact"
	"github.com/strata-memory/strata/compact/checkpoint"
	"github.com/strata-memory/strata/compact/internal/agentgen"
	"github.com/strata-memory/strata/internal/race"
	"github.com/strata-memory/strata/tiktoken"
)

// TestAgentgenSurvivalThroughCompact measures, on agentgen transcripts of
// 80 tasks (OpenAI messages, o200k tokens), what the digest of cleared
// results costs and what the whole pipeline keeps: layer 1 alone at the
// defaults, and a compaction at a 30,000-token threshold keeping 8,000,
// with and without the digest. An identifier is kept when the output
// list (every string in its JSON, tool call arguments decoded) says it as a whole word; the truth
// is agentgen's planted identifiers.
func TestAgentgenSurvivalThroughCompact(t *testing.T) {
	if testing.Short() || race.Enabled {
		// Without the race detector it takes a few seconds, under it a
		// minute and a half, for no concurrency: .ci/run runs it without.
		t.Skip("measures 6 transcripts of 80 tasks: run it without -short and without -race")
	}
	tok, err := tiktoken.New(tiktoken.O200kBase)
	if err != nil {
		t.Fatal(err)
	}
	w, err := checkpoint.New(checkpoint.Options{Tokenizer: tok})
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		before, after, kept, total int
	}
	measure := func(digest, tight bool) row {
		var r row
		for seed := int64(1); seed <= 6; seed++ {
			tr := agentgen.Generate(seed, agentgen.Options{Tasks: 80})
			in := mustParse(t, compact.OpenAI, string(tr.OpenAI()))
			cfg := compact.DefaultConfig()
			cfg.ToolClearDigest = digest
			if tight {
				cfg.CompactionEnabled = true
				cfg.CompactionThreshold = 30000
				cfg.KeepRecentTokens = 8000
			}
			c, err := compact.New(compact.Options{Config: cfg, Tokenizer: tok, Checkpointer: w})
			if err != nil {
				t.Fatal(err)
			}
			res, err := c.Compact(context.Background(), compact.Request{Transcript: in})
			if err != nil {
				t.Fatal(err)
			}
			if tight && !res.Compacted {
				t.Fatalf("seed %d: not compacted (%s)", seed, res.Reason)
			}
			r.before += res.TokensBefore
			r.after += res.TokensAfter
			text := listText(res.Transcript)
			for _, id := range tr.Truth {
				r.total++
				if agentgen.Contains(text, id.Text) {
					r.kept++
				}
			}
		}
		return r
	}
	for _, tight := range []bool{false, true} {
		off, on := measure(false, tight), measure(true, tight)
		name := "layer 1 at the defaults"
		if tight {
			name = "compaction at 30000/8000"
		}
		t.Logf("%s: %d tokens in; no digest %d tokens out, %.1f%% of %d identifiers kept; digest %d tokens out (+%d, +%.1f%%), %.1f%% kept",
			name, off.before/6, off.after/6, 100*float64(off.kept)/float64(off.total), off.total/6, on.after/6,
			(on.after-off.after)/6, 100*float64(on.after-off.after)/float64(off.after), 100*float64(on.kept)/float64(on.total))
		if !tight && on.kept <= off.kept {
			t.Errorf("%s: the digest keeps fewer identifiers (%d) than none (%d)", name, on.kept, off.kept)
		}
	}
}

// listText returns every string of a message list's JSON, one per line,
// with tool call arguments (JSON in a string) decoded the same way.
func listText(tr *compact.Transcript) string {
	var b strings.Builder
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			var inner any
			if strings.HasPrefix(strings.TrimSpace(v), "{") && json.Unmarshal([]byte(v), &inner) == nil {
				walk(inner)
				return
			}
			b.WriteString(v)
			b.WriteByte('\n')
		case []any:
			for _, x := range v {
				walk(x)
			}
		case map[string]any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	var v any
	if err := json.Unmarshal(tr.JSON(), &v); err == nil {
		walk(v)
	}
	return b.String()
}
