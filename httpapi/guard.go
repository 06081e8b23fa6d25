package httpapi

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/danielgtaylor/huma/v2"

	"github.com/strata-memory/strata/internal/holdback"
)

// This file holds the guards every request passes whatever its route:
// a panic becomes a logged 500 that shows no internal text; every error
// answer is JSON (an RFC 9457 problem, or a JSON-RPC error on /mcp); and
// a body that is not text as it was sent (invalid UTF-8, a lone UTF-16
// surrogate escape) is refused before any decoder replaces the bad part
// with U+FFFD and the changed text is stored.

func init() {
	// A list the schema requires may not be null: a null "turns" would
	// otherwise pass as no turns at all, and the document would type every
	// list the server always sends as [] as "array or null".
	huma.DefaultArrayNullable = false
	// Keys match their fields exactly. encoding/json matches them without
	// regard to case, so {"ext_id": "ok", "EXT_ID": "..."} would pass the
	// schema's check of ext_id and then store the unchecked EXT_ID.
	huma.ValidateStrictCasing = true
}

// guard is the outermost handler: it names the request (so that even a
// panic's answer and log record carry the id), turns a panic into a 500
// and a non-JSON error answer into a problem.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-Id")
		if !saneRequestID(id) {
			var b [8]byte
			rand.Read(b[:])
			id = hex.EncodeToString(b[:])
			r.Header.Set("X-Request-Id", id)
		}
		gw := &holdback.Writer{ResponseWriter: w, Hold: notJSON, Limit: 1024}
		defer func() {
			v := recover()
			if v == nil {
				if status, text := gw.Held(); status != 0 {
					detail := problemDetail(status, text, r.URL.Path)
					gw.Replace(func(w http.ResponseWriter) {
						w.Header().Del("Content-Length")
						w.Header().Del("X-Content-Type-Options")
						writeProblem(w, status, detail)
					})
				}
				return
			}
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.log.LogAttrs(r.Context(), slog.LevelError, "panic",
				slog.String("request_id", id), slog.String("method", r.Method), slog.String("path", r.URL.Path),
				slog.String("panic", fmt.Sprint(v)), slog.String("stack", string(debug.Stack())))
			if gw.Sent() {
				// Part of an answer is out: the client can only be told
				// by a cut connection.
				panic(http.ErrAbortHandler)
			}
			w.Header().Set("X-Request-Id", id)
			writeProblem(w, http.StatusInternalServerError, "internal error (request id "+id+"); the server's log has the details")
		}()
		next.ServeHTTP(gw, r)
	})
}

// saneRequestID reports whether a caller's X-Request-Id may name its
// request in logs and answers: 1 to 128 printable ASCII characters.
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

// notJSON holds back an error answer that is not JSON (the mux's 404 and
// 405, a handler's http.Error): it is sent again as a problem whose detail
// is its text. HTML pages (the web page's errors) pass as they are.
func notJSON(code int, h http.Header) bool {
	ct := h.Get("Content-Type")
	return code >= 400 && !strings.Contains(ct, "json") && !strings.HasPrefix(ct, "text/html")
}

// problemDetail is the detail of the problem sent for a held-back error
// answer: its text, or the status's name when it has none.
func problemDetail(status int, text []byte, path string) string {
	detail := strings.TrimSpace(string(text))
	if detail == "" || !utf8.ValidString(detail) {
		detail = http.StatusText(status)
	}
	if status == http.StatusNotFound && strings.HasSuffix(detail, "page not found") {
		detail = "no route " + path + " (see /openapi.json for the API's routes)"
	}
	return detail
}

// checkNumbers answers 400, naming the parameter, a number parameter that
// is not finite ("Infinity", "NaN", "1e999"): Go reads those as numbers,
// but neither the engine nor a JSON answer holds them.
func (s *Server) checkNumbers(ctx huma.Context, next func(huma.Context)) {
	if op := ctx.Operation(); op != nil && op.Metadata[metaKey] == true {
		for _, p := range op.Parameters {
			if p.Schema == nil || (p.Schema.Type != huma.TypeNumber && p.Schema.Type != huma.TypeInteger) {
				continue
			}
			var v string
			switch p.In {
			case "path":
				v = ctx.Param(p.Name)
			case "query":
				v = ctx.Query(p.Name)
			default:
				continue
			}
			if v == "" {
				continue
			}
			if f, err := strconv.ParseFloat(v, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
				continue
			}
			if _, err := strconv.ParseInt(v, 10, 64); err == nil {
				continue
			}
			where := p.In + "." + p.Name
			msg := fmt.Sprintf("%q is not a finite number", v)
			huma.WriteErr(s.api, ctx, http.StatusBadRequest, "invalid request: "+where+": "+msg,
				&huma.ErrorDetail{Location: where, Message: msg, Value: v})
			return
		}
	}
	next(ctx)
}

