package httpapi

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// countingReader counts the bytes read from it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// bodyRequest is a POST to the API with a body of n bytes, whose
// Content-Length is said unless chunked.
func bodyRequest(ctx context.Context, n int, chunked bool) (*http.Request, *countingReader) {
	cr := &countingReader{r: bytes.NewReader(bytes.Repeat([]byte("x"), n))}
	r := httptest.NewRequest(http.MethodPost, "/v1/conversations/c/turns", cr)
	r.ContentLength = int64(n)
	if chunked {
		r.ContentLength = -1
	}
	return r.WithContext(ctx), cr
}

// TestBodiesInFlightBounded: the bodies held at once add up to at most
// MaxInflight bytes; a request past that waits, and one whose deadline
// ends first is answered 503 with a Retry-After. A large body takes its
// room before more than freeBody of it is read (MaxBody when it does not
// say its length, giving back what it did not use once read), so a body
// waiting for room waits in the socket. A request with no body takes no
// room.
func TestBodiesInFlightBounded(t *testing.T) {
	s, err := New(newMemory(t), Options{MaxBody: 100_000, MaxInflight: 150_000, MaxLarge: 8})
	if err != nil {
		t.Fatal(err)
	}
	live := context.Background()
	done, cancel := context.WithCancel(live)
	cancel()
	hold := func(ctx context.Context, n int, chunked bool) (func(), *httptest.ResponseRecorder, *countingReader) {
		t.Helper()
		r, cr := bodyRequest(ctx, n, chunked)
		w := httptest.NewRecorder()
		release, ok := s.holdBody(w, r)
		if ok {
			if b, held := heldBytes(r); !held || len(b) != n {
				t.Fatalf("a body of %d bytes held as %d bytes", n, len(b))
			}
		}
		return release, w, cr
	}
	refused := func(what string, w *httptest.ResponseRecorder) {
		t.Helper()
		if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") != "1" || w.Header().Get("Connection") != "close" {
			t.Fatalf("%s: %d, Retry-After %q, Connection %q; want 503, 1, close", what, w.Code, w.Header().Get("Retry-After"), w.Header().Get("Connection"))
		}
	}

	relA, _, _ := hold(live, 100_000, false) // 100,000 of 150,000 taken
	if relA == nil {
		t.Fatal("a body of MaxBody got no room in an idle server")
	}
	if rel, w, _ := hold(done, 60_000, false); rel != nil {
		t.Fatal("a small body past the room was admitted")
	} else {
		refused("a small body past the room", w)
	}
	if rel, w, cr := hold(done, 90_000, false); rel != nil {
		t.Fatal("a large body past the room was admitted")
	} else {
		refused("a large body past the room", w)
		if cr.n > freeBody+1 {
			t.Errorf("a large body waiting for room was read %d bytes, want at most %d", cr.n, freeBody+1)
		}
	}
	relC, _, _ := hold(done, 40_000, false) // fits: 140,000
	if relC == nil {
		t.Fatal("a body that fits was refused")
	}
	relC()
	if rel, w, _ := hold(done, 70_000, true); rel != nil {
		t.Fatal("a chunked body was admitted with less room than MaxBody")
	} else {
		refused("a chunked body past the room", w)
	}
	if rel, _ := s.holdBody(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/v1/conversations", nil).WithContext(done)); rel == nil {
		t.Fatal("a request without a body waited for room")
	}
	relA()
	relD, _, _ := hold(live, 70_000, true) // takes 100,000, keeps 70,000
	if relD == nil {
		t.Fatal("a chunked body got no room in an idle server")
	}
	if rel, _, _ := hold(done, 80_000, false); rel == nil {
		t.Fatal("a chunked body kept more room than its size")
	} else {
		rel()
	}
	relD()
	if !s.bodies.TryAcquire(150_000) {
		t.Fatal("room was not all given back")
	}
}

// TestBodyOverMaxRefusedUnread: a body whose Content-Length is over
// MaxBody is answered 413 without a byte of it read; one that does not
// say and runs over is 413 too.
func TestBodyOverMaxRefusedUnread(t *testing.T) {
	s, err := New(newMemory(t), Options{MaxBody: 100_000})
	if err != nil {
		t.Fatal(err)
	}
	for _, chunked := range []bool{false, true} {
		r, cr := bodyRequest(context.Background(), 100_001, chunked)
		w := httptest.NewRecorder()
		if rel, ok := s.holdBody(w, r); ok {
			rel()
			t.Fatalf("chunked %v: a body over MaxBody was held", chunked)
		}
		if w.Code != http.StatusRequestEntityTooLarge || w.Header().Get("Connection") != "close" {
			t.Fatalf("chunked %v: %d, Connection %q; want 413, close", chunked, w.Code, w.Header().Get("Connection"))
		}
		if !chunked && cr.n != 0 {
			t.Errorf("a body said to be over MaxBody was read %d bytes, want 0", cr.n)
		}
	}
	if !s.bodies.TryAcquire(s.opt.MaxInflight) {
		t.Fatal("a refused body kept its room")
	}
}

