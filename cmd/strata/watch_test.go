package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/extractive"
	"github.com/strata-memory/strata/internal/synth"
	"github.com/strata-memory/strata/sqlite"
)

// syncBuf is a log that the watch writes while the test reads it.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startWatch runs `strata watch --poll 200ms args...` in-process against
// db until stop is called (or the test ends), and returns its log.
func startWatch(t *testing.T, db string, args ...string) (*syncBuf, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	log := &syncBuf{}
	m := &Main{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: log,
		Getenv: func(k string) string {
			if k == "STRATA_DB" {
				return db
			}
			return ""
		}}
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx, append([]string{"watch", "--poll", "200ms"}, args...)) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("watch: %v\n%s", err, log)
			}
		})
	}
	t.Cleanup(stop)
	return log, stop
}

// storedTurns returns, per conversation, the ext_ids and contents of the
// turns stored in the SQLite file db, in seq order.
func storedTurns(db string) (map[string][]string, error) {
	if _, err := os.Stat(db); err != nil {
		return nil, err
	}
	// Through the store, so that the content of turns in cold spans is
	// read back from their archive segments: which spans have moved
	// depends on when a watch was killed, what they hold does not.
	ctx := context.Background()
	st, err := sqlite.Open(ctx, db)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	convs, err := st.Conversations(ctx, strata.DefaultNamespace)
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, c := range convs {
		ts, err := st.Turns(ctx, strata.TurnFilter{Namespace: strata.DefaultNamespace, Conversation: c.ID})
		if err != nil {
			return nil, err
		}
		for _, t := range ts {
			out[c.ID] = append(out[c.ID], t.ExtID+" "+t.Content)
		}
	}
	return out, nil
}

