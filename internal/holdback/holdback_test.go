package holdback

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func plainErrors(code int, h http.Header) bool {
	return code >= 400 && strings.HasPrefix(h.Get("Content-Type"), "text/plain")
}

func TestPassesOtherAnswers(t *testing.T) {
	rec := httptest.NewRecorder()
	w := &Writer{ResponseWriter: rec, Hold: plainErrors, Limit: 8}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusNotFound)
	w.Write([]byte(`{"a":1}`))
	w.Flush()
	if !w.Sent() || rec.Code != 404 || rec.Body.String() != `{"a":1}` || !rec.Flushed {
		t.Fatalf("sent %v, status %d, body %q, flushed %v", w.Sent(), rec.Code, rec.Body, rec.Flushed)
	}
	if status, _ := w.Held(); status != 0 {
		t.Fatalf("held %d", status)
	}
	w.Replace(func(http.ResponseWriter) { t.Fatal("replaced an answer that was sent") })
}

func TestHoldsAndReplaces(t *testing.T) {
	rec := httptest.NewRecorder()
	w := &Writer{ResponseWriter: rec, Hold: plainErrors, Limit: 8}
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(http.StatusMethodNotAllowed)
	w.WriteHeader(http.StatusOK) // only the first status counts
	if n, err := w.Write([]byte("not allowed here")); n != 16 || err != nil {
		t.Fatalf("Write = %d, %v", n, err)
	}
	w.Flush()
	if w.Sent() || rec.Body.Len() != 0 || rec.Flushed {
		t.Fatalf("a held answer reached the client: %q", rec.Body)
	}
	status, body := w.Held()
	if status != http.StatusMethodNotAllowed || string(body) != "not allo" {
		t.Fatalf("held %d %q, want 405 and the first 8 bytes", status, body)
	}
	w.Replace(func(u http.ResponseWriter) {
		u.Header().Set("Content-Type", "application/problem+json")
		u.WriteHeader(status)
		u.Write([]byte(`{"status":405}`))
	})
	w.Replace(func(http.ResponseWriter) { t.Fatal("replaced twice") })
	if !w.Sent() || rec.Code != 405 || rec.Body.String() != `{"status":405}` {
		t.Fatalf("status %d, body %q", rec.Code, rec.Body)
	}
}

func TestWriteWithoutStatusIsOK(t *testing.T) {
	rec := httptest.NewRecorder()
	w := &Writer{ResponseWriter: rec, Hold: plainErrors, Limit: 8}
	w.Header().Set("Content-Type", "text/plain")
	w.Write([]byte("fine"))
	if rec.Code != 200 || rec.Body.String() != "fine" || w.Unwrap() != rec {
		t.Fatalf("status %d, body %q", rec.Code, rec.Body)
	}
}
