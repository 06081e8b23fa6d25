// Package hashembed is a deterministic stand-in for a sentence-embedding
// model, for tests: a text's vector is the sum of its words' hashed
// directions, so texts that share words are near. A small table of
// concepts (Concepts) maps synonyms to one word first: it is the only
// "meaning" the embedder knows, so a paraphrase it finds is one whose
// words fall in the same concept, which tests can state exactly. Server
// serves the vectors over an OpenAI-compatible /embeddings endpoint.
package hashembed

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"

	"github.com/strata-memory/strata"
)

// Concepts maps words to the concept they stand for. Words not in it
// stand for themselves.
var Concepts = map[string]string{}

func init() {
	for _, group := range [][]string{
		{"car", "automobile", "vehicle", "sedan"},
		{"repair", "fix", "mend", "mechanic", "garage"},
		{"broke", "broken", "breakdown", "failed", "died"},
		{"dog", "puppy", "hound", "canine"},
		{"doctor", "physician", "clinic", "appointment"},
		{"holiday", "vacation", "trip", "getaway"},
		{"money", "cash", "budget", "funds", "savings"},
		{"house", "home", "apartment", "flat"},
	} {
		for _, w := range group {
			Concepts[w] = group[0]
		}
	}
}

var stop = map[string]bool{"the": true, "a": true, "an": true, "and": true, "or": true, "of": true, "to": true,
	"in": true, "on": true, "my": true, "our": true, "is": true, "was": true, "it": true, "i": true, "we": true,
	"for": true, "at": true, "with": true, "did": true, "do": true, "who": true, "what": true, "when": true}

// Vector returns the vector of text in dim dimensions (not normalized;
// all zero for a text with no word).
func Vector(text string, dim int) []float32 {
	v := make([]float32, dim)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if stop[w] {
			continue
		}
		if c, ok := Concepts[w]; ok {
			w = c
		}
		h := fnv.New64a()
		h.Write([]byte(w))
		x := h.Sum64()
		// Each word is a few signed components: near texts share them.
		for k := range 4 {
			i := int((x >> (16 * k)) % uint64(dim))
			if (x>>(60-k))&1 == 1 {
				v[i]--
			} else {
				v[i]++
			}
		}
	}
	return v
}

// Unit is Vector scaled to unit length (all zero for a text with no
// word), as Server sends it.
func Unit(text string, dim int) []float32 {
	v := Vector(text, dim)
	var norm float64
	for _, x := range v {
		norm += float64(x) * float64(x)
	}
	if norm > 0 {
		k := float32(1 / math.Sqrt(norm))
		for j := range v {
			v[j] *= k
		}
	}
	return v
}

// Embedder is a strata.Embedder over Vector. It counts its calls.
type Embedder struct {
	Dim       int
	ModelName string
	Label     string // its Name; "" means "hashembed"
	// HideDim makes Dimensions report 0, like an embedder that learns its
	// dimension from its first call.
	HideDim bool
	// Fail, if set, is returned by the next calls while it returns
	// non-nil.
	Fail func(call int) error

	calls, texts atomic.Int64
	mu           sync.Mutex
	batches      []int
}

var _ strata.Embedder = (*Embedder)(nil)

// New returns an Embedder of dim dimensions named after model.
func New(model string, dim int) *Embedder { return &Embedder{Dim: dim, ModelName: model} }

// Name returns Label, or "hashembed".
func (e *Embedder) Name() string {
	if e.Label == "" {
		return "hashembed"
	}
	return e.Label
}

// Model returns ModelName.
func (e *Embedder) Model() string { return e.ModelName }

// Dimensions returns Dim, or 0 if HideDim.
func (e *Embedder) Dimensions() int {
	if e.HideDim {
		return 0
	}
	return e.Dim
}

// Embed returns Vector of each text.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	n := e.calls.Add(1)
	if e.Fail != nil {
		if err := e.Fail(int(n)); err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	e.texts.Add(int64(len(texts)))
	e.mu.Lock()
	e.batches = append(e.batches, len(texts))
	e.mu.Unlock()
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if t == "" {
			return nil, fmt.Errorf("hashembed: text %d is empty", i)
		}
		out[i] = Vector(t, e.Dim)
	}
	return out, nil
}

// Calls is how many times Embed was called.
func (e *Embedder) Calls() int { return int(e.calls.Load()) }

// Batches returns the number of texts of each successful call.
func (e *Embedder) Batches() []int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]int(nil), e.batches...)
}

// Texts is how many texts were embedded.
func (e *Embedder) Texts() int { return int(e.texts.Load()) }

// Server is an OpenAI-compatible embeddings endpoint (POST
// /embeddings, under any prefix such as /v1) serving Vector, for tests of
// clients. Its fields may be set before the first request.
type Server struct {
	Dim int // when the request names no dimensions
	// Key, if set, is the bearer token every request must carry.
	Key string
	// MaxBatch, if set, refuses larger batches with 413, as servers do.
	MaxBatch int
	// Reply, if set, may answer a request instead (status and body);
	// ok false lets the server answer. n counts requests from 1.
	Reply func(n int, inputs []string) (status int, body string, ok bool)

	mu       sync.Mutex
	requests []Request
}

// Request is what the server received.
type Request struct {
	Auth       string
	Model      string
	Inputs     []string
	Dimensions int
	Format     string
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/embeddings") {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	var req struct {
		Model          string          `json:"model"`
		Input          json.RawMessage `json:"input"`
		Dimensions     int             `json:"dimensions"`
		EncodingFormat string          `json:"encoding_format"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	var inputs []string
	if err := json.Unmarshal(req.Input, &inputs); err != nil {
		var one string
		if json.Unmarshal(req.Input, &one) != nil {
			http.Error(w, `{"error":{"message":"input must be a string or a list of strings"}}`, http.StatusBadRequest)
			return
		}
		inputs = []string{one}
	}
	s.mu.Lock()
	s.requests = append(s.requests, Request{Auth: r.Header.Get("Authorization"), Model: req.Model, Inputs: inputs,
		Dimensions: req.Dimensions, Format: req.EncodingFormat})
	n := len(s.requests)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if s.Key != "" && r.Header.Get("Authorization") != "Bearer "+s.Key {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"error":{"message":"Incorrect API key provided: %s","type":"invalid_request_error"}}`,
			strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
		return
	}
	if s.Reply != nil {
		if status, body, ok := s.Reply(n, inputs); ok {
			w.WriteHeader(status)
			fmt.Fprint(w, body)
			return
		}
	}
	if s.MaxBatch > 0 && len(inputs) > s.MaxBatch {
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		fmt.Fprintf(w, `{"error":{"message":"batch size %d > maximum allowed batch size %d"}}`, len(inputs), s.MaxBatch)
		return
	}
	dim := s.Dim
	if req.Dimensions > 0 {
		dim = req.Dimensions
	}
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	out := struct {
		Object string `json:"object"`
		Data   []item `json:"data"`
		Model  string `json:"model"`
		Usage  struct {
			PromptTokens int `json:"prompt_tokens"`
			TotalTokens  int `json:"total_tokens"`
		} `json:"usage"`
	}{Object: "list", Model: req.Model}
	// Items in reverse order, as a server may send them: clients must
	// read the index.
	for i := len(inputs) - 1; i >= 0; i-- {
		out.Data = append(out.Data, item{Object: "embedding", Index: i, Embedding: Unit(inputs[i], dim)})
		out.Usage.PromptTokens += len(strings.Fields(inputs[i]))
	}
	out.Usage.TotalTokens = out.Usage.PromptTokens
	json.NewEncoder(w).Encode(out)
}
