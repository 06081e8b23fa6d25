package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/extractive"
	"github.com/strata-memory/strata/internal/synth"
	"github.com/strata-memory/strata/postgres"
	"github.com/strata-memory/strata/sqlite"
	"github.com/strata-memory/strata/tiktoken"
)

// runStores is `strata-bench stores`: the SQLite store against the
// PostgreSQL store in one run. Each store gets the same generated
// conversation, imported as `strata import` does (Memory.Import: token
// counts, rollups, the default tiers), in stages that end at each size
// measured; at a stage's end the import pauses and context packages and
// searches are timed on the conversation as it is. After the last stage
// the store's bytes on disk are counted. Then one table shows both stores
// side by side.
func runStores(args []string) error {
	fset := flag.NewFlagSet("strata-bench stores", flag.ContinueOnError)
	n := fset.Int("turns", 1000000, "turns in the generated conversation (the largest size)")
	sizeList := fset.String("sizes", "10000,1000000", "conversation lengths at which to time context and search")
	ingestList := fset.String("ingest-sizes", "100000,1000000", "conversation lengths at which to report the ingest rate")
	queries := fset.Int("queries", 200, "timed calls of each kind at each size")
	budget := fset.Int("budget", 2000, "token budget of the context packages")
	pg := fset.String("pg", os.Getenv("STRATA_TEST_POSTGRES"), "postgres:// URL of a database in which to create a scratch schema (default $STRATA_TEST_POSTGRES); empty: SQLite only")
	dir := fset.String("dir", "", "work directory for the SQLite store (default: a temporary one, removed after)")
	profile := fset.String("cpuprofile", "", "write CPU profiles of each store's ingest stages into this folder (STORE-ingest-SIZE.pprof)")
	if err := fset.Parse(args); err != nil {
		return err
	}
	if *n <= 0 || *queries <= 0 || *budget <= 0 {
		return errors.New("stores: -turns, -queries and -budget must be positive")
	}
	if *pg != "" {
		if u, err := url.Parse(*pg); err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
			return fmt.Errorf("-pg: want a postgres:// URL, got %q", postgres.Redact(*pg))
		}
	}
	sizes, err := parseSizes("-sizes", *sizeList, *n)
	if err != nil {
		return err
	}
	ingestSizes, err := parseSizes("-ingest-sizes", *ingestList, *n)
	if err != nil {
		return err
	}
	// The stages end at every size either list names, and at -turns.
	stages := slices.Concat(sizes, ingestSizes, []int{*n})
	slices.Sort(stages)
	stages = slices.Compact(stages)
	if *profile != "" {
		if err := os.MkdirAll(*profile, 0o755); err != nil {
			return err
		}
	}
	ctx := context.Background()
	begin := time.Now()
	fmt.Printf("strata-bench stores: %d turns, GOMAXPROCS %d, %s/%s\n", *n, runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH)
	jsonl, err := jsonlBytes(*n)
	if err != nil {
		return err
	}
	fmt.Printf("the conversation as JSON lines (the import format): %.1f MB, %.0f bytes a turn\n\n", float64(jsonl)/1e6, float64(jsonl)/float64(*n))

	b := storesBench{stages: stages, sizes: sizes, queries: *queries, budget: *budget, profile: *profile}
	lite, err := b.run(ctx, "sqlite", func(ctx context.Context) (*target, error) { return openSQLiteTarget(ctx, *dir) })
	if err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	var pgRes *storeResult
	if *pg == "" {
		fmt.Println("postgres: skipped: no -pg URL and STRATA_TEST_POSTGRES is not set")
	} else {
		pgRes, err = b.run(ctx, "postgres", func(ctx context.Context) (*target, error) { return openPostgresTarget(ctx, *pg) })
		if err != nil {
			return fmt.Errorf("postgres: %w", err)
		}
		if pgRes.turns != lite.turns || pgRes.nodes != lite.nodes {
			return fmt.Errorf("the stores disagree: sqlite holds %d turns and %d nodes, postgres %d and %d",
				lite.turns, lite.nodes, pgRes.turns, pgRes.nodes)
		}
	}
	b.printTable(lite, pgRes, *n, jsonl, ingestSizes)
	fmt.Printf("\nwhole run: %.1f s\n", time.Since(begin).Seconds())
	return nil
}