// TestBodyOfMaxBodyAccepted: an append whose body is exactly MaxBody
// bytes is served (the decoder's own bound refused it with 413).
func TestBodyOfMaxBodyAccepted(t *testing.T) {
	body := `{"turns":[{"role":"user","content":"` + strings.Repeat("y", 5000) + `"}]}`
	ts := newServer(t, Options{MaxBody: int64(len(body))})
	resp, err := ts.Client().Post(ts.URL+"/v1/conversations/c/turns", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("a body of exactly MaxBody: %d %s", resp.StatusCode, out)
	}
	resp, err = ts.Client().Post(ts.URL+"/v1/conversations/c/turns", "application/json", strings.NewReader(body+" "))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("a body of MaxBody+1: %d, want 413", resp.StatusCode)
	}
}

// TestHeldBodyRoom: whatever bodies are held and released, in whatever
// order, each handler reads exactly the bytes sent, and once every one
// is released the whole room is free again.
func TestHeldBodyRoom(t *testing.T) {
	s, err := New(newMemory(t), Options{MaxBody: 200_000, MaxInflight: 300_000, MaxLarge: 2, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	done, cancel := context.WithCancel(context.Background())
	cancel()
	rapid.Check(t, func(t *rapid.T) {
		var releases []func()
		for i := range rapid.IntRange(1, 8).Draw(t, "bodies") {
			n := rapid.OneOf(rapid.IntRange(1, 2*freeBody), rapid.IntRange(1, 200_000)).Draw(t, "size")
			chunked := rapid.Bool().Draw(t, "chunked")
			body := bytes.Repeat([]byte{byte('a' + i%26)}, n)
			r := httptest.NewRequest(http.MethodPost, "/v1/conversations/c/turns", bytes.NewReader(body))
			r.ContentLength = int64(n)
			if chunked {
				r.ContentLength = -1
			}
			r = r.WithContext(done) // never waits: held at once or refused
			w := httptest.NewRecorder()
			rel, ok := s.holdBody(w, r)
			if !ok {
				if w.Code != http.StatusServiceUnavailable {
					t.Fatalf("a body of %d bytes refused with %d", n, w.Code)
				}
				continue
			}
			got, err := io.ReadAll(r.Body)
			if err != nil || !bytes.Equal(got, body) {
				t.Fatalf("a body of %d bytes read back as %d bytes (%v)", n, len(got), err)
			}
			releases = append(releases, rel)
			if len(releases) > 0 && rapid.Bool().Draw(t, "release one") {
				k := rapid.IntRange(0, len(releases)-1).Draw(t, "which")
				releases[k]()
				releases = append(releases[:k], releases[k+1:]...)
			}
		}
		for _, rel := range releases {
			rel()
		}
		if !s.bodies.TryAcquire(300_000) || !s.large.TryAcquire(2) {
			t.Fatal("room or a large body's slot was not all given back")
		}
		s.bodies.Release(300_000)
		s.large.Release(2)
	})
}

// TestLargeBodiesTakeSlots: at most MaxLarge bodies over freeBody are
// held at once, however much room is left; another waits, once read, and
// is answered 503 if its deadline ends first. Small bodies take no slot,
// nor do the proxy's model routes.
func TestLargeBodiesTakeSlots(t *testing.T) {
	s, err := New(newMemory(t), Options{MaxBody: 1 << 20, MaxInflight: 8 << 20, MaxLarge: 1})
	if err != nil {
		t.Fatal(err)
	}
	live := context.Background()
	done, cancel := context.WithCancel(live)
	cancel()
	r, _ := bodyRequest(live, 200_000, false)
	relA, ok := s.holdBody(httptest.NewRecorder(), r)
	if !ok {
		t.Fatal("a large body got no slot in an idle server")
	}
	r, _ = bodyRequest(done, 200_000, false)
	w := httptest.NewRecorder()
	if rel, ok := s.holdBody(w, r); ok {
		rel()
		t.Fatal("a second large body was held with MaxLarge 1")
	}
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") != "1" {
		t.Fatalf("a large body past the slots: %d, Retry-After %q; want 503, 1", w.Code, w.Header().Get("Retry-After"))
	}
	r, _ = bodyRequest(done, freeBody, false)
	if rel, ok := s.holdBody(httptest.NewRecorder(), r); !ok {
		t.Fatal("a small body waited for a large body's slot")
	} else {
		rel()
	}
	r = httptest.NewRequest(http.MethodPost, "/v1/chat/completions", bytes.NewReader(make([]byte, 200_000))).WithContext(done)
	if rel, ok := s.holdBody(httptest.NewRecorder(), r); !ok {
		t.Fatal("a model route's large body waited for a slot")
	} else {
		rel()
	}
	relA()
	r, _ = bodyRequest(done, 200_000, true)
	if rel, ok := s.holdBody(httptest.NewRecorder(), r); !ok {
		t.Fatal("no slot after the large body was answered")
	} else {
		rel()
	}
}

// cutReader gives n bytes, then fails as a connection closed mid-body.
type cutReader struct{ n int }

func (c *cutReader) Read(p []byte) (int, error) {
	if c.n == 0 {
		return 0, io.ErrUnexpectedEOF
	}
	k := min(len(p), c.n)
	c.n -= k
	return k, nil
}

// TestBodyCutShortRefused: a body that ends before its Content-Length,
// small or large, is answered 400 and never handed on as a shorter body.
func TestBodyCutShortRefused(t *testing.T) {
	s, err := New(newMemory(t), Options{MaxBody: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{100, 2 * freeBody} {
		r := httptest.NewRequest(http.MethodPost, "/v1/conversations/c/turns", &cutReader{n: n / 2})
		r.ContentLength = int64(n)
		w := httptest.NewRecorder()
		if rel, ok := s.holdBody(w, r); ok {
			rel()
			t.Fatalf("a body of %d bytes cut at %d was held", n, n/2)
		}
		if w.Code != http.StatusBadRequest {
			t.Fatalf("a body of %d bytes cut at %d: %d, want 400", n, n/2, w.Code)
		}
	}
	if !s.bodies.TryAcquire(s.opt.MaxInflight) || !s.large.TryAcquire(int64(s.opt.MaxLarge)) {
		t.Fatal("a refused body kept its room or slot")
	}
}

// stallReader gives n bytes, then waits for go before the rest.
type stallReader struct {
	n    int
	rest int
	gate chan struct{}
}

func (r *stallReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		<-r.gate
		if r.rest == 0 {
			return 0, io.EOF
		}
		r.n, r.rest = r.rest, 0
	}
	k := min(len(p), r.n)
	for i := range k {
		p[i] = 'x'
	}
	r.n -= k
	return k, nil
}

// TestTricklingBodyHoldsNoSlot: a large body still arriving holds none of
// the MaxLarge slots, so one slow upload does not stop every other large
// one.
func TestTricklingBodyHoldsNoSlot(t *testing.T) {
	s, err := New(newMemory(t), Options{MaxBody: 1 << 20, MaxInflight: 8 << 20, MaxLarge: 1})
	if err != nil {
		t.Fatal(err)
	}
	slow := &stallReader{n: freeBody + 1000, rest: 100_000, gate: make(chan struct{})}
	r := httptest.NewRequest(http.MethodPost, "/v1/conversations/c/turns", slow)
	r.ContentLength = int64(freeBody + 1000 + 100_000)
	held := make(chan func(), 1)
	go func() {
		rel, ok := s.holdBody(httptest.NewRecorder(), r)
		if !ok {
			rel = nil
		}
		held <- rel
	}()
	// Wait until the slow body has taken its room and is stalled.
	for s.bodies.TryAcquire(8 << 20) {
		s.bodies.Release(8 << 20)
		runtime.Gosched()
	}
	done, cancel := context.WithCancel(context.Background())
	cancel()
	fast, _ := bodyRequest(done, 200_000, false)
	w := httptest.NewRecorder()
	rel, ok := s.holdBody(w, fast)
	if !ok {
		t.Errorf("a large body that arrived whole waited for the slot of one still arriving: %d", w.Code)
	} else {
		rel()
	}
	close(slow.gate)
	if rel := <-held; rel == nil {
		t.Fatal("the slow body was refused")
	} else {
		rel()
	}
}
