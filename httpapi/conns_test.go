package httpapi

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestConnLimitEvictsIdle: at the connection limit, a new client is
// served and the longest-idle keep-alive connection is closed in its
// place, so idle connections cannot keep clients out nor use up the
// server's file descriptors.
func TestConnLimitEvictsIdle(t *testing.T) {
	ts, _ := newTokenServer(t, Options{}, "a")
	lim := NewConnLimit(3)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: ts.Config.Handler, ConnState: lim.ConnState}
	go hs.Serve(lim.Listener(ln))
	t.Cleanup(func() { hs.Close() })

	// healthz sends one keep-alive request on c and says whether it was
	// answered 200.
	healthz := func(c net.Conn, r *bufio.Reader) bool {
		if _, err := fmt.Fprint(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			return false
		}
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			return false
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode == 200
	}
	conns := make([]net.Conn, 6)
	readers := make([]*bufio.Reader, 6)
	for i := range conns {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns[i], readers[i] = c, bufio.NewReader(c)
		if !healthz(c, readers[i]) {
			t.Fatalf("connection %d was not served", i)
		}
		// The server marks a connection idle after it has answered, in
		// its own time: wait for it, so that the next connection finds
		// every older one idle, in the order they were answered.
		waitAllIdle(t, lim, min(i+1, 3))
	}
	// The three oldest were idle when the newer ones came: closed.
	for i, c := range conns {
		served := healthz(c, readers[i])
		if want := i >= 3; served != want {
			t.Errorf("connection %d served %v after %d newer ones, want %v", i, served, len(conns)-1-i, want)
		}
	}
	if n := lim.Open(); n > 3 {
		t.Errorf("%d connections open, want at most 3", n)
	}
}

// TestSlowBodyClosed: a body that does not arrive within the read
// timeout is answered 408 and the connection closed, without waiting for
// the rest (before, the deadline was lifted after the 408 and the server
// went on reading the body at the client's pace).
func TestSlowBodyClosed(t *testing.T) {
	// The body never arrives, so the timeout always passes; 2 s leaves a
	// busy machine the time to read the headers before it does.
	ts, sec := newTokenServer(t, Options{ReadTimeout: 2 * time.Second}, "a")
	c, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /v1/conversations/c/turns HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"turns\":", sec["a"])
	r := bufio.NewReader(c)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestTimeout || !resp.Close {
		t.Errorf("slow body: %d (close %v) %s, want 408 closing the connection", resp.StatusCode, resp.Close, body)
	}
	if rest, err := io.ReadAll(r); err != nil || len(rest) != 0 || !strings.Contains(string(body), "read timeout") {
		t.Errorf("after the 408: %q %v, want the connection closed", rest, err)
	}
}

// waitAllIdle waits until lim holds n connections, all idle between
// requests. The bound is for a hang, not for speed.
func waitAllIdle(t *testing.T, lim *ConnLimit, n int) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
		lim.mu.Lock()
		idle := 0
		for _, cs := range lim.conns {
			if cs.state == http.StateIdle {
				idle++
			}
		}
		held := len(lim.conns)
		lim.mu.Unlock()
		if held == n && idle == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the limit holds %d connections, %d idle; want %d, all idle", held, idle, n)
		}
	}
}
