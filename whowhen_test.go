package strata_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/extractive"
	"github.com/strata-memory/strata/formats"
)

// genericReply is a model that says who and when of nothing.
func genericReply(_ int, req strata.CompletionRequest) (strata.Completion, error) {
	return strata.Completion{Text: "SUMMARY:\nThe two friends talked about their lives.\nFACTS:\n- They talked.\nTHEMES: life, friends",
		FinishReason: "stop"}, nil
}

// locomoFile writes a LoCoMo sample of two speakers over twelve sessions,
// three days apart, each of twenty turns naming places, numbers and
// dates, and returns its path.
func locomoFile(t *testing.T) string {
	t.Helper()
	conv := map[string]any{"speaker_a": "Caroline", "speaker_b": "Melanie"}
	at := time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC)
	things := []string{"the pottery class at Clay Corner", "a 5 mile run along the Charles River", "the adoption agency in Boston",
		"a camping trip to Lake Tahoe", "the LGBTQ support group", "painting a sunrise over the lake", "the 3 kids' school play"}
	for s := 1; s <= 12; s++ {
		var turns []map[string]any
		for i := range 20 {
			speaker := []string{"Caroline", "Melanie"}[i%2]
			text := fmt.Sprintf("I keep thinking about %s, it was so good for me. We should plan session %d's follow-up before %s!",
				things[(s+i)%len(things)], s, at.AddDate(0, 0, 10).Format("2 January"))
			turns = append(turns, map[string]any{"speaker": speaker, "dia_id": fmt.Sprintf("D%d:%d", s, i+1), "text": text})
		}
		conv[fmt.Sprintf("session_%d", s)] = turns
		conv[fmt.Sprintf("session_%d_date_time", s)] = at.Format("3:04 pm") + " on " + at.Format("2 January, 2006")
		at = at.AddDate(0, 0, 3).Add(time.Hour)
	}
	b, err := json.Marshal([]any{map[string]any{"sample_id": "conv-synth", "conversation": conv, "qa": []any{}}})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "locomo.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// spanDays are the ways a summary may name a day of a node's span.
func spanDays(n strata.Node) []string {
	var out []string
	for d := n.Start.UTC().Truncate(24 * time.Hour); !d.After(n.End.UTC()); d = d.AddDate(0, 0, 1) {
		out = append(out, d.Format("2 Jan 2006"), d.Format("2 January 2006"), d.Format("January 2, 2006"), d.Format(time.DateOnly))
	}
	return out
}

// TestModelKeepsWhoAndWhen: a model whose summaries name no one and no
// date ("the two friends talked about their lives") gets the span's
// speakers and a date of its span appended under Mentions, within the
// level's budget, on every node of a LoCoMo conversation under the
// sessions, calendar and chunks presets. STRATA_LOCOMO names locomo-dev.json to run it over its
// first conversation instead of a generated one.
func TestModelKeepsWhoAndWhen(t *testing.T) {
	path := os.Getenv("STRATA_LOCOMO")
	if path == "" {
		path = locomoFile(t)
	}
	for _, policy := range []string{"sessions", "calendar", "chunks"} {
		t.Run(policy, func(t *testing.T) { checkWhoAndWhen(t, path, policy) })
	}
}

