// Package proxy puts strata's memory in front of a model API: it serves
// OpenAI's POST /v1/chat/completions and Anthropic's POST /v1/messages,
// streaming and not, passes each call to an upstream base URL with the
// caller's own API key, remembers every new message and the reply in a
// strata.Memory, and, by mode, reshapes the history that goes upstream
// (a context package in place of older history, or compaction).
//
// The request body is handled as raw JSON: only the fields the proxy
// needs are read (messages, stream, user, metadata.user_id, system,
// tools, max_tokens), and everything else goes upstream byte for byte.
package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/compact"
)

// Mode says what the proxy does to the history it sends upstream.
type Mode string

// The modes.
const (
	// ModeMemory replaces older history, when the list is over the
	// budget, with a context package for the newest user message.
	ModeMemory Mode = "memory"
	// ModeCompact runs compaction (tool-output pruning, checkpoint) over
	// the list, keeping its state per conversation.
	ModeCompact Mode = "compact"
	// ModeOff sends the list as it came; the proxy only remembers.
	ModeOff Mode = "off"
)

// ParseMode returns the mode s names, or an EINVALID error.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(strings.ToLower(strings.TrimSpace(s))); m {
	case ModeMemory, ModeCompact, ModeOff:
		return m, nil
	}
	return "", strata.Errorf(strata.EINVALID, "mode %q: want memory, compact or off", s)
}

// Defaults of Options.
const (
	DefaultOpenAIURL    = "https://api.openai.com/v1"
	DefaultAnthropicURL = "https://api.anthropic.com"
	DefaultBudget       = 4000
	DefaultMaxBody      = 16 << 20
	// MinPackage is the smallest budget a context package gets in memory
	// mode, whatever the system prompt leaves of Options.Budget.
	MinPackage = 256
)

// The headers the proxy reads and writes.
const (
	HeaderConversation = "X-Strata-Conversation"
	HeaderMode         = "X-Strata-Mode"
	HeaderReceived     = "X-Strata-Tokens-Received"
	HeaderUpstream     = "X-Strata-Tokens-Upstream"
	HeaderCoverage     = "X-Strata-Coverage"
	HeaderReshaped     = "X-Strata-Reshaped"
	// HeaderRemember "false" asks the proxy to store nothing of the call
	// (a side question that is no part of the conversation): its history
	// is still read from the store.
	HeaderRemember = "X-Strata-Remember"
)

// MemoryFunc returns the Memory a request is served by (a server with
// namespaces has one per namespace).
type MemoryFunc func(ctx context.Context) *strata.Memory

// Options configure a Proxy.
type Options struct {
	// Memory serves each request; required.
	Memory MemoryFunc
	// OpenAIURL is the upstream base URL of chat completions:
	// POST OpenAIURL + "/chat/completions". Default DefaultOpenAIURL.
	OpenAIURL string
	// AnthropicURL is the upstream base URL of messages:
	// POST AnthropicURL + "/v1/messages". Default DefaultAnthropicURL.
	AnthropicURL string
	// Mode is the default mode; a request may ask for another with the
	// X-Strata-Mode header. Default ModeMemory.
	Mode Mode
	// Budget is memory mode's threshold and the context package's
	// budget, in tokens (the system prompt's share comes out of it).
	// Default DefaultBudget.
	Budget int
	// Compact configures compact mode; the zero Config is
	// compact.DefaultConfig with compaction on.
	Compact compact.Config
	// Checkpointer writes compact mode's checkpoints (nil: extractive).
	Checkpointer compact.Checkpointer
	// Client calls upstream (nil: a client without a timeout: a
	// request's context bounds it).
	Client *http.Client
	// MaxBody bounds a request body, in bytes. Default DefaultMaxBody.
	MaxBody int64
	// Registerer receives the proxy's counters (nil: not registered).
	Registerer prometheus.Registerer
	// Logger receives errors the client cannot be told (a reply that
	// could not be stored once streamed). nil: slog.Default(). Nothing
	// of a request's headers is ever logged.
	Logger *slog.Logger
	// Now stamps stored turns (nil: time.Now).
	Now func() time.Time
}

