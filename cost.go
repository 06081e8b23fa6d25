package strata

import (
	"context"
	"sort"
)

// LevelCost is what model summaries of one level cost and save.
type LevelCost struct {
	Level     int    `json:"level"`
	Name      string `json:"name"`
	Calls     int    `json:"calls"`
	Retries   int    `json:"retries"` // calls beyond the first per node and pass
	Failed    int    `json:"failed"`  // calls that ended in an error
	TokensIn  int64  `json:"tokens_in"`
	TokensOut int64  `json:"tokens_out"`
	Nodes     int    `json:"nodes"` // nodes with a model summary
	// Saved is how many tokens a context package saves each time it shows
	// these nodes instead of the turns they cover: their source tokens
	// minus their summary tokens. Spent / Saved is how many such uses pay
	// for the summaries (000's break-even, measured).
	Saved     int64   `json:"saved_per_use"`
	BreakEven float64 `json:"break_even_uses"`
}

// CostReport is the cost of model summaries in a namespace, per level, and
// per model for pricing.
type CostReport struct {
	Levels []LevelCost         `json:"levels"`
	Models map[string][2]int64 `json:"models"` // model -> tokens in, out
}

// Cost reports what model summaries cost (from the log of calls) against
// what they save, per level, over the conversation (every conversation of
// the namespace if "").
func (m *Memory) Cost(ctx context.Context, conversation string) (CostReport, error) {
	return m.model.cost(ctx, conversation)
}

func (mp *modelPass) cost(ctx context.Context, conversation string) (CostReport, error) {
	rep := CostReport{Levels: []LevelCost{}, Models: map[string][2]int64{}}
	if conversation != "" {
		if err := lookupID(mp.ns, conversation); err != nil {
			return rep, err
		}
	}
	calls, err := mp.store.Calls(ctx, mp.ns, conversation)
	if err != nil {
		return rep, err
	}
	byLevel := map[int]*LevelCost{}
	level := func(l int) *LevelCost {
		if byLevel[l] == nil {
			byLevel[l] = &LevelCost{Level: l}
		}
		return byLevel[l]
	}
	for _, c := range calls {
		lc := level(c.Level)
		lc.Calls++
		if c.Attempt > 1 {
			lc.Retries++
		}
		if c.Outcome != "ok" && c.Outcome != StatusOverBudget && c.Outcome != "empty" {
			lc.Failed++
		}
		lc.TokensIn += int64(c.TokensIn)
		lc.TokensOut += int64(c.TokensOut)
		t := rep.Models[c.Model]
		rep.Models[c.Model] = [2]int64{t[0] + int64(c.TokensIn), t[1] + int64(c.TokensOut)}
	}
	convs, err := mp.conversationsOf(ctx, conversation)
	if err != nil {
		return rep, err
	}
	for _, c := range convs {
		p, err := mp.policyFor(c)
		if err != nil {
			return rep, err
		}
		ns, err := mp.store.Nodes(ctx, NodeFilter{Namespace: mp.ns, Conversation: c.ID})
		if err != nil {
			return rep, err
		}
		for _, n := range ns {
			if n.Method != MethodLLM {
				continue
			}
			lc := level(n.Level)
			lc.Name = p.LevelName(n.Level)
			lc.Nodes++
			lc.Saved += int64(n.SourceTokens - n.Tokens)
		}
	}
	for _, lc := range byLevel {
		if lc.Saved > 0 {
			lc.BreakEven = float64(lc.TokensIn+lc.TokensOut) / float64(lc.Saved)
		}
		rep.Levels = append(rep.Levels, *lc)
	}
	sort.Slice(rep.Levels, func(i, j int) bool { return rep.Levels[i].Level < rep.Levels[j].Level })
	return rep, nil
}

// Review lists the nodes that need a look: summaries over budget, marked
// needs_review, kept extractive because the model failed or answered over
// budget (the reply is in Node.Rejected), or left pending because the
// model's endpoint could not be reached.
func (m *Memory) Review(ctx context.Context, conversation string) ([]Node, error) {
	return m.model.review(ctx, conversation)
}

func (mp *modelPass) review(ctx context.Context, conversation string) ([]Node, error) {
	convs, err := mp.conversationsOf(ctx, conversation)
	if err != nil {
		return nil, err
	}
	out := []Node{}
	for _, c := range convs {
		ns, err := mp.store.Nodes(ctx, NodeFilter{Namespace: mp.ns, Conversation: c.ID})
		if err != nil {
			return nil, err
		}
		for _, n := range ns {
			if n.Status != StatusOK || n.Fallback != "" {
				out = append(out, n)
			}
		}
	}
	return out, nil
}
