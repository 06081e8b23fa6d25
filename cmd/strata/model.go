package main

import (
	"context"
	"fmt"
	"sort"

	"github.com/strata-memory/strata"
)

// runCost prints stats --cost: what model summaries cost against what they
// save, per level, with prices from the config if given.
func runCost(ctx context.Context, m *Main, a *app, conv string, asJSON bool) error {
	rep, err := a.mem.Cost(ctx, conv)
	if err != nil {
		return err
	}
	dollars := map[string]float64{}
	models := make([]string, 0, len(rep.Models))
	for model, t := range rep.Models {
		models = append(models, model)
		if p, ok := a.set.LLM.Prices[model]; ok {
			dollars[model] = float64(t[0])*p.Input/1e6 + float64(t[1])*p.Output/1e6
		}
	}
	sort.Strings(models)
	if asJSON {
		return writeJSON(m.Stdout, struct {
			strata.CostReport
			Dollars map[string]float64 `json:"dollars,omitempty"`
		}{rep, dollars})
	}
	w := m.Stdout
	if len(rep.Levels) == 0 {
		fmt.Fprintln(w, "no model summaries and no model calls yet")
		return nil
	}
	fmt.Fprintf(w, "%-6s %-8s %6s %7s %6s %10s %10s %6s %12s %10s\n", "level", "name", "calls", "retries", "failed",
		"tokens in", "tokens out", "nodes", "saved/use", "break-even")
	for _, l := range rep.Levels {
		be := "-"
		if l.Saved > 0 {
			be = fmt.Sprintf("%.1f uses", l.BreakEven)
		}
		fmt.Fprintf(w, "%-6d %-8s %6d %7d %6d %10d %10d %6d %12d %10s\n", l.Level, l.Name, l.Calls, l.Retries, l.Failed,
			l.TokensIn, l.TokensOut, l.Nodes, l.Saved, be)
	}
	for _, model := range models {
		t := rep.Models[model]
		line := fmt.Sprintf("model %s: %d tokens in, %d out", model, t[0], t[1])
		if d, ok := dollars[model]; ok {
			line += fmt.Sprintf(", $%.4f at the configured prices", d)
		}
		fmt.Fprintln(w, line)
	}
	return nil
}

func runReview(ctx context.Context, m *Main, args []string) error {
	fs := m.command("review", "[--conversation ID] [--json]")
	conv := fs.String("conversation", "", "conversation id (default: every conversation)")
	if err := fs.parse(args); err != nil {
		return err
	}
	a, err := m.openReading(ctx, fs.g)
	if err != nil {
		return err
	}
	defer a.Close()
	ns, err := a.mem.Review(ctx, *conv)
	if err != nil {
		return err
	}
	if *fs.json {
		return writeJSON(m.Stdout, struct {
			Nodes []strata.Node `json:"nodes"`
		}{ns})
	}
	if len(ns) == 0 {
		fmt.Fprintln(m.Stdout, "nothing to review: every summary is within budget and written as its level asks")
		return nil
	}
	for _, n := range ns {
		why := n.Status
		switch {
		case n.Pending && n.Fallback != "":
			why = "pending, extractive until then: " + n.Fallback
		case n.Fallback != "":
			why = "kept extractive: " + n.Fallback
		}
		fmt.Fprintf(m.Stdout, "%s %s level %d turns %d-%d  %d tokens  %s\n      served: %s\n", n.Conversation, n.ID, n.Level,
			n.FirstSeq, n.LastSeq, n.Tokens, why, oneLine(n.Summary, 100))
		if r := n.Rejected; r != nil {
			fmt.Fprintf(m.Stdout, "      %s (%d tokens, budget %d, %s): %s\n", r.Status, r.Tokens, r.Budget, r.Model, oneLine(r.Summary, 100))
		}
	}
	return nil
}
