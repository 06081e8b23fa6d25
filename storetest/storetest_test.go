package storetest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/sqlite"
	"github.com/strata-memory/strata/storetest"
)

// These tests check the suite itself: it passes a correct store (sqlite)
// and fails stores that each break one rule of the contract, in the
// subtest that pins that rule. Each broken store ("mutant") wraps sqlite
// and runs in a child process (this test binary, re-run), because a
// failing subtest would fail this test too.

// mutant breaks one rule of the contract.
type mutant struct {
	subtest string // the subtest of storetest.Run that must fail
	wrap    func(strata.Store) strata.Store
}

// store is a strata.Store whose methods can be replaced one by one.
type store struct {
	strata.Store
	append   func(ctx context.Context, ns, conv string, turns []strata.Turn) ([]strata.Turn, error)
	turns    func(ctx context.Context, f strata.TurnFilter) ([]strata.Turn, error)
	putNodes func(ctx context.Context, ns, conv string, nodes []strata.Node) error
	nodes    func(ctx context.Context, f strata.NodeFilter) ([]strata.Node, error)
	search   func(ctx context.Context, q strata.SearchQuery) ([]strata.Hit, error)
	conv     func(ctx context.Context, ns, id string) (strata.Conversation, error)
	stats    func(ctx context.Context, ns string) (strata.Stats, error)
	setImp   func(ctx context.Context, ns, conv string, seq int64, importance float64) (strata.Turn, error)
	reset    func(ctx context.Context, ns, conv, policy string) (int, error)
	learn    func(ctx context.Context, ns, conv string, ls []strata.Learning) ([]strata.Learning, error)
	learned  func(ctx context.Context, f strata.LearningFilter) ([]strata.Learning, error)
	setLearn func(ctx context.Context, ns string, id int64, status string) (strata.Learning, error)
	claim    func(ctx context.Context, key, holder string, now, until time.Time) (bool, error)
	release  func(ctx context.Context, key, holder string) error
}

func (s *store) Claim(ctx context.Context, key, holder string, now, until time.Time) (bool, error) {
	if s.claim != nil {
		return s.claim(ctx, key, holder, now, until)
	}
	return s.Store.Claim(ctx, key, holder, now, until)
}

func (s *store) Release(ctx context.Context, key, holder string) error {
	if s.release != nil {
		return s.release(ctx, key, holder)
	}
	return s.Store.Release(ctx, key, holder)
}

func (s *store) AppendTurns(ctx context.Context, ns, conv string, turns []strata.Turn) ([]strata.Turn, error) {
	if s.append != nil {
		return s.append(ctx, ns, conv, turns)
	}
	return s.Store.AppendTurns(ctx, ns, conv, turns)
}

func (s *store) Turns(ctx context.Context, f strata.TurnFilter) ([]strata.Turn, error) {
	if s.turns != nil {
		return s.turns(ctx, f)
	}
	return s.Store.Turns(ctx, f)
}

func (s *store) PutNodes(ctx context.Context, ns, conv string, nodes []strata.Node) error {
	if s.putNodes != nil {
		return s.putNodes(ctx, ns, conv, nodes)
	}
	return s.Store.PutNodes(ctx, ns, conv, nodes)
}

func (s *store) Nodes(ctx context.Context, f strata.NodeFilter) ([]strata.Node, error) {
	if s.nodes != nil {
		return s.nodes(ctx, f)
	}
	return s.Store.Nodes(ctx, f)
}

func (s *store) Search(ctx context.Context, q strata.SearchQuery) ([]strata.Hit, error) {
	if s.search != nil {
		return s.search(ctx, q)
	}
	return s.Store.Search(ctx, q)
}

func (s *store) Conversation(ctx context.Context, ns, id string) (strata.Conversation, error) {
	if s.conv != nil {
		return s.conv(ctx, ns, id)
	}
	return s.Store.Conversation(ctx, ns, id)
}

func (s *store) Stats(ctx context.Context, ns string) (strata.Stats, error) {
	if s.stats != nil {
		return s.stats(ctx, ns)
	}
	return s.Store.Stats(ctx, ns)
}