// Proxy is the handler of both routes.
type Proxy struct {
	opt     Options
	metrics *metrics
	log     *slog.Logger
	seen    seen
	rollups pending
	cps     sync.Map // tokenizer name -> *compact.Compactor
}

// New returns a Proxy, or an error naming the bad option.
func New(opt Options) (*Proxy, error) {
	if opt.Memory == nil {
		return nil, errors.New("proxy: no Memory")
	}
	if opt.OpenAIURL == "" {
		opt.OpenAIURL = DefaultOpenAIURL
	}
	if opt.AnthropicURL == "" {
		opt.AnthropicURL = DefaultAnthropicURL
	}
	for _, u := range []*string{&opt.OpenAIURL, &opt.AnthropicURL} {
		if !strings.HasPrefix(*u, "http://") && !strings.HasPrefix(*u, "https://") {
			return nil, strata.Errorf(strata.EINVALID, "upstream URL %q: want http:// or https://", *u)
		}
		*u = strings.TrimRight(*u, "/")
	}
	if opt.Mode == "" {
		opt.Mode = ModeMemory
	}
	if _, err := ParseMode(string(opt.Mode)); err != nil {
		return nil, err
	}
	if opt.Budget == 0 {
		opt.Budget = DefaultBudget
	}
	if opt.Budget < MinPackage {
		return nil, strata.Errorf(strata.EINVALID, "budget %d: want at least %d tokens", opt.Budget, MinPackage)
	}
	if opt.Compact == (compact.Config{}) {
		opt.Compact = compact.DefaultConfig()
		opt.Compact.CompactionEnabled = true
	}
	if err := opt.Compact.Validate(); err != nil {
		return nil, fmt.Errorf("compact settings: %w", err)
	}
	if opt.Client == nil {
		opt.Client = &http.Client{}
	}
	if opt.MaxBody <= 0 {
		opt.MaxBody = DefaultMaxBody
	}
	if opt.Logger == nil {
		opt.Logger = slog.Default()
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	p := &Proxy{opt: opt, log: opt.Logger, metrics: newMetrics()}
	if opt.Registerer != nil {
		if err := p.metrics.register(opt.Registerer); err != nil {
			return nil, fmt.Errorf("proxy metrics: %w", err)
		}
	}
	return p, nil
}

// Routes are the paths the proxy serves, each POST.
var Routes = []string{"/v1/chat/completions", "/v1/messages"}

// ServeHTTP serves POST /v1/chat/completions and POST /v1/messages.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	requestID(w, r)
	prov, ok := provider(r.URL.Path)
	if !ok {
		writeError(w, compact.OpenAI, http.StatusNotFound, "no route "+r.URL.Path+": the proxy serves POST /v1/chat/completions and POST /v1/messages")
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeError(w, prov, http.StatusMethodNotAllowed, r.Method+" "+r.URL.Path+": only POST is served")
		return
	}
	p.serve(w, r, prov)
}

// call is one request as the proxy handles it.
type call struct {
	prov   compact.Provider
	conv   string
	mode   Mode
	stream bool
	t      *compact.Transcript
	lead   int // leading system messages (OpenAI), never stored
	tail   int // index of the newest real user message: the newest turn starts there
	mem    *strata.Memory
	at     time.Time
	forget bool // store nothing (X-Strata-Remember: false)
}

