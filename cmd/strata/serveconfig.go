package main

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"net"
	"strconv"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/strata-memory/strata/httpapi"
)

// serveConfig is the serve section of strata.yaml: the settings of
// 'strata serve'. Each field keeps its node, so that an error can name
// its line.
type serveConfig struct {
	Addr     yaml.Node `yaml:"addr"`
	MaxBody  yaml.Node `yaml:"max_body"`
	Inflight yaml.Node `yaml:"max_inflight"`
	Timeout  yaml.Node `yaml:"timeout"`
	Rate     yaml.Node `yaml:"rate"`
	Burst    yaml.Node `yaml:"burst"`
	Every    yaml.Node `yaml:"every"`
	Worker   yaml.Node `yaml:"worker"`

	ReadTimeout  yaml.Node `yaml:"read_timeout"`
	WriteTimeout yaml.Node `yaml:"write_timeout"`
	IdleTimeout  yaml.Node `yaml:"idle_timeout"`
	MaxConns     yaml.Node `yaml:"max_conns"`
	NoAuth       yaml.Node `yaml:"no_auth"`
}

// serveSettings are the resolved settings of 'strata serve'.
type serveSettings struct {
	Addr     string
	MaxBody  int64
	Inflight int64 // bytes of request bodies held at once (0: the server's default)
	Timeout  time.Duration
	Rate     float64
	Burst    int
	Every    time.Duration
	Worker   bool

	ReadTimeout  time.Duration // to receive a request, headers and body
	WriteTimeout time.Duration // from a request's headers to its answer's end
	IdleTimeout  time.Duration // a keep-alive connection between requests
	MaxConns     int           // connections held open at once
	NoAuth       bool          // serve requests without a token (loopback only)

	addrFrom settingFrom // where Addr came from, for the loopback refusal
}

// Defaults of serve's settings.
const (
	defaultServeAddr  = "127.0.0.1:7700"
	defaultServeRate  = 20
	defaultServeBurst = 40
	defaultServeEvery = time.Minute

	defaultServeReadTimeout = time.Minute
	defaultServeIdleTimeout = time.Minute
	defaultServeMaxConns    = 1024
	// writeTimeoutSlack is what the default write timeout leaves, past the
	// read timeout and the request timeout, to write the answer.
	writeTimeoutSlack = 30 * time.Second
)

// settingFrom is where a setting's value came from: a flag, a variable,
// or a field of the config file.
type settingFrom struct {
	cmd  string // the command the setting is of: serve or proxy
	name string // --rate, STRATA_SERVE_RATE, or config FILE:LINE: serve.rate
	flag bool
}

// errorf reports a bad value v of the setting, naming where it came
// from; a flag's is a usage error.
func (f settingFrom) errorf(v, format string, args ...any) error {
	msg := fmt.Sprintf("%s: %s %q: %s", f.cmd, f.name, v, fmt.Sprintf(format, args...))
	if f.flag {
		return usageError{msg}
	}
	return errors.New(msg)
}

// settingPicker finds the winning value of a command's settings (serve's,
// proxy's): a flag given on the command line, else its variable, else
// the key of the config file's section named for the command.
type settingPicker struct {
	m      *Main
	fs     *cmdline // nil: no flags (the proxy settings under serve)
	given  map[string]bool
	cmd    string
	config string // the config file's path
}

func newSettingPicker(m *Main, fs *cmdline, cmd, config string) settingPicker {
	given := map[string]bool{}
	if fs != nil {
		fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	}
	return settingPicker{m: m, fs: fs, given: given, cmd: cmd, config: config}
}