func (s *store) SetImportance(ctx context.Context, ns, conv string, seq int64, importance float64) (strata.Turn, error) {
	if s.setImp != nil {
		return s.setImp(ctx, ns, conv, seq, importance)
	}
	return s.Store.SetImportance(ctx, ns, conv, seq, importance)
}

func (s *store) ResetPyramid(ctx context.Context, ns, conv, policy string) (int, error) {
	if s.reset != nil {
		return s.reset(ctx, ns, conv, policy)
	}
	return s.Store.ResetPyramid(ctx, ns, conv, policy)
}

func (s *store) AddLearnings(ctx context.Context, ns, conv string, ls []strata.Learning) ([]strata.Learning, error) {
	if s.learn != nil {
		return s.learn(ctx, ns, conv, ls)
	}
	return s.Store.AddLearnings(ctx, ns, conv, ls)
}

func (s *store) Learnings(ctx context.Context, f strata.LearningFilter) ([]strata.Learning, error) {
	if s.learned != nil {
		return s.learned(ctx, f)
	}
	return s.Store.Learnings(ctx, f)
}

func (s *store) SetLearningStatus(ctx context.Context, ns string, id int64, status string) (strata.Learning, error) {
	if s.setLearn != nil {
		return s.setLearn(ctx, ns, id, status)
	}
	return s.Store.SetLearningStatus(ctx, ns, id, status)
}

// spanTier returns the tier of the level-1 span of s holding turn seq, or
// "" if none does.
func spanTier(ctx context.Context, s strata.Store, ns, conv string, seq int64) strata.Tier {
	nodes, _ := s.Nodes(ctx, strata.NodeFilter{Namespace: ns, Conversation: conv, Level: 1})
	for _, n := range nodes {
		if seq >= n.FirstSeq && seq <= n.LastSeq {
			return n.Tier
		}
	}
	return ""
}

// hidden is a set of turns, by namespace, conversation and seq, that a
// broken store leaves out of search hits.
type hidden map[string]bool

func hiddenKey(ns, conv string, seq int64) string { return fmt.Sprintf("%q %q %d", ns, conv, seq) }

// filter drops the turn hits of hidden turns.
func (h hidden) filter(ns string, hits []strata.Hit) []strata.Hit {
	return slices.DeleteFunc(hits, func(x strata.Hit) bool {
		return x.Turn != nil && h[hiddenKey(ns, x.Conversation, x.Turn.Seq)]
	})
}

// oneNamespace is a store that ignores namespaces.
type oneNamespace struct{ strata.Store }

func (s oneNamespace) EnsureConversation(ctx context.Context, c strata.Conversation) (strata.Conversation, error) {
	c.Namespace = "all"
	return s.Store.EnsureConversation(ctx, c)
}
func (s oneNamespace) Conversation(ctx context.Context, _, id string) (strata.Conversation, error) {
	return s.Store.Conversation(ctx, "all", id)
}
func (s oneNamespace) Conversations(ctx context.Context, _ string) ([]strata.Conversation, error) {
	return s.Store.Conversations(ctx, "all")
}
func (s oneNamespace) ExistingExtIDs(ctx context.Context, _, conv string, ids []string) (map[string]bool, error) {
	return s.Store.ExistingExtIDs(ctx, "all", conv, ids)
}
func (s oneNamespace) AppendTurns(ctx context.Context, _, conv string, turns []strata.Turn) ([]strata.Turn, error) {
	return s.Store.AppendTurns(ctx, "all", conv, turns)
}
func (s oneNamespace) Turns(ctx context.Context, f strata.TurnFilter) ([]strata.Turn, error) {
	f.Namespace = "all"
	return s.Store.Turns(ctx, f)
}
func (s oneNamespace) PutNodes(ctx context.Context, _, conv string, nodes []strata.Node) error {
	return s.Store.PutNodes(ctx, "all", conv, nodes)
}
func (s oneNamespace) Nodes(ctx context.Context, f strata.NodeFilter) ([]strata.Node, error) {
	f.Namespace = "all"
	return s.Store.Nodes(ctx, f)
}
func (s oneNamespace) Search(ctx context.Context, q strata.SearchQuery) ([]strata.Hit, error) {
	q.Namespace = "all"
	return s.Store.Search(ctx, q)
}
func (s oneNamespace) Stats(ctx context.Context, _ string) (strata.Stats, error) {
	return s.Store.Stats(ctx, "all")
}
func (s oneNamespace) Demote(ctx context.Context, _, conv string, ids []string, to strata.Tier, at time.Time) ([]strata.Move, error) {
	return s.Store.Demote(ctx, "all", conv, ids, to, at)
}
func (s oneNamespace) Expire(ctx context.Context, _, conv string, ids []string, rule string, at time.Time, dry bool) ([]strata.Expiry, error) {
	return s.Store.Expire(ctx, "all", conv, ids, rule, at, dry)
}
func (s oneNamespace) Expiries(ctx context.Context, _, conv string) ([]strata.Expiry, error) {
	return s.Store.Expiries(ctx, "all", conv)
}

