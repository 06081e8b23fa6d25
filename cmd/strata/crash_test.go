package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/client"
	"github.com/strata-memory/strata/internal/synth"
)

// TestCrashServeLosesNothing runs eight writers appending batches over HTTP
// to `strata serve` (each to its own conversation, and half of them to each
// of two shared ones), kills the server with SIGKILL several times while
// they write, and restarts it on the same file. After each kill the store
// must hold every acknowledged turn exactly once, in the order each writer
// had it acknowledged, and the batch whose answer was lost either whole or
// not at all; the retry of that batch must say the same (all skipped, or
// all added). Once every batch is acknowledged, each conversation's
// pyramid must equal a bulk import of its stored turns into a fresh store,
// and SQLite's integrity check must pass throughout.
//
// The kills are triggered by counts of acknowledged batches, not by the
// clock, so each lands mid-stream however slow the machine is.
func TestCrashServeLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns server processes")
	}
	dir := t.TempDir()
	// Spans go cold (into archive segments beside the database) once 120
	// turns follow them, so that kills also land in tier moves.
	cfg := filepath.Join(dir, "strata.yaml")
	if err := os.WriteFile(cfg, []byte("tiers:\n  warm_max_turns: 120\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "served", "crash.db")
	if err := os.Mkdir(filepath.Dir(db), 0o755); err != nil {
		t.Fatal(err)
	}
	const nWriters = 8
	nBatches := crashBatches
	writers := make([]*crashWriter, nWriters)
	sent := map[string]client.Turn{} // every turn a writer sends, by ext_id
	for w := range writers {
		writers[w] = newCrashWriter(w, nBatches)
		for _, b := range writers[w].batches {
			for _, tr := range b.turns {
				sent[tr.ExtID] = tr
			}
		}
	}

	// The servers are killed after these many acknowledged batches of
	// their round (of 640 in all, 320 under the race detector); the last
	// server serves until every batch is in.
	kills := []int64{6, 40, 17, 65, 28, 90, 3, 50}
	for i := range kills {
		kills[i] = max(1, kills[i]*int64(nBatches)/80)
	}
	ctx := context.Background()
	hc := &http.Client{Timeout: 5 * time.Minute}
	lost, found := 0, 0
	for round := 0; ; round++ {
		srv := startCrashServer(t, db, cfg, filepath.Join(dir, fmt.Sprintf("serve-%d.log", round)))
		c := client.New(srv.url, "", hc)
		killAt := int64(-1)
		if round < len(kills) {
			killAt = kills[round]
		}
		var acks atomic.Int64
		reached := make(chan struct{})
		var wg sync.WaitGroup
		for _, w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				w.run(ctx, c, func() {
					if acks.Add(1) == killAt {
						close(reached)
					}
				})
			}()
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		killed := false
		select {
		case <-reached:
			srv.kill(t)
			killed = true
			<-done
		case <-done:
		}
		for _, w := range writers {
			if w.err != nil {
				srv.stop(t)
				t.Fatalf("round %d, writer %d: %v", round, w.id, w.err)
			}
		}
		if !killed {
			expandCrashed(t, srv.url, sent)
			srv.stop(t)
			checkCrashStore(t, db, writers, sent)
			t.Logf("%d kills; %d answers lost, %d of those batches found stored; %d turns",
				round, lost, found, len(sent))
			break
		}
		for _, w := range writers {
			if w.doubt {
				lost++
			}
		}
		found += checkCrashStore(t, db, writers, sent)
	}
	for _, w := range writers {
		if w.next != len(w.batches) || w.doubt {
			t.Fatalf("writer %d stopped at batch %d of %d", w.id, w.next, len(w.batches))
		}
	}

	// The pyramid of each conversation equals a bulk import of its turns in
	// their stored order.
	order := storedOrder(t, db)
	for conv, ids := range order {
		// Each reference store in a folder of its own: the archive
		// segments of a conversation are named after it.
		ref := filepath.Join(dir, "ref-"+conv, "ref.db")
		if err := os.Mkdir(filepath.Dir(ref), 0o755); err != nil {
			t.Fatal(err)
		}
		var lines strings.Builder
		for _, id := range ids {
			tr := sent[id]
			line, _ := json.Marshal(map[string]any{"conversation": conv, "ext_id": tr.ExtID, "role": tr.Role,
				"name": tr.Name, "content": tr.Content, "time": tr.Time})
			lines.Write(line)
			lines.WriteByte('\n')
		}
		file := filepath.Join(filepath.Dir(ref), "turns.jsonl")
		if err := os.WriteFile(file, []byte(lines.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		newStoreFile(t, ref)
		mustRun(t, ref, "import", "--config", cfg, file)
		var want, got strata.Tree
		if err := json.Unmarshal([]byte(mustRun(t, ref, "tree", "--config", cfg, "--conversation", conv, "--json")), &want); err != nil {
			t.Fatal(err)
		}
		// A killed server's claim on a conversation's tier pass keeps the
		// background passes of the servers after it away until it ends
		// (docs/http.md); an explicit tier run moves what is due now.
		mustRun(t, db, "tier", "--config", cfg, "--conversation", conv)
		if err := json.Unmarshal([]byte(mustRun(t, db, "tree", "--config", cfg, "--conversation", conv, "--json")), &got); err != nil {
			t.Fatal(err)
		}
		if len(want.Nodes) == 0 {
			t.Fatalf("%s: the bulk import of %d turns made no node", conv, len(ids))
		}
		tiers := map[strata.Tier]int{}
		for _, n := range got.Nodes {
			if n.Level == 1 {
				tiers[n.Tier]++
			}
		}
		t.Logf("%s: %d turns, %d nodes, tiers %v", conv, len(ids), len(got.Nodes), tiers)
		if msg := treeDiff(&want, &got); msg != "" {
			t.Errorf("%s (%d turns): the pyramid after the kills differs from a bulk import: %s", conv, len(ids), msg)
		}
	}
}

// crashBatch is one append of a writer.
type crashBatch struct {
	conv  string
	turns []client.Turn
}

// crashWriter appends its batches in order, each until it is
// acknowledged. When the server goes away mid-request, the batch is in
// doubt: the writer stops, and resends it first once a server is back.
type crashWriter struct {
	id      int
	batches []crashBatch
	next    int                 // the first batch not acknowledged
	doubt   bool                // batches[next] was sent and its answer lost
	stored  *bool               // whether the store held batches[next] when checked after the loss
	acked   map[string][]string // ext_ids acknowledged, by conversation, in order
	err     error               // an answer a correct server never gives
}

// newCrashWriter makes writer w's batches: 1-12 turns each, two in three
// to its own conversation, the others to one of two shared conversations.
// Turn times come from the generator (a second to two minutes apart, with
// gaps of a day or more that start sessions), so the writers of a shared
// conversation interleave times that are not in order.
func newCrashWriter(w, n int) *crashWriter {
	g := synth.New(uint64(100 + w))
	r := rand.New(rand.NewPCG(uint64(w), 7))
	cw := &crashWriter{id: w, acked: map[string][]string{}}
	for b := range n {
		conv := fmt.Sprintf("own-%d", w)
		if b%3 == 2 {
			conv = fmt.Sprintf("shared-%d", w%2)
		}
		batch := crashBatch{conv: conv}
		for i := range 1 + r.IntN(12) {
			tr := g.Next()
			batch.turns = append(batch.turns, client.Turn{ExtID: fmt.Sprintf("w%d-b%d-%d", w, b, i),
				Role: tr.Role, Name: tr.Name, Content: tr.Content, Time: tr.Time})
		}
		cw.batches = append(cw.batches, batch)
	}
	return cw
}

// run appends the writer's batches until all are acknowledged or the
// server goes away; ack is called after each acknowledgement.
func (w *crashWriter) run(ctx context.Context, c *client.Client, ack func()) {
	for w.next < len(w.batches) {
		b := w.batches[w.next]
		res, err := c.Append(ctx, b.conv, b.turns)
		if err != nil {
			var answer *client.Error
			if errors.As(err, &answer) {
				w.err = fmt.Errorf("batch %d: %w", w.next, err)
				return
			}
			// The server is gone: the batch is in doubt until a retry
			// is answered.
			w.doubt = true
			return
		}
		n := len(b.turns)
		switch {
		case res.Added+res.Skipped != n:
			w.err = fmt.Errorf("batch %d of %d turns: %d added and %d skipped", w.next, n, res.Added, res.Skipped)
		case !w.doubt && res.Skipped != 0:
			w.err = fmt.Errorf("batch %d, sent for the first time: %d of %d turns skipped as stored already", w.next, res.Skipped, n)
		case w.doubt && res.Added != 0 && res.Skipped != 0:
			w.err = fmt.Errorf("batch %d, resent after its answer was lost: %d turns added and %d skipped, so it was half stored", w.next, res.Added, res.Skipped)
		case w.doubt && w.stored != nil && *w.stored != (res.Skipped == n):
			w.err = fmt.Errorf("batch %d, resent after its answer was lost: found stored %v after the kill, but %d of %d skipped on retry", w.next, *w.stored, res.Skipped, n)
		}
		if w.err != nil {
			return
		}
		for _, tr := range b.turns {
			w.acked[b.conv] = append(w.acked[b.conv], tr.ExtID)
		}
		w.next++
		w.doubt, w.stored = false, nil
		ack()
	}
}

// crashServer is a `strata serve` child process.
type crashServer struct {
	logFile string
	cmd     *exec.Cmd
	url     string
	done    chan struct{} // closed when the process has ended
	err     error         // how it ended
}

// startCrashServer starts the test binary as `strata serve` on a free
// loopback port over db, with its worker on, and waits for its address.
func startCrashServer(t *testing.T, db, cfg, logFile string, extra ...string) *crashServer {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"serve", "--addr", "127.0.0.1:0", "--no-auth", "--rate", "0", "--every", "100ms"}, extra...)...)
	cmd.Env = childEnv("STRATA_DB="+db, "STRATA_CONFIG="+cfg)
	logs, err := os.Create(logFile)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = logs
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	logs.Close()
	s := &crashServer{cmd: cmd, done: make(chan struct{}), logFile: logFile}
	lines := bufio.NewScanner(out)
	if lines.Scan() {
		s.url = regexp.MustCompile(`http://127\.0\.0\.1:\d+`).FindString(lines.Text())
	}
	go func() {
		for lines.Scan() {
		}
		s.err = cmd.Wait()
		close(s.done)
	}()
	if s.url == "" {
		cmd.Process.Kill()
		<-s.done
		b, _ := os.ReadFile(logFile)
		t.Fatalf("strata serve printed no address; its log:\n%s", b)
	}
	return s
}

