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

	"strata/compact"
	"strata/compact/checkpoint"
	"strata/httpapi"
)

// runServe serves the store over HTTP (see docs/http.md) until SIGINT or
// SIGTERM, then drains the requests in flight.
func runServe(ctx context.Context, m *Main, args []string) error {
	fs := m.command("serve", "[--addr HOST:PORT] [--max-body BYTES] [--timeout D] [--rate N] [--burst N]")
	addr := fs.String("addr", "127.0.0.1:7700", "address to listen on (loopback only until tokens exist: 'strata token create')")
	rateLimit := fs.Float64("rate", 20, "requests per second one token may make (0: no limit); beyond it 429 with Retry-After")
	burst := fs.Int("burst", 40, "requests one token may make at once before --rate applies")
	maxBody := fs.Int64("max-body", httpapi.DefaultMaxBody, "largest request body in bytes; larger ones are answered 413")
	timeout := fs.Duration("timeout", httpapi.DefaultTimeout, "deadline of every request")
	if err := fs.parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usagef("serve: unexpected arguments %q", fs.Args())
	}
	if *maxBody <= 0 {
		return usagef("serve: --max-body must be positive")
	}
	if *timeout <= 0 {
		return usagef("serve: --timeout must be positive")
	}
	if *rateLimit < 0 || *burst < 0 {
		return usagef("serve: --rate and --burst must not be negative")
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM)
	defer stop()
	a, err := m.open(ctx, fs.g)
	if err != nil {
		return err
	}
	defer a.Close()
	// With a valid token in the store, every request needs one and is
	// served in its namespace; without any, only this machine may connect.
	tokens, err := a.store.Tokens(ctx, "")
	if err != nil {
		return err
	}
	valid := 0
	for _, t := range tokens {
		if t.Revoked.IsZero() {
			valid++
		}
	}
	if valid == 0 {
		if err := loopbackOnly(*addr); err != nil {
			return err
		}
	}
	// POST /v1/compact takes its thresholds and checkpoint model as
	// 'strata compact' does.
	ccfg, err := compact.ConfigFromEnv(m.Getenv)
	if err != nil {
		return err
	}
	if m.Getenv("STRATA_COMPACTION_ENABLED") == "" {
		ccfg.CompactionEnabled = true
	}
	llm, err := a.set.LLM.completer()
	if err != nil {
		return err
	}
	cp, err := checkpoint.New(checkpoint.Options{LLM: llm, Model: a.set.LLM.Model, Tokenizer: a.mem.Tokenizer()})
	if err != nil {
		return err
	}
	log := slog.New(slog.NewJSONHandler(m.Stderr, nil))
	opt := httpapi.Options{MaxBody: *maxBody, Timeout: *timeout, Logger: log, Version: version,
		Compact: ccfg, Checkpointer: cp, RateLimit: *rateLimit, RateBurst: *burst}
	if valid > 0 {
		opt.Tokens = a.store
	}
	srv, err := httpapi.New(a.mem, opt)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return context.WithoutCancel(ctx) }}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	srv.SetReady(true)
	if valid > 0 {
		fmt.Fprintf(m.Stdout, "strata: serving on http://%s with %d tokens, each in its namespace (store %s)\n", ln.Addr(), valid, a.set.DB)
	} else {
		fmt.Fprintf(m.Stdout, "strata: serving %s on http://%s, loopback only, no tokens (store %s)\n", a.mem.Namespace(), ln.Addr(), a.set.DB)
	}
	select {
	case err := <-done:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	// Draining: readiness goes first so a balancer stops sending, then
	// the requests in flight finish within the request timeout.
	srv.SetReady(false)
	sctx, cancel := context.WithTimeout(context.Background(), *timeout+5*time.Second)
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

// loopbackOnly refuses an address other machines could reach: without
// tokens in the store, the server must not be open to anyone but this
// machine.
func loopbackOnly(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return usagef("serve --addr %q: %v", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return usagef("serve --addr %q: the store has no token, so only loopback (127.0.0.1, ::1, localhost) is served; create one with 'strata token create --namespace N'", addr)
}