// pick returns the winning value of a setting and where it came from; ok
// is false when none is set. n is the setting's node in the config file
// section, key its name there.
func (p settingPicker) pick(flagName, env string, n *yaml.Node, key string) (v string, from settingFrom, ok bool, err error) {
	if p.given[flagName] {
		return p.fs.Lookup(flagName).Value.String(), settingFrom{cmd: p.cmd, name: "--" + flagName, flag: true}, true, nil
	}
	if v := p.m.Getenv(env); v != "" {
		return v, settingFrom{cmd: p.cmd, name: env}, true, nil
	}
	if n.Kind == 0 {
		return "", settingFrom{cmd: p.cmd}, false, nil
	}
	from = settingFrom{cmd: p.cmd, name: fmt.Sprintf("config %s:%d: %s.%s", p.config, n.Line, p.cmd, key)}
	if n.Kind != yaml.ScalarNode {
		return "", from, false, fmt.Errorf("%s: want a single value, not a list or a map", from.name)
	}
	return n.Value, from, true, nil
}

// loopbackHost says whether host (of a HOST:PORT) is localhost or a
// loopback address.
func loopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// serveFlags are serve's own flags; each also reads a STRATA_SERVE_*
// variable and a key of the config file's serve section.
type serveFlags struct{ *cmdline }

func (m *Main) serveCommand() serveFlags {
	fs := serveFlags{m.command("serve", "[--addr HOST:PORT] [--no-auth] [--max-body BYTES] [--max-inflight BYTES] [--timeout D] [--read-timeout D] [--write-timeout D] [--idle-timeout D] [--max-conns N] [--rate N] [--burst N] [--every D | --no-worker]")}
	fs.String("addr", defaultServeAddr, "address to listen on (env STRATA_SERVE_ADDR, serve.addr)")
	fs.Bool("no-auth", false, "serve requests that carry no token, in the store's namespace: loopback addresses only; without it the store must hold a token, 'strata token create' (env STRATA_SERVE_NO_AUTH=true, serve.no_auth: true)")
	fs.Int64("max-body", httpapi.DefaultMaxBody, "largest request body in bytes; larger ones are answered 413 (env STRATA_SERVE_MAX_BODY, serve.max_body)")
	fs.Int64("max-inflight", httpapi.DefaultMaxInflight, "bytes of request bodies held at once, from reading to answer, at least --max-body (default: the larger of 33554432 and --max-body); past it a request waits for room, then 503 (env STRATA_SERVE_MAX_INFLIGHT, serve.max_inflight)")
	fs.Duration("timeout", httpapi.DefaultTimeout, "deadline of every request (env STRATA_SERVE_TIMEOUT, serve.timeout)")
	fs.Duration("read-timeout", defaultServeReadTimeout, "time a client has to send a request, headers and body; past it 408 and the connection is closed (env STRATA_SERVE_READ_TIMEOUT, serve.read_timeout)")
	fs.Duration("write-timeout", 0, "time from a request's headers to the end of its answer, more than --read-timeout plus --timeout (default: their sum plus 30s) (env STRATA_SERVE_WRITE_TIMEOUT, serve.write_timeout)")
	fs.Duration("idle-timeout", defaultServeIdleTimeout, "how long a keep-alive connection may wait between requests (env STRATA_SERVE_IDLE_TIMEOUT, serve.idle_timeout)")
	fs.Int("max-conns", defaultServeMaxConns, "connections held open at once; past it a new one replaces the longest idle one (env STRATA_SERVE_MAX_CONNS, serve.max_conns)")
	fs.Float64("rate", defaultServeRate, "requests per second one token may make (0: no limit); beyond it 429 with Retry-After (env STRATA_SERVE_RATE, serve.rate)")
	fs.Int("burst", defaultServeBurst, "requests one token may make at once before --rate applies (env STRATA_SERVE_BURST, serve.burst)")
	fs.Duration("every", defaultServeEvery, "how often the worker closes due periods, writes pending model summaries, moves tiers and learns (env STRATA_SERVE_EVERY, serve.every)")
	fs.Bool("no-worker", false, "run no background work: a read replica, or when 'strata rollup --watch' runs elsewhere (env STRATA_SERVE_WORKER=false, serve.worker: false)")
	return fs
}

