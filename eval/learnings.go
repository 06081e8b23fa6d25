package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/formats"
)

// LearningsOptions say what RunLearnings measures. Zero fields take the
// defaults.
type LearningsOptions struct {
	// Samples are the sample ids to import and measure; empty: every
	// sample of the file. An id the file does not hold is an error.
	Samples []string
	// Policy is the pyramid policy of the imported conversations; "" is
	// the Memory's default.
	Policy string
}

// LearningsReport measures the learnings of a LoCoMo file's conversations
// against the facts its authors listed per session (`observation`, each
// with the turn it came from).
type LearningsReport struct {
	File    string         `json:"file"`
	Samples []LearningsRow `json:"samples"` // one per sample measured, in the file's order
	Overall LearningsRow   `json:"overall"` // all of them pooled
	Seconds float64        `json:"seconds"`
}

// LearningsRow is the measure of one conversation, or of several pooled.
type LearningsRow struct {
	Sample string `json:"sample,omitempty"` // "" in the overall row
	Turns  int    `json:"turns"`
	// CitedTurns counts the distinct turns an observation cites.
	CitedTurns int `json:"cited_turns"`
	// Observations counts the observations that cite a turn of the
	// conversation; Covered those of them with a learning from one of
	// their turns.
	Observations int `json:"observations"`
	Covered      int `json:"covered"`
	// Learnings counts every learning but the rejected ones (superseded
	// ones count: they were learned); FromCited those with a source turn
	// an observation cites; Unplaced those whose source turn could not be
	// told (they count as not from a cited turn).
	Learnings int `json:"learnings"`
	FromCited int `json:"from_cited"`
	Unplaced  int `json:"unplaced"`
	// Personal counts the learnings whose text still speaks in the first
	// or second person (I, me, my, we, our, you, your, ...).
	Personal int `json:"personal"`
	// Relative counts the learnings whose text holds a relative time
	// expression (yesterday, last week, next month, N days ago, ...);
	// Resolved those of them that carry the date it names.
	Relative int `json:"relative"`
	Resolved int `json:"resolved"`
	// The shares, 0 to 1: FromCited/Learnings, Covered/Observations,
	// Personal/Learnings, Resolved/Relative (1 when none is relative).
	FromCitedShare float64 `json:"from_cited_share"`
	CoveredShare   float64 `json:"covered_share"`
	PersonalShare  float64 `json:"personal_share"`
	ResolvedShare  float64 `json:"resolved_share"`
}

func (r *LearningsRow) add(x LearningsRow) {
	r.Turns += x.Turns
	r.CitedTurns += x.CitedTurns
	r.Observations += x.Observations
	r.Covered += x.Covered
	r.Learnings += x.Learnings
	r.FromCited += x.FromCited
	r.Unplaced += x.Unplaced
	r.Personal += x.Personal
	r.Relative += x.Relative
	r.Resolved += x.Resolved
}

func (r *LearningsRow) shares() {
	r.FromCitedShare = share(int64(r.FromCited), int64(r.Learnings))
	r.CoveredShare = share(int64(r.Covered), int64(r.Observations))
	r.PersonalShare = share(int64(r.Personal), int64(r.Learnings))
	r.ResolvedShare = 1
	if r.Relative > 0 {
		r.ResolvedShare = share(int64(r.Resolved), int64(r.Relative))
	}
}

// observationSample is the part of a LoCoMo sample RunLearnings reads
// itself: the observations, per session and speaker, each a fact and the
// turn (or turns) it came from.
type observationSample struct {
	ID          json.RawMessage                           `json:"sample_id"`
	Observation map[string]map[string][][]json.RawMessage `json:"observation"`
}

// personalWords are the words of the first and second person.
var personalWords = regexp.MustCompile(`(?i)\b(?:i|me|my|mine|myself|we|us|our|ours|ourselves|you|your|yours|yourself|yourselves)\b|\b(?i:i'm|i've|i'd|i'll|you're|you've|you'd|you'll|we're|we've)\b`)

// relativeTime finds the relative time expressions a learning must not
// keep unresolved.
var relativeTime = regexp.MustCompile(`(?i)\b(?:yesterday|today|tonight|tomorrow|last night|this (?:morning|afternoon|evening|week|weekend|month|year)|(?:last|next|past) (?:week|weekend|month|year|monday|tuesday|wednesday|thursday|friday|saturday|sunday)|(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|a couple of|a few|few|\d+) (?:days?|weeks?|months?|years?) ago)\b`)

// PersonalText reports whether a learning's text speaks in the first or
// second person.
func PersonalText(s string) bool { return personalWords.MatchString(s) }

// RelativeTimeText reports whether s holds a relative time expression
// ("yesterday", "last week", "next month", "three days ago").
func RelativeTimeText(s string) bool { return relativeTime.MatchString(s) }