// parseSizes reads a comma-separated list of positive sizes and keeps
// those up to max.
func parseSizes(flagName, list string, max int) ([]int, error) {
	var out []int
	for _, s := range strings.Split(list, ",") {
		if strings.TrimSpace(s) == "" {
			continue
		}
		v, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("%s: %q is not a positive number", flagName, s)
		}
		if v <= max {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// jsonlBytes returns the size of the first n generated turns written as
// the JSON lines `strata import` reads (the lines writeJSONL writes).
func jsonlBytes(n int) (int64, error) {
	g := synth.New(42)
	var total int64
	for i := 0; i < n; i++ {
		t := g.Next()
		line, err := json.Marshal(map[string]any{"conversation": "big", "session": t.SessionLabel, "ext_id": t.ExtID,
			"role": t.Role, "name": t.Name, "content": t.Content, "time": t.Time})
		if err != nil {
			return 0, err
		}
		total += int64(len(line)) + 1
	}
	return total, nil
}

// target is one store under measure.
type target struct {
	store strata.Store
	about string // where it is, and settings that bear on the figures
	// finish closes the store and counts its bytes on disk, by part.
	finish func(ctx context.Context) (int64, []part, error)
	// cleanup removes what the store wrote; it runs whatever happened.
	cleanup func()
	// serverCPU, if set, returns the CPU time the database server has
	// spent for this store so far.
	serverCPU func() time.Duration
	// note, set by finish, says more about the bytes.
	note string
}

type part struct {
	name  string
	bytes int64
	// Of bytes, the table's own pages and its indexes' (the rest, in
	// PostgreSQL, is TOAST and the free space and visibility maps).
	table, indexes int64
}

// openSQLiteTarget opens an SQLite store in dir (a temporary folder if
// dir is empty).
func openSQLiteTarget(ctx context.Context, dir string) (*target, error) {
	remove := func() {}
	if dir == "" {
		d, err := os.MkdirTemp("", "strata-bench-")
		if err != nil {
			return nil, err
		}
		dir, remove = d, func() { os.RemoveAll(d) }
	}
	path := filepath.Join(dir, "stores.db")
	for _, p := range []string{path, path + "-wal", path + "-shm", sqlite.ArchiveRoot(path)} {
		if _, err := os.Stat(p); err == nil {
			remove()
			return nil, fmt.Errorf("%s exists; give -dir an empty folder", p)
		}
	}
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		remove()
		return nil, err
	}
	t := &target{store: st, about: path, cleanup: remove}
	t.finish = func(ctx context.Context) (int64, []part, error) {
		// Closing checkpoints the write-ahead log into the file.
		if err := st.Close(); err != nil {
			return 0, nil, err
		}
		return sqliteBytes(ctx, path)
	}
	return t, nil
}

// sqliteBytes counts the database file (and a write-ahead log, if one
// is left) and the archive folder beside it, the file by table (dbstat).
func sqliteBytes(ctx context.Context, path string) (int64, []part, error) {
	var total int64
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if fi, err := os.Stat(p); err == nil {
			total += fi.Size()
		}
	}
	var archive int64
	err := filepath.WalkDir(sqlite.ArchiveRoot(path), func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.Type().IsRegular() {
			fi, err := d.Info()
			if err != nil {
				return err
			}
			archive += fi.Size()
		}
		return nil
	})
	if err != nil {
		return 0, nil, fmt.Errorf("archive folder: %w", err)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return 0, nil, err
	}
	defer db.Close()
	// Each index counts with its table, as pg_total_relation_size counts
	// them; the full-text index's shadow tables count as one.
	rows, err := db.QueryContext(ctx, `SELECT coalesce(m.tbl_name, d.name), coalesce(m.type, 'table'), sum(d.pgsize)
		FROM dbstat d LEFT JOIN sqlite_schema m ON m.name = d.name GROUP BY 1, 2`)
	if err != nil {
		return 0, nil, fmt.Errorf("dbstat: %w", err)
	}
	defer rows.Close()
	by := map[string]*part{}
	var inTables int64
	for rows.Next() {
		var name, kind string
		var n int64
		if err := rows.Scan(&name, &kind, &n); err != nil {
			return 0, nil, err
		}
		inTables += n
		switch {
		case strings.HasPrefix(name, "turns_fts"):
			name = "turns_fts (full-text index)"
		case strings.HasPrefix(name, "nodes_fts"):
			name = "nodes_fts (full-text index)"
		}
		p := by[name]
		if p == nil {
			p = &part{name: name}
			by[name] = p
		}
		p.bytes += n
		if kind == "index" {
			p.indexes += n
		} else {
			p.table += n
		}
	}
	if err := rows.Err(); err != nil {
		return 0, nil, err
	}
	parts := []part{{name: "archive folder", bytes: archive}}
	for _, p := range by {
		parts = append(parts, *p)
	}
	if free := total - inTables; free > 0 {
		parts = append(parts, part{name: "free pages and the log", bytes: free})
	}
	return total + archive, parts, nil
}

