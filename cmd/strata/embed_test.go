package main

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-memory/strata/internal/hashembed"
)

// runEnv runs the CLI in-process with the environment env (STRATA_DB
// included) and returns stdout and the error.
func runEnv(t *testing.T, env map[string]string, args ...string) (string, string, error) {
	t.Helper()
	var out, errb strings.Builder
	m := &Main{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return env[k] }}
	err := m.Run(context.Background(), args)
	return out.String(), errb.String(), err
}

func mustEnv(t *testing.T, env map[string]string, args ...string) string {
	t.Helper()
	out, errs, err := runEnv(t, env, args...)
	if err != nil {
		t.Fatalf("strata %s: %v\n%s", strings.Join(args, " "), err, errs)
	}
	return out
}

type statsJSON struct {
	Turns      int64  `json:"turns"`
	Nodes      int64  `json:"nodes"`
	Search     string `json:"search"`
	Embeddings *struct {
		Model   string  `json:"model"`
		Dim     int     `json:"dimensions"`
		Turns   int64   `json:"turns"`
		Nodes   int64   `json:"nodes"`
		Missing int64   `json:"missing"`
		Stale   int64   `json:"stale"`
		Weight  float64 `json:"weight"`
	} `json:"embeddings"`
}

type embedJSON struct {
	Model   string `json:"model"`
	Dim     int    `json:"dimensions"`
	Turns   int    `json:"turns"`
	Nodes   int    `json:"nodes"`
	Calls   int    `json:"calls"`
	Removed int64  `json:"removed"`
}

func decode[T any](t *testing.T, out string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	return v
}

// TestEmbedCommands: import embeds nothing; stats shows the vectors
// missing; embed computes them once; search is hybrid; a model change
// shows in stats as stale vectors, which reembed replaces; without an
// embedder, embed says how to configure one and stats says search is
// lexical.
func TestEmbedCommands(t *testing.T) {
	srv := &hashembed.Server{Dim: 32}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	dir := t.TempDir()
	env := map[string]string{"STRATA_DB": filepath.Join(dir, "s.db"), "STRATA_EMBED_MODEL": "all-minilm",
		"STRATA_EMBED_BASE_URL": ts.URL + "/v1"}

	mustEnv(t, env, "import", writeJSONL(t, dir, "c", 120))
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("import made %d embedding requests, want none: embedding is off the ingest path", n)
	}
	st := decode[statsJSON](t, mustEnv(t, env, "stats", "--json"))
	if st.Search != "hybrid" || st.Embeddings == nil || st.Embeddings.Missing != st.Turns+st.Nodes || st.Embeddings.Model != "all-minilm" {
		t.Fatalf("stats before embed: %+v %+v; want hybrid with every turn and summary missing", st, st.Embeddings)
	}
	res := decode[embedJSON](t, mustEnv(t, env, "embed", "--json"))
	if res.Turns != 120 || int64(res.Nodes) != st.Nodes || res.Dim != 32 || res.Model != "all-minilm" {
		t.Fatalf("embed = %+v, want 120 turns and %d summaries in 32 dimensions", res, st.Nodes)
	}
	if out := mustEnv(t, env, "embed", "--conversation", "c"); !strings.HasPrefix(out, "embedded 0 turns and 0 summaries") {
		t.Fatalf("second embed said %q, want nothing embedded", out)
	}
	out := mustEnv(t, env, "stats")
	if !strings.Contains(out, "search       hybrid (all-minilm, 32 dimensions): vectors of 120 turns") || !strings.Contains(out, "0 missing") {
		t.Fatalf("stats text:\n%s", out)
	}
	hits := decode[struct {
		Hits []struct {
			Score float64 `json:"score"`
		} `json:"hits"`
	}](t, mustEnv(t, env, "search", "--json", "-k", "3", "--conversation", "c", "project deadline"))
	if len(hits.Hits) != 3 || hits.Hits[0].Score > 2.2 {
		t.Fatalf("hybrid search hits %+v, want 3 with fused scores", hits.Hits)
	}

	// Another model: the vectors are stale until reembed.
	env["STRATA_EMBED_MODEL"] = "bge-small"
	st = decode[statsJSON](t, mustEnv(t, env, "stats", "--json"))
	all := st.Turns + st.Nodes
	if st.Embeddings.Stale != all || st.Embeddings.Turns != 0 {
		t.Fatalf("stats after a model change: %+v, want %d stale", st.Embeddings, all)
	}
	res = decode[embedJSON](t, mustEnv(t, env, "reembed", "--json"))
	if res.Removed != all || int64(res.Turns+res.Nodes) != all || res.Model != "bge-small" {
		t.Fatalf("reembed = %+v, want %d removed and embedded again with bge-small", res, all)
	}
	if st = decode[statsJSON](t, mustEnv(t, env, "stats", "--json")); st.Embeddings.Stale != 0 || st.Embeddings.Missing != 0 {
		t.Fatalf("stats after reembed: %+v", st.Embeddings)
	}

	// No embedder.
	plain := map[string]string{"STRATA_DB": env["STRATA_DB"]}
	if _, _, err := runEnv(t, plain, "embed"); err == nil || !strings.Contains(err.Error(), "STRATA_EMBED_MODEL") {
		t.Fatalf("embed without an embedder: %v, want how to configure one", err)
	}
	if out := mustEnv(t, plain, "stats"); !strings.Contains(out, "search       lexical") || !strings.Contains(out, "stale vectors") {
		t.Fatalf("stats without an embedder:\n%s", out)
	}
}

