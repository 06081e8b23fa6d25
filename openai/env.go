package openai

import (
	"errors"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/strata-memory/strata"
)

// FromEnv builds a Config from environment variables read through getenv
// (os.Getenv in programs, a map in tests):
//
//	STRATA_LLM_BASE_URL  the API root; empty means DefaultBaseURL
//	STRATA_LLM_MODEL     the default model
//	STRATA_LLM_API_KEY   the API key
//	STRATA_LLM_TIMEOUT   the per-call timeout, a Go duration ("90s") or
//	                     a number of seconds
//
// When STRATA_LLM_API_KEY is empty, OPENAI_API_KEY is used instead, but
// only if the base URL is OpenAI's own (empty or api.openai.com): an
// OpenAI key is not handed to another server. ok is false, with a zero
// Config, when STRATA_LLM_MODEL is empty. A timeout FromEnv cannot read is
// reported by New, as EINVALID.
func FromEnv(getenv func(string) string) (cfg Config, ok bool) {
	get := func(name string) string { return strings.TrimSpace(getenv(name)) }
	cfg = Config{
		BaseURL: get("STRATA_LLM_BASE_URL"),
		Model:   get("STRATA_LLM_MODEL"),
		APIKey:  get("STRATA_LLM_API_KEY"),
	}
	if cfg.Model == "" {
		return Config{}, false
	}
	if cfg.APIKey == "" && isOpenAI(cfg.BaseURL) {
		cfg.APIKey = get("OPENAI_API_KEY")
	}
	if s := get("STRATA_LLM_TIMEOUT"); s != "" {
		d, err := parseTimeout(s)
		if err != nil {
			cfg.envErr = strata.Errorf(strata.EINVALID, "openai: STRATA_LLM_TIMEOUT %q is not a positive duration", s)
		}
		cfg.Timeout = d
	}
	return cfg, true
}

// parseTimeout reads a positive Go duration or number of seconds.
func parseTimeout(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		secs, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil || secs > float64(1<<62)/float64(time.Second) {
			return 0, err
		}
		d, err = time.Duration(secs*float64(time.Second)), nil
	}
	if d <= 0 {
		return 0, errors.New("timeout is not positive")
	}
	return d, nil
}

// isOpenAI reports whether base is empty (DefaultBaseURL) or on
// api.openai.com over https.
func isOpenAI(base string) bool {
	if base == "" {
		return true
	}
	u, err := url.Parse(base)
	return err == nil && u.Scheme == "https" && strings.EqualFold(u.Hostname(), "api.openai.com")
}
