package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"

	"github.com/strata-memory/strata"
	stratamcp "github.com/strata-memory/strata/mcp"
)

// This file maps a request to the namespace it may read and write. With
// Options.Tokens set, every /v1 request must carry a bearer token of the
// store ("Authorization: Bearer strata_..."); the token names one
// namespace, and the request is served by a Memory of that namespace
// alone. Another namespace's conversations, nodes and learnings are then
// simply not found (404), as if they did not exist. Without tokens every
// request is served in the namespace of the Memory the server was made
// with; strata serve then listens on loopback only.

type memKey struct{}

// memory returns the Memory a request is served by.
func (s *Server) memory(ctx context.Context) *strata.Memory {
	if m, ok := ctx.Value(memKey{}).(*strata.Memory); ok {
		return m
	}
	return s.mem
}

// forNamespace returns the server's Memory of namespace ns, made once.
func (s *Server) forNamespace(ns string) (*strata.Memory, error) {
	if ns == s.mem.Namespace() {
		return s.mem, nil
	}
	s.nsMu.Lock()
	defer s.nsMu.Unlock()
	if m, ok := s.byNS[ns]; ok {
		return m, nil
	}
	m, err := s.mem.ForNamespace(ns)
	if err != nil {
		return nil, err
	}
	if s.byNS == nil {
		s.byNS = map[string]*strata.Memory{}
	}
	s.byNS[ns] = m
	return m, nil
}

