package checkpoint_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/strata-memory/strata/compact/checkpoint"
)

// TestReadsCollapse checks that many reads of one pattern (cat on one
// path each) are one ledger line with the pattern, the count, the
// directory the paths share and every command as run, while a few reads
// of another pattern, and commands that do more than read, stay one line
// each.
func TestReadsCollapse(t *testing.T) {
	span := []checkpoint.Entry{user("Find why the router drops the query string.")}
	var paths []string
	for i := 0; i < 14; i++ {
		p := fmt.Sprintf("internal/router/file%02d.go", i)
		if i == 13 {
			p = "internal/router/match/trie.go"
		}
		paths = append(paths, p)
		span = append(span, run(fmt.Sprintf("c%d", i), "cat "+p, "package router\n")...)
		// Read twice: still one path of the line.
		if i == 3 {
			span = append(span, run("again", "cat "+p, "package router\n")...)
		}
	}
	for i, d := range []string{"internal/router", "cmd/gw"} {
		span = append(span, run(fmt.Sprintf("l%d", i), "ls "+d, "a.go\n")...)
	}
	span = append(span, run("g1", "go test ./internal/router/", "ok  \texample.com/gw/internal/router\t0.2s\n")...)
	res, err := newWriter(t, checkpoint.Options{}).Checkpoint(context.Background(), span, "")
	if err != nil {
		t.Fatal(err)
	}
	var line string
	for _, l := range strings.Split(res.Text, "\n") {
		if strings.HasPrefix(l, "- command: cat ") {
			if line != "" {
				t.Fatalf("two cat lines:\n%s", res.Text)
			}
			line = l
		}
	}
	if !strings.HasPrefix(line, "- command: cat ×14 under internal/router/: cat internal/router/file00.go; cat ") {
		t.Fatalf("the reads are not one line with their count and directory:\n%s", res.Text)
	}
	for _, p := range paths {
		if !strings.Contains(line, "cat "+p) {
			t.Errorf("cat %s lost from the line: %s", p, line)
		}
	}
	for _, c := range []string{"- command: ls internal/router", "- command: ls cmd/gw", "go test ./internal/router/"} {
		if !strings.Contains(res.Text, c) {
			t.Errorf("%q is not listed as run:\n%s", c, res.Text)
		}
	}
}

// TestReadsCollapseNeedsOnePattern checks that only reads of one path
// with the same program and flags collapse: five plain cats do; a cat
// into a pipe, a cat of two files and heads of other lengths (two of a
// pattern at most) do not.
func TestReadsCollapseNeedsOnePattern(t *testing.T) {
	span := []checkpoint.Entry{user("Look around.")}
	var cmds []string
	for i := 0; i < 5; i++ {
		cmds = append(cmds, fmt.Sprintf("cat a/b/f%d.go", i))
	}
	alone := []string{"cat a/b/one.go | head", "cat a/b/one.go a/b/two.go", "head -n 20 a/b/four.go", "head -n 40 a/b/five.go"}
	for i, c := range append(cmds, alone...) {
		span = append(span, run(fmt.Sprintf("c%d", i), c, "x\n")...)
	}
	res, err := newWriter(t, checkpoint.Options{}).Checkpoint(context.Background(), span, "")
	if err != nil {
		t.Fatal(err)
	}
	text := res.Text + "\n"
	if !strings.Contains(text, "- command: cat ×5 under a/b/: cat a/b/f0.go; cat a/b/f1.go; cat a/b/f2.go; cat a/b/f3.go; cat a/b/f4.go\n") {
		t.Errorf("the five cats are not one line:\n%s", res.Text)
	}
	for _, c := range alone {
		if !strings.Contains(text, "- command: "+c+"\n") {
			t.Errorf("%q is not listed as run:\n%s", c, res.Text)
		}
	}
}
