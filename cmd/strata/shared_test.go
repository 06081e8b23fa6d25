package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/client"
)

// TestServersShareStore runs three `strata serve` processes on one store,
// with eight writers spread over them appending to their own and to two
// shared conversations, and kills one server with SIGKILL mid-stream; its
// writers go on through another server, resending the batch whose answer
// was lost. Every acknowledged turn must then be stored exactly once, in
// the order each writer had it acknowledged; each resent batch must have
// been stored whole or not at all; and each conversation's pyramid (every
// span rolled up once, each in its tier) must equal a bulk import of its
// stored turns. It runs on an SQLite file, and on PostgreSQL when
// STRATA_TEST_POSTGRES names a database (scripts/pgtest starts one).
func TestServersShareStore(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns server processes")
	}
	t.Run("sqlite", func(t *testing.T) {
		dir := t.TempDir()
		db := filepath.Join(dir, "served", "shared.db")
		if err := os.Mkdir(filepath.Dir(db), 0o755); err != nil {
			t.Fatal(err)
		}
		serversShareStore(t, dir, db)
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := os.Getenv("STRATA_TEST_POSTGRES")
		if dsn == "" {
			t.Skip(`STRATA_TEST_POSTGRES is not set: export "$(scripts/pgtest)" to run against a private cluster`)
		}
		serversShareStore(t, t.TempDir(), scratchSchema(t, dsn))
	})
}

