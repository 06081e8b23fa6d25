package main

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/term"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/formats"
)

//go:embed demo.jsonl
var demoJSONL []byte

func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

func runDemo(ctx context.Context, m *Main, args []string) error {
	fs := m.command("demo", "[--budget N] [--query Q]")
	budget := fs.Int("budget", 1500, "token budget of the context shown")
	query := fs.String("query", "flour reorder bug", "query for the context shown")
	if err := fs.parse(args); err != nil {
		return err
	}
	a, err := m.open(ctx, fs.g)
	if err != nil {
		return err
	}
	defer a.Close()
	w := m.Stdout
	if !*fs.json {
		fmt.Fprintf(w, "== strata demo: store %s\n\n", showDB(a.set.DB))
	}

	r, err := formats.Open("jsonl", "demo.jsonl", bytes.NewReader(demoJSONL))
	if err != nil {
		return err
	}
	batch := strata.Batch{Conversation: "demo"}
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		batch.Turns = append(batch.Turns, rec.Turn)
	}
	res, err := a.mem.Ingest(ctx, batch)
	if err != nil {
		return err
	}
	if *fs.json {
		tree, err := a.mem.Tree(ctx, "demo")
		if err != nil {
			return err
		}
		pkg, err := a.mem.Context(ctx, strata.ContextRequest{Conversation: "demo", Budget: *budget, Query: *query})
		if err != nil {
			return err
		}
		return writeJSON(w, struct {
			Import  strata.IngestResult `json:"import"`
			Tree    *strata.Tree        `json:"tree"`
			Context *strata.Package     `json:"context"`
		}{res, tree, pkg})
	}
	fmt.Fprintf(w, "== import: %d turns read, %d added, %d already present, %d summary nodes made\n\n",
		res.Received, res.Added, res.Skipped, res.Nodes)

	fmt.Fprintln(w, "== strata tree --conversation demo --depth 1")
	if err := runTree(ctx, m, withGlobals(fs.g, "--conversation", "demo", "--depth", "1")); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n== strata context --conversation demo --budget %d --query %q\n", *budget, *query)
	if err := runContext(ctx, m, withGlobals(fs.g, "--conversation", "demo", "--budget", fmt.Sprint(*budget), "--query", *query)); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nNext: strata search --conversation demo \"daily report\"; strata expand NODE_ID; strata stats")
	return nil
}

// withGlobals repeats the global flags the demo was given for the commands
// it runs.
func withGlobals(g *globals, args ...string) []string {
	for _, f := range []struct{ name, v string }{{"db", g.db}, {"config", g.config}, {"namespace", g.namespace}, {"tokenizer", g.tokenizer}} {
		if f.v != "" {
			args = append(args, "--"+f.name, f.v)
		}
	}
	return args
}