// TestEmbedSettings: flags > STRATA_EMBED_* > strata.yaml; the embed
// section's batch size and dimensions reach the server; bad values are
// errors that name them.
func TestEmbedSettings(t *testing.T) {
	srv := &hashembed.Server{Dim: 32, Key: "sk-local"}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "strata.yaml")
	yaml := "embed:\n  model: from-file\n  base_url: " + ts.URL + "/v1\n  api_key_env: MY_EMBED_KEY\n  dimensions: 12\n  batch_size: 7\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"STRATA_DB": filepath.Join(dir, "s.db"), "STRATA_CONFIG": cfg, "MY_EMBED_KEY": "sk-local"}
	mustEnv(t, env, "import", writeJSONL(t, dir, "c", 30))
	res := decode[embedJSON](t, mustEnv(t, env, "embed", "--json"))
	if res.Model != "from-file" || res.Dim != 12 || res.Turns != 30 {
		t.Fatalf("embed with the file's settings = %+v", res)
	}
	for _, r := range srv.Requests() {
		if len(r.Inputs) > 7 || r.Dimensions != 12 || r.Auth != "Bearer sk-local" || r.Model != "from-file" {
			t.Fatalf("request %+v: want at most 7 inputs, dimensions 12, the key from MY_EMBED_KEY", r)
		}
	}
	env["STRATA_EMBED_MODEL"] = "from-env"
	res = decode[embedJSON](t, mustEnv(t, env, "embed", "--json"))
	if res.Model != "from-env" {
		t.Fatalf("embed with STRATA_EMBED_MODEL = %+v", res)
	}
	res = decode[embedJSON](t, mustEnv(t, env, "embed", "--json", "--embed-model", "from-flag"))
	if res.Model != "from-flag" {
		t.Fatalf("embed with --embed-model = %+v", res)
	}
	// The vector weight: the file's, then STRATA_EMBED_WEIGHT's; stats
	// shows one that is not 1.
	if err := os.WriteFile(cfg, []byte(yaml+"  weight: 0.5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := mustEnv(t, env, "stats"); !strings.Contains(out, "(from-env, 12 dimensions, vector weight 0.5)") {
		t.Fatalf("stats with weight 0.5 in the file:\n%s", out)
	}
	env["STRATA_EMBED_WEIGHT"] = "2"
	if st := decode[statsJSON](t, mustEnv(t, env, "stats", "--json")); st.Embeddings == nil || st.Embeddings.Weight != 2 {
		t.Fatalf("stats --json with STRATA_EMBED_WEIGHT=2: embeddings %+v", st.Embeddings)
	}
	delete(env, "STRATA_EMBED_WEIGHT")
	if out := mustEnv(t, env, "stats"); !strings.Contains(out, "vector weight 0.5") {
		t.Fatalf("stats with weight 0.5 in the file again:\n%s", out)
	}
	if err := os.WriteFile(cfg, []byte(yaml+"  weight: -1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runEnv(t, env, "stats"); err == nil || !strings.Contains(err.Error(), "strata.yaml: embed weight -1") {
		t.Errorf("weight -1 in the file: %v, want an error naming the file and the weight", err)
	}
	env["STRATA_EMBED_WEIGHT"] = "9"
	if _, _, err := runEnv(t, env, "stats"); err == nil || !strings.Contains(err.Error(), "STRATA_EMBED_WEIGHT 9") {
		t.Errorf("STRATA_EMBED_WEIGHT=9 over a file's bad weight: %v, want an error naming the variable", err)
	}
	delete(env, "STRATA_EMBED_WEIGHT")
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"STRATA_EMBED_DIMENSIONS": "many", "STRATA_EMBED_TIMEOUT": "soon", "STRATA_EMBED_BASE_URL": "ftp://x",
		"STRATA_EMBED_WEIGHT": "heavy"} {
		bad := map[string]string{"STRATA_DB": env["STRATA_DB"], "STRATA_EMBED_MODEL": "m", k: v}
		name := strings.ToLower(strings.TrimPrefix(k, "STRATA_EMBED_")[:4])
		if _, _, err := runEnv(t, bad, "stats"); err == nil || !strings.Contains(strings.ToLower(err.Error()), name) {
			t.Errorf("%s=%s: %v, want an error naming it", k, v, err)
		}
	}
}
