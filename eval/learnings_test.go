package eval

import (
	"context"
	"strings"
	"testing"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/formats"
)

// withObs is a LoCoMo file whose sessions list observations: conv-a's
// cite D1:1, D1:2 (twice, in one string with D2:1) and D2:2; conv-b's
// none of its own turns.
const withObs = `[
 {"sample_id": "conv-a",
  "conversation": {
   "speaker_a": "Ann", "speaker_b": "Bob",
   "session_1_date_time": "1:56 pm on 8 May, 2023",
   "session_1": [
    {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a puppy named Biscuit yesterday."},
    {"speaker": "Bob", "dia_id": "D1:2", "text": "My sister moved to Lisbon for a new job at the aquarium."},
    {"speaker": "Ann", "dia_id": "D1:3", "text": "Wow, that is lovely!"}
   ],
   "session_2_date_time": "10:00 am on 20 June, 2023",
   "session_2": [
    {"speaker": "Bob", "dia_id": "D2:1", "text": "I visited my sister in Lisbon and we saw the sharks."},
    {"speaker": "Ann", "dia_id": "D2:2", "text": "I finished the marathon in Boston in under four hours."}
   ]
  },
  "observation": {
   "session_1_observation": {"Ann": [["Ann adopted a puppy named Biscuit.", "D1:1"]],
                             "Bob": [["Bob's sister moved to Lisbon.", "D1:2"]]},
   "session_2_observation": {"Bob": [["Bob visited his sister in Lisbon.", "D1:2; D2:1"]],
                             "Ann": [["Ann ran a marathon in Boston.", "D2:2"]]}
  },
  "qa": []
 },
 {"sample_id": "conv-b",
  "conversation": {
   "speaker_a": "Cy", "speaker_b": "Dee",
   "session_1_date_time": "9:00 am on 1 March, 2023",
   "session_1": [{"speaker": "Cy", "dia_id": "D1:1", "text": "I went to Oslo to ski."}]
  },
  "observation": {"session_1_observation": {"Cy": [["Cy went to Oslo.", "D1:1"]]}},
  "qa": []
 }
]`

func TestMeasureLearnings(t *testing.T) {
	ctx := context.Background()
	m := newMemory(t)
	file := writeFile(t, "obs.json", withObs)
	// Importing through RunLearnings, only conv-a.
	rep, err := RunLearnings(ctx, m, file, LearningsOptions{Samples: []string{"conv-a"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Samples) != 1 || rep.Samples[0].Sample != "conv-a" || rep.Overall.Turns != 5 || rep.Overall.Observations != 4 || rep.Overall.CitedTurns != 4 {
		t.Fatalf("report %+v", rep)
	}
	if _, err := m.Conversation(ctx, "conv-b"); err == nil {
		t.Fatal("conv-b was imported though not asked for")
	}
	// Learnings set by hand, in a store that holds only them.
	m2 := newMemory(t)
	r, err := formats.Open(formats.LoCoMo, file, strings.NewReader(withObs))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m2.Import(ctx, func() (string, strata.Turn, error) {
		rec, err := r.Next()
		return rec.Conversation, rec.Turn, err
	}); err != nil {
		t.Fatal(err)
	}
	ls := []strata.Learning{
		// From D1:1 (cited), resolved time, third person.
		{Subject: "ann|adopted", Text: "Ann adopted a puppy named Biscuit yesterday", When: "2023-05-07", Sources: []strata.LearningSource{{Seq: 1, ExtID: "D1:1"}}},
		// From D1:3 (not cited; its ext id read from its seq), first
		// person, unresolved time.
		{Subject: "ann|x", Text: "I saw it last week", Sources: []strata.LearningSource{{Seq: 3}}},
		// Without sources: placed by its words in D2:2.
		{Subject: "ann|marathon", Text: "Ann finished the marathon in Boston", FirstSeq: 4, LastSeq: 5},
		// Rejected: not counted.
		{Subject: "bob|y", Text: "Bob's sister moved to Lisbon", Status: strata.LearningRejected, Sources: []strata.LearningSource{{Seq: 2, ExtID: "D1:2"}}},
	}
	if _, err := m2.Store().AddLearnings(ctx, m2.Namespace(), "conv-a", ls); err != nil {
		t.Fatal(err)
	}
	obs := [][]string{{"D1:1"}, {"D1:2"}, {"D1:2", "D2:1"}, {"D2:2"}}
	row, err := measureLearnings(ctx, m2, "conv-a", obs)
	if err != nil {
		t.Fatal(err)
	}
	row.shares()
	want := LearningsRow{Sample: "conv-a", Turns: 5, CitedTurns: 4, Observations: 4, Covered: 2, Learnings: 3, FromCited: 2,
		Personal: 1, Relative: 2, Resolved: 1}
	want.shares()
	if row != want {
		t.Fatalf("measure:\n got %+v\nwant %+v", row, want)
	}
}

func TestRunLearningsErrors(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct{ name, text, sample, want string }{
		{"no observations", tiny, "", "no observation cites a turn"},
		{"unknown sample", withObs, "conv-z", `no sample "conv-z"`},
		{"not json", "[{", "", ":1: not JSON"},
		{"bad observation", `[{"sample_id": "a", "observation": {"s": {"Ann": "x"}}}]`, "", "not a LoCoMo file with observations"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := LearningsOptions{}
			if c.sample != "" {
				o.Samples = []string{c.sample}
			}
			_, err := RunLearnings(ctx, newMemory(t), writeFile(t, "f.json", c.text), o)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one saying %q", err, c.want)
			}
		})
	}
}

func TestPersonalAndRelative(t *testing.T) {
	for s, want := range map[string][2]bool{
		"Caroline went to a support group on 7 May 2023": {false, false},
		"I went to a support group yesterday":            {true, true},
		"Melanie's kids love your painting":              {true, false},
		"Jon is opening a studio next month":             {false, true},
		"Gina lost her job three weeks ago":              {false, true},
		"Ivy will visit Ireland":                         {false, false},
	} {
		if got := [2]bool{PersonalText(s), RelativeTimeText(s)}; got != want {
			t.Errorf("%q: personal, relative %v, want %v", s, got, want)
		}
	}
}
