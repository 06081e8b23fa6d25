// Command strata-bench measures strata's ingest, context and memory figures
// against baselines taken in the same run, and prints them:
//
//   - ingest: a generated conversation imported the way `strata import`
//     does it (parse, token counts, SQLite + FTS5, rollups), against a bare
//     batched INSERT loop of the same rows with the same driver, with and
//     without their FTS5 index entries, and the CPU time (user+sys) of the
//     import and of the bare+FTS5 loop, which a shared machine disturbs
//     less than the rates;
//   - memory: the peak resident set of the process that imports;
//   - bytes: the store and its archive with every closed span cold, broken
//     down, against the same turns as JSON lines;
//   - context: Context(budget 4000) latency, p50 and p99, at several
//     conversation lengths, without a query and with one (as a ratio of
//     the first), and Search (BM25) with the same queries;
//   - hybrid search at the largest length, against BM25 alone (-hybrid).
//
// `strata-bench http` instead measures the HTTP API against the engine in
// the same run: context packages (budget 2,000, with a query) and searches,
// p50 and p99, over a loopback server and in process (see http.go).
//
// `strata-bench stores` measures the SQLite store against the PostgreSQL
// store in the same run: ingest rate, context and search latency, and
// bytes on disk (see stores.go).
//
// Usage: go run ./cmd/strata-bench [-turns 1000000] [-sizes 10000,100000,1000000] [-ingest-only] [-hybrid=false] [-dir D [-reuse]] [-cpuprofile F]
//
//	go run ./cmd/strata-bench http [-turns 10000] [-queries 200] [-budget 2000]
//	go run ./cmd/strata-bench stores [-turns 1000000] [-sizes 10000,1000000] [-queries 200] [-pg URL]
package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	_ "modernc.org/sqlite"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/extractive"
	"github.com/strata-memory/strata/formats"
	"github.com/strata-memory/strata/internal/hashembed"
	"github.com/strata-memory/strata/internal/synth"
	"github.com/strata-memory/strata/sqlite"
	"github.com/strata-memory/strata/tiktoken"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "-child-import" {
		if p := os.Getenv("STRATA_BENCH_CPUPROFILE"); p != "" {
			f, err := os.Create(p)
			if err == nil {
				pprof.StartCPUProfile(f)
				defer pprof.StopCPUProfile()
			}
		}
		if err := childImport(os.Args[2], os.Args[3], os.Args[4]); err != nil {
			fmt.Fprintln(os.Stderr, "import:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) > 1 && (os.Args[1] == "http" || os.Args[1] == "stores") {
		sub := runHTTP
		if os.Args[1] == "stores" {
			sub = runStores
		}
		if err := sub(os.Args[2:]); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				os.Exit(2)
			}
			fmt.Fprintln(os.Stderr, "strata-bench:", err)
			os.Exit(1)
		}
		return
	}
	turns := flag.Int("turns", 1000000, "turns in the generated conversation")
	sizes := flag.String("sizes", "10000,100000,1000000", "conversation lengths at which to time Context")
	queries := flag.Int("queries", 200, "Context calls per length")
	dir := flag.String("dir", "", "work directory (default: a temporary one, removed after)")
	ingestOnly := flag.Bool("ingest-only", false, "stop after the ingest and memory figures")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the Context calls with a query at the largest length to this file")
	hybrid := flag.Bool("hybrid", true, "then embed the largest conversation with a test embedder (no model: a hash of the words) and time hybrid search against BM25")
	reuse := flag.Bool("reuse", false, "with -dir: time Context on the databases an earlier run left there instead of generating and importing again")
	locomo := flag.String("locomo", "", "instead: import this LoCoMo file with every span cold and print the bytes it takes")
	flag.Parse()
	if *locomo != "" {
		if err := coldBytes(*locomo, *dir); err != nil {
			fmt.Fprintln(os.Stderr, "strata-bench:", err)
			os.Exit(1)
		}
		return
	}
	if *reuse && *dir == "" {
		fmt.Fprintln(os.Stderr, "strata-bench: -reuse needs -dir")
		os.Exit(2)
	}
	if err := run(*turns, *sizes, *queries, *dir, *ingestOnly, *reuse, *hybrid, *cpuprofile); err != nil {
		fmt.Fprintln(os.Stderr, "strata-bench:", err)
		os.Exit(1)
	}
}

