package extractive

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/strata-memory/strata"
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

// demoTurns returns the first n turns (at most 130) of the sample
// conversation that `strata demo` ships.
func demoTurns(t testing.TB, n int) []strata.Turn {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "cmd", "strata", "demo.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out []strata.Turn
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if len(out) == n {
			break
		}
		var x struct {
			Role, Name, Content string
			Time                time.Time
		}
		if err := json.Unmarshal([]byte(line), &x); err != nil {
			t.Fatal(err)
		}
		out = append(out, strata.Turn{Role: strata.Role(x.Role), Name: x.Name, Content: x.Content, Time: x.Time})
	}
	return out
}

// locomo returns the first n turns of LoCoMo conv-26, across sessions,
// each timed at its session's start, when STRATA_LOCOMO names the file;
// otherwise the demo conversation's first n turns (at most 130).
func locomo(t testing.TB, n int) []strata.Turn {
	t.Helper()
	path := os.Getenv("STRATA_LOCOMO")
	if path == "" {
		return demoTurns(t, n)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("STRATA_LOCOMO: %v", err)
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

func render(s strata.Summary, tok strata.Tokenizer, budget int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "tokens: %d of %d (%s)\n\n%s\n\nfacts:\n", tok.Count(s.Text), budget, tok.Name(), s.Text)
	for _, f := range s.Facts {
		fmt.Fprintf(&b, "- %s\n", f)
	}
	fmt.Fprintf(&b, "\nthemes: %s\n", strings.Join(s.Themes, ", "))
	return b.String()
}

// TestGolden summarizes the first 30 turns of the demo conversation as
// three micro spans, then the first two micros as a mini and all three as a
// macro-level digest, at the budgets of strata.ChunksPolicy. Read the
// golden files after -update: they are what a user sees.
func TestGolden(t *testing.T) {
	turns := demoTurns(t, 30)
	tok := wordTok{}
	levels := strata.ChunksPolicy().Levels
	micro, mini := levels[0].Budget, levels[1].Budget
	var micros []strata.Node
	for i := 0; i < 3; i++ {
		span := turns[i*10 : i*10+10]
		s := summarize(t, strata.SummaryRequest{Level: 1, LevelName: "micro", Budget: micro, Turns: span, Tokenizer: tok})
		if n := tok.Count(s.Text); n > micro {
			t.Errorf("micro %d: %d tokens, budget %d", i+1, n, micro)
		}
		golden(t, fmt.Sprintf("demo-micro-%d", i+1), render(s, tok, micro))
		micros = append(micros, strata.Node{Level: 1, FirstSeq: int64(i*10 + 1), LastSeq: int64(i*10 + 10),
			Start: span[0].Time, End: span[9].Time, Summary: s.Text, Facts: s.Facts, Themes: s.Themes})
	}
	s := summarize(t, strata.SummaryRequest{Level: 2, LevelName: "mini", Budget: mini, Children: micros[:2], Tokenizer: tok})
	golden(t, "demo-mini-1", render(s, tok, mini))
	// Three micros squeezed into a micro budget: a digest must draw on all.
	s = summarize(t, strata.SummaryRequest{Level: 3, LevelName: "macro", Budget: micro, Children: micros, Tokenizer: tok})
	golden(t, "demo-digest", render(s, tok, micro))
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

// lenTok is a tokenizer that costs nothing: bytes / 4. With it the
// benchmark measures the summarizer alone.
type lenTok struct{}

func (lenTok) Name() string       { return "len/4" }
func (lenTok) Count(s string) int { return (len(s) + 3) / 4 }

// BenchmarkMicro measures one micro span (10 turns of ~45 tokens), with
// the word tokenizer of these tests and with a free one (summarizer time
// alone). cpu-ns/span is process CPU time, which on a busy machine is a
// fairer figure than wall time.
func BenchmarkMicro(b *testing.B) {
	for _, tok := range []strata.Tokenizer{wordTok{}, lenTok{}} {
		b.Run(tok.Name(), func(b *testing.B) {
			req := strata.SummaryRequest{Level: 1, Budget: 100, Turns: microSpan(), Tokenizer: tok}
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
			b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/span")
		})
	}
}

// cpuTime returns the user and system CPU time of the process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// source is everything a summary of turns may quote: contents and
// speakers.
func source(turns []strata.Turn) string {
	var b strings.Builder
	for i := range turns {
		b.WriteString(turns[i].Speaker())
		b.WriteString("\n")
		b.WriteString(turns[i].Text())
		b.WriteString("\n")
	}
	return b.String()
}

// checkWhole fails if a word of text is not a whole word of src: a cut
// through a word or an identifier shows up as a fragment.
func checkWhole(t *testing.T, text, src string) {
	t.Helper()
	for _, line := range strings.Split(text, "\n") {
		if d, rest, ok := cutDayMarker(line); ok && d != "" {
			line = rest
		}
		line = strings.TrimPrefix(line, mentionsLabel)
		for _, f := range strings.Fields(line) {
			f = strings.TrimRight(f, "…")
			f = strings.Trim(f, ".,;:!?\"'()[]{}—–-*")
			if f == "" || strings.HasSuffix(f, "…") {
				continue
			}
			if !containsWord(src, f) && !strings.Contains(src, f) {
				t.Errorf("%q is not a whole word of the source\ntext: %s", f, text)
				return
			}
		}
	}
	// The word before a cut must end where a source word ends.
	if i := strings.Index(text, "…"); i > 0 {
		head := strings.TrimRight(text[:i], " ,;:-")
		fields := strings.Fields(head)
		last := fields[len(fields)-1]
		if !containsWord(src, last) {
			t.Errorf("cut inside a word: %q\ntext: %s", last, text)
		}
	}
}

// identSpan mentions every kind of identifier once, among filler talk
// that cannot all fit a micro budget.
func identSpan() []strata.Turn {
	return []strata.Turn{
		turn("Caroline", "Morning! I spent the whole weekend fighting with the web server again and I am tired of it honestly."),
		turn("assistant", "Sorry to hear that. Which file were you editing when the proxy started failing with errors?"),
		turn("Caroline", "The main config lives in /etc/nginx/nginx.conf and I changed the upstream block twice."),
		turn("assistant", "Understood. Reverting the upstream block is usually the quickest way to get traffic flowing again."),
		turn("Caroline", "The vendor docs at https://example.com/a?b=1 say the loader is parseConfig and it reads max_retries."),
		turn("assistant", "If max_retries is zero the loader gives up at once, so the proxy never reconnects to the backend."),
		turn("Caroline", "Makes sense. The outage cost us $4,500 in refunds, which my manager was not thrilled about at all."),
		turn("assistant", "That is painful. It might help to add a health check and an alert so it cannot go unnoticed again."),
		turn("Caroline", "Agreed. We signed the support contract on 7 May 2023 so I will open a ticket with them tomorrow morning."),
		turn("assistant", "Good plan. Attach the config diff and the error log so their engineers can reproduce it quickly."),
	}
}

func TestIdentifierRetention(t *testing.T) {
	tests := []struct {
		name   string
		turns  []strata.Turn
		budget int
		want   []string
	}{
		{"issue", identSpan(), 120, []string{"/etc/nginx/nginx.conf", "https://example.com/a?b=1", "parseConfig",
			"max_retries", "$4,500", "7 May 2023", "Caroline"}},
		{"paths", []strata.Turn{
			turn("dev", "I keep my notes in ~/notes.md and the script in ./scripts/run.sh, which is handy."),
			turn("dev", "On the Windows box the same file is C:\\Users\\ann\\run.ps1 and the entry point is src/main.go."),
			turn("dev", "Nothing else changed this week apart from the usual dependency bumps and a lot of meetings about them."),
			turn("dev", "We also talked about lunch for a long time, which was not productive but it was fun anyway."),
		}, 40, []string{"~/notes.md", "./scripts/run.sh", "C:\\Users\\ann\\run.ps1", "src/main.go"}},
		{"code", []strata.Turn{
			turn("dev", "Call os.Exit() only from main, and run `go vet ./...` before pushing anything to the repository."),
			turn("dev", "The job runs with --dry-run by default; mail ann@example.org about issue #1234 if it breaks again."),
			turn("dev", "Everything else about the release process stays the same as last month, nobody wants to change it."),
			turn("dev", "The retry helper is called withBackoff and lives next to the HTTP client code in the same package."),
		}, 50, []string{"os.Exit()", "`go vet ./...`", "--dry-run", "ann@example.org", "#1234", "withBackoff"}},
		{"dates", []strata.Turn{
			turn("Ann", "The migration ran on 2023-05-07 and again on May 9, 2023 at 1:56 pm without any trouble at all."),
			turn("Bob", "Great, the next window is Saturday at 10am, and the one after that is in June if all goes well."),
			turn("Ann", "It moved 3.5 GB in total and cost about 40% less than the previous run did in the old cluster."),
			turn("Bob", "Nice, that is a big improvement over what we had before, the team will be really happy to hear it."),
		}, 50, []string{"2023-05-07", "May 9, 2023", "1:56 pm", "Saturday", "10am", "3.5 GB", "40%"}},
	}
	for _, tt := range tests {
		for _, tok := range tokenizers {
			t.Run(tt.name+"/"+tok.Name(), func(t *testing.T) {
				s := summarize(t, strata.SummaryRequest{Level: 1, Budget: tt.budget, Turns: tt.turns, Tokenizer: tok})
				if n := tok.Count(s.Text); n > tt.budget {
					t.Errorf("tokens=%d, budget %d", n, tt.budget)
				}
				for _, id := range tt.want {
					if !strings.Contains(s.Text, id) {
						t.Errorf("lost %q\ntext: %s", id, s.Text)
					}
				}
				checkWhole(t, s.Text, source(tt.turns))
			})
		}
	}
}

// identifiers returns what the scanner finds in one sentence, sorted.
func identifiers(s string) []string {
	w := newWork(NewWithOptions(Options{}).opt, strata.SummaryRequest{Tokenizer: wordTok{}})
	w.addSentence(s, "", "", 0, 1, 1, true, false)
	w.resolve()
	var out []string
	for i := range w.idents {
		out = append(out, w.idents[i].text)
	}
	slices.Sort(out)
	w.release()
	return out
}

func TestIdentifiers(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"Edit /etc/nginx/nginx.conf and restart.", []string{"/etc/nginx/nginx.conf"}},
		{"See https://example.com/a?b=1.", []string{"https://example.com/a?b=1"}},
		{"Docs (see https://en.wikipedia.org/wiki/Foo_(bar)) help.", []string{"https://en.wikipedia.org/wiki/Foo_(bar)"}},
		{"Then call parseConfig with max_retries set.", []string{"max_retries", "parseConfig"}},
		{"It cost $4,500 on 7 May 2023.", []string{"$4,500", "7 May 2023"}},
		{"We met on May 7, 2023 at 1:56 pm in New York.", []string{"1:56 pm", "May 7, 2023", "New York"}},
		{"Run it with --race from ./cmd/strata or C:\\src\\strata please.", []string{"--race", "./cmd/strata", "C:\\src\\strata"}},
		{"Use os.Exit() and `go vet ./...` here.", []string{"`go vet ./...`", "os.Exit()"}},
		{"Mail me at ann@example.org about #1234.", []string{"#1234", "ann@example.org"}},
		{"For instance, e.g. this takes 3.5 GB, i.e. a lot.", []string{"3.5 GB"}},
		{"Yesterday Caroline met Dr. Smith at the Bank of America.", []string{"Bank of America", "Caroline", "Dr. Smith"}},
		{"The meeting is on Saturday at 10am.", []string{"10am", "Saturday"}},
		{"I have 2 kids and 3 cats, and 1 of them is old.", []string{"2 kids", "3 cats"}},
		{"Version v1.2.3 ships IMG_7269.jpg to github.com/acme/tool.", []string{"IMG_7269.jpg", "github.com/acme/tool", "v1.2.3"}},
		{"The job ran at 2023-05-07T10:00:00Z and failed.", []string{"2023-05-07T10:00:00Z"}},
		{"Painting is fun and so is reading.", nil},
		{"Fixed it and/or 24/7, he/she said.", nil},
		{"I went to a LGBTQ support group.", []string{"LGBTQ"}},
	}
	for _, tt := range tests {
		if got := identifiers(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("identifiers(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSplitSentences(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"Dr. Smith arrived. He said hi!", []string{"Dr. Smith arrived.", "He said hi!"}},
		{"Use e.g. pandas. Then stop.", []string{"Use e.g. pandas.", "Then stop."}},
		{"It costs 3.5 dollars. See https://x.com/a.b?c=d. Done", []string{"It costs 3.5 dollars.", "See https://x.com/a.b?c=d.", "Done"}},
		{"Edit ./a.go and /etc/x.conf now. OK?", []string{"Edit ./a.go and /etc/x.conf now.", "OK?"}},
		{"line one\nline two\n\n  line three  ", []string{"line one", "line two", "line three"}},
		{"今日は晴れ。明日は雨！", []string{"今日は晴れ。", "明日は雨！"}},
		{"Wait... what?! Yes.", []string{"Wait... what?!", "Yes."}},
		{"He moved to the U.S. in 2020. It was fine.", []string{"He moved to the U.S. in 2020.", "It was fine."}},
		{"(See the docs.) Next one.", []string{"(See the docs.)", "Next one."}},
		{"J. K. Rowling wrote it.", []string{"J. K. Rowling wrote it."}},
		{"", nil},
	}
	for _, tt := range tests {
		var got []string
		for _, sp := range splitSentences(tt.in, nil) {
			got = append(got, tt.in[sp.start:sp.end])
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("splitSentences(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	// A long unpunctuated run is cut at a space, never inside a word.
	long := strings.Repeat("word ", 300)
	for _, sp := range splitSentences(long, nil) {
		if s := long[sp.start:sp.end]; sp.end-sp.start > maxSentenceBytes || strings.Trim(s, "word ") != "" {
			t.Fatalf("bad piece %q", s)
		}
	}
}

// TestBudget checks that the text never exceeds the budget, with two
// tokenizers, over many spans and budgets, and never cuts a word.
func TestBudget(t *testing.T) {
	turns := locomo(t, 200)
	spans := [][]strata.Turn{identSpan(), microSpan()}
	for i := 0; i+10 <= len(turns); i += 10 {
		spans = append(spans, turns[i:i+10])
	}
	for _, tok := range tokenizers {
		for _, budget := range []int{8, 16, 24, 40, 60, 120, 200} {
			for i, span := range spans {
				s := summarize(t, strata.SummaryRequest{Level: 1, Budget: budget, Turns: span, Tokenizer: tok})
				if n := tok.Count(s.Text); n > budget {
					t.Errorf("%s budget %d span %d: %d tokens\n%s", tok.Name(), budget, i, n, s.Text)
				}
				if s.Text == "" {
					t.Errorf("%s budget %d span %d: empty text", tok.Name(), budget, i)
				}
				checkWhole(t, s.Text, source(span))
			}
		}
	}
}

func TestDeterminism(t *testing.T) {
	turns := locomo(t, 100)
	var reqs []strata.SummaryRequest
	var micros []strata.Node
	for i := 0; i < 10; i++ {
		req := strata.SummaryRequest{Level: 1, Budget: 120, Turns: turns[i*10 : i*10+10], Tokenizer: wordTok{}}
		reqs = append(reqs, req)
		s := summarize(t, req)
		micros = append(micros, strata.Node{Level: 1, Start: turns[i*10].Time, Summary: s.Text, Facts: s.Facts, Themes: s.Themes})
	}
	reqs = append(reqs, strata.SummaryRequest{Level: 2, Budget: 200, Children: micros, Tokenizer: strata.CharEstimator{}},
		strata.SummaryRequest{Level: 1, Budget: 60, Turns: identSpan(), Tokenizer: wordTok{}})
	want := make([]string, len(reqs))
	for i, r := range reqs {
		want[i] = fmt.Sprintf("%#v", summarize(t, r))
	}
	// Again, sequentially and from many goroutines at once.
	for i, r := range reqs {
		if got := fmt.Sprintf("%#v", summarize(t, r)); got != want[i] {
			t.Fatalf("request %d: second run differs:\n%s\n%s", i, got, want[i])
		}
	}
	errs := make(chan string, 8*len(reqs))
	done := make(chan struct{})
	for g := 0; g < 8; g++ {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range reqs {
				k := (i + g) % len(reqs)
				s, _ := New().Summarize(context.Background(), reqs[k])
				if got := fmt.Sprintf("%#v", s); got != want[k] {
					errs <- fmt.Sprintf("request %d differs under concurrency", k)
				}
			}
		}()
	}
	for g := 0; g < 8; g++ {
		<-done
	}
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// pyramid summarizes LoCoMo turns into micros (10 turns), minis (2
// micros) and one macro (5 minis), as the engine would.
func pyramid(t *testing.T, turns []strata.Turn, tok strata.Tokenizer) (micros, minis []strata.Node, macro strata.Summary) {
	node := func(level int, s strata.Summary, start, end time.Time) strata.Node {
		return strata.Node{Level: level, Start: start, End: end, Summary: s.Text, Facts: s.Facts, Themes: s.Themes}
	}
	for i := 0; i+10 <= len(turns); i += 10 {
		s := summarize(t, strata.SummaryRequest{Level: 1, Budget: 120, Turns: turns[i : i+10], Tokenizer: tok})
		micros = append(micros, node(1, s, turns[i].Time, turns[i+9].Time))
	}
	for i := 0; i+2 <= len(micros); i += 2 {
		s := summarize(t, strata.SummaryRequest{Level: 2, Budget: 200, Children: micros[i : i+2], Tokenizer: tok})
		if n := tok.Count(s.Text); n > 200 {
			t.Errorf("mini %d: %d tokens", i/2, n)
		}
		minis = append(minis, node(2, s, micros[i].Start, micros[i+1].End))
	}
	macro = summarize(t, strata.SummaryRequest{Level: 3, Budget: 300, Children: minis, Tokenizer: tok})
	return micros, minis, macro
}

func TestChildren(t *testing.T) {
	turns := locomo(t, 100)
	for _, tok := range tokenizers {
		t.Run(tok.Name(), func(t *testing.T) {
			_, minis, macro := pyramid(t, turns, tok)
			if n := tok.Count(macro.Text); n > 300 {
				t.Errorf("macro: %d tokens, budget 300", n)
			}
			// A digest of the whole span: sentences of most minis, not
			// just the first.
			represented := 0
			for _, m := range minis {
				for _, sp := range splitSentences(m.Summary, nil) {
					s := m.Summary[sp.start:sp.end]
					if _, rest, ok := cutLabel(s); ok {
						s = rest
					}
					if len(s) > 20 && strings.Contains(macro.Text, s) {
						represented++
						break
					}
				}
			}
			if represented < 4 {
				t.Errorf("macro draws on %d of %d minis:\n%s", represented, len(minis), macro.Text)
			}
			if len(macro.Themes) < 3 || len(macro.Facts) == 0 {
				t.Errorf("themes %q, facts %q", macro.Themes, macro.Facts)
			}
			if t.Failed() {
				t.Logf("macro:\n%s", macro.Text)
			}
		})
	}
}

// TestChildrenCarry checks that a parent keeps what its children carried:
// identifiers listed under Mentions, identifiers in their text, facts.
func TestChildrenCarry(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2023, 5, d, 12, 0, 0, 0, time.UTC) }
	children := []strata.Node{
		{Level: 1, Start: day(7), Summary: "Caroline: We fixed the proxy after a long weekend of debugging. assistant: The retry setting was the culprit.\nMentions: /etc/nginx/nginx.conf; parseConfig",
			Facts: []string{"Caroline: I adopted a dog named Rex on 3 March 2024."}, Themes: []string{"proxy", "debugging"}},
		{Level: 1, Start: day(8), Summary: "Melanie: The deploy went out on 8 May 2023 without trouble. Caroline: Great news, the refunds were $4,500 in the end.",
			Themes: []string{"deploy"}},
		{Level: 1, Start: day(8), Summary: "[8 May 2023] Melanie: We celebrated with pizza at Luigi's in Brooklyn. Caroline: Pizza was great and so was the company.",
			Themes: []string{"pizza"}},
	}
	for _, tok := range tokenizers {
		s := summarize(t, strata.SummaryRequest{Level: 2, Budget: 120, Children: children, Tokenizer: tok})
		for _, id := range []string{"/etc/nginx/nginx.conf", "parseConfig", "8 May 2023", "$4,500", "Brooklyn"} {
			if !strings.Contains(s.Text, id) {
				t.Errorf("%s: lost %q\n%s", tok.Name(), id, s.Text)
			}
		}
		if !slices.Contains(s.Facts, "Caroline: I adopted a dog named Rex on 3 March 2024.") {
			t.Errorf("%s: child fact lost: %q", tok.Name(), s.Facts)
		}
		if !strings.Contains(s.Text, "[7 May 2023]") || !strings.Contains(s.Text, "[8 May 2023]") {
			t.Errorf("%s: want day markers for both days:\n%s", tok.Name(), s.Text)
		}
		if !slices.Contains(s.Themes, "proxy") || !slices.Contains(s.Themes, "pizza") {
			t.Errorf("%s: themes %q", tok.Name(), s.Themes)
		}
	}
}

func TestThemes(t *testing.T) {
	turns := []strata.Turn{
		turn("Ann", "The garden needs water and the tomato plants need a stake."),
		turn("Bob", "I will buy compost for the garden and basil seeds for the tomato bed."),
		turn("Ann", "Basil next to the tomato is a classic, and compost keeps the garden happy."),
	}
	s := summarize(t, strata.SummaryRequest{Level: 1, Budget: 120, Turns: turns, Tokenizer: wordTok{}})
	// garden and tomato 3 times, basil and compost twice: ties alphabetical.
	if want := []string{"garden", "tomato", "basil", "compost"}; !slices.Equal(s.Themes, want) {
		t.Errorf("themes = %q, want %q", s.Themes, want)
	}
	for _, th := range s.Themes {
		if th != strings.ToLower(th) || stopWords[th] {
			t.Errorf("bad theme %q", th)
		}
	}
}

func TestFacts(t *testing.T) {
	turns := []strata.Turn{
		turn("Caroline", "Hey! How are you?"),
		turn("Caroline", "I adopted a dog named Rex on 3 March 2024."),
		turn("Melanie", "Did you pick the name yourself?"),
		turn("Melanie", "My sister works at Acme Corp in Denver."),
		turn("Caroline", "lol"),
	}
	for i := 0; i < 30; i++ {
		turns = append(turns, turn("Melanie", fmt.Sprintf("I paid $%d for the course number %d on 9 June 2024.", 100+i, i+2)))
	}
	s := summarize(t, strata.SummaryRequest{Level: 1, Budget: 120, Turns: turns, Tokenizer: wordTok{}})
	if len(s.Facts) == 0 || len(s.Facts) > 10 {
		t.Fatalf("%d facts: %q", len(s.Facts), s.Facts)
	}
	if s.Facts[0] != "Caroline: I adopted a dog named Rex on 3 March 2024." ||
		s.Facts[1] != "Melanie: My sister works at Acme Corp in Denver." {
		t.Errorf("facts = %q", s.Facts)
	}
	for _, f := range s.Facts {
		if strings.HasSuffix(f, "?") || !(strings.HasPrefix(f, "Caroline: ") || strings.HasPrefix(f, "Melanie: ")) {
			t.Errorf("bad fact %q", f)
		}
	}
}

func TestPinnedQuotedWhole(t *testing.T) {
	turns := microSpan()
	pin := "We decided: the adoption paperwork goes to Hope Agency. Deadline is Friday. Budget stays under $5,000."
	turns[5] = strata.Turn{Role: strata.RoleUser, Name: "Melanie", Content: pin, Importance: 0.9}
	s := summarize(t, strata.SummaryRequest{Level: 1, Budget: 120, Turns: turns, Tokenizer: wordTok{}})
	if !strings.Contains(s.Text, "Melanie: "+pin) {
		t.Errorf("pinned turn not quoted whole:\n%s", s.Text)
	}
	// Too long to quote whole: its sentences still come first.
	s = summarize(t, strata.SummaryRequest{Level: 1, Budget: 24, Turns: turns, Tokenizer: wordTok{}})
	if !strings.Contains(s.Text, "Hope Agency") {
		t.Errorf("pinned turn lost under a tight budget:\n%s", s.Text)
	}
}

func TestEdgeCases(t *testing.T) {
	toolTurns := []strata.Turn{
		{Role: strata.RoleAssistant, ToolCalls: []strata.ToolCall{{ID: "c1", Name: "read_file", Arguments: json.RawMessage(`{"path":"/etc/hosts"}`)}}},
		{Role: strata.RoleTool, ToolResults: []strata.ToolResult{{CallID: "c1", Name: "read_file", Content: "127.0.0.1 localhost"}}},
	}
	tests := []struct {
		name  string
		turns []strata.Turn
		want  []string // substrings of the text; nil: the text is empty
	}{
		{"none", nil, nil},
		{"blank", []strata.Turn{turn("Ann", ""), turn("Bob", "  \n\t ")}, nil},
		{"trivial", []strata.Turn{turn("Ann", "ok"), turn("Bob", "thanks!"), turn("Ann", "lol")}, []string{"Ann: ok."}},
		{"one", []strata.Turn{turn("Ann", "I adopted a dog named Rex on 3 March 2024.")}, []string{"Ann: I adopted a dog named Rex on 3 March 2024."}},
		{"tool-only", toolTurns, []string{"read_file", "/etc/hosts", "127.0.0.1"}},
		{"cjk", []strata.Turn{turn("Ken", "今日は東京タワーに行きました。明日は京都に行きます。"), turn("Yui", "京都では金閣寺を見てください。")}, []string{"京都"}},
		{"thai", []strata.Turn{turn("Som", "วันนี้ฉันไปตลาดกับแม่ แล้วเราก็ซื้อผลไม้มากมาย"), turn("Nok", "ทะเลสวยมาก")}, []string{"Som: วันนี้ฉันไปตลาด"}},
		{"emoji", []strata.Turn{turn("Ann", "🎉🎉🎉"), turn("Bob", "So proud of you 💖 — the new job at Acme Corp starts Monday 👩‍💻")}, []string{"Acme Corp", "Monday", "💖"}},
	}
	for _, tt := range tests {
		for _, tok := range tokenizers {
			t.Run(tt.name+"/"+tok.Name(), func(t *testing.T) {
				s := summarize(t, strata.SummaryRequest{Level: 1, Budget: 40, Turns: tt.turns, Tokenizer: tok})
				if tt.want == nil && s.Text != "" {
					t.Errorf("text = %q, want empty", s.Text)
				}
				for _, w := range tt.want {
					if !strings.Contains(s.Text, w) {
						t.Errorf("text lacks %q:\n%s", w, s.Text)
					}
				}
				if n := tok.Count(s.Text); n > 40 {
					t.Errorf("tokens=%d, budget 40", n)
				}
				if !utf8.ValidString(s.Text) {
					t.Errorf("invalid UTF-8: %q", s.Text)
				}
			})
		}
	}
}

// TestHugeTurn checks that a 10 MB turn costs bounded work and still
// yields its identifiers, including one at its very end.
func TestHugeTurn(t *testing.T) {
	big := strings.Repeat("The quick brown fox jumps over the lazy dog near the barn. ", 180000) +
		"Finally the fix landed in /srv/app/main.go today."
	blob := strings.Repeat("QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo", 300000)
	turns := []strata.Turn{turn("Ann", big), turn("Bob", "Did you read it all?"), turn("Ann", blob)}
	if len(big) < 10<<20 {
		t.Fatalf("turn is %d bytes", len(big))
	}
	for _, tok := range tokenizers {
		start := time.Now()
		s := summarize(t, strata.SummaryRequest{Level: 1, Budget: 120, Turns: turns, Tokenizer: tok})
		// A bound for a blow-up (quadratic work on 10 MB takes hours),
		// not for speed: the benchmarks measure that.
		if d := time.Since(start); d > 2*time.Minute {
			t.Errorf("%s: took %v", tok.Name(), d)
		}
		if !strings.Contains(s.Text, "/srv/app/main.go") {
			t.Errorf("%s: lost the tail identifier:\n%s", tok.Name(), s.Text)
		}
		if n := tok.Count(s.Text); n > 120 || len(s.Text) > 2000 {
			t.Errorf("%s: %d tokens, %d bytes", tok.Name(), n, len(s.Text))
		}
	}
}

func TestDefaults(t *testing.T) {
	s, err := New().Summarize(context.Background(), strata.SummaryRequest{Level: 1, Turns: locomo(t, 30)})
	if err != nil {
		t.Fatal(err)
	}
	if n := (strata.CharEstimator{}).Count(s.Text); n > DefaultBudget || n < DefaultBudget/2 {
		t.Errorf("default budget: %d chars/4 tokens", n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := New().Summarize(ctx, strata.SummaryRequest{Level: 1, Turns: microSpan()}); err == nil {
		t.Error("want the context's error")
	}
}

// BenchmarkMini measures a level-2 node over two micro summaries.
func BenchmarkMini(b *testing.B) {
	s := New()
	ctx := context.Background()
	var micros []strata.Node
	for i := 0; i < 2; i++ {
		sum, _ := s.Summarize(ctx, strata.SummaryRequest{Level: 1, Budget: 120, Turns: microSpan(), Tokenizer: wordTok{}})
		micros = append(micros, strata.Node{Level: 1, Summary: sum.Text, Facts: sum.Facts, Themes: sum.Themes})
	}
	req := strata.SummaryRequest{Level: 2, Budget: 200, Children: micros, Tokenizer: wordTok{}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Summarize(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

// TestCodeAndLabels covers what a coding session brings: code blocks are
// no sentences and only their code identifiers count, and a sentence that
// opens like a label ("Decision: ...") keeps its speaker one level up.
func TestCodeAndLabels(t *testing.T) {
	turns := []strata.Turn{
		turn("Maya", "Decision: a daily stock report at 06:30, every day we're open. Our email comes with the domain hosting."),
		{Role: strata.RoleAssistant, Content: "Here's the table:\n\n```sql\nCREATE TABLE stock_counts (\n  ingredient_id INTEGER NOT NULL,\n  counted_on TEXT NOT NULL\n);\n```\n\nHave `crumb stock set` write to `stock_counts` as well.\n\n    func main() { os.Exit(run()) }\n\nname=value lines are config, not prose."},
		turn("Maya", "Stock is 10 kg. assistant: nothing to add."),
	}
	s := summarize(t, strata.SummaryRequest{Level: 1, Budget: 120, Turns: turns, Tokenizer: wordTok{}})
	for _, bad := range []string{"INTEGER", "NOT NULL", "CREATE TABLE", "func main", "name=value"} {
		if strings.Contains(s.Text, bad) {
			t.Errorf("code in the summary (%q):\n%s", bad, s.Text)
		}
	}
	for _, want := range []string{"counted_on", "ingredient_id", "stock_counts", "Maya: Decision: a daily stock report at 06:30"} {
		if !strings.Contains(s.Text, want) {
			t.Errorf("lost %q:\n%s", want, s.Text)
		}
	}
	// One level up the label "Decision" must not become a speaker.
	child := strata.Node{Level: 1, Summary: s.Text}
	p := summarize(t, strata.SummaryRequest{Level: 2, Budget: 120, Children: []strata.Node{child}, Tokenizer: wordTok{}})
	if strings.Contains(p.Text, "Decision: Our email") || !strings.Contains(p.Text, "Maya: Decision:") {
		t.Errorf("label lost or invented:\n%s", p.Text)
	}
	// A lower-case speaker label after a period starts a new sentence.
	var got []string
	text := "Maya: Stock is 10 kg. assistant: Harbour has 7 days."
	for _, sp := range splitSentences(text, nil) {
		got = append(got, text[sp.start:sp.end])
	}
	if want := []string{"Maya: Stock is 10 kg.", "assistant: Harbour has 7 days."}; !slices.Equal(got, want) {
		t.Errorf("split %q = %q", text, got)
	}
}

// FuzzSummarize checks that any input summarizes without panicking, to
// valid UTF-8, the same way twice, and within a budget of 40 tokens
// whenever the speaker label leaves room.
func FuzzSummarize(f *testing.F) {
	for _, s := range []string{"", "ok", "Dr. Smith paid $4,500 on 7 May 2023. See https://x.io/a?b=1.",
		"```go\nfunc main() {}\n```\nDone.", "今日は晴れ。明日は雨！", "🎉 `a b` --flag ./x /y C:\\z", strings.Repeat("a", 600)} {
		f.Add(s, "Ann", 40)
	}
	f.Fuzz(func(t *testing.T, content, name string, budget int) {
		if !utf8.ValidString(content) || !utf8.ValidString(name) || len(name) > 20 {
			return
		}
		budget = 8 + abs(budget)%300
		turns := []strata.Turn{{Role: strata.RoleUser, Name: name, Content: content},
			{Role: strata.RoleAssistant, Content: content + " And then?"}}
		req := strata.SummaryRequest{Level: 1, Budget: budget, Turns: turns, Tokenizer: wordTok{}}
		a := summarize(t, req)
		b := summarize(t, req)
		if fmt.Sprintf("%#v", a) != fmt.Sprintf("%#v", b) {
			t.Fatal("not deterministic")
		}
		if !utf8.ValidString(a.Text) {
			t.Fatalf("invalid UTF-8: %q", a.Text)
		}
		// Words are never cut: a word longer than the budget may overflow it.
		longest := 0
		for _, f := range strings.Fields(content + " " + name) {
			longest = max(longest, (wordTok{}).Count(f))
		}
		if n := (wordTok{}).Count(a.Text); n > budget && budget >= 16 && longest <= 4 && !strings.Contains(name, " ") {
			t.Fatalf("%d tokens over budget %d: %q", n, budget, a.Text)
		}
		child := strata.Node{Summary: a.Text, Facts: a.Facts, Themes: a.Themes}
		summarize(t, strata.SummaryRequest{Level: 2, Budget: budget, Children: []strata.Node{child, child}, Tokenizer: wordTok{}})
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
