package httpapi

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"golang.org/x/sync/semaphore"
)

// This file holds how a request's body is read and how much memory the
// bodies in flight may take. A /v1 or /mcp body is read whole once, here,
// and handed on as a heldBody: the text check, the MCP batch count and
// the decoder all read the same bytes instead of copying them again (a
// 16 MiB turn was copied three times before it was decoded).
//
// Every body held takes room, its size in bytes, from a server-wide
// budget of Options.MaxInflight bytes, until its request is answered:
// decoding, counting and storing a body costs several times its size, and
// without the budget the server's memory grew with the number of large
// bodies sent at once. A body larger than freeBody takes its room before
// more than freeBody of it is read (its Content-Length, or MaxBody when it
// does not say), so a crowd of large uploads waits for room in the socket
// rather than in memory; a smaller one takes it once it is whole. A body
// that trickles in holds no room until freeBody of it has arrived, and
// what it holds meanwhile is bounded by the connection limit.
//
// A body larger than freeBody also takes, once it has arrived whole, one
// of Options.MaxLarge slots (by default one less than the cores Go uses,
// at least one; a body still arriving holds none): decoding,
// counting and storing megabytes keeps a core busy for seconds without
// blocking, and with every core so busy a short request, a health check
// included, waited tens of milliseconds for the scheduler. A core left
// free answers it at once. The proxy's model routes take no slot: their
// requests mostly wait on the model, and holding a slot meanwhile would
// have them wait on each other.

// DefaultMaxInflight is the default of Options.MaxInflight.
const DefaultMaxInflight = 32 << 20

// freeBody is how much of a body is read before it takes its room.
const freeBody = 64 << 10

// heldBody is a request body read whole. It reads like the original, and
// hands its bytes to io.Copy in one write (the decoder's buffer is then
// allocated once, at the body's size).
type heldBody struct {
	b   []byte
	off int
}

func (h *heldBody) Read(p []byte) (int, error) {
	if h.off >= len(h.b) {
		return 0, io.EOF
	}
	n := copy(p, h.b[h.off:])
	h.off += n
	return n, nil
}

func (h *heldBody) WriteTo(w io.Writer) (int64, error) {
	n, err := w.Write(h.b[h.off:])
	h.off += n
	return int64(n), err
}

// Close lets the bytes go once the handler has read them: the request,
// which outlives its decoding, no longer keeps them.
func (h *heldBody) Close() error {
	h.b, h.off = nil, 0
	return nil
}

// heldBytes returns the body of r as read by holdBody, whole and unread.
func heldBytes(r *http.Request) ([]byte, bool) {
	h, ok := r.Body.(*heldBody)
	if !ok || h.off != 0 {
		return nil, false
	}
	return h.b, true
}

// holdsBody reports whether r's body is read whole before its handler
// runs: the API's and the MCP endpoint's.
func holdsBody(r *http.Request) bool {
	return r.Body != nil && r.Body != http.NoBody && (strings.HasPrefix(r.URL.Path, "/v1/") || r.URL.Path == "/mcp")
}

// holdBody reads r's body whole into a heldBody, within ReadTimeout and
// bounded by MaxBody, taking its room from the budget of bodies in flight;
// it returns the function that gives the room back once r is answered.
// It answers 413 for a body over MaxBody (at once when its Content-Length
// says so), 408 for one not received in time, and 503 with a Retry-After
// when no room came free within the request's deadline; after a refusal
// the connection is closed, its read deadline left in place, so the rest
// of a slow or oversized body is never waited for.
func (s *Server) holdBody(w http.ResponseWriter, r *http.Request) (func(), bool) {
	if !holdsBody(r) {
		return func() {}, true
	}
	if r.ContentLength > s.opt.MaxBody {
		s.refuseBody(w, &http.MaxBytesError{Limit: s.opt.MaxBody})
		return nil, false
	}
	rc := http.NewResponseController(w)
	deadline := rc.SetReadDeadline(time.Now().Add(s.opt.ReadTimeout)) == nil

	// The first freeBody bytes (all of a small body) are read before any
	// room is taken.
	first := int64(freeBody)
	if r.ContentLength >= 0 {
		first = min(first, r.ContentLength)
	}
	head, err := readHead(r.Body, first+1)
	if err != nil { // a body cut short is an error, not a shorter body
		s.refuseBody(w, err)
		return nil, false
	}
	var b []byte
	var room int64
	large := false
	if int64(len(head)) <= first {
		// The whole body is in: it takes its own size.
		b, room = head, int64(len(head))
		if !s.takeSlot(w, r, s.bodies, room) {
			return nil, false
		}
	} else {
		var ok bool
		if b, room, large, ok = s.holdLarge(w, r, rc, deadline, head); !ok {
			return nil, false
		}
	}
	release := func() {
		s.bodies.Release(room)
		if large {
			s.large.Release(1)
		}
	}
	// The whole body is in: the connection's deadline is lifted for the
	// rest of this request (the server sets its own for the next one).
	if deadline {
		rc.SetReadDeadline(time.Time{})
	}
	r.Body = &heldBody{b: b}
	r.ContentLength = int64(len(b))
	return release, true
}

