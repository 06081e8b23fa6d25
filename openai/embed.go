package openai

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/strata-memory/strata"
)

// EmbedConfig configures an Embedder.
type EmbedConfig struct {
	// BaseURL is the API root, e.g. "http://127.0.0.1:11434/v1" for
	// Ollama, "http://127.0.0.1:8080/v1" for TEI or the llama.cpp server;
	// empty means DefaultBaseURL.
	BaseURL string
	// APIKey is sent as a bearer token; empty sends none.
	APIKey string
	// Model names the embedding model. Required.
	Model string
	// Dimensions, if positive, is sent as "dimensions": models that can
	// shorten their vectors (OpenAI's text-embedding-3) return that many.
	// 0 takes the model's own, learnt from the first reply.
	Dimensions int
	// Timeout bounds each request; 0 means DefaultTimeout.
	Timeout time.Duration
	// HTTPClient, if set, carries the requests (tests use it).
	HTTPClient *http.Client

	envErr error
}

// Embedder is a strata.Embedder over an OpenAI-compatible embeddings
// endpoint (POST {base}/embeddings): OpenAI, Ollama, vLLM, the llama.cpp
// server, Hugging Face TEI. It is safe for concurrent use.
//
// Like Client, it makes one attempt per request and reports failures as
// *strata.ProviderError (the engine retries what is retryable), with one
// exception: when the server refuses a batch as too large (413, or a
// 400, 422 or 500 that says so), the batch limit is halved and the texts
// are sent again in smaller batches; the limit holds for later calls.
type Embedder struct {
	svc     sdk.EmbeddingService
	name    string
	model   string
	dims    int          // configured; 0: the model's own
	learnt  atomic.Int64 // the dimension of the first reply
	timeout time.Duration
	// maxBatch is the largest batch the server took after refusing a
	// larger one; 0 until then.
	maxBatch atomic.Int64
	// errs classifies failures and scrubs the key from them, as for the
	// chat client.
	errs *Client
}

var _ strata.Embedder = (*Embedder)(nil)

// NewEmbedder returns an Embedder for cfg. It returns EINVALID, naming
// the field, if Model is empty, BaseURL is not an http or https URL,
// Dimensions or Timeout is negative or APIKey holds characters that
// cannot be sent in a header, and EINVALID for a STRATA_EMBED_* value
// EmbedFromEnv could not read.
func NewEmbedder(cfg EmbedConfig) (*Embedder, error) {
	if cfg.envErr != nil {
		return nil, cfg.envErr
	}
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, strata.Errorf(strata.EINVALID, "openai: EmbedConfig.Model is required")
	}
	if cfg.Dimensions < 0 {
		return nil, strata.Errorf(strata.EINVALID, "openai: EmbedConfig.Dimensions %d is negative", cfg.Dimensions)
	}
	// The chat client's checks of the URL, timeout and key apply as they are.
	c, err := New(Config{BaseURL: cfg.BaseURL, APIKey: cfg.APIKey, Model: cfg.Model, Timeout: cfg.Timeout, HTTPClient: cfg.HTTPClient})
	if err != nil {
		var se *strata.Error
		if errors.As(err, &se) {
			return nil, strata.Errorf(se.Code, "%s", strings.Replace(se.Message, "Config.", "EmbedConfig.", 1))
		}
		return nil, err
	}
	base := strings.TrimRight(strings.TrimSpace(cfg.BaseURL), "/")
	if base == "" {
		base = DefaultBaseURL
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	// NewEmbeddingService reads no OPENAI_* variables (see New).
	opts := []option.RequestOption{
		option.WithBaseURL(base),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0),
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	u, _ := url.Parse(base) // checked by New
	return &Embedder{
		svc:     sdk.NewEmbeddingService(opts...),
		name:    provider + " " + u.Redacted(),
		model:   cfg.Model,
		dims:    cfg.Dimensions,
		timeout: c.timeout,
		errs:    c,
	}, nil
}

// Name returns "openai" and the base URL.
func (e *Embedder) Name() string { return e.name }

// Model returns the configured model.
func (e *Embedder) Model() string { return e.model }

// Dimensions returns the configured dimensions, or those of the first
// reply, or 0 before it.
func (e *Embedder) Dimensions() int {
	if e.dims > 0 {
		return e.dims
	}
	return int(e.learnt.Load())
}

// Embed returns one vector per text, in order, in one request per batch
// (cut to the size the server is known to take).
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for len(texts) > 0 {
		n := len(texts)
		if m := int(e.maxBatch.Load()); m > 0 {
			n = min(n, m)
		}
		vs, err := e.request(ctx, texts[:n])
		if err != nil {
			if n > 1 && tooLarge(err) {
				e.lowerBatch(n / 2)
				continue
			}
			return nil, err
		}
		out = append(out, vs...)
		texts = texts[n:]
	}
	return out, nil
}

// lowerBatch sets the batch limit to n unless it is lower already.
func (e *Embedder) lowerBatch(n int) {
	for {
		cur := e.maxBatch.Load()
		if cur != 0 && cur <= int64(n) || e.maxBatch.CompareAndSwap(cur, int64(n)) {
			return
		}
	}
}

// tooLargeMsg matches what servers say when a batch is too big for them.
var tooLargeMsg = regexp.MustCompile(`(?i)too (large|long|many|big)|batch size|maximum.*(batch|inputs?|items)|exceeds?`)

// tooLarge reports whether err is a refusal of a batch as too large.
func tooLarge(err error) bool {
	var pe *strata.ProviderError
	if !errors.As(err, &pe) {
		return false
	}
	switch pe.Status {
	case http.StatusRequestEntityTooLarge:
		return true
	case http.StatusBadRequest, http.StatusUnprocessableEntity, http.StatusInternalServerError:
		return tooLargeMsg.MatchString(pe.Msg)
	}
	return false
}