func run(n int, sizeList string, queries int, dir string, ingestOnly, reuse, hybrid bool, cpuprofile string) error {
	ctx := context.Background()
	if dir == "" {
		d, err := os.MkdirTemp("", "strata-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var sizes []int
	for _, s := range strings.Split(sizeList, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || v <= 0 {
			return fmt.Errorf("-sizes: %q is not a positive number", s)
		}
		if v <= n {
			sizes = append(sizes, v)
		}
	}
	fmt.Printf("strata-bench: %d turns, GOMAXPROCS %d, %s/%s\n\n", n, runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH)

	file := filepath.Join(dir, "conv.jsonl")
	db := filepath.Join(dir, "strata.db")
	if !reuse {
		if err := ingest(ctx, file, db, dir, n, ingestOnly); err != nil || ingestOnly {
			return err
		}
	}
	if err := contexts(ctx, file, db, dir, n, sizes, queries, reuse, cpuprofile); err != nil || !hybrid {
		return err
	}
	return hybridFigures(ctx, db, queries)
}

// hybridFigures embeds the conversation in db with a test embedder (a
// hash of the words, dimension 384: the store's and the index's work, no
// model's) and times Search, hybrid and BM25 alone, with the queries
// timeContext uses.
func hybridFigures(ctx context.Context, db string, n int) error {
	lm, st, err := openMemory(ctx, db, &strata.TierPolicy{Off: true})
	if err != nil {
		return err
	}
	defer st.Close()
	hm, err := memoryOn(st, &strata.TierPolicy{Off: true}, hashembed.New("hash-384", 384))
	if err != nil {
		return err
	}
	start := time.Now()
	res, err := hm.Embed(ctx, strata.EmbedRequest{Conversation: "big"})
	if err != nil {
		return err
	}
	fmt.Printf("\nhybrid search: %d turns and %d summaries embedded in %.1f s (test embedder, dimension 384)\n",
		res.Turns, res.Nodes, time.Since(start).Seconds())
	qs := benchQueries(n + 5)
	start = time.Now()
	if _, err := hm.Search(ctx, "big", qs[0], 10); err != nil {
		return err
	}
	fmt.Printf("  first search of the process (loads the vector index): %.1f s\n", time.Since(start).Seconds())
	for _, mode := range []struct {
		name string
		m    *strata.Memory
	}{{"hybrid (BM25 and vectors, fused)", hm}, {"BM25 alone, same run", lm}} {
		lat, err := timeSearch(ctx, mode.m, qs)
		if err != nil {
			return err
		}
		fmt.Printf("  Search, %-34s p50 %9s  p99 %9s\n", mode.name, pct(lat, 50), pct(lat, 99))
	}
	return nil
}

// ingest writes the conversation as JSON lines, imports it, and prints the
// ingest figures against the bare baselines and one tiering pass.
func ingest(ctx context.Context, file, db, dir string, n int, ingestOnly bool) error {
	// The input file, as a user would import it.
	bytes, tokens, err := writeJSONL(file, n)
	if err != nil {
		return err
	}
	fmt.Printf("generated %s: %d turns, %.1f MB, %.1f tokens/turn (o200k_base)\n\n", filepath.Base(file), n, float64(bytes)/1e6, tokens)

	// 1. strata import, in a child process so its peak RSS is its own.
	self, err := os.Executable()
	if err != nil {
		return err
	}
	start := time.Now()
	cmd := exec.Command(self, "-child-import", file, db, "big")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return err
	}
	importTime := time.Since(start)
	importCPU := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	var rssKB int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rssKB = ru.Maxrss
	}

	// 2. The baselines: the same rows, bare.
	rows, err := readRows(file)
	if err != nil {
		return err
	}
	cpu0 := selfCPU()
	fts, err := bareInsert(ctx, filepath.Join(dir, "bare-fts.db"), rows, true)
	if err != nil {
		return err
	}
	ftsCPU := selfCPU() - cpu0
	plain, err := bareInsert(ctx, filepath.Join(dir, "bare.db"), rows, false)
	if err != nil {
		return err
	}
	rows = nil
	rate := float64(n) / importTime.Seconds()
	fmt.Println("ingest (turns/s, higher is better)")
	fmt.Printf("  strata import (tokens, SQLite+FTS5, rollups)  %9.0f   %.2fx of bare+FTS5  (%.1f s)\n", rate, rate/fts, importTime.Seconds())
	fmt.Printf("  bare batched INSERT + FTS5                    %9.0f\n", fts)
	fmt.Printf("  bare batched INSERT, no FTS5                  %9.0f\n", plain)
	fmt.Printf("\ncpu time (user+sys): import %.1f s, bare+FTS5 %.1f s: bare is %.2fx of import\n",
		importCPU.Seconds(), ftsCPU.Seconds(), ftsCPU.Seconds()/importCPU.Seconds())
	fmt.Printf("\nmemory: peak resident set of the import: %.0f MB\n\n", float64(rssKB)/1024)
	if ingestOnly {
		return nil
	}

	// 3. One tiering pass over the whole import (default policy: all but
	// the newest 1,000 turns go cold), on a copy so the Context figures
	// below read hot rows as before.
	return tierPass(ctx, db, filepath.Join(dir, "tiered.db"), n)
}

