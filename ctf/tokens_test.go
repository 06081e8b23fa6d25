package ctf

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/strata-memory/strata/tiktoken"
)

// TestLoCoMoTokens counts the o200k_base tokens of the LoCoMo turns (the
// file STRATA_LOCOMO names) as compact JSON, as CTF, as bare TSV and as
// their content alone, and checks that CTF costs at least 18% fewer tokens
// than JSON. When STRATA_TOON_OUT names a path it writes the JSON there, for
// scripts/toon/count.mjs to count as TOON.
func TestLoCoMoTokens(t *testing.T) {
	if os.Getenv("STRATA_LOCOMO") == "" {
		t.Skip("set STRATA_LOCOMO to the path of locomo-dev.json to count tokens")
	}
	turns, err := locomoTurns()
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tiktoken.New("o200k_base")
	if err != nil {
		t.Fatal(err)
	}

	type message struct {
		Role    string `json:"role"`
		Name    string `json:"name"`
		Content string `json:"content"`
	}
	msgs := make([]message, len(turns))
	var tsv strings.Builder
	content := 0
	for i, tr := range turns {
		msgs[i] = message{string(tr.Role), tr.Name, tr.Content}
		tsv.WriteString(string(tr.Role) + "\t" + tr.Name + "\t" + tr.Content + "\n")
		content += tok.Count(tr.Content)
	}
	var js bytes.Buffer
	enc := json.NewEncoder(&js)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(msgs); err != nil {
		t.Fatal(err)
	}
	jsonText := strings.TrimSuffix(js.String(), "\n")
	if out := os.Getenv("STRATA_TOON_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(jsonText), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %d turns as JSON to %s", len(msgs), out)
	}

	block, err := EncodeTurns(turns, []string{"role", "name", "content"})
	if err != nil {
		t.Fatal(err)
	}
	escapes := bytes.Count(block, []byte(GlyphLF)) + bytes.Count(block, []byte(GlyphTab)) +
		bytes.Count(block, []byte(GlyphCR)) + bytes.Count(block, []byte(GlyphEsc))
	header := string(block[:bytes.IndexByte(block, '\n')+1])

	nJSON, nCTF, nTSV := tok.Count(jsonText), tok.Count(string(block)), tok.Count(tsv.String())
	pct := func(n int) string { return fmt.Sprintf("%.1f%%", 100*(1-float64(n)/float64(nJSON))) }
	t.Logf("o200k_base tokens of %d LoCoMo turns (role, name, content):", len(turns))
	t.Logf("  JSON          %7d", nJSON)
	t.Logf("  CTF           %7d  (%s fewer than JSON; header %d tokens, %d escape glyphs)", nCTF, pct(nCTF), tok.Count(header), escapes)
	t.Logf("  bare TSV      %7d  (%s fewer)", nTSV, pct(nTSV))
	t.Logf("  content only  %7d  (%s fewer)", content, pct(content))
	t.Logf("  TOON: run scripts/toon/count.mjs on the file STRATA_TOON_OUT names")
	if float64(nCTF) > 0.82*float64(nJSON) {
		t.Errorf("CTF costs %d tokens, more than 82%% of JSON's %d", nCTF, nJSON)
	}
}
