package strata_test

import (
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"pgregory.net/rapid"
)

// said is a turn of a two-person talk at 1:56 pm on Monday 8 May 2023.
func said(seq int64, who, text string) strata.Turn {
	return strata.Turn{Seq: seq, ExtID: "D1:" + strconv.FormatInt(seq, 10), Role: strata.RoleUser, Name: who,
		Content: text, Time: time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC)}
}

func TestExtractLearnings(t *testing.T) {
	type want struct{ text, subject, when string }
	for _, tc := range []struct {
		name string
		text string // said by Caroline to Melanie
		want []want
	}{
		{"first person and yesterday", "I went to a LGBTQ support group yesterday and it was so powerful.",
			[]want{{"Caroline went to a LGBTQ support group yesterday (2023-05-07).", "caroline|caroline went to a lgbtq support group yesterday", "2023-05-07"}}},
		{"verb agrees", "I really love painting landscapes by the lake.",
			[]want{{"Caroline really loves painting landscapes by the lake.", "caroline|caroline really loves painting landscapes by the lake", ""}}},
		{"contractions and possessives", "I'm keen on counseling, and my mom supports me in it.",
			[]want{{"Caroline is keen on counseling.", "caroline|caroline is keen on counseling", ""},
				{"Caroline's mom supports Caroline in it.", "caroline|caroline's mom supports caroline in it", ""}}},
		{"lives in supersedes", "I moved to Boston last month.",
			[]want{{"Caroline moved to Boston last month (April 2023).", "caroline|lives in", "2023-04-01..2023-04-30"}}},
		{"works at", "I started working at the youth center in town.",
			[]want{{"Caroline started working at the youth center in town.", "caroline|works at", ""}}},
		{"plan with future time", "I'm planning to adopt a dog next month.",
			[]want{{"Caroline is planning to adopt a dog next month (June 2023).", "caroline|is planning to adopt", "2023-06-01..2023-06-30"}}},
		{"count", "I have 3 kids and a dog at home.",
			[]want{{"Caroline has 3 kids and a dog at home.", "caroline|has kids", ""}}},
		{"possessive attribute", "My favorite color is teal.",
			[]want{{"Caroline's favorite color is teal.", "caroline|favorite color", ""}}},
		{"left-out subject", "Just got back from a camping trip with the kids last week!",
			[]want{{"Caroline just got back from a camping trip with the kids last week (week of 2023-05-01).", "caroline|caroline just got back from a camping trip with the kids last week", "2023-05-01..2023-05-07"}}},
		{"second of two things done", "I went to the park and played frisbee with Jo.",
			[]want{{"Caroline went to the park.", "caroline|caroline went to the park", ""},
				{"Caroline played frisbee with Jo.", "caroline|caroline played frisbee with jo", ""}}},
		{"named third person", "Jon's job is nursing at the hospital now.",
			[]want{{"Jon's job is nursing at the hospital now.", "jon|job", ""}}},
		{"something shown", "Here's a pic of my family camping at the beach.",
			[]want{{"Caroline showed a pic of Caroline's family camping at the beach.", "caroline|caroline showed a pic of caroline's family camping at the beach", ""}}},
		{"something shown, this", "Check out this painting I made last week!",
			[]want{{"Caroline showed a painting Caroline made last week (week of 2023-05-01).", "caroline|caroline showed a painting caroline made last week", "2023-05-01..2023-05-07"}}},
		{"something shown, no determiner", "Here's my latest work from the studio.",
			[]want{{"Caroline showed Caroline's latest work from the studio.", "caroline|caroline showed caroline's latest work from the studio", ""}}},
		{"left-out I've", "Been having some tough times lately at work.",
			[]want{{"Caroline has been having some tough times lately at work.", "caroline|caroline has been having some tough times lately at work", ""}}},
		{"greeting, then a name", "Hey Melanie, I started a pottery class at the community center.",
			[]want{{"Caroline started a pottery class at the community center.", "caroline|caroline started a pottery class at the community center", ""}}},
		{"you as a subject after how", "I learned how you keep the sourdough starter alive.",
			[]want{{"Caroline learned how Melanie keeps the sourdough starter alive.", "caroline|caroline learned how melanie keeps the sourdough starter alive", ""}}},
		{"you as an object", "I sent you the recipe for the lemon cake.",
			[]want{{"Caroline sent Melanie the recipe for the lemon cake.", "caroline|caroline sent melanie the recipe for the lemon cake", ""}}},
		{"thanks for", "Thanks for being there for me after the move!", nil},
		{"which means", "Customers love the new offers, which means I'm seeing more sales.",
			[]want{{"Caroline is seeing more sales.", "caroline|caroline is seeing more sales", ""}}},
		{"a clause without its subject", "I have been stuck at work, which has me questioning my goals.",
			[]want{{"Caroline has been stuck at work.", "caroline|caroline has been stuck at work", ""}}},
		{"nothing named shown", "Here's something I just finished.", nil},
		{"a toast", "Here's to a good time at the café.", nil},
		{"question", "Did you go to the beach last Saturday?", nil},
		{"a statement before a question", "FYI, I finished another pottery project - want to see a pic?",
			[]want{{"Caroline finished another pottery project.", "caroline|caroline finished another pottery project", ""}}},
		{"two questions", "Is it open yet - did you go?", nil},
		{"a present verb ending in ed", "I need a new easel for the studio.",
			[]want{{"Caroline needs a new easel for the studio.", "caroline|caroline needs a new easel for the studio", ""}}},
		{"ever", "When I ever paint outside, I bring the kids.",
			[]want{{"When Caroline ever paints outside, Caroline brings the kids.", "caroline|when caroline ever paints outside, caroline brings the kids", ""}}},
		{"imagining the other's experience", "I can imagine that must have been tough at first.", nil},
		{"small talk", "Wow, that's so cool! Thanks so much!", nil},
		{"opinion about the other", "You'd be a great counselor. I'm so proud of you!", nil},
		{"feelings about the talk", "I'm so glad we talked today.", nil},
		{"wish of we", "We should totally go hiking together sometime.", nil},
		{"too short", "I agree.", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := []strata.Turn{said(1, "Melanie", "Hey Caroline, what's new?"), said(2, "Caroline", tc.text)}
			ls := strata.ExtractLearnings(ts, time.UTC)
			var got []want
			for _, l := range ls {
				if l.Sources[0].Seq != 2 || l.FirstSeq != 2 || l.LastSeq != 2 {
					t.Errorf("%q: sources %v, turns %d-%d; want turn 2", l.Text, l.Sources, l.FirstSeq, l.LastSeq)
				}
				got = append(got, want{l.Text, l.Subject, l.When})
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("from %q:\n got %q\nwant %q", tc.text, got, tc.want)
			}
		})
	}
}

