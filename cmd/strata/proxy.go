package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/compact"
	"github.com/strata-memory/strata/compact/checkpoint"
	"github.com/strata-memory/strata/proxy"
)

// proxyConfig is the proxy section of strata.yaml: the settings of
// 'strata proxy', and of the model API routes 'strata serve' mounts.
type proxyConfig struct {
	Addr         yaml.Node `yaml:"addr"`
	OpenAIURL    yaml.Node `yaml:"openai_url"`
	AnthropicURL yaml.Node `yaml:"anthropic_url"`
	Mode         yaml.Node `yaml:"mode"`
	Budget       yaml.Node `yaml:"budget"`
}

// proxySettings are the resolved proxy settings.
type proxySettings struct {
	Addr         string
	OpenAIURL    string
	AnthropicURL string
	Mode         proxy.Mode
	Budget       int
	addrFrom     settingFrom
}

const defaultProxyAddr = "127.0.0.1:7701"

// proxyFlags are proxy's own flags; each also reads a STRATA_PROXY_*
// variable and a key of the config file's proxy section.
func (m *Main) proxyCommand() *cmdline {
	fs := m.command("proxy", "[--addr HOST:PORT] [--openai-url URL] [--anthropic-url URL] [--mode memory|compact|off] [--budget TOKENS]")
	fs.String("addr", defaultProxyAddr, "address to listen on, loopback only: to serve other machines use 'strata serve', which mounts the same routes behind its tokens (env STRATA_PROXY_ADDR, proxy.addr)")
	fs.String("openai-url", proxy.DefaultOpenAIURL, "upstream base URL for POST /v1/chat/completions: URL/chat/completions (env STRATA_PROXY_OPENAI_URL, proxy.openai_url)")
	fs.String("anthropic-url", proxy.DefaultAnthropicURL, "upstream base URL for POST /v1/messages: URL/v1/messages (env STRATA_PROXY_ANTHROPIC_URL, proxy.anthropic_url)")
	fs.String("mode", string(proxy.ModeMemory), "memory: older history replaced by a context package when over --budget; compact: tool-output pruning and checkpoints; off: remember only (env STRATA_PROXY_MODE, proxy.mode)")
	fs.Int("budget", proxy.DefaultBudget, "memory mode's threshold and context package budget, in tokens (env STRATA_PROXY_BUDGET, proxy.budget)")
	return fs
}

// resolveProxy resolves the proxy settings as serve's are: a flag given
// on the command line (fs nil: none, as under serve), else its
// STRATA_PROXY_* variable, else the proxy section of the config file,
// else the default.
func (m *Main) resolveProxy(fs *cmdline, s settings) (proxySettings, error) {
	file := s.proxy
	if file == nil {
		file = &proxyConfig{}
	}
	ps := proxySettings{Addr: defaultProxyAddr, OpenAIURL: proxy.DefaultOpenAIURL, AnthropicURL: proxy.DefaultAnthropicURL,
		Mode: proxy.ModeMemory, Budget: proxy.DefaultBudget, addrFrom: settingFrom{cmd: "proxy", name: "--addr", flag: true}}
	pick := newSettingPicker(m, fs, "proxy", s.Config).pick
	for _, u := range []struct {
		flag, env, key string
		node           *yaml.Node
		dst            *string
	}{
		{"openai-url", "STRATA_PROXY_OPENAI_URL", "openai_url", &file.OpenAIURL, &ps.OpenAIURL},
		{"anthropic-url", "STRATA_PROXY_ANTHROPIC_URL", "anthropic_url", &file.AnthropicURL, &ps.AnthropicURL},
		{"addr", "STRATA_PROXY_ADDR", "addr", &file.Addr, &ps.Addr},
	} {
		v, from, ok, err := pick(u.flag, u.env, u.node, u.key)
		if err != nil {
			return ps, err
		}
		if !ok {
			continue
		}
		if u.flag == "addr" {
			if _, _, err := net.SplitHostPort(v); err != nil {
				return ps, from.errorf(v, "want HOST:PORT, like %s (%v)", defaultProxyAddr, err)
			}
			ps.addrFrom = from
		} else if !strings.HasPrefix(v, "http://") && !strings.HasPrefix(v, "https://") {
			return ps, from.errorf(v, "want an http:// or https:// base URL")
		}
		*u.dst = v
	}
	if v, from, ok, err := pick("mode", "STRATA_PROXY_MODE", &file.Mode, "mode"); err != nil {
		return ps, err
	} else if ok {
		md, err := proxy.ParseMode(v)
		if err != nil {
			return ps, from.errorf(v, "want memory, compact or off")
		}
		ps.Mode = md
	}
	if v, from, ok, err := pick("budget", "STRATA_PROXY_BUDGET", &file.Budget, "budget"); err != nil {
		return ps, err
	} else if ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < proxy.MinPackage {
			return ps, from.errorf(v, "want a number of tokens, at least %d", proxy.MinPackage)
		}
		ps.Budget = n
	}
	return ps, nil
}

