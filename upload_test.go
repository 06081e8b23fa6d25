package strata_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/extractive"
	"github.com/strata-memory/strata/formats"
)

// weekOnly is a calendar policy without months: the weekly fallback of an
// upload package can show its full four weeks under it.
func weekOnly() strata.Policy {
	p := strata.CalendarPolicy()
	p.Name, p.Levels = "days-weeks", p.Levels[:2]
	return p
}

// uploadMemory opens a Memory over a fresh SQLite file whose clock is far
// past every test's turns, so every period closes at rollup.
func uploadMemory(t testing.TB) *strata.Memory {
	t.Helper()
	st := openNewStore(t, filepath.Join(t.TempDir(), "strata.db"))
	t.Cleanup(func() { st.Close() })
	m, err := strata.New(strata.Config{Store: st, Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New(),
		Policies: []strata.Policy{weekOnly()},
		Now:      func() time.Time { return time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// session is n turns of one session starting at the given time, a minute
// apart, alternating between two speakers.
type session struct {
	at    string // "2023-05-08 13:56"
	label string
	n     int
}

func sessionTurns(t testing.TB, ss []session) []strata.Turn {
	t.Helper()
	var out []strata.Turn
	for _, s := range ss {
		at, err := time.Parse("2006-01-02 15:04", s.at)
		if err != nil {
			t.Fatal(err)
		}
		for i := range s.n {
			name, role := "Ana", strata.RoleUser
			if i%2 == 1 {
				name, role = "Ben", strata.RoleAssistant
			}
			out = append(out, strata.Turn{ExtID: fmt.Sprintf("%s-%d", s.label, i), SessionLabel: s.label, Role: role, Name: name,
				Time:    at.Add(time.Duration(i) * time.Minute),
				Content: fmt.Sprintf("On %s %s talked about topic %d of %s: the garden, the boat and the 42 tomatoes.", s.at, name, i, s.label)})
		}
	}
	return out
}

func ingestSessions(t testing.TB, m *strata.Memory, conv, policy string, ss []session) {
	t.Helper()
	if _, err := m.Ingest(context.Background(), strata.Batch{Conversation: conv, Policy: policy, Turns: sessionTurns(t, ss)}); err != nil {
		t.Fatal(err)
	}
}

func titles(p *strata.UploadPackage) []string {
	var out []string
	for _, s := range p.Sections {
		out = append(out, s.Title)
	}
	return out
}

func upload(t testing.TB, m *strata.Memory, req strata.UploadRequest) *strata.UploadPackage {
	t.Helper()
	p, err := m.Upload(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	checkUpload(t, m, p)
	return p
}

// checkUpload checks what every package must hold: its limits, its
// figures, and that its sections appear whole in its Markdown.
func checkUpload(t testing.TB, m *strata.Memory, p *strata.UploadPackage) {
	t.Helper()
	if p.Bytes != len(p.Markdown) || p.Bytes > p.MaxBytes {
		t.Errorf("package of %d bytes (Bytes %d), cap %d", len(p.Markdown), p.Bytes, p.MaxBytes)
	}
	if n := m.Tokenizer().Count(p.Markdown); n != p.Tokens || (p.Budget > 0 && n > p.Budget) {
		t.Errorf("package of %d tokens (Tokens %d), budget %d", n, p.Tokens, p.Budget)
	}
	if !strings.HasPrefix(p.Markdown, "# Knowledge Primer -- Upload Package\n\nGenerated: ") {
		t.Errorf("package starts %q", p.Markdown[:min(80, len(p.Markdown))])
	}
	sum := 0
	for _, s := range p.Sections {
		sum += s.Bytes
		if !strings.Contains(p.Markdown, "\n## "+s.Title+"\n\n") {
			t.Errorf("section %q is not in the package", s.Title)
		}
	}
	if sum > p.Bytes {
		t.Errorf("sections take %d bytes of %d", sum, p.Bytes)
	}
	checkUploadCoverage(t, p)
}

// checkUploadCoverage checks that every turn of the history, 1 to p.Turns, is
// in a section (shown raw or under a summary) or listed as omitted, and
// that the package lists an omission in its text too.
func checkUploadCoverage(t testing.TB, p *strata.UploadPackage) {
	t.Helper()
	var spans [][2]int64
	for _, s := range p.Sections {
		if s.Kind == strata.UploadFixed {
			continue
		}
		if s.FirstSeq < 1 || s.LastSeq < s.FirstSeq || s.LastSeq > p.Turns {
			t.Errorf("section %q spans turns %d-%d of %d", s.Title, s.FirstSeq, s.LastSeq, p.Turns)
		}
		spans = append(spans, [2]int64{s.FirstSeq, s.LastSeq})
	}
	for _, o := range p.Omitted {
		spans = append(spans, [2]int64{o.FirstSeq, o.LastSeq})
	}
	slices.SortFunc(spans, func(x, y [2]int64) int { return int(x[0] - y[0]) })
	next := int64(1)
	for _, sp := range spans {
		if sp[0] > next {
			t.Errorf("turns %d-%d of %d are neither in a section nor omitted", next, sp[0]-1, p.Turns)
		}
		next = max(next, sp[1]+1)
	}
	if next <= p.Turns {
		t.Errorf("turns %d-%d of %d are neither in a section nor omitted", next, p.Turns, p.Turns)
	}
	if len(p.Dropped) > 0 && len(p.Omitted) == 0 {
		t.Errorf("dropped %q with nothing omitted", p.Dropped)
	}
	if (len(p.Omitted) > 0) != strings.Contains(p.Markdown, "\nOmitted: turns ") {
		t.Errorf("omitted %v, but the package says:\n%s", p.Omitted, p.Markdown[:min(400, len(p.Markdown))])
	}
}

// historyBytes is the size of the turns 1 to last as their text.
func historyBytes(t testing.TB, m *strata.Memory, conv string, last int64) int {
	t.Helper()
	n := 0
	for from := int64(1); from > 0 && from <= last; {
		ts, next, err := m.Turns(context.Background(), conv, from, last, 1000)
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range ts {
			n += len(tr.Text())
		}
		from = next
	}
	return n
}

// checkFilled checks that a package whose history does not fit its limits
// raw (a turn is not shown raw) uses at least 90% of them.
func checkFilled(t testing.TB, m *strata.Memory, p *strata.UploadPackage) {
	t.Helper()
	raw := 0
	for _, s := range p.Sections {
		if s.Kind == strata.UploadSession || s.Kind == strata.UploadTurns {
			raw += int(s.LastSeq - s.FirstSeq + 1)
		}
	}
	if int64(raw) == p.Turns || historyBytes(t, m, p.Conversation, p.Turns) <= p.MaxBytes/2 {
		t.Fatalf("the history of %s fits the package raw", p.Conversation)
	}
	bytes := float64(p.Bytes) / float64(p.MaxBytes)
	tokens := 0.0
	if p.Budget > 0 {
		tokens = float64(p.Tokens) / float64(p.Budget)
	}
	if max(bytes, tokens) < 0.9 {
		t.Errorf("the package uses %.0f%% of its %d bytes and %.0f%% of its %d tokens:\n%s", 100*bytes, p.MaxBytes, 100*tokens, p.Budget, p.Markdown)
	}
}

// kindsKeys returns the kinds and keys of the package's sections.
func kindsKeys(p *strata.UploadPackage) (kinds, keys []string) {
	for _, s := range p.Sections {
		kinds = append(kinds, s.Kind)
		keys = append(keys, s.Key)
	}
	return kinds, keys
}

// TestUploadTiers builds packages whose today does not fit raw (a session
// of about 44 KB), so that the closed periods before today show as their
// summaries: 003's long-term context and this week, the weeks and days
// after them, or the levels of a policy without calendar levels. The
// newest of today's turns are raw, the others in Earlier Today.
func TestUploadTiers(t *testing.T) {
	tests := []struct {
		name     string
		policy   string
		sessions []session
		now      string
		titles   []string
		kinds    []string
		keys     []string
	}{
		{
			name:     "monthly, this week and today",
			policy:   "calendar",
			sessions: []session{{"2023-04-03 10:00", "s1", 6}, {"2023-04-20 10:00", "s2", 6}, {"2023-05-02 09:00", "s3", 6}},
			now:      "2023-05-09T20:00:00Z",
			titles:   []string{"Long-Term Context", "This Week"},
			kinds:    []string{"monthly", "weekly"},
			keys:     []string{"2023-04", "2023-W18"},
		},
		{
			name:   "no monthly: the weeklies, then the days after them",
			policy: "calendar",
			sessions: []session{{"2023-05-01 09:00", "s1", 4}, {"2023-05-08 09:00", "s2", 4},
				{"2023-05-16 09:00", "s3", 4}},
			now:    "2023-05-17T20:00:00Z",
			titles: []string{"Weekly Context (2023-W18)", "Weekly Context (2023-W19)", "Daily Context (2023-05-16)"},
			kinds:  []string{"weekly", "weekly", "daily"},
			keys:   []string{"2023-W18", "2023-W19", "2023-05-16"},
		},
		{
			name:   "no monthly: every weekly",
			policy: "days-weeks",
			sessions: []session{{"2023-05-01 09:00", "s1", 4}, {"2023-05-08 09:00", "s2", 4}, {"2023-05-15 09:00", "s3", 4},
				{"2023-05-22 09:00", "s4", 4}, {"2023-05-29 09:00", "s5", 4}},
			now: "2023-06-05T20:00:00Z",
			titles: []string{"Weekly Context (2023-W18)", "Weekly Context (2023-W19)", "Weekly Context (2023-W20)",
				"Weekly Context (2023-W21)", "Weekly Context (2023-W22)"},
			kinds: []string{"weekly", "weekly", "weekly", "weekly", "weekly"},
			keys:  []string{"2023-W18", "2023-W19", "2023-W20", "2023-W21", "2023-W22"},
		},
		{
			name:     "no weekly: the dailies",
			policy:   "calendar",
			sessions: []session{{"2023-05-08 09:00", "s1", 4}, {"2023-05-09 09:00", "s2", 4}, {"2023-05-09 21:00", "s3", 2}},
			now:      "2023-05-11T20:00:00Z",
			titles:   []string{"Daily Context (2023-05-08)", "Daily Context (2023-05-09)"},
			kinds:    []string{"daily", "daily"},
			keys:     []string{"2023-05-08", "2023-05-09"},
		},
		{
			name:     "a month and nothing after it closed",
			policy:   "calendar",
			sessions: []session{{"2023-04-03 10:00", "s1", 6}},
			now:      "2023-05-09T20:00:00Z",
			titles:   []string{"Long-Term Context"},
			kinds:    []string{"monthly"},
			keys:     []string{"2023-04"},
		},
		{
			name:   "chunks: the coarsest level, then each finer one after it",
			policy: "chunks",
			sessions: []session{{"2023-05-01 09:00", "s1", 60}, {"2023-05-02 09:00", "s2", 60}, {"2023-05-03 09:00", "s3", 60},
				{"2023-05-04 09:00", "s4", 50}},
			now:    "2023-05-05T20:00:00Z",
			titles: []string{"Macro Context (turns 1-100)", "Long-Term Context", "This Week", "Micro Context (turns 221-230)"},
			kinds:  []string{"monthly", "monthly", "weekly", "daily"},
			keys:   []string{"turns 1-100", "turns 101-200", "turns 201-220", "turns 221-230"},
		},
		{
			name:   "sessions: a core, then the sessions after it",
			policy: "sessions",
			sessions: []session{{"2023-05-01 09:00", "s1", 2}, {"2023-05-01 12:00", "s2", 2}, {"2023-05-01 15:00", "s3", 2},
				{"2023-05-02 09:00", "s4", 2}, {"2023-05-02 12:00", "s5", 2}, {"2023-05-02 15:00", "s6", 2},
				{"2023-05-03 09:00", "s7", 2}, {"2023-05-03 12:00", "s8", 2}, {"2023-05-03 15:00", "s9", 2},
				{"2023-05-03 18:00", "s10", 2}},
			now:    "2023-05-04T20:00:00Z",
			titles: []string{"Long-Term Context", "Session Context (session 9)", "This Week"},
			kinds:  []string{"monthly", "weekly", "weekly"},
			keys:   []string{"turns 1-16", "session 9", "session 10"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := uploadMemory(t)
			now, _ := time.Parse(time.RFC3339, tt.now)
			busy := busyTurns("busy", now.Add(-4*time.Hour), 100, 430)
			turns := append(sessionTurns(t, tt.sessions), busy...)
			if _, err := m.Ingest(context.Background(), strata.Batch{Conversation: "c", Policy: tt.policy, Turns: turns}); err != nil {
				t.Fatal(err)
			}
			p := upload(t, m, strata.UploadRequest{Conversation: "c", Now: now})
			checkFilled(t, m, p)
			n := len(p.Sections)
			if n < 2 || p.Sections[n-2].Title != "Earlier Today" || p.Sections[n-1].Title != "Today Session 01" ||
				p.Sections[n-1].LastSeq != p.Turns || p.Sections[n-2].FirstSeq != p.Turns-99 {
				t.Fatalf("sections %q, want Earlier Today and Today Session 01 at the end", titles(p))
			}
			kinds, keys := kindsKeys(p)
			if !reflect.DeepEqual(titles(p)[:n-2], tt.titles) || !reflect.DeepEqual(kinds[:n-2], tt.kinds) || !reflect.DeepEqual(keys[:n-2], tt.keys) {
				t.Errorf("sections %q %q %q, want %q %q %q", titles(p), kinds, keys, tt.titles, tt.kinds, tt.keys)
			}
			if len(p.Omitted) != 0 {
				t.Errorf("omitted %v", p.Omitted)
			}
			if !strings.Contains(p.Markdown, "\nGenerated: "+tt.now+"\n") {
				t.Errorf("no Generated line for %s:\n%s", tt.now, p.Markdown)
			}
		})
	}
}

// TestUploadRaw: a history that fits the package is shown raw, all of
// it; a package with nothing before the end of today says so.
func TestUploadRaw(t *testing.T) {
	tests := []struct {
		name     string
		sessions []session
		now      string
		titles   []string
		kinds    []string
	}{
		{"today only", []session{{"2023-05-11 09:00", "s1", 4}}, "2023-05-11T23:00:00Z",
			[]string{"Today Session 01"}, []string{"session"}},
		{"no history at all", []session{{"2023-05-11 09:00", "s1", 4}}, "2023-05-01T12:00:00Z", nil, nil},
		{"zero now: the day of the newest turn", []session{{"2023-04-03 10:00", "s1", 6}, {"2023-05-09 09:00", "s2", 4}}, "",
			[]string{"Session 1 (2023-04-03)", "Today Session 01"}, []string{"turns", "session"}},
		{"every turn raw", []session{{"2023-04-03 10:00", "s1", 6}, {"2023-04-20 10:00", "s2", 6},
			{"2023-05-02 09:00", "s3", 6}, {"2023-05-09 09:00", "s4", 4}, {"2023-05-09 18:00", "s5", 4}}, "2023-05-09T20:00:00Z",
			[]string{"Session 1 (2023-04-03)", "Session 2 (2023-04-20)", "Session 3 (2023-05-02)", "Today Session 01", "Today Session 02"},
			[]string{"turns", "turns", "turns", "session", "session"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := uploadMemory(t)
			ingestSessions(t, m, "c", "calendar", tt.sessions)
			var now time.Time
			if tt.now != "" {
				now, _ = time.Parse(time.RFC3339, tt.now)
			}
			p := upload(t, m, strata.UploadRequest{Conversation: "c", Now: now})
			kinds, _ := kindsKeys(p)
			if !reflect.DeepEqual(titles(p), tt.titles) || !reflect.DeepEqual(kinds, tt.kinds) {
				t.Errorf("sections %q %q, want %q %q\n%s", titles(p), kinds, tt.titles, tt.kinds, p.Markdown)
			}
			if len(p.Dropped) != 0 || len(p.Merged) != 0 || len(p.Warnings) != 0 || len(p.Omitted) != 0 {
				t.Errorf("dropped %q, merged %q, warnings %q, omitted %v", p.Dropped, p.Merged, p.Warnings, p.Omitted)
			}
			if tt.titles == nil && (!strings.Contains(p.Markdown, "No history yet") || p.Turns != 0) {
				t.Errorf("an empty package does not say so:\n%s", p.Markdown)
			}
		})
	}
}

// TestUploadToday checks the raw rendering of today's sessions.
func TestUploadToday(t *testing.T) {
	m := uploadMemory(t)
	turns := []strata.Turn{
		{ExtID: "a", SessionLabel: "x", Role: strata.RoleUser, Name: "Ana", Time: time.Date(2023, 5, 9, 7, 5, 0, 0, time.UTC), Content: "Hello.\nA second line.\n\nAfter a blank one."},
		{ExtID: "b", SessionLabel: "x", Role: strata.RoleAssistant, Time: time.Date(2023, 5, 9, 7, 6, 0, 0, time.UTC), Content: "Hi Ana."},
		{ExtID: "c", SessionLabel: "y", Role: strata.RoleUser, Name: "Ana", Time: time.Date(2023, 5, 9, 23, 30, 0, 0, time.UTC), Content: "Late."},
	}
	if _, err := m.Ingest(context.Background(), strata.Batch{Conversation: "c", Policy: "calendar", TimeZone: "Europe/Berlin", Turns: turns}); err != nil {
		t.Fatal(err)
	}
	// 23:30 UTC is 01:30 the next day in Berlin: the day of Now in the
	// conversation's zone holds only the first session.
	p := upload(t, m, strata.UploadRequest{Conversation: "c", Now: time.Date(2023, 5, 9, 12, 0, 0, 0, time.UTC)})
	want := "# Knowledge Primer -- Upload Package\n\nGenerated: 2023-05-09T14:00:00+02:00\nConversation: c\n\n" +
		"## Today Session 01\n\nSession 1 of the conversation, 09:05 .. 09:06, 2 turns.\n\n" +
		"[09:05] Ana: Hello.\n  A second line.\n\n  After a blank one.\n[09:06] assistant: Hi Ana.\n\n---\n\n"
	if p.Markdown != want {
		t.Errorf("package:\n%s\nwant:\n%s", p.Markdown, want)
	}
	if p.Today != "2023-05-09" {
		t.Errorf("today %q", p.Today)
	}
}

// monthlyCase is a conversation with a closed month, a closed week and
// two sessions today, small enough to fit a package raw.
func monthlyCase(t testing.TB) (*strata.Memory, time.Time) {
	m := uploadMemory(t)
	ingestSessions(t, m, "c", "calendar", []session{{"2023-04-03 10:00", "s1", 6}, {"2023-04-20 10:00", "s2", 6},
		{"2023-05-02 09:00", "s3", 6}, {"2023-05-09 09:00", "s4", 4}, {"2023-05-09 18:00", "s5", 4}})
	return m, time.Date(2023, 5, 9, 20, 0, 0, 0, time.UTC)
}

// TestUploadShrink lowers the byte cap below the size of the history:
// the package keeps within it, fills it but for less than a turn and a
// section heading, covers every turn, and shows the newest turn raw; a
// cap of exactly the package's size changes nothing. Under a cap of a
// few turns, what no summary fits is listed as omitted.
func TestUploadShrink(t *testing.T) {
	m, now := monthlyCase(t)
	full := upload(t, m, strata.UploadRequest{Conversation: "c", Now: now})
	same := upload(t, m, strata.UploadRequest{Conversation: "c", Now: now, MaxBytes: full.Bytes})
	if same.Markdown != full.Markdown {
		t.Errorf("a cap of exactly the package's size changed it:\n%s", same.Markdown)
	}
	for _, max := range []int{full.Bytes - 1, full.Bytes * 3 / 4, 2000, 1500, 1200, 900} {
		t.Run(strconv.Itoa(max), func(t *testing.T) {
			p := upload(t, m, strata.UploadRequest{Conversation: "c", Now: now, MaxBytes: max})
			if p.MaxBytes-p.Bytes > 250 {
				t.Errorf("%d of %d bytes:\n%s", p.Bytes, p.MaxBytes, p.Markdown)
			}
			last := p.Sections[len(p.Sections)-1]
			if last.Title != "Today Session 02" || last.LastSeq != p.Turns {
				t.Errorf("sections %q: the newest turn is not raw", titles(p))
			}
			if len(p.Omitted) > 0 && max >= 1500 {
				t.Errorf("omitted %v:\n%s", p.Omitted, p.Markdown)
			}
			t.Logf("%d bytes: %q, omitted %v, dropped %q", p.Bytes, titles(p), p.Omitted, p.Dropped)
		})
	}
}

// TestUploadBusyToday: three sessions of about 44 KB today, with and
// without older days. The package holds today (its newest turns raw, the
// others in a summary), stays within its cap and budget, covers every
// turn and fills at least 90% of its limits.
func TestUploadBusyToday(t *testing.T) {
	for _, older := range []bool{false, true} {
		for _, budget := range []int{0, 4000} {
			t.Run(fmt.Sprintf("older=%v,budget=%d", older, budget), func(t *testing.T) {
				m, now := busyDay(t, older)
				p := upload(t, m, strata.UploadRequest{Conversation: "c", Now: now, Budget: budget})
				checkFilled(t, m, p)
				n := len(p.Sections)
				raw, sum := p.Sections[n-1], p.Sections[n-2]
				if raw.Title != "Today Session 03" || raw.Kind != strata.UploadSession || raw.LastSeq != p.Turns {
					t.Errorf("the last section is %+v, want the newest of today's turns raw", raw)
				}
				if sum.Title != "Earlier Today" || sum.Kind != strata.UploadSummary || sum.FirstSeq != p.Turns-299 || sum.LastSeq != raw.FirstSeq-1 {
					t.Errorf("the section before is %+v, want a summary of today's turns %d-%d", sum, p.Turns-299, raw.FirstSeq-1)
				}
				// Today's first sessions are in Earlier Today: nothing is
				// dropped. A token budget of 4,000 leaves the summaries of
				// March and April 2,000 tokens: they are merged into an
				// overview.
				merged := []string{}
				if older && budget > 0 {
					merged = []string{"Monthly Context (2023-03)", "Long-Term Context"}
				}
				if len(p.Dropped) != 0 || !reflect.DeepEqual(p.Merged, merged) {
					t.Errorf("dropped %q, merged %q, want %q", p.Dropped, p.Merged, merged)
				}
				if len(p.Omitted) > 0 || len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "of today's 300 turns are shown only as a summary") {
					t.Errorf("omitted %v, warnings %q", p.Omitted, p.Warnings)
				}
				if !strings.Contains(p.Markdown, "\nNote: ") || !strings.Contains(p.Markdown, "of today's 300 turns are summarized in Earlier Today") {
					t.Errorf("no note:\n%s", p.Markdown[:400])
				}
				want := []string{"Monthly Context (2023-03)", "Long-Term Context", "Daily Context (2023-05-08)", "Earlier Today", "Today Session 03"}
				if budget > 0 {
					want = []string{"Earlier History (2023-03-20 .. 2023-04-22)", "Daily Context (2023-05-08)", "Earlier Today", "Today Session 03"}
				}
				if !older {
					want = want[len(want)-2:]
				}
				if !reflect.DeepEqual(titles(p), want) {
					t.Errorf("sections %q, want %q", titles(p), want)
				}
				t.Logf("%d bytes, %d tokens: %q", p.Bytes, p.Tokens, titles(p))
			})
		}
	}
}

// TestUploadEarlierHistory: summaries of closed periods that do not fit
// half the package are merged into overviews, oldest first; every turn
// stays covered, and a quiet today leaves the rest to raw turns.
func TestUploadEarlierHistory(t *testing.T) {
	m := uploadMemory(t)
	var turns []strata.Turn
	start := time.Date(2022, 9, 1, 10, 0, 0, 0, time.UTC)
	for d := 0; d < 240; d += 4 {
		turns = append(turns, busyTurns(fmt.Sprintf("d%03d", d), start.AddDate(0, 0, d), 24, 300)...)
	}
	now := start.AddDate(0, 0, 240).Add(8 * time.Hour)
	turns = append(turns, busyTurns("today", now.Add(-2*time.Hour), 6, 200)...)
	if _, err := m.Ingest(context.Background(), strata.Batch{Conversation: "c", Policy: "calendar", Turns: turns}); err != nil {
		t.Fatal(err)
	}
	p := upload(t, m, strata.UploadRequest{Conversation: "c", Now: now})
	checkFilled(t, m, p)
	if p.Sections[0].Kind != strata.UploadSummary || !strings.HasPrefix(p.Sections[0].Title, "Earlier History (2022-09-01 .. ") ||
		p.Sections[0].FirstSeq != 1 {
		t.Errorf("the first section is %+v, want an overview from turn 1", p.Sections[0])
	}
	if len(p.Merged) == 0 || p.Merged[0] != "Monthly Context (2022-09)" || len(p.Dropped) != 0 {
		t.Errorf("merged %q, dropped %q", p.Merged, p.Dropped)
	}
	last := p.Sections[len(p.Sections)-1]
	if last.Title != "Today Session 01" || last.LastSeq != p.Turns || len(p.Omitted) > 0 {
		t.Errorf("sections %q, omitted %v", titles(p), p.Omitted)
	}
	t.Logf("%d bytes: %q, merged %q", p.Bytes, titles(p), p.Merged)
}

// TestUploadLongTurn: today's newest turn alone exceeds the cap. A line
// says it is not shown raw, a summary of today ("Today (Summary)") covers
// it, and the turns before it fill the package.
func TestUploadLongTurn(t *testing.T) {
	m := uploadMemory(t)
	at := time.Date(2023, 5, 9, 9, 0, 0, 0, time.UTC)
	turns := busyTurns("old", at.AddDate(0, 0, -3), 60, 400)
	turns = append(turns, busyTurns("today", at, 30, 300)...)
	turns = append(turns, strata.Turn{ExtID: "long", SessionLabel: "today", Role: strata.RoleTool, Name: "log",
		Time: at.Add(time.Hour), Content: strings.Repeat("error: disk full on /var/lib/db\n", 2000)})
	if _, err := m.Ingest(context.Background(), strata.Batch{Conversation: "c", Policy: "calendar", Turns: turns}); err != nil {
		t.Fatal(err)
	}
	p := upload(t, m, strata.UploadRequest{Conversation: "c", Now: at.Add(2 * time.Hour), MaxBytes: 20000})
	checkFilled(t, m, p)
	if !strings.Contains(p.Markdown, fmt.Sprintf("] log: (turn %d, 64000 bytes: too long to show raw)\n", p.Turns)) {
		t.Errorf("no line for the long turn:\n%s", p.Markdown)
	}
	var sum *strata.UploadSection
	for i, s := range p.Sections {
		if s.Title == "Today (Summary)" {
			sum = &p.Sections[i]
		}
	}
	if sum == nil || sum.FirstSeq != p.Turns || sum.LastSeq != p.Turns {
		t.Errorf("sections %+v: no summary of the long turn", p.Sections)
	}
	t.Logf("%d bytes: %q", p.Bytes, titles(p))
}

// TestUploadBudget: a token budget below the byte cap binds the package,
// which fills it.
func TestUploadBudget(t *testing.T) {
	m, now := busyDay(t, true)
	for _, budget := range []int{500, 2000, 6000} {
		p := upload(t, m, strata.UploadRequest{Conversation: "c", Now: now, Budget: budget})
		checkFilled(t, m, p)
		if p.Sections[len(p.Sections)-1].LastSeq != p.Turns {
			t.Errorf("budget %d: sections %q, the newest turn is not raw", budget, titles(p))
		}
		t.Logf("budget %d: %d tokens, %d bytes, %q, omitted %v", budget, p.Tokens, p.Bytes, titles(p), p.Omitted)
	}
}

func TestUploadFixedSections(t *testing.T) {
	m, now := monthlyCase(t)
	secs := []strata.Section{{Title: "Rules", Text: "Be brief.\n"}, {Title: "Project", Text: "strata"}}
	p := upload(t, m, strata.UploadRequest{Conversation: "c", Now: now, Sections: secs})
	if got := titles(p)[:3]; !reflect.DeepEqual(got, []string{"Rules", "Project", "Session 1 (2023-04-03)"}) {
		t.Errorf("sections %q", titles(p))
	}
	if !strings.Contains(p.Markdown, "\n\n## Rules\n\nBe brief.\n\n---\n\n## Project\n\nstrata\n\n---\n\n## Session 1 (2023-04-03)\n\n") {
		t.Errorf("fixed sections:\n%s", p.Markdown)
	}
	if p.Sections[0].Kind != strata.UploadFixed {
		t.Errorf("kind %q", p.Sections[0].Kind)
	}
}

func TestUploadErrors(t *testing.T) {
	m, now := monthlyCase(t)
	tests := []struct {
		name string
		req  strata.UploadRequest
		code string
		msg  string
	}{
		{"no conversation", strata.UploadRequest{}, strata.EINVALID, "conversation id is empty"},
		{"unknown conversation", strata.UploadRequest{Conversation: "nope"}, strata.ENOTFOUND, "nope"},
		{"negative cap", strata.UploadRequest{Conversation: "c", MaxBytes: -1}, strata.EINVALID, "max bytes -1 is negative"},
		{"negative budget", strata.UploadRequest{Conversation: "c", Budget: -5}, strata.EINVALID, "budget -5 is negative"},
		{"empty section title", strata.UploadRequest{Conversation: "c", Sections: []strata.Section{{Text: "x"}}}, strata.EINVALID, "section 1: a title"},
		{"cap below the title", strata.UploadRequest{Conversation: "c", Now: now, MaxBytes: 20}, strata.EINVALID, "max bytes 20 is too small: the package's title take"},
		{"fixed sections over the cap", strata.UploadRequest{Conversation: "c", Now: now, MaxBytes: 200,
			Sections: []strata.Section{{Title: "Big", Text: strings.Repeat("x", 300)}}}, strata.EINVALID, "the title and 1 fixed sections take"},
		{"fixed sections over the budget", strata.UploadRequest{Conversation: "c", Now: now, Budget: 50,
			Sections: []strata.Section{{Title: "Big", Text: strings.Repeat("x", 300)}}}, strata.EINVALID, "budget 50 is too small"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := m.Upload(context.Background(), tt.req)
			if strata.ErrorCode(err) != tt.code || err == nil || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %v (%s), want %s containing %q", err, strata.ErrorCode(err), tt.code, tt.msg)
			}
		})
	}
}

// TestUploadDeterministic builds the same package twice from one store and
// once from another store with the same input: the bytes are the same.
func TestUploadDeterministic(t *testing.T) {
	m1, now := busyDay(t, true)
	m2, _ := busyDay(t, true)
	a := upload(t, m1, strata.UploadRequest{Conversation: "c", Now: now})
	b := upload(t, m1, strata.UploadRequest{Conversation: "c", Now: now})
	c := upload(t, m2, strata.UploadRequest{Conversation: "c", Now: now})
	if a.Markdown != b.Markdown || a.Markdown != c.Markdown || !reflect.DeepEqual(a, c) {
		t.Error("the same request gave different packages")
	}
}

// TestUploadLoCoMo imports every LoCoMo conversation with the calendar
// policy and checks that each upload package stays within 35 KB, covers
// the whole conversation, fills at least 90% of the cap, and ends with
// today's session raw.
func TestUploadLoCoMo(t *testing.T) {
	path := os.Getenv("STRATA_LOCOMO")
	if path == "" {
		t.Skip("set STRATA_LOCOMO to the path of locomo-dev.json to run this test")
	}
	ctx := context.Background()
	m := uploadMemory(t)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := formats.Open(formats.LoCoMo, path, f)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.ImportWith(ctx, strata.ImportOptions{Policy: "calendar"}, func() (string, strata.Turn, error) {
		rec, err := r.Next()
		return rec.Conversation, rec.Turn, err
	}); err != nil && err != io.EOF {
		t.Fatal(err)
	}
	cs, err := m.Conversations(ctx)
	if err != nil || len(cs) != 5 {
		t.Fatalf("%d conversations, %v", len(cs), err)
	}
	for _, c := range cs {
		p := upload(t, m, strata.UploadRequest{Conversation: c.ID})
		checkFilled(t, m, p)
		ts := titles(p)
		if p.Turns != c.Turns || len(p.Omitted) > 0 || ts[len(ts)-1] != "Today Session 01" {
			t.Errorf("%s: %d of %d turns, omitted %v, sections %q", c.ID, p.Turns, c.Turns, p.Omitted, ts)
		}
		t.Logf("%s: %d bytes, %d tokens (%s), sections %q", c.ID, p.Bytes, p.Tokens, p.Tokenizer, ts)
	}
}

// busyTurns is one session of n turns starting at the given time, a
// minute apart, each about size bytes of varied text.
func busyTurns(label string, at time.Time, n, size int) []strata.Turn {
	places := []string{"Lisbon", "Oslo", "Kyoto", "Quito", "Tunis", "Perth", "Lima", "Riga"}
	things := []string{"invoice", "shipment", "router", "boiler", "contract", "garden", "ferry", "piano"}
	var out []strata.Turn
	for i := range n {
		name, role := "Ana", strata.RoleUser
		if i%2 == 1 {
			name, role = "Ben", strata.RoleAssistant
		}
		var b strings.Builder
		for k := 0; b.Len() < size; k++ {
			fmt.Fprintf(&b, "%s %d of %s went to %s on %s at %02d:%02d, order %s-%d-%d. ", things[(i+k)%len(things)], i*7+k,
				label, places[(i*3+k)%len(places)], at.Format("Jan 2"), (at.Hour()+i/60)%24, i%60, label, i, k)
		}
		out = append(out, strata.Turn{ExtID: fmt.Sprintf("%s-%d", label, i), SessionLabel: label, Role: role, Name: name,
			Time: at.Add(time.Duration(i) * time.Minute), Content: strings.TrimSpace(b.String())})
	}
	return out
}

// busyDay is a conversation whose "today" (2023-05-09) holds three
// sessions of about 44 KB each, with, if older is set, two months of
// history before it.
func busyDay(t testing.TB, older bool) (*strata.Memory, time.Time) {
	t.Helper()
	m := uploadMemory(t)
	var turns []strata.Turn
	if older {
		for d := 0; d < 36; d += 3 {
			at := time.Date(2023, 3, 20, 10, 0, 0, 0, time.UTC).AddDate(0, 0, d)
			turns = append(turns, busyTurns(fmt.Sprintf("old%02d", d), at, 20, 300)...)
		}
		turns = append(turns, busyTurns("yesterday", time.Date(2023, 5, 8, 10, 0, 0, 0, time.UTC), 20, 300)...)
	}
	for i, h := range []int{8, 12, 17} {
		turns = append(turns, busyTurns(fmt.Sprintf("today%d", i+1), time.Date(2023, 5, 9, h, 0, 0, 0, time.UTC), 100, 430)...)
	}
	if _, err := m.Ingest(context.Background(), strata.Batch{Conversation: "c", Policy: "calendar", Turns: turns}); err != nil {
		t.Fatal(err)
	}
	return m, time.Date(2023, 5, 9, 20, 0, 0, 0, time.UTC)
}
