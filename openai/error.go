package openai

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/internal/retryhttp"
)

// maxErrorBody caps how much of an error reply is read for its message.
const maxErrorBody = 64 << 10

// maxMsg caps, in bytes, the server text quoted in an error message.
const maxMsg = 300

// callError turns a failed SDK call into an error for the engine. ctx is
// the caller's context and callCtx the one bounded by the Client's Timeout;
// res is the HTTP response, if one arrived.
func (c *Client) callError(ctx, callCtx context.Context, res *http.Response, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		// The caller gave up: trying again is the caller's call.
		return &strata.ProviderError{Provider: provider, Err: ctxErr}
	}
	if callCtx.Err() != nil {
		return &strata.ProviderError{
			Provider:  provider,
			Retryable: true,
			Msg:       fmt.Sprintf("no reply within %v", c.timeout),
			Err:       callCtx.Err(),
		}
	}
	if res != nil && res.StatusCode >= 400 {
		// The SDK's own error is not wrapped: it holds the request, and
		// with it the Authorization header.
		return c.statusError(res)
	}
	var (
		certErr    *tls.CertificateVerificationError
		unknownCA  x509.UnknownAuthorityError
		hostErr    x509.HostnameError
		invalidErr x509.CertificateInvalidError
	)
	if errors.As(err, &certErr) || errors.As(err, &unknownCA) || errors.As(err, &hostErr) || errors.As(err, &invalidErr) {
		return &strata.ProviderError{Provider: provider, Msg: c.clean("TLS certificate not accepted: " + err.Error()), Err: err}
	}
	if retryhttp.Transient(err) {
		return &strata.ProviderError{Provider: provider, Retryable: true, Msg: c.clean("network error: " + err.Error()), Err: err}
	}
	return &strata.ProviderError{Provider: provider, Msg: c.clean("request failed: " + err.Error()), Err: err}
}

// statusError describes an HTTP error reply. 408, 429 and 5xx are
// retryable, any other status is a refusal.
func (c *Client) statusError(res *http.Response) error {
	status := res.StatusCode
	var body []byte
	if res.Body != nil {
		body, _ = io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
	}
	msg := serverMessage(body)
	if msg == "" {
		msg = string(body)
	}
	msg = c.clean(msg)
	if msg == "" {
		msg = http.StatusText(status)
	}
	return &strata.ProviderError{
		Provider:   provider,
		Status:     status,
		Retryable:  status == http.StatusRequestTimeout || status == http.StatusTooManyRequests || status >= 500,
		RetryAfter: retryhttp.RetryAfter(res.Header, time.Now()),
		Msg:        msg,
	}
}

// replyError describes a successful HTTP reply that holds no usable
// completion. It is not retryable: the same request would likely get the
// same reply.
func (c *Client) replyError(res *http.Response, msg string, err error) error {
	status := 0
	if res != nil {
		status = res.StatusCode
	}
	return &strata.ProviderError{Provider: provider, Status: status, Msg: c.clean(msg), Err: err}
}

// clean scrubs the API key from s, collapses its white space and caps its
// length. The key goes first, so that a cut cannot leave part of it.
func (c *Client) clean(s string) string {
	if c.apiKey != "" {
		s = strings.ReplaceAll(s, c.apiKey, "[redacted]")
	}
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= maxMsg {
		return s
	}
	cut := maxMsg
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// serverMessage extracts the message from an error body in the shapes
// OpenAI-compatible servers use: {"error": {"message": "..."}} (OpenAI,
// Ollama, vLLM, llama.cpp), {"error": "..."}, {"message": "..."} and
// {"detail": "..."}. It returns "" if body has none of them.
func serverMessage(body []byte) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message json.RawMessage `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &v) != nil {
		return ""
	}
	if len(v.Error) > 0 {
		var obj struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(v.Error, &obj) == nil && obj.Message != "" {
			return obj.Message
		}
	}
	for _, raw := range []json.RawMessage{v.Error, v.Message, v.Detail} {
		var s string
		if len(raw) > 0 && json.Unmarshal(raw, &s) == nil && s != "" {
			return s
		}
	}
	return ""
}