// openPostgresTarget opens a PostgreSQL store in a scratch schema of the
// database at dsn.
func openPostgresTarget(ctx context.Context, dsn string) (*target, error) {
	u, err := url.Parse(dsn)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return nil, fmt.Errorf("-pg: want a postgres:// URL, got %q", postgres.Redact(dsn))
	}
	// The store's connections carry an application name of their own, so
	// that their server processes can be found, and their CPU time read.
	app := fmt.Sprintf("strata-bench-%d", os.Getpid())
	q := u.Query()
	q.Set("application_name", app)
	u.RawQuery = q.Encode()
	st, drop, err := postgres.OpenScratch(ctx, u.String(), "strata_bench")
	if err != nil {
		return nil, err
	}
	// The schema is the first of the search path OpenScratch set.
	lu, err := url.Parse(st.Location())
	if err != nil {
		st.Close()
		drop()
		return nil, err
	}
	schema, _, _ := strings.Cut(lu.Query().Get("search_path"), ",")
	mon, err := pgx.Connect(ctx, dsn)
	if err != nil {
		st.Close()
		drop()
		return nil, err
	}
	var version, fsync, syncCommit string
	if err := mon.QueryRow(ctx, `SELECT current_setting('server_version'), current_setting('fsync'), current_setting('synchronous_commit')`).
		Scan(&version, &fsync, &syncCommit); err != nil {
		mon.Close(ctx)
		st.Close()
		drop()
		return nil, err
	}
	cpu := newBackendCPU(mon, app)
	t := &target{
		store: st,
		about: fmt.Sprintf("%s, schema %s (PostgreSQL %s, fsync %s, synchronous_commit %s)", postgres.Redact(dsn), schema, version, fsync, syncCommit),
		cleanup: func() {
			cpu.stop()
			mon.Close(context.Background())
			drop()
		},
		serverCPU: cpu.total,
	}
	t.finish = func(ctx context.Context) (int64, []part, error) {
		if err := st.Close(); err != nil {
			return 0, nil, err
		}
		cpu.stop()
		total, parts, err := schemaBytes(ctx, mon, schema)
		if err != nil {
			return 0, nil, err
		}
		if t.note, err = rowVersions(ctx, mon, schema); err != nil {
			return 0, nil, err
		}
		return total, parts, nil
	}
	return t, nil
}

// schemaBytes returns the bytes on disk of the tables of schema, in all
// and by table.
func schemaBytes(ctx context.Context, mon *pgx.Conn, schema string) (int64, []part, error) {
	rows, err := mon.Query(ctx, `SELECT c.relname, pg_total_relation_size(c.oid), pg_relation_size(c.oid), pg_indexes_size(c.oid)
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = $1 AND c.relkind = 'r'`, schema)
	if err != nil {
		return 0, nil, err
	}
	defer rows.Close()
	var total int64
	var parts []part
	for rows.Next() {
		var p part
		if err := rows.Scan(&p.name, &p.bytes, &p.table, &p.indexes); err != nil {
			return 0, nil, err
		}
		total += p.bytes
		parts = append(parts, p)
	}
	if err := rows.Err(); err != nil {
		return 0, nil, err
	}
	return total, parts, nil
}

