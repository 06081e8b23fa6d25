package extractive

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode"

	"strata"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// wordTok counts whitespace-separated words plus one token per punctuation
// rune: a stand-in for a real BPE tokenizer that is cheap and exact.
type wordTok struct{}

func (wordTok) Name() string { return "words+punct" }

func (wordTok) Count(s string) int {
	n := 0
	in := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			in = false
			continue
		}
		if !in {
			n++
			in = true
		}
		if unicode.IsPunct(r) {
			n++
		}
	}
	return n
}

var tokenizers = []strata.Tokenizer{wordTok{}, strata.CharEstimator{}}

func summarize(t testing.TB, req strata.SummaryRequest) strata.Summary {
	t.Helper()
	sum, err := New().Summarize(context.Background(), req)
	if err != nil {
		t.Fatalf("Summarize: %v", err)
	}
	if sum.Method != strata.MethodExtractive {
		t.Fatalf("method = %q", sum.Method)
	}
	return sum
}

func turn(name, content string) strata.Turn {
	role := strata.RoleUser
	if name == "assistant" {
		role, name = strata.RoleAssistant, ""
	}
	return strata.Turn{Role: role, Name: name, Content: content}
}

// locomo returns the first n turns of LoCoMo conv-26, across sessions,
// each timed at its session's start.
func locomo(t testing.TB, n int) []strata.Turn {
	t.Helper()
	b, err := os.ReadFile("/work/shared/data/locomo-dev.json")
	if err != nil {
		t.Skipf("LoCoMo data: %v", err)
	}
	var samples []struct {
		SampleID     string                     `json:"sample_id"`
		Conversation map[string]json.RawMessage `json:"conversation"`
	}
	if err := json.Unmarshal(b, &samples); err != nil {
		t.Fatal(err)
	}
	for _, s := range samples {
		if s.SampleID != "conv-26" {
			continue
		}
		var out []strata.Turn
		for sess := 1; len(out) < n; sess++ {
			raw, ok := s.Conversation[fmt.Sprintf("session_%d", sess)]
			if !ok {
				break
			}
			var when string
			_ = json.Unmarshal(s.Conversation[fmt.Sprintf("session_%d_date_time", sess)], &when)
			at, _ := time.Parse("3:04 pm on 2 January, 2006", when)
			var turns []struct{ Speaker, Text string }
			if err := json.Unmarshal(raw, &turns); err != nil {
				t.Fatal(err)
			}
			for _, x := range turns {
				if len(out) == n {
					break
				}
				out = append(out, strata.Turn{Role: strata.RoleUser, Name: x.Speaker, Content: x.Text, Time: at, Session: sess})
			}
		}
		return out
	}
	t.Skip("conv-26 not found")
	return nil
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file (run go test -update and read the diff)\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func render(s strata.Summary, tok strata.Tokenizer) string {
	var b strings.Builder
	fmt.Fprintf(&b, "tokens: %d (%s)\n\n%s\n\nfacts:\n", tok.Count(s.Text), tok.Name(), s.Text)
	for _, f := range s.Facts {
		fmt.Fprintf(&b, "- %s\n", f)
	}
	fmt.Fprintf(&b, "\nthemes: %s\n", strings.Join(s.Themes, ", "))
	return b.String()
}

// TestGoldenLoCoMo summarizes the first 30 turns of LoCoMo conv-26 as three
// micro spans, then the first two micros as a mini and all three as a
// tight digest.
func TestGoldenLoCoMo(t *testing.T) {
	turns := locomo(t, 30)
	tok := wordTok{}
	var micros []strata.Node
	for i := 0; i < 3; i++ {
		span := turns[i*10 : i*10+10]
		s := summarize(t, strata.SummaryRequest{Level: 1, LevelName: "micro", Budget: 120, Turns: span, Tokenizer: tok})
		if n := tok.Count(s.Text); n > 120 {
			t.Errorf("micro %d: %d tokens, budget 120", i+1, n)
		}
		golden(t, fmt.Sprintf("locomo-micro-%d", i+1), render(s, tok))
		micros = append(micros, strata.Node{Level: 1, FirstSeq: int64(i*10 + 1), LastSeq: int64(i*10 + 10),
			Start: span[0].Time, End: span[9].Time, Summary: s.Text, Facts: s.Facts, Themes: s.Themes})
	}
	mini := summarize(t, strata.SummaryRequest{Level: 2, LevelName: "mini", Budget: 200, Children: micros[:2], Tokenizer: tok})
	golden(t, "locomo-mini-1", render(mini, tok))
	digest := summarize(t, strata.SummaryRequest{Level: 3, LevelName: "macro", Budget: 120, Children: micros, Tokenizer: tok})
	golden(t, "locomo-digest", render(digest, tok))
}

func TestScratch(t *testing.T) {
	turns := []strata.Turn{
		turn("Caroline", "I moved the config to /etc/nginx/nginx.conf yesterday, it was a pain."),
		turn("assistant", "Great. The docs are at https://example.com/a?b=1 if you need them."),
		turn("Caroline", "parseConfig fails when max_retries is zero."),
		turn("assistant", "Set max_retries to 3 and rerun with --verbose."),
		turn("Caroline", "Ok thanks!"),
		turn("Caroline", "The deposit was $4,500, paid on 7 May 2023 to Dr. Smith in New York."),
		turn("assistant", "Noted. I'll remember the payment of $4,500."),
		turn("Caroline", "lol"),
	}
	for _, tok := range tokenizers {
		for _, b := range []int{120, 60, 30, 10, 3} {
			s := summarize(t, strata.SummaryRequest{Level: 1, Budget: b, Turns: turns, Tokenizer: tok})
			fmt.Printf("--- %s budget %d: %d tokens\n%s\nfacts: %q\nthemes: %q\n", tok.Name(), b, tok.Count(s.Text), s.Text, s.Facts, s.Themes)
		}
	}
}

// microSpan is a LoCoMo-like span: 10 turns of about 45 tokens.
func microSpan() []strata.Turn {
	texts := []string{
		"Hey Mel! Good to see you! I went to a LGBTQ support group yesterday and it was so powerful. The transgender stories were so inspiring and I felt accepted.",
		"Wow, that's cool, Caroline! What happened that was so awesome? I painted a lake sunrise last year and it's special to me, so I get why it matters.",
		"The support group has made me feel accepted and given me courage to embrace myself. Gonna continue my edu and check out career options, which is pretty exciting!",
		"You'd be a great counselor! Your empathy and understanding will really help the people you work with. By the way, take a look at this painting I did.",
		"I'm keen on counseling or working in mental health - I'd love to support those with similar issues. I start at the clinic on 12 June 2023 at 9:30 am.",
		"Thanks, Caroline! Painting's a fun way to express my feelings and get creative. It's a great way to relax after a long day with the kids and work.",
		"Researching adoption agencies — it's been a dream to have a family and give a loving home to kids who need it. The deposit is $4,500 which is a lot.",
		"I ran a charity race for mental health last Saturday – it was really rewarding. Really made me think about taking care of our minds and bodies.",
		"I chose them 'cause they help LGBTQ+ folks with adoption. Their inclusivity and support really spoke to me. The website is https://example.org/adopt?id=7.",
		"We're thinking about going camping next month at Yosemite. Any fun plans for the summer? My kids are so excited about summer break and the lake.",
	}
	out := make([]strata.Turn, len(texts))
	for i, s := range texts {
		name := "Caroline"
		if i%2 == 1 {
			name = "Melanie"
		}
		out[i] = turn(name, s)
	}
	return out
}

// BenchmarkMicro measures one micro span (10 turns of ~45 tokens) with a
// cheap tokenizer, so the figure is the summarizer's own time.
func BenchmarkMicro(b *testing.B) {
	req := strata.SummaryRequest{Level: 1, Budget: 120, Turns: microSpan(), Tokenizer: wordTok{}}
	s := New()
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		if _, err := s.Summarize(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/span")
	// On a shared machine wall time includes waiting for a CPU; process
	// CPU time (GC included) does not.
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/span")
}

// cpuTime returns the user and system CPU time of the process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
