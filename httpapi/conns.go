package httpapi

import (
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// ConnLimit bounds the connections a server holds open. Wrap the
// listener with Listener and set the http.Server's ConnState to
// ConnState. At the limit, a new connection takes the place of the
// longest-waiting one that is serving no request (idle between requests
// on keep-alive, or open without a complete request yet), which is
// closed: a flood of idle or silent connections cannot keep a new client
// out, and the server never holds more than the limit of file
// descriptors for its clients. Only when every connection is serving a
// request is the new one answered 503 and closed.
type ConnLimit struct {
	max   int
	mu    sync.Mutex
	conns map[net.Conn]*connState
}

type connState struct {
	state http.ConnState
	since time.Time
}

// NewConnLimit returns a limit of n connections (at least 1).
func NewConnLimit(n int) *ConnLimit {
	return &ConnLimit{max: max(1, n), conns: map[net.Conn]*connState{}}
}

// Open returns the number of connections held open.
func (l *ConnLimit) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.conns)
}

// Listener returns ln with the limit applied to what it accepts.
func (l *ConnLimit) Listener(ln net.Listener) net.Listener { return limitListener{ln, l} }

// ConnState is the http.Server's ConnState hook: it tracks which
// connections are serving a request.
func (l *ConnLimit) ConnState(c net.Conn, s http.ConnState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s == http.StateClosed || s == http.StateHijacked {
		delete(l.conns, c)
		return
	}
	if cs, ok := l.conns[c]; ok {
		cs.state, cs.since = s, time.Now()
	}
}

// admit makes room for c, closing the longest-waiting connection that
// serves no request if the limit is reached; false when every one is
// serving a request.
func (l *ConnLimit) admit(c net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.conns) >= l.max {
		var victim net.Conn
		var since time.Time
		for vc, cs := range l.conns {
			if cs.state != http.StateActive && (victim == nil || cs.since.Before(since)) {
				victim, since = vc, cs.since
			}
		}
		if victim == nil {
			return false
		}
		delete(l.conns, victim)
		victim.Close()
	}
	l.conns[c] = &connState{state: http.StateNew, since: time.Now()}
	return true
}

type limitListener struct {
	net.Listener
	l *ConnLimit
}

func (ln limitListener) Accept() (net.Conn, error) {
	for {
		c, err := ln.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if ln.l.admit(c) {
			return c, nil
		}
		// Every connection is serving a request: this one is told so and
		// closed, without blocking the accept loop on a slow client.
		go func() {
			c.SetWriteDeadline(time.Now().Add(time.Second))
			body := fmt.Sprintf(`{"title":"Service Unavailable","status":503,"detail":"the server is serving its limit of %d connections: retry shortly"}`, ln.l.max)
			fmt.Fprintf(c, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/problem+json\r\nRetry-After: 1\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
			c.Close()
		}()
	}
}
