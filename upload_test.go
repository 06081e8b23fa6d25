package strata_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/extractive"
	"github.com/strata-memory/strata/formats"
	"github.com/strata-memory/strata/sqlite"
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
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "strata.db"))
	if err != nil {
		t.Fatal(err)
	}
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
}

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
			name:   "monthly, this week and today",
			policy: "calendar",
			sessions: []session{{"2023-04-03 10:00", "s1", 6}, {"2023-04-20 10:00", "s2", 6},
				{"2023-05-02 09:00", "s3", 6}, {"2023-05-09 09:00", "s4", 4}, {"2023-05-09 18:00", "s5", 4}},
			now:    "2023-05-09T20:00:00Z",
			titles: []string{"Long-Term Context", "This Week", "Today Session 01", "Today Session 02"},
			kinds:  []string{"monthly", "weekly", "session", "session"},
			keys:   []string{"2023-04", "2023-W18", "session 4", "session 5"},
		},
		{
			name:   "no monthly: the latest weeklies, oldest first",
			policy: "calendar",
			sessions: []session{{"2023-05-01 09:00", "s1", 4}, {"2023-05-08 09:00", "s2", 4},
				{"2023-05-16 09:00", "s3", 4}, {"2023-05-17 09:00", "s4", 4}},
			now:    "2023-05-17T12:00:00Z",
			titles: []string{"Weekly Context (2023-W18)", "Weekly Context (2023-W19)", "Today Session 01"},
			kinds:  []string{"weekly", "weekly", "session"},
			keys:   []string{"2023-W18", "2023-W19", "session 4"},
		},
		{
			name:   "no monthly: at most four weeklies",
			policy: "days-weeks",
			sessions: []session{{"2023-05-01 09:00", "s1", 4}, {"2023-05-08 09:00", "s2", 4}, {"2023-05-15 09:00", "s3", 4},
				{"2023-05-22 09:00", "s4", 4}, {"2023-05-29 09:00", "s5", 4}, {"2023-06-05 09:00", "s6", 4}},
			now: "2023-06-05T12:00:00Z",
			titles: []string{"Weekly Context (2023-W19)", "Weekly Context (2023-W20)", "Weekly Context (2023-W21)",
				"Weekly Context (2023-W22)", "Today Session 01"},
			kinds: []string{"weekly", "weekly", "weekly", "weekly", "session"},
			keys:  []string{"2023-W19", "2023-W20", "2023-W21", "2023-W22", "session 6"},
		},
		{
			name:   "no weekly: the latest dailies",
			policy: "calendar",
			sessions: []session{{"2023-05-08 09:00", "s1", 4}, {"2023-05-09 09:00", "s2", 4},
				{"2023-05-09 21:00", "s3", 2}, {"2023-05-11 09:00", "s4", 4}},
			now:    "2023-05-11T12:00:00Z",
			titles: []string{"Daily Context (2023-05-08)", "Daily Context (2023-05-09)", "Today Session 01"},
			kinds:  []string{"daily", "daily", "session"},
			keys:   []string{"2023-05-08", "2023-05-09", "session 4"},
		},
		{
			name:     "today only",
			policy:   "calendar",
			sessions: []session{{"2023-05-11 09:00", "s1", 4}},
			now:      "2023-05-11T23:00:00Z",
			titles:   []string{"Today Session 01"},
			kinds:    []string{"session"},
			keys:     []string{"session 1"},
		},
		{
			name:     "no history at all",
			policy:   "calendar",
			sessions: []session{{"2023-05-11 09:00", "s1", 4}},
			now:      "2023-05-01T12:00:00Z",
		},
		{
			name:     "zero now: the day of the newest turn",
			policy:   "calendar",
			sessions: []session{{"2023-04-03 10:00", "s1", 6}, {"2023-05-09 09:00", "s2", 4}},
			titles:   []string{"Long-Term Context", "This Week", "Today Session 01"},
			kinds:    []string{"monthly", "weekly", "session"},
			keys:     []string{"2023-04", "2023-W14", "session 2"},
		},
		{
			name:   "chunks: the coarsest level, then the finer one after it",
			policy: "chunks",
			sessions: []session{{"2023-05-01 09:00", "s1", 60}, {"2023-05-02 09:00", "s2", 60}, {"2023-05-03 09:00", "s3", 60},
				{"2023-05-04 09:00", "s4", 50}, {"2023-05-05 09:00", "s5", 5}},
			now:    "2023-05-05T12:00:00Z",
			titles: []string{"Long-Term Context", "This Week", "Today Session 01"},
			kinds:  []string{"monthly", "weekly", "session"},
			keys:   []string{"turns 101-200", "turns 201-220", "session 5"},
		},
		{
			name:   "sessions: a core, then the latest session after it",
			policy: "sessions",
			sessions: []session{{"2023-05-01 09:00", "s1", 2}, {"2023-05-01 12:00", "s2", 2}, {"2023-05-01 15:00", "s3", 2},
				{"2023-05-02 09:00", "s4", 2}, {"2023-05-02 12:00", "s5", 2}, {"2023-05-02 15:00", "s6", 2},
				{"2023-05-03 09:00", "s7", 2}, {"2023-05-03 12:00", "s8", 2}, {"2023-05-03 15:00", "s9", 2},
				{"2023-05-03 18:00", "s10", 2}, {"2023-05-04 09:00", "s11", 2}},
			now:    "2023-05-04T12:00:00Z",
			titles: []string{"Long-Term Context", "This Week", "Today Session 01"},
			kinds:  []string{"monthly", "weekly", "session"},
			keys:   []string{"turns 1-16", "session 10", "session 11"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := uploadMemory(t)
			ingestSessions(t, m, "c", tt.policy, tt.sessions)
			var now time.Time
			if tt.now != "" {
				now, _ = time.Parse(time.RFC3339, tt.now)
			}
			p := upload(t, m, strata.UploadRequest{Conversation: "c", Now: now})
			var kinds, keys []string
			for _, s := range p.Sections {
				kinds = append(kinds, s.Kind)
				keys = append(keys, s.Key)
			}
			if !reflect.DeepEqual(titles(p), tt.titles) || !reflect.DeepEqual(kinds, tt.kinds) || !reflect.DeepEqual(keys, tt.keys) {
				t.Errorf("sections %q %q %q, want %q %q %q\n%s", titles(p), kinds, keys, tt.titles, tt.kinds, tt.keys, p.Markdown)
			}
			if len(p.Dropped) != 0 || len(p.Warnings) != 0 {
				t.Errorf("dropped %q, warnings %q", p.Dropped, p.Warnings)
			}
			if tt.titles == nil && !strings.Contains(p.Markdown, "No history yet") {
				t.Errorf("an empty package does not say so:\n%s", p.Markdown)
			}
			if tt.now != "" && !strings.Contains(p.Markdown, "\nGenerated: "+tt.now+"\n") {
				t.Errorf("no Generated line for %s:\n%s", tt.now, p.Markdown)
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

// monthlyCase is a conversation with a long-term context, this week and
// two sessions today.
func monthlyCase(t testing.TB) (*strata.Memory, time.Time) {
	m := uploadMemory(t)
	ingestSessions(t, m, "c", "calendar", []session{{"2023-04-03 10:00", "s1", 6}, {"2023-04-20 10:00", "s2", 6},
		{"2023-05-02 09:00", "s3", 6}, {"2023-05-09 09:00", "s4", 4}, {"2023-05-09 18:00", "s5", 4}})
	return m, time.Date(2023, 5, 9, 20, 0, 0, 0, time.UTC)
}

// TestUploadTrimOrder lowers the byte cap one section at a time: This
// Week goes first, then the long-term context, then today's oldest
// session; the cap is exact.
func TestUploadTrimOrder(t *testing.T) {
	m, now := monthlyCase(t)
	full := upload(t, m, strata.UploadRequest{Conversation: "c", Now: now})
	sec := map[string]int{}
	for _, s := range full.Sections {
		sec[s.Title] = s.Bytes
	}
	noWeek := full.Bytes - sec["This Week"]
	noLong := noWeek - sec["Long-Term Context"]
	tests := []struct {
		name     string
		max      int
		titles   []string
		dropped  []string
		warnings int
	}{
		{"exactly the full size", full.Bytes, titles(full), nil, 0},
		{"one byte less", full.Bytes - 1, []string{"Long-Term Context", "Today Session 01", "Today Session 02"}, []string{"This Week"}, 0},
		{"without this week, exactly", noWeek, []string{"Long-Term Context", "Today Session 01", "Today Session 02"}, []string{"This Week"}, 0},
		{"without this week, one byte less", noWeek - 1, []string{"Today Session 01", "Today Session 02"}, []string{"This Week", "Long-Term Context"}, 0},
		{"today only, exactly", noLong, []string{"Today Session 01", "Today Session 02"}, []string{"This Week", "Long-Term Context"}, 0},
		{"today alone exceeds", noLong - 1, []string{"Today Session 02"}, []string{"This Week", "Long-Term Context", "Today Session 01"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := upload(t, m, strata.UploadRequest{Conversation: "c", Now: now, MaxBytes: tt.max})
			if !reflect.DeepEqual(titles(p), tt.titles) || !reflect.DeepEqual(p.Dropped, append([]string{}, tt.dropped...)) {
				t.Errorf("sections %q, dropped %q; want %q, %q", titles(p), p.Dropped, tt.titles, tt.dropped)
			}
			if len(p.Warnings) != tt.warnings {
				t.Errorf("warnings %q, want %d", p.Warnings, tt.warnings)
			}
			note := strings.Contains(p.Markdown, "Note: today's session 01 is left out")
			if note != (tt.warnings > 0) {
				t.Errorf("note in the package: %v, want %v\n%s", note, tt.warnings > 0, p.Markdown)
			}
			if tt.max == full.Bytes && p.Markdown != full.Markdown {
				t.Error("a cap of exactly the package's size changed it")
			}
		})
	}
}

// TestUploadFallbackTrim drops the oldest weekly of the fallback first.
func TestUploadFallbackTrim(t *testing.T) {
	m := uploadMemory(t)
	ingestSessions(t, m, "c", "calendar", []session{{"2023-05-01 09:00", "s1", 4}, {"2023-05-08 09:00", "s2", 4},
		{"2023-05-16 09:00", "s3", 4}, {"2023-05-17 09:00", "s4", 4}})
	now := time.Date(2023, 5, 17, 12, 0, 0, 0, time.UTC)
	full := upload(t, m, strata.UploadRequest{Conversation: "c", Now: now})
	p := upload(t, m, strata.UploadRequest{Conversation: "c", Now: now, MaxBytes: full.Bytes - 1})
	if want := []string{"Weekly Context (2023-W18)"}; !reflect.DeepEqual(p.Dropped, want) {
		t.Errorf("dropped %q, want %q", p.Dropped, want)
	}
	p = upload(t, m, strata.UploadRequest{Conversation: "c", Now: now, MaxBytes: full.Bytes - full.Sections[0].Bytes - 1})
	if want := []string{"Weekly Context (2023-W18)", "Weekly Context (2023-W19)"}; !reflect.DeepEqual(p.Dropped, want) {
		t.Errorf("dropped %q, want %q", p.Dropped, want)
	}
}

// TestUploadAloneTooBig drops a section that alone exceeds the cap and
// keeps the rest.
func TestUploadAloneTooBig(t *testing.T) {
	m := uploadMemory(t)
	ingestSessions(t, m, "c", "calendar", []session{{"2023-04-03 10:00", "s1", 6}, {"2023-05-09 08:00", "big", 120},
		{"2023-05-09 18:00", "s3", 2}})
	now := time.Date(2023, 5, 9, 20, 0, 0, 0, time.UTC)
	full := upload(t, m, strata.UploadRequest{Conversation: "c", Now: now})
	var big int
	for _, s := range full.Sections {
		if s.Title == "Today Session 01" {
			big = s.Bytes
		}
	}
	p := upload(t, m, strata.UploadRequest{Conversation: "c", Now: now, MaxBytes: big})
	if want := []string{"Long-Term Context", "This Week", "Today Session 02"}; !reflect.DeepEqual(titles(p), want) {
		t.Errorf("sections %q, want %q", titles(p), want)
	}
	if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "Today Session 01 (session 2, 120 turns") || !strings.Contains(p.Warnings[0], "alone exceeds") {
		t.Errorf("warnings %q", p.Warnings)
	}
	if !strings.Contains(p.Markdown, "Note: today's session 01 is left out, to keep the package within") {
		t.Errorf("no note:\n%s", p.Markdown)
	}
}

func TestUploadBudget(t *testing.T) {
	m, now := monthlyCase(t)
	full := upload(t, m, strata.UploadRequest{Conversation: "c", Now: now})
	for _, budget := range []int{full.Tokens, full.Tokens - 1, full.Tokens / 2, full.Tokens / 4} {
		p := upload(t, m, strata.UploadRequest{Conversation: "c", Now: now, Budget: budget})
		if p.Tokens > budget {
			t.Errorf("budget %d: %d tokens", budget, p.Tokens)
		}
		if (budget == full.Tokens) != (len(p.Dropped) == 0) {
			t.Errorf("budget %d of %d: dropped %q", budget, full.Tokens, p.Dropped)
		}
	}
}

func TestUploadFixedSections(t *testing.T) {
	m, now := monthlyCase(t)
	secs := []strata.Section{{Title: "Rules", Text: "Be brief.\n"}, {Title: "Project", Text: "strata"}}
	p := upload(t, m, strata.UploadRequest{Conversation: "c", Now: now, Sections: secs})
	if got := titles(p)[:3]; !reflect.DeepEqual(got, []string{"Rules", "Project", "Long-Term Context"}) {
		t.Errorf("sections %q", titles(p))
	}
	if !strings.Contains(p.Markdown, "\n\n## Rules\n\nBe brief.\n\n---\n\n## Project\n\nstrata\n\n---\n\n## Long-Term Context\n\n") {
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
	m1, now := monthlyCase(t)
	m2, _ := monthlyCase(t)
	a := upload(t, m1, strata.UploadRequest{Conversation: "c", Now: now})
	b := upload(t, m1, strata.UploadRequest{Conversation: "c", Now: now})
	c := upload(t, m2, strata.UploadRequest{Conversation: "c", Now: now})
	if a.Markdown != b.Markdown || a.Markdown != c.Markdown || !reflect.DeepEqual(a, c) {
		t.Error("the same request gave different packages")
	}
}

// TestUploadLoCoMo imports every LoCoMo conversation with the calendar
// policy and checks that each upload package stays within 35 KB and shows
// a long-term context and today's session.
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
		if p.Bytes > strata.DefaultUploadBytes || len(p.Dropped) > 0 {
			t.Errorf("%s: %d bytes, dropped %q", c.ID, p.Bytes, p.Dropped)
		}
		ts := titles(p)
		if len(ts) < 3 || ts[0] != "Long-Term Context" || ts[1] != "This Week" || ts[len(ts)-1] != "Today Session 01" {
			t.Errorf("%s: sections %q", c.ID, ts)
		}
		t.Logf("%s: %d bytes, %d tokens (%s), sections %q", c.ID, p.Bytes, p.Tokens, p.Tokenizer, ts)
	}
}
