package retryhttp

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"syscall"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		headers map[string]string
		want    time.Duration
	}{
		{"none", nil, 0},
		{"seconds", map[string]string{"Retry-After": "20"}, 20 * time.Second},
		{"fractional seconds", map[string]string{"Retry-After": "0.5"}, 500 * time.Millisecond},
		{"more fractional seconds", map[string]string{"Retry-After": "1.5"}, 1500 * time.Millisecond},
		{"http date", map[string]string{"Retry-After": "Sun, 01 Jun 2025 12:00:30 GMT"}, 30 * time.Second},
		{"date in the past", map[string]string{"Retry-After": "Sun, 01 Jun 2025 11:00:00 GMT"}, 0},
		{"milliseconds win", map[string]string{"Retry-After": "20", "Retry-After-Ms": "250"}, 250 * time.Millisecond},
		{"bad milliseconds", map[string]string{"Retry-After": "3", "Retry-After-Ms": "soon"}, 3 * time.Second},
		{"negative", map[string]string{"Retry-After": "-4"}, 0},
		{"garbage", map[string]string{"Retry-After": "later"}, 0},
		{"huge", map[string]string{"Retry-After": "1e300"}, 0},
		{"huge milliseconds", map[string]string{"Retry-After-Ms": "1e300", "Retry-After": "2"}, 2 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tt.headers {
				h.Set(k, v)
			}
			if got := RetryAfter(h, now); got != tt.want {
				t.Errorf("RetryAfter = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestTransient(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want bool
	}{
		{io.EOF, true},
		{fmt.Errorf("read body: %w", io.ErrUnexpectedEOF), true},
		{syscall.ECONNRESET, true},
		{syscall.ECONNREFUSED, true},
		{syscall.EPIPE, true},
		{errors.New("bad request"), false},
	} {
		if got := Transient(tt.err); got != tt.want {
			t.Errorf("Transient(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}
