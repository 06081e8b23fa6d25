package compact

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/strata-memory/strata"
)

// Config sets both layers. Start from DefaultConfig (or ConfigFromEnv)
// and change what you need; Validate names the first bad field by its
// configuration name.
type Config struct {
	// Layer 1: tool-output pruning.

	// ToolPruningEnabled turns layer 1 on. Default true.
	ToolPruningEnabled bool
	// ToolSoftTrimChars: a result longer than this many characters (runes)
	// is soft-trimmed to its head and tail. Default 4,000.
	ToolSoftTrimChars int
	// ToolSoftTrimHead and ToolSoftTrimTail are the characters kept at
	// each end of a soft-trimmed result. Default 1,500 each; their sum
	// must be at least 100 below ToolSoftTrimChars (room for the marker).
	ToolSoftTrimHead int
	ToolSoftTrimTail int
	// ToolHardClearAfter: results more than this many tool-result messages
	// old (counting from the end) are replaced by a placeholder. 0 never
	// hard-clears. Default 6.
	ToolHardClearAfter int
	// ToolClearDigest: a hard-cleared result keeps, after the placeholder,
	// one line naming the identifiers it held (see DigestMaxChars).
	// Default true.
	ToolClearDigest bool
	// KeepLastToolResults is how many of the latest tool-result messages
	// are never touched. Default 2.
	KeepLastToolResults int

	// Layer 2: history compaction.

	// CompactionEnabled turns layer 2 on (it is opt-in; Request.Force
	// compacts regardless). Default false.
	CompactionEnabled bool
	// CompactionThreshold: compact when the estimated input (system prompt
	// and tools, history) plus the output headroom exceeds this many
	// tokens. Default 100,000.
	CompactionThreshold int
	// KeepRecentTokens is about how much recent history stays verbatim
	// after a compaction. Default 20,000; must be below
	// CompactionThreshold.
	KeepRecentTokens int
	// OutputHeadroom is the output budget assumed when neither the request
	// nor the message list (max_tokens) says. Default 16,000.
	OutputHeadroom int
}

// DefaultConfig returns the defaults: pruning on (4,000 / 1,500 / 1,500,
// hard-clear after 6 with a digest, keep the last 2), compaction off (threshold 100,000,
// keep 20,000 recent tokens, 16,000 output headroom).
func DefaultConfig() Config {
	return Config{
		ToolPruningEnabled:  true,
		ToolSoftTrimChars:   4000,
		ToolSoftTrimHead:    1500,
		ToolSoftTrimTail:    1500,
		ToolHardClearAfter:  6,
		ToolClearDigest:     true,
		KeepLastToolResults: 2,
		CompactionEnabled:   false,
		CompactionThreshold: 100_000,
		KeepRecentTokens:    20_000,
		OutputHeadroom:      16_000,
	}
}

// Validate reports the first problem with the configuration, naming the
// field, as an EINVALID error.
func (c Config) Validate() error {
	if field, msg := c.check(); field != "" {
		return strata.Errorf(strata.EINVALID, "%s: %s", field, msg)
	}
	return nil
}

// check returns the first bad field's configuration name and what is
// wrong with it, or "" if the configuration is good.
func (c Config) check() (field, msg string) {
	switch {
	case c.ToolSoftTrimChars < 1:
		return "tool_soft_trim_chars", fmt.Sprintf("%d is below 1", c.ToolSoftTrimChars)
	case c.ToolSoftTrimHead < 0:
		return "tool_soft_trim_head", fmt.Sprintf("%d is negative", c.ToolSoftTrimHead)
	case c.ToolSoftTrimTail < 0:
		return "tool_soft_trim_tail", fmt.Sprintf("%d is negative", c.ToolSoftTrimTail)
	case c.ToolSoftTrimHead+c.ToolSoftTrimTail+markerRoom > c.ToolSoftTrimChars:
		return "tool_soft_trim_head", fmt.Sprintf("head %d + tail %d must leave %d characters below tool_soft_trim_chars %d for the trim marker, or a trimmed result would be trimmed again",
			c.ToolSoftTrimHead, c.ToolSoftTrimTail, markerRoom, c.ToolSoftTrimChars)
	case c.ToolHardClearAfter < 0:
		return "tool_hard_clear_after", fmt.Sprintf("%d is negative (0 never hard-clears)", c.ToolHardClearAfter)
	case c.KeepLastToolResults < 0:
		return "keep_last_tool_results", fmt.Sprintf("%d is negative", c.KeepLastToolResults)
	case c.CompactionThreshold < 1:
		return "compaction_threshold", fmt.Sprintf("%d is below 1", c.CompactionThreshold)
	case c.KeepRecentTokens < 1:
		return "keep_recent_tokens", fmt.Sprintf("%d is below 1", c.KeepRecentTokens)
	case c.KeepRecentTokens >= c.CompactionThreshold:
		return "keep_recent_tokens", fmt.Sprintf("%d must be below compaction_threshold %d, or a compaction would keep everything",
			c.KeepRecentTokens, c.CompactionThreshold)
	case c.OutputHeadroom < 0:
		return "output_headroom", fmt.Sprintf("%d is negative", c.OutputHeadroom)
	}
	return "", ""
}

