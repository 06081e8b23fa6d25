package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os/signal"
	"syscall"
	"time"

	"github.com/strata-memory/strata/compact"
	"github.com/strata-memory/strata/compact/checkpoint"
	"github.com/strata-memory/strata/httpapi"
	"github.com/strata-memory/strata/proxy"
	"github.com/strata-memory/strata/sqlite"
	"github.com/strata-memory/strata/web"
)

// runServe serves the store over HTTP (see docs/http.md) until SIGINT or
// SIGTERM, then drains the requests in flight.
func runServe(ctx context.Context, m *Main, args []string) error {
	set, ss, err := m.serveConfig(args)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM)
	defer stop()
	// With a worker, appends leave tier moves to it: a request never
	// waits on archive writes. Without one, each append moves what is due.
	set.deferTiers = ss.Worker
	set.longRunning = true
	a, err := m.openSettings(ctx, set)
	if err != nil {
		return err
	}
	defer a.Close()
	valid, err := checkServeTokens(ctx, a, ss)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewJSONHandler(m.Stderr, nil))
	srv, err := m.newAPIServer(a, ss, log)
	if err != nil {
		return err
	}
	px, err := m.mountProxy(a, srv, ss, log)
	if err != nil {
		return err
	}
	defer px.Wait() // the rollups after the last replies, before the store closes
	// The web page, under /ui/ (see docs/web.md).
	srv.Mount("/ui/", web.New(web.Options{Memory: srv.MemoryOf, Tokens: a.store}))
	srv.Mount("GET /{$}", http.RedirectHandler("/ui/", http.StatusSeeOther))
	ln, err := net.Listen("tcp", ss.Addr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	hs, conns := newHTTPServer(ctx, srv, ss)
	done := make(chan error, 1)
	go func() { done <- hs.Serve(conns.Listener(ln)) }()
	stopWorker := startWorker(ctx, a, srv, ss, log)
	defer stopWorker()
	srv.SetReady(true)
	if ss.Worker {
		log.Info("worker started", "every", ss.Every, "holder", a.mem.Holder())
	}
	announceServe(m, a, ss, ln.Addr(), valid)
	select {
	case err := <-done:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	// Draining: readiness goes first so a balancer stops sending, the
	// worker stops (a unit cut short is finished by the next pass: each is
	// idempotent), then the requests in flight finish within the request
	// timeout.
	srv.SetReady(false)
	stopWorker()
	sctx, cancel := context.WithTimeout(context.Background(), ss.Timeout+5*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		return fmt.Errorf("serve: shutdown: %w", err)
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	fmt.Fprintln(m.Stdout, "strata: stopped")
	return nil
}

// checkServeTokens returns how many valid tokens the store holds. Every
// request needs a valid token of the store and is served in its
// namespace. Tokens are looked up on each request, so one created or
// revoked while servers run counts from the next request on every
// server of the store. A store without any refuses to be served, unless
// --no-auth says to serve requests without a token, which only this
// machine may then make.
func checkServeTokens(ctx context.Context, a *app, ss serveSettings) (int, error) {
	tokens, err := a.store.Tokens(ctx, "")
	if err != nil {
		return 0, err
	}
	valid := 0
	for _, t := range tokens {
		if t.Revoked.IsZero() {
			valid++
		}
	}
	if ss.NoAuth {
		if err := loopbackOnly(ss.Addr, ss.addrFrom); err != nil {
			return 0, err
		}
	} else if valid == 0 {
		return 0, fmt.Errorf("serve: the store %s has no token, so no request could be served: create one with 'strata token create --namespace %s' (it prints the token once), or pass --no-auth to serve this machine alone without tokens",
			showDB(a.set.DB), a.mem.Namespace())
	}
	return valid, nil
}

// newAPIServer returns the JSON API over a's memory.
func (m *Main) newAPIServer(a *app, ss serveSettings, log *slog.Logger) (*httpapi.Server, error) {
	// POST /v1/compact takes its thresholds and checkpoint model as
	// 'strata compact' does.
	ccfg, err := compact.ConfigFromEnv(m.Getenv)
	if err != nil {
		return nil, err
	}
	if m.Getenv("STRATA_COMPACTION_ENABLED") == "" {
		ccfg.CompactionEnabled = true
	}
	llm, err := a.set.LLM.completer()
	if err != nil {
		return nil, err
	}
	cp, err := checkpoint.New(checkpoint.Options{LLM: llm, Model: a.set.LLM.Model, Tokenizer: a.mem.Tokenizer()})
	if err != nil {
		return nil, err
	}
	opt := httpapi.Options{MaxBody: ss.MaxBody, MaxInflight: ss.Inflight, Timeout: ss.Timeout, ReadTimeout: ss.ReadTimeout, Logger: log, Version: version,
		Compact: ccfg, Checkpointer: cp, RateLimit: ss.Rate, RateBurst: ss.Burst, Tokens: a.store, Anonymous: ss.NoAuth}
	return httpapi.New(a.mem, opt)
}

// mountProxy mounts the model API routes of the proxy (see
// docs/proxy.md) on srv, behind the server's tokens, in each token's
// namespace.
func (m *Main) mountProxy(a *app, srv *httpapi.Server, ss serveSettings, log *slog.Logger) (*proxy.Proxy, error) {
	ps, err := m.resolveProxy(nil, a.set)
	if err != nil {
		return nil, err
	}
	popt, err := m.proxyOptions(a, ps)
	if err != nil {
		return nil, err
	}
	popt.Memory, popt.Registerer, popt.Logger, popt.MaxBody = srv.MemoryOf, srv.Registerer(), log, ss.MaxBody
	px, err := proxy.New(popt)
	if err != nil {
		return nil, err
	}
	for _, r := range proxy.Routes {
		srv.Mount("POST "+r, px)
	}
	// The server's own refusals on those routes (token, rate, body) go
	// out in the route's API error format: see proxy.WireErrors.
	return px, nil
}

// newHTTPServer returns the HTTP server of srv and the limit on its
// connections. Every connection is bounded in time (headers, body,
// answer, and the wait between keep-alive requests) and in number, so
// idle or slow clients cannot hold the server's file descriptors.
func newHTTPServer(ctx context.Context, srv *httpapi.Server, ss serveSettings) (*http.Server, *httpapi.ConnLimit) {
	conns := httpapi.NewConnLimit(ss.MaxConns)
	hs := &http.Server{Handler: proxy.WireErrors(srv.Handler()), ReadHeaderTimeout: min(10*time.Second, ss.ReadTimeout),
		ReadTimeout: ss.ReadTimeout, WriteTimeout: ss.WriteTimeout, IdleTimeout: ss.IdleTimeout, ConnState: conns.ConnState,
		BaseContext: func(net.Listener) context.Context { return context.WithoutCancel(ctx) }}
	return hs, conns
}

// startWorker starts the background worker if ss asks for one, and
// returns the function that stops it and waits for it to end, which may
// be called more than once.
func startWorker(ctx context.Context, a *app, srv *httpapi.Server, ss serveSettings, log *slog.Logger) func() {
	wctx, stopWorker := context.WithCancel(ctx)
	workerDone := make(chan struct{})
	if !ss.Worker {
		close(workerDone)
	} else {
		go func() {
			defer close(workerDone)
			runWorker(wctx, a, srv, ss.Every, log)
		}()
	}
	return func() { stopWorker(); <-workerDone }
}

// announceServe says on standard output where the server listens.
func announceServe(m *Main, a *app, ss serveSettings, addr net.Addr, valid int) {
	if ss.NoAuth {
		fmt.Fprintf(m.Stdout, "strata: serving %s on http://%s without tokens, loopback only; a request with a token is served in its namespace (store %s)\n", a.mem.Namespace(), addr, showDB(a.set.DB))
	} else {
		fmt.Fprintf(m.Stdout, "strata: serving on http://%s with %d tokens, each in its namespace (store %s)\n", addr, valid, showDB(a.set.DB))
	}
	fmt.Fprintf(m.Stdout, "strata: the web page is at http://%s/ui/\n", addr)
}

// loopbackOnly refuses an address other machines could reach: serving
// requests without a token, the server must not be open to anyone but
// this machine. from is where the address came from.
func loopbackOnly(addr string, from settingFrom) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return from.errorf(addr, "%v", err)
	}
	if loopbackHost(host) {
		return nil
	}
	return from.errorf(addr, "--no-auth serves loopback only (127.0.0.1, ::1, localhost); to serve other machines, create a token with 'strata token create --namespace N' and serve without --no-auth")
}

