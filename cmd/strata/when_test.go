package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestZoomWhenTable runs the time expressions of testdata/when.tsv, the
// table the library's zoom and a context query are tested with, through
// 'strata zoom --when': the same period, or a usage error naming the text.
func TestZoomWhenTable(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "strata.db")
	var b strings.Builder
	for d := time.Date(2022, 1, 1, 10, 0, 0, 0, time.UTC); d.Before(time.Date(2023, 5, 11, 0, 0, 0, 0, time.UTC)); d = d.AddDate(0, 0, 1) {
		line, _ := json.Marshal(map[string]any{"conversation": "w", "role": "user", "name": "Ann",
			"content": "Notes of " + d.Format("Monday 2 January 2006") + ".", "time": d})
		b.Write(line)
		b.WriteByte('\n')
	}
	in := filepath.Join(dir, "w.jsonl")
	if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, db, "import", in)

	f, err := os.Open("../../testdata/when.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	cases := 0
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		cols := strings.Split(line, "\t")
		if len(cols) != 3 {
			t.Fatalf("testdata/when.tsv:%d: %d columns, want 3", n, len(cols))
		}
		text, now, want := cols[0], cols[1], cols[2]
		cases++
		out, errs, err := run(t, db, "", "zoom", "--conversation", "w", "--when", text, "--now", now, "--json")
		if want == "error" {
			if text == "" {
				continue // an empty --when is no --when at all: a usage error of its own
			}
			if _, ok := err.(usageError); !ok || !strings.Contains(err.Error(), strings.TrimSpace(text)) {
				t.Errorf("line %d: zoom --when %q: %v, want a usage error naming the text", n, text, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("line %d: zoom --when %q: %v\n%s", n, text, err, errs)
			continue
		}
		var z struct {
			Period string `json:"period"`
			Turns  int    `json:"turns"`
		}
		if err := json.Unmarshal([]byte(out), &z); err != nil {
			t.Fatal(err)
		}
		if z.Period != want || z.Turns == 0 {
			t.Errorf("line %d: zoom --when %q: %s with %d turns, want %s", n, text, z.Period, z.Turns, want)
		}
	}
	if cases < 20 {
		t.Fatalf("%d cases read", cases)
	}
}
