package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/anthropic"
	"github.com/strata-memory/strata/extractive"
	"github.com/strata-memory/strata/openai"
	"github.com/strata-memory/strata/tiktoken"
)

// fileConfig is strata.yaml. Every field is optional.
type fileConfig struct {
	DB         string               `yaml:"db"`
	Namespace  string               `yaml:"namespace"`
	Tokenizer  string               `yaml:"tokenizer"`
	SessionGap string               `yaml:"session_gap"`
	Policy     *policyConfig        `yaml:"policy"`
	Policies   []strata.Policy      `yaml:"policies"`
	TimeZone   string               `yaml:"time_zone"`
	Assembly   *assemblyConfig      `yaml:"assembly"`
	Tiers      *tiersConfig         `yaml:"tiers"`
	LLM        *llmConfig           `yaml:"llm"`
	Embed      *embedConfig         `yaml:"embed"`
	Serve      *serveConfig         `yaml:"serve"`
	Proxy      *proxyConfig         `yaml:"proxy"`
	Extra      map[string]yaml.Node `yaml:",inline"`
}

// llmConfig is the llm section: the model that writes summaries of llm
// levels. Unset fields fall back to STRATA_LLM_* and the defaults.
type llmConfig struct {
	Provider     string            `yaml:"provider"` // openai or anthropic
	BaseURL      string            `yaml:"base_url"`
	Model        string            `yaml:"model"`
	APIKeyEnv    string            `yaml:"api_key_env"` // the variable holding the key (keys never go in the file)
	Models       map[string]string `yaml:"models"`      // per level name
	Concurrency  int               `yaml:"concurrency"`
	Timeout      string            `yaml:"timeout"`
	ErrorRetries int               `yaml:"error_retries"`
	PromptsDir   string            `yaml:"prompts_dir"`
	Defer        bool              `yaml:"defer_summarization"`
	Learnings    bool              `yaml:"learnings"` // the model reads learnings too (else the offline rules)
	// Prices per million tokens, by model, for stats --cost.
	Prices map[string]price `yaml:"prices"`
}

type price struct {
	Input  float64 `yaml:"input"`
	Output float64 `yaml:"output"`
}

// tiersConfig is the tiers section; unset fields keep their defaults.
type tiersConfig struct {
	Off               bool   `yaml:"off"`
	HotChunks         *int   `yaml:"hot_chunks"`
	HotMaxTokens      *int   `yaml:"hot_max_tokens"`
	WarmMaxTurns      *int   `yaml:"warm_max_turns"`
	WarmMaxAge        string `yaml:"warm_max_age"`
	WarmMaxTokens     *int   `yaml:"warm_max_tokens"`
	ColdRetentionDays *int   `yaml:"cold_retention_days"`
}

// policy applies the section over the defaults.
func (c *tiersConfig) policy() (strata.TierPolicy, error) {
	p := strata.DefaultTierPolicy()
	if c == nil {
		return p, nil
	}
	p.Off = c.Off
	for _, f := range []struct {
		v   *int
		dst *int
	}{{c.HotChunks, &p.HotChunks}, {c.HotMaxTokens, &p.HotMaxTokens}, {c.WarmMaxTurns, &p.WarmMaxTurns},
		{c.WarmMaxTokens, &p.WarmMaxTokens}, {c.ColdRetentionDays, &p.ColdRetentionDays}} {
		if f.v != nil {
			*f.dst = *f.v
		}
	}
	if c.WarmMaxAge != "" {
		d, err := strata.ParseDuration(c.WarmMaxAge)
		if err != nil {
			return p, fmt.Errorf("tiers: warm_max_age %q: %w", c.WarmMaxAge, err)
		}
		p.WarmMaxAge = d
	}
	return p, p.Validate()
}

type assemblyConfig struct {
	PinnedShare    float64 `yaml:"pinned_share"`
	FreshShare     float64 `yaml:"fresh_share"`
	RelevanceShare float64 `yaml:"relevance_share"`
	QueryFresh     float64 `yaml:"query_fresh_share"`
	QueryCoverage  float64 `yaml:"query_coverage_share"`
	SearchK        int     `yaml:"search_k"`
	SearchWindow   int     `yaml:"search_window"`
	Neighbours     int     `yaml:"neighbours"`
	ZoomShare      float64 `yaml:"zoom_share"`
}