// serveConfig parses serve's command line and resolves its settings and
// the global ones, without opening the store.
func (m *Main) serveConfig(args []string) (settings, serveSettings, error) {
	fs := m.serveCommand()
	if err := fs.parse(args); err != nil {
		return settings{}, serveSettings{}, err
	}
	if fs.NArg() != 0 {
		return settings{}, serveSettings{}, usagef("serve: unexpected arguments %q", fs.Args())
	}
	s, err := m.resolve(fs.g)
	if err != nil {
		return s, serveSettings{}, err
	}
	ss, err := m.resolveServe(fs, s)
	return s, ss, err
}

// resolveServe resolves each of serve's settings as the other settings
// are: a flag given on the command line, else its STRATA_SERVE_*
// variable, else the serve section of the config file, else the
// default. Only the value that wins is read, and a bad one is an error
// naming where it came from.
func (m *Main) resolveServe(fs serveFlags, s settings) (serveSettings, error) {
	file := s.serve
	if file == nil {
		file = &serveConfig{}
	}
	r := serveResolver{settingPicker: newSettingPicker(m, fs.cmdline, "serve", s.Config), file: file}
	ss := serveSettings{Addr: defaultServeAddr, MaxBody: httpapi.DefaultMaxBody, Timeout: httpapi.DefaultTimeout,
		Rate: defaultServeRate, Burst: defaultServeBurst, Every: defaultServeEvery, Worker: true,
		ReadTimeout: defaultServeReadTimeout, IdleTimeout: defaultServeIdleTimeout, MaxConns: defaultServeMaxConns,
		addrFrom: settingFrom{cmd: "serve", name: "--addr", flag: true}}
	// In this order: a setting's check may need one resolved before it.
	for _, step := range []func(*serveSettings) error{
		r.addr, r.bodies, r.durations, r.rate, r.writeTimeout, r.maxConns, r.noAuth, r.worker,
	} {
		if err := step(&ss); err != nil {
			return ss, err
		}
	}
	return ss, nil
}

// serveResolver resolves serve's settings one group at a time, each
// step setting those of its group that are set.
type serveResolver struct {
	settingPicker
	file *serveConfig
}

func (r serveResolver) addr(ss *serveSettings) error {
	v, from, ok, err := r.pick("addr", "STRATA_SERVE_ADDR", &r.file.Addr, "addr")
	if err != nil || !ok {
		return err
	}
	if _, _, err := net.SplitHostPort(v); err != nil {
		return from.errorf(v, "want HOST:PORT, like 127.0.0.1:7700 (%v)", err)
	}
	ss.Addr, ss.addrFrom = v, from
	return nil
}

// bodies resolves the largest body and the bytes of bodies held at once,
// which must hold the largest.
func (r serveResolver) bodies(ss *serveSettings) error {
	if v, from, ok, err := r.pick("max-body", "STRATA_SERVE_MAX_BODY", &r.file.MaxBody, "max_body"); err != nil {
		return err
	} else if ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return from.errorf(v, "want a positive number of bytes, like %d", httpapi.DefaultMaxBody)
		}
		ss.MaxBody = n
	}
	v, from, ok, err := r.pick("max-inflight", "STRATA_SERVE_MAX_INFLIGHT", &r.file.Inflight, "max_inflight")
	if err != nil || !ok {
		return err
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return from.errorf(v, "want a positive number of bytes, like %d", httpapi.DefaultMaxInflight)
	}
	if n < ss.MaxBody {
		return from.errorf(v, "want at least the largest body (--max-body %d): a body that cannot fit would never be served", ss.MaxBody)
	}
	ss.Inflight = n
	return nil
}