// TestExtractLearningsAddressee: "you" names whom the turn answers, and
// the turns of a tool, the system and an unnamed assistant hold none.
func TestExtractLearningsAddressee(t *testing.T) {
	ts := []strata.Turn{
		said(1, "Melanie", "I baked a cake for the school fair."),
		said(2, "Caroline", "I tried the recipe your sister sent me last week."),
		{Seq: 3, Role: strata.RoleAssistant, Content: "I went to Paris yesterday with my team.", Time: said(3, "", "").Time},
		{Seq: 4, Role: strata.RoleTool, Name: "search", Content: "I found three results for your query.", Time: said(4, "", "").Time},
	}
	var got []string
	for _, l := range strata.ExtractLearnings(ts, time.UTC) {
		got = append(got, l.About+": "+l.Text)
	}
	want := []string{"Melanie: Melanie baked a cake for the school fair.",
		"Caroline: Caroline tried the recipe Melanie's sister sent Caroline last week (week of 2023-05-01)."}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

// TestExtractedLearningsSupersede: stored through a Memory's store, a
// later statement of the same attribute supersedes the earlier one.
func TestExtractedLearningsSupersede(t *testing.T) {
	r := learningRows{conv: "c"}
	first := strata.ExtractLearnings([]strata.Turn{said(1, "Ana", "I live in Lisbon with my two cats.")}, nil)
	later := strata.ExtractLearnings([]strata.Turn{said(9, "Ana", "I moved to Porto in March.")}, nil)
	if len(first) != 1 || len(later) != 1 {
		t.Fatalf("extracted %+v and %+v", first, later)
	}
	if _, err := r.add(first, t0); err != nil {
		t.Fatal(err)
	}
	if _, err := r.add(later, t0); err != nil {
		t.Fatal(err)
	}
	if r.rows[0].Status != strata.LearningSuperseded || r.rows[0].SupersededBy != r.rows[1].ID || r.rows[0].Subject != "ana|lives in" {
		t.Fatalf("rows %+v", r.rows)
	}
}

// TestLearningSourcesRoundTrip: DecodeLearningSources(EncodeLearningSources(s))
// equals s.
func TestLearningSourcesRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 5).Draw(t, "n")
		var in []strata.LearningSource
		for i := range n {
			in = append(in, strata.LearningSource{Seq: rapid.Int64Range(1, 1<<40).Draw(t, "seq"),
				ExtID: rapid.StringMatching(`[A-Za-z0-9:"\\ é-]{0,12}`).Draw(t, "ext"+strconv.Itoa(i))})
		}
		out, err := strata.DecodeLearningSources(strata.EncodeLearningSources(in))
		if err != nil || !reflect.DeepEqual(out, in) {
			t.Fatalf("round trip of %v: %v, %v", in, out, err)
		}
	})
}

// TestExtractLearningsProperties: over turns made of words a conversation
// uses, every learning is in the third person, comes from one of the
// turns given, and has a When the stores accept.
func TestExtractLearningsProperties(t *testing.T) {
	words := []string{"I", "I'm", "my", "we", "our", "me", "you", "your", "you're", "went", "love", "moved", "to", "Lisbon",
		"yesterday", "last", "week", "next", "month", "and", "but", "so", "the", "park", "is", "planning", "adopt", "a", "dog",
		"have", "3", "kids", "Thanks", "wow", "!", ".", "?", ",", "-", "with", "Ana", "job", "my", "favorite", "color", "blue",
		"just", "got", "back", "from", "three", "days", "ago", "tomorrow", "in", "two", "weeks"}
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 4).Draw(t, "turns")
		var ts []strata.Turn
		for i := range n {
			ws := rapid.SliceOfN(rapid.SampledFrom(words), 1, 30).Draw(t, "words"+strconv.Itoa(i))
			who := rapid.SampledFrom([]string{"Ana", "Bo"}).Draw(t, "who"+strconv.Itoa(i))
			ts = append(ts, said(int64(i+1), who, strings.Join(ws, " ")))
		}
		for _, l := range strata.ExtractLearnings(ts, time.UTC) {
			if personal.MatchString(l.Text) {
				t.Fatalf("%q is still in the first or second person", l.Text)
			}
			if len(l.Sources) != 1 || l.Sources[0].Seq < 1 || l.Sources[0].Seq > int64(n) {
				t.Fatalf("%q: sources %v", l.Text, l.Sources)
			}
			if err := strata.CheckLearnings("c", []strata.Learning{l}); err != nil {
				t.Fatalf("%q: %v", l.Text, err)
			}
		}
	})
}

var personal = regexp.MustCompile(`(?i)\b(?:i|me|my|mine|myself|we|us|our|ours|you|your|yours|yourself)\b`)
