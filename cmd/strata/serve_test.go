package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/client"
)

func TestServeRefusesNonLoopback(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s.db")
	for _, addr := range []string{"0.0.0.0:7700", ":7700", "[::]:7700", "192.168.1.5:7700", "example.com:7700"} {
		_, _, err := run(t, db, "", "serve", "--no-auth", "--addr", addr)
		var u usageError
		if err == nil || !errors.As(err, &u) || !strings.Contains(err.Error(), "--no-auth serves loopback only") {
			t.Errorf("serve --addr %s: %v", addr, err)
		}
	}
}

// TestServeAnswersAndStops starts the server on a free loopback port,
// appends a turn through it, and stops it as SIGINT would.
func TestServeAnswersAndStops(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s.db")
	addr, _, stop := serveForTest(t, map[string]string{"STRATA_DB": db}, "--addr", "127.0.0.1:0", "--no-auth")
	resp, err := http.Get(addr + "/readyz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("readyz: %v %v", resp, err)
	}
	resp.Body.Close()
	if _, err := client.New(addr, "", nil).Append(context.Background(), "c",
		[]client.Turn{{ExtID: "a", Role: strata.RoleUser, Content: "hello over HTTP"}}); err != nil {
		t.Fatalf("append: %v", err)
	}
	stop()
	if out := mustRun(t, db, "list"); !strings.Contains(out, "c ") || !strings.Contains(out, "1 turns") {
		t.Fatalf("the turn appended over HTTP is not in the store: %q", out)
	}
}

// TestServeWithTokens: once the store holds a token, serve asks every /v1
// request for one and serves it in the token's namespace; a request
// without one is refused.
func TestServeWithTokens(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s.db")
	secret := strings.TrimSpace(mustRun(t, db, "token", "create", "--namespace", "team-a"))
	addr, first, stop := serveForTest(t, map[string]string{"STRATA_DB": db}, "--addr", "127.0.0.1:0")
	if !strings.Contains(first, "1 tokens") {
		t.Fatalf("serve's first line: %q", first)
	}
	turn := []client.Turn{{ExtID: "a", Role: strata.RoleUser, Content: "hello with a token"}}
	var se *client.Error
	if _, err := client.New(addr, "", nil).Append(context.Background(), "c", turn); !errors.As(err, &se) || se.Status != 401 {
		t.Errorf("without a token: %v, want 401", err)
	}
	if _, err := client.New(addr, secret, nil).Append(context.Background(), "c", turn); err != nil {
		t.Fatalf("with the token: %v", err)
	}
	stop()
	if out := mustRun(t, db, "list", "--namespace", "team-a"); !strings.Contains(out, "c ") {
		t.Errorf("the turn is not in the token's namespace: %q", out)
	}
	if out := mustRun(t, db, "list"); strings.Contains(out, "c ") {
		t.Errorf("the turn landed in the default namespace: %q", out)
	}
}

// TestServeWorkerClosesPeriods: the server's worker closes a day once the
// clock passes midnight, with no request to trigger it; --no-worker leaves
// it open.
func TestServeWorkerClosesPeriods(t *testing.T) {
	for _, worker := range []bool{true, false} {
		db := filepath.Join(t.TempDir(), "s.db")
		var mu sync.Mutex
		now := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
		clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
		pr, pw := io.Pipe()
		m := &Main{Stdin: strings.NewReader(""), Stdout: pw, Stderr: io.Discard, Now: clock,
			Getenv: func(k string) string {
				if k == "STRATA_DB" {
					return db
				}
				return ""
			}}
		ctx, cancel := context.WithCancel(context.Background())
		args := []string{"serve", "--addr", "127.0.0.1:0", "--no-auth", "--every", "20ms"}
		if !worker {
			args = append(args, "--no-worker")
		}
		done := make(chan error, 1)
		go func() { done <- m.Run(ctx, args); pw.Close() }()
		lines := bufio.NewScanner(pr)
		if !lines.Scan() {
			t.Fatalf("serve printed nothing: %v", <-done)
		}
		addr := regexp.MustCompile(`http://127\.0\.0\.1:\d+`).FindString(lines.Text())
		go io.Copy(io.Discard, pr)
		resp, err := http.Post(addr+"/v1/conversations/c/turns", "application/json", strings.NewReader(
			`{"policy":"calendar","turns":[{"ext_id":"a","role":"user","content":"evening note","time":"2026-03-01T19:00:00Z"}]}`))
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("append: %v %v", resp, err)
		}
		resp.Body.Close()
		days := func() int {
			resp, err := http.Get(addr + "/v1/conversations/c/tree")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var tree struct {
				Levels []struct{ Level, Nodes int }
			}
			json.NewDecoder(resp.Body).Decode(&tree)
			for _, l := range tree.Levels {
				if l.Level == 1 {
					return l.Nodes
				}
			}
			return 0
		}
		if n := days(); n != 0 {
			t.Fatalf("a day node before midnight: %d", n)
		}
		mu.Lock()
		now = time.Date(2026, 3, 2, 0, 0, 1, 0, time.UTC)
		mu.Unlock()
		got := 0
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if got = days(); got > 0 || !worker {
				break
			}
		}
		if !worker {
			time.Sleep(100 * time.Millisecond)
			got = days()
		}
		want := 0
		if worker {
			want = 1
		}
		if got != want {
			t.Errorf("worker %v: %d day nodes after midnight, want %d", worker, got, want)
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("serve after cancel: %v", err)
		}
	}
}