// contexts times Context at each length, on prefixes of the conversation.
func contexts(ctx context.Context, file, db, dir string, n int, sizes []int, queries int, reuse bool, cpuprofile string) error {
	// 4. Context latency by length: prefixes of the same conversation.
	fmt.Println("Context(budget 4000) latency by conversation length: without a query (the baseline), with a")
	fmt.Println("two-word query (and its ratio to the baseline), Search (BM25, 10 hits) with the same queries, and")
	fmt.Println("the first Context with a query of the process (from 20,000 turns, it loads the in-memory indexes)")
	fmt.Printf("  %9s  %9s %9s   %17s %17s   %9s %9s   %9s\n", "turns", "p50", "p99", "p50 query", "p99 query", "search p50", "p99", "first")
	for _, size := range sizes {
		path := db
		if size != n {
			path = filepath.Join(dir, fmt.Sprintf("prefix-%d.db", size))
			if _, err := os.Stat(path); !reuse || err != nil {
				os.Remove(path)
				if err := prefixImport(file, path, size); err != nil {
					return err
				}
			}
		}
		prof := ""
		if size == sizes[len(sizes)-1] {
			prof = cpuprofile
		}
		plain, withQ, search, first, err := timeContext(ctx, path, queries, prof)
		if err != nil {
			return err
		}
		ratio := func(a, b []time.Duration, p int) string {
			return fmt.Sprintf("%s %5.2fx", pct(a, p), float64(quantile(a, p))/float64(quantile(b, p)))
		}
		fmt.Printf("  %9d  %9s %9s   %17s %17s   %9s %9s   %9s\n", size, pct(plain, 50), pct(plain, 99),
			ratio(withQ, plain, 50), ratio(withQ, plain, 99), pct(search, 50), pct(search, 99), pct([]time.Duration{first}, 50))
	}
	return nil
}

func writeJSONL(path string, n int) (int64, float64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	tok, err := tiktoken.New("o200k_base")
	if err != nil {
		return 0, 0, err
	}
	g := synth.New(42)
	var total int64
	var toks int64
	for i := 0; i < n; i++ {
		t := g.Next()
		if i < 10000 {
			toks += int64(tok.Count(t.Content))
		}
		line, _ := json.Marshal(map[string]any{"conversation": "big", "session": t.SessionLabel, "ext_id": t.ExtID,
			"role": t.Role, "name": t.Name, "content": t.Content, "time": t.Time})
		line = append(line, '\n')
		total += int64(len(line))
		if _, err := w.Write(line); err != nil {
			return 0, 0, err
		}
	}
	return total, float64(toks) / float64(min(n, 10000)), w.Flush()
}

// openMemory opens the engine the way the CLI does.
func openMemory(ctx context.Context, db string, tiers *strata.TierPolicy) (*strata.Memory, *sqlite.Store, error) {
	st, err := sqlite.Open(ctx, db)
	if err != nil {
		return nil, nil, err
	}
	m, err := memoryOn(st, tiers, nil)
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return m, st, nil
}

// memoryOn makes a Memory over st as the bench uses one: o200k token
// counts, extractive summaries, tiers, and emb if it is not nil.
func memoryOn(st strata.Store, tiers *strata.TierPolicy, emb strata.Embedder) (*strata.Memory, error) {
	tok, err := tiktoken.New("o200k_base")
	if err != nil {
		return nil, err
	}
	cfg := strata.Config{Store: st, Tokenizer: tok, Summarizer: extractive.New(), Tiers: tiers}
	if emb != nil {
		cfg.Embedder, cfg.Embedding = emb, strata.EmbeddingOptions{BatchSize: 256}
	}
	return strata.New(cfg)
}