// policyConfig is the policy setting: the name of a preset or of one of
// the config's policies, or a whole policy.
type policyConfig struct {
	name   string
	policy *strata.Policy
}

func (p *policyConfig) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		return n.Decode(&p.name)
	}
	p.policy = &strata.Policy{}
	return n.Decode(p.policy)
}

// globals are the flags every command takes.
type globals struct {
	db, config, namespace, tokenizer  string
	llmProvider, llmModel, llmBaseURL string
	embedModel, embedBaseURL          string
	readOnly                          bool
}

func (m *Main) addGlobals(fs *flag.FlagSet) *globals {
	g := &globals{}
	fs.StringVar(&g.db, "db", "", "database file (env STRATA_DB; default under the user's data directory)")
	fs.StringVar(&g.config, "config", "", "config file (env STRATA_CONFIG; default ./strata.yaml if present)")
	fs.StringVar(&g.namespace, "namespace", "", "namespace (env STRATA_NAMESPACE; default \"default\")")
	fs.StringVar(&g.tokenizer, "tokenizer", "", "o200k_base (default), cl100k_base or chars/4 (env STRATA_TOKENIZER)")
	fs.StringVar(&g.llmProvider, "llm-provider", "", "model for llm levels: openai (any OpenAI-compatible server) or anthropic (env STRATA_LLM_PROVIDER)")
	fs.StringVar(&g.llmModel, "llm-model", "", "the model's name (env STRATA_LLM_MODEL)")
	fs.StringVar(&g.llmBaseURL, "llm-base-url", "", "the API's base URL, e.g. http://127.0.0.1:11434/v1 (env STRATA_LLM_BASE_URL)")
	fs.StringVar(&g.embedModel, "embed-model", "", "embedding model for hybrid search, on any OpenAI-compatible server (env STRATA_EMBED_MODEL)")
	fs.StringVar(&g.embedBaseURL, "embed-base-url", "", "the embeddings API's base URL, e.g. http://127.0.0.1:11434/v1 (env STRATA_EMBED_BASE_URL)")
	fs.BoolVar(&g.readOnly, "read-only", false, "open an SQLite store read-only: nothing is created, migrated or written, and commands that write fail (env STRATA_READ_ONLY=1)")
	return g
}

// settings are the resolved configuration: flags > STRATA_* environment >
// strata.yaml > defaults.
type settings struct {
	DB         string
	Namespace  string
	Tokenizer  string
	SessionGap time.Duration
	Policy     strata.Policy
	Policies   []strata.Policy
	TimeZone   string
	Assembly   strata.AssemblyOptions
	Tiers      strata.TierPolicy
	LLM        llmSettings
	Embed      embedSettings
	// Config is the config file read ("" if none), and serve its serve
	// section, which only 'strata serve' resolves (serve.go).
	Config string
	serve  *serveConfig
	proxy  *proxyConfig // the proxy section, resolved by proxy.go
	// deferTiers leaves tier moves to the server's worker (see
	// strata.Config.DeferTiers).
	deferTiers bool
	// longRunning keeps in-memory search indexes (sqlite.WithSummaryIndex):
	// the server and the MCP server answer many queries; a one-shot
	// command would pay for loading them and use them once.
	longRunning bool
	// ReadOnly opens an SQLite store with sqlite.ReadOnly (--read-only,
	// STRATA_READ_ONLY); reads marks a command that only reads, which
	// opens it so too whenever the store allows (see openStore).
	ReadOnly bool
	reads    bool
	// existing marks a command that writes what it derives from a store
	// but never creates one: a missing store is an error, as for reads.
	existing bool
}

// llmSettings are the resolved llm settings.
type llmSettings struct {
	Provider, BaseURL, Model, APIKey string
	Timeout                          time.Duration
	Options                          strata.LLMOptions
	PromptsDir                       string
	Prices                           map[string]price
}