func (p *Proxy) serve(w http.ResponseWriter, r *http.Request, prov compact.Provider) {
	start := time.Now()
	ctx := r.Context()
	outcome := "error"
	defer func() { p.metrics.requests.WithLabelValues(string(prov), outcome).Inc() }()
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, p.opt.MaxBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, prov, http.StatusRequestEntityTooLarge, fmt.Sprintf("the body is larger than %d bytes", p.opt.MaxBody))
			return
		}
		writeError(w, prov, http.StatusBadRequest, "reading the body: "+err.Error())
		return
	}
	c, err := p.parse(r, prov, body)
	if err != nil {
		outcome = "bad_request"
		writeError(w, prov, http.StatusBadRequest, err.Error())
		return
	}
	c.mem = p.opt.Memory(ctx)
	c.at = p.opt.Now()
	w.Header().Set(HeaderConversation, c.conv)

	// The history before the newest turn is settled: the client sends it
	// as what was said. It is stored before the call, so that a context
	// package can draw on it; the newest turn is stored with the reply,
	// once the reply is whole.
	if _, err := p.remember(ctx, c, c.t.Messages, c.lead, c.tail, false); err != nil {
		p.storeError(w, c, err)
		return
	}
	if c.mode != ModeOff {
		// The package and the compaction state build on the pyramid: the
		// rollup of the previous reply comes first.
		if err := p.rollups.wait(ctx, storeNamespace(c.mem), c.conv); err != nil {
			p.storeError(w, c, err)
			return
		}
	}
	sh, err := p.shape(ctx, c)
	if err != nil {
		if strata.ErrorCode(err) == strata.EINVALID {
			outcome = "bad_request"
			writeError(w, prov, http.StatusBadRequest, err.Error())
			return
		}
		p.storeError(w, c, err)
		return
	}
	p.report(w, prov, sh, start)

	stored := false
	var rollup func()
	status, err := p.forward(ctx, w, r, c, sh.body, func(reply *compact.Message) {
		ms := append(append([]*compact.Message(nil), c.t.Messages...), reply)
		var err error
		if rollup, err = p.remember(context.WithoutCancel(ctx), c, ms, c.tail, len(ms), true); err != nil {
			p.log.LogAttrs(ctx, slog.LevelError, "proxy: the reply could not be stored",
				slog.String("conversation", c.conv), slog.String("request_id", w.Header().Get("X-Request-Id")), slog.String("error", err.Error()))
			return
		}
		stored = true
	})
	if rollup != nil {
		// The turns are stored; their rollup runs once the answer is
		// complete (the handler returned), off the client's time.
		p.rollups.start(storeNamespace(c.mem), c.conv, rollup)
	}
	outcome = forwardOutcome(err, status, stored)
}

// forwardOutcome names, for the metrics, the outcome of a request sent
// upstream: the upstream's error or status, else whether the reply was
// stored.
func forwardOutcome(err error, status int, stored bool) string {
	switch {
	case err != nil:
		return "upstream_error"
	case status >= 300:
		return "upstream_" + strconv.Itoa(status)
	case !stored:
		return "store_error"
	}
	return "ok"
}

// report says in w's headers and in the metrics what shaping a request
// of prov that started at start did.
func (p *Proxy) report(w http.ResponseWriter, prov compact.Provider, sh shaped, start time.Time) {
	h := w.Header()
	h.Set(HeaderMode, string(sh.mode))
	h.Set(HeaderReceived, strconv.Itoa(sh.received))
	h.Set(HeaderUpstream, strconv.Itoa(sh.upstream))
	h.Set(HeaderReshaped, strconv.FormatBool(sh.reshaped))
	if sh.coverage != "" {
		h.Set(HeaderCoverage, sh.coverage)
	}
	p.metrics.tokensReceived.WithLabelValues(string(prov)).Add(float64(sh.received))
	p.metrics.tokensUpstream.WithLabelValues(string(prov)).Add(float64(sh.upstream))
	if sh.reshaped {
		p.metrics.reshaped.WithLabelValues(string(prov), string(sh.mode)).Inc()
	}
	p.metrics.added.Observe(time.Since(start).Seconds())
}

// storeError answers a failure of the store before anything went
// upstream, in the provider's wire format, the store's words in the log.
func (p *Proxy) storeError(w http.ResponseWriter, c *call, err error) {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		writeError(w, c.prov, http.StatusServiceUnavailable, "the request ended before the proxy could store its history: "+err.Error())
		return
	}
	p.log.LogAttrs(context.Background(), slog.LevelError, "proxy: store error",
		slog.String("conversation", c.conv), slog.String("error", err.Error()))
	writeError(w, c.prov, http.StatusInternalServerError, "strata could not store the conversation's history; the proxy's log has the details")
}

