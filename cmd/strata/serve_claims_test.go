package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/strata-memory/strata/internal/hashembed"
)

// TestServeTwoWorkersEmbedOnce: two servers on one database file, each
// with its worker and the same embedder. Turns appended through one are
// embedded by the workers, each turn and summary once between them.
func TestServeTwoWorkersEmbedOnce(t *testing.T) {
	emb := &hashembed.Server{Dim: 32}
	ts := httptest.NewServer(emb)
	defer ts.Close()
	dir := t.TempDir()
	env := map[string]string{"STRATA_DB": filepath.Join(dir, "s.db"), "STRATA_EMBED_MODEL": "all-minilm",
		"STRATA_EMBED_BASE_URL": ts.URL + "/v1"}
	// The store is made before the servers start.
	mustEnv(t, env, "import", writeJSONL(t, dir, "c", 1))
	ctx, cancel := context.WithCancel(context.Background())
	var addrs []string
	var dones []chan error
	for range 2 {
		pr, pw := io.Pipe()
		m := &Main{Stdin: strings.NewReader(""), Stdout: pw, Stderr: io.Discard, Getenv: func(k string) string { return env[k] }}
		done := make(chan error, 1)
		go func() {
			done <- m.Run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--no-auth", "--every", "20ms"})
			pw.Close()
		}()
		lines := bufio.NewScanner(pr)
		if !lines.Scan() {
			t.Fatalf("serve printed nothing: %v", <-done)
		}
		addrs = append(addrs, regexp.MustCompile(`http://127\.0\.0\.1:\d+`).FindString(lines.Text()))
		go io.Copy(io.Discard, pr)
		dones = append(dones, done)
	}
	defer func() {
		cancel()
		for _, d := range dones {
			if err := <-d; err != nil {
				t.Errorf("serve after cancel: %v", err)
			}
		}
	}()
	// 200 turns in batches of 20, half through each server.
	body := func(from int) string {
		var b strings.Builder
		b.WriteString(`{"turns":[`)
		for i := from; i < from+20; i++ {
			if i > from {
				b.WriteByte(',')
			}
			b.WriteString(`{"ext_id":"x` + strconv.Itoa(i) + `","role":"user","content":"turn number ` + strconv.Itoa(i) + ` about the garden and the harbour"}`)
		}
		b.WriteString(`]}`)
		return b.String()
	}
	for i := 0; i < 200; i += 20 {
		resp, err := http.Post(addrs[(i/20)%2]+"/v1/conversations/c/turns", "application/json", strings.NewReader(body(i)))
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("append: %v %v", resp, err)
		}
		resp.Body.Close()
	}
	var st statsJSON
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		st = decode[statsJSON](t, mustEnv(t, env, "stats", "--json"))
		if st.Embeddings != nil && st.Embeddings.Missing == 0 && st.Embeddings.Turns == st.Turns {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the workers left vectors missing: %+v %+v", st, st.Embeddings)
		}
	}
	sent := map[string]int{}
	for _, r := range emb.Requests() {
		for _, in := range r.Inputs {
			if in != "dimension probe" {
				sent[in]++
			}
		}
	}
	total := 0
	for text, n := range sent {
		total += n
		if n != 1 && strings.HasPrefix(text, "turn number") {
			t.Errorf("%q was embedded %d times, want once", text, n)
		}
	}
	if want := int(st.Turns + st.Nodes); total != want {
		t.Errorf("%d texts were embedded for %d turns and summaries, want each once", total, want)
	}
}