// rowVersions says how many row versions of the schema's tables are live
// and dead: those that updates left behind (tier moves slim the turns'
// rows) are space autovacuum lets later writes reuse.
func rowVersions(ctx context.Context, mon *pgx.Conn, schema string) (string, error) {
	var live, dead int64
	if err := mon.QueryRow(ctx, `SELECT coalesce(sum(n_live_tup), 0)::bigint, coalesce(sum(n_dead_tup), 0)::bigint
		FROM pg_stat_user_tables WHERE schemaname = $1`, schema).Scan(&live, &dead); err != nil {
		return "", err
	}
	return fmt.Sprintf("row versions in the schema's tables: %d live, %d dead (pg_stat_user_tables)", live, dead), nil
}

// backendCPU follows the CPU time of the server processes whose
// connections carry one application name. It works when the server runs
// on this machine (it reads /proc); otherwise total is 0. A process that
// ends between two samples loses what it spent since the last one.
type backendCPU struct {
	mu    sync.Mutex
	ticks map[int]int64 // by process id, the latest user+system ticks seen
	done  chan struct{}
	wg    sync.WaitGroup
	once  sync.Once
}

func newBackendCPU(conn *pgx.Conn, app string) *backendCPU {
	c := &backendCPU{ticks: map[int]int64{}, done: make(chan struct{})}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			c.sample(conn, app)
			select {
			case <-c.done:
				return
			case <-tick.C:
			}
		}
	}()
	return c
}

func (c *backendCPU) sample(conn *pgx.Conn, app string) {
	rows, err := conn.Query(context.Background(), `SELECT pid FROM pg_stat_activity WHERE application_name = $1`, app)
	if err != nil {
		return
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		return
	}
	for _, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// The fields after the command name, which ends at the last ')':
		// utime and stime are the 12th and 13th of them.
		_, rest, ok := strings.Cut(string(b), ") ")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) < 13 {
			continue
		}
		u, _ := strconv.ParseInt(f[11], 10, 64)
		s, _ := strconv.ParseInt(f[12], 10, 64)
		c.mu.Lock()
		c.ticks[pid] = max(c.ticks[pid], u+s)
		c.mu.Unlock()
	}
}

// stop ends the sampling; total keeps what was seen.
func (c *backendCPU) stop() {
	c.once.Do(func() { close(c.done) })
	c.wg.Wait()
}

// total is the CPU time seen so far, at 100 ticks a second (Linux's
// USER_HZ).
func (c *backendCPU) total() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	var t int64
	for _, v := range c.ticks {
		t += v
	}
	return time.Duration(t) * 10 * time.Millisecond
}

// timedStore times the store methods an import calls, while on.
type timedStore struct {
	strata.Store
	on    atomic.Bool
	mu    sync.Mutex
	stats map[string]*methodTime
}

type methodTime struct {
	calls int
	total time.Duration
}

func (s *timedStore) note(method string, start time.Time) {
	if !s.on.Load() {
		return
	}
	d := time.Since(start)
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.stats[method]
	if m == nil {
		m = &methodTime{}
		s.stats[method] = m
	}
	m.calls++
	m.total += d
}

func (s *timedStore) EnsureConversation(ctx context.Context, c strata.Conversation) (strata.Conversation, error) {
	defer s.note("EnsureConversation", time.Now())
	return s.Store.EnsureConversation(ctx, c)
}

func (s *timedStore) Conversation(ctx context.Context, namespace, id string) (strata.Conversation, error) {
	defer s.note("Conversation", time.Now())
	return s.Store.Conversation(ctx, namespace, id)
}

func (s *timedStore) ExistingExtIDs(ctx context.Context, namespace, conversation string, extIDs []string) (map[string]bool, error) {
	defer s.note("ExistingExtIDs", time.Now())
	return s.Store.ExistingExtIDs(ctx, namespace, conversation, extIDs)
}

func (s *timedStore) AppendTurns(ctx context.Context, namespace, conversation string, turns []strata.Turn) ([]strata.Turn, error) {
	defer s.note("AppendTurns", time.Now())
	return s.Store.AppendTurns(ctx, namespace, conversation, turns)
}