// TestServeWorkerCompressesSummaries: on a store with enough summaries to
// train on, the worker trains the text dictionary and compresses the node
// texts with no command run, and every node still reads the same.
func TestServeWorkerCompressesSummaries(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	if _, _, err := run(t, db, "", "import", writeJSONL(t, dir, "c", 1500)); err != nil {
		t.Fatal(err)
	}
	tree := func() string {
		out, _, err := run(t, db, "", "tree", "--conversation", "c", "--json")
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	before := tree()
	frames := func() (dicts, blobs int) {
		raw, err := sql.Open("sqlite", db)
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		if err := raw.QueryRow(`SELECT (SELECT count(*) FROM text_dicts), (SELECT count(*) FROM nodes WHERE typeof(summary) = 'blob')`).
			Scan(&dicts, &blobs); err != nil {
			t.Fatal(err)
		}
		return dicts, blobs
	}
	if d, b := frames(); d != 0 || b != 0 {
		t.Fatalf("before serve: %d dictionaries, %d compressed summaries", d, b)
	}
	pr, pw := io.Pipe()
	m := &Main{Stdin: strings.NewReader(""), Stdout: pw, Stderr: io.Discard,
		Getenv: func(k string) string {
			if k == "STRATA_DB" {
				return db
			}
			return ""
		}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- m.Run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--no-auth", "--every", "20ms"})
		pw.Close()
	}()
	go io.Copy(io.Discard, pr)
	d, b := 0, 0
	// Training takes a second here, and many under the race detector on a
	// loaded machine: the deadline only bounds a failing run.
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if d, b = frames(); d == 1 && b > 0 {
			break
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	if d != 1 || b == 0 {
		t.Fatalf("after the worker ran: %d dictionaries, %d compressed summaries; want 1 and some", d, b)
	}
	if after := tree(); after != before {
		t.Fatalf("the tree reads otherwise after compression:\n%s\nwant\n%s", after, before)
	}
}

// TestServeTokensApplyOnEveryServer: tokens are looked up on every
// request, so one created or revoked while servers run counts from the
// next request on each server of the store. Before, a server started on
// a store without tokens kept serving every request without one, and in
// its own namespace even for another namespace's token, until restarted.
func TestServeTokensApplyOnEveryServer(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s.db")
	env := map[string]string{"STRATA_DB": db}
	open, _, _ := serveForTest(t, env, "--addr", "127.0.0.1:0", "--no-auth")
	get := func(addr, secret, path string) int {
		t.Helper()
		req, err := http.NewRequest("GET", addr+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if secret != "" {
			req.Header.Set("Authorization", "Bearer "+secret)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if _, err := client.New(open, "", nil).Append(context.Background(), "mine",
		[]client.Turn{{ExtID: "a", Role: strata.RoleUser, Content: "the server's own namespace"}}); err != nil {
		t.Fatalf("append without a token on --no-auth: %v", err)
	}
	// A token made while the server runs is served in its namespace from
	// the next request: the server's conversation is not found.
	b, errs, err := run(t, db, "", "token", "create", "--namespace", "b")
	if err != nil {
		t.Fatalf("token create: %v %s", err, errs)
	}
	b = strings.TrimSpace(b)
	bID := regexp.MustCompile(`tok_[0-9a-f]+`).FindString(errs)
	if got := get(open, b, "/v1/conversations/mine"); got != 404 {
		t.Errorf("b's token on the --no-auth server reading its namespace: %d, want 404", got)
	}
	// A second server, without --no-auth, asks every request for a token.
	sealed, _, _ := serveForTest(t, env, "--addr", "127.0.0.1:0")
	for _, c := range []struct {
		addr, secret, path string
		want               int
	}{
		{sealed, "", "/v1/conversations", 401},
		{sealed, b, "/v1/conversations", 200},
		{sealed, b, "/v1/conversations/mine", 404},
		{open, "", "/v1/conversations/mine", 200},
	} {
		if got := get(c.addr, c.secret, c.path); got != c.want {
			t.Errorf("GET %s%s with a token %v: %d, want %d", c.addr, c.path, c.secret != "", got, c.want)
		}
	}
	// Revoked, b's token is refused by both from the next request.
	if _, errs, err := run(t, db, "", "token", "revoke", bID); err != nil {
		t.Fatalf("token revoke %s: %v %s", bID, err, errs)
	}
	for _, addr := range []string{open, sealed} {
		if got := get(addr, b, "/v1/conversations"); got != 401 {
			t.Errorf("%s with the revoked token: %d, want 401", addr, got)
		}
	}
}
