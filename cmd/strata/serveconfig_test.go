package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// serveForTest runs 'strata serve args' in-process with the environment
// env until the returned stop is called, and returns the address it
// printed (http://127.0.0.1:PORT) and its first line.
func serveForTest(t *testing.T, env map[string]string, args ...string) (addr, first string, stop func()) {
	t.Helper()
	return listenForTest(t, "serve", env, args...)
}

// listenForTest runs a command that listens (serve, proxy) as
// serveForTest does.
func listenForTest(t *testing.T, command string, env map[string]string, args ...string) (addr, first string, stop func()) {
	t.Helper()
	pr, pw := io.Pipe()
	m := &Main{Stdin: strings.NewReader(""), Stdout: pw, Stderr: io.Discard, Getenv: func(k string) string { return env[k] }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx, append([]string{command}, args...)); pw.Close() }()
	lines := bufio.NewScanner(pr)
	if !lines.Scan() {
		cancel()
		t.Fatalf("serve printed nothing: %v", <-done)
	}
	first = lines.Text()
	addr = regexp.MustCompile(`http://127\.0\.0\.1:\d+`).FindString(first)
	if addr == "" {
		cancel()
		t.Fatalf("serve did not print its address: %q", first)
	}
	go io.Copy(io.Discard, pr)
	stopped := false
	stop = func() {
		t.Helper()
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("serve after cancel: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("serve did not stop")
		}
	}
	t.Cleanup(stop)
	return addr, first, stop
}

