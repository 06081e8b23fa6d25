package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestToolArgumentsExactCLI: arguments that are not JSON, and JSON with
// its spacing, come back as given from import, zoom and a CTF round trip.
func TestToolArgumentsExactCLI(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "strata.db")
	in := `{"conversation":"a","ext_id":"1","role":"user","content":"go","time":"2024-03-01T10:00:00Z"}
{"conversation":"a","ext_id":"2","role":"assistant","content":"","time":"2024-03-01T10:00:01Z","tool_calls":[{"id":"c1","name":"f","arguments":"{\"a\": tru"},{"id":"c2","name":"g","arguments":" {\"b\" :  1} "}]}
`
	p := filepath.Join(dir, "a.jsonl")
	if err := os.WriteFile(p, []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, db, "import", p)
	var z struct {
		Items []struct {
			Text string `json:"text"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, db, "zoom", "--conversation", "a", "--date", "2024-03-01", "--json")), &z); err != nil {
		t.Fatal(err)
	}
	if len(z.Items) != 2 || z.Items[1].Text != "[tool call f id=c1] {\"a\": tru\n[tool call g id=c2]  {\"b\" :  1} " {
		t.Errorf("zoom items %q", z.Items)
	}

	block, errs, err := run(t, db, in, "ctf", "encode")
	if err != nil {
		t.Fatalf("ctf encode: %v\n%s", err, errs)
	}
	if !strings.Contains(block, `"arguments":"{\"a\": tru"`) || !strings.Contains(block, `"arguments":" {\"b\" :  1} "`) {
		t.Errorf("ctf encode writes the arguments changed:\n%s", block)
	}
	back, errs, err := run(t, db, block, "ctf", "decode")
	if err != nil {
		t.Fatalf("ctf decode: %v\n%s", err, errs)
	}
	if !strings.Contains(back, `"arguments":"{\"a\": tru"`) || !strings.Contains(back, `"arguments":" {\"b\" :  1} "`) {
		t.Errorf("ctf decode gives the arguments changed:\n%s", back)
	}
}
