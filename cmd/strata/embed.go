package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/openai"
)

// embedConfig is the embed section: the embedding model of hybrid
// search. Unset fields fall back to STRATA_EMBED_* and the defaults.
type embedConfig struct {
	Provider    string `yaml:"provider"` // openai (any OpenAI-compatible server), the only one
	BaseURL     string `yaml:"base_url"`
	Model       string `yaml:"model"`
	APIKeyEnv   string `yaml:"api_key_env"` // the variable holding the key (keys never go in the file)
	Dimensions  int    `yaml:"dimensions"`
	Timeout     string `yaml:"timeout"`
	BatchSize   int    `yaml:"batch_size"`
	Concurrency int    `yaml:"concurrency"`
	Retries     int    `yaml:"retries"`
	// Weight is the vector ranking's weight in hybrid search against
	// BM25's 1 (strata.EmbeddingOptions.Weight).
	Weight float64 `yaml:"weight"`
}

// embedSettings are the resolved embed settings; a zero Model means no
// embedder.
type embedSettings struct {
	Config  openai.EmbedConfig
	Options strata.EmbeddingOptions
}

// resolveEmbed reads the embed settings: flags > STRATA_EMBED_* > the
// embed section. No model means no embedder: search is BM25 only.
func (m *Main) resolveEmbed(g *globals, c *embedConfig, path string) (embedSettings, error) {
	var e embedSettings
	if c == nil {
		c = &embedConfig{}
	}
	if c.Provider != "" && c.Provider != "openai" {
		return e, fmt.Errorf("config %s: embed provider %q: want openai (any OpenAI-compatible server)", path, c.Provider)
	}
	if c.Dimensions < 0 || c.BatchSize < 0 || c.Concurrency < 0 || c.Retries < 0 {
		return e, fmt.Errorf("config %s: embed dimensions, batch_size, concurrency and retries cannot be negative", path)
	}
	keyEnv := first(c.APIKeyEnv, "STRATA_EMBED_API_KEY")
	dims := ""
	if c.Dimensions > 0 {
		dims = strconv.Itoa(c.Dimensions)
	}
	// openai.EmbedFromEnv reads the merged values, so that the rules for
	// keys (OPENAI_API_KEY only for OpenAI's own URL) and for parsing are
	// one.
	merged := map[string]string{
		"STRATA_EMBED_MODEL":      first(g.embedModel, m.Getenv("STRATA_EMBED_MODEL"), c.Model),
		"STRATA_EMBED_BASE_URL":   first(g.embedBaseURL, m.Getenv("STRATA_EMBED_BASE_URL"), c.BaseURL),
		"STRATA_EMBED_API_KEY":    m.Getenv(keyEnv),
		"STRATA_EMBED_DIMENSIONS": first(m.Getenv("STRATA_EMBED_DIMENSIONS"), dims),
		"STRATA_EMBED_TIMEOUT":    first(m.Getenv("STRATA_EMBED_TIMEOUT"), c.Timeout),
		"OPENAI_API_KEY":          m.Getenv("OPENAI_API_KEY"),
	}
	cfg, ok := openai.EmbedFromEnv(func(k string) string { return merged[k] })
	if !ok {
		return e, nil
	}
	// Bad values are reported now rather than at the first embed.
	if _, err := openai.NewEmbedder(cfg); err != nil {
		return e, err
	}
	e.Config = cfg
	e.Options = strata.EmbeddingOptions{BatchSize: c.BatchSize, Concurrency: c.Concurrency, Retries: c.Retries, Weight: c.Weight}
	from := fmt.Sprintf("config %s: embed weight", path)
	if v := m.Getenv("STRATA_EMBED_WEIGHT"); v != "" {
		from = "STRATA_EMBED_WEIGHT"
		w, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return e, fmt.Errorf("%s %q: want a number, the vector ranking's weight against BM25's 1", from, v)
		}
		e.Options.Weight = w
	}
	if w := e.Options.Weight; w < 0 || w > strata.MaxVectorWeight || w != w {
		return e, fmt.Errorf("%s %v: want a number from 0 to %d (0 or unset: 1, the same as BM25's)",
			from, w, strata.MaxVectorWeight)
	}
	return e, nil
}