func (m *Main) resolve(g *globals) (settings, error) {
	var s settings
	fc, path, err := m.readConfigFile(g)
	if err != nil {
		return s, err
	}
	if fc != nil {
		s.Config, s.serve, s.proxy = path, fc.Serve, fc.Proxy
	} else {
		fc = &fileConfig{}
	}
	if err := m.resolveStore(g, fc, &s); err != nil {
		return s, err
	}
	s.Namespace = first(g.namespace, m.Getenv("STRATA_NAMESPACE"), fc.Namespace, strata.DefaultNamespace)
	s.Tokenizer = first(g.tokenizer, m.Getenv("STRATA_TOKENIZER"), fc.Tokenizer, "o200k_base")
	if gap := first(m.Getenv("STRATA_SESSION_GAP"), fc.SessionGap); gap != "" {
		d, err := time.ParseDuration(gap)
		if err != nil || d <= 0 {
			return s, fmt.Errorf("config: session_gap %q: want a positive duration like 30m", gap)
		}
		s.SessionGap = d
	}
	if s.Policy, s.Policies, err = resolvePolicies(fc, path); err != nil {
		return s, err
	}
	s.TimeZone = first(m.Getenv("STRATA_TIME_ZONE"), fc.TimeZone)
	if _, err := strata.LoadTimeZone(s.TimeZone); err != nil {
		return s, fmt.Errorf("config %s: time_zone: %w", path, err)
	}
	if s.Tiers, err = fc.Tiers.policy(); err != nil {
		return s, fmt.Errorf("config %s: %w", path, err)
	}
	if s.LLM, err = m.resolveLLM(g, fc.LLM, path); err != nil {
		return s, err
	}
	if s.Embed, err = m.resolveEmbed(g, fc.Embed, path); err != nil {
		return s, err
	}
	s.Assembly, err = m.resolveAssembly(fc.Assembly)
	return s, err
}

// readConfigFile reads the config file --config or STRATA_CONFIG names,
// else strata.yaml if there is one. It returns the file's settings (nil
// if there is no file) and its path, which is strata.yaml then.
func (m *Main) readConfigFile(g *globals) (*fileConfig, string, error) {
	path := first(g.config, m.Getenv("STRATA_CONFIG"))
	explicit := path != ""
	if !explicit {
		path = "strata.yaml"
	}
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
	case errors.Is(err, fs.ErrNotExist) && !explicit:
		return nil, path, nil
	default:
		return nil, path, fmt.Errorf("config: %w", err)
	}
	var fc fileConfig
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&fc); err != nil && !errors.Is(err, io.EOF) {
		return nil, path, fmt.Errorf("config %s: %w", path, err)
	}
	for k, v := range fc.Extra {
		return nil, path, fmt.Errorf("config %s:%d: unknown field %q", path, v.Line, k)
	}
	return &fc, path, nil
}

// resolveStore sets the store's location, by default in the user's data
// folder, and whether it is opened read-only.
func (m *Main) resolveStore(g *globals, fc *fileConfig, s *settings) error {
	s.DB = first(g.db, m.Getenv("STRATA_DB"), fc.DB)
	if s.DB == "" {
		dir, err := dataDir(m.Getenv)
		if err != nil {
			return err
		}
		s.DB = filepath.Join(dir, "strata", "strata.db")
	}
	if g.readOnly {
		s.ReadOnly = true
	} else if v := m.Getenv("STRATA_READ_ONLY"); v != "" {
		on, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("STRATA_READ_ONLY %q: want 1 or 0 (true or false)", v)
		}
		s.ReadOnly = on
	}
	return nil
}

// resolvePolicies returns the pyramid policy the config file at path
// sets (a preset's name, one of its policies' names, or a policy of its
// own; the chunks preset if none) and the policies it defines, each
// valid and named unlike any preset.
func resolvePolicies(fc *fileConfig, path string) (strata.Policy, []strata.Policy, error) {
	policy := strata.ChunksPolicy()
	if fc.Policy != nil && fc.Policy.policy != nil {
		if err := fc.Policy.policy.Validate(); err != nil {
			return policy, nil, fmt.Errorf("config %s: %w", path, err)
		}
		policy = *fc.Policy.policy
	}
	for i, p := range fc.Policies {
		if err := p.Validate(); err != nil {
			return policy, nil, fmt.Errorf("config %s: policies[%d]: %w", path, i, err)
		}
		if _, err := strata.Preset(p.Name); err == nil {
			return policy, nil, fmt.Errorf("config %s: policies[%d]: %q is the name of a preset; choose another", path, i, p.Name)
		}
	}
	if fc.Policy != nil && fc.Policy.name != "" {
		p, err := strata.Preset(fc.Policy.name)
		for _, c := range fc.Policies {
			if c.Name == fc.Policy.name {
				p, err = c, nil
			}
		}
		if err != nil {
			return policy, fc.Policies, fmt.Errorf("config %s: policy: %w", path, err)
		}
		policy = p
	}
	return policy, fc.Policies, nil
}