// scratchSchema creates a schema in the database at dsn, dropped when t
// ends, and returns the URL of a store in it.
func scratchSchema(t *testing.T, dsn string) string {
	t.Helper()
	ctx := context.Background()
	schema := fmt.Sprintf("strata_shared_%d", time.Now().UnixNano())
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE SCHEMA `+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Error(err)
			return
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, `DROP SCHEMA `+schema+` CASCADE`); err != nil {
			t.Error(err)
		}
	})
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema+",public")
	u.RawQuery = q.Encode()
	return u.String()
}

func serversShareStore(t *testing.T, dir, db string) {
	cfg := filepath.Join(dir, "strata.yaml")
	if err := os.WriteFile(cfg, []byte("tiers:\n  warm_max_turns: 120\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const nWriters, nServers = 8, 3
	nBatches := crashBatches
	writers := make([]*crashWriter, nWriters)
	sent := map[string]client.Turn{}
	for w := range writers {
		writers[w] = newCrashWriter(w, nBatches)
		for _, b := range writers[w].batches {
			for _, tr := range b.turns {
				sent[tr.ExtID] = tr
			}
		}
	}
	// The first server migrates a new store; the others start after it,
	// all at once.
	servers := make([]*crashServer, nServers)
	servers[0] = startCrashServer(t, db, cfg, filepath.Join(dir, "serve-0.log"))
	var start sync.WaitGroup
	for i := 1; i < nServers; i++ {
		start.Add(1)
		go func() {
			defer start.Done()
			servers[i] = startCrashServer(t, db, cfg, filepath.Join(dir, fmt.Sprintf("serve-%d.log", i)))
		}()
	}
	start.Wait()
	defer func() {
		for _, s := range servers {
			s.stop(t)
		}
	}()
	hc := &http.Client{Timeout: 5 * time.Minute}
	clients := make([]*client.Client, nServers)
	for i, s := range servers {
		clients[i] = client.New(s.url, "", hc)
	}

	// Server 0 is killed once a third of all batches are acknowledged.
	killAt := int64(nWriters * nBatches / 3)
	var acks atomic.Int64
	var killed sync.Once
	dead := make(chan struct{})
	ctx := context.Background()
	var wg sync.WaitGroup
	resent := 0
	var mu sync.Mutex
	for _, w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s := w.id % nServers; w.next < len(w.batches) && w.err == nil; s = 1 + w.id%(nServers-1) {
				if s == 0 {
					select {
					case <-dead:
						continue
					default:
					}
				}
				w.run(ctx, clients[s], func() {
					if acks.Add(1) == killAt {
						killed.Do(func() { servers[0].kill(t); close(dead) })
					}
				})
				if w.doubt {
					mu.Lock()
					resent++
					mu.Unlock()
					if s != 0 {
						w.err = fmt.Errorf("server %d went away, but only server 0 was killed", s)
					}
				}
			}
		}()
	}
	wg.Wait()
	for _, w := range writers {
		if w.err != nil {
			t.Fatalf("writer %d: %v", w.id, w.err)
		}
	}
	select {
	case <-dead:
	default:
		t.Fatal("server 0 was never killed")
	}
	for i, s := range servers[1:] {
		s.stop(t)
		if b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("serve-%d.log", i+1))); err == nil && strings.Contains(string(b), `"level":"ERROR"`) {
			t.Errorf("server %d logged an error:\n%s", i+1, b)
		}
	}
	t.Logf("%d turns from %d writers through %d servers; server 0 killed after %d acknowledgements; %d batches resent through another server",
		len(sent), nWriters, nServers, killAt, resent)

	// Every stored turn was sent, once, as sent; each writer's turns in
	// each conversation are those acknowledged, in order.
	st, err := openStore(ctx, db, false, readWrite, nil)
	if err != nil {
		t.Fatal(err)
	}
	convs, err := st.Conversations(ctx, strata.DefaultNamespace)
	if err != nil {
		t.Fatal(err)
	}
	order := map[string][]string{}
	got := make([]map[string][]string, nWriters)
	for i := range got {
		got[i] = map[string][]string{}
	}
	seen := map[string]bool{}
	for _, c := range convs {
		turns, err := st.Turns(ctx, strata.TurnFilter{Namespace: strata.DefaultNamespace, Conversation: c.ID})
		if err != nil {
			t.Fatal(err)
		}
		for i, tr := range turns {
			want, ok := sent[tr.ExtID]
			switch {
			case !ok:
				t.Fatalf("%s: stored turn %q was never sent", c.ID, tr.ExtID)
			case seen[tr.ExtID]:
				t.Fatalf("%s: turn %q stored twice", c.ID, tr.ExtID)
			case tr.Seq != int64(i+1):
				t.Fatalf("%s: turn %d has seq %d", c.ID, i+1, tr.Seq)
			case tr.Content != want.Content || tr.Name != want.Name || tr.Role != want.Role || !tr.Time.Equal(want.Time):
				t.Fatalf("%s: turn %q stored as %+v, sent as %+v", c.ID, tr.ExtID, tr, want)
			}
			seen[tr.ExtID] = true
			order[c.ID] = append(order[c.ID], tr.ExtID)
			var w int
			fmt.Sscanf(tr.ExtID, "w%d-", &w)
			got[w][c.ID] = append(got[w][c.ID], tr.ExtID)
		}
	}
	st.Close()
	for _, w := range writers {
		for c, want := range w.acked {
			if !slices.Equal(got[w.id][c], want) {
				t.Fatalf("writer %d, %s: stored %s, acknowledged %s", w.id, c, ends(got[w.id][c]), ends(want))
			}
		}
		if len(got[w.id]) != len(w.acked) {
			t.Fatalf("writer %d: turns in %d conversations, acknowledged in %d", w.id, len(got[w.id]), len(w.acked))
		}
	}

	// Each pyramid equals a bulk import of its stored turns.
	for conv, ids := range order {
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
		// The killed server's claims keep the others' background tier
		// passes away until they end; an explicit run moves what is due.
		mustRun(t, db, "tier", "--config", cfg, "--conversation", conv)
		var want, have strata.Tree
		if err := json.Unmarshal([]byte(mustRun(t, ref, "tree", "--config", cfg, "--conversation", conv, "--json")), &want); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(mustRun(t, db, "tree", "--config", cfg, "--conversation", conv, "--json")), &have); err != nil {
			t.Fatal(err)
		}
		if msg := treeDiff(&want, &have); msg != "" {
			t.Errorf("%s (%d turns): the pyramid written by three servers differs from a bulk import: %s", conv, len(ids), msg)
		}
	}
}
