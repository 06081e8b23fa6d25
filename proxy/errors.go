package proxy

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/strata-memory/strata/compact"
	"github.com/strata-memory/strata/internal/holdback"
)

// The model APIs' clients read errors in their API's own shape: OpenAI's
// {"error": {"message", "type", "param", "code"}} and Anthropic's
// {"type": "error", "error": {"type", "message"}}. The proxy answers every
// error of its routes so, and WireErrors does the same for the refusals
// of a server the routes are mounted in (strata serve's problem JSON).

// provider returns the API a route path belongs to.
func provider(path string) (compact.Provider, bool) {
	switch path {
	case "/v1/chat/completions":
		return compact.OpenAI, true
	case "/v1/messages":
		return compact.Anthropic, true
	}
	return "", false
}

// errorType is the error type an API gives status.
func errorType(prov compact.Provider, status int) string {
	if prov == compact.Anthropic {
		switch status {
		case http.StatusUnauthorized:
			return "authentication_error"
		case http.StatusForbidden:
			return "permission_error"
		case http.StatusNotFound:
			return "not_found_error"
		case http.StatusRequestTimeout, http.StatusGatewayTimeout:
			return "timeout_error"
		case http.StatusRequestEntityTooLarge:
			return "request_too_large"
		case http.StatusTooManyRequests:
			return "rate_limit_error"
		case http.StatusServiceUnavailable, 529:
			return "overloaded_error"
		}
		if status >= 500 {
			return "api_error"
		}
		return "invalid_request_error"
	}
	switch status {
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	}
	if status >= 500 {
		return "server_error"
	}
	return "invalid_request_error"
}

// apiError is an error answer's content.
type apiError struct {
	status  int
	message string
	code    string // OpenAI's error.code ("" : null)
	param   string // OpenAI's error.param ("" : null)
}

// writeError answers status with msg in the provider's error format.
func writeError(w http.ResponseWriter, prov compact.Provider, status int, msg string) {
	writeAPIError(w, prov, apiError{status: status, message: msg, code: defaultCode(status)})
}

// defaultCode is OpenAI's error.code for the statuses that have one.
func defaultCode(status int) string {
	switch status {
	case http.StatusRequestTimeout:
		return "request_timeout"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusTooManyRequests:
		return "rate_limit_exceeded"
	case http.StatusServiceUnavailable:
		return "service_unavailable"
	}
	return ""
}

func writeAPIError(w http.ResponseWriter, prov compact.Provider, e apiError) {
	typ := errorType(prov, e.status)
	var body any
	if prov == compact.Anthropic {
		body = map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": e.message}}
	} else {
		inner := map[string]any{"message": e.message, "type": typ, "param": nil, "code": nil}
		if e.code != "" {
			inner["code"] = e.code
		}
		if e.param != "" {
			inner["param"] = e.param
		}
		body = map[string]any{"error": inner}
	}
	b, _ := json.Marshal(body)
	h := w.Header()
	h.Del("Content-Length")
	h.Set("Content-Type", "application/json")
	// Anthropic's clients read the request's id from request-id.
	if prov == compact.Anthropic && h.Get("Request-Id") == "" {
		if id := h.Get("X-Request-Id"); id != "" {
			h.Set("Request-Id", id)
		}
	}
	w.WriteHeader(e.status)
	w.Write(b)
}

// requestID names a request in the answer's X-Request-Id (and, on the
// Anthropic route, request-id) when the server in front has not: the
// caller's own X-Request-Id when it is sane, else a random one.
func requestID(w http.ResponseWriter, r *http.Request) string {
	h := w.Header()
	if id := h.Get("X-Request-Id"); id != "" {
		return id
	}
	id := r.Header.Get("X-Request-Id")
	if !saneRequestID(id) {
		var b [8]byte
		rand.Read(b[:])
		id = hex.EncodeToString(b[:])
	}
	h.Set("X-Request-Id", id)
	return id
}

// saneRequestID reports whether a caller's X-Request-Id may name its
// request: 1 to 128 printable ASCII characters.
func saneRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] <= ' ' || id[i] > '~' {
			return false
		}
	}
	return true
}

// WireErrors wraps the handler of a server that mounts the proxy's routes
// (strata serve) so that the server's own refusals on those routes (no
// token or a bad one, a rate limit, a body over the bound, a busy server,
// a body that is not text, a method the route does not serve) reach the
// client in the route's API error format rather than as problem JSON
// (RFC 9457), with their status and headers (X-Request-Id, Retry-After,
// WWW-Authenticate) unchanged. Every other path and answer passes as it
// is.
func WireErrors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		prov, ok := provider(r.URL.Path)
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		hw := &holdback.Writer{ResponseWriter: w, Hold: isProblem, Limit: maxProblem}
		next.ServeHTTP(hw, r)
		if status, body := hw.Held(); status != 0 {
			e := wireError(status, body, w.Header())
			hw.Replace(func(w http.ResponseWriter) { writeAPIError(w, prov, e) })
		}
	})
}

// isProblem holds back a problem answer: it is sent again in the
// provider's format once the handler is done.
func isProblem(code int, h http.Header) bool {
	return code >= 400 && strings.HasPrefix(h.Get("Content-Type"), "application/problem+json")
}

// maxProblem bounds the problem body held back.
const maxProblem = 64 << 10

// wireError reads a held-back problem as the provider's error: its detail
// as the message, the field it names (a validation error's location) as
// OpenAI's param.
func wireError(status int, body []byte, h http.Header) apiError {
	var p struct {
		Title  string `json:"title"`
		Detail string `json:"detail"`
		Errors []struct {
			Location string `json:"location"`
		} `json:"errors"`
	}
	json.Unmarshal(body, &p)
	e := apiError{status: status, message: p.Detail, code: defaultCode(status)}
	if e.message == "" {
		e.message = p.Title
	}
	if e.message == "" {
		e.message = http.StatusText(status)
	}
	if len(p.Errors) > 0 {
		e.param = p.Errors[0].Location
	}
	if status == http.StatusUnauthorized {
		// On these routes Authorization carries the model API's key:
		// the server's advice to put the token there would mislead.
		e.code = "strata_token_required"
		e.message = "a strata token is required: send it in the X-Strata-Token header (Authorization carries the model API's key), or as Authorization: Bearer strata_... when the key rides in x-api-key"
		if strings.Contains(h.Get("WWW-Authenticate"), "invalid_token") {
			e.code = "invalid_strata_token"
			e.message = "the strata token (X-Strata-Token, or Authorization: Bearer strata_...): " + p.Detail
		}
	}
	return e
}
