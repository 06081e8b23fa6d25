package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-memory/strata"
)

// listTurns returns the turns of conversation conv in list --json.
func listTurns(t *testing.T, db, conv string) int64 {
	t.Helper()
	if isFile := !strings.Contains(db, "://"); isFile {
		if _, err := os.Stat(db); os.IsNotExist(err) {
			return -1 // no store, so no conversation ('strata list' would say so and fail)
		}
	}
	var out struct {
		Conversations []struct {
			ID    string `json:"id"`
			Turns int64  `json:"turns"`
		} `json:"conversations"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, db, "list", "--json")), &out); err != nil {
		t.Fatal(err)
	}
	for _, c := range out.Conversations {
		if c.ID == conv {
			return c.Turns
		}
	}
	return -1
}

// TestAddKeepsRepeatedMessages: a user who says "yes" twice, with no
// --time and no --ext-id, has said it twice.
func TestAddKeepsRepeatedMessages(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s.db")
	for _, a := range [][]string{{"user", "yes"}, {"assistant", "Shall I continue?"}, {"user", "yes"}} {
		out := mustRun(t, db, "add", "--conversation", "Z", "--role", a[0], a[1])
		if !strings.Contains(out, "added") || strings.Contains(out, "already present") {
			t.Fatalf("add %q: %s", a[1], out)
		}
	}
	if n := listTurns(t, db, "Z"); n != 3 {
		t.Fatalf("Z has %d turns, want 3", n)
	}
	// A caller-given ext_id still makes a retry safe.
	mustRun(t, db, "add", "--conversation", "Z", "--ext-id", "m4", "ok")
	if out := mustRun(t, db, "add", "--conversation", "Z", "--ext-id", "m4", "ok"); !strings.Contains(out, "already present") {
		t.Fatalf("add with a stored ext_id: %s", out)
	}
	if n := listTurns(t, db, "Z"); n != 4 {
		t.Fatalf("Z has %d turns, want 4", n)
	}
}

// TestAddRefusesWhatImportRefuses: an empty turn and the zero time are
// refused by add as by import, and nothing is stored.
func TestAddRefusesWhatImportRefuses(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s.db")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--role", "user", ""}, "empty"},
		{[]string{"--time", "0001-01-01T00:00:00Z", "zero"}, "zero time"},
		{[]string{"--time", "2300-01-01T00:00:00Z", "late"}, "storable range"},
	} {
		args := append([]string{"add", "--conversation", "E"}, c.args...)
		_, _, err := run(t, db, "", args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("strata %s: err = %v, want it to say %q", strings.Join(args, " "), err, c.want)
		}
	}
	if n := listTurns(t, db, "E"); n != -1 {
		t.Fatalf("conversation E exists with %d turns after refused adds", n)
	}
}

// TestImportRefusesUnstorableTimeUpFront: a time the store cannot hold is
// refused by the checking pass, with its file and line: nothing of the
// file is stored (no empty conversation either), and --skip-invalid skips
// just that line.
func TestImportRefusesUnstorableTimeUpFront(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	p := filepath.Join(dir, "late.jsonl")
	os.WriteFile(p, []byte(`{"conversation":"A","role":"user","content":"hello","time":"2026-01-01T10:00:00Z"}
{"conversation":"A","role":"assistant","content":"hi","time":"2026-01-01T10:00:05Z"}
{"conversation":"B","role":"user","content":"from the future","time":"2300-01-01T10:00:00Z"}
{"conversation":"C","role":"user","content":"zero","time":"0001-01-01T00:00:00Z"}
`), 0o644)
	_, _, err := run(t, db, "", "import", p)
	if err == nil || !strings.Contains(err.Error(), "late.jsonl:3") || !strings.Contains(err.Error(), "time") {
		t.Fatalf("err = %v, want it to name late.jsonl:3 and the time", err)
	}
	for _, c := range []string{"A", "B", "C"} {
		if n := listTurns(t, db, c); n != -1 {
			t.Fatalf("after a refused import, conversation %s exists with %d turns", c, n)
		}
	}
	_, errs, err := run(t, db, "", "import", "--skip-invalid", p)
	if err != nil {
		t.Fatalf("import --skip-invalid: %v\n%s", err, errs)
	}
	if !strings.Contains(errs, "late.jsonl:3") || !strings.Contains(errs, "late.jsonl:4") {
		t.Fatalf("stderr does not list lines 3 and 4 as skipped:\n%s", errs)
	}
	if a, b, c := listTurns(t, db, "A"), listTurns(t, db, "B"), listTurns(t, db, "C"); a != 2 || b != -1 || c != -1 {
		t.Fatalf("turns of A, B, C = %d, %d, %d; want 2 and no B or C", a, b, c)
	}
}

// TestImportSaysWhatItCommitted: when a later file fails, the import says
// which earlier files it stored.
func TestImportSaysWhatItCommitted(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	good := writeJSONL(t, dir, "g", 12)
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte(`{"conversation":"h","role":"user","content":"x","time":"soon"}`+"\n"), 0o644)
	_, errs, err := run(t, db, "", "import", good, bad)
	if err == nil || !strings.Contains(err.Error(), "bad.jsonl:1") {
		t.Fatalf("err = %v, want it to name bad.jsonl:1", err)
	}
	if !strings.Contains(errs, "g.jsonl: 12 turns added to 1 conversations") {
		t.Fatalf("stderr does not say what was stored:\n%s", errs)
	}
}

// TestImportStdinLeavesNoCopy: the temporary copy of standard input is
// unlinked as soon as it is open, so a killed import leaves nothing.
func TestImportStdinLeavesNoCopy(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	m := &Main{Stdin: strings.NewReader(`{"conversation":"a","role":"user","content":"x"}` + "\n")}
	f, _, size, cleanup, err := m.openInput("-")
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	if left, _ := filepath.Glob(filepath.Join(tmp, "*")); len(left) != 0 {
		t.Fatalf("while the import runs, %v is on disk", left)
	}
	b := make([]byte, size)
	if _, err := f.ReadAt(b, 0); err != nil || !strings.Contains(string(b), `"content":"x"`) {
		t.Fatalf("reading the copy: %q %v", b, err)
	}
}

// TestNonJSONLineSaysSo: a line of plain text is not "a number".
func TestNonJSONLineSaysSo(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "text.jsonl")
	os.WriteFile(p, []byte(`{"role":"user","content":"hi"}`+"\nhello there\n"), 0o644)
	_, _, err := run(t, filepath.Join(dir, "s.db"), "", "import", "--conversation", "a", p)
	if err == nil || strings.Contains(err.Error(), "number") || !strings.Contains(err.Error(), "not JSON") {
		t.Fatalf("err = %v, want it to say the line is not JSON", err)
	}
}

// TestCTFDecodeRefusesWhatImportRefuses: ctf decode names the line and
// field of every turn import would refuse, and writes nothing then.
func TestCTFDecodeRefusesWhatImportRefuses(t *testing.T) {
	for _, c := range []struct {
		name, row, field string
	}{
		{"role", "robot\thi\t0", "role"},
		{"importance", "user\thi\t2", "importance"},
		{"NaN", "user\thi\tNaN", "importance"},
		{"utf8", "user\th\xffi\t0", "content"},
		{"empty", "user\t\t0", "content"},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := "#CTF v1 fields=role,content,importance\nuser\tfine\t0\n" + c.row + "\n"
			out, _, err := run(t, filepath.Join(t.TempDir(), "s.db"), in, "ctf", "decode")
			if err == nil || !strings.Contains(err.Error(), "line 3") || !strings.Contains(err.Error(), c.field) {
				t.Fatalf("err = %v, want it to name line 3 and %s", err, c.field)
			}
			if out != "" {
				t.Fatalf("wrote %q before failing", out)
			}
		})
	}
	out, _, err := run(t, filepath.Join(t.TempDir(), "s.db"), "#CTF v1 fields=role,content\nUser\thi\n", "ctf", "decode")
	if err != nil || !strings.Contains(out, `"role":"user"`) {
		t.Fatalf("decode of role User: %q %v, want role user", out, err)
	}
}

// storeDBs returns an SQLite file, and a scratch PostgreSQL store when
// STRATA_TEST_POSTGRES names a database, by store name.
func storeDBs(t *testing.T) map[string]string {
	dbs := map[string]string{"sqlite": filepath.Join(t.TempDir(), "s.db")}
	if dsn := os.Getenv("STRATA_TEST_POSTGRES"); dsn != "" {
		dbs["postgres"] = scratchSchema(t, dsn)
	}
	return dbs
}

// TestImportRefusesUnstorableTextUpFront: a record no store keeps (over
// strata.MaxTurnBytes, a NUL in a name, a NUL in the conversation id) is
// refused by the checking pass with its file, line and field, before
// anything of the file is stored, on SQLite and on PostgreSQL alike; and
// --skip-invalid leaves out just those lines.
func TestImportRefusesUnstorableTextUpFront(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "big.jsonl")
	var b strings.Builder
	b.WriteString(`{"conversation":"A","role":"user","content":"hello","time":"2026-01-01T10:00:00Z"}` + "\n")
	b.WriteString(`{"conversation":"A","role":"assistant","content":"hi","time":"2026-01-01T10:00:05Z"}` + "\n")
	b.WriteString(`{"conversation":"A","role":"tool","content":"` + strings.Repeat("x", strata.MaxTurnBytes+1) + `","time":"2026-01-01T10:00:06Z"}` + "\n")
	b.WriteString(`{"conversation":"B","role":"user","name":"J\u0000n","content":"hi","time":"2026-01-01T10:00:07Z"}` + "\n")
	b.WriteString(`{"conversation":"C\u0000","role":"user","content":"hi","time":"2026-01-01T10:00:08Z"}` + "\n")
	b.WriteString(`{"conversation":"A","role":"user","content":"after","time":"2026-01-01T10:00:09Z"}` + "\n")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	b.Reset()
	for name, db := range storeDBs(t) {
		_, _, err := run(t, db, "", "import", p)
		if err == nil || !strings.Contains(err.Error(), `big.jsonl:3: field "content"`) || !strings.Contains(err.Error(), "over the limit of 33554432") {
			t.Fatalf("%s: err = %.300v; want it to name big.jsonl:3, the content and the limit", name, err)
		}
		for _, c := range []string{"A", "B"} {
			if n := listTurns(t, db, c); n != -1 {
				t.Fatalf("%s: after a refused import, conversation %s exists with %d turns", name, c, n)
			}
		}
		_, errs, err := run(t, db, "", "import", "--skip-invalid", p)
		if err != nil {
			t.Fatalf("%s: import --skip-invalid: %v\n%.500s", name, err, errs)
		}
		for _, want := range []string{`big.jsonl:3: field "content"`, `big.jsonl:4: field "name": contains a NUL`, `big.jsonl:5: field "conversation": conversation id: contains a NUL`} {
			if !strings.Contains(errs, want) {
				t.Errorf("%s: stderr does not say %q:\n%.1000s", name, want, errs)
			}
		}
		if a, bn := listTurns(t, db, "A"), listTurns(t, db, "B"); a != 3 || bn != -1 {
			t.Errorf("%s: turns of A, B = %d, %d; want 3 and no B", name, a, bn)
		}
	}
}

// TestAddRefusesUnstorableText: strata add refuses a NUL in the content
// (from standard input) and invalid UTF-8 in a flag, naming the field, on
// SQLite and PostgreSQL alike, and stores nothing.
func TestAddRefusesUnstorableText(t *testing.T) {
	for name, db := range storeDBs(t) {
		for _, c := range []struct {
			stdin string
			args  []string
			want  string
		}{
			{"a\x00b", nil, "content: contains a NUL"},
			{"", []string{"--name", "J\xffn", "hi"}, "name: invalid UTF-8"},
			{"", []string{"--ext-id", strings.Repeat("e", strata.MaxIDBytes+1), "hi"}, "ext_id: 257 bytes long"},
			{"", []string{"--session", "s\xff", "hi"}, "session: invalid UTF-8"},
		} {
			args := append([]string{"add", "--conversation", "E"}, c.args...)
			_, _, err := run(t, db, c.stdin, args...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: strata %q: err = %v, want it to say %q", name, args, err, c.want)
			}
		}
		_, _, err := run(t, db, "", "add", "--conversation", "E\xff", "hi")
		if err == nil || !strings.Contains(err.Error(), "conversation") {
			t.Errorf("%s: add to a conversation id with invalid UTF-8: %v", name, err)
		}
		if n := listTurns(t, db, "E"); n != -1 {
			t.Errorf("%s: conversation E exists with %d turns after refused adds", name, n)
		}
	}
}