// runWorker runs the background work of every namespace the server
// serves (its own, and each valid token's) until ctx ends: a Pass per
// namespace, then a wait of every. It shares the server's Memories, so a
// pass and a request of one process take the same locks; across
// processes, rollups are idempotent and a write from a stale read is
// refused by the store and read again, and model summaries, tier passes
// and embeddings are claimed in the store, so each is done once.
func runWorker(ctx context.Context, a *app, srv *httpapi.Server, every time.Duration, log *slog.Logger) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	var compressed time.Time // when the worker last compressed node texts
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		namespaces := []string{a.mem.Namespace()}
		tokens, err := a.store.Tokens(ctx, "")
		if err != nil && ctx.Err() == nil {
			log.Warn("worker: listing tokens", "error", err)
		}
		seen := map[string]bool{a.mem.Namespace(): true}
		for _, t := range tokens {
			if t.Revoked.IsZero() && !seen[t.Namespace] {
				seen[t.Namespace] = true
				namespaces = append(namespaces, t.Namespace)
			}
		}
		for _, ns := range namespaces {
			mem, err := srv.Memory(ns)
			if err != nil {
				log.Warn("worker", "namespace", ns, "error", err)
				continue
			}
			pass, err := mem.Pass(ctx)
			if ctx.Err() != nil {
				return
			}
			attrs := []any{"namespace", ns, "made", pass.Made, "moved", pass.Moved}
			busy := false
			if pass.Summaries != nil {
				attrs = append(attrs, "summarized", pass.Summaries.Summarized, "failed", pass.Summaries.Failed,
					"left_to_others", pass.Summaries.Claimed)
				busy = pass.Summaries.Summarized > 0 || pass.Summaries.Claimed > 0
			}
			if e := pass.Embedded; e != nil {
				attrs = append(attrs, "embedded", e.Turns+e.Nodes, "embedding_elsewhere", e.Claimed)
				busy = busy || e.Turns+e.Nodes > 0 || len(e.Claimed) > 0
			}
			if err != nil {
				log.Warn("worker pass failed", append(attrs, "error", err)...)
			} else if len(pass.Made) > 0 || len(pass.Moved) > 0 || busy {
				log.Info("worker pass", attrs...)
			}
		}
		// On SQLite, node texts are compressed with a dictionary trained
		// on them (docs/tiers.md): once at start, when the store has
		// enough to train on, then hourly for texts written by processes
		// that had not seen the dictionary yet.
		if c, ok := a.store.(interface {
			CompressNodeTexts(context.Context) (sqlite.CompressReport, error)
		}); ok && time.Since(compressed) >= time.Hour {
			r, err := c.CompressNodeTexts(ctx)
			switch {
			case ctx.Err() != nil:
				return
			case err != nil:
				log.Warn("worker: compressing node texts", "error", err)
			case r.Trained || r.Compressed > 0 || r.Derived > 0:
				log.Info("worker: node texts compressed", "trained_dictionary", r.Trained, "nodes", r.Compressed, "derived_nodes", r.Derived)
			}
			if err == nil && r.Dictionary {
				compressed = time.Now() // until then, every pass looks again
			}
		}
		timer.Reset(every)
	}
}
