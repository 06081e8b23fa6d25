package main

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"os"

	"golang.org/x/term"

	"strata"
	"strata/formats"
)

//go:embed demo.jsonl
var demoJSONL []byte

func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

func runDemo(ctx context.Context, m *Main, args []string) error {
	fs := m.newFlagSet("demo", "[--budget N] [--query Q]")
	g := m.addGlobals(fs)
	budget := fs.Int("budget", 1500, "token budget of the context shown")
	query := fs.String("query", "flour reorder bug", "query for the context shown")
	if err := parse(fs, args); err != nil {
		return err
	}
	a, err := m.open(ctx, g)
	if err != nil {
		return err
	}
	defer a.Close()
	w := m.Stdout
	fmt.Fprintf(w, "== strata demo: store %s\n\n", a.set.DB)

	r, err := formats.Open("jsonl", "demo.jsonl", bytes.NewReader(demoJSONL))
	if err != nil {
		return err
	}
	batch := strata.Batch{Conversation: "demo"}
	for {
		rec, err := r.Next()
		if err != nil {
			if err.Error() == "EOF" {
				break
			}
			return err
		}
		batch.Turns = append(batch.Turns, rec.Turn)
	}
	res, err := a.mem.Ingest(ctx, batch)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "== import: %d turns read, %d added, %d already present, %d summary nodes made\n\n",
		res.Received, res.Added, res.Skipped, res.Nodes)

	fmt.Fprintln(w, "== strata tree --conversation demo --depth 1")
	if err := runTree(ctx, m, withGlobals(g, "--conversation", "demo", "--depth", "1")); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n== strata context --conversation demo --budget %d --query %q\n", *budget, *query)
	if err := runContext(ctx, m, withGlobals(g, "--conversation", "demo", "--budget", fmt.Sprint(*budget), "--query", *query)); err != nil {
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
