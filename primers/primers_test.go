package primers_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/extractive"
	"github.com/strata-memory/strata/primers"
	"github.com/strata-memory/strata/sqlite"
)

// newMemory opens a Memory over a fresh SQLite file whose clock is past
// every test's turns, so every period closes at rollup.
func newMemory(t testing.TB) *strata.Memory {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "strata.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	m, err := strata.New(strata.Config{Store: st, Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New(),
		Now: func() time.Time { return time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// session is n turns of one session from the given time, a minute apart.
type session struct {
	at    string // "2023-05-08 13:56"
	label string
	n     int
}

func ingest(t testing.TB, m *strata.Memory, conv, policy string, ss []session) {
	t.Helper()
	var turns []strata.Turn
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
			turns = append(turns, strata.Turn{ExtID: fmt.Sprintf("%s-%d", s.label, i), SessionLabel: s.label, Role: role, Name: name,
				Time:    at.Add(time.Duration(i) * time.Minute),
				Content: fmt.Sprintf("%s planted %d tomatoes in the garden on %s. The boat needs paint.", name, 10+i, s.at)})
		}
	}
	if _, err := m.Ingest(context.Background(), strata.Batch{Conversation: conv, Policy: policy, Turns: turns}); err != nil {
		t.Fatal(err)
	}
}