// authenticate resolves the request's token (when tokens are on) and
// applies the token's rate limit. It returns the request to serve, or
// false after writing the refusal. It reads the headers alone: no byte
// of the body is read before the token is known good.
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	page := isPage(r.URL.Path)
	if s.opt.Tokens == nil || !(strings.HasPrefix(r.URL.Path, "/v1/") || r.URL.Path == "/mcp" || page) {
		return r, true
	}
	authz := r.Header.Get("Authorization")
	if modelRoute(r.URL.Path) {
		// The model API routes (the proxy's) carry the caller's key for
		// the upstream model in Authorization: their strata token is in
		// X-Strata-Token, or in Authorization when it is one.
		if v := r.Header.Get("X-Strata-Token"); v != "" {
			authz = "Bearer " + v
		} else if !strings.HasPrefix(authz, "Bearer "+strata.TokenPrefix) {
			authz = ""
		}
	}
	secret, ok := strings.CutPrefix(authz, "Bearer ")
	if !ok || secret == "" {
		secret = s.cookieSecret(r, page)
	}
	if secret == "" && authz == "" && s.opt.Anonymous {
		return r, true
	}
	if secret == "" {
		if page {
			http.Redirect(w, r, LoginPath, http.StatusSeeOther)
			return nil, false
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="strata"`)
		writeProblem(w, http.StatusUnauthorized, "a bearer token is required: Authorization: Bearer strata_... (create one with 'strata token create --namespace N')")
		return nil, false
	}
	tok, err := strata.Authenticate(r.Context(), s.opt.Tokens, strings.TrimSpace(secret))
	if err != nil {
		if strata.ErrorCode(err) == strata.ENOTFOUND {
			if page {
				http.Redirect(w, r, LoginPath, http.StatusSeeOther)
				return nil, false
			}
			w.Header().Set("WWW-Authenticate", `Bearer realm="strata", error="invalid_token"`)
			writeProblem(w, http.StatusUnauthorized, err.Error())
			return nil, false
		}
		writeProblem(w, http.StatusInternalServerError, "checking the token: "+err.Error())
		return nil, false
	}
	// A POST to /mcp may be a batch of calls: chargeBatch charges it once
	// its body is read, a call at a time.
	if !isMCPPost(r) {
		if wait, ok := s.allow(tok.ID, 1); !ok {
			tooMany(w, wait, "too many requests for this token")
			return nil, false
		}
	}
	m, err := s.forNamespace(tok.Namespace)
	if err != nil {
		writeProblem(w, http.StatusInternalServerError, err.Error())
		return nil, false
	}
	ctx := context.WithValue(context.WithValue(r.Context(), memKey{}, m), tokenKey{}, tok.ID)
	return r.WithContext(ctx), true
}

// modelRoute reports whether path is one of the model API routes that
// strata serve mounts for the proxy (see package proxy).
func modelRoute(path string) bool { return path == "/v1/chat/completions" || path == "/v1/messages" }

type tokenKey struct{}

// tokenOf returns the id of the token a request was authenticated with
// ("" for none: a server without tokens, or an anonymous request).
func tokenOf(ctx context.Context) string {
	id, _ := ctx.Value(tokenKey{}).(string)
	return id
}

// tooMany answers 429 with a Retry-After of whole seconds, rounded up and
// at least 1: a client told 0 would retry at once and be refused again.
func tooMany(w http.ResponseWriter, wait time.Duration, what string) {
	w.Header().Set("Retry-After", strconv.FormatInt(retryAfter(wait), 10))
	writeProblem(w, http.StatusTooManyRequests, what+": retry after "+wait.Round(time.Millisecond).String())
}

// retryAfter is wait in whole seconds, rounded up, at least 1.
func retryAfter(wait time.Duration) int64 {
	return max(1, int64((wait+time.Second-1)/time.Second))
}

func isMCPPost(r *http.Request) bool { return r.URL.Path == "/mcp" && r.Method == http.MethodPost }

// chargeBatch charges a POST to /mcp to the token's rate limit, one
// request per JSON-RPC call: a batch of 200 calls costs 200 requests, as
// 200 separate ones would. It looks at the body holdBody read, after the
// token was checked, and leaves it to the handler unread.
func (s *Server) chargeBatch(w http.ResponseWriter, r *http.Request) bool {
	id := tokenOf(r.Context())
	if id == "" || s.opt.RateLimit <= 0 || !isMCPPost(r) {
		return true
	}
	calls := 1
	if b, ok := heldBytes(r); ok { // read by holdBody
		var batch []json.RawMessage
		if trimmed := bytes.TrimLeft(b, " \t\r\n"); len(trimmed) > 0 && trimmed[0] == '[' && json.Unmarshal(trimmed, &batch) == nil {
			calls = max(1, len(batch)) // anything else is one call, answered by the MCP handler
		}
	}
	if burst := s.burst(); calls > burst {
		writeProblem(w, http.StatusBadRequest, fmt.Sprintf("a JSON-RPC batch of %d calls is more than this token may make at once (%d): send at most %d per request", calls, burst, burst))
		return false
	}
	if wait, ok := s.allow(id, calls); !ok {
		what := "too many requests for this token"
		if calls > 1 {
			what += fmt.Sprintf(" (a batch of %d calls)", calls)
		}
		tooMany(w, wait, what)
		return false
	}
	return true
}

// The web page (package web, mounted under /ui/) signs in with a token
// once and keeps it in a cookie: HttpOnly (the page's scripts cannot read
// it), SameSite=Strict (no other site's page or link sends it) and scoped
// to the server's paths. The page's /v1 requests carry it, and the
// middleware takes it in place of the bearer header only when the request
// also carries the header PageHeader: a cross-site form or image cannot
// set a custom header, and a cross-origin script cannot either without a
// CORS preflight, which the server never grants. So a request forged by
// another site carries neither, and a stolen cookie alone is refused by
// /v1. The page's own paths (GET) accept the cookie alone: they change
// nothing.
const (
	// CookieName is the cookie the web page keeps its token in.
	CookieName = "strata_token"
	// PageHeader must accompany the cookie on /v1 requests.
	PageHeader = "X-Strata-Page"
	// LoginPath is the page's sign-in form; its pages redirect there
	// without a valid cookie.
	LoginPath = "/ui/login"
)

// isPage reports whether path is one of the web page's own paths that
// need a signed-in token (the sign-in form and the static files do not).
func isPage(path string) bool {
	if !strings.HasPrefix(path, "/ui/") {
		return false
	}
	return path != LoginPath && path != "/ui/logout" && !strings.HasPrefix(path, "/ui/static/")
}

// cookieSecret returns the token the page's cookie holds, if the request
// may use it: on a page path, or on /v1 with PageHeader set.
func (s *Server) cookieSecret(r *http.Request, page bool) string {
	if !page && (!strings.HasPrefix(r.URL.Path, "/v1/") || r.Header.Get(PageHeader) == "") {
		return ""
	}
	c, err := r.Cookie(CookieName)
	if err != nil {
		return ""
	}
	return c.Value
}

// MemoryOf returns the Memory a request's context is served by: its
// token's namespace, or the server's own without tokens.
func (s *Server) MemoryOf(ctx context.Context) *strata.Memory { return s.memory(ctx) }

// Tokens returns the token store the server checks tokens against (nil:
// no tokens).
func (s *Server) Tokens() strata.TokenStore { return s.opt.Tokens }

// Mount serves h at pattern (a ServeMux pattern such as "/ui/") behind the
// server's middleware: request ids, logs, deadlines and, for the web
// page's paths, the token cookie.
func (s *Server) Mount(pattern string, h http.Handler) { s.mux.Handle(pattern, h) }

// limiters hold one token bucket per token.
type limiters struct {
	mu sync.Mutex
	m  map[string]*rate.Limiter
}

// burst is how many requests a token may make at once.
func (s *Server) burst() int {
	if s.opt.RateBurst > 0 {
		return s.opt.RateBurst
	}
	return max(1, int(s.opt.RateLimit))
}

// allow takes n requests from token id's bucket; when it holds fewer it
// takes none and says how long until it would hold n.
func (s *Server) allow(id string, n int) (time.Duration, bool) {
	if s.opt.RateLimit <= 0 || n <= 0 {
		return 0, true
	}
	s.lim.mu.Lock()
	if s.lim.m == nil {
		s.lim.m = map[string]*rate.Limiter{}
	}
	l, ok := s.lim.m[id]
	if !ok {
		l = rate.NewLimiter(rate.Limit(s.opt.RateLimit), s.burst())
		s.lim.m[id] = l
	}
	s.lim.mu.Unlock()
	res := l.ReserveN(time.Now(), n)
	if !res.OK() {
		return time.Duration(float64(n) / s.opt.RateLimit * float64(time.Second)), false
	}
	if d := res.Delay(); d > 0 {
		res.Cancel()
		return d, false
	}
	return 0, true
}

// writeProblem answers an RFC 9457 problem outside huma's operations.
func writeProblem(w http.ResponseWriter, status int, detail string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{"title": http.StatusText(status), "status": status, "detail": detail})
	w.Write(b)
}

// mcpServer returns the MCP tools over m, made once per Memory.
func (s *Server) mcpServer(m *strata.Memory) *mcp.Server {
	s.nsMu.Lock()
	defer s.nsMu.Unlock()
	if srv, ok := s.mcps[m]; ok {
		return srv
	}
	if s.mcps == nil {
		s.mcps = map[*strata.Memory]*mcp.Server{}
	}
	srv := stratamcp.NewServer(m, s.opt.Version)
	s.mcps[m] = srv
	return srv
}

// Memory returns the server's Memory of namespace ns (the one requests of
// that namespace's tokens are served by), so that background work in the
// same process shares its locks.
func (s *Server) Memory(ns string) (*strata.Memory, error) { return s.forNamespace(ns) }