// RunLearnings imports file's samples into m (meant to be over a fresh
// store), lets Memory.Learn read them, and measures the learnings against
// the file's observations. A learning's turns are its Sources; a learning
// without any is placed in the turn of its node's span whose text holds
// the most of its words.
func RunLearnings(ctx context.Context, m *strata.Memory, file string, o LearningsOptions) (LearningsReport, error) {
	start := time.Now()
	rep := LearningsReport{File: file}
	data, err := os.ReadFile(file)
	if err != nil {
		return rep, err
	}
	var samples []observationSample
	if err := decodeFile(file, data, &samples, "a LoCoMo file with observations (observation: {session: {speaker: [[fact, turn]...]}})"); err != nil {
		return rep, err
	}
	want := map[string]bool{}
	for _, s := range o.Samples {
		want[s] = true
	}
	ids, obs := observations(samples, want)
	for _, s := range o.Samples {
		if !slices.Contains(ids, s) {
			return rep, fmt.Errorf("%s: no sample %q", file, s)
		}
	}
	if len(obs) == 0 {
		return rep, fmt.Errorf("%s: no observation cites a turn: learnings are measured against LoCoMo's observation lists", file)
	}
	if err := importSamples(ctx, m, file, data, o.Policy, want); err != nil {
		return rep, err
	}
	for _, id := range ids {
		if _, err := m.Rollup(ctx, id); err != nil {
			return rep, fmt.Errorf("%s: rollup of %s: %w", file, id, err)
		}
		if _, err := m.Learn(ctx, id); err != nil {
			return rep, fmt.Errorf("%s: learnings of %s: %w", file, id, err)
		}
		row, err := measureLearnings(ctx, m, id, obs[id])
		if err != nil {
			return rep, fmt.Errorf("%s: %s: %w", file, id, err)
		}
		row.shares()
		rep.Samples = append(rep.Samples, row)
		rep.Overall.add(row)
	}
	rep.Overall.shares()
	rep.Seconds = time.Since(start).Seconds()
	return rep, nil
}

// observations returns the ids of the samples wanted (all if want is
// empty), in file order, and by sample the turns each of its observations
// cites; observations citing none are left out.
func observations(samples []observationSample, want map[string]bool) ([]string, map[string][][]string) {
	var ids []string
	obs := map[string][][]string{}
	for _, s := range samples {
		id := jsonID(s.ID)
		if len(want) > 0 && !want[id] {
			continue
		}
		ids = append(ids, id)
		for _, session := range s.Observation {
			for _, facts := range session {
				for _, f := range facts {
					var turns []string
					for _, raw := range f[min(1, len(f)):] {
						turns = append(turns, evidenceIDs(raw)...)
					}
					if len(turns) > 0 {
						obs[id] = append(obs[id], turns)
					}
				}
			}
		}
	}
	return ids, obs
}

// importSamples imports into m the conversations of the file's samples
// wanted (all if want is empty).
func importSamples(ctx context.Context, m *strata.Memory, file string, data []byte, policy string, want map[string]bool) error {
	r, err := formats.Open(formats.LoCoMo, file, bytes.NewReader(data))
	if err != nil {
		return err
	}
	_, err = m.ImportWith(ctx, strata.ImportOptions{Policy: policy}, func() (string, strata.Turn, error) {
		for {
			rec, err := r.Next()
			if err != nil {
				return "", strata.Turn{}, err
			}
			if len(want) == 0 || want[rec.Conversation] {
				return rec.Conversation, rec.Turn, nil
			}
		}
	})
	if err != nil {
		var pe *formats.ParseError
		if errors.As(err, &pe) {
			return err
		}
		return fmt.Errorf("%s: import: %w", file, err)
	}
	return nil
}

// measureLearnings measures the learnings of conversation conv against
// its observations (each the ext ids of the turns it cites).
func measureLearnings(ctx context.Context, m *strata.Memory, conv string, obs [][]string) (LearningsRow, error) {
	row := LearningsRow{Sample: conv}
	var turns []strata.Turn
	for from := int64(1); from > 0; {
		page, next, err := m.Turns(ctx, conv, from, 0, strata.TurnsPageLimit)
		if err != nil {
			return row, err
		}
		turns = append(turns, page...)
		from = next
	}
	row.Turns = len(turns)
	extOf := make(map[int64]string, len(turns))
	for _, t := range turns {
		extOf[t.Seq] = t.ExtID
	}
	cited := map[string]bool{}
	for _, o := range obs {
		for _, id := range o {
			cited[id] = true
		}
	}
	row.CitedTurns = len(cited)
	ls, err := m.Learnings(ctx, strata.LearningFilter{Conversation: conv})
	if err != nil {
		return row, err
	}
	learned := map[string]bool{} // ext ids of the turns learnings came from
	for _, l := range ls {
		if l.Status == strata.LearningRejected {
			continue
		}
		row.Learnings++
		var from []string
		for _, s := range l.Sources {
			if s.ExtID != "" {
				from = append(from, s.ExtID)
			} else if id := extOf[s.Seq]; id != "" {
				from = append(from, id)
			}
		}
		if len(l.Sources) == 0 {
			if id := placeLearning(l, turns); id != "" {
				from = append(from, id)
			}
		}
		if len(from) == 0 {
			row.Unplaced++
		}
		hit := false
		for _, id := range from {
			learned[id] = true
			hit = hit || cited[id]
		}
		if hit {
			row.FromCited++
		}
		if PersonalText(l.Text) {
			row.Personal++
		}
		if RelativeTimeText(l.Text) {
			row.Relative++
			if l.When != "" {
				row.Resolved++
			}
		}
	}
	for _, o := range obs {
		row.Observations++
		for _, id := range o {
			if learned[id] {
				row.Covered++
				break
			}
		}
	}
	return row, nil
}

// placeLearning returns the ext id of the turn of l's span whose words
// hold the most of l's text's words (the first such turn), or "" if none
// shares a word with it.
func placeLearning(l strata.Learning, turns []strata.Turn) string {
	words := wordSet(l.Text)
	best, bestN := "", 0
	for _, t := range turns {
		if t.Seq < l.FirstSeq || (l.LastSeq > 0 && t.Seq > l.LastSeq) {
			continue
		}
		tw := wordSet(t.Content)
		n := 0
		for w := range words {
			if tw[w] {
				n++
			}
		}
		if n > bestN {
			best, bestN = t.ExtID, n
		}
	}
	return best
}

func wordSet(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127)
	}) {
		out[w] = true
	}
	return out
}