var mutants = map[string]mutant{
	"correct": {"", func(s strata.Store) strata.Store { return s }},
	"trims content": {"ContentExact", func(s strata.Store) strata.Store {
		return &store{Store: s, append: func(ctx context.Context, ns, conv string, turns []strata.Turn) ([]strata.Turn, error) {
			turns = slices.Clone(turns)
			for i := range turns {
				turns[i].Content = strings.TrimSpace(turns[i].Content)
			}
			return s.AppendTurns(ctx, ns, conv, turns)
		}}
	}},
	"keeps duplicates within a call": {"AppendTurnsDedup", func(s strata.Store) strata.Store {
		return &store{Store: s, append: func(ctx context.Context, ns, conv string, turns []strata.Turn) ([]strata.Turn, error) {
			turns = slices.Clone(turns)
			seen := map[string]bool{}
			for i := range turns {
				if seen[turns[i].ExtID] {
					turns[i].ExtID += "'"
				}
				seen[turns[i].ExtID] = true
			}
			return s.AppendTurns(ctx, ns, conv, turns)
		}}
	}},
	"keeps microseconds": {"TurnRoundTrip", func(s strata.Store) strata.Store {
		return &store{Store: s, append: func(ctx context.Context, ns, conv string, turns []strata.Turn) ([]strata.Turn, error) {
			turns = slices.Clone(turns)
			for i := range turns {
				turns[i].Time = turns[i].Time.Truncate(time.Microsecond)
			}
			return s.AppendTurns(ctx, ns, conv, turns)
		}}
	}},
	"compacts tool arguments": {"TurnRoundTrip", func(s strata.Store) strata.Store {
		return &store{Store: s, turns: func(ctx context.Context, f strata.TurnFilter) ([]strata.Turn, error) {
			turns, err := s.Turns(ctx, f)
			for i := range turns {
				for k, c := range turns[i].ToolCalls {
					var b bytes.Buffer
					if json.Compact(&b, c.Arguments) == nil {
						turns[i].ToolCalls[k].Arguments = b.Bytes()
					}
				}
			}
			return turns, err
		}}
	}},
	"ignores namespaces": {"Namespaces", func(s strata.Store) strata.Store { return oneNamespace{s} }},
	"ignores Newest": {"TurnsFilter", func(s strata.Store) strata.Store {
		return &store{Store: s, turns: func(ctx context.Context, f strata.TurnFilter) ([]strata.Turn, error) {
			f.Newest = false
			return s.Turns(ctx, f)
		}}
	}},
	"pins above 0.8 only": {"TurnsFilter", func(s strata.Store) strata.Store {
		return &store{Store: s, turns: func(ctx context.Context, f strata.TurnFilter) ([]strata.Turn, error) {
			turns, err := s.Turns(ctx, f)
			if f.PinnedOnly {
				turns = slices.DeleteFunc(turns, func(t strata.Turn) bool { return t.Importance == strata.PinnedImportance })
			}
			return turns, err
		}}
	}},
	"orders nodes by id": {"NodesFilter", func(s strata.Store) strata.Store {
		return &store{Store: s, nodes: func(ctx context.Context, f strata.NodeFilter) ([]strata.Node, error) {
			nodes, err := s.Nodes(ctx, f)
			slices.SortFunc(nodes, func(a, b strata.Node) int { return strings.Compare(a.ID, b.ID) })
			return nodes, err
		}}
	}},
	"duplicates put nodes": {"PutNodes", func(s strata.Store) strata.Store {
		n := 0
		return &store{Store: s, putNodes: func(ctx context.Context, ns, conv string, nodes []strata.Node) error {
			if err := s.PutNodes(ctx, ns, conv, nodes); err != nil {
				return err
			}
			n++
			nodes = slices.Clone(nodes)
			for i := range nodes {
				nodes[i].ID += fmt.Sprint(n)
			}
			return s.PutNodes(ctx, ns, conv, nodes)
		}}
	}},
	"forgets node conversations": {"NodesFilter", func(s strata.Store) strata.Store {
		return &store{Store: s, nodes: func(ctx context.Context, f strata.NodeFilter) ([]strata.Node, error) {
			nodes, err := s.Nodes(ctx, f)
			for i := range nodes {
				nodes[i].Conversation = ""
			}
			return nodes, err
		}}
	}},
	"ranks worst first": {"Search", func(s strata.Store) strata.Store {
		return &store{Store: s, search: func(ctx context.Context, q strata.SearchQuery) ([]strata.Hit, error) {
			hits, err := s.Search(ctx, q)
			slices.Reverse(hits)
			return hits, err
		}}
	}},
	"ignores Kind": {"Search", func(s strata.Store) strata.Store {
		return &store{Store: s, search: func(ctx context.Context, q strata.SearchQuery) ([]strata.Hit, error) {
			q.Kind = ""
			return s.Search(ctx, q)
		}}
	}},
	"ignores K": {"Search", func(s strata.Store) strata.Store {
		return &store{Store: s, search: func(ctx context.Context, q strata.SearchQuery) ([]strata.Hit, error) {
			q.K = 100
			return s.Search(ctx, q)
		}}
	}},
	"is case-sensitive": {"Search", func(s strata.Store) strata.Store {
		return &store{Store: s, search: func(ctx context.Context, q strata.SearchQuery) ([]strata.Hit, error) {
			if strings.ToLower(q.Text) != q.Text {
				return nil, nil
			}
			return s.Search(ctx, q)
		}}
	}},
	"matches whole words only": {"Search", func(s strata.Store) strata.Store {
		return &store{Store: s, search: func(ctx context.Context, q strata.SearchQuery) ([]strata.Hit, error) {
			hits, err := s.Search(ctx, q)
			re := regexp.MustCompile(`(?i)\b` + regexp.QuoteMeta(q.Text) + `\b`)
			return slices.DeleteFunc(hits, func(h strata.Hit) bool { return h.Turn != nil && !re.MatchString(h.Turn.Content) }), err
		}}
	}},
	"parses FTS syntax": {"SearchSyntax", func(s strata.Store) strata.Store {
		return &store{Store: s, search: func(ctx context.Context, q strata.SearchQuery) ([]strata.Hit, error) {
			if strings.Count(q.Text, `"`)%2 == 1 || strings.Contains(q.Text, "(") {
				return nil, errors.New("fts5: syntax error")
			}
			return s.Search(ctx, q)
		}}
	}},
	"errors without words": {"SearchNoWords", func(s strata.Store) strata.Store {
		return &store{Store: s, search: func(ctx context.Context, q strata.SearchQuery) ([]strata.Hit, error) {
			if strings.TrimSpace(q.Text) == "" {
				return nil, strata.Errorf(strata.EINVALID, "empty query")
			}
			return s.Search(ctx, q)
		}}
	}},
	"miscounts turns": {"Stats", func(s strata.Store) strata.Store {
		return &store{Store: s, stats: func(ctx context.Context, ns string) (strata.Stats, error) {
			st, err := s.Stats(ctx, ns)
			if st.Turns > 0 {
				st.Turns++
			}
			return st, err
		}}
	}},
	"loses the not-found code": {"ConversationNotFound", func(s strata.Store) strata.Store {
		return &store{Store: s, conv: func(ctx context.Context, ns, id string) (strata.Conversation, error) {
			c, err := s.Conversation(ctx, ns, id)
			if err != nil {
				err = errors.New(err.Error())
			}
			return c, err
		}}
	}},
	"returns seqs read before writing": {"ConcurrentAppend", func(s strata.Store) strata.Store {
		return &store{Store: s, append: func(ctx context.Context, ns, conv string, turns []strata.Turn) ([]strata.Turn, error) {
			c, err := s.Conversation(ctx, ns, conv)
			if err != nil {
				return nil, err
			}
			time.Sleep(time.Millisecond) // widen the window
			got, err := s.AppendTurns(ctx, ns, conv, turns)
			for i := range got {
				got[i].Seq = c.Turns + int64(i) + 1
			}
			return got, err
		}}
	}},
	"forgets the content of warm turns": {"TiersWarm", func(s strata.Store) strata.Store {
		return &store{Store: s, turns: func(ctx context.Context, f strata.TurnFilter) ([]strata.Turn, error) {
			ts, err := s.Turns(ctx, f)
			ns, _ := s.Nodes(ctx, strata.NodeFilter{Namespace: f.Namespace, Conversation: f.Conversation, Level: 1,
				Tiers: []strata.Tier{strata.TierWarm}})
			for i := range ts {
				for _, n := range ns {
					if ts[i].Seq >= n.FirstSeq && ts[i].Seq <= n.LastSeq && !ts[i].Pinned() {
						ts[i].Content = ""
					}
				}
			}
			return ts, err
		}}
	}},
	"expires pinned turns": {"TiersExpire", func(s strata.Store) strata.Store {
		return &store{Store: s, turns: func(ctx context.Context, f strata.TurnFilter) ([]strata.Turn, error) {
			ts, err := s.Turns(ctx, f)
			ns, _ := s.Nodes(ctx, strata.NodeFilter{Namespace: f.Namespace, Conversation: f.Conversation, Level: 1,
				Tiers: []strata.Tier{strata.TierExpired}})
			return slices.DeleteFunc(ts, func(t strata.Turn) bool {
				for _, n := range ns {
					if t.Seq >= n.FirstSeq && t.Seq <= n.LastSeq {
						return true
					}
				}
				return false
			}), err
		}}
	}},
	"keeps the policy on reset": {"ResetPyramidHot", func(s strata.Store) strata.Store {
		return &store{Store: s, reset: func(ctx context.Context, ns, conv, policy string) (int, error) {
			c, err := s.Conversation(ctx, ns, conv)
			if err != nil {
				return 0, err
			}
			return s.ResetPyramid(ctx, ns, conv, c.Policy)
		}}
	}},
	"resets over expired spans": {"ResetPyramidExpired", func(s strata.Store) strata.Store {
		return &store{Store: s, reset: func(ctx context.Context, ns, conv, policy string) (int, error) {
			n, err := s.ResetPyramid(ctx, ns, conv, policy)
			if strata.ErrorCode(err) == strata.ECONFLICT {
				return 0, nil
			}
			return n, err
		}}
	}},
	"leaves restored cold turns out of the index": {"ResetPyramidTiers", func(s strata.Store) strata.Store {
		h := hidden{}
		return &store{Store: s, reset: func(ctx context.Context, ns, conv, policy string) (int, error) {
			turns, _ := s.Turns(ctx, strata.TurnFilter{Namespace: ns, Conversation: conv})
			for _, t := range turns {
				if !t.Pinned() && spanTier(ctx, s, ns, conv, t.Seq) == strata.TierCold {
					h[hiddenKey(ns, conv, t.Seq)] = true
				}
			}
			return s.ResetPyramid(ctx, ns, conv, policy)
		}, search: func(ctx context.Context, q strata.SearchQuery) ([]strata.Hit, error) {
			hits, err := s.Search(ctx, q)
			return h.filter(q.Namespace, hits), err
		}}
	}},
	"hides cold turns from search": {"TiersCold", func(s strata.Store) strata.Store {
		return &store{Store: s, search: func(ctx context.Context, q strata.SearchQuery) ([]strata.Hit, error) {
			hits, err := s.Search(ctx, q)
			return slices.DeleteFunc(hits, func(h strata.Hit) bool {
				return h.Turn != nil && !h.Turn.Pinned() && spanTier(ctx, s, q.Namespace, h.Conversation, h.Turn.Seq) == strata.TierCold
			}), err
		}}
	}},
	"leaves turns pinned in cold spans out of the index": {"SetImportanceCold", func(s strata.Store) strata.Store {
		h := hidden{}
		return &store{Store: s, setImp: func(ctx context.Context, ns, conv string, seq int64, importance float64) (strata.Turn, error) {
			if spanTier(ctx, s, ns, conv, seq) == strata.TierCold {
				h[hiddenKey(ns, conv, seq)] = importance >= strata.PinnedImportance
			}
			return s.SetImportance(ctx, ns, conv, seq, importance)
		}, search: func(ctx context.Context, q strata.SearchQuery) ([]strata.Hit, error) {
			hits, err := s.Search(ctx, q)
			return h.filter(q.Namespace, hits), err
		}}
	}},
	"never ends a claim": {"Claims", func(s strata.Store) strata.Store {
		return &store{Store: s, claim: func(ctx context.Context, key, holder string, now, until time.Time) (bool, error) {
			// Every claim is taken to last for ever: an ended one is never
			// taken over.
			return s.Claim(ctx, key, holder, now, until.Add(1000*time.Hour))
		}}
	}},
	"ends a claim a second late": {"Claims", func(s strata.Store) strata.Store {
		return &store{Store: s, claim: func(ctx context.Context, key, holder string, now, until time.Time) (bool, error) {
			return s.Claim(ctx, key, holder, now, until.Add(time.Second))
		}}
	}},
	"releases any holder's claim": {"ClaimsRelease", func(s strata.Store) strata.Store {
		held := map[string]string{}
		return &store{Store: s,
			claim: func(ctx context.Context, key, holder string, now, until time.Time) (bool, error) {
				ok, err := s.Claim(ctx, key, holder, now, until)
				if ok {
					held[key] = holder
				}
				return ok, err
			},
			release: func(ctx context.Context, key, _ string) error {
				return s.Release(ctx, key, held[key])
			}}
	}},
	"checks then takes a claim in two steps": {"ClaimsConcurrent", func(s strata.Store) strata.Store {
		return &store{Store: s, claim: func(ctx context.Context, key, holder string, now, until time.Time) (bool, error) {
			// Check: the key is free if a probe may take it (all probes
			// share one holder, so they never refuse each other).
			ok, err := s.Claim(ctx, key, "probe", now, now.Add(time.Nanosecond))
			if err != nil || !ok {
				return false, err
			}
			if err := s.Release(ctx, key, "probe"); err != nil {
				return false, err
			}
			// Then write it, answering yes as a store whose write is not
			// conditional would, racing the others that found it free too.
			time.Sleep(20 * time.Millisecond)
			_, err = s.Claim(ctx, key, holder, now, until)
			return err == nil, err
		}}
	}},
	"changes only the row of an unpinned warm turn": {"SetImportanceWarm", func(s strata.Store) strata.Store {
		return &store{Store: s, setImp: func(ctx context.Context, ns, conv string, seq int64, importance float64) (strata.Turn, error) {
			ts, err := s.Turns(ctx, strata.TurnFilter{Namespace: ns, Conversation: conv, Seqs: []int64{seq}})
			if err == nil && len(ts) == 1 && !ts[0].Pinned() && importance < strata.PinnedImportance &&
				spanTier(ctx, s, ns, conv, seq) == strata.TierWarm {
				// The row changes, the block keeps the old importance.
				t := ts[0]
				t.Importance = importance
				return t, nil
			}
			return s.SetImportance(ctx, ns, conv, seq, importance)
		}}
	}},
	"never supersedes": {"LearningsSupersede", func(s strata.Store) strata.Store {
		return &store{Store: s, learned: func(ctx context.Context, f strata.LearningFilter) ([]strata.Learning, error) {
			// Superseded learnings read as the auto ones they were.
			ls, err := s.Learnings(ctx, f)
			for i := range ls {
				if ls[i].Status == strata.LearningSuperseded {
					ls[i].Status, ls[i].SupersededBy = strata.LearningAuto, 0
				}
			}
			return ls, err
		}}
	}},
	"compares learnings case-sensitively": {"LearningsRepeats", func(s strata.Store) strata.Store {
		return &store{Store: s, learn: func(ctx context.Context, ns, conv string, ls []strata.Learning) ([]strata.Learning, error) {
			ls = slices.Clone(ls)
			for i := range ls {
				active, _ := s.Learnings(ctx, strata.LearningFilter{Namespace: ns, Conversation: conv, Subject: ls[i].Subject,
					Statuses: []string{strata.LearningAuto, strata.LearningConfirmed}})
				for _, a := range active {
					if a.Text != ls[i].Text && strings.EqualFold(a.Text, ls[i].Text) {
						ls[i].Text += "\u200b" // a mark the normalization keeps: no longer a repeat
					}
				}
			}
			return s.AddLearnings(ctx, ns, conv, ls)
		}}
	}},
	"changes superseded learnings": {"LearningsSetStatus", func(s strata.Store) strata.Store {
		return &store{Store: s, setLearn: func(ctx context.Context, ns string, id int64, status string) (strata.Learning, error) {
			ls, err := s.Learnings(ctx, strata.LearningFilter{Namespace: ns, IDs: []int64{id}})
			if err == nil && len(ls) == 1 && ls[0].Status == strata.LearningSuperseded {
				ls[0].Status = status
				return ls[0], nil
			}
			return s.SetLearningStatus(ctx, ns, id, status)
		}}
	}},
	"ignores the learning limit": {"LearningsFilter", func(s strata.Store) strata.Store {
		return &store{Store: s, learned: func(ctx context.Context, f strata.LearningFilter) ([]strata.Learning, error) {
			f.Limit = 0
			return s.Learnings(ctx, f)
		}}
	}},
	"adds learnings one by one": {"LearningsInvalid", func(s strata.Store) strata.Store {
		return &store{Store: s, learn: func(ctx context.Context, ns, conv string, ls []strata.Learning) ([]strata.Learning, error) {
			var out []strata.Learning
			for _, l := range ls {
				got, err := s.AddLearnings(ctx, ns, conv, []strata.Learning{l})
				if err != nil {
					return nil, err
				}
				out = append(out, got...)
			}
			return out, nil
		}}
	}},
}