// proxyOptions are the proxy's options from its settings, with compact
// mode's thresholds and checkpoint model taken as 'strata compact' and
// 'strata serve' take them.
func (m *Main) proxyOptions(a *app, ps proxySettings) (proxy.Options, error) {
	ccfg, err := compact.ConfigFromEnv(m.Getenv)
	if err != nil {
		return proxy.Options{}, err
	}
	if m.Getenv("STRATA_COMPACTION_ENABLED") == "" {
		ccfg.CompactionEnabled = true
	}
	llm, err := a.set.LLM.completer()
	if err != nil {
		return proxy.Options{}, err
	}
	cp, err := checkpoint.New(checkpoint.Options{LLM: llm, Model: a.set.LLM.Model, Tokenizer: a.mem.Tokenizer()})
	if err != nil {
		return proxy.Options{}, err
	}
	return proxy.Options{OpenAIURL: ps.OpenAIURL, AnthropicURL: ps.AnthropicURL, Mode: ps.Mode, Budget: ps.Budget,
		Compact: ccfg, Checkpointer: cp}, nil
}

// runProxy serves the model API routes in front of the upstreams (see
// docs/proxy.md) on a loopback address until SIGINT or SIGTERM.
func runProxy(ctx context.Context, m *Main, args []string) error {
	fs := m.proxyCommand()
	if err := fs.parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usagef("proxy: unexpected arguments %q", fs.Args())
	}
	set, err := m.resolve(fs.g)
	if err != nil {
		return err
	}
	ps, err := m.resolveProxy(fs, set)
	if err != nil {
		return err
	}
	if host, _, _ := net.SplitHostPort(ps.Addr); !loopbackHost(host) {
		return ps.addrFrom.errorf(ps.Addr, "strata proxy serves loopback only (127.0.0.1, ::1, localhost), having no tokens; to serve other machines, use 'strata serve', which mounts the same routes behind its tokens")
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM)
	defer stop()
	set.longRunning = true
	a, err := m.openSettings(ctx, set)
	if err != nil {
		return err
	}
	defer a.Close()
	opt, err := m.proxyOptions(a, ps)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewJSONHandler(m.Stderr, nil))
	opt.Memory = func(context.Context) *strata.Memory { return a.mem }
	opt.Logger = log
	p, err := proxy.New(opt)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	for _, r := range proxy.Routes {
		mux.Handle(r, p)
	}
	ln, err := net.Listen("tcp", ps.Addr)
	if err != nil {
		return fmt.Errorf("proxy: %w", err)
	}
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute,
		BaseContext: func(net.Listener) context.Context { return context.WithoutCancel(ctx) }}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	fmt.Fprintf(m.Stdout, "strata: proxy on http://%s in %s mode (budget %d): OpenAI clients use base URL http://%s/v1 (upstream %s), Anthropic clients http://%s (upstream %s); store %s\n",
		ln.Addr(), ps.Mode, ps.Budget, ln.Addr(), ps.OpenAIURL, ln.Addr(), ps.AnthropicURL, showDB(a.set.DB))
	select {
	case err := <-done:
		return fmt.Errorf("proxy: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		return fmt.Errorf("proxy: shutdown: %w", err)
	}
	p.Wait() // the rollups after the last replies, before the store closes
	fmt.Fprintln(m.Stdout, "strata: stopped")
	return nil
}