// childImport imports file into db in batches of 5,000 turns, as
// `strata import` does.
func childImport(file, db, conv string) error {
	return importTurns(file, db, -1)
}

func prefixImport(file, db string, n int) error { return importTurns(file, db, n) }

func importTurns(file, db string, limit int) error {
	ctx := context.Background()
	// Ingest with rollups, as the targets define it; tiering is measured
	// on its own (see tierPass).
	m, st, err := openMemory(ctx, db, &strata.TierPolicy{Off: true})
	if err != nil {
		return err
	}
	defer st.Close()
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	r, err := formats.Open(formats.JSONL, file, bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		return err
	}
	count := 0
	_, err = m.Import(ctx, func() (string, strata.Turn, error) {
		if limit >= 0 && count >= limit {
			return "", strata.Turn{}, io.EOF
		}
		rec, err := r.Next()
		count++
		return "big", rec.Turn, err
	})
	return err
}

type row struct {
	extID, session, role, name, content string
	time                                int64
}

func readRows(file string) ([]row, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := formats.Open(formats.JSONL, file, bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		return nil, err
	}
	var rows []row
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			return nil, err
		}
		t := rec.Turn
		rows = append(rows, row{t.ExtID, t.SessionLabel, string(t.Role), t.Name, t.Content, t.Time.UnixNano()})
	}
}

// bareInsert writes rows into strata's own schema with plain prepared
// INSERTs, 5,000 per transaction, and their FTS5 entries if fts: the least
// any searchable store must do. It returns rows per second.
func bareInsert(ctx context.Context, path string, rows []row, fts bool) (float64, error) {
	st, err := sqlite.Open(ctx, path) // creates the schema and pragmas strata uses
	if err != nil {
		return 0, err
	}
	st.Close()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=busy_timeout(10000)&_txlock=immediate")
	if err != nil {
		return 0, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, `INSERT INTO conversations (namespace, id, policy, created) VALUES ('default', 'big', 'chunks', 0)`); err != nil {
		return 0, err
	}
	start := time.Now()
	for lo := 0; lo < len(rows); lo += 5000 {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return 0, err
		}
		ins, err := tx.PrepareContext(ctx, `INSERT INTO turns (conversation, seq, ext_id, session, session_label, role, name, content, time, tokens)
			VALUES (1, ?, ?, 0, ?, ?, ?, ?, ?, 0)`)
		if err != nil {
			return 0, err
		}
		idx, err := tx.PrepareContext(ctx, `INSERT INTO turns_fts (rowid, text, scope) VALUES (?, ?, 'c1 n1')`)
		if err != nil {
			return 0, err
		}
		for i := lo; i < min(lo+5000, len(rows)); i++ {
			r := rows[i]
			res, err := ins.ExecContext(ctx, i+1, r.extID, r.session, r.role, r.name, r.content, r.time)
			if err != nil {
				return 0, err
			}
			if fts {
				id, _ := res.LastInsertId()
				if _, err := idx.ExecContext(ctx, id, r.content); err != nil {
					return 0, err
				}
			}
		}
		ins.Close()
		idx.Close()
		if err := tx.Commit(); err != nil {
			return 0, err
		}
	}
	return float64(len(rows)) / time.Since(start).Seconds(), nil
}

// timeContext times Context(budget 4000) without a query and with one,
// then Search (BM25, 10 hits) with the same queries. A CPU profile, if
// asked for, covers the Context calls.
func timeContext(ctx context.Context, db string, n int, cpuprofile string) (plain, withQ, search []time.Duration, first time.Duration, err error) {
	m, st, err := openMemory(ctx, db, &strata.TierPolicy{Off: true})
	if err != nil {
		return nil, nil, nil, 0, err
	}
	defer st.Close()
	qs := benchQueries(n + 5)
	stop := func() {}
	for i, query := range qs {
		if i == 5 && cpuprofile != "" {
			f, err := os.Create(cpuprofile)
			if err != nil {
				return nil, nil, nil, 0, err
			}
			if err := pprof.StartCPUProfile(f); err != nil {
				f.Close()
				return nil, nil, nil, 0, err
			}
			stop = func() { pprof.StopCPUProfile(); f.Close() }
			defer func() { stop() }()
		}
		for _, q := range []string{"", query} {
			start := time.Now()
			pkg, err := m.Context(ctx, strata.ContextRequest{Conversation: "big", Query: q, Budget: 4000})
			d := time.Since(start)
			if err != nil {
				return nil, nil, nil, 0, err
			}
			if pkg.Tokens > 4000 {
				return nil, nil, nil, 0, fmt.Errorf("package of %d tokens over budget 4000", pkg.Tokens)
			}
			if i == 0 && q != "" {
				first = d
			}
			if i < 5 {
				continue // warm-up
			}
			if q == "" {
				plain = append(plain, d)
			} else {
				withQ = append(withQ, d)
			}
		}
	}
	stop() // the profile is of the Context calls only
	stop = func() {}
	search, err = timeSearch(ctx, m, qs)
	return plain, withQ, search, first, err
}