// TestMutantChild runs the suite against the mutant named by
// $STORETEST_MUTANT; TestMutants runs it in child processes.
func TestMutantChild(t *testing.T) {
	name := os.Getenv("STORETEST_MUTANT")
	if name == "" {
		t.Skip("run by TestMutants")
	}
	m, ok := mutants[name]
	if !ok {
		t.Fatalf("no mutant %q", name)
	}
	storetest.Run(t, func(t *testing.T) strata.Store {
		s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "t.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return m.wrap(s)
	})
}

func TestMutants(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process per mutant")
	}
	for name, m := range mutants {
		t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) {
			t.Parallel()
			run := "^TestMutantChild$/^" + m.subtest + "$"
			if m.subtest == "" {
				run = "^TestMutantChild$/^(AppendTurnsDedup|TurnRoundTrip|Search|Namespaces|ConcurrentAppend)$"
			}
			cmd := exec.Command(os.Args[0], "-test.run="+run, "-test.v", "-test.count=1")
			cmd.Env = append(os.Environ(), "STORETEST_MUTANT="+name)
			out, err := cmd.CombinedOutput()
			if m.subtest == "" {
				if err != nil {
					t.Fatalf("the suite fails the correct store: %v\n%s", err, out)
				}
				return
			}
			if err == nil {
				t.Fatalf("the suite passes a store that %s; want subtest %s to fail\n%s", name, m.subtest, out)
			}
			if !strings.Contains(string(out), "--- FAIL: TestMutantChild/"+m.subtest+" ") {
				t.Errorf("a store that %s failed, but not in subtest %s:\n%s", name, m.subtest, out)
			}
		})
	}
}