// TestServeConfigFromFileAndEnv: serve takes its settings from the serve
// section of strata.yaml, a STRATA_SERVE_* variable beats the file, and a
// flag beats the variable; here the address and the body limit, seen
// from outside.
func TestServeConfigFromFileAndEnv(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "strata.yaml")
	if err := os.WriteFile(cfg, []byte("serve:\n  addr: 127.0.0.1:0\n  max_body: 300\n  worker: false\n  no_auth: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"STRATA_DB": filepath.Join(dir, "s.db"), "STRATA_CONFIG": cfg}
	big := `{"turns":[{"ext_id":"a","role":"user","content":"` + strings.Repeat("long ", 100) + `"}]}`
	post := func(addr string) int {
		resp, err := http.Post(addr+"/v1/conversations/c/turns", "application/json", strings.NewReader(big))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, c := range []struct {
		name string
		env  map[string]string
		args []string
		want int
	}{
		{"the file's max_body", nil, nil, 413},
		{"STRATA_SERVE_MAX_BODY over the file", map[string]string{"STRATA_SERVE_MAX_BODY": "5000"}, nil, 200},
		{"--max-body over the variable", map[string]string{"STRATA_SERVE_MAX_BODY": "5000"}, []string{"--max-body", "300"}, 413},
	} {
		e := map[string]string{}
		for k, v := range env {
			e[k] = v
		}
		for k, v := range c.env {
			e[k] = v
		}
		// The file's address (port 0) is the one served: the default
		// would be 127.0.0.1:7700.
		addr, _, stop := serveForTest(t, e, c.args...)
		if strings.HasSuffix(addr, ":7700") {
			t.Fatalf("%s: serving on the default address %s, not the file's", c.name, addr)
		}
		if got := post(addr); got != c.want {
			t.Errorf("%s: a %d-byte body answered %d, want %d", c.name, len(big), got, c.want)
		}
		stop()
	}
}

// TestServeConfigPrecedence resolves every serve setting from each place
// it can come from: a flag beats the variable, which beats the file,
// which beats the default.
func TestServeConfigPrecedence(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "strata.yaml")
	file := "serve:\n  addr: 127.0.0.1:7001\n  max_body: 1000\n  max_inflight: 1500\n  timeout: 10s\n  rate: 2.5\n  burst: 3\n  every: 2m\n  worker: false\n" +
		"  read_timeout: 11s\n  write_timeout: 1m\n  idle_timeout: 12s\n  max_conns: 10\n  no_auth: true\n"
	if err := os.WriteFile(cfg, []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"STRATA_SERVE_ADDR": "127.0.0.1:7002", "STRATA_SERVE_MAX_BODY": "2000", "STRATA_SERVE_MAX_INFLIGHT": "2500",
		"STRATA_SERVE_TIMEOUT": "20s", "STRATA_SERVE_RATE": "5", "STRATA_SERVE_BURST": "6", "STRATA_SERVE_EVERY": "3m",
		"STRATA_SERVE_WORKER": "true", "STRATA_SERVE_READ_TIMEOUT": "21s", "STRATA_SERVE_WRITE_TIMEOUT": "2m",
		"STRATA_SERVE_IDLE_TIMEOUT": "22s", "STRATA_SERVE_MAX_CONNS": "20", "STRATA_SERVE_NO_AUTH": "false"}
	flags := []string{"--addr", "127.0.0.1:7003", "--max-body", "3000", "--max-inflight", "3500", "--timeout", "30s", "--rate", "0", "--burst", "0",
		"--every", "4m", "--no-worker", "--read-timeout", "31s", "--write-timeout", "3m", "--idle-timeout", "32s",
		"--max-conns", "30", "--no-auth"}
	resolve := func(env map[string]string, args ...string) serveSettings {
		t.Helper()
		env["STRATA_DB"] = filepath.Join(dir, "s.db")
		m := &Main{Stderr: io.Discard, Getenv: func(k string) string { return env[k] }}
		_, ss, err := m.serveConfig(args)
		if err != nil {
			t.Fatalf("serve %v with %v: %v", args, env, err)
		}
		return ss
	}
	// plain drops where the address came from, to compare values.
	plain := func(s serveSettings) serveSettings { s.addrFrom = settingFrom{}; return s }
	def := resolve(map[string]string{})
	want := serveSettings{Addr: "127.0.0.1:7700", MaxBody: 16 << 20, Timeout: time.Minute, Rate: 20, Burst: 40, Every: time.Minute, Worker: true,
		ReadTimeout: time.Minute, WriteTimeout: 2*time.Minute + 30*time.Second, IdleTimeout: time.Minute, MaxConns: 1024}
	if plain(def) != want {
		t.Errorf("defaults %+v, want %+v", plain(def), want)
	}
	got := resolve(map[string]string{"STRATA_CONFIG": cfg})
	want = serveSettings{Addr: "127.0.0.1:7001", MaxBody: 1000, Inflight: 1500, Timeout: 10 * time.Second, Rate: 2.5, Burst: 3, Every: 2 * time.Minute,
		ReadTimeout: 11 * time.Second, WriteTimeout: time.Minute, IdleTimeout: 12 * time.Second, MaxConns: 10, NoAuth: true}
	if plain(got) != want {
		t.Errorf("from the file %+v, want %+v", got, want)
	}
	env := map[string]string{"STRATA_CONFIG": cfg}
	for k, v := range vars {
		env[k] = v
	}
	got = resolve(env)
	want = serveSettings{Addr: "127.0.0.1:7002", MaxBody: 2000, Inflight: 2500, Timeout: 20 * time.Second, Rate: 5, Burst: 6, Every: 3 * time.Minute, Worker: true,
		ReadTimeout: 21 * time.Second, WriteTimeout: 2 * time.Minute, IdleTimeout: 22 * time.Second, MaxConns: 20}
	if plain(got) != want {
		t.Errorf("variables over the file %+v, want %+v", got, want)
	}
	got = resolve(env, flags...)
	want = serveSettings{Addr: "127.0.0.1:7003", MaxBody: 3000, Inflight: 3500, Timeout: 30 * time.Second, Every: 4 * time.Minute,
		ReadTimeout: 31 * time.Second, WriteTimeout: 3 * time.Minute, IdleTimeout: 32 * time.Second, MaxConns: 30, NoAuth: true}
	if plain(got) != want {
		t.Errorf("flags over the variables %+v, want %+v", got, want)
	}
	// An explicit --no-worker=false beats STRATA_SERVE_WORKER=false.
	if got := resolve(map[string]string{"STRATA_SERVE_WORKER": "false"}, "--no-worker=false"); !got.Worker {
		t.Errorf("--no-worker=false over STRATA_SERVE_WORKER=false: no worker")
	}
	if got := resolve(map[string]string{"STRATA_SERVE_WORKER": "false"}); got.Worker {
		t.Errorf("STRATA_SERVE_WORKER=false: a worker")
	}
	// A flag given replaces a bad variable, which is then never read.
	if got := resolve(map[string]string{"STRATA_SERVE_RATE": "fast"}, "--rate", "7"); got.Rate != 7 {
		t.Errorf("--rate 7 over a bad variable: rate %v", got.Rate)
	}
	if got.addrFrom.name != "--addr" {
		t.Errorf("the address comes from %q, want --addr", got.addrFrom.name)
	}
}

// TestServeConfigErrors: a bad serve setting is refused before the store
// is opened, with an error naming where it came from.
func TestServeConfigErrors(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "strata.yaml")
	db := filepath.Join(dir, "s.db")
	for _, c := range []struct {
		name, yaml string
		env        map[string]string
		args       []string
		want       string
		usage      bool
		opens      bool // the store is read for its tokens first
	}{
		{name: "unknown key in the file", yaml: "serve:\n  addr: 127.0.0.1:0\n  colour: blue\n", want: "line 3: field colour not found"},
		{name: "bad rate in the file", yaml: "db: x.db\nserve:\n  rate: fast\n", want: `strata.yaml:3: serve.rate "fast"`},
		{name: "negative burst in the file", yaml: "serve: {burst: -2}\n", want: `strata.yaml:1: serve.burst "-2"`},
		{name: "bad max_body in the file", yaml: "serve:\n  max_body: 0\n", want: `strata.yaml:2: serve.max_body "0"`},
		{name: "a list for a value", yaml: "serve:\n  timeout: [1s]\n", want: `strata.yaml:2: serve.timeout`},
		{name: "bad worker in the file", yaml: "serve:\n  worker: sometimes\n", want: `strata.yaml:2: serve.worker "sometimes"`},
		{name: "non-loopback address in the file", yaml: "serve:\n  addr: 0.0.0.0:7700\n  no_auth: true\n", want: `strata.yaml:2: serve.addr "0.0.0.0:7700": --no-auth serves loopback only`, opens: true},
		{name: "bad timeout variable", yaml: "serve:\n  timeout: 5s\n", env: map[string]string{"STRATA_SERVE_TIMEOUT": "soon"}, want: `STRATA_SERVE_TIMEOUT "soon"`},
		{name: "bad every variable", env: map[string]string{"STRATA_SERVE_EVERY": "-1m"}, want: `STRATA_SERVE_EVERY "-1m"`},
		{name: "bad worker variable", env: map[string]string{"STRATA_SERVE_WORKER": "maybe"}, want: `STRATA_SERVE_WORKER "maybe"`},
		{name: "bad address variable", env: map[string]string{"STRATA_SERVE_ADDR": "no-port"}, want: `STRATA_SERVE_ADDR "no-port"`},
		{name: "non-loopback address variable", env: map[string]string{"STRATA_SERVE_ADDR": ":7700"}, args: []string{"--no-auth"}, want: `STRATA_SERVE_ADDR ":7700": --no-auth serves loopback only`, opens: true},
		{name: "no token and no --no-auth", want: `has no token, so no request could be served: create one with 'strata token create --namespace default'`, opens: true},
		{name: "write timeout within read and request timeouts", args: []string{"--timeout", "1m", "--read-timeout", "1m", "--write-timeout", "2m"}, want: `--write-timeout "2m0s": want more than the read timeout (1m0s) plus the request timeout (1m0s)`, usage: true},
		{name: "bad max_inflight in the file", yaml: "serve:\n  max_inflight: lots\n", want: `strata.yaml:2: serve.max_inflight "lots"`},
		{name: "max-inflight under max-body", args: []string{"--max-body", "2000", "--max-inflight", "1000"}, want: `--max-inflight "1000": want at least the largest body (--max-body 2000)`, usage: true},
		{name: "bad max_conns in the file", yaml: "serve:\n  max_conns: 0\n", want: `strata.yaml:2: serve.max_conns "0"`},
		{name: "bad no_auth variable", env: map[string]string{"STRATA_SERVE_NO_AUTH": "perhaps"}, want: `STRATA_SERVE_NO_AUTH "perhaps"`},
		{name: "bad idle_timeout in the file", yaml: "serve:\n  idle_timeout: never\n", want: `strata.yaml:2: serve.idle_timeout "never"`},
		{name: "zero timeout flag", yaml: "serve:\n  timeout: 5s\n", args: []string{"--timeout", "0s"}, want: `--timeout "0s"`, usage: true},
		{name: "negative rate flag", env: map[string]string{"STRATA_SERVE_RATE": "3"}, args: []string{"--rate", "-1"}, want: `--rate "-1"`, usage: true},
	} {
		if err := os.WriteFile(cfg, []byte(c.yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		env := map[string]string{"STRATA_DB": db, "STRATA_CONFIG": cfg}
		for k, v := range c.env {
			env[k] = v
		}
		_, _, err := runEnv(t, env, append([]string{"serve"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %s", c.name, err, c.want)
			continue
		}
		var u usageError
		if errors.As(err, &u) != c.usage {
			t.Errorf("%s: usage error %v, want %v", c.name, errors.As(err, &u), c.usage)
		}
		if c.opens {
			for _, f := range []string{db, db + "-wal", db + "-shm"} {
				os.Remove(f)
			}
		} else if _, err := os.Stat(db); err == nil {
			t.Fatalf("%s: the store was created before the settings were checked", c.name)
		}
	}
}