// timeSearch times Search (10 hits) of conversation "big" with each of
// qs, the first five as a warm-up left out.
func timeSearch(ctx context.Context, m *strata.Memory, qs []string) ([]time.Duration, error) {
	var lat []time.Duration
	for i, q := range qs {
		start := time.Now()
		if _, err := m.Search(ctx, "big", q, 10); err != nil {
			return nil, err
		}
		if i >= 5 {
			lat = append(lat, time.Since(start))
		}
	}
	return lat, nil
}

// benchQueries returns n two-word queries, the same in every run.
func benchQueries(n int) []string {
	words := strings.Fields("garden recipe bakery flour painting guitar adoption camping deadline server database deploy career yoga holiday conference")
	r := rand.New(rand.NewPCG(1, 2))
	qs := make([]string, n)
	for i := range qs {
		qs[i] = words[r.IntN(len(words))] + " " + words[r.IntN(len(words))]
	}
	return qs
}

// quantile is the p-th percentile of ds (0 for none).
func quantile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[max(min(len(s)-1, (len(s)*p+99)/100-1), 0)]
}

func pct(ds []time.Duration, p int) string {
	if len(ds) == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f ms", float64(quantile(ds, p).Microseconds())/1000)
}

// tierPass copies db and times one default tiering pass over the copy.
func tierPass(ctx context.Context, db, copyPath string, n int) error {
	src, err := sql.Open("sqlite", db)
	if err != nil {
		return err
	}
	_, err = src.ExecContext(ctx, `VACUUM INTO ?`, copyPath)
	src.Close()
	if err != nil {
		return err
	}
	def := strata.DefaultTierPolicy()
	m, st, err := openMemory(ctx, copyPath, &def)
	if err != nil {
		return err
	}
	defer st.Close()
	start := time.Now()
	res, err := m.Tier(ctx, "big")
	if err != nil {
		return err
	}
	d := time.Since(start)
	var turns int64
	for _, mv := range res.Moves {
		turns += mv.Turns
	}
	fmt.Printf("tiering (default policy, one pass): %d spans, %d turns moved in %.1f s, %.0f turns/s\n\n",
		len(res.Moves), turns, d.Seconds(), float64(turns)/d.Seconds())
	// What the store takes with every closed span cold, once the freed
	// pages are given back (strata tier --vacuum).
	if err := st.Vacuum(ctx); err != nil {
		return err
	}
	jsonl, err := os.Stat(filepath.Join(filepath.Dir(db), "conv.jsonl"))
	if err != nil {
		return err
	}
	if err := bytesReport(ctx, m, copyPath, "bytes, every closed span cold (after tier --vacuum)", jsonl.Size(), "  (target 100%)"); err != nil {
		return err
	}
	fmt.Println()
	return nil
}