// kill sends SIGKILL and waits for the process to end.
func (s *crashServer) kill(t *testing.T) {
	t.Helper()
	if err := s.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-s.done
}

// stop asks the server to drain and stop, as a service manager would,
// unless it has ended already.
func (s *crashServer) stop(t *testing.T) {
	t.Helper()
	select {
	case <-s.done:
		return
	default:
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	<-s.done
	if s.err != nil {
		t.Errorf("strata serve after SIGTERM: %v", s.err)
	}
}

// checkCrashStore opens the store while no server runs and checks it: the
// integrity check passes; every stored turn is one a writer sent, stored
// once, with what was sent; and each writer's turns in each conversation
// are, in seq order, exactly those acknowledged, followed by the whole
// batch in doubt or by none of it. It records on each writer whether its
// batch in doubt is stored, and returns how many are.
func checkCrashStore(t *testing.T, db string, writers []*crashWriter, sent map[string]client.Turn) int {
	t.Helper()
	sdb, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	defer sdb.Close()
	var ok string
	if err := sdb.QueryRow(`PRAGMA integrity_check`).Scan(&ok); err != nil || ok != "ok" {
		t.Fatalf("integrity check: %q %v", ok, err)
	}
	rows, err := sdb.Query(`SELECT c.id, coalesce(t.ext_id, ''), t.role, t.name, t.time, t.tier, t.content, t.size
		FROM turns t JOIN conversations c ON c.pk = t.conversation ORDER BY c.id, t.seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	// got[writer][conversation] is the writer's ext_ids there, in seq order.
	got := make([]map[string][]string, len(writers))
	for i := range got {
		got[i] = map[string][]string{}
	}
	seen := map[string]bool{}
	for rows.Next() {
		var conv, id, role, name, content string
		var at, tier, size int64
		if err := rows.Scan(&conv, &id, &role, &name, &at, &tier, &content, &size); err != nil {
			t.Fatal(err)
		}
		tr, ok := sent[id]
		if !ok {
			t.Fatalf("%s: stored turn %q was never sent", conv, id)
		}
		if seen[id] {
			t.Fatalf("%s: turn %q stored twice", conv, id)
		}
		seen[id] = true
		// A cold row leaves its content, role and speaker to its archive
		// segment; expandCrashed reads them there.
		if at != tr.Time.UnixNano() || size != int64(len(tr.Content)) ||
			tier < 2 && (role != string(tr.Role) || name != tr.Name) || tier == 0 && content != tr.Content {
			t.Fatalf("%s: turn %q (tier %d) stored as %s %q %d %d bytes, sent as %s %q %d %d bytes", conv, id, tier,
				role, name, at, size, tr.Role, tr.Name, tr.Time.UnixNano(), len(tr.Content))
		}
		var w int
		fmt.Sscanf(id, "w%d-", &w)
		got[w][conv] = append(got[w][conv], id)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	stored := 0
	for _, w := range writers {
		w.stored = nil
		convs := map[string]bool{}
		for c := range w.acked {
			convs[c] = true
		}
		for c := range got[w.id] {
			convs[c] = true
		}
		for c := range convs {
			want := w.acked[c]
			have := got[w.id][c]
			if w.doubt && w.batches[w.next].conv == c && len(have) > len(want) {
				var batch []string
				for _, tr := range w.batches[w.next].turns {
					batch = append(batch, tr.ExtID)
				}
				if !slices.Equal(have[len(want):], batch) {
					t.Fatalf("writer %d, %s: after the acknowledged turns, %q is stored, not the whole batch in doubt %q",
						w.id, c, have[len(want):], batch)
				}
				have = have[:len(want)]
				yes := true
				w.stored = &yes
				stored++
			}
			if !slices.Equal(have, want) {
				t.Fatalf("writer %d, %s: stored %d turns %s, but %d were acknowledged %s",
					w.id, c, len(have), ends(have), len(want), ends(want))
			}
		}
		if w.doubt && w.stored == nil {
			no := false
			w.stored = &no
		}
	}
	return stored
}

// expandCrashed expands every level-1 node of every conversation through
// the server, whatever its tier, and expects the turns exactly as sent.
func expandCrashed(t *testing.T, url string, sent map[string]client.Turn) {
	t.Helper()
	get := func(path string, out any) {
		t.Helper()
		resp, err := http.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s", path, resp.Status)
		}
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
	}
	var list struct{ Conversations []strata.Conversation }
	get("/v1/conversations", &list)
	expanded := 0
	for _, c := range list.Conversations {
		var tree strata.Tree
		get("/v1/conversations/"+c.ID+"/tree", &tree)
		for _, n := range tree.Nodes {
			if n.Level != 1 {
				continue
			}
			var x struct{ Turns []strata.Turn }
			get("/v1/nodes/"+n.ID+"/expand", &x)
			if int64(len(x.Turns)) != n.LastSeq-n.FirstSeq+1 {
				t.Fatalf("%s: node %s (tier %s) expands to %d turns, spans %d-%d", c.ID, n.ID, n.Tier, len(x.Turns), n.FirstSeq, n.LastSeq)
			}
			for _, got := range x.Turns {
				want := sent[got.ExtID]
				if got.Content != want.Content || got.Name != want.Name || got.Role != want.Role || !got.Time.Equal(want.Time) {
					t.Fatalf("%s: node %s (tier %s) expands turn %q to %+v, sent %+v", c.ID, n.ID, n.Tier, got.ExtID, got, want)
				}
				expanded++
			}
		}
	}
	if expanded == 0 {
		t.Fatal("no turn expanded")
	}
}

// ends abbreviates a list of ext_ids to its first and last three.
func ends(ids []string) string {
	if len(ids) <= 6 {
		return fmt.Sprint(ids)
	}
	return fmt.Sprint(ids[:3], "...", ids[len(ids)-3:])
}

// storedOrder returns the ext_ids of each conversation's turns in seq
// order.
func storedOrder(t *testing.T, db string) map[string][]string {
	t.Helper()
	sdb, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	defer sdb.Close()
	rows, err := sdb.Query(`SELECT c.id, t.ext_id FROM turns t JOIN conversations c ON c.pk = t.conversation ORDER BY c.id, t.seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string][]string{}
	for rows.Next() {
		var conv, id string
		if err := rows.Scan(&conv, &id); err != nil {
			t.Fatal(err)
		}
		out[conv] = append(out[conv], id)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// treeDiff names the first difference between two pyramids, "" if none.
func treeDiff(want, got *strata.Tree) string {
	if want.Turns != got.Turns || want.Sessions != got.Sessions || want.Policy != got.Policy {
		return fmt.Sprintf("%d turns in %d sessions (%s), want %d in %d (%s)",
			got.Turns, got.Sessions, got.Policy, want.Turns, want.Sessions, want.Policy)
	}
	if !reflect.DeepEqual(want.Levels, got.Levels) {
		return fmt.Sprintf("levels %+v, want %+v", got.Levels, want.Levels)
	}
	if !reflect.DeepEqual(want.Counters, got.Counters) {
		return fmt.Sprintf("counters %v, want %v", got.Counters, want.Counters)
	}
	for i := range max(len(want.Nodes), len(got.Nodes)) {
		if i >= len(got.Nodes) {
			return fmt.Sprintf("%d nodes, want %d: node %s is missing", len(got.Nodes), len(want.Nodes), want.Nodes[i].ID)
		}
		if i >= len(want.Nodes) {
			return fmt.Sprintf("%d nodes, want %d: node %s is extra", len(got.Nodes), len(want.Nodes), got.Nodes[i].ID)
		}
		if !reflect.DeepEqual(want.Nodes[i], got.Nodes[i]) {
			return fmt.Sprintf("node %d is %+v, want %+v", i, got.Nodes[i], want.Nodes[i])
		}
	}
	return ""
}
