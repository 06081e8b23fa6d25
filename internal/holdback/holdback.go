// Package holdback provides an http.ResponseWriter that passes an answer
// through unless its status and headers mark it as one to rewrite: that
// answer's status and (bounded) body are held back, and the caller sends
// its own answer in their place once the handler is done. The HTTP API
// uses it to turn plain-text errors into problems, the proxy to turn
// problems into the model API's error format.
package holdback

import (
	"bytes"
	"net/http"
)

// Writer wraps an http.ResponseWriter. Hold decides, when the status is
// written, whether the answer is held back; Limit bounds the bytes of a
// held answer's body that are kept (the rest is discarded).
type Writer struct {
	http.ResponseWriter
	Hold  func(status int, h http.Header) bool
	Limit int

	sent   bool // the status has gone to the client
	status int  // the status of the answer held back, else 0
	body   bytes.Buffer
}

// WriteHeader sends the status on, or holds the answer back. Only the
// first call counts.
func (w *Writer) WriteHeader(code int) {
	if w.sent || w.status != 0 {
		return
	}
	if w.Hold(code, w.Header()) {
		w.status = code
		return
	}
	w.sent = true
	w.ResponseWriter.WriteHeader(code)
}

// Write passes b on, or keeps it (up to Limit bytes) for a held answer.
func (w *Writer) Write(b []byte) (int, error) {
	if !w.sent && w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if w.status != 0 {
		if room := w.Limit - w.body.Len(); room > 0 {
			w.body.Write(b[:min(len(b), room)])
		}
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

// Flush flushes an answer being passed through; a held one waits.
func (w *Writer) Flush() {
	if w.status != 0 {
		return
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the writer underneath.
func (w *Writer) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Sent reports whether an answer's status has gone to the client.
func (w *Writer) Sent() bool { return w.sent }

// Held returns the status and the kept body of the answer held back, or
// a status of 0 when none is.
func (w *Writer) Held() (status int, body []byte) { return w.status, w.body.Bytes() }

// Replace writes the caller's answer in place of the held one: send gets
// the writer underneath. It does nothing when no answer is held.
func (w *Writer) Replace(send func(http.ResponseWriter)) {
	if w.status == 0 || w.sent {
		return
	}
	send(w.ResponseWriter)
	w.sent = true
}
