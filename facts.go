package strata

import (
	"math"
	"slices"
	"strings"
)

// This file adds the "known facts" section of a context package
// (ContextRequest.Facts): the conversation's current learnings that bear
// on the query, superseded and rejected ones left out, each with the turn
// it came from, inside the budget.

// ReasonFact is the reason of a known fact in a context package.
const ReasonFact = "fact"

// FactsShare is the share of the budget the known facts may take.
const FactsShare = 0.15

// factsLimit bounds the learnings a package reads to rank: the newest of
// the conversation, so that a long one still shows what it said last.
var factsLimit = 20000

// knownFacts adds the facts section when the request asks for it: the
// auto learnings (confirmed ones are pinned already) that share a word
// with the query, ranked by how many of its words they hold, rarer words
// weighing more, newest first among equals; without a query, the newest.
// It ranks the newest factsLimit of them.
func (a *assembler) knownFacts() error {
	if !a.req.Facts {
		return nil
	}
	ls, err := a.as.store.Learnings(a.ctx, LearningFilter{Namespace: a.as.ns, Conversation: a.req.Conversation,
		Statuses: []string{LearningAuto}, Limit: factsLimit, Newest: true})
	if err != nil {
		return err
	}
	ranked := rankFacts(ls, queryWords(a.req.Query))
	limit, spent := a.share(FactsShare), 0
	for _, l := range ranked {
		it := &Item{Kind: KindLearning, Reason: ReasonFact, NodeID: l.Node, LevelName: "known fact",
			FirstSeq: l.FirstSeq, LastSeq: l.LastSeq, Text: l.Text, prio: prioPinned, learning: l.ID}
		if len(l.Sources) > 0 {
			it.ExtID = l.Sources[0].ExtID
		}
		if a.add(it, limit-spent) {
			spent += it.Tokens
		}
		if limit-spent < 8 {
			break
		}
	}
	return nil
}

// rankFacts orders the learnings that bear on a query of words: by the
// summed rarity (log of how few learnings hold it) of the query words
// each holds, then newest first; those that hold none are left out. With
// no words, every learning, newest first.
func rankFacts(ls []Learning, words []string) []Learning {
	type scored struct {
		l     Learning
		score float64
	}
	holds := make([]map[string]bool, len(ls))
	df := map[string]int{}
	for i, l := range ls {
		ws := map[string]bool{}
		for _, w := range queryWords(l.Text) {
			ws[w] = true
		}
		for _, w := range words {
			if ws[w] {
				df[w]++
			}
		}
		holds[i] = ws
	}
	var out []scored
	for i, l := range ls {
		s := 0.0
		for _, w := range words {
			if holds[i][w] {
				s += math.Log(1 + float64(len(ls))/float64(df[w]))
			}
		}
		if s > 0 || len(words) == 0 {
			out = append(out, scored{l, s})
		}
	}
	slices.SortStableFunc(out, func(x, y scored) int {
		if x.score != y.score {
			if x.score > y.score {
				return -1
			}
			return 1
		}
		return cmpInt64(y.l.ID, x.l.ID)
	})
	res := make([]Learning, len(out))
	for i, s := range out {
		res[i] = s.l
	}
	return res
}

// factLine is how text renderings show a known fact.
func factLine(it *Item) string {
	return "[known fact, from " + fmtSeqs(it.FirstSeq, it.LastSeq) + "] " + strings.TrimSpace(it.Text)
}