func (r serveResolver) durations(ss *serveSettings) error {
	for _, d := range []struct {
		flag, env, key string
		node           *yaml.Node
		dst            *time.Duration
	}{
		{"timeout", "STRATA_SERVE_TIMEOUT", "timeout", &r.file.Timeout, &ss.Timeout},
		{"every", "STRATA_SERVE_EVERY", "every", &r.file.Every, &ss.Every},
		{"read-timeout", "STRATA_SERVE_READ_TIMEOUT", "read_timeout", &r.file.ReadTimeout, &ss.ReadTimeout},
		{"write-timeout", "STRATA_SERVE_WRITE_TIMEOUT", "write_timeout", &r.file.WriteTimeout, &ss.WriteTimeout},
		{"idle-timeout", "STRATA_SERVE_IDLE_TIMEOUT", "idle_timeout", &r.file.IdleTimeout, &ss.IdleTimeout},
	} {
		v, from, ok, err := r.pick(d.flag, d.env, d.node, d.key)
		if err != nil {
			return err
		}
		if ok {
			t, err := time.ParseDuration(v)
			if err != nil || t <= 0 {
				return from.errorf(v, "want a positive duration, like 30s or 1m")
			}
			*d.dst = t
		}
	}
	return nil
}

// rate resolves a token's request rate and burst.
func (r serveResolver) rate(ss *serveSettings) error {
	if v, from, ok, err := r.pick("rate", "STRATA_SERVE_RATE", &r.file.Rate, "rate"); err != nil {
		return err
	} else if ok {
		n, err := strconv.ParseFloat(v, 64)
		if err != nil || n < 0 || math.IsNaN(n) || math.IsInf(n, 0) {
			return from.errorf(v, "want requests per second per token, 0 or more (0: no limit)")
		}
		ss.Rate = n
	}
	v, from, ok, err := r.pick("burst", "STRATA_SERVE_BURST", &r.file.Burst, "burst")
	if err != nil || !ok {
		return err
	}
	b, err := strconv.Atoi(v)
	if err != nil || b < 0 {
		return from.errorf(v, "want a number of requests, 0 or more (0: as many as the rate)")
	}
	ss.Burst = b
	return nil
}

// writeTimeout defaults the write deadline, or checks the one set. It
// runs from a request's headers: it must leave the time to read the body
// and to serve it, or an answer is cut off.
func (r serveResolver) writeTimeout(ss *serveSettings) error {
	if ss.WriteTimeout == 0 {
		ss.WriteTimeout = ss.ReadTimeout + ss.Timeout + writeTimeoutSlack
	} else if ss.WriteTimeout <= ss.ReadTimeout+ss.Timeout {
		v, from, _, _ := r.pick("write-timeout", "STRATA_SERVE_WRITE_TIMEOUT", &r.file.WriteTimeout, "write_timeout")
		return from.errorf(v, "want more than the read timeout (%v) plus the request timeout (%v): the write deadline runs from the request's headers to the end of its answer", ss.ReadTimeout, ss.Timeout)
	}
	return nil
}

func (r serveResolver) maxConns(ss *serveSettings) error {
	v, from, ok, err := r.pick("max-conns", "STRATA_SERVE_MAX_CONNS", &r.file.MaxConns, "max_conns")
	if err != nil || !ok {
		return err
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return from.errorf(v, "want a positive number of connections, like %d", defaultServeMaxConns)
	}
	ss.MaxConns = n
	return nil
}

func (r serveResolver) noAuth(ss *serveSettings) error {
	v, from, ok, err := r.pick("no-auth", "STRATA_SERVE_NO_AUTH", &r.file.NoAuth, "no_auth")
	if err != nil || !ok {
		return err
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return from.errorf(v, "want true or false")
	}
	ss.NoAuth = b
	return nil
}

// worker resolves whether the worker runs: --no-worker says the opposite
// of the variable and the key.
func (r serveResolver) worker(ss *serveSettings) error {
	if r.given["no-worker"] {
		ss.Worker = r.fs.Lookup("no-worker").Value.String() != "true"
		return nil
	}
	v, from, ok, err := r.pick("", "STRATA_SERVE_WORKER", &r.file.Worker, "worker")
	if err != nil || !ok {
		return err
	}
	w, err := strconv.ParseBool(v)
	if err != nil {
		return from.errorf(v, "want true or false")
	}
	ss.Worker = w
	return nil
}