func (s *timedStore) AppendTurnsAfter(ctx context.Context, namespace, conversation string, after int64, turns []strata.Turn) ([]strata.Turn, error) {
	defer s.note("AppendTurnsAfter", time.Now())
	return s.Store.AppendTurnsAfter(ctx, namespace, conversation, after, turns)
}

func (s *timedStore) Turns(ctx context.Context, f strata.TurnFilter) ([]strata.Turn, error) {
	defer s.note("Turns", time.Now())
	return s.Store.Turns(ctx, f)
}

func (s *timedStore) PutNodes(ctx context.Context, namespace, conversation string, nodes []strata.Node) error {
	defer s.note("PutNodes", time.Now())
	return s.Store.PutNodes(ctx, namespace, conversation, nodes)
}

func (s *timedStore) ReplaceNodes(ctx context.Context, namespace, conversation string, ids []string, nodes []strata.Node) (int, error) {
	defer s.note("ReplaceNodes", time.Now())
	return s.Store.ReplaceNodes(ctx, namespace, conversation, ids, nodes)
}

func (s *timedStore) Nodes(ctx context.Context, f strata.NodeFilter) ([]strata.Node, error) {
	defer s.note("Nodes", time.Now())
	return s.Store.Nodes(ctx, f)
}

func (s *timedStore) Demote(ctx context.Context, namespace, conversation string, ids []string, to strata.Tier, at time.Time) ([]strata.Move, error) {
	defer s.note("Demote", time.Now())
	return s.Store.Demote(ctx, namespace, conversation, ids, to, at)
}

func (s *timedStore) Expire(ctx context.Context, namespace, conversation string, ids []string, rule string, at time.Time, dryRun bool) ([]strata.Expiry, error) {
	defer s.note("Expire", time.Now())
	return s.Store.Expire(ctx, namespace, conversation, ids, rule, at, dryRun)
}

func (s *timedStore) AddLearnings(ctx context.Context, namespace, conversation string, ls []strata.Learning) ([]strata.Learning, error) {
	defer s.note("AddLearnings", time.Now())
	return s.Store.AddLearnings(ctx, namespace, conversation, ls)
}

func (s *timedStore) Learnings(ctx context.Context, f strata.LearningFilter) ([]strata.Learning, error) {
	defer s.note("Learnings", time.Now())
	return s.Store.Learnings(ctx, f)
}

func (s *timedStore) RecordCalls(ctx context.Context, namespace, conversation string, calls []strata.Call) error {
	defer s.note("RecordCalls", time.Now())
	return s.Store.RecordCalls(ctx, namespace, conversation, calls)
}

func (s *timedStore) Claim(ctx context.Context, key, holder string, now, until time.Time) (bool, error) {
	defer s.note("Claim", time.Now())
	return s.Store.Claim(ctx, key, holder, now, until)
}

func (s *timedStore) Release(ctx context.Context, key, holder string) error {
	defer s.note("Release", time.Now())
	return s.Store.Release(ctx, key, holder)
}

func (s *timedStore) Search(ctx context.Context, q strata.SearchQuery) ([]strata.Hit, error) {
	defer s.note("Search", time.Now())
	return s.Store.Search(ctx, q)
}

// stage is the ingest up to one size.
type stage struct {
	turns     int           // the conversation's length at its end
	wall      time.Duration // of this stage alone
	cpu       time.Duration // of this process, this stage
	serverCPU time.Duration // of the database server, this stage
}

type storeResult struct {
	name              string
	about             string
	stages            []stage
	ctxLat, searchLat map[int][]time.Duration
	turns, nodes      int64
	cold, warm        int64 // spans
	bytes             int64
	parts             []part
	methods           map[string]*methodTime
	note              string
}

// cumulative returns the ingest wall time up to the stage that ends at
// size, and whether one does.
func (r *storeResult) cumulative(size int) (time.Duration, bool) {
	var d time.Duration
	for _, s := range r.stages {
		d += s.wall
		if s.turns == size {
			return d, true
		}
	}
	return 0, false
}

