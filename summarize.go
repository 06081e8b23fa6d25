package strata

import "context"

// DefaultSummaryBudget is the token budget Summarize uses when a request
// gives none and its conversation's policy names no level for it.
const DefaultSummaryBudget = 500

// Summarize runs the configured summarizer over req outside any rollup:
// for summaries a caller writes itself, such as a primer file per day and
// session. It sets req.Tokenizer to the tokenizer budgets are counted
// with. An empty LevelName or a zero Budget is taken from the level
// req.Level of req.Conversation's policy when both name one, otherwise
// "summary" and DefaultSummaryBudget. The summary is not stored. With the
// default extractive summarizer the result is deterministic: the same
// request gives the same summary.
func (m *Memory) Summarize(ctx context.Context, req SummaryRequest) (Summary, error) {
	return m.model.summarize(ctx, req)
}

func (mp *modelPass) summarize(ctx context.Context, req SummaryRequest) (Summary, error) {
	if len(req.Turns) == 0 && len(req.Children) == 0 {
		return Summary{}, Errorf(EINVALID, "summarize: the request has no turns and no child nodes")
	}
	if len(req.Turns) > 0 && len(req.Children) > 0 {
		return Summary{}, Errorf(EINVALID, "summarize: the request has both turns and child nodes; give one or the other")
	}
	if req.Budget < 0 {
		return Summary{}, Errorf(EINVALID, "summarize: budget %d is negative", req.Budget)
	}
	if req.Level < 0 {
		return Summary{}, Errorf(EINVALID, "summarize: level %d is negative", req.Level)
	}
	if (req.LevelName == "" || req.Budget == 0) && req.Conversation != "" && req.Level > 0 {
		p, err := mp.policyOf(ctx, req.Conversation)
		if err != nil {
			return Summary{}, err
		}
		if req.Level <= len(p.Levels) {
			l := p.Levels[req.Level-1]
			if req.LevelName == "" {
				req.LevelName = l.Name
			}
			if req.Budget == 0 {
				req.Budget = l.Budget
			}
		}
	}
	if req.LevelName == "" {
		req.LevelName = "summary"
	}
	if req.Budget == 0 {
		req.Budget = DefaultSummaryBudget
	}
	req.Tokenizer = mp.tok
	s, err := mp.sum.Summarize(ctx, req)
	if err != nil {
		return Summary{}, err
	}
	if s.Method == "" {
		s.Method = MethodExtractive
	}
	return s, nil
}
