package main

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
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

// TestContextUpload: "strata context --format upload" over a history
// larger than the package. Under the default cap and under smaller
// --budget and --max-bytes limits, the package stays within its limits,
// gets no larger as they shrink, covers every turn (shown raw, under a
// summary, or listed as omitted) and uses at least 90% of its limits.
func TestContextUpload(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	const turns = 400
	file := writeJSONL(t, dir, "c1", turns)
	mustRun(t, db, "import", "--policy", "calendar", file)
	upload := func(t *testing.T, args ...string) strata.UploadPackage {
		t.Helper()
		var p strata.UploadPackage
		out := mustRun(t, db, append([]string{"context", "--conversation", "c1", "--format", "upload", "--json"}, args...)...)
		if err := json.Unmarshal([]byte(out), &p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// The turns as raw lines ("[HH:MM] Speaker: text") are larger than the
	// default cap, so no package here holds the history raw.
	history := 0
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var tr struct{ Role, Name, Content string }
		if err := json.Unmarshal([]byte(line), &tr); err != nil {
			t.Fatal(err)
		}
		speaker := cmp.Or(tr.Name, tr.Role)
		history += len("[15:04] ") + len(speaker) + len(": ") + len(tr.Content) + len("\n")
	}
	if history <= strata.DefaultUploadBytes {
		t.Fatalf("the history is %d bytes raw, no more than the default cap", history)
	}
	check := func(t *testing.T, p strata.UploadPackage) {
		t.Helper()
		if p.Bytes != len(p.Markdown) || p.Bytes > p.MaxBytes || (p.Budget > 0 && p.Tokens > p.Budget) {
			t.Errorf("%d bytes (Bytes %d) of %d, %d tokens of %d", len(p.Markdown), p.Bytes, p.MaxBytes, p.Tokens, p.Budget)
		}
		bytes, tokens := float64(p.Bytes)/float64(p.MaxBytes), 0.0
		if p.Budget > 0 {
			tokens = float64(p.Tokens) / float64(p.Budget)
		}
		if max(bytes, tokens) < 0.9 {
			t.Errorf("the package uses %.0f%% of its %d bytes and %.0f%% of its %d tokens", 100*bytes, p.MaxBytes, 100*tokens, p.Budget)
		}
		if p.Turns != turns {
			t.Errorf("the package covers turns 1-%d of %d", p.Turns, turns)
		}
		var spans [][2]int64
		for _, s := range p.Sections {
			if s.Kind != strata.UploadFixed {
				spans = append(spans, [2]int64{s.FirstSeq, s.LastSeq})
			}
		}
		for _, o := range p.Omitted {
			spans = append(spans, [2]int64{o.FirstSeq, o.LastSeq})
		}
		slices.SortFunc(spans, func(x, y [2]int64) int { return cmp.Compare(x[0], y[0]) })
		next := int64(1)
		for _, sp := range spans {
			if sp[0] > next || sp[1] < sp[0] {
				t.Errorf("turns %d-%d are neither in a section nor omitted (next span %d-%d)", next, sp[0]-1, sp[0], sp[1])
			}
			next = max(next, sp[1]+1)
		}
		if next <= p.Turns {
			t.Errorf("turns %d-%d are neither in a section nor omitted", next, p.Turns)
		}
		if len(p.Dropped) > 0 && len(p.Omitted) == 0 {
			t.Errorf("dropped %q with nothing omitted", p.Dropped)
		}
		if (len(p.Omitted) > 0) != strings.Contains(p.Markdown, "\nOmitted: turns ") {
			t.Errorf("omitted %v, but the package says otherwise", p.Omitted)
		}
	}
	full := upload(t)
	if full.Budget != 0 || full.MaxBytes != strata.DefaultUploadBytes || len(full.Sections) == 0 {
		t.Fatalf("package: budget %d, %d of %d bytes, %d sections", full.Budget, full.Bytes, full.MaxBytes, len(full.Sections))
	}
	check(t, full)
	tests := []struct {
		flag  string
		limit int // of the default package
	}{
		{"--budget", full.Tokens},
		{"--max-bytes", full.Bytes},
	}
	for _, tt := range tests {
		t.Run(tt.flag, func(t *testing.T) {
			prev := full
			for _, limit := range []int{tt.limit - 1, tt.limit * 3 / 4, tt.limit / 2, tt.limit / 4} {
				p := upload(t, tt.flag, strconv.Itoa(limit))
				check(t, p)
				if p.Bytes > prev.Bytes || p.Tokens > prev.Tokens {
					t.Errorf("%s %d: %d bytes, %d tokens; %d bytes, %d tokens under a larger limit",
						tt.flag, limit, p.Bytes, p.Tokens, prev.Bytes, prev.Tokens)
				}
				t.Logf("%s %d: %d bytes, %d tokens, merged %q, omitted %v, dropped %q", tt.flag, limit, p.Bytes, p.Tokens, p.Merged, p.Omitted, p.Dropped)
				prev = p
			}
		})
	}
	// Markdown on stdout, the figures on stderr: under a small cap too,
	// where periods are merged.
	secFile := filepath.Join(dir, "rules.md")
	os.WriteFile(secFile, []byte("Be brief."), 0o644)
	for _, args := range [][]string{nil, {"--max-bytes", strconv.Itoa(full.Bytes / 4)}} {
		args = append([]string{"--section", "Rules=" + secFile}, args...)
		out, errs, err := run(t, db, "", append([]string{"context", "--conversation", "c1", "--format", "upload"}, args...)...)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(out, "# Knowledge Primer -- Upload Package\n") || !strings.Contains(out, "\n## Rules\n\nBe brief.\n\n---\n\n") {
			t.Errorf("%v: stdout:\n%s", args, out)
		}
		p := upload(t, args...)
		if p.Markdown != out {
			t.Errorf("%v: stdout is not the package's Markdown", args)
		}
		var omitted int64
		for _, o := range p.Omitted {
			omitted += o.LastSeq - o.FirstSeq + 1
		}
		dropped := cmp.Or(strings.Join(p.Dropped, ", "), "nothing")
		want := fmt.Sprintf("(upload package: %d of %d bytes, %d tokens by %s; merged periods: %d; omitted turns: %d; dropped: %s)\n",
			p.Bytes, p.MaxBytes, p.Tokens, p.Tokenizer, len(p.Merged), omitted, dropped)
		if !strings.HasPrefix(errs, want) {
			t.Errorf("%v: stderr %q, want %q first", args, errs, want)
		}
		if args[len(args)-2] == "--max-bytes" && len(p.Merged) == 0 {
			t.Errorf("%v: nothing merged", args)
		}
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