// tree returns every file under dir (relative, slash-separated) with the
// hash of its content.
func tree(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		h := sha256.Sum256(data)
		out[filepath.ToSlash(rel)] = hex.EncodeToString(h[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func export(t testing.TB, m *strata.Memory, dir string, now time.Time) primers.Result {
	t.Helper()
	res, err := primers.Export(context.Background(), m, "c", dir, now)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

var calendarSessions = []session{
	{"2023-04-03 10:00", "s1", 6}, {"2023-04-20 10:00", "s2", 6}, {"2023-05-02 09:00", "s3", 6},
	{"2023-05-09 09:00", "s4", 4}, {"2023-05-09 18:00", "s5", 4}, {"2023-05-10 09:00", "s6", 4},
}

func TestExportTree(t *testing.T) {
	tests := []struct {
		name   string
		policy string
		now    time.Time
		files  []string
		source string // in every weekly and monthly file
	}{
		{
			name:   "calendar, mid-week",
			policy: "calendar",
			now:    time.Date(2023, 5, 10, 20, 0, 0, 0, time.UTC),
			files: []string{
				"archive/2023-Q2/2023-04-03_session_01.md",
				"daily/2023-04-20_session_01.md", "daily/2023-05-02_session_01.md",
				"daily/2023-05-09_session_01.md", "daily/2023-05-09_session_02.md", "daily/2023-05-10_session_01.md",
				"monthly/2023-04.md", "upload/UPLOAD_PACKAGE.md",
				"weekly/2023-W14.md", "weekly/2023-W16.md", "weekly/2023-W18.md",
			},
			source: "Source: ",
		},
		{
			name:   "calendar, zero now: the day of the newest turn",
			policy: "calendar",
			files: []string{
				"archive/2023-Q2/2023-04-03_session_01.md",
				"daily/2023-04-20_session_01.md", "daily/2023-05-02_session_01.md",
				"daily/2023-05-09_session_01.md", "daily/2023-05-09_session_02.md", "daily/2023-05-10_session_01.md",
				"monthly/2023-04.md", "upload/UPLOAD_PACKAGE.md",
				"weekly/2023-W14.md", "weekly/2023-W16.md", "weekly/2023-W18.md",
			},
			source: "Source: ",
		},
		{
			name:   "calendar, months later",
			policy: "calendar",
			now:    time.Date(2023, 7, 1, 0, 0, 0, 0, time.UTC),
			files: []string{
				"archive/2023-Q2/2023-04-03_session_01.md", "archive/2023-Q2/2023-04-20_session_01.md",
				"archive/2023-Q2/2023-05-02_session_01.md", "archive/2023-Q2/2023-05-09_session_01.md",
				"archive/2023-Q2/2023-05-09_session_02.md", "archive/2023-Q2/2023-05-10_session_01.md",
				"monthly/2023-04.md", "monthly/2023-05.md", "upload/UPLOAD_PACKAGE.md",
				"weekly/2023-W14.md", "weekly/2023-W16.md", "weekly/2023-W18.md", "weekly/2023-W19.md",
			},
			source: "Source: ",
		},
		{
			name:   "chunks: weeks and months summarized from their turns",
			policy: "chunks",
			now:    time.Date(2023, 5, 10, 20, 0, 0, 0, time.UTC),
			files: []string{
				"archive/2023-Q2/2023-04-03_session_01.md",
				"daily/2023-04-20_session_01.md", "daily/2023-05-02_session_01.md",
				"daily/2023-05-09_session_01.md", "daily/2023-05-09_session_02.md", "daily/2023-05-10_session_01.md",
				"monthly/2023-04.md", "upload/UPLOAD_PACKAGE.md",
				"weekly/2023-W14.md", "weekly/2023-W16.md", "weekly/2023-W18.md",
			},
			source: "Source: a summary of the",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newMemory(t)
			ingest(t, m, "c", tt.policy, calendarSessions)
			dir := filepath.Join(t.TempDir(), "primers")
			res := export(t, m, dir, tt.now)
			if !reflect.DeepEqual(res.Files, tt.files) {
				t.Errorf("files %q, want %q", res.Files, tt.files)
			}
			if res.Written != len(tt.files) || res.Unchanged != 0 || res.Moved != 0 || res.WrittenInArchive != inArchive(tt.files) {
				t.Errorf("first export: %+v", res)
			}
			first := tree(t, dir)
			if len(first) != len(tt.files) {
				t.Errorf("the tree holds %d files, want %d: %v", len(first), len(tt.files), first)
			}
			for _, f := range tt.files {
				data, _ := os.ReadFile(filepath.Join(dir, f))
				if (strings.HasPrefix(f, "weekly/") || strings.HasPrefix(f, "monthly/")) && !strings.Contains(string(data), tt.source) {
					t.Errorf("%s does not say %q:\n%s", f, tt.source, data)
				}
			}
			// Again: nothing written, byte for byte the same tree.
			res = export(t, m, dir, tt.now)
			if res.Written != 0 || res.Unchanged != len(tt.files) || res.Moved != 0 {
				t.Errorf("second export: %+v", res)
			}
			if second := tree(t, dir); !reflect.DeepEqual(first, second) {
				t.Errorf("the second export changed the tree:\n%v\n%v", first, second)
			}
		})
	}
}

func TestExportDailyContent(t *testing.T) {
	m := newMemory(t)
	ingest(t, m, "c", "calendar", calendarSessions)
	dir := t.TempDir()
	export(t, m, dir, time.Date(2023, 5, 10, 20, 0, 0, 0, time.UTC))
	data, err := os.ReadFile(filepath.Join(dir, "daily", "2023-05-09_session_02.md"))
	if err != nil {
		t.Fatal(err)
	}
	want := "# Daily Primer -- 2023-05-09 Session 02\n\nConversation: c\nDate: 2023-05-09 (Tuesday)\n" +
		"Session: 02 of the day (session 5 of the conversation)\nTime: 18:00 .. 18:03 (UTC)\nTurns: 4 (seq 23-26)\n\n## Summary\n\n"
	if !strings.HasPrefix(string(data), want) {
		t.Errorf("daily file:\n%s\nwant it to start:\n%s", data, want)
	}
	if !strings.Contains(string(data), "\n## Key Facts\n\n- ") {
		t.Errorf("daily file without facts:\n%s", data)
	}
	week, _ := os.ReadFile(filepath.Join(dir, "weekly", "2023-W18.md"))
	if !strings.HasPrefix(string(week), "# Weekly Primer -- 2023-W18\n\nConversation: c\nWeek: 2023-W18, 2023-05-01 .. 2023-05-07\nTurns: seq 13-18\nSource: week node n") {
		t.Errorf("weekly file:\n%s", week)
	}
	up, _ := os.ReadFile(filepath.Join(dir, "upload", "UPLOAD_PACKAGE.md"))
	pkg, err := m.Upload(context.Background(), strata.UploadRequest{Conversation: "c", Now: time.Date(2023, 5, 10, 20, 0, 0, 0, time.UTC)})
	if err != nil || string(up) != pkg.Markdown {
		t.Errorf("the upload file is not the upload package (%v)", err)
	}
}

// TestExportLater exports on 10 May, then on 5 June: the dailies that are
// now more than 30 days old move to the archive, the other files stay, and
// a file strata did not write is left alone.
func TestExportLater(t *testing.T) {
	m := newMemory(t)
	ingest(t, m, "c", "calendar", calendarSessions)
	dir := t.TempDir()
	export(t, m, dir, time.Date(2023, 5, 10, 20, 0, 0, 0, time.UTC))
	foreign := filepath.Join(dir, "daily", "notes.md")
	if err := os.WriteFile(foreign, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	kept := filepath.Join(dir, "weekly", "2023-W14.md")
	os.Chtimes(kept, old, old)

	later := time.Date(2023, 6, 5, 9, 0, 0, 0, time.UTC)
	res := export(t, m, dir, later)
	// Moved: the dailies of 20 April and 2 May (46 and 34 days old).
	// Written: weekly/2023-W19.md, monthly/2023-05.md and the upload
	// package (its reference time changed).
	if res.Moved != 2 || res.Written != 3 || res.WrittenInArchive != 0 {
		t.Errorf("later export: %+v", res)
	}
	for _, f := range []string{"2023-05-09_session_01.md", "2023-05-09_session_02.md", "2023-05-10_session_01.md"} {
		if _, err := os.Stat(filepath.Join(dir, "daily", f)); err != nil {
			t.Errorf("daily/%s, 27 days old, is not live: %v", f, err)
		}
	}
	for _, f := range []string{"2023-04-20_session_01.md", "2023-05-02_session_01.md"} {
		if _, err := os.Stat(filepath.Join(dir, "daily", f)); !os.IsNotExist(err) {
			t.Errorf("daily/%s is still there (%v)", f, err)
		}
		if _, err := os.Stat(filepath.Join(dir, "archive", "2023-Q2", f)); err != nil {
			t.Errorf("archive/2023-Q2/%s: %v", f, err)
		}
	}
	if data, err := os.ReadFile(foreign); err != nil || string(data) != "mine" {
		t.Errorf("a foreign file changed: %q, %v", data, err)
	}
	if fi, err := os.Stat(kept); err != nil || !fi.ModTime().Equal(old) {
		t.Errorf("an unchanged file was rewritten")
	}
	// A file changed by hand is written back.
	daily := filepath.Join(dir, "archive", "2023-Q2", "2023-05-02_session_01.md")
	want, _ := os.ReadFile(daily)
	os.WriteFile(daily, []byte("edited"), 0o644)
	res = export(t, m, dir, later)
	if got, _ := os.ReadFile(daily); res.Written != 1 || res.WrittenInArchive != 1 || string(got) != string(want) {
		t.Errorf("an edited file: %+v, %q", res, got)
	}
	// No temporary file is left behind.
	for f := range tree(t, dir) {
		if strings.Contains(f, ".tmp-") {
			t.Errorf("temporary file %s left", f)
		}
	}
}

func TestExportErrors(t *testing.T) {
	m := newMemory(t)
	ingest(t, m, "c", "calendar", calendarSessions)
	base := t.TempDir()
	file := filepath.Join(base, "file")
	os.WriteFile(file, []byte("x"), 0o644)
	blocked := filepath.Join(base, "blocked")
	os.MkdirAll(filepath.Join(blocked, "upload", "UPLOAD_PACKAGE.md"), 0o755)
	tests := []struct {
		name, conv, dir string
		code, msg       string
	}{
		{"a file, not a folder", "c", file, strata.EINVALID, file + " is not a directory"},
		{"no folder", "c", "", strata.EINVALID, "no directory"},
		{"unknown conversation", "nope", filepath.Join(base, "x"), strata.ENOTFOUND, "nope"},
		{"a folder where a file goes", "c", blocked, strata.EINTERNAL, filepath.Join(blocked, "upload", "UPLOAD_PACKAGE.md")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := primers.Export(context.Background(), m, tt.conv, tt.dir, time.Time{})
			if err == nil || strata.ErrorCode(err) != tt.code || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %v (%s), want %s naming %q", err, strata.ErrorCode(err), tt.code, tt.msg)
			}
		})
	}
}

// monthsOfSessions is one 4-turn session every six days from 2 January to
// 25 June 2023, and on 30 and 31 May: 30 and 31 days before 30 June.
func monthsOfSessions() []session {
	var ss []session
	for d := time.Date(2023, 1, 2, 10, 0, 0, 0, time.UTC); !d.After(time.Date(2023, 6, 26, 0, 0, 0, 0, time.UTC)); d = d.AddDate(0, 0, 6) {
		ss = append(ss, session{d.Format("2006-01-02 15:04"), d.Format("s0102"), 4})
		if d.Month() == 5 && d.Day() == 26 {
			ss = append(ss, session{"2023-05-30 10:00", "s0530", 4}, session{"2023-05-31 10:00", "s0531", 4})
		}
	}
	return ss
}

// archivedOn30June is the tree of monthsOfSessions exported on 30 June
// 2023: dailies older than 30 days (30 May and before) and weeklies older
// than 12 weeks (2023-W13, 27 March to 2 April, and before) are in the
// archive folder of their quarter (a week's is its Thursday's).
var archivedOn30June = []string{
	"archive/2023-Q1/2023-01-02_session_01.md", "archive/2023-Q1/2023-01-08_session_01.md",
	"archive/2023-Q1/2023-01-14_session_01.md", "archive/2023-Q1/2023-01-20_session_01.md",
	"archive/2023-Q1/2023-01-26_session_01.md", "archive/2023-Q1/2023-02-01_session_01.md",
	"archive/2023-Q1/2023-02-07_session_01.md", "archive/2023-Q1/2023-02-13_session_01.md",
	"archive/2023-Q1/2023-02-19_session_01.md", "archive/2023-Q1/2023-02-25_session_01.md",
	"archive/2023-Q1/2023-03-03_session_01.md", "archive/2023-Q1/2023-03-09_session_01.md",
	"archive/2023-Q1/2023-03-15_session_01.md", "archive/2023-Q1/2023-03-21_session_01.md",
	"archive/2023-Q1/2023-03-27_session_01.md",
	"archive/2023-Q1/2023-W01.md", "archive/2023-Q1/2023-W02.md", "archive/2023-Q1/2023-W03.md",
	"archive/2023-Q1/2023-W04.md", "archive/2023-Q1/2023-W05.md", "archive/2023-Q1/2023-W06.md",
	"archive/2023-Q1/2023-W07.md", "archive/2023-Q1/2023-W08.md", "archive/2023-Q1/2023-W09.md",
	"archive/2023-Q1/2023-W10.md", "archive/2023-Q1/2023-W11.md", "archive/2023-Q1/2023-W12.md",
	"archive/2023-Q1/2023-W13.md",
	"archive/2023-Q2/2023-04-02_session_01.md", "archive/2023-Q2/2023-04-08_session_01.md",
	"archive/2023-Q2/2023-04-14_session_01.md", "archive/2023-Q2/2023-04-20_session_01.md",
	"archive/2023-Q2/2023-04-26_session_01.md", "archive/2023-Q2/2023-05-02_session_01.md",
	"archive/2023-Q2/2023-05-08_session_01.md", "archive/2023-Q2/2023-05-14_session_01.md",
	"archive/2023-Q2/2023-05-20_session_01.md", "archive/2023-Q2/2023-05-26_session_01.md",
	"archive/2023-Q2/2023-05-30_session_01.md",
	"daily/2023-05-31_session_01.md", "daily/2023-06-01_session_01.md", "daily/2023-06-07_session_01.md",
	"daily/2023-06-13_session_01.md", "daily/2023-06-19_session_01.md", "daily/2023-06-25_session_01.md",
	"monthly/2023-01.md", "monthly/2023-02.md", "monthly/2023-03.md", "monthly/2023-04.md", "monthly/2023-05.md",
	"upload/UPLOAD_PACKAGE.md",
	"weekly/2023-W14.md", "weekly/2023-W15.md", "weekly/2023-W16.md", "weekly/2023-W17.md",
	"weekly/2023-W18.md", "weekly/2023-W19.md", "weekly/2023-W20.md", "weekly/2023-W21.md",
	"weekly/2023-W22.md", "weekly/2023-W23.md", "weekly/2023-W24.md", "weekly/2023-W25.md",
}

// inArchive counts the paths under archive/.
func inArchive(files []string) int {
	n := 0
	for _, f := range files {
		if strings.HasPrefix(f, primers.ArchiveDir+"/") {
			n++
		}
	}
	return n
}

// TestExportRetention: over months of history, export moves dailies older
// than 30 days and weeklies older than 12 weeks to the archive, never
// deletes a file, and converges: exporting every week along the way ends
// in the tree of one export at the end, a second run moves and writes
// nothing, and an export at an earlier time re-creates nothing archived.
func TestExportRetention(t *testing.T) {
	m := newMemory(t)
	ingest(t, m, "c", "calendar", monthsOfSessions())
	june30 := time.Date(2023, 6, 30, 12, 0, 0, 0, time.UTC)

	once := filepath.Join(t.TempDir(), "once")
	res := export(t, m, once, june30)
	if !reflect.DeepEqual(res.Files, archivedOn30June) {
		t.Fatalf("files:\n%q\nwant:\n%q", res.Files, archivedOn30June)
	}
	if n := inArchive(archivedOn30June); res.Written != len(archivedOn30June) || res.WrittenInArchive != n || res.Moved != 0 {
		t.Errorf("first export: %+v, want %d written, %d of them in the archive", res, len(archivedOn30June), n)
	}
	want := tree(t, once)
	if len(want) != len(archivedOn30June) {
		t.Fatalf("the tree holds %d files, want %d", len(want), len(archivedOn30June))
	}
	res = export(t, m, once, june30)
	if res.Written != 0 || res.Moved != 0 || res.Unchanged != len(archivedOn30June) {
		t.Errorf("second export: %+v", res)
	}

	// Every Sunday along the way, then on 30 June: the same tree, and no
	// file ever written is gone (daily and weekly names are unique, so a
	// file is found by its name wherever it went).
	weekly := filepath.Join(t.TempDir(), "weekly")
	seen := map[string]string{} // name -> content hash
	moved := 0
	for d := time.Date(2023, 1, 8, 20, 0, 0, 0, time.UTC); d.Before(june30); d = d.AddDate(0, 0, 7) {
		res := export(t, m, weekly, d)
		moved += res.Moved
		for f, h := range tree(t, weekly) {
			if !strings.HasPrefix(f, "upload/") {
				seen[filepath.Base(f)] = h
			}
		}
	}
	moved += export(t, m, weekly, june30).Moved
	got := tree(t, weekly)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("exporting every week ends in another tree than one export:\n%v\nwant\n%v", got, want)
	}
	if moved != inArchive(archivedOn30June) {
		t.Errorf("exporting every week moved %d files, want %d (every archived file, once)", moved, inArchive(archivedOn30June))
	}
	names := map[string]string{}
	for f, h := range got {
		names[filepath.Base(f)] = h
	}
	for name, h := range seen {
		if names[name] != h {
			t.Errorf("%s, written along the way, is gone or changed", name)
		}
	}

	// An export as of 1 March names dailies and weeklies that are young
	// again on that day: the archived ones stay where they are.
	res = export(t, m, once, time.Date(2023, 3, 1, 12, 0, 0, 0, time.UTC))
	if res.Moved != 0 {
		t.Errorf("an export at an earlier time moved %d files", res.Moved)
	}
	after := tree(t, once)
	for f := range after {
		if _, ok := want[f]; !ok {
			t.Errorf("an export at an earlier time made %s", f)
		}
	}
	for f, h := range want {
		if after[f] != h && f != primers.UploadFile {
			t.Errorf("an export at an earlier time changed %s", f)
		}
	}

	// On 30 September every daily and weekly is old: the rest move, the
	// month of June gets its file, and the live folders are left empty.
	res = export(t, m, once, time.Date(2023, 9, 30, 12, 0, 0, 0, time.UTC))
	if res.Moved != 6+12 {
		t.Errorf("on 30 September %d files moved, want 6 dailies and 12 weeklies", res.Moved)
	}
	last := tree(t, once)
	for _, f := range []string{"archive/2023-Q2/2023-06-25_session_01.md", "archive/2023-Q2/2023-W25.md",
		"monthly/2023-06.md", "archive/2023-Q2/2023-W14.md"} {
		if _, ok := last[f]; !ok {
			t.Errorf("on 30 September there is no %s", f)
		}
	}
	for f := range last {
		if strings.HasPrefix(f, primers.DailyDir+"/") || strings.HasPrefix(f, primers.WeeklyDir+"/") {
			t.Errorf("on 30 September %s is still live", f)
		}
	}
	if len(last) != len(want)+1 {
		t.Errorf("on 30 September the tree holds %d files, want %d (one new)", len(last), len(want)+1)
	}
}
