package compact_test

import (
	"strings"
	"testing"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/compact"
)

func TestDefaultConfig(t *testing.T) {
	c := compact.DefaultConfig()
	want := compact.Config{ToolPruningEnabled: true, ToolSoftTrimChars: 4000, ToolSoftTrimHead: 1500, ToolSoftTrimTail: 1500,
		ToolHardClearAfter: 6, ToolClearDigest: true, KeepLastToolResults: 2, CompactionEnabled: false, CompactionThreshold: 100000,
		KeepRecentTokens: 20000, OutputHeadroom: 16000}
	if c != want {
		t.Fatalf("DefaultConfig() = %+v, want %+v", c, want)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestConfigValidateNamesField(t *testing.T) {
	tests := []struct {
		field  string
		change func(*compact.Config)
	}{
		{"tool_soft_trim_chars", func(c *compact.Config) { c.ToolSoftTrimChars = 0 }},
		{"tool_soft_trim_head", func(c *compact.Config) { c.ToolSoftTrimHead = -1 }},
		{"tool_soft_trim_tail", func(c *compact.Config) { c.ToolSoftTrimTail = -1 }},
		{"tool_soft_trim_head", func(c *compact.Config) { c.ToolSoftTrimHead = 2000; c.ToolSoftTrimTail = 1950 }},
		{"tool_hard_clear_after", func(c *compact.Config) { c.ToolHardClearAfter = -1 }},
		{"keep_last_tool_results", func(c *compact.Config) { c.KeepLastToolResults = -2 }},
		{"compaction_threshold", func(c *compact.Config) { c.CompactionThreshold = 0 }},
		{"keep_recent_tokens", func(c *compact.Config) { c.KeepRecentTokens = 0 }},
		{"keep_recent_tokens", func(c *compact.Config) { c.KeepRecentTokens = 100000 }},
		{"output_headroom", func(c *compact.Config) { c.OutputHeadroom = -5 }},
	}
	for _, tt := range tests {
		c := compact.DefaultConfig()
		tt.change(&c)
		err := c.Validate()
		if err == nil || !strings.HasPrefix(err.Error(), tt.field+": ") || strata.ErrorCode(err) != strata.EINVALID {
			t.Fatalf("%+v: err = %v, want EINVALID naming %s", c, err, tt.field)
		}
	}
}

func TestConfigFromEnv(t *testing.T) {
	env := map[string]string{
		"STRATA_TOOL_PRUNING_ENABLED":   "off",
		"STRATA_TOOL_SOFT_TRIM_CHARS":   "8_000",
		"STRATA_TOOL_SOFT_TRIM_HEAD":    "2000",
		"STRATA_TOOL_SOFT_TRIM_TAIL":    " 1000 ",
		"STRATA_TOOL_HARD_CLEAR_AFTER":  "0",
		"STRATA_TOOL_CLEAR_DIGEST":      "no",
		"STRATA_KEEP_LAST_TOOL_RESULTS": "3",
		"STRATA_COMPACTION_ENABLED":     "true",
		"STRATA_COMPACTION_THRESHOLD":   "150000",
		"STRATA_KEEP_RECENT_TOKENS":     "30000",
		"STRATA_OUTPUT_HEADROOM":        "8192",
	}
	c, err := compact.ConfigFromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	want := compact.Config{ToolPruningEnabled: false, ToolSoftTrimChars: 8000, ToolSoftTrimHead: 2000, ToolSoftTrimTail: 1000,
		ToolHardClearAfter: 0, KeepLastToolResults: 3, CompactionEnabled: true, CompactionThreshold: 150000,
		KeepRecentTokens: 30000, OutputHeadroom: 8192}
	if c != want {
		t.Fatalf("ConfigFromEnv = %+v, want %+v", c, want)
	}
	if c, err := compact.ConfigFromEnv(func(string) string { return "" }); err != nil || c != compact.DefaultConfig() {
		t.Fatalf("empty environment: %+v, %v; want the defaults", c, err)
	}
}

func TestConfigFromEnvErrorsNameVariable(t *testing.T) {
	tests := []struct{ name, value, want string }{
		{"STRATA_TOOL_SOFT_TRIM_CHARS", "lots", "STRATA_TOOL_SOFT_TRIM_CHARS: \"lots\" is not an integer"},
		{"STRATA_KEEP_RECENT_TOKENS", "_20", "STRATA_KEEP_RECENT_TOKENS: \"_20\" is not an integer"},
		{"STRATA_COMPACTION_ENABLED", "maybe", "STRATA_COMPACTION_ENABLED: \"maybe\" is not a boolean"},
		{"STRATA_TOOL_SOFT_TRIM_CHARS", "0", "STRATA_TOOL_SOFT_TRIM_CHARS: 0 is below 1"},
		{"STRATA_KEEP_RECENT_TOKENS", "200000", "STRATA_KEEP_RECENT_TOKENS: 200000 must be below compaction_threshold"},
		{"STRATA_KEEP_LAST_TOOL_RESULTS", "-1", "STRATA_KEEP_LAST_TOOL_RESULTS: -1 is negative"},
	}
	for _, tt := range tests {
		_, err := compact.ConfigFromEnv(func(k string) string {
			if k == tt.name {
				return tt.value
			}
			return ""
		})
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Fatalf("%s=%q: err = %v, want %q...", tt.name, tt.value, err, tt.want)
		}
	}
}

func TestShouldCompactUnderThreshold(t *testing.T) {
	c := compact.DefaultConfig()
	c.CompactionEnabled = true
	if c.ShouldCompact(80000, 16000) {
		t.Fatal("96,000 tokens triggered a 100,000 threshold")
	}
	if c.ShouldCompact(84000, 16000) {
		t.Fatal("exactly the threshold triggered")
	}
	c.CompactionEnabled = false
	if c.ShouldCompact(500000, 16000) {
		t.Fatal("disabled compaction triggered")
	}
}

func TestShouldCompactOverThreshold(t *testing.T) {
	c := compact.DefaultConfig()
	c.CompactionEnabled = true
	if !c.ShouldCompact(84001, 16000) {
		t.Fatal("100,001 tokens did not trigger a 100,000 threshold")
	}
}