// ShouldCompact reports whether layer 2 is due for a request of input
// tokens (system prompt, tools and history) that may write output tokens:
// compaction is enabled and input + output exceeds CompactionThreshold.
func (c Config) ShouldCompact(input, output int) bool {
	return c.CompactionEnabled && input+output > c.CompactionThreshold
}

// The environment variables ConfigFromEnv reads, with their fields.
var envVars = []struct {
	name string
	b    func(*Config) *bool
	n    func(*Config) *int
}{
	{name: "STRATA_TOOL_PRUNING_ENABLED", b: func(c *Config) *bool { return &c.ToolPruningEnabled }},
	{name: "STRATA_TOOL_SOFT_TRIM_CHARS", n: func(c *Config) *int { return &c.ToolSoftTrimChars }},
	{name: "STRATA_TOOL_SOFT_TRIM_HEAD", n: func(c *Config) *int { return &c.ToolSoftTrimHead }},
	{name: "STRATA_TOOL_SOFT_TRIM_TAIL", n: func(c *Config) *int { return &c.ToolSoftTrimTail }},
	{name: "STRATA_TOOL_HARD_CLEAR_AFTER", n: func(c *Config) *int { return &c.ToolHardClearAfter }},
	{name: "STRATA_TOOL_CLEAR_DIGEST", b: func(c *Config) *bool { return &c.ToolClearDigest }},
	{name: "STRATA_KEEP_LAST_TOOL_RESULTS", n: func(c *Config) *int { return &c.KeepLastToolResults }},
	{name: "STRATA_COMPACTION_ENABLED", b: func(c *Config) *bool { return &c.CompactionEnabled }},
	{name: "STRATA_COMPACTION_THRESHOLD", n: func(c *Config) *int { return &c.CompactionThreshold }},
	{name: "STRATA_KEEP_RECENT_TOKENS", n: func(c *Config) *int { return &c.KeepRecentTokens }},
	{name: "STRATA_OUTPUT_HEADROOM", n: func(c *Config) *int { return &c.OutputHeadroom }},
}

// ConfigFromEnv returns DefaultConfig with the STRATA_* variables that
// getenv returns non-empty applied: STRATA_TOOL_PRUNING_ENABLED,
// STRATA_TOOL_SOFT_TRIM_CHARS, STRATA_TOOL_SOFT_TRIM_HEAD,
// STRATA_TOOL_SOFT_TRIM_TAIL, STRATA_TOOL_HARD_CLEAR_AFTER,
// STRATA_TOOL_CLEAR_DIGEST, STRATA_KEEP_LAST_TOOL_RESULTS, STRATA_COMPACTION_ENABLED,
// STRATA_COMPACTION_THRESHOLD, STRATA_KEEP_RECENT_TOKENS and
// STRATA_OUTPUT_HEADROOM. Booleans take true/false, 1/0, yes/no, on/off;
// integers may group digits with underscores (100_000). An unreadable
// value, or one Validate rejects, is an EINVALID error naming the
// variable.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	c := DefaultConfig()
	for _, v := range envVars {
		s := strings.TrimSpace(getenv(v.name))
		if s == "" {
			continue
		}
		if v.b != nil {
			b, ok := parseBool(s)
			if !ok {
				return Config{}, strata.Errorf(strata.EINVALID, "%s: %q is not a boolean (want true or false)", v.name, s)
			}
			*v.b(&c) = b
			continue
		}
		n, err := strconv.Atoi(strings.ReplaceAll(s, "_", ""))
		if err != nil || strings.HasPrefix(s, "_") || strings.HasSuffix(s, "_") {
			return Config{}, strata.Errorf(strata.EINVALID, "%s: %q is not an integer", v.name, s)
		}
		*v.n(&c) = n
	}
	if field, msg := c.check(); field != "" {
		return Config{}, strata.Errorf(strata.EINVALID, "%s: %s", "STRATA_"+strings.ToUpper(field), msg)
	}
	return c, nil
}

func parseBool(s string) (bool, bool) {
	switch strings.ToLower(s) {
	case "1", "t", "true", "yes", "y", "on":
		return true, true
	case "0", "f", "false", "no", "n", "off":
		return false, true
	}
	return false, false
}