type storesBench struct {
	stages, sizes   []int
	queries, budget int
	profile         string
}

// run measures one store: ingest in stages, latency at the sizes, bytes
// at the end.
func (b *storesBench) run(ctx context.Context, name string, open func(context.Context) (*target, error)) (*storeResult, error) {
	t, err := open(ctx)
	if err != nil {
		return nil, err
	}
	defer t.cleanup()
	fmt.Printf("%s: %s\n", name, t.about)
	ts := &timedStore{Store: t.store, stats: map[string]*methodTime{}}
	tok, err := tiktoken.New("o200k_base")
	if err != nil {
		return nil, err
	}
	// The defaults of `strata import`: the chunks policy, the default
	// tiers (hot: the last two micro-chunks; cold beyond 1,000 turns), the
	// extractive summarizer, no embedder.
	m, err := strata.New(strata.Config{Store: ts, Tokenizer: tok, Summarizer: extractive.New()})
	if err != nil {
		t.store.Close()
		return nil, err
	}
	res := &storeResult{name: name, about: t.about, ctxLat: map[int][]time.Duration{}, searchLat: map[int][]time.Duration{}}
	g := synth.New(42)
	done := 0
	for _, size := range b.stages {
		st, err := b.ingest(ctx, m, ts, t, g, name, done, size)
		if err != nil {
			t.store.Close()
			return nil, err
		}
		done = size
		res.stages = append(res.stages, st)
		fmt.Printf("  ingest to %9d turns: %6.1f s, %7.0f turns/s this stage (cpu: %.1f s here, %.1f s in the server)\n",
			size, st.wall.Seconds(), float64(st.turns-turnsBefore(res.stages))/st.wall.Seconds(), st.cpu.Seconds(), st.serverCPU.Seconds())
		if slices.Contains(b.sizes, size) {
			c, s, err := b.latency(ctx, m)
			if err != nil {
				t.store.Close()
				return nil, fmt.Errorf("at %d turns: %w", size, err)
			}
			res.ctxLat[size], res.searchLat[size] = c, s
			fmt.Printf("  at %9d turns: context p50 %s p99 %s, search p50 %s p99 %s\n", size, pct(c, 50), pct(c, 99), pct(s, 50), pct(s, 99))
		}
	}
	res.methods = ts.stats
	stats, err := m.Stats(ctx)
	if err != nil {
		t.store.Close()
		return nil, err
	}
	res.turns = stats.Turns
	for _, l := range stats.Levels {
		res.nodes += l.Nodes
	}
	for _, ti := range stats.Tiers {
		switch ti.Tier {
		case strata.TierWarm:
			res.warm = ti.Spans
		case strata.TierCold:
			res.cold = ti.Spans
		}
	}
	if res.bytes, res.parts, err = t.finish(ctx); err != nil {
		return nil, fmt.Errorf("bytes on disk: %w", err)
	}
	res.note = t.note
	fmt.Printf("  %d turns, %d nodes, %d spans warm, %d cold; %.1f MB on disk\n\n", res.turns, res.nodes, res.warm, res.cold, float64(res.bytes)/1e6)
	return res, nil
}

func turnsBefore(stages []stage) int {
	if len(stages) < 2 {
		return 0
	}
	return stages[len(stages)-2].turns
}

// ingest imports the turns from done up to size, as one Memory.Import.
func (b *storesBench) ingest(ctx context.Context, m *strata.Memory, ts *timedStore, t *target, g *synth.Generator, name string, done, size int) (stage, error) {
	if b.profile != "" {
		f, err := os.Create(filepath.Join(b.profile, fmt.Sprintf("%s-ingest-%d.pprof", name, size)))
		if err != nil {
			return stage{}, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return stage{}, err
		}
		defer pprof.StopCPUProfile()
	}
	var server0 time.Duration
	if t.serverCPU != nil {
		server0 = t.serverCPU()
	}
	cpu0 := selfCPU()
	ts.on.Store(true)
	defer ts.on.Store(false)
	i := done
	start := time.Now()
	_, err := m.Import(ctx, func() (string, strata.Turn, error) {
		if i == size {
			return "", strata.Turn{}, io.EOF
		}
		i++
		return "big", g.Next(), nil
	})
	st := stage{turns: size, wall: time.Since(start), cpu: selfCPU() - cpu0}
	if err != nil {
		return st, fmt.Errorf("import to %d turns: %w", size, err)
	}
	if t.serverCPU != nil {
		// Let the sampler see the last statements' processes once more.
		time.Sleep(300 * time.Millisecond)
		st.serverCPU = t.serverCPU() - server0
	}
	return st, nil
}

