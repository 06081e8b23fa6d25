package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/client"
)

// TestTwoServersOneConversation runs two `strata serve --no-worker` on one
// store, with four clients appending batches of one to three turns, with
// increasing times, to one conversation through either server, for each
// preset. Every append must be answered without error and with its rollup
// done (no rollup_deferred), and the pyramid must end as one import of the
// stored turns makes it. Two servers used to wedge a sessions or calendar
// conversation for good: one closed a parent over a session node the other
// was reopening, and every later rollup failed.
//
// By default each client sends a fixed number of batches; STRATA_SOAK=10m
// runs each preset on each store for that long instead. It runs on an
// SQLite file, and on PostgreSQL when STRATA_TEST_POSTGRES names a
// database.
func TestTwoServersOneConversation(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns server processes")
	}
	var soak time.Duration
	if s := os.Getenv("STRATA_SOAK"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("STRATA_SOAK: %v", err)
		}
		soak = d
	}
	for _, preset := range strata.Presets {
		t.Run("sqlite/"+preset, func(t *testing.T) {
			dir := t.TempDir()
			db := filepath.Join(dir, "served", "shared.db")
			if err := os.Mkdir(filepath.Dir(db), 0o755); err != nil {
				t.Fatal(err)
			}
			twoServersOneConversation(t, dir, db, preset, soak)
		})
		t.Run("postgres/"+preset, func(t *testing.T) {
			dsn := os.Getenv("STRATA_TEST_POSTGRES")
			if dsn == "" {
				t.Skip(`STRATA_TEST_POSTGRES is not set: export "$(scripts/pgtest)" to run against a private cluster`)
			}
			twoServersOneConversation(t, t.TempDir(), scratchSchema(t, dsn), preset, soak)
		})
	}
}

func twoServersOneConversation(t *testing.T, dir, db, preset string, soak time.Duration) {
	cfg := filepath.Join(dir, "strata.yaml")
	if err := os.WriteFile(cfg, []byte("tiers:\n  warm_max_turns: 60\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	servers := []*crashServer{startCrashServer(t, db, cfg, filepath.Join(dir, "serve-0.log"), "--no-worker")}
	servers = append(servers, startCrashServer(t, db, cfg, filepath.Join(dir, "serve-1.log"), "--no-worker"))
	defer func() {
		for _, s := range servers {
			s.stop(t)
		}
	}()
	hc := &http.Client{Timeout: 5 * time.Minute}
	clients := []*client.Client{client.New(servers[0].url, "", hc), client.New(servers[1].url, "", hc)}
	ctx := context.Background()
	const conv = "shared"
	if _, err := clients[0].CreateConversation(ctx, conv, preset, "UTC"); err != nil {
		t.Fatal(err)
	}

	// Turn times come from one clock the clients share: minutes apart,
	// with gaps of hours (sessions) and of days (periods).
	var mu sync.Mutex
	r := rand.New(rand.NewPCG(1, 2))
	at := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	n := 0
	nextTurns := func() []client.Turn {
		mu.Lock()
		defer mu.Unlock()
		var out []client.Turn
		for range 1 + r.IntN(3) {
			switch k := r.IntN(20); {
			case k < 2:
				at = at.Add(time.Duration(1+r.IntN(3)) * 24 * time.Hour)
			case k < 5:
				at = at.Add(time.Duration(1+r.IntN(5)) * time.Hour)
			default:
				at = at.Add(time.Duration(1+r.IntN(9)) * time.Minute)
			}
			role := strata.RoleUser
			if n%2 == 1 {
				role = strata.RoleAssistant
			}
			out = append(out, client.Turn{ExtID: fmt.Sprintf("t%06d", n), Role: role,
				Content: fmt.Sprintf("turn %d of the shared conversation, about item %d.", n, r.IntN(50)), Time: at})
			n++
		}
		return out
	}
	deadline := time.Now().Add(soak)
	const batches = soakBatches // per client, when not soaking
	errs := make(chan error, 4)
	var wg sync.WaitGroup
	for c := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := 0; ; b++ {
				if soak > 0 && !time.Now().Before(deadline) || soak == 0 && b == batches {
					return
				}
				turns := nextTurns()
				res, err := clients[(c+b)%2].Append(ctx, conv, turns)
				if err == nil && res.RollupDeferred != "" {
					err = fmt.Errorf("answered, but the rollup was deferred: %s", res.RollupDeferred)
				}
				if err != nil {
					errs <- fmt.Errorf("client %d, batch %d: %w", c, b, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	// The stored turns, in seq order, imported at once into a new store.
	var lines strings.Builder
	stored := 0
	for from := int64(1); ; {
		page, err := clients[1].Turns(ctx, conv, from, 0, 1000)
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range page.Turns {
			line, _ := json.Marshal(map[string]any{"conversation": conv, "ext_id": tr.ExtID, "role": tr.Role,
				"content": tr.Content, "time": tr.Time})
			lines.Write(line)
			lines.WriteByte('\n')
			stored++
		}
		if page.Next == 0 {
			break
		}
		from = page.Next
	}
	if stored != n {
		t.Fatalf("%d turns stored, %d sent", stored, n)
	}
	for _, s := range servers {
		s.stop(t)
		if b, err := os.ReadFile(s.logFile); err == nil && strings.Contains(string(b), `"level":"ERROR"`) {
			t.Errorf("a server logged an error:\n%s", b)
		}
	}
	// A tier pass one server skipped while the other held its claim is
	// what an explicit run (or the worker) does.
	mustRun(t, db, "tier", "--config", cfg, "--conversation", conv)
	var got strata.Tree
	if err := json.Unmarshal([]byte(mustRun(t, db, "tree", "--config", cfg, "--conversation", conv, "--json")), &got); err != nil {
		t.Fatal(err)
	}
	ref := filepath.Join(dir, "ref", "ref.db")
	if err := os.Mkdir(filepath.Dir(ref), 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "ref", "turns.jsonl")
	if err := os.WriteFile(file, []byte(lines.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	newStoreFile(t, ref)
	mustRun(t, ref, "import", "--config", cfg, "--policy", preset, "--tz", "UTC", file)
	var want strata.Tree
	if err := json.Unmarshal([]byte(mustRun(t, ref, "tree", "--config", cfg, "--conversation", conv, "--json")), &want); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d turns from 4 clients through 2 servers; %d nodes", preset, stored, len(got.Nodes))
	if msg := treeDiff(&want, &got); msg != "" {
		t.Errorf("the pyramid of the two servers differs from one import: %s", msg)
	}
}
