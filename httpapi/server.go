// Package httpapi serves a strata Memory over HTTP: JSON under /v1, an
// OpenAPI 3.1 document generated from the handlers' Go types at
// /openapi.json, and /healthz and /readyz for operations.
//
// The handlers only translate: every behaviour lives in strata.Memory, and
// the engine's error codes become HTTP statuses in one place (httpError).
package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"
	"golang.org/x/sync/semaphore"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/compact"
)

// Defaults of Options.
const (
	DefaultMaxBody = 16 << 20
	DefaultTimeout = 60 * time.Second
)

// Options tune a Server. The zero value takes the defaults.
type Options struct {
	// MaxBody is the largest request body accepted, in bytes; a larger one
	// is answered 413. Zero means DefaultMaxBody.
	MaxBody int64
	// MaxInflight bounds the bytes of the request bodies held at once,
	// from their reading until their answers: decoding, counting and
	// storing a body costs several times its size. A request that would
	// pass it waits for room (until its timeout, then 503 with a
	// Retry-After). Zero means DefaultMaxInflight; it is raised to MaxBody
	// if smaller, so that the largest body accepted can be served.
	MaxInflight int64
	// MaxLarge is how many requests with a body over 64 KiB are handled
	// at once; more wait as for room. Zero means one less than
	// runtime.GOMAXPROCS, at least 1: a core stays free to answer short
	// requests (see bodies.go).
	MaxLarge int
	// Timeout bounds every request: its context ends after it. Zero means
	// DefaultTimeout.
	Timeout time.Duration
	// ReadTimeout bounds the time a request's body may take to arrive;
	// past it the request is answered 408 and its connection closed. Zero
	// means Timeout.
	ReadTimeout time.Duration
	// Logger receives one record per request (nil: slog.Default()).
	Logger *slog.Logger
	// Version is the API version the OpenAPI document names.
	Version string
	// Compact sets POST /v1/compact's thresholds; the zero Config is
	// compact.DefaultConfig with compaction on (asking for it is opting
	// in), as for 'strata compact'.
	Compact compact.Config
	// Checkpointer writes its checkpoints (nil: extractive ones, counted
	// with the Memory's tokenizer).
	Checkpointer compact.Checkpointer
	// Tokens, when set, requires a bearer token on every /v1 request and
	// serves it in the token's namespace (see auth.go). Each request looks
	// its token up in the store, so a token created or revoked while the
	// server runs counts from the next request. Nil: no tokens, every
	// request in the Memory's namespace.
	Tokens strata.TokenStore
	// Anonymous, with Tokens set, serves a request that carries no token
	// in the Memory's namespace instead of answering 401 (strata serve
	// --no-auth, which listens on loopback only); a request with a token
	// is still checked and served in the token's namespace.
	Anonymous bool
	// RateLimit is how many requests per second one token may make, with
	// bursts of RateBurst (default: the rate, at least 1); beyond it a
	// request is answered 429 with Retry-After. Zero: no limit.
	RateLimit float64
	RateBurst int
}

// Server is the HTTP front of one Memory.
type Server struct {
	mem     *strata.Memory
	opt     Options
	log     *slog.Logger
	api     huma.API
	handler http.Handler
	mux     *http.ServeMux
	ready   atomic.Bool
	routes  []route

	checkpointer compact.Checkpointer

	metrics *metrics

	nsMu sync.Mutex
	byNS map[string]*strata.Memory      // a Memory per token namespace
	mcps map[*strata.Memory]*mcp.Server // the MCP tools over each Memory
	lim  limiters

	bodies *semaphore.Weighted // bytes of bodies in flight, at most MaxInflight (bodies.go)
	large  *semaphore.Weighted // bodies over freeBody in flight, at most MaxLarge
}

// route is one registered operation, kept so tests can check the OpenAPI
// document names every one.
type route struct{ Method, Path string }

