package strata

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// This file has a configured model read the learnings of a span's turns
// in the structure the offline rules give (learnextract.go): who a fact is
// about, an attribute, a value, the date its time words name, and the
// turns it came from. The call goes through the summaries' machinery
// (modelPass.complete: timeout, retries with backoff, the dead endpoint
// guard) and is recorded as a model call of the span's node, so that cost
// reports count it. A call that fails, or a reply that holds no usable
// fact, leaves the span to the offline rules.

// learnSystem is the instruction of a learnings call.
const learnSystem = `You extract durable facts from a conversation. Each fact is one clause about a named person or thing, never "I", "me", "my", "we", "you" or "your": use the speaker's or the addressee's name. Leave out small talk, greetings, questions, compliments and opinions about the other speaker. Resolve relative times ("yesterday", "last week", "next month") against the time of the turn the fact came from.
Answer with JSON only: {"facts": [{"about": "Caroline", "attribute": "lives in", "value": "Boston", "text": "Caroline moved to Boston in April 2023.", "when": "2023-04-01..2023-04-30", "turns": [12]}]}
"attribute" is short and normalized ("lives in", "works at", "is planning to <verb>", "age", "has <things>", "relationship", "favorite <thing>", or the main verb); "when" is "" or a date 2006-01-02 or two joined by ".."; "turns" are the numbers of the turns the fact came from.`

// modelFact is one fact of a learnings reply.
type modelFact struct {
	About     string  `json:"about"`
	Attribute string  `json:"attribute"`
	Value     string  `json:"value"`
	Text      string  `json:"text"`
	When      string  `json:"when"`
	Turns     []int64 `json:"turns"`
}

// supersedingAttributes are the attributes of a model's facts that key
// supersession by subject and attribute, as stateRules do offline; a fact
// of any other attribute is keyed by its text.
var supersedingAttributes = []string{"lives in", "works at", "is planning to", "age", "has", "relationship", "favorite", "job", "name", "birthday"}

// modelLearnings asks the model for the learnings of ts, the turns of node
// n. It returns the learnings and the calls made; with an error, or none
// usable, the caller falls back to the offline rules.
func (lr *learner) modelLearnings(ctx context.Context, n Node, ts []Turn, loc *time.Location, g *endpointGuard) ([]Learning, []Call, error) {
	var b strings.Builder
	bySeq := map[int64]Turn{}
	for _, t := range ts {
		if !learnableTurn(t) {
			continue
		}
		bySeq[t.Seq] = t
		fmt.Fprintf(&b, "[turn %d, %s] %s: %s\n", t.Seq, t.Time.In(loc).Format("Monday 2006-01-02 15:04"), t.Speaker(), t.Content)
	}
	if len(bySeq) == 0 {
		return nil, nil, nil
	}
	model := lr.llm.Model
	if lv, ok := lr.llm.Models["learnings"]; ok {
		model = lv
	}
	req := CompletionRequest{Model: model, System: learnSystem, User: b.String(),
		MaxTokens: min(4096, 80*len(bySeq)+200)}
	comp, calls, err := lr.model.complete(ctx, req, lr.llm.Timeout, n, 0, g)
	if err != nil {
		return nil, calls, err
	}
	ls, err := parseModelFacts(comp.Text, bySeq)
	if err != nil {
		if len(calls) > 0 {
			calls[len(calls)-1].Outcome = Storable("learnings: " + err.Error())
		}
		return nil, calls, err
	}
	return ls, calls, nil
}

// parseModelFacts reads a learnings reply. Facts without a text or an
// about, or whose turns are none of the span's, are left out; a When that
// is not a date or range is dropped, not the fact.
func parseModelFacts(text string, bySeq map[int64]Turn) ([]Learning, error) {
	text = strings.TrimSpace(text)
	if i, j := strings.Index(text, "{"), strings.LastIndex(text, "}"); i >= 0 && j > i {
		text = text[i : j+1]
	}
	var reply struct {
		Facts []modelFact `json:"facts"`
	}
	if err := json.Unmarshal([]byte(text), &reply); err != nil {
		return nil, fmt.Errorf("the reply is not the JSON asked for: %v", err)
	}
	var out []Learning
	for _, f := range reply.Facts {
		f.About, f.Text = strings.TrimSpace(Storable(f.About)), strings.TrimSpace(Storable(f.Text))
		if f.About == "" || NormalizeLearningText(f.Text) == "" {
			continue
		}
		var src []LearningSource
		for _, s := range f.Turns {
			if t, ok := bySeq[s]; ok {
				src = append(src, LearningSource{Seq: s, ExtID: t.ExtID})
			}
		}
		if len(src) == 0 {
			continue
		}
		if !checkLearningWhen(f.When) {
			f.When = ""
		}
		attr := strings.ToLower(strings.Join(strings.Fields(Storable(f.Attribute)), " "))
		subject := strings.ToLower(f.About) + "|" + NormalizeLearningText(f.Text)
		for _, a := range supersedingAttributes {
			if attr == a || strings.HasPrefix(attr, a+" ") {
				subject = strings.ToLower(f.About) + "|" + attr
				break
			}
		}
		l := Learning{Subject: subject, Text: f.Text, About: f.About, Attribute: attr, Value: strings.TrimSpace(Storable(f.Value)),
			When: f.When, Sources: src, FirstSeq: src[0].Seq, LastSeq: src[0].Seq}
		for _, s := range src {
			l.FirstSeq, l.LastSeq = min(l.FirstSeq, s.Seq), max(l.LastSeq, s.Seq)
		}
		out = append(out, l)
	}
	if len(out) == 0 && len(reply.Facts) > 0 {
		return nil, fmt.Errorf("none of the reply's %d facts names who it is about, a text and a turn of the span", len(reply.Facts))
	}
	return out, nil
}
