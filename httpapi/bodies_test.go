package httpapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestBodiesInFlightBounded: the bodies being handled at once add up to
// at most twice MaxBody; a request past that waits, and one whose deadline
// ends first is answered 503 with a Retry-After. A body that does not say
// its length counts as MaxBody; one with no body takes no room.
func TestBodiesInFlightBounded(t *testing.T) {
	m := newMemory(t)
	s, err := New(m, Options{MaxBody: 1000})
	if err != nil {
		t.Fatal(err)
	}
	req := func(ctx context.Context, n int64) *http.Request {
		r := httptest.NewRequest(http.MethodPost, "/v1/conversations/c/turns", strings.NewReader(strings.Repeat("x", 10)))
		r.ContentLength = n
		return r.WithContext(ctx)
	}
	live := context.Background()
	var releases []func()
	for _, n := range []int64{1000, -1} { // said, and not said: 2,000 bytes in all
		rel, ok := s.roomForBody(httptest.NewRecorder(), req(live, n))
		if !ok {
			t.Fatalf("a body of %d bytes got no room in an idle server", n)
		}
		releases = append(releases, rel)
	}
	done, cancel := context.WithCancel(live)
	cancel()
	w := httptest.NewRecorder()
	if _, ok := s.roomForBody(w, req(done, 10)); ok || w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") != "1" {
		t.Fatalf("a body past the room in flight: admitted %v, %d %q", ok, w.Code, w.Header().Get("Retry-After"))
	}
	if _, ok := s.roomForBody(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/v1/conversations", nil).WithContext(done)); !ok {
		t.Fatal("a request without a body waited for room")
	}
	releases[0]()
	if rel, ok := s.roomForBody(httptest.NewRecorder(), req(live, 1000)); !ok {
		t.Fatal("no room after a body was answered")
	} else {
		rel()
	}
	releases[1]()
}