// resolveAssembly returns the assembly options of the config file's
// section a, with STRATA_QUERY_COVERAGE_SHARE over its query_coverage.
func (m *Main) resolveAssembly(a *assemblyConfig) (strata.AssemblyOptions, error) {
	var o strata.AssemblyOptions
	if a != nil {
		o = strata.AssemblyOptions{PinnedShare: a.PinnedShare, FreshShare: a.FreshShare,
			RelevanceShare: a.RelevanceShare, QueryFreshShare: a.QueryFresh, QueryCoverageShare: a.QueryCoverage,
			SearchK: a.SearchK, SearchWindow: a.SearchWindow, Neighbours: a.Neighbours, ZoomShare: a.ZoomShare}
	}
	if v := m.Getenv("STRATA_QUERY_COVERAGE_SHARE"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f != f || f > 1 {
			return o, fmt.Errorf("STRATA_QUERY_COVERAGE_SHARE %q: want a share of the budget from 0 to 1 (negative: none)", v)
		}
		o.QueryCoverageShare = f
		if f == 0 {
			o.QueryCoverageShare = -1 // 0 asks for none, not for the default
		}
	}
	return o, nil
}

// llmBackoff is the first wait before a failed model call is retried
// (strata.LLMOptions.Backoff): 0, the library's default. It is a variable
// only so that a test whose model server fails on purpose need not wait
// out the backoff.
var llmBackoff time.Duration

// resolveLLM reads the llm settings: flags > STRATA_LLM_* > the llm
// section. No provider means no model.
func (m *Main) resolveLLM(g *globals, c *llmConfig, path string) (llmSettings, error) {
	var l llmSettings
	if c == nil {
		c = &llmConfig{}
	}
	l.Provider = first(g.llmProvider, m.Getenv("STRATA_LLM_PROVIDER"), c.Provider)
	l.BaseURL = first(g.llmBaseURL, m.Getenv("STRATA_LLM_BASE_URL"), c.BaseURL)
	l.Model = first(g.llmModel, m.Getenv("STRATA_LLM_MODEL"), c.Model)
	keyEnv := first(c.APIKeyEnv, "STRATA_LLM_API_KEY")
	l.APIKey = m.Getenv(keyEnv)
	switch l.Provider {
	case "":
		return l, nil
	case "openai":
		l.APIKey = first(l.APIKey, m.Getenv("OPENAI_API_KEY"))
	case "anthropic":
		l.APIKey = first(l.APIKey, m.Getenv("ANTHROPIC_API_KEY"))
	default:
		return l, fmt.Errorf("llm provider %q: want openai (any OpenAI-compatible server) or anthropic", l.Provider)
	}
	if l.Model == "" {
		return l, fmt.Errorf("llm provider %s: no model (set STRATA_LLM_MODEL, --llm-model or llm.model)", l.Provider)
	}
	if t := first(m.Getenv("STRATA_LLM_TIMEOUT"), c.Timeout); t != "" {
		d, err := time.ParseDuration(t)
		if err != nil || d <= 0 {
			return l, fmt.Errorf("config %s: llm timeout %q: want a positive duration like 90s", path, t)
		}
		l.Timeout = d
	}
	if c.Concurrency < 0 || c.ErrorRetries < 0 {
		return l, fmt.Errorf("config %s: llm concurrency and error_retries cannot be negative", path)
	}
	l.Options = strata.LLMOptions{Model: l.Model, Models: c.Models, Concurrency: c.Concurrency, Timeout: l.Timeout,
		ErrorRetries: c.ErrorRetries, Backoff: llmBackoff, Defer: c.Defer, Learnings: c.Learnings}
	if c.PromptsDir != "" {
		fi, err := os.Stat(c.PromptsDir)
		if err != nil || !fi.IsDir() {
			return l, fmt.Errorf("config %s: llm prompts_dir %q is not a folder", path, c.PromptsDir)
		}
		l.Options.Prompts = os.DirFS(c.PromptsDir)
	}
	l.Prices = c.Prices
	return l, nil
}