// checkText refuses a request body that is not text as the client sent
// it: invalid UTF-8, or a \u escape of a lone UTF-16 surrogate (which no
// character is). encoding/json would turn either into U+FFFD, and the
// changed text would be stored. A /v1 request is answered 400 naming the
// field; a /mcp request a JSON-RPC invalid params error. It runs after
// authentication, so no body is read for a caller that may not send one.
func (s *Server) checkText(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v1 := strings.HasPrefix(r.URL.Path, "/v1/")
		if r.Body == nil || r.Body == http.NoBody || !(v1 || r.URL.Path == "/mcp") {
			next.ServeHTTP(w, r)
			return
		}
		b, held := heldBytes(r) // read by holdBody (bodies.go)
		if !held {
			var err error
			if b, err = io.ReadAll(io.LimitReader(r.Body, s.opt.MaxBody+1)); err != nil || int64(len(b)) > s.opt.MaxBody {
				var tooBig *http.MaxBytesError
				if errors.As(err, &tooBig) || int64(len(b)) > s.opt.MaxBody {
					writeProblem(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the body is larger than %d bytes", s.opt.MaxBody))
					return
				}
				writeProblem(w, http.StatusBadRequest, "reading the body: "+err.Error())
				return
			}
			r.Body = &heldBody{b: b}
		}
		if at, what := badText(b); at >= 0 {
			where := jsonPath(b, at)
			msg := fmt.Sprintf("%s at byte %d; send the text as it is, in UTF-8", what, at)
			if v1 {
				writeProblemAt(w, http.StatusBadRequest, where, msg)
			} else {
				writeRPCError(w, b, where+": "+msg)
			}
			return
		}
		next.ServeHTTP(w, r)
	})
}

// writeProblemAt answers a problem naming the body's field where, in the
// shape huma answers its own validation errors with.
func writeProblemAt(w http.ResponseWriter, status int, where, msg string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{"title": http.StatusText(status), "status": status,
		"detail": "invalid request: " + where + ": " + msg,
		"errors": []map[string]any{{"location": where, "message": msg}}})
	w.Write(b)
}

// writeRPCError answers an MCP request whose body was refused with a
// JSON-RPC invalid params error, echoing the request's id when it has one.
func writeRPCError(w http.ResponseWriter, body []byte, msg string) {
	var req struct {
		ID json.RawMessage `json:"id"`
	}
	json.Unmarshal(body, &req)
	id := any(nil)
	if len(req.ID) > 0 {
		id = req.ID
	}
	w.Header().Set("Content-Type", "application/json")
	if id == nil {
		// A notification, a batch or no JSON at all: there is no call to
		// answer, so the refusal is the HTTP status.
		w.WriteHeader(http.StatusBadRequest)
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id,
		"error": map[string]any{"code": -32602, "message": "invalid params: " + msg}})
	w.Write(b)
}

// badText returns the offset in b of the first byte that is not UTF-8,
// or of the first \u escape of a lone UTF-16 surrogate in a JSON string,
// and what it is; -1 if there is none.
func badText(b []byte) (int, string) {
	if !utf8.Valid(b) {
		at := 0
		for at < len(b) {
			r, size := utf8.DecodeRune(b[at:])
			if r == utf8.RuneError && size <= 1 {
				break
			}
			at += size
		}
		return at, fmt.Sprintf("the byte 0x%02x is not valid UTF-8", b[at])
	}
	inString := false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			inString = !inString
		case c == '\\' && inString:
			if i+1 >= len(b) {
				return -1, ""
			}
			if b[i+1] != 'u' {
				i++ // the escaped character, which may be a quote
				continue
			}
			r, ok := hex4(b, i+2)
			if !ok {
				i++
				continue
			}
			switch {
			case r >= 0xD800 && r < 0xDC00:
				if lo, ok := hex4(b, i+8); ok && i+7 < len(b) && b[i+6] == '\\' && b[i+7] == 'u' && lo >= 0xDC00 && lo < 0xE000 {
					i += 11 // a pair: one character
					continue
				}
				return i, fmt.Sprintf("the escape %s is a lone UTF-16 high surrogate, which is no character", b[i:i+6])
			case r >= 0xDC00 && r < 0xE000:
				return i, fmt.Sprintf("the escape %s is a lone UTF-16 low surrogate, which is no character", b[i:i+6])
			}
			i += 5
		}
	}
	return -1, ""
}

// hex4 reads the 4 hex digits at b[i:], if they are there.
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(b[i:i+4]), 16, 16)
	return rune(n), err == nil
}

// jsonPath names the place of the JSON document b that holds byte at, as
// huma names a field: "body.turns[0].content". An object key there is
// named as the key itself. A document that is not JSON up to there is
// named "body".
func jsonPath(b []byte, at int) string {
	type frame struct {
		obj     bool
		key     string
		idx     int
		wantKey bool
	}
	var stack []frame
	path := func() string {
		var sb strings.Builder
		sb.WriteString("body")
		for _, f := range stack {
			if f.obj {
				sb.WriteString("." + f.key)
			} else {
				fmt.Fprintf(&sb, "[%d]", f.idx)
			}
		}
		return sb.String()
	}
	done := func() { // a value ended in the innermost container
		if n := len(stack); n > 0 {
			if stack[n-1].obj {
				stack[n-1].wantKey = true
			} else {
				stack[n-1].idx++
			}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	for {
		tok, err := dec.Token()
		if err != nil {
			return "body"
		}
		end := int(dec.InputOffset())
		switch d := tok.(type) {
		case json.Delim:
			switch d {
			case '{', '[':
				stack = append(stack, frame{obj: d == '{', wantKey: true})
			default:
				stack = stack[:len(stack)-1]
				done()
			}
			continue
		case string:
			if n := len(stack); n > 0 && stack[n-1].obj && stack[n-1].wantKey {
				stack[n-1].key, stack[n-1].wantKey = d, false
				if end > at {
					return path()
				}
				continue
			}
		}
		if end > at {
			return path()
		}
		done()
	}
}