// coldBytes imports a LoCoMo file with every closed span cold, vacuums,
// and prints what the store and its archive take against the same turns
// as JSON lines (the import format, with image captions as metadata).
func coldBytes(file, dir string) error {
	ctx := context.Background()
	if dir == "" {
		d, err := os.MkdirTemp("", "strata-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	db := filepath.Join(dir, "locomo.db")
	pol := strata.TierPolicy{WarmMaxAge: time.Second} // hot_chunks 0: every closed span goes cold
	m, st, err := openMemory(ctx, db, &pol)
	if err != nil {
		return err
	}
	defer st.Close()
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	r, err := formats.Open(formats.LoCoMo, file, f)
	if err != nil {
		return err
	}
	var jsonl int64
	_, err = m.Import(ctx, func() (string, strata.Turn, error) {
		rec, err := r.Next()
		if err != nil {
			return "", strata.Turn{}, err
		}
		t := rec.Turn
		line := map[string]any{"conversation": rec.Conversation, "session": t.SessionLabel, "ext_id": t.ExtID,
			"role": t.Role, "name": t.Name, "content": t.Content, "time": t.Time}
		if len(t.Metadata) > 0 {
			line["metadata"] = t.Metadata
		}
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.Encode(line)
		jsonl += int64(b.Len())
		return rec.Conversation, t, nil
	})
	if err != nil {
		return err
	}
	if err := st.Vacuum(ctx); err != nil {
		return err
	}
	return bytesReport(ctx, m, db, "LoCoMo with every closed span cold", jsonl, "  (target 60%)")
}

// bytesReport prints what the database file db and its archive take,
// broken down, against jsonl bytes of the same turns as JSON lines.
func bytesReport(ctx context.Context, m *strata.Memory, db, title string, jsonl int64, target string) error {
	stats, err := m.Stats(ctx)
	if err != nil {
		return err
	}
	sdb, err := sql.Open("sqlite", db)
	if err != nil {
		return err
	}
	defer sdb.Close()
	parts := map[string]int64{}
	rows, err := sdb.QueryContext(ctx, `SELECT name, sum(pgsize) FROM dbstat GROUP BY name`)
	if err != nil {
		return fmt.Errorf("dbstat: %w", err)
	}
	for rows.Next() {
		var name string
		var n int64
		rows.Scan(&name, &n)
		switch {
		case name == "turns":
			parts["turn rows"] += n
		case name == "nodes":
			parts["nodes (summaries, facts, themes, warm CTF blocks)"] += n
		case strings.HasPrefix(name, "turns_fts"):
			parts["full-text index of turns"] += n
		case strings.HasPrefix(name, "nodes_fts"):
			parts["full-text index of summaries"] += n
		case name == "node_fts_log" || name == "turn_fts_log":
			parts["logs of index changes (for in-memory indexes)"] += n
		case strings.HasPrefix(name, "turns_"):
			parts["other indexes of turns"] += n
		case strings.HasPrefix(name, "nodes_"):
			parts["other indexes of nodes"] += n
		default:
			parts["the rest (schema, conversations, segments, ...)"] += n
		}
	}
	rows.Close()
	var block, summary, facts int64
	sdb.QueryRowContext(ctx, `SELECT coalesce(sum(length(block)), 0), sum(length(CAST(summary AS BLOB))),
		coalesce(sum(length(CAST(facts AS BLOB))), 0) FROM nodes`).Scan(&block, &summary, &facts)
	fi, err := os.Stat(db)
	if err != nil {
		return err
	}
	total := fi.Size() + stats.Archive.Bytes
	pct := func(n int64) string { return fmt.Sprintf("%5.1f%%", 100*float64(n)/float64(jsonl)) }
	fmt.Printf("%s: %d turns, %d spans cold\n", title, stats.Turns, stats.Tiers[2].Spans)
	fmt.Printf("  the same turns as JSON lines      %11d bytes  100.0%%\n", jsonl)
	fmt.Printf("  database + archive                %11d bytes  %s%s\n", total, pct(total), target)
	fmt.Printf("  archive segments (%6d)        %11d bytes  %s  (%.1fx of %d raw; %d bytes of file system blocks)\n",
		stats.Archive.Segments, stats.Archive.Bytes, pct(stats.Archive.Bytes), stats.Archive.Ratio, stats.Archive.RawBytes, archiveBlocks(db))
	fmt.Printf("  database file                     %11d bytes  %s\n", fi.Size(), pct(fi.Size()))
	names := make([]string, 0, len(parts))
	for k := range parts {
		names = append(names, k)
	}
	slices.SortFunc(names, func(a, b string) int { return int(parts[b] - parts[a]) })
	for _, k := range names {
		fmt.Printf("    %-48s %11d  %s\n", k, parts[k], pct(parts[k]))
	}
	fmt.Printf("  of which summary text %d, facts %d, warm blocks %d; summary tokens %d for %d raw tokens\n",
		summary, facts, block, stats.SummaryTokens, stats.TurnTokens)
	return nil
}

// archiveBlocks is the file system space (allocated blocks) of the
// archive folder next to db: many small segments take more than their
// bytes.
func archiveBlocks(db string) int64 {
	dir := filepath.Join(filepath.Dir(db), "archive", strings.TrimSuffix(filepath.Base(db), filepath.Ext(db)))
	var n int64
	filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			if fi, err := e.Info(); err == nil {
				if st, ok := fi.Sys().(*syscall.Stat_t); ok {
					n += st.Blocks * 512
				}
			}
		}
		return nil
	})
	return n
}

// selfCPU returns the user and system time this process has used.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