func checkWhoAndWhen(t *testing.T, path, policy string) {
	ctx := context.Background()
	st := openNewStore(t, filepath.Join(t.TempDir(), "s.db"))
	defer st.Close()
	model := &fakeModel{answer: genericReply}
	m, err := strata.New(strata.Config{Store: st, Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New(),
		LLM: strata.LLMOptions{Completer: model}, Tiers: &strata.TierPolicy{Off: true},
		Now: func() time.Time { return time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := formats.Open(formats.LoCoMo, path, f)
	if err != nil {
		t.Fatal(err)
	}
	var conv string
	if _, err := m.ImportWith(ctx, strata.ImportOptions{Policy: policy}, func() (string, strata.Turn, error) {
		for {
			rec, err := r.Next()
			if err != nil {
				return "", strata.Turn{}, err
			}
			if conv == "" {
				conv = rec.Conversation
			}
			if rec.Conversation == conv { // the first conversation only
				return rec.Conversation, rec.Turn, nil
			}
		}
	}); err != nil && err != io.EOF {
		t.Fatal(err)
	}
	if _, err := m.SummarizePending(ctx, strata.PendingOptions{}); err != nil {
		t.Fatal(err)
	}
	p, err := m.PolicyOf(ctx, conv)
	if err != nil {
		t.Fatal(err)
	}
	nodes := allNodes(t, m, conv)
	lost := 0
	for _, n := range nodes {
		if n.Method != strata.MethodLLM {
			t.Fatalf("node %s: method %s, fallback %q", n.ID, n.Method, n.Fallback)
		}
		turns, err := m.Store().Turns(ctx, strata.TurnFilter{Namespace: m.Namespace(), Conversation: conv, FromSeq: n.FirstSeq, ToSeq: n.LastSeq})
		if err != nil {
			t.Fatal(err)
		}
		who := false
		for _, tr := range turns {
			who = who || strings.Contains(n.Summary, tr.Speaker())
		}
		when := false
		for _, d := range spanDays(n) {
			when = when || strings.Contains(n.Summary, d)
		}
		if !who || !when {
			lost++
			if lost <= 3 {
				t.Errorf("node %s (level %d, %s .. %s) names a speaker: %v, a date: %v\n%s", n.ID, n.Level,
					n.Start.Format(time.DateOnly), n.End.Format(time.DateOnly), who, when, n.Summary)
			}
		}
		if budget := p.Levels[n.Level-1].Budget; n.Tokens > budget || n.Status != strata.StatusOK {
			t.Errorf("node %s: %d tokens for a budget of %d, status %s", n.ID, n.Tokens, budget, n.Status)
		}
	}
	t.Logf("%s, %s policy: %d of %d model summaries lack a speaker or a date of their span", conv, policy, lost, len(nodes))
}

// TestModelMentionsWithinBudget: when the Mentions would take a reply
// over its budget, identifiers are dropped, the lowest ranked first; the
// speakers and the date are kept.
func TestModelMentionsWithinBudget(t *testing.T) {
	// About 85 of the micro level's 100 tokens, naming no one.
	long := "SUMMARY:\n" + strings.Repeat("They went over the plan step by step. ", 9)
	model := &fakeModel{answer: func(int, strata.CompletionRequest) (strata.Completion, error) {
		return strata.Completion{Text: long, FinishReason: "stop"}, nil
	}}
	m := newLLMMemory(t, filepath.Join(t.TempDir(), "s.db"), model, strata.LLMOptions{})
	ctx := context.Background()
	turns := identTurns()[:10]
	if _, err := m.Ingest(ctx, strata.Batch{Conversation: "c", Turns: turns}); err != nil {
		t.Fatal(err)
	}
	if res, err := m.SummarizePending(ctx, strata.PendingOptions{}); err != nil || res.Summarized != 1 || res.Calls != 1 {
		t.Fatalf("result %+v, %v", res, err)
	}
	n := allNodes(t, m, "c")[0]
	if n.Method != strata.MethodLLM || n.Tokens > 100 || n.Status != strata.StatusOK {
		t.Fatalf("node: method %s, %d tokens, status %s:\n%s", n.Method, n.Tokens, n.Status, n.Summary)
	}
	_, mentions, ok := strings.Cut(n.Summary, "\nMentions: ")
	if !ok {
		t.Fatalf("no Mentions:\n%s", n.Summary)
	}
	got := strings.Split(mentions, "; ")
	date := n.Start.UTC().Format("2 Jan 2006")
	if !strings.Contains(mentions, turns[0].Speaker()) || !strings.Contains(mentions, turns[1].Speaker()) || !strings.Contains(mentions, date) {
		t.Errorf("Mentions %q lack the speakers %s, %s or the date %s", mentions, turns[0].Speaker(), turns[1].Speaker(), date)
	}
	// The extractive pass kept more identifiers than fit: some were dropped.
	ext, err := extractive.New().Summarize(ctx, strata.SummaryRequest{Level: 1, Budget: 100, Turns: allTurns(t, m, "c"),
		Tokenizer: strata.CharEstimator{}, WantIdentifiers: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) >= 3+len(ext.Identifiers) {
		t.Errorf("Mentions %q keep all %d identifiers %q: the budget did not trim them", mentions, len(ext.Identifiers), ext.Identifiers)
	}
	t.Logf("%d tokens: %d of %d identifiers kept besides who and when", n.Tokens, len(got)-3, len(ext.Identifiers))
}

func allTurns(t *testing.T, m *strata.Memory, conv string) []strata.Turn {
	t.Helper()
	ts, err := m.Store().Turns(context.Background(), strata.TurnFilter{Namespace: m.Namespace(), Conversation: conv})
	if err != nil {
		t.Fatal(err)
	}
	return ts
}
