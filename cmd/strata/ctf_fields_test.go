package main

import (
	"strings"
	"testing"
)

// TestCTFEncodeFieldsOfInput: ctf encode writes the fields its input
// carries; the ext_ids strata derives for turns without one stay out
// unless --derived-ids asks for them.
func TestCTFEncodeFieldsOfInput(t *testing.T) {
	noIDs := `{"role":"user","name":"Ann","content":"hello"}
{"role":"assistant","name":"Bot","content":"hi\tthere"}
{"role":"user","name":"Ann","content":"hello"}
`
	someIDs := `{"ext_id":"m1","role":"user","content":"hello"}
{"role":"assistant","content":"hi"}
`
	header := func(block string) string { return block[:strings.IndexByte(block, '\n')] }
	for _, tt := range []struct {
		in     string
		args   []string
		header string
		rows   []string
	}{
		{noIDs, nil, "#CTF v1 turns=3 fields=role,name,content",
			[]string{"user\tAnn\thello", "assistant\tBot\thi␉there", "user\tAnn\thello"}},
		{someIDs, nil, "#CTF v1 turns=2 fields=ext_id,role,content",
			[]string{"m1\tuser\thello", "\tassistant\thi"}},
		{noIDs, []string{"--fields", "role,content"}, "#CTF v1 turns=3 fields=role,content", nil},
		{noIDs, []string{"--fields", "ext_id,content"}, "#CTF v1 turns=3 fields=ext_id,content",
			[]string{"\thello", "\thi␉there", "\thello"}},
	} {
		out, errs, err := run(t, "", tt.in, append([]string{"ctf", "encode"}, tt.args...)...)
		if err != nil {
			t.Fatalf("ctf encode %v: %v\n%s", tt.args, err, errs)
		}
		if h := header(out); h != tt.header {
			t.Errorf("ctf encode %v: header %q, want %q", tt.args, h, tt.header)
		}
		if tt.rows != nil {
			if got := strings.Split(strings.TrimSuffix(out, "\n"), "\n")[1:]; strings.Join(got, "\n") != strings.Join(tt.rows, "\n") {
				t.Errorf("ctf encode %v: rows\n%q\nwant\n%q", tt.args, got, tt.rows)
			}
		}
	}

	// --derived-ids writes the ids import would store: a derived one for
	// each turn without, distinct for the repeated "hello".
	out, _, err := run(t, "", noIDs, "ctf", "encode", "--derived-ids")
	if err != nil {
		t.Fatal(err)
	}
	if h := header(out); h != "#CTF v1 turns=3 fields=ext_id,role,name,content" {
		t.Fatalf("--derived-ids: header %q", h)
	}
	rows := strings.Split(strings.TrimSuffix(out, "\n"), "\n")[1:]
	ids := map[string]bool{}
	for _, r := range rows {
		id, _, _ := strings.Cut(r, "\t")
		if !strings.HasPrefix(id, "h") {
			t.Errorf("--derived-ids: row %q has no derived id", r)
		}
		ids[id] = true
	}
	if len(ids) != 3 {
		t.Errorf("--derived-ids: %d distinct ids in %q", len(ids), rows)
	}

	// Decoded and imported, a block without the derived ids gives the same
	// turns, under the same ids, as the JSONL it came from.
	db1, db2 := t.TempDir()+"/a.db", t.TempDir()+"/b.db"
	block, _, err := run(t, "", noIDs, "ctf", "encode")
	if err != nil {
		t.Fatal(err)
	}
	jsonl, _, err := run(t, "", block, "ctf", "decode")
	if err != nil {
		t.Fatal(err)
	}
	if _, errs, err := run(t, db1, noIDs, "import", "--conversation", "c", "-"); err != nil {
		t.Fatalf("import: %v\n%s", err, errs)
	}
	if _, errs, err := run(t, db2, jsonl, "import", "--conversation", "c", "-"); err != nil {
		t.Fatalf("import: %v\n%s", err, errs)
	}
	a := mustRun(t, db1, "zoom", "--conversation", "c", "--from", "0001-01-01", "--to", "9999-12-31")
	b := mustRun(t, db2, "zoom", "--conversation", "c", "--from", "0001-01-01", "--to", "9999-12-31")
	if a != b {
		t.Errorf("imported from the JSONL:\n%s\nfrom its CTF:\n%s", a, b)
	}
}