// embedder builds the configured embedder, nil if none.
func (e embedSettings) embedder() (strata.Embedder, error) {
	if e.Config.Model == "" {
		return nil, nil
	}
	return openai.NewEmbedder(e.Config)
}

func runEmbed(ctx context.Context, m *Main, args []string) error {
	return embedCommand(ctx, m, args, "embed", false)
}

func runReembed(ctx context.Context, m *Main, args []string) error {
	return embedCommand(ctx, m, args, "reembed", true)
}

// embedCommand is strata embed (compute the missing vectors) and strata
// reembed (drop vectors of other models or dimensions first).
func embedCommand(ctx context.Context, m *Main, args []string, name string, again bool) error {
	fs := m.command(name, "[--conversation ID] [--json]")
	conv := fs.String("conversation", "", "conversation id (default: every conversation)")
	if err := fs.parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("%s takes no arguments (got %q)", name, fs.Arg(0))
	}
	a, err := m.open(ctx, fs.g)
	if err != nil {
		return err
	}
	defer a.Close()
	req := strata.EmbedRequest{Conversation: *conv}
	var bar *progressbar.ProgressBar
	if m.IsTerminal {
		req.Progress = func(p strata.EmbedProgress) {
			if bar == nil {
				if p.Total < 500 {
					return // not worth a bar
				}
				bar = progressbar.NewOptions64(p.Total, progressbar.OptionSetWriter(m.Stderr),
					progressbar.OptionSetDescription("embedding"), progressbar.OptionShowCount(),
					progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
			}
			bar.ChangeMax64(max(p.Total, int64(p.Done)))
			bar.Set(p.Done)
		}
	}
	start := time.Now()
	embed := a.mem.Embed
	if again {
		embed = a.mem.Reembed
	}
	res, err := embed(ctx, req)
	if bar != nil {
		bar.Finish()
	}
	if err != nil {
		if res.Turns+res.Nodes > 0 {
			fmt.Fprintf(m.Stderr, "strata: %d vectors stored before the error; run 'strata embed' again to resume\n", res.Turns+res.Nodes)
		}
		return err
	}
	if *fs.json {
		return writeJSON(m.Stdout, struct {
			strata.EmbedResult
			Seconds float64 `json:"seconds"`
		}{res, time.Since(start).Seconds()})
	}
	if again {
		fmt.Fprintf(m.Stdout, "removed %d vectors of other models or dimensions\n", res.Removed)
	}
	fmt.Fprintf(m.Stdout, "embedded %d turns and %d summaries of %d conversations with %s (%d dimensions) in %d calls (%d retries), %.1fs\n",
		res.Turns, res.Nodes, res.Conversations, res.Model, res.Dim, res.Calls, res.Retries, time.Since(start).Seconds())
	if res.Empty > 0 {
		fmt.Fprintf(m.Stdout, "%d of them have no text: they are never search hits\n", res.Empty)
	}
	if len(res.Claimed) > 0 {
		fmt.Fprintf(m.Stdout, "left to another process that holds their claim (a claim its process left behind ends within %s): %s\n",
			a.mem.ClaimTTL(), strings.Join(res.Claimed, ", "))
	}
	return nil
}

// printEmbeddings writes the search mode and the vectors of stats.
func printEmbeddings(w io.Writer, indent, search string, e *strata.EmbeddingStats) {
	if search == "" {
		return
	}
	line := indent + "search       " + search
	switch {
	case search == strata.SearchLexical && e == nil:
		line += " (BM25 only: no embedder; set STRATA_EMBED_MODEL for hybrid search)"
	case e != nil && e.Model != "":
		dim := "dimensions unknown until the first call"
		if e.Dim > 0 {
			dim = fmt.Sprintf("%d dimensions", e.Dim)
		}
		if e.Weight > 0 && e.Weight != 1 {
			dim += fmt.Sprintf(", vector weight %g", e.Weight)
		}
		line += fmt.Sprintf(" (%s, %s): vectors of %d turns and %d summaries; %d missing ('strata embed')", e.Model, dim,
			e.Turns, e.Nodes, e.Missing)
	}
	if e != nil && e.Stale > 0 {
		line += fmt.Sprintf("; %d stale vectors of another model or dimension ('strata reembed')", e.Stale)
	}
	fmt.Fprintln(w, line)
}
