package strata

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"time"
)

// Config wires a Memory. Store, Tokenizer and Summarizer are required.
type Config struct {
	Store      Store
	Tokenizer  Tokenizer
	Summarizer Summarizer
	// Policy is the pyramid of new conversations; zero means ChunksPolicy.
	Policy Policy
	// Policies are custom policies, besides the presets, that a
	// conversation can be created with or moved to by name.
	Policies []Policy
	// TimeZone is the IANA zone new conversations close calendar periods
	// in; "" means UTC.
	TimeZone string
	// Namespace scopes every read and write; "" means DefaultNamespace.
	Namespace string
	// SessionGap starts a new session after this much idle time when the
	// source names no session; zero means 30 minutes.
	SessionGap time.Duration
	// Assembly tunes context packages; zero fields take defaults.
	Assembly AssemblyOptions
	// Tiers says when spans move from hot to warm to cold and when cold
	// content expires; nil means DefaultTierPolicy.
	Tiers *TierPolicy
	// DeferTiers leaves tier moves out of Ingest and Import: spans move
	// when Tier, RollupAll, Pass or Watch runs (a server's worker), so an
	// append never waits on archive writes. Off, each append moves what
	// is due at once.
	DeferTiers bool
	// LLM configures summaries written by a model; the zero value has none.
	LLM LLMOptions
	// Embedder computes the vectors of hybrid search; nil: search is BM25
	// only. Embedding tunes it; zero fields take defaults.
	Embedder  Embedder
	Embedding EmbeddingOptions
	// Holder names this process in the claims it takes on units of
	// background work (see ClaimStore); "" means one made at New from the
	// host name, the process id and a random suffix.
	Holder string
	// ClaimTTL is how long a claim lasts unless renewed (every third of
	// it while its work runs): a process that dies holding one leaves its
	// unit to another after at most this long. Zero means the model's
	// timeout plus a minute, at least MinClaimTTL.
	ClaimTTL time.Duration
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Memory is the strata engine: ingest, rollups, context assembly, search.
// It is safe for concurrent use. It is a facade: each concern is a type
// of its own, in the files named for it, that Memory's methods delegate
// to (see the fields below).
type Memory struct {
	scope    // store, namespace, policies, logger, clock, locks (scope.go)
	settings // what the parts are made from

	claims  *claims    // claims on background work (claim.go); shared by ForNamespace
	ingest  *ingester  // appends (ingest.go)
	pyramid *pyramid   // rollups (rollup.go, group.go, monthcut.go, reshape.go)
	tiers   *tiering   // tier moves and retention (tier.go)
	model   *modelPass // model summaries, Summarize, cost (modelsum.go, summarize.go, cost.go)
	vec     *vectors   // embeddings and hybrid search (embed.go, hybrid.go)

	assembly *assembly // context and upload packages (context.go, upload.go, facts.go)
	browse   *browser  // reads: nodes, turns, tree, search (browse.go, zoom.go, tree.go, search.go)
	learn    *learner  // learnings (learnings.go, learnmodel.go)
}

// settings are a Memory's configuration past its scope, defaults filled
// in: what New makes its parts from, and ForNamespace copies.
type settings struct {
	tok        Tokenizer
	sum        Summarizer
	tz         string        // the time zone of new conversations
	gap        time.Duration // Config.SessionGap
	asm        AssemblyOptions
	workers    int // spans summarized, turns counted at once
	llm        LLMOptions
	prompts    *Prompts
	tierPolicy TierPolicy
	deferTiers bool
	emb        Embedder
	embOpt     EmbeddingOptions
	counts     *countCache // token counts of items rendered lately; they depend on the tokenizer only
}

// New returns a Memory over cfg, or an EINVALID error naming what is wrong.
func New(cfg Config) (*Memory, error) {
	if cfg.Store == nil {
		return nil, Errorf(EINVALID, "config: no store")
	}
	if cfg.Tokenizer == nil {
		return nil, Errorf(EINVALID, "config: no tokenizer")
	}
	if cfg.Summarizer == nil {
		return nil, Errorf(EINVALID, "config: no summarizer")
	}
	if cfg.Policy.Name == "" {
		cfg.Policy = ChunksPolicy()
	}
	if err := cfg.Policy.Validate(); err != nil {
		return nil, err
	}
	custom, err := customPolicies(cfg)
	if err != nil {
		return nil, err
	}
	if _, err := LoadTimeZone(cfg.TimeZone); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if cfg.Namespace == "" {
		cfg.Namespace = DefaultNamespace
	}
	if err := ValidateNamespace(cfg.Namespace); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if cfg.SessionGap == 0 {
		cfg.SessionGap = 30 * time.Minute
	}
	if cfg.SessionGap < 0 {
		return nil, Errorf(EINVALID, "config: session gap %v is negative", cfg.SessionGap)
	}
	asm, err := cfg.Assembly.withDefaults()
	if err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	prompts, err := LoadPrompts(cfg.LLM.Prompts)
	if err != nil {
		return nil, err
	}
	tiers, err := cfg.tierPolicy()
	if err != nil {
		return nil, err
	}
	embOpt, err := cfg.Embedding.withDefaults()
	if err != nil {
		return nil, err
	}
	llm := cfg.LLM.withDefaults()
	if err := cfg.claimDefaults(llm); err != nil {
		return nil, err
	}
	s := scope{
		store: cfg.Store, ns: cfg.Namespace, policy: cfg.Policy, custom: custom,
		log: cfg.Logger, now: cfg.Now, locks: newConvLocks(),
	}
	cl := &claims{
		store: cfg.Store, log: cfg.Logger, now: cfg.Now,
		holder: cfg.Holder, ttl: cfg.ClaimTTL, held: &heldClaims{keys: map[string]bool{}},
	}
	m := &Memory{scope: s, claims: cl, settings: settings{
		tok: cfg.Tokenizer, sum: cfg.Summarizer, tz: cfg.TimeZone, gap: cfg.SessionGap, asm: asm,
		workers: max(1, runtime.GOMAXPROCS(0)), llm: llm, prompts: prompts,
		tierPolicy: tiers, deferTiers: cfg.DeferTiers, emb: cfg.Embedder, embOpt: embOpt,
		counts: newCountCache(),
	}}
	m.wire()
	return m, nil
}

// tierPolicy returns the configuration's tier policy, checked:
// DefaultTierPolicy if it has none.
func (cfg *Config) tierPolicy() (TierPolicy, error) {
	tiers := DefaultTierPolicy()
	if cfg.Tiers != nil {
		tiers = *cfg.Tiers
	}
	return tiers, tiers.Validate()
}

// claimDefaults checks the claim TTL and fills in the defaults of the
// claim TTL (from the model's timeout llm) and the holder name.
func (cfg *Config) claimDefaults(llm LLMOptions) error {
	if cfg.ClaimTTL < 0 {
		return Errorf(EINVALID, "config: claim TTL %v is negative", cfg.ClaimTTL)
	}
	if cfg.ClaimTTL == 0 {
		cfg.ClaimTTL = max(MinClaimTTL, llm.Timeout+time.Minute)
	}
	if cfg.Holder == "" {
		cfg.Holder = newHolder()
	}
	return nil
}

// customPolicies checks the configuration's policies and returns them
// by name; two different policies of one name are an EINVALID error.
func customPolicies(cfg Config) (map[string]Policy, error) {
	custom := map[string]Policy{}
	for _, p := range append([]Policy{cfg.Policy}, cfg.Policies...) {
		if err := p.Validate(); err != nil {
			return nil, err
		}
		if prev, ok := custom[p.Name]; ok && !samePolicy(prev, p) {
			return nil, Errorf(EINVALID, "config: two different policies are named %q", p.Name)
		}
		custom[p.Name] = p
	}
	return custom, nil
}

// wire makes the parts of m from its scope, claims and settings.
func (m *Memory) wire() {
	s, c := m.scope, m.claims
	m.tiers = &tiering{scope: s, claims: c, rules: m.tierPolicy, llm: m.llm}
	m.pyramid = &pyramid{scope: s, tok: m.tok, sum: m.sum, llm: m.llm, gap: m.gap, workers: m.workers,
		tiers: m.tiers, deferTiers: m.deferTiers}
	m.ingest = &ingester{scope: s, tok: m.tok, tz: m.tz, gap: m.gap, workers: m.workers, pyramid: m.pyramid}
	m.model = &modelPass{scope: s, claims: c, tok: m.tok, sum: m.sum, llm: m.llm, prompts: m.prompts}
	m.vec = newVectors(s, c, m.emb, m.embOpt)
	m.learn = &learner{scope: s, claims: c, llm: m.llm, model: m.model}
	m.browse = &browser{scope: s, vec: m.vec, pyramid: m.pyramid}
	m.assembly = &assembly{scope: s, tok: m.tok, sum: m.sum, asm: m.asm, vec: m.vec, counts: m.counts}
}

// Namespace returns the namespace this Memory reads and writes.
func (m *Memory) Namespace() string { return m.ns }

// Tokenizer returns the tokenizer budgets are counted with.
func (m *Memory) Tokenizer() Tokenizer { return m.tok }

// Store returns the underlying store.
func (m *Memory) Store() Store { return m.store }

// Embedding returns the embedding options in force, defaults filled in.
func (m *Memory) Embedding() EmbeddingOptions { return m.embOpt }

// Policy returns the policy of that name: one of the configuration's, or
// a preset.
func (m *Memory) Policy(name string) (Policy, error) { return m.policyNamed(name) }

// PolicyOf returns the policy of a conversation.
func (m *Memory) PolicyOf(ctx context.Context, conversation string) (Policy, error) {
	return m.policyOf(ctx, conversation)
}

func samePolicy(a, b Policy) bool {
	if a.Name != b.Name || len(a.Levels) != len(b.Levels) {
		return false
	}
	for i := range a.Levels {
		if a.Levels[i] != b.Levels[i] {
			return false
		}
	}
	return true
}

// Conversation returns a conversation of this namespace; ENOTFOUND if none.
func (m *Memory) Conversation(ctx context.Context, id string) (Conversation, error) {
	return m.conversation(ctx, id)
}

// Conversations lists the namespace's conversations.
func (m *Memory) Conversations(ctx context.Context) ([]Conversation, error) {
	return m.store.Conversations(ctx, m.ns)
}

// Stats reports what the store holds in this namespace, with each
// conversation's policy and pyramid counters.
func (m *Memory) Stats(ctx context.Context) (Stats, error) {
	st, err := m.store.Stats(ctx, m.ns)
	if err != nil {
		return st, err
	}
	if err := m.vec.addEmbeddingStats(ctx, &st); err != nil {
		return st, err
	}
	cs, err := m.store.Conversations(ctx, m.ns)
	if err != nil {
		return st, err
	}
	byID := make(map[string]Conversation, len(cs))
	for _, c := range cs {
		byID[c.ID] = c
	}
	for i := range st.PerConversation {
		cs := &st.PerConversation[i]
		c := byID[cs.ID]
		cs.Policy = c.Policy
		if cs.Policy == "" {
			cs.Policy = m.policy.Name
		}
		p, err := m.policyFor(c)
		if err != nil {
			continue // a policy this configuration no longer defines: no counters
		}
		if cs.Counters, err = m.browse.counters(ctx, cs.ID, p); err != nil {
			return st, err
		}
	}
	return st, nil
}

// DeleteConversation forgets a conversation: its turns, summaries,
// vectors, learnings and archive segments are removed, whatever their
// tier, and an audit record of what went is kept (see Store.Deletions).
// reason is recorded with it. ENOTFOUND for an unknown conversation.
func (m *Memory) DeleteConversation(ctx context.Context, id, reason string) (Deletion, error) {
	if err := lookupID(m.ns, id); err != nil {
		return Deletion{}, err
	}
	if err := CheckText("reason", reason); err != nil {
		return Deletion{}, err
	}
	lock := m.convLock(id)
	lock.Lock()
	defer lock.Unlock()
	roll := m.rollLock(id)
	roll.Lock()
	defer roll.Unlock()
	d, err := m.store.DeleteConversation(ctx, m.ns, id, reason, m.now())
	if err == nil {
		m.vec.indexes.drop(id)
	}
	return d, err
}

// ForNamespace returns a Memory over the same store, models and settings
// that reads and writes namespace ns instead: what a server serving
// several namespaces (one per token) uses. It has its own caches and
// locks; conversations of two namespaces never share either. It holds
// claims under the same holder name. EINVALID for an empty ns.
func (m *Memory) ForNamespace(ns string) (*Memory, error) {
	if err := ValidateNamespace(ns); err != nil {
		return nil, err
	}
	s := m.scope
	s.ns, s.locks = ns, newConvLocks()
	n := &Memory{scope: s, settings: m.settings, claims: m.claims}
	n.wire()
	return n, nil
}