// New returns a Server over mem. It answers /readyz with 503 until
// SetReady(true). Its only error is an invalid Options.Compact.
func New(mem *strata.Memory, opt Options) (*Server, error) {
	if opt.MaxBody <= 0 {
		opt.MaxBody = DefaultMaxBody
	}
	if opt.MaxInflight <= 0 {
		opt.MaxInflight = DefaultMaxInflight
	}
	opt.MaxInflight = max(opt.MaxInflight, opt.MaxBody)
	bodies := semaphore.NewWeighted(opt.MaxInflight)
	if opt.MaxLarge <= 0 {
		opt.MaxLarge = max(1, runtime.GOMAXPROCS(0)-1)
	}
	if opt.Timeout <= 0 {
		opt.Timeout = DefaultTimeout
	}
	if opt.ReadTimeout <= 0 {
		opt.ReadTimeout = opt.Timeout
	}
	if opt.Logger == nil {
		opt.Logger = slog.Default()
	}
	if opt.Version == "" {
		opt.Version = "v1"
	}
	if opt.Compact == (compact.Config{}) {
		opt.Compact = compact.DefaultConfig()
		opt.Compact.CompactionEnabled = true
	}
	if err := opt.Compact.Validate(); err != nil {
		return nil, fmt.Errorf("compact settings: %w", err)
	}
	s := &Server{mem: mem, opt: opt, log: opt.Logger, checkpointer: opt.Checkpointer, bodies: bodies,
		large: semaphore.NewWeighted(int64(opt.MaxLarge))}
	if s.checkpointer == nil {
		cp, err := defaultCheckpointer(mem.Tokenizer())
		if err != nil {
			return nil, err
		}
		s.checkpointer = cp
	}
	mux := http.NewServeMux()
	cfg := huma.DefaultConfig("strata", opt.Version)
	cfg.Info.Description = "Long-term memory for LLM conversations: append turns, browse the summary pyramid, and get token-budgeted context packages."
	cfg.OpenAPIPath = "/openapi"
	// No interactive docs page (it loads scripts from the network) and no
	// $schema links added to responses, whose shapes are strata's JSON
	// contract.
	cfg.DocsPath = ""
	cfg.CreateHooks = nil
	s.mux = mux
	s.api = humago.New(mux, cfg)
	s.metrics = newMetrics()
	s.api.UseMiddleware(s.metrics.middleware)
	s.api.UseMiddleware(s.checkParams, s.checkNumbers)
	mux.Handle("GET /metrics", s.metrics.handler())
	s.register()
	s.registerBrowse()
	s.registerCompact()
	s.refineDoc() // openapi.go
	// MCP over streamable HTTP, stateless: each request is served by the
	// tools of its own token's namespace, so a session id can never carry
	// one token's memory to another.
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		return s.mcpServer(s.memory(r.Context()))
	}, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true}))
	mux.HandleFunc("GET /healthz", s.healthz)
	mux.HandleFunc("GET /readyz", s.readyz)
	s.handler = s.guard(s.middleware(s.checkText(mux))) // guard.go
	return s, nil
}

// healthz answers 200 while the process serves.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	writePlain(w, http.StatusOK, "ok\n")
}

// readyz answers 200 once SetReady(true), 503 before and while draining.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	if !s.ready.Load() {
		writePlain(w, http.StatusServiceUnavailable, "not ready\n")
		return
	}
	writePlain(w, http.StatusOK, "ready\n")
}

// Handler returns the server's http.Handler.
func (s *Server) Handler() http.Handler { return s.handler }

// API returns the huma API, whose OpenAPI() is the served document.
func (s *Server) API() huma.API { return s.api }

// SetReady says whether /readyz answers 200: true once the store is open
// and the listener bound, false again while draining for shutdown.
func (s *Server) SetReady(ready bool) { s.ready.Store(ready) }

func writePlain(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	w.Write([]byte(body))
}

type ctxKey struct{}

// RequestID returns the id of the request ctx belongs to ("" outside one).
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(ctxKey{}).(string)
	return id
}

// statusWriter records the status a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// middleware gives every request an id (the caller's X-Request-Id if it
// sent a sane one), a deadline, a body bound, and a log record.
func (s *Server) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := r.Header.Get("X-Request-Id")
		if id == "" || len(id) > 128 {
			var b [8]byte
			rand.Read(b[:])
			id = hex.EncodeToString(b[:])
		}
		w.Header().Set("X-Request-Id", id)
		ctx, cancel := context.WithTimeout(context.WithValue(r.Context(), ctxKey{}, id), s.opt.Timeout)
		defer cancel()
		// The API's bodies are read whole by holdBody, which bounds them;
		// this bound backs any other route's.
		r.Body = http.MaxBytesReader(w, r.Body, s.opt.MaxBody+1)
		sw := &statusWriter{ResponseWriter: w}
		// The token is checked on the headers alone, before any of the
		// body is read: a client without one costs no more than its
		// headers, whatever it sends after them.
		// A refusal closes the connection rather than leave the client's
		// body on it to be drained, however slowly it comes.
		var aw http.ResponseWriter = sw
		if r.ContentLength != 0 {
			aw = closeOnRefusal{sw}
		}
		if served, ok := s.authenticate(aw, r.WithContext(ctx)); ok {
			if release, ok := s.holdBody(sw, served); ok { // bodies.go
				if s.chargeBatch(sw, served) {
					next.ServeHTTP(sw, served)
				}
				release()
			}
		}
		s.logRequest(ctx, id, r, sw, start)
	})
}

// closeOnRefusal answers with Connection: close: the server then drops
// the connection after the answer instead of first reading what is left
// of the request's body (up to 256 KiB, at the client's pace).
type closeOnRefusal struct{ http.ResponseWriter }

