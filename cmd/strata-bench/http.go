package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/client"
	"github.com/strata-memory/strata/httpapi"
	"github.com/strata-memory/strata/internal/synth"
	"github.com/strata-memory/strata/sqlite"
)

// runHTTP is `strata-bench http`: it imports a generated conversation of
// -turns turns in process, serves the same Memory on a loopback port as
// `strata serve` does, and times context packages (budget 2,000, a
// two-word query) and searches (k 10) over HTTP through the Go client and
// in process, alternating the two on the same queries, so that both
// columns come from the same run and the same store.
func runHTTP(args []string) error {
	fs := flag.NewFlagSet("strata-bench http", flag.ContinueOnError)
	n := fs.Int("turns", 10000, "turns in the generated conversation")
	queries := fs.Int("queries", 200, "timed calls of each kind, each way")
	budget := fs.Int("budget", 2000, "token budget of the context packages")
	dir := fs.String("dir", "", "work directory (default: a temporary one, removed after)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *n <= 0 || *queries <= 0 || *budget <= 0 {
		return errors.New("http: -turns, -queries and -budget must be positive")
	}
	ctx := context.Background()
	if *dir == "" {
		d, err := os.MkdirTemp("", "strata-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		*dir = d
	}
	fmt.Printf("strata-bench http: %d turns, GOMAXPROCS %d, %s/%s\n\n", *n, runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH)

	begin := time.Now()
	m, st, err := httpIngest(ctx, filepath.Join(*dir, "http.db"), *n)
	if err != nil {
		return err
	}
	defer st.Close()
	c, stop, err := serveLoopback(m)
	if err != nil {
		return err
	}
	defer stop()
	l, err := timeBothWays(ctx, m, c, *queries, *budget)
	if err != nil {
		return err
	}
	fmt.Printf("latency at %d turns, %d two-word queries each way (HTTP: loopback, Go client, JSON both ways)\n", *n, *queries)
	fmt.Printf("  %-32s %10s %10s   %10s %10s\n", "", "p50", "p99", "HTTP p50", "HTTP p99")
	fmt.Printf("  %-32s %10s %10s   %10s %10s\n", fmt.Sprintf("context (budget %d, query)", *budget),
		pct(l.ctxIn, 50), pct(l.ctxIn, 99), pct(l.ctxHTTP, 50), pct(l.ctxHTTP, 99))
	fmt.Printf("  %-32s %10s %10s   %10s %10s\n", "search (k 10)", pct(l.searchIn, 50), pct(l.searchIn, 99), pct(l.searchHTTP, 50), pct(l.searchHTTP, 99))
	fmt.Printf("\nwhole run: %.1f s\n", time.Since(begin).Seconds())
	return nil
}

// httpIngest imports n generated turns into the conversation "big" of a
// new store at db, in process, as `strata import` does (tiers off, as in
// the latency table of the default run), and prints the rate.
func httpIngest(ctx context.Context, db string, n int) (*strata.Memory, *sqlite.Store, error) {
	m, st, err := openMemory(ctx, db, &strata.TierPolicy{Off: true})
	if err != nil {
		return nil, nil, err
	}
	g := synth.New(42)
	i := 0
	start := time.Now()
	if _, err := m.Import(ctx, func() (string, strata.Turn, error) {
		if i == n {
			return "", strata.Turn{}, io.EOF
		}
		i++
		return "big", g.Next(), nil
	}); err != nil {
		st.Close()
		return nil, nil, err
	}
	took := time.Since(start)
	fmt.Printf("ingest (Memory.Import: token counts, SQLite+FTS5, rollups): %d turns in %.1f s, %.0f turns/s\n\n",
		n, took.Seconds(), float64(n)/took.Seconds())
	return m, st, nil
}

// serveLoopback serves m behind the HTTP API on a loopback port, logging
// every request as JSON (to nowhere) as the server does, and returns a
// client of it and the function that stops the server.
func serveLoopback(m *strata.Memory) (*client.Client, func() error, error) {
	srv, err := httpapi.New(m, httpapi.Options{Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	if err != nil {
		return nil, nil, err
	}
	srv.SetReady(true)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	return client.New("http://"+ln.Addr().String(), "", nil), hs.Close, nil
}

// httpLatencies are the timed calls of each kind, each way.
type httpLatencies struct {
	ctxIn, ctxHTTP, searchIn, searchHTTP []time.Duration
}

// timeBothWays times the same queries in process on m and over HTTP
// through c, in alternating order, after five untimed rounds, and checks
// that both ways did the same work.
func timeBothWays(ctx context.Context, m *strata.Memory, c *client.Client, queries, budget int) (httpLatencies, error) {
	words := strings.Fields("garden recipe bakery flour painting guitar adoption camping deadline server database deploy career yoga holiday conference")
	r := rand.New(rand.NewPCG(1, 2))
	var l httpLatencies
	const warm = 5
	for k := 0; k < queries+warm; k++ {
		q := words[r.IntN(len(words))] + " " + words[r.IntN(len(words))]
		var pIn, pHTTP *strata.Package
		var hIn []strata.Hit
		var hHTTP []client.Hit
		inProcess := func() error {
			t0 := time.Now()
			var err error
			if pIn, err = m.Context(ctx, strata.ContextRequest{Conversation: "big", Query: q, Budget: budget}); err != nil {
				return err
			}
			t1 := time.Now()
			if hIn, err = m.Search(ctx, "big", q, 10); err != nil {
				return err
			}
			if k >= warm {
				l.ctxIn = append(l.ctxIn, t1.Sub(t0))
				l.searchIn = append(l.searchIn, time.Since(t1))
			}
			return nil
		}
		overHTTP := func() error {
			t0 := time.Now()
			var err error
			if pHTTP, err = c.Context(ctx, "big", client.ContextRequest{Query: q, Budget: budget}); err != nil {
				return err
			}
			t1 := time.Now()
			if hHTTP, err = c.Search(ctx, "big", q, 10); err != nil {
				return err
			}
			if k >= warm {
				l.ctxHTTP = append(l.ctxHTTP, t1.Sub(t0))
				l.searchHTTP = append(l.searchHTTP, time.Since(t1))
			}
			return nil
		}
		first, second := inProcess, overHTTP
		if k%2 == 1 {
			first, second = overHTTP, inProcess
		}
		if err := first(); err != nil {
			return l, err
		}
		if err := second(); err != nil {
			return l, err
		}
		// Both ways must have done the same work.
		if pIn.Tokens > budget || pIn.Tokens != pHTTP.Tokens || len(pIn.Items) != len(pHTTP.Items) {
			return l, fmt.Errorf("query %q: in process %d tokens in %d items, over HTTP %d in %d (budget %d)",
				q, pIn.Tokens, len(pIn.Items), pHTTP.Tokens, len(pHTTP.Items), budget)
		}
		if len(hIn) != len(hHTTP) {
			return l, fmt.Errorf("query %q: %d hits in process, %d over HTTP", q, len(hIn), len(hHTTP))
		}
	}
	return l, nil
}
