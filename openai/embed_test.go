package openai

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/extractive"
	"github.com/strata-memory/strata/internal/hashembed"
	"github.com/strata-memory/strata/sqlite"
)

// embedServer starts a hashembed.Server of dim dimensions that wants
// testKey.
func embedServer(t *testing.T, dim int) (*hashembed.Server, string) {
	t.Helper()
	s := &hashembed.Server{Dim: dim, Key: testKey}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return s, ts.URL + "/v1"
}

func newEmbedder(t *testing.T, cfg EmbedConfig) *Embedder {
	t.Helper()
	if cfg.APIKey == "" {
		cfg.APIKey = testKey
	}
	if cfg.Model == "" {
		cfg.Model = "nomic-embed-text"
	}
	e, err := NewEmbedder(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// unit is hashembed's vector of text as the server sends it.
func unit(text string, dim int) []float32 { return hashembed.Unit(text, dim) }

func TestEmbedder(t *testing.T) {
	srv, base := embedServer(t, 16)
	e := newEmbedder(t, EmbedConfig{BaseURL: base})
	if e.Dimensions() != 0 || e.Model() != "nomic-embed-text" || !strings.HasPrefix(e.Name(), "openai http://127.0.0.1:") {
		t.Fatalf("before a call: dimensions %d, model %q, name %q", e.Dimensions(), e.Model(), e.Name())
	}
	texts := []string{"the sedan died", "a puppy and a hound", "budget for the trip"}
	vs, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range texts {
		if !slices.Equal(vs[i], unit(text, 16)) {
			t.Fatalf("vector %d = %v, want %v (the server sends items in reverse: the index decides)", i, vs[i], unit(text, 16))
		}
	}
	if e.Dimensions() != 16 {
		t.Fatalf("dimensions after a call = %d, want 16", e.Dimensions())
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Auth != "Bearer "+testKey || r.Model != "nomic-embed-text" || r.Format != "float" || r.Dimensions != 0 || !slices.Equal(r.Inputs, texts) {
		t.Fatalf("request = %+v, want the key, the model, float encoding, no dimensions and the texts", r)
	}

	// Configured dimensions are asked for.
	e = newEmbedder(t, EmbedConfig{BaseURL: base, Dimensions: 8})
	if e.Dimensions() != 8 {
		t.Fatalf("configured dimensions = %d, want 8", e.Dimensions())
	}
	vs, err = e.Embed(context.Background(), texts[:1])
	if err != nil || len(vs[0]) != 8 {
		t.Fatalf("Embed with dimensions 8 = %d values, %v", len(vs[0]), err)
	}
	if r := srv.Requests()[1]; r.Dimensions != 8 {
		t.Fatalf("request dimensions = %d, want 8", r.Dimensions)
	}
}

func TestEmbedderSplitsRefusedBatches(t *testing.T) {
	srv, base := embedServer(t, 4)
	srv.MaxBatch = 5
	e := newEmbedder(t, EmbedConfig{BaseURL: base})
	texts := make([]string, 23)
	for i := range texts {
		texts[i] = fmt.Sprintf("text number %d", i)
	}
	vs, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range texts {
		if !slices.Equal(vs[i], unit(text, 4)) {
			t.Fatalf("vector %d is not that of %q", i, text)
		}
	}
	sizes := func(reqs []hashembed.Request) []int {
		var out []int
		for _, r := range reqs {
			out = append(out, len(r.Inputs))
		}
		return out
	}
	// 23 refused, 11 refused, then batches of 5.
	if got, want := sizes(srv.Requests()), []int{23, 11, 5, 5, 5, 5, 3}; !slices.Equal(got, want) {
		t.Fatalf("request sizes = %v, want %v", got, want)
	}
	n := len(srv.Requests())
	if _, err := e.Embed(context.Background(), texts[:12]); err != nil {
		t.Fatal(err)
	}
	if got := sizes(srv.Requests()[n:]); !slices.Equal(got, []int{5, 5, 2}) {
		t.Fatalf("after learning the limit, request sizes = %v, want [5 5 2]", got)
	}

	// A refusal that is not about size is not split.
	srv.Reply = func(int, []string) (int, string, bool) {
		return http.StatusBadRequest, `{"error":{"message":"model \"nope\" not found, try pulling it first"}}`, true
	}
	n = len(srv.Requests())
	_, err = e.Embed(context.Background(), texts[:4])
	var pe *strata.ProviderError
	if !errors.As(err, &pe) || pe.Retryable || pe.Status != 400 || len(srv.Requests()) != n+1 {
		t.Fatalf("a 400 about the model: %v after %d requests; want one request and a refusal", err, len(srv.Requests())-n)
	}
}

func TestEmbedderErrors(t *testing.T) {
	tests := []struct {
		name      string
		status    int
		body      string
		headers   []string
		retryable bool
		after     time.Duration
		want      string
	}{
		{"rate limited", 429, `{"error":{"message":"Rate limit reached"}}`, []string{"Retry-After", "7"}, true, 7 * time.Second, "Rate limit reached"},
		{"server error", 503, `{"error":"loading model"}`, nil, true, 0, "loading model"},
		{"timeout status", 408, `timeout`, nil, true, 0, "timeout"},
		{"refused", 403, `{"detail":"forbidden"}`, nil, false, 0, "forbidden"},
		{"too few", 200, `{"data":[{"index":0,"embedding":[1,2]}]}`, nil, false, 0, "1 embeddings for 2 inputs"},
		{"repeated index", 200, `{"data":[{"index":0,"embedding":[1,2]},{"index":0,"embedding":[1,2]}]}`, nil, false, 0, "repeated index 0"},
		{"ragged", 200, `{"data":[{"index":0,"embedding":[1,2]},{"index":1,"embedding":[1,2,3]}]}`, nil, false, 0, "3 dimensions"},
		{"not numbers", 200, `{"data":[{"index":0,"embedding":[1,"x"]},{"index":1,"embedding":[1,2]}]}`, nil, false, 0, "not a list of numbers"},
		{"empty vector", 200, `{"data":[{"index":0,"embedding":[]},{"index":1,"embedding":[1,2]}]}`, nil, false, 0, "is empty"},
		{"not json", 200, `<html>`, nil, false, 0, "not a JSON embeddings list"},
		{"empty body", 200, ``, nil, false, 0, "empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, replyJSON(tt.status, tt.body, tt.headers...))
			e := newEmbedder(t, EmbedConfig{BaseURL: f.URL})
			_, err := e.Embed(context.Background(), []string{"one", "two"})
			var pe *strata.ProviderError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v (%T), want *strata.ProviderError", err, err)
			}
			if pe.Retryable != tt.retryable || pe.RetryAfter != tt.after || !strings.Contains(pe.Error(), tt.want) {
				t.Fatalf("error %q retryable %v after %v; want %q, retryable %v, after %v", pe, pe.Retryable, pe.RetryAfter, tt.want, tt.retryable, tt.after)
			}
			if len(f.requests()) != 1 {
				t.Fatalf("%d requests, want 1: the embedder does not retry", len(f.requests()))
			}
		})
	}
	// Base64 vectors are read as well as numbers.
	f := newFake(t, replyJSON(200, `{"data":[{"index":0,"embedding":"AACAPwAAAEA="}]}`))
	vs, err := newEmbedder(t, EmbedConfig{BaseURL: f.URL}).Embed(context.Background(), []string{"x"})
	if err != nil || !slices.Equal(vs[0], []float32{1, 2}) {
		t.Fatalf("base64 reply = %v, %v; want [1 2]", vs, err)
	}
	// A server gone is a retryable network error; a caller who gives up
	// is not retryable.
	f = newFake(t, replyJSON(200, `{}`))
	e := newEmbedder(t, EmbedConfig{BaseURL: f.URL})
	f.Close()
	_, err = e.Embed(context.Background(), []string{"x"})
	var pe *strata.ProviderError
	if !errors.As(err, &pe) || !pe.Retryable {
		t.Fatalf("server gone: %v, want a retryable error", err)
	}
	slow := newFake(t, waitForCancel)
	e = newEmbedder(t, EmbedConfig{BaseURL: slow.URL, Timeout: 50 * time.Millisecond})
	if _, err := e.Embed(context.Background(), []string{"x"}); !errors.As(err, &pe) || !pe.Retryable || !strings.Contains(err.Error(), "no reply within") {
		t.Fatalf("slow server: %v, want a retryable timeout", err)
	}
}

func TestEmbedderScrubsKey(t *testing.T) {
	// The server echoes the key it was given in its refusal, as OpenAI does.
	srv, base := embedServer(t, 4)
	const wrong = "sk-wrong-9876543210fedcba"
	e := newEmbedder(t, EmbedConfig{BaseURL: base, APIKey: wrong})
	_, err := e.Embed(context.Background(), []string{"x"})
	if err == nil || strings.Contains(err.Error(), wrong) || !strings.Contains(err.Error(), "[redacted]") {
		t.Fatalf("error %v: want the key redacted", err)
	}
	if r := srv.Requests()[0]; r.Auth != "Bearer "+wrong {
		t.Fatalf("Authorization %q, want the configured key", r.Auth)
	}
	// No key: no header.
	srv.Key = ""
	e, err = NewEmbedder(EmbedConfig{BaseURL: base, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Embed(context.Background(), []string{"x"}); err != nil {
		t.Fatal(err)
	}
	if r := srv.Requests()[1]; r.Auth != "" {
		t.Fatalf("Authorization %q without a key, want none", r.Auth)
	}
}

// The engine over the embedder: rate limits and server errors are retried
// with backoff, vectors are stored under the model and the dimension the
// server returned, and hybrid search uses them.
func TestMemoryEmbedsThroughServer(t *testing.T) {
	srv, base := embedServer(t, 24)
	srv.Reply = func(n int, _ []string) (int, string, bool) {
		switch n {
		case 1:
			return 429, `{"error":{"message":"Rate limit reached for key ` + testKey + `"}}`, true
		case 2:
			return 502, `bad gateway`, true
		}
		return 0, "", false
	}
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	emb := newEmbedder(t, EmbedConfig{BaseURL: base, Model: "all-minilm"})
	m, err := strata.New(strata.Config{Store: st, Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New(),
		Embedder: emb, Embedding: strata.EmbeddingOptions{BatchSize: 8, Backoff: time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	var turns []strata.Turn
	for i, text := range []string{"We baked bread.", "The sedan died and the mechanic had to mend it.", "The fence repair took all weekend.",
		"Coffee arrives on Monday.", "The printer jams.", "Tomatoes along the wall.", "Swimming in the evening.", "A new exhibit on maps.",
		"The kids painted the shed.", "The concert sold out."} {
		turns = append(turns, strata.Turn{ExtID: fmt.Sprint(i), Role: strata.RoleUser, Content: text})
	}
	if _, err := m.Ingest(context.Background(), strata.Batch{Conversation: "c", Turns: turns}); err != nil {
		t.Fatal(err)
	}
	res, err := m.Embed(context.Background(), strata.EmbedRequest{Conversation: "c"})
	if err != nil {
		t.Fatal(err)
	}
	// A probe learns the dimension (the model's own), through a 429 and a
	// 502; then 10 turns and one summary in two batches of 8 and 3.
	if res.Dim != 24 || res.Model != "all-minilm" || res.Turns != 10 || res.Nodes != 1 || res.Retries != 2 {
		t.Fatalf("Embed = %+v, want 10 turns and 1 node of all-minilm in 24 dimensions after 2 retries", res)
	}
	for i, r := range srv.Requests() {
		if r.Auth != "Bearer "+testKey || r.Model != "all-minilm" {
			t.Fatalf("request %d: %+v", i, r)
		}
	}
	vcs, err := st.VectorCounts(context.Background(), strata.DefaultNamespace, "c")
	if err != nil {
		t.Fatal(err)
	}
	want := []strata.SpaceCount{{Space: strata.EmbedSpace{Model: "all-minilm", Dim: 24}, Turns: 10, Nodes: 1}}
	if len(vcs) != 1 || !slices.Equal(vcs[0].Spaces, want) {
		t.Fatalf("stored spaces = %+v, want %+v", vcs, want)
	}
	hits, err := m.Search(context.Background(), "c", "automobile repair", 3)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(hits, func(h strata.Hit) bool { return h.Turn != nil && h.Turn.Seq == 2 }) {
		t.Fatalf("hybrid search through the server did not find the car repair: %+v", hits)
	}

	// A refusal stops the pass with the error, key scrubbed.
	srv.Reply = func(int, []string) (int, string, bool) {
		return 401, `{"error":{"message":"Incorrect API key provided: ` + testKey + `"}}`, true
	}
	if _, err := m.Ingest(context.Background(), strata.Batch{Conversation: "c", Turns: []strata.Turn{{ExtID: "x", Role: strata.RoleUser, Content: "more"}}}); err != nil {
		t.Fatal(err)
	}
	_, err = m.Embed(context.Background(), strata.EmbedRequest{Conversation: "c"})
	if err == nil || strings.Contains(err.Error(), testKey) || !strings.Contains(err.Error(), "HTTP 401") {
		t.Fatalf("Embed against a 401: %v, want the refusal without the key", err)
	}
}

func TestEmbedFromEnv(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	if _, ok := EmbedFromEnv(env("OPENAI_API_KEY", "k")); ok {
		t.Fatal("no STRATA_EMBED_MODEL: ok")
	}
	cfg, ok := EmbedFromEnv(env("STRATA_EMBED_MODEL", "text-embedding-3-small", "OPENAI_API_KEY", "sk-openai",
		"STRATA_EMBED_DIMENSIONS", "256", "STRATA_EMBED_TIMEOUT", "15"))
	if !ok || cfg.APIKey != "sk-openai" || cfg.Dimensions != 256 || cfg.Timeout != 15*time.Second || cfg.BaseURL != "" {
		t.Fatalf("OpenAI config = %+v", cfg)
	}
	// OPENAI_API_KEY is not handed to another server.
	cfg, _ = EmbedFromEnv(env("STRATA_EMBED_MODEL", "nomic-embed-text", "STRATA_EMBED_BASE_URL", "http://127.0.0.1:11434/v1",
		"OPENAI_API_KEY", "sk-openai"))
	if cfg.APIKey != "" {
		t.Fatalf("key for a local server = %q, want none", cfg.APIKey)
	}
	cfg, _ = EmbedFromEnv(env("STRATA_EMBED_MODEL", "m", "STRATA_EMBED_BASE_URL", "http://h/v1", "STRATA_EMBED_API_KEY", "own"))
	if cfg.APIKey != "own" {
		t.Fatalf("STRATA_EMBED_API_KEY = %q", cfg.APIKey)
	}
	for _, bad := range [][]string{{"STRATA_EMBED_DIMENSIONS", "-3"}, {"STRATA_EMBED_DIMENSIONS", "many"}, {"STRATA_EMBED_TIMEOUT", "soon"}} {
		cfg, _ := EmbedFromEnv(env("STRATA_EMBED_MODEL", "m", bad[0], bad[1]))
		if _, err := NewEmbedder(cfg); strata.ErrorCode(err) != strata.EINVALID || !strings.Contains(err.Error(), bad[0]) {
			t.Fatalf("%s=%s: %v, want EINVALID naming it", bad[0], bad[1], err)
		}
	}
}

func TestNewEmbedderInvalid(t *testing.T) {
	for name, cfg := range map[string]EmbedConfig{
		"Model":      {},
		"BaseURL":    {Model: "m", BaseURL: "ftp://x"},
		"Dimensions": {Model: "m", Dimensions: -1},
		"Timeout":    {Model: "m", Timeout: -time.Second},
		"APIKey":     {Model: "m", APIKey: "a\nb"},
	} {
		_, err := NewEmbedder(cfg)
		if strata.ErrorCode(err) != strata.EINVALID || !strings.Contains(err.Error(), "EmbedConfig."+name) {
			t.Errorf("%s: %v, want EINVALID naming EmbedConfig.%s", name, err, name)
		}
	}
}