func (w closeOnRefusal) WriteHeader(code int) {
	w.Header().Set("Connection", "close")
	w.ResponseWriter.WriteHeader(code)
}

// logRequest writes a request's log record.
func (s *Server) logRequest(ctx context.Context, id string, r *http.Request, sw *statusWriter, start time.Time) {
	s.log.LogAttrs(ctx, slog.LevelInfo, "request",
		slog.String("request_id", id), slog.String("method", r.Method), slog.String("path", r.URL.Path),
		slog.Int("status", sw.status), slog.Int64("bytes", sw.bytes), slog.Duration("duration", time.Since(start)))
}

// checkParams answers 400, naming the parameter, a request whose path or
// query parameter is not text every store keeps (invalid UTF-8 or a NUL,
// which a URL can carry escaped as %FF or %00): the same answer whatever
// the store, where PostgreSQL would otherwise fail on the lookup. The
// body's text is checked where it is decoded (see checkBody and the
// engine's validation).
func (s *Server) checkParams(ctx huma.Context, next func(huma.Context)) {
	if op := ctx.Operation(); op != nil && op.Metadata[metaKey] == true {
		for _, p := range op.Parameters {
			var v string
			switch p.In {
			case "path":
				v = ctx.Param(p.Name)
			case "query":
				v = ctx.Query(p.Name)
			default:
				continue
			}
			where := p.In + "." + p.Name
			if err := strata.CheckText(where, v); err != nil {
				huma.WriteErr(s.api, ctx, http.StatusBadRequest, "invalid request: "+err.Error(),
					&huma.ErrorDetail{Location: where, Message: strings.TrimPrefix(err.Error(), where+": ")})
				return
			}
		}
	}
	next(ctx)
}

// httpError maps an engine error to the HTTP error the client sees: the
// one place where strata's error codes become statuses.
func (s *Server) httpError(ctx context.Context, err error) error {
	msg := err.Error()
	switch strata.ErrorCode(err) {
	case strata.EINVALID:
		return huma.Error400BadRequest(msg)
	case strata.ENOTFOUND:
		return huma.Error404NotFound(msg)
	case strata.ECONFLICT:
		return huma.Error409Conflict(msg)
	}
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
		return huma.Error503ServiceUnavailable("the request took longer than the server's timeout of " + s.opt.Timeout.String())
	}
	// A store that can say its disk is full or its file read-only (the
	// SQLite store) says so in the log, and the client learns it in words
	// without the store's path.
	if ex, ok := s.memory(ctx).Store().(interface{ Explain(error) error }); ok {
		err = ex.Explain(err)
		msg = err.Error()
	}
	var fault interface{ StorageFault() string }
	if errors.As(err, &fault) {
		s.log.LogAttrs(ctx, slog.LevelError, "storage error", slog.String("request_id", RequestID(ctx)), slog.String("error", msg))
		return huma.Error503ServiceUnavailable("the store cannot be written: " + fault.StorageFault() + " (request id " + RequestID(ctx) + ")")
	}
	// The error's text stays in the log: it may name files, queries or
	// other tenants' data.
	s.log.LogAttrs(ctx, slog.LevelError, "internal error", slog.String("request_id", RequestID(ctx)), slog.String("error", msg))
	return huma.Error500InternalServerError("internal error (request id " + RequestID(ctx) + "); the server's log has the details")
}

// A body or parameter that fails the schema is answered 400 by strata's
// operations, as every other invalid input is (huma's default is 422). The
// hook is huma's global one; operations of other APIs are left as they are.
func init() {
	next := huma.NewErrorWithContext
	huma.NewErrorWithContext = func(hctx huma.Context, status int, msg string, errs ...error) huma.StatusError {
		if status == http.StatusUnprocessableEntity && hctx != nil && hctx.Operation() != nil &&
			hctx.Operation().Metadata[metaKey] == true {
			status = http.StatusBadRequest
			msg = "invalid request: " + msg
		}
		return next(hctx, status, msg, errs...)
	}
}

const metaKey = "strata"

// op returns an operation with the server's limits, recorded in routes.
// Its body is bounded by holdBody (bodies.go) before huma reads it, so
// huma reads it without a bound of its own: a bounded read cannot take
// the held body in one write and copied it through a growing buffer, and
// refused a body of exactly MaxBody bytes.
func (s *Server) op(method, path, id, summary string) huma.Operation {
	s.routes = append(s.routes, route{method, path})
	return huma.Operation{OperationID: id, Method: method, Path: path, Summary: summary,
		MaxBodyBytes: -1, BodyReadTimeout: s.opt.Timeout, Metadata: map[string]any{metaKey: true},
		Errors: opErrors}
}