// parse reads what the proxy needs of a request.
func (p *Proxy) parse(r *http.Request, prov compact.Provider, body []byte) (*call, error) {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		if len(trimmed) == 0 {
			return nil, errors.New("the body is empty: want a JSON object with \"messages\"")
		}
		if !bytesValidJSON(trimmed) {
			_, err := compact.Parse(prov, body)
			return nil, err
		}
		return nil, errors.New("the body is not a JSON object: want an object with \"messages\"")
	}
	t, err := compact.Parse(prov, body)
	if err != nil {
		return nil, err
	}
	top, err := readTop(t)
	if err != nil {
		return nil, err
	}
	c := &call{prov: prov, t: t, stream: top.Stream}
	c.mode = p.opt.Mode
	if v := r.Header.Get(HeaderRemember); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("header %s: %q: want true or false", HeaderRemember, v)
		}
		c.forget = !b
	}
	if v := r.Header.Get(HeaderMode); v != "" {
		m, err := ParseMode(v)
		if err != nil {
			return nil, fmt.Errorf("header %s: %w", HeaderMode, err)
		}
		c.mode = m
	}
	if prov == compact.OpenAI {
		for c.lead < len(t.Messages) && (t.Messages[c.lead].Role() == "system" || t.Messages[c.lead].Role() == "developer") {
			c.lead++
		}
	}
	c.tail = c.lead
	for i := len(t.Messages) - 1; i >= c.lead; i-- {
		if m := t.Messages[i]; m.Role() == "user" && !m.IsToolResult() {
			c.tail = i
			break
		}
	}
	c.conv, err = identity(r.Header.Get(HeaderConversation), top, t, c.lead)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// remember stores ms[from:to] (the leading system messages never) as
// turns of the call's conversation, skipping those already stored. With
// later, the rollup that follows the append is not run but returned (nil
// when there is none to run): the turns are stored either way once
// remember returns.
func (p *Proxy) remember(ctx context.Context, c *call, ms []*compact.Message, from, to int, later bool) (func(), error) {
	from = max(from, c.lead)
	if from >= to || c.forget {
		return nil, nil
	}
	turns := compact.MessageTurns(ms[:to], from, "proxy-", c.at)
	keep := turns[:0]
	for _, t := range turns {
		if t.Content != "" || len(t.ToolCalls) > 0 || len(t.ToolResults) > 0 || len(t.Metadata) > 0 {
			keep = append(keep, t)
		}
	}
	turns = keep
	if len(turns) == 0 {
		return nil, nil
	}
	ids := make([]string, len(turns))
	for i, t := range turns {
		ids[i] = t.ExtID
	}
	ns := storeNamespace(c.mem)
	ask := p.seen.unknown(ns, c.conv, ids)
	if len(ask) == 0 {
		return nil, nil
	}
	// The append skips the ext ids it has stored; the lookup spares the
	// history a batch (and its rollup) when all of it is stored. The
	// newest turn and the reply are new but for a retry: they go to the
	// append unlooked.
	var have map[string]bool
	var err error
	if !later {
		if have, err = c.mem.Store().ExistingExtIDs(ctx, ns, c.conv, ask); err != nil {
			p.seen.forget(ns, c.conv)
			return nil, fmt.Errorf("look up stored messages: %w", err)
		}
	}
	fresh := turns[:0]
	for _, t := range turns {
		if !have[t.ExtID] && slices.Contains(ask, t.ExtID) {
			fresh = append(fresh, t)
		}
	}
	var rollup func()
	if len(fresh) > 0 {
		b := strata.Batch{Conversation: c.conv, Turns: fresh}
		var res strata.IngestResult
		if later {
			var roll func(context.Context) strata.IngestResult
			res, roll, err = c.mem.IngestDeferred(ctx, b)
			if roll != nil {
				rollup = func() { roll(context.WithoutCancel(ctx)) }
			}
		} else {
			res, err = c.mem.Ingest(ctx, b)
		}
		p.metrics.turns.WithLabelValues("added").Add(float64(res.Added))
		if err != nil {
			p.seen.forget(ns, c.conv)
			return nil, err
		}
	}
	p.seen.stored(ns, c.conv, ids)
	return rollup, nil
}

func storeNamespace(m *strata.Memory) string {
	if ns := m.Namespace(); ns != "" {
		return ns
	}
	return strata.DefaultNamespace
}