// waitTurns waits until conversation conv of db holds n turns, and fails
// the test if it does not within 30 s.
func waitTurns(t *testing.T, db, conv string, n int, log fmt.Stringer) []string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, err := storedTurns(db)
		if err == nil && len(got[conv]) >= n {
			return got[conv]
		}
		if time.Now().After(deadline) {
			t.Fatalf("conversation %s: %d turns after 30 s, want %d (%v)\nlog:\n%s", conv, len(got[conv]), n, err, log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func appendFile(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

func line(id, content string) string {
	if id == "" {
		return fmt.Sprintf(`{"role":"user","content":%q}`+"\n", content)
	}
	return fmt.Sprintf(`{"ext_id":%q,"role":"user","content":%q}`+"\n", id, content)
}

// TestWatchKilledFindsEveryRecordOnce appends to several files (in a
// folder, in a subfolder made while the watch runs, and a file named on
// the command line) while `strata watch` runs as a child process, kills
// it with SIGKILL at several instants, starts it again, and expects every
// record exactly once: the same turns, ext_ids and order within each file
// as `strata import` of the finished files. Some records have no ext_id
// and repeat ("ok"): their derived ids must count earlier repeats across
// the chunks and restarts of the watch, as import does.
func TestWatchKilledFindsEveryRecordOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	folder := filepath.Join(dir, "projects")
	if err := os.MkdirAll(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	named := filepath.Join(dir, "named.jsonl")
	files := []string{filepath.Join(folder, "a.jsonl"), filepath.Join(folder, "b.jsonl"), filepath.Join(folder, "sub", "c.jsonl"), named}
	const perFile = 300
	db := filepath.Join(dir, "watch.db")

	// The writer appends in bursts, sometimes half a line then the rest,
	// with a malformed line now and then; c.jsonl's folder appears late.
	writerDone := make(chan struct{})
	wantBad := 0
	go func() {
		defer close(writerDone)
		rng := rand.New(rand.NewPCG(1, 2))
		open := map[string]*os.File{}
		defer func() {
			for _, f := range open {
				f.Close()
			}
		}()
		for i := range perFile {
			for j, p := range files {
				if j == 2 && i < perFile/3 {
					continue // the subfolder comes later
				}
				if j == 2 && i == perFile/3 {
					os.MkdirAll(filepath.Dir(p), 0o755)
				}
				f := open[p]
				if f == nil {
					var err error
					if f, err = os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err != nil {
						panic(err)
					}
					open[p] = f
				}
				var l string
				switch {
				case i%7 == 3:
					l = line("", "ok") // no ext_id, repeated
				case i%50 == 25:
					l = "{not json\n"
					wantBad++
				default:
					l = line(fmt.Sprintf("%s-%d", filepath.Base(p), i), fmt.Sprintf("turn %d of %s", i, filepath.Base(p)))
				}
				if rng.IntN(5) == 0 {
					cut := rng.IntN(len(l)-1) + 1
					f.WriteString(l[:cut])
					time.Sleep(time.Duration(rng.IntN(3)) * time.Millisecond)
					l = l[cut:]
				}
				f.WriteString(l)
			}
			time.Sleep(time.Duration(rng.IntN(12)) * time.Millisecond)
		}
	}()

	start := func() (*exec.Cmd, *bytes.Buffer, chan error) {
		cmd := exec.Command(os.Args[0], "watch", "--poll", "100ms", folder, named)
		cmd.Env = childEnv("STRATA_DB="+db, "STRATA_CONFIG=")
		var errb bytes.Buffer
		cmd.Stderr = &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		return cmd, &errb, done
	}
	rng := rand.New(rand.NewPCG(3, 4))
	kills, during, imports := 0, 0, 0
	for writing := true; writing || kills < 4; kills++ {
		cmd, errb, done := start()
		time.Sleep(time.Duration(150+rng.IntN(600)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		if err := <-done; err == nil {
			t.Fatalf("watch ended by itself:\n%s", errb)
		}
		imports += strings.Count(errb.String(), "msg=imported")
		select {
		case <-writerDone:
			writing = false
		default:
			during++
		}
	}
	// The last run catches up with everything written.
	cmd, errb, done := start()
	defer func() {
		cmd.Process.Signal(syscall.SIGKILL)
		<-done
	}()

	// What strata import makes of the finished files, in a clean store.
	clean := filepath.Join(dir, "clean.db")
	for _, p := range files {
		conv := strings.TrimSuffix(filepath.Base(p), ".jsonl")
		if _, errs, err := run(t, clean, "", "import", "--skip-invalid", "--conversation", conv, p); err != nil {
			t.Fatalf("import %s: %v\n%s", p, err, errs)
		}
	}
	want, err := storedTurns(clean)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for conv, w := range want {
		total += len(w)
		got := waitTurns(t, db, conv, len(w), errb)
		// Give a wrong extra import the time to show.
		time.Sleep(300 * time.Millisecond)
		all, _ := storedTurns(db)
		got = all[conv]
		if !slices.Equal(got, w) {
			t.Fatalf("conversation %s after %d kills: %d turns, want %d as imported\ngot  %q\nwant %q", conv, kills, len(got), len(w), head(got), head(w))
		}
	}
	if total != 4*perFile-perFile/3-wantBad {
		t.Fatalf("import stored %d turns, want %d", total, 4*perFile-perFile/3-wantBad)
	}
	if during == 0 {
		t.Log("the writer finished before the first kill; the machine is slow")
	}
	t.Logf("%d kills (SIGKILL), %d of them while the files grew, %d imports in killed runs; %d turns in 4 files, each once", kills, during, imports, total)
}

func head(s []string) []string {
	if len(s) > 8 {
		return s[:8]
	}
	return s
}

// TestWatchTruncation: a file cut shorter, or rewritten with other first
// bytes, is read again from its start, while the watch runs and across a
// restart; turns already imported are not added twice.
func TestWatchTruncation(t *testing.T) {
	dir := t.TempDir()
	folder := filepath.Join(dir, "p")
	os.Mkdir(folder, 0o755)
	f := filepath.Join(folder, "t.jsonl")
	db := filepath.Join(dir, "s.db")
	appendFile(t, f, line("t1", "first")+line("t2", "second")+line("t3", "third"))
	log, stop := startWatch(t, db, folder)
	waitTurns(t, db, "t", 3, log)

	// Shorter: t1 again, and t4.
	os.WriteFile(f, []byte(line("t1", "first")+line("t4", "fourth")), 0o644)
	got := waitTurns(t, db, "t", 4, log)
	if !strings.Contains(log.String(), "truncated") {
		t.Fatalf("no truncation in the log:\n%s", log)
	}
	stop()

	// While stopped: longer, with other first bytes. Only the fingerprint
	// of the head tells: t5..t9 would be skipped if the old offset were
	// kept.
	var b strings.Builder
	for i := 5; i <= 9; i++ {
		b.WriteString(line(fmt.Sprintf("t%d", i), strings.Repeat("x", 40)))
	}
	os.WriteFile(f, []byte(b.String()), 0o644)
	first := log
	log, stop = startWatch(t, db, folder)
	got = waitTurns(t, db, "t", 9, log)
	if !strings.Contains(log.String(), "first bytes changed") {
		t.Fatalf("the rewrite was not noticed:\n%s\nthe run before:\n%s", log, first)
	}
	stop()

	// While stopped: cut shorter again, with a new turn.
	os.WriteFile(f, []byte(line("t10", "tenth")), 0o644)
	log, _ = startWatch(t, db, folder)
	waitTurns(t, db, "t", 10, log)
	if !strings.Contains(log.String(), "truncated") {
		t.Fatalf("no truncation in the log:\n%s", log)
	}
	time.Sleep(300 * time.Millisecond)
	all, _ := storedTurns(db)
	got = all["t"]
	var ids []string
	for _, g := range got {
		ids = append(ids, strings.Fields(g)[0])
	}
	if want := []string{"t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8", "t9", "t10"}; !slices.Equal(ids, want) {
		t.Fatalf("turns %v, want %v\nlog:\n%s", ids, want, log)
	}
}

// TestWatchRotation: a file renamed away is read to its end while its
// writer still appends to it, and a new file at the same path is read
// from its start.
func TestWatchRotation(t *testing.T) {
	dir := t.TempDir()
	folder := filepath.Join(dir, "p")
	os.Mkdir(folder, 0o755)
	f := filepath.Join(folder, "r.jsonl")
	db := filepath.Join(dir, "s.db")
	w, err := os.OpenFile(f, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.WriteString(line("r1", "one") + line("r2", "two"))
	log, _ := startWatch(t, db, folder)
	waitTurns(t, db, "r", 2, log)

	// Rotated away (to a name the folder's pattern leaves out), its
	// writer appends once more.
	if err := os.Rename(f, f+".1"); err != nil {
		t.Fatal(err)
	}
	w.WriteString(line("r3", "three, after the rename"))
	waitTurns(t, db, "r", 3, log)

	// A new file takes the path: it is read from its start, and the old
	// one to its end first.
	w.WriteString(line("r4", "four, still to the old file"))
	appendFile(t, f, line("r5", "five")+line("r6", "six"))
	waitTurns(t, db, "r", 6, log)
	appendFile(t, f, line("r7", "seven"))
	waitTurns(t, db, "r", 7, log)
	time.Sleep(300 * time.Millisecond)
	all, _ := storedTurns(db)
	var ids []string
	for _, g := range all["r"] {
		ids = append(ids, strings.Fields(g)[0])
	}
	if want := []string{"r1", "r2", "r3", "r4", "r5", "r6", "r7"}; !slices.Equal(ids, want) {
		t.Fatalf("turns %v, want %v\nlog:\n%s", ids, want, log)
	}
	if !strings.Contains(log.String(), "another file at the path") {
		t.Fatalf("no rotation in the log:\n%s", log)
	}
}

// TestWatchBadLines: a malformed line is logged once with its file and
// line, and skipped; the watch goes on with the lines after it, also
// after a restart (which does not report it again).
func TestWatchBadLines(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "bad.jsonl")
	db := filepath.Join(dir, "s.db")
	appendFile(t, f, line("b1", "fine")+"{\"role\":\"user\",\"contnet\":\"typo\"}\n"+line("b2", "fine too")+"[1,2]\n")
	log, stop := startWatch(t, db, f)
	waitTurns(t, db, "bad", 2, log)
	appendFile(t, f, line("b3", "after the bad lines"))
	waitTurns(t, db, "bad", 3, log)
	time.Sleep(500 * time.Millisecond) // a few polls
	stop()
	out := log.String()
	for _, want := range []string{"file=" + f + " line=2 ", `contnet`, "file=" + f + " line=4 "} {
		if !strings.Contains(out, want) {
			t.Fatalf("log lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "skipped a bad line"); n != 2 {
		t.Fatalf("%d bad lines logged, want 2 (each once):\n%s", n, out)
	}
	log, stop = startWatch(t, db, f)
	appendFile(t, f, line("b4", "after a restart"))
	waitTurns(t, db, "bad", 4, log)
	stop()
	if strings.Contains(log.String(), "skipped a bad line") {
		t.Fatalf("a restart reported the bad lines again:\n%s", log)
	}
}

// TestWatchDefaultsToClaudeProjects: with no PATH, watch follows
// ~/.claude/projects, and says so when it is missing.
func TestWatchDefaultsToClaudeProjects(t *testing.T) {
	home := t.TempDir()
	db := filepath.Join(home, "s.db")
	m := &Main{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard,
		Getenv: func(k string) string {
			return map[string]string{"STRATA_DB": db, "HOME": home}[k]
		}}
	err := m.Run(context.Background(), []string{"watch"})
	if err == nil || !strings.Contains(err.Error(), filepath.Join(home, ".claude", "projects")) {
		t.Fatalf("watch without ~/.claude/projects: %v, want an error naming it", err)
	}
	proj := filepath.Join(home, ".claude", "projects", "-srv-app")
	os.MkdirAll(proj, 0o755)
	appendFile(t, filepath.Join(proj, "s1.jsonl"), line("d1", "from the default folder"))
	ctx, cancel := context.WithCancel(context.Background())
	log := &syncBuf{}
	m.Stderr = log
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx, []string{"watch", "--poll", "100ms"}) }()
	waitTurns(t, db, "s1", 1, log)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestWatchCatchesUpTiers: spans a killed run stored but did not move
// (here: appended with tier moves deferred) reach their tier when a watch
// starts, though no file grows.
func TestWatchCatchesUpTiers(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	st, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	m, err := strata.New(strata.Config{Store: st, Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New(), DeferTiers: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Ingest(ctx, strata.Batch{Conversation: "c", Turns: synth.New(4).Turns(3000)}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	plan := func() int {
		t.Helper()
		out, errs, err := run(t, db, "", "tier", "--dry-run", "--json")
		if err != nil {
			t.Fatalf("tier --dry-run: %v\n%s", err, errs)
		}
		var rs []strata.TierResult
		if err := json.Unmarshal([]byte(out), &rs); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, r := range rs {
			n += len(r.Moves)
		}
		return n
	}
	if plan() == 0 {
		t.Fatal("nothing due to move before the watch: the test proves nothing")
	}
	os.Mkdir(filepath.Join(dir, "empty"), 0o755)
	log, stop := startWatch(t, db, filepath.Join(dir, "empty"))
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(log.String(), "tiers caught up") {
		if time.Now().After(deadline) {
			t.Fatalf("no tier catch-up in the log:\n%s", log)
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	if n := plan(); n != 0 {
		t.Fatalf("%d moves still due after the watch started:\n%s", n, log)
	}
}