// request makes one request for texts.
func (e *Embedder) request(ctx context.Context, texts []string) ([][]float32, error) {
	params := sdk.EmbeddingNewParams{
		Model:          e.model,
		Input:          sdk.EmbeddingNewParamsInputUnion{OfArrayOfStrings: texts},
		EncodingFormat: sdk.EmbeddingNewParamsEncodingFormatFloat,
	}
	if e.dims > 0 {
		params.Dimensions = sdk.Int(int64(e.dims))
	}
	callCtx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	var (
		res  *http.Response
		body []byte
	)
	if _, err := e.svc.New(callCtx, params, option.WithResponseInto(&res), option.WithResponseBodyInto(&body)); err != nil {
		return nil, e.errs.callError(ctx, callCtx, res, err)
	}
	vs, msg := decodeEmbeddings(body, len(texts))
	if msg != "" {
		if m := serverMessage(body); m != "" {
			msg += ": " + m
		}
		return nil, e.errs.replyError(res, msg, nil)
	}
	d := len(vs[0])
	if e.dims > 0 && d != e.dims {
		return nil, e.errs.replyError(res, fmt.Sprintf("reply has vectors of %d dimensions, %d were asked for", d, e.dims), nil)
	}
	e.learnt.CompareAndSwap(0, int64(d))
	return vs, nil
}

// decodeEmbeddings reads an embeddings reply for n inputs: its data items
// in index order, each an array of numbers or base64 little-endian
// float32s. It returns what is wrong with the reply, or "".
func decodeEmbeddings(body []byte, n int) ([][]float32, string) {
	var reply struct {
		Data []struct {
			Index     *int            `json:"index"`
			Embedding json.RawMessage `json:"embedding"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &reply); err != nil {
		if len(bytes.TrimSpace(body)) == 0 {
			return nil, "reply body is empty"
		}
		return nil, fmt.Sprintf("reply is not a JSON embeddings list (%v)", err)
	}
	if len(reply.Data) != n {
		return nil, fmt.Sprintf("reply has %d embeddings for %d inputs", len(reply.Data), n)
	}
	out := make([][]float32, n)
	for i, d := range reply.Data {
		at := i
		if d.Index != nil {
			at = *d.Index
		}
		if at < 0 || at >= n || out[at] != nil {
			return nil, fmt.Sprintf("reply has a bad or repeated index %d", at)
		}
		v, err := decodeVector(d.Embedding)
		if err != nil {
			return nil, fmt.Sprintf("embedding %d: %v", at, err)
		}
		if len(v) == 0 {
			return nil, fmt.Sprintf("embedding %d is empty", at)
		}
		out[at] = v
	}
	d := len(out[0])
	for i, v := range out {
		if len(v) != d {
			return nil, fmt.Sprintf("embedding %d has %d dimensions, embedding 0 has %d", i, len(v), d)
		}
	}
	return out, ""
}

// decodeVector reads an array of numbers, or a base64 string of
// little-endian float32s; every value must be finite.
func decodeVector(raw json.RawMessage) ([]float32, error) {
	var v []float32
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil || len(b)%4 != 0 {
			return nil, fmt.Errorf("not base64 float32 values")
		}
		v = make([]float32, len(b)/4)
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
	} else if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("not a list of numbers")
	}
	for i, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return nil, fmt.Errorf("value %d is %v", i, x)
		}
	}
	return v, nil
}

// EmbedFromEnv builds an EmbedConfig from environment variables read
// through getenv, as FromEnv does for the chat model:
//
//	STRATA_EMBED_BASE_URL    the API root; empty means DefaultBaseURL
//	STRATA_EMBED_MODEL       the embedding model
//	STRATA_EMBED_API_KEY     the API key
//	STRATA_EMBED_DIMENSIONS  dimensions to ask for (optional)
//	STRATA_EMBED_TIMEOUT     the per-request timeout ("30s" or seconds)
//
// OPENAI_API_KEY stands in for STRATA_EMBED_API_KEY only when the base
// URL is OpenAI's own. ok is false, with a zero EmbedConfig, when
// STRATA_EMBED_MODEL is empty. Values it cannot read are reported by
// NewEmbedder, as EINVALID.
func EmbedFromEnv(getenv func(string) string) (cfg EmbedConfig, ok bool) {
	get := func(name string) string { return strings.TrimSpace(getenv(name)) }
	cfg = EmbedConfig{
		BaseURL: get("STRATA_EMBED_BASE_URL"),
		Model:   get("STRATA_EMBED_MODEL"),
		APIKey:  get("STRATA_EMBED_API_KEY"),
	}
	if cfg.Model == "" {
		return EmbedConfig{}, false
	}
	if cfg.APIKey == "" && isOpenAI(cfg.BaseURL) {
		cfg.APIKey = get("OPENAI_API_KEY")
	}
	if s := get("STRATA_EMBED_DIMENSIONS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			cfg.envErr = strata.Errorf(strata.EINVALID, "openai: STRATA_EMBED_DIMENSIONS %q is not a positive number", s)
		}
		cfg.Dimensions = n
	}
	if s := get("STRATA_EMBED_TIMEOUT"); s != "" {
		d, err := parseTimeout(s)
		if err != nil {
			cfg.envErr = strata.Errorf(strata.EINVALID, "openai: STRATA_EMBED_TIMEOUT %q is not a positive duration", s)
		}
		cfg.Timeout = d
	}
	return cfg, true
}
