package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/primers"
)

// hashTree returns every file under dir, relative and slash-separated,
// with the SHA-256 of its content.
func hashTree(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		h := sha256.Sum256(data)
		out[filepath.ToSlash(rel)] = hex.EncodeToString(h[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// exportTwice exports a conversation's primers twice and checks that the
// second run writes nothing and leaves the same bytes.
func exportTwice(t *testing.T, db, conv, dir string, extra ...string) primers.Result {
	t.Helper()
	args := append([]string{"export", "primers", "--conversation", conv, "--dir", dir, "--json"}, extra...)
	var first, second primers.Result
	if err := json.Unmarshal([]byte(mustRun(t, db, args...)), &first); err != nil {
		t.Fatal(err)
	}
	before := hashTree(t, dir)
	if err := json.Unmarshal([]byte(mustRun(t, db, args...)), &second); err != nil {
		t.Fatal(err)
	}
	if after := hashTree(t, dir); !reflect.DeepEqual(before, after) {
		t.Errorf("%s: the second export changed the tree", conv)
	}
	if first.Written != len(first.Files) || second.Written != 0 || second.Unchanged != len(first.Files) || len(before) != len(first.Files) {
		t.Errorf("%s: first export %d written of %d files, second %d written, %d unchanged; %d files in the tree",
			conv, first.Written, len(first.Files), second.Written, second.Unchanged, len(before))
	}
	return first
}

func TestExportPrimers(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	// 600 generated turns span about two months.
	mustRun(t, db, "import", "--policy", "calendar", writeJSONL(t, dir, "c1", 600))
	out := filepath.Join(dir, "primers")
	res := exportTwice(t, db, "c1", out)
	var daily, weekly, monthly, archived int
	for _, f := range res.Files {
		switch {
		case strings.HasPrefix(f, "daily/"):
			daily++
		case strings.HasPrefix(f, "weekly/"):
			weekly++
		case strings.HasPrefix(f, "monthly/"):
			monthly++
		case strings.HasPrefix(f, "archive/"):
			archived++
		}
	}
	if daily == 0 || weekly == 0 || monthly == 0 || archived == 0 || !strings.Contains(strings.Join(res.Files, " "), primers.UploadFile) {
		t.Errorf("files %q", res.Files)
	}
	// The text summary.
	got := mustRun(t, db, "export", "primers", "--conversation", "c1", "--dir", out)
	want := "c1: " + strconv.Itoa(len(res.Files)) + " files in " + out + ": 0 written (0 in the archive), " + strconv.Itoa(len(res.Files)) + " unchanged, 0 moved to the archive\n"
	if got != want {
		t.Errorf("export said %q, want %q", got, want)
	}
}

func TestExportErrors(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	mustRun(t, db, "import", "--policy", "calendar", writeJSONL(t, dir, "c1", 40))
	file := filepath.Join(dir, "plain.txt")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"a file as --dir", []string{"export", "primers", "--conversation", "c1", "--dir", file}, file + " is not a directory"},
		{"no --dir", []string{"export", "primers", "--conversation", "c1"}, "--dir is required"},
		{"no conversation", []string{"export", "primers", "--dir", dir}, "--conversation is required"},
		{"unknown kind", []string{"export", "pdf"}, `unknown kind "pdf"`},
		{"no kind", []string{"export"}, "say what to export"},
		{"bad --now", []string{"export", "primers", "--conversation", "c1", "--dir", dir, "--now", "soon"}, `--now "soon"`},
		{"query with upload", []string{"context", "--conversation", "c1", "--format", "upload", "--query", "x"}, "--query does not apply"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := run(t, db, "", tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("strata %s: %v, want an error containing %q", strings.Join(tt.args, " "), err, tt.want)
			}
		})
	}
}

func TestContextUpload(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	mustRun(t, db, "import", "--policy", "calendar", writeJSONL(t, dir, "c1", 300))
	upload := func(args ...string) strata.UploadPackage {
		t.Helper()
		var p strata.UploadPackage
		out := mustRun(t, db, append([]string{"context", "--conversation", "c1", "--format", "upload", "--json"}, args...)...)
		if err := json.Unmarshal([]byte(out), &p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	full := upload()
	if full.Budget != 0 || full.MaxBytes != strata.DefaultUploadBytes || full.Bytes > full.MaxBytes || len(full.Sections) == 0 {
		t.Fatalf("package: budget %d, %d of %d bytes, %d sections", full.Budget, full.Bytes, full.MaxBytes, len(full.Sections))
	}
	tests := []struct {
		name string
		args []string
	}{
		{"--budget given", []string{"--budget", strconv.Itoa(full.Tokens - 1)}},
		{"--max-bytes", []string{"--max-bytes", strconv.Itoa(full.Bytes - 1)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := upload(tt.args...)
			if len(p.Dropped) == 0 || p.Bytes >= full.Bytes {
				t.Errorf("%v: dropped %q, %d bytes", tt.args, p.Dropped, p.Bytes)
			}
		})
	}
	// Markdown on stdout, the figures on stderr.
	secFile := filepath.Join(dir, "rules.md")
	os.WriteFile(secFile, []byte("Be brief."), 0o644)
	out, errs, err := run(t, db, "", "context", "--conversation", "c1", "--format", "upload", "--section", "Rules="+secFile)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "# Knowledge Primer -- Upload Package\n") || !strings.Contains(out, "\n## Rules\n\nBe brief.\n\n---\n\n") {
		t.Errorf("stdout:\n%s", out)
	}
	if !strings.HasPrefix(errs, "(upload package: ") || !strings.Contains(errs, "dropped: nothing") {
		t.Errorf("stderr: %q", errs)
	}
}

// TestLoCoMoUpload imports every LoCoMo conversation with the calendar
// policy: each upload package stays under 35 KB, and exporting each
// conversation's primers twice gives the same tree.
func TestLoCoMoUpload(t *testing.T) {
	file := os.Getenv("STRATA_LOCOMO")
	if file == "" {
		t.Skip("STRATA_LOCOMO names no LoCoMo file")
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	mustRun(t, db, "import", "--format", "locomo", "--policy", "calendar", file)
	for _, conv := range []string{"conv-26", "conv-30", "conv-41", "conv-42", "conv-43"} {
		var p strata.UploadPackage
		if err := json.Unmarshal([]byte(mustRun(t, db, "context", "--conversation", conv, "--format", "upload", "--json")), &p); err != nil {
			t.Fatal(err)
		}
		if p.Bytes > 35840 || len(p.Markdown) != p.Bytes || len(p.Dropped) > 0 {
			t.Errorf("%s: %d bytes, dropped %q", conv, p.Bytes, p.Dropped)
		}
		res := exportTwice(t, db, conv, filepath.Join(dir, conv))
		t.Logf("%s: upload package %d bytes, %d tokens (%s); %d primer files, %d archived", conv, p.Bytes, p.Tokens, p.Tokenizer,
			len(res.Files), countPrefix(res.Files, "archive/"))
	}
}

func countPrefix(files []string, prefix string) int {
	n := 0
	for _, f := range files {
		if strings.HasPrefix(f, prefix) {
			n++
		}
	}
	return n
}