// completer builds the configured model client, nil if none.
func (l llmSettings) completer() (strata.Completer, error) {
	switch l.Provider {
	case "openai":
		return openai.New(openai.Config{BaseURL: l.BaseURL, APIKey: l.APIKey, Model: l.Model, Timeout: l.Timeout})
	case "anthropic":
		return anthropic.New(anthropic.Config{BaseURL: l.BaseURL, APIKey: l.APIKey, Model: l.Model, Timeout: l.Timeout})
	}
	return nil, nil
}

func first(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// dataDir is the user's data directory: $XDG_DATA_HOME, else the platform's
// usual place.
func dataDir(getenv func(string) string) (string, error) {
	if d := getenv("XDG_DATA_HOME"); d != "" {
		return d, nil
	}
	switch runtime.GOOS {
	case "windows":
		if d := getenv("LocalAppData"); d != "" {
			return d, nil
		}
	case "darwin":
		return os.UserConfigDir()
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no data directory: %w (set STRATA_DB or --db)", err)
	}
	return filepath.Join(home, ".local", "share"), nil
}

// newTokenizer returns the named tokenizer.
func newTokenizer(name string) (strata.Tokenizer, error) {
	if name == "chars/4" {
		return strata.CharEstimator{}, nil
	}
	t, err := tiktoken.New(name)
	if err != nil {
		return nil, err
	}
	return t, nil
}

// app is an open store and the engine over it.
type app struct {
	set   settings
	store store
	mem   *strata.Memory
}

func (a *app) Close() error { return a.store.Close() }

func (m *Main) open(ctx context.Context, g *globals) (*app, error) {
	s, err := m.resolve(g)
	if err != nil {
		return nil, err
	}
	return m.openSettings(ctx, s)
}

// openReading is open for a command that only reads the store: an SQLite
// store is opened read-only when it can be (see openStore), so that a
// backup, a snapshot or a store on read-only media or a full disk can be
// read.
func (m *Main) openReading(ctx context.Context, g *globals) (*app, error) {
	s, err := m.resolve(g)
	if err != nil {
		return nil, err
	}
	s.reads = true
	return m.openSettings(ctx, s)
}

// openSettings opens the store and the engine of settings already
// resolved.
func (m *Main) openSettings(ctx context.Context, s settings) (*app, error) {
	tok, err := newTokenizer(s.Tokenizer)
	if err != nil {
		return nil, err
	}
	mode := readWrite
	switch {
	case s.ReadOnly:
		mode = readOnly
	case s.reads:
		mode = readPreferred
	case s.existing:
		mode = readWriteExisting
	}
	st, err := openStore(ctx, s.DB, s.longRunning, mode, m.Stderr)
	if err != nil {
		return nil, err
	}
	if x, ok := st.(explainer); ok {
		m.explainers = append(m.explainers, x)
	}
	llm := s.LLM.Options
	if llm.Completer, err = s.LLM.completer(); err != nil {
		st.Close()
		return nil, err
	}
	emb, err := s.Embed.embedder()
	if err != nil {
		st.Close()
		return nil, err
	}
	mem, err := strata.New(strata.Config{Store: st, Tokenizer: tok, Summarizer: extractive.New(), LLM: llm,
		Embedder: emb, Embedding: s.Embed.Options,
		Policy: s.Policy, Policies: s.Policies, TimeZone: s.TimeZone, Namespace: s.Namespace, SessionGap: s.SessionGap, Assembly: s.Assembly, Tiers: &s.Tiers,
		DeferTiers: s.deferTiers, Now: m.Now})
	if err != nil {
		st.Close()
		return nil, err
	}
	return &app{set: s, store: st, mem: mem}, nil
}