// latency times context packages (a two-word query) and searches (k 10,
// BM25: no embedder) on the same queries, after five untimed rounds. The
// queries are the same for every store.
func (b *storesBench) latency(ctx context.Context, m *strata.Memory) (ctxLat, searchLat []time.Duration, err error) {
	words := strings.Fields("garden recipe bakery flour painting guitar adoption camping deadline server database deploy career yoga holiday conference")
	r := rand.New(rand.NewPCG(1, 2))
	const warm = 5
	for k := 0; k < b.queries+warm; k++ {
		q := words[r.IntN(len(words))] + " " + words[r.IntN(len(words))]
		t0 := time.Now()
		pkg, err := m.Context(ctx, strata.ContextRequest{Conversation: "big", Query: q, Budget: b.budget})
		if err != nil {
			return nil, nil, fmt.Errorf("context %q: %w", q, err)
		}
		t1 := time.Now()
		if _, err := m.Search(ctx, "big", q, 10); err != nil {
			return nil, nil, fmt.Errorf("search %q: %w", q, err)
		}
		t2 := time.Now()
		if pkg.Tokens > b.budget {
			return nil, nil, fmt.Errorf("context %q: %d tokens over budget %d", q, pkg.Tokens, b.budget)
		}
		if k >= warm {
			ctxLat = append(ctxLat, t1.Sub(t0))
			searchLat = append(searchLat, t2.Sub(t1))
		}
	}
	return ctxLat, searchLat, nil
}

// printTable prints both stores side by side, with PostgreSQL/SQLite
// ratios, then where each store's ingest time went.
func (b *storesBench) printTable(lite, pg *storeResult, n int, jsonl int64, ingestSizes []int) {
	fmt.Printf("%-46s %12s %12s %10s\n", "", "SQLite", "PostgreSQL", "PG/SQLite")
	for _, l := range b.tableLines(lite, pg, n, jsonl, ingestSizes) {
		fmt.Printf("%-46s %12s %12s %10s\n", l.label, l.a, l.b, l.ratio)
	}
	for _, r := range []*storeResult{lite, pg} {
		if r != nil {
			printIngestAccount(r, n)
		}
	}
}

// tableLine is a line of the side-by-side table: a figure of SQLite (a)
// and of PostgreSQL (b), and their ratio.
type tableLine struct{ label, a, b, ratio string }

// tableLines returns the lines of the side-by-side table: ingest rates,
// latencies, then bytes on disk.
func (b *storesBench) tableLines(lite, pg *storeResult, n int, jsonl int64, ingestSizes []int) []tableLine {
	var lines []tableLine
	ratio := func(x, y float64) string {
		if pg == nil || x == 0 {
			return "-"
		}
		return fmt.Sprintf("%.2f", y/x)
	}
	for _, size := range ingestSizes {
		a, c := ingestRate(lite, size), ingestRate(pg, size)
		lines = append(lines, tableLine{fmt.Sprintf("ingest to %s turns (turns/s)", thousands(size)), orDash(a, "%.0f"), orDash(c, "%.0f"), ratio(a, c)})
	}
	for _, size := range b.sizes {
		for _, k := range []struct {
			what string
			get  func(*storeResult) []time.Duration
		}{
			{fmt.Sprintf("context (budget %d, query)", b.budget), func(r *storeResult) []time.Duration { return r.ctxLat[size] }},
			{"search (k 10, BM25)", func(r *storeResult) []time.Duration { return r.searchLat[size] }},
		} {
			for _, p := range []int{50, 99} {
				a := percentileMS(k.get(lite), p)
				var c float64
				if pg != nil {
					c = percentileMS(k.get(pg), p)
				}
				lines = append(lines, tableLine{fmt.Sprintf("%s p%d at %s (ms)", k.what, p, thousands(size)), orDash(a, "%.2f"), orDash(c, "%.2f"), ratio(a, c)})
			}
		}
	}
	per := func(r *storeResult) float64 {
		if r == nil {
			return 0
		}
		return float64(r.bytes) / float64(n)
	}
	share := func(r *storeResult) float64 {
		if r == nil {
			return 0
		}
		return 100 * float64(r.bytes) / float64(jsonl)
	}
	return append(lines,
		tableLine{fmt.Sprintf("bytes on disk per turn at %s", thousands(n)), orDash(per(lite), "%.0f"), orDash(per(pg), "%.0f"), ratio(per(lite), per(pg))},
		tableLine{fmt.Sprintf("  of the JSON lines (%.0f bytes a turn)", float64(jsonl)/float64(n)), orDash(share(lite), "%.0f%%"), orDash(share(pg), "%.0f%%"), "-"},
	)
}