// readHead reads up to n bytes of body; io.EOF is no error.
func readHead(body io.Reader, n int64) ([]byte, error) {
	head := make([]byte, n)
	k := 0
	for k < len(head) {
		m, err := body.Read(head[k:])
		k += m
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	return head[:k], nil
}

// holdLarge reads the rest of a body larger than its head. It takes the
// room the body says it needs (MaxBody if it does not say) before the rest
// is read, then gives back what it did not use; a body not to a model
// route then takes a slot for large ones (large). It returns the body and
// the room it holds; on a refusal it has answered and holds nothing.
func (s *Server) holdLarge(w http.ResponseWriter, r *http.Request, rc *http.ResponseController, deadline bool, head []byte) (b []byte, room int64, large, ok bool) {
	room = s.opt.MaxBody
	if r.ContentLength > 0 {
		room = r.ContentLength
	}
	if !s.takeSlot(w, r, s.bodies, room) {
		return nil, 0, false, false
	}
	if deadline {
		// The wait for room is the server's doing, not the client's.
		rc.SetReadDeadline(time.Now().Add(s.opt.ReadTimeout))
	}
	buf := bytes.NewBuffer(make([]byte, 0, room+bytes.MinRead))
	buf.Write(head)
	_, err := buf.ReadFrom(r.Body)
	if err == nil && int64(buf.Len()) > s.opt.MaxBody {
		err = &http.MaxBytesError{Limit: s.opt.MaxBody}
	}
	if err != nil {
		s.bodies.Release(room)
		s.refuseBody(w, err)
		return nil, 0, false, false
	}
	b = buf.Bytes()
	if used := int64(len(b)); used < room {
		s.bodies.Release(room - used)
		room = used
	}
	// The slot is taken once the body is in: a body trickling in
	// must not hold the few slots while it arrives.
	if !modelRoute(r.URL.Path) {
		if !s.takeSlot(w, r, s.large, 1) {
			s.bodies.Release(room)
			return nil, 0, false, false
		}
		large = true
	}
	return b, room, large, true
}

// takeSlot takes n of sem for a body (bytes of room, or a slot for a
// large one), waiting until the request's deadline; past it the request
// is answered 503 with a Retry-After.
func (s *Server) takeSlot(w http.ResponseWriter, r *http.Request, sem *semaphore.Weighted, n int64) bool {
	if n == 0 || sem.TryAcquire(n) || sem.Acquire(r.Context(), n) == nil {
		return true
	}
	w.Header().Set("Connection", "close")
	w.Header().Set("Retry-After", "1")
	writeProblem(w, http.StatusServiceUnavailable, "the server is busy with other large bodies; try again")
	return false
}

// refuseBody answers a body that could not be read: 413 over MaxBody,
// 408 past the read timeout, 400 otherwise. The connection is closed.
func (s *Server) refuseBody(w http.ResponseWriter, err error) {
	w.Header().Set("Connection", "close")
	var tooBig *http.MaxBytesError
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		writeProblem(w, http.StatusRequestTimeout, "the body was not received within the server's read timeout of "+s.opt.ReadTimeout.String())
	case errors.As(err, &tooBig):
		writeProblem(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the body is larger than %d bytes", s.opt.MaxBody))
	default:
		writeProblem(w, http.StatusBadRequest, "reading the body: "+err.Error())
	}
}
