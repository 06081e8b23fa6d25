// Package web is strata's web page: a person browses, checks and corrects
// a memory in a browser. The pages are rendered on the server with
// html/template; a small script of the package's own (no library, no
// build step, nothing fetched from the network) draws the pyramid as a
// timeline and calls the same /v1 API as any client, with the page's
// token cookie and the httpapi.PageHeader header.
//
// Mount the handler under /ui/ of an httpapi.Server (Server.Mount), whose
// middleware checks the token cookie on every page but the sign-in form.
package web

import (
	"context"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/httpapi"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Options say how the page reaches the memory.
type Options struct {
	// Memory returns the Memory a request is served by (the namespace of
	// its token): httpapi.Server.MemoryOf.
	Memory func(context.Context) *strata.Memory
	// Tokens is the store tokens are checked against at sign-in; nil when
	// the server has no tokens (then there is no sign-in).
	Tokens strata.TokenStore
	// Secure marks the cookie Secure (set it when the page is served over
	// HTTPS, directly or behind a proxy).
	Secure bool
}

type handler struct {
	opt  Options
	tmpl *template.Template
	mux  *http.ServeMux
}

// New returns the page's handler, to be mounted at /ui/.
func New(opt Options) http.Handler {
	funcs := template.FuncMap{
		"date":  func(t time.Time) string { return dateOf(t) },
		"bytes": humanBytes,
		"tiers": tierLine,
	}
	h := &handler{opt: opt, tmpl: template.Must(template.New("").Funcs(funcs).ParseFS(templateFS, "templates/*.html")),
		mux: http.NewServeMux()}
	static, _ := fs.Sub(staticFS, "static")
	files := http.StripPrefix("/ui/static/", http.FileServerFS(static))
	h.mux.Handle("GET /ui/static/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	}))
	h.mux.HandleFunc("GET /ui/login", h.loginForm)
	h.mux.HandleFunc("POST /ui/login", h.login)
	h.mux.HandleFunc("POST /ui/logout", h.logout)
	h.mux.HandleFunc("GET /ui/{$}", h.list)
	h.mux.HandleFunc("GET /ui/c/{id}", h.conversation)
	return h
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// The page loads nothing from elsewhere and is never framed.
	w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "no-referrer")
	h.mux.ServeHTTP(w, r)
}

// page is what every template gets.
type page struct {
	Title     string
	Namespace string
	Tokens    bool
	Error     string
	Data      any
}

func (h *handler) render(w http.ResponseWriter, status int, name string, p page) {
	p.Tokens = h.opt.Tokens != nil
	var b strings.Builder
	if err := h.tmpl.ExecuteTemplate(&b, name, p); err != nil {
		http.Error(w, "rendering "+name+": "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write([]byte(b.String()))
}

func (h *handler) loginForm(w http.ResponseWriter, r *http.Request) {
	if h.opt.Tokens == nil {
		http.Redirect(w, r, "/ui/", http.StatusSeeOther)
		return
	}
	h.render(w, http.StatusOK, "login.html", page{Title: "Sign in"})
}

// login checks the token typed in and keeps it in the cookie.
func (h *handler) login(w http.ResponseWriter, r *http.Request) {
	if h.opt.Tokens == nil {
		http.Redirect(w, r, "/ui/", http.StatusSeeOther)
		return
	}
	// The form posts only from this server's own page: a sign-in forged
	// by another site (login CSRF) would keep the forger's token in the
	// victim's cookie, and what the victim then writes would go to the
	// forger's namespace.
	if why := crossSite(r); why != "" {
		h.render(w, http.StatusForbidden, "login.html", page{Title: "Sign in", Error: "the form was sent from " + why + "; sign in from this server's own page"})
		return
	}
	secret := strings.TrimSpace(r.PostFormValue("token"))
	if secret == "" {
		h.render(w, http.StatusBadRequest, "login.html", page{Title: "Sign in", Error: "token: type a token (strata token create --namespace N prints one)"})
		return
	}
	if _, err := strata.Authenticate(r.Context(), h.opt.Tokens, secret); err != nil {
		status, msg := http.StatusUnauthorized, "token: unknown or revoked"
		if strata.ErrorCode(err) != strata.ENOTFOUND {
			status, msg = http.StatusInternalServerError, "checking the token: "+err.Error()
		}
		h.render(w, status, "login.html", page{Title: "Sign in", Error: msg})
		return
	}
	http.SetCookie(w, &http.Cookie{Name: httpapi.CookieName, Value: secret, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: h.opt.Secure})
	http.Redirect(w, r, "/ui/", http.StatusSeeOther)
}

// crossSite says why a form post did not come from this server's own
// page ("" when it did). A browser names the page a form was sent from in
// Origin; "null" is an opaque origin (a sandboxed frame, a data: URL, a
// file), or a page whose referrer policy withholds its origin, as this
// server's pages do: it passes only with Sec-Fetch-Site: same-origin,
// which a sandboxed frame's post never carries. Sec-Fetch-Site, when sent,
// must say same-origin. A request with neither header is not a browser's
// cross-site form (every current browser sends Origin on a POST) and is
// let through, for scripts that sign in with curl.
func crossSite(r *http.Request) string {
	if o := r.Header.Get("Origin"); o != "" {
		// The page's own "Referrer-Policy: no-referrer" makes a browser
		// send Origin: null on its own form posts too, so null passes
		// only with the browser's word that the post is same-origin.
		if o == "null" {
			if r.Header.Get("Sec-Fetch-Site") != "same-origin" {
				return "a page with no origin (Origin: null)"
			}
			return ""
		}
		if u, err := url.Parse(o); err != nil || u.Host != r.Host || (u.Scheme != "http" && u.Scheme != "https") {
			return "another site (" + o + ")"
		}
	}
	if f := r.Header.Get("Sec-Fetch-Site"); f != "" && f != "same-origin" && f != "none" {
		return "another site (Sec-Fetch-Site: " + f + ")"
	}
	return ""
}

func (h *handler) logout(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: httpapi.CookieName, Value: "", Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: h.opt.Secure, MaxAge: -1})
	http.Redirect(w, r, LoginOrHome(h.opt.Tokens != nil), http.StatusSeeOther)
}

// LoginOrHome is where a signed-out browser goes.
func LoginOrHome(tokens bool) string {
	if tokens {
		return httpapi.LoginPath
	}
	return "/ui/"
}

// convRow is one line of the conversation list.
type convRow struct {
	strata.Conversation
	Stats  strata.ConversationStats
	Levels string
}

func (h *handler) list(w http.ResponseWriter, r *http.Request) {
	m := h.opt.Memory(r.Context())
	convs, err := m.Conversations(r.Context())
	if err != nil {
		h.render(w, http.StatusInternalServerError, "list.html", page{Title: "Conversations", Namespace: m.Namespace(), Error: err.Error()})
		return
	}
	st, err := m.Stats(r.Context())
	if err != nil {
		h.render(w, http.StatusInternalServerError, "list.html", page{Title: "Conversations", Namespace: m.Namespace(), Error: err.Error()})
		return
	}
	byID := map[string]strata.ConversationStats{}
	for _, c := range st.PerConversation {
		byID[c.ID] = c
	}
	rows := make([]convRow, len(convs))
	for i, c := range convs {
		rows[i] = convRow{Conversation: c, Stats: byID[c.ID]}
		if p, err := m.Policy(c.Policy); err == nil {
			var names []string
			for _, l := range p.Levels {
				names = append(names, l.Name)
			}
			rows[i].Levels = strings.Join(names, " < ")
		}
	}
	h.render(w, http.StatusOK, "list.html", page{Title: "Conversations", Namespace: m.Namespace(),
		Data: struct {
			Rows  []convRow
			Bytes int64
		}{rows, st.Bytes}})
}

// convView is what the conversation page starts from; the script reads
// it from the page and fetches the rest window by window.
type convView struct {
	Conversation strata.Conversation
	Levels       []string // names, finest first (level 1 is Levels[0])
	Config       string   // JSON for the script
}

func (h *handler) conversation(w http.ResponseWriter, r *http.Request) {
	m := h.opt.Memory(r.Context())
	id := r.PathValue("id")
	c, err := m.Conversation(r.Context(), id)
	if err != nil {
		status := http.StatusInternalServerError
		if strata.ErrorCode(err) == strata.ENOTFOUND {
			status = http.StatusNotFound
		}
		h.render(w, status, "list.html", page{Title: "Conversations", Namespace: m.Namespace(), Error: err.Error()})
		return
	}
	p, err := m.PolicyOf(r.Context(), id)
	if err != nil {
		h.render(w, http.StatusInternalServerError, "list.html", page{Title: "Conversations", Namespace: m.Namespace(), Error: err.Error()})
		return
	}
	v := convView{Conversation: c}
	for _, l := range p.Levels {
		v.Levels = append(v.Levels, l.Name)
	}
	h.render(w, http.StatusOK, "conv.html", page{Title: c.ID, Namespace: m.Namespace(), Data: v})
}

func dateOf(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02")
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// tierLine says how a conversation's turns lie across the tiers.
func tierLine(ts []strata.TierStats) string {
	var parts []string
	for _, t := range ts {
		if t.Turns > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", t.Tier, t.Turns))
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}
