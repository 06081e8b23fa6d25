package compact_test

import (
	"encoding/json"
	"testing"

	"github.com/strata-memory/strata/compact"
)

// FuzzParse: any input either fails to parse or round-trips byte for
// byte, and pruning it (hard, so that results change) gives valid JSON
// that parses again.
func FuzzParse(f *testing.F) {
	f.Add(oddOpenAI)
	f.Add(oddAnthropic)
	f.Add(results(compact.OpenAI, 4, func(int) string { return "é\u2028\"\\ \t" + string(make([]byte, 200)) }))
	f.Add(results(compact.Anthropic, 4, func(int) string { return "<&> \u0000 " + string(make([]byte, 200)) }))
	f.Add(`{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":[{"type":"text","text":"x"},{"type":"text","text":"y"}]}]}]}`)
	f.Fuzz(func(t *testing.T, doc string) {
		for _, p := range providers {
			tr, err := compact.Parse(p, []byte(doc))
			if err != nil {
				continue
			}
			if string(tr.JSON()) != doc {
				t.Fatalf("%s: round trip changed the document", p)
			}
			cfg := compact.DefaultConfig()
			cfg.KeepLastToolResults, cfg.ToolHardClearAfter = 0, 1
			cfg.ToolSoftTrimChars, cfg.ToolSoftTrimHead, cfg.ToolSoftTrimTail = 101, 0, 1
			if _, err := compact.Prune(tr, cfg); err != nil {
				t.Fatal(err)
			}
			out := tr.JSON()
			if !json.Valid(out) {
				t.Fatalf("%s: pruned output is not JSON: %s", p, out)
			}
			if _, err := compact.Parse(p, out); err != nil {
				t.Fatalf("%s: pruned output does not parse: %v\n%s", p, err, out)
			}
		}
	})
}