// ingestRate is r's ingest rate in turns a second up to size turns, 0 if
// there is none.
func ingestRate(r *storeResult, size int) float64 {
	if r == nil {
		return 0
	}
	d, ok := r.cumulative(size)
	if !ok {
		return 0
	}
	return float64(size) / d.Seconds()
}

// percentileMS is the p-th percentile of ds in milliseconds, 0 if ds is
// empty.
func percentileMS(ds []time.Duration, p int) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return float64(s[max(min(len(s)-1, (len(s)*p+99)/100-1), 0)].Microseconds()) / 1000
}

// orDash formats v, or is "-" when v is 0 (no figure).
func orDash(v float64, format string) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf(format, v)
}

// printIngestAccount prints where r's ingest of n turns went: time, the
// store's methods, and bytes on disk by table.
func printIngestAccount(r *storeResult, n int) {
	var wall, cpu, server time.Duration
	for _, s := range r.stages {
		wall, cpu, server = wall+s.wall, cpu+s.cpu, server+s.serverCPU
	}
	fmt.Printf("\n%s ingest, %d turns: %.1f s; cpu %.1f s in this process", r.name, n, wall.Seconds(), cpu.Seconds())
	if server > 0 {
		fmt.Printf(", %.1f s in the server's processes", server.Seconds())
	}
	fmt.Println("\n  store methods during ingest (wall time; calls can overlap):")
	names := make([]string, 0, len(r.methods))
	for k := range r.methods {
		names = append(names, k)
	}
	slices.SortFunc(names, func(x, y string) int { return int(r.methods[y].total - r.methods[x].total) })
	for _, k := range names {
		mt := r.methods[k]
		fmt.Printf("    %-20s %7d calls %8.1f s  %5.1f%% of the ingest\n", k, mt.calls, mt.total.Seconds(), 100*mt.total.Seconds()/wall.Seconds())
	}
	printParts(r, n)
	if r.note != "" {
		fmt.Println("  " + r.note)
	}
}

// printParts prints r's bytes on disk by table (with its indexes), those
// of 1% or more, then the rest.
func printParts(r *storeResult, n int) {
	fmt.Println("  bytes on disk by table (with its indexes), those of 1% or more:")
	slices.SortFunc(r.parts, func(x, y part) int { return int(y.bytes - x.bytes) })
	var rest int64
	for _, p := range r.parts {
		if p.bytes*100 < r.bytes {
			rest += p.bytes
			continue
		}
		fmt.Printf("    %-30s %12d  %6.1f bytes/turn", p.name, p.bytes, float64(p.bytes)/float64(n))
		if p.table+p.indexes > 0 {
			fmt.Printf("  (table %.1f, indexes %.1f", float64(p.table)/float64(n), float64(p.indexes)/float64(n))
			if other := p.bytes - p.table - p.indexes; other > 0 {
				fmt.Printf(", TOAST and maps %.1f", float64(other)/float64(n))
			}
			fmt.Print(")")
		}
		fmt.Println()
	}
	fmt.Printf("    %-30s %12d  %6.1f bytes/turn\n", "the rest", rest, float64(rest)/float64(n))
}

// thousands writes n with commas: 1,000,000.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
