package strata

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Level kinds: how a level groups its children into nodes.
const (
	// KindCount closes a node every Span children.
	KindCount = "count"
	// KindSession makes one node per session; only a first level can be a
	// session level (its children are turns).
	KindSession = "session"
	// KindCalendar makes one node per calendar period (Period: day, week
	// or month) in the conversation's time zone.
	KindCalendar = "calendar"
)

// Level describes how one rung of the pyramid is formed.
type Level struct {
	// Name shows in trees and provenance ("micro", "mini", "macro").
	Name string `json:"name" yaml:"name"`
	// Kind is how spans close: KindCount, KindSession or KindCalendar.
	Kind string `json:"kind" yaml:"kind"`
	// Span is the number of children per node of a count level: turns for
	// the first level, nodes of the level below for the others.
	Span int `json:"span,omitempty" yaml:"span,omitempty"`
	// Period is the calendar period of a calendar level: "day", "week" or
	// "month". A child belongs to the period of its first turn, or, for a
	// calendar child, of its own period's start. A month level cuts the
	// week and session levels below it at month ends, so that a month node
	// covers its calendar month (see Policy.MonthCut).
	Period PeriodKind `json:"period,omitempty" yaml:"period,omitempty"`
	// Budget is the token budget of one node's summary.
	Budget int `json:"budget" yaml:"budget"`
	// ImportantBudget is the budget of a node whose period was marked
	// important (see Memory.MarkImportant); zero means twice Budget.
	ImportantBudget int `json:"important_budget,omitempty" yaml:"important_budget,omitempty"`
	// Window is how far back from the newest turn this level's nodes are
	// preferred for coverage in a context package, before the level above
	// takes over (001's windows: days for 7 days, weeks for 30). Zero
	// means no window: the coarser levels cover whatever they can.
	Window Duration `json:"window,omitempty" yaml:"window,omitempty"`
	// Summarizer names the strategy: "extractive", "llm" (a model writes
	// the summary; see LLMOptions) or "aggregate" (002's statistics of the
	// span's metadata, with its key facts). Empty means llm when a model
	// is configured, else extractive; the presets leave it empty.
	Summarizer string `json:"summarizer,omitempty" yaml:"summarizer,omitempty"`
}

// Policy is the shape of a conversation's pyramid: its levels, finest
// first. Level i of Levels is pyramid level i+1; level 0 is the raw turns.
type Policy struct {
	Name   string  `json:"name" yaml:"name"`
	Levels []Level `json:"levels" yaml:"levels"`
}

// CalendarPolicy is the calendar pyramid of 001 and 003: day, ISO week and
// month, with 001's summary limits (500, 1,000 and 2,000 tokens) and its
// context windows (days for the last 7 days, weeks for the last 30).
func CalendarPolicy() Policy {
	return Policy{Name: "calendar", Levels: []Level{
		{Name: "day", Kind: KindCalendar, Period: PeriodDay, Budget: 500, Window: Duration(7 * 24 * time.Hour)},
		{Name: "week", Kind: KindCalendar, Period: PeriodWeek, Budget: 1000, Window: Duration(30 * 24 * time.Hour)},
		{Name: "month", Kind: KindCalendar, Period: PeriodMonth, Budget: 2000},
	}}
}

// SessionsPolicy is the pyramid of 002: one node per session, a core per 8
// sessions, a sphere per 8 cores.
func SessionsPolicy() Policy {
	return Policy{Name: "sessions", Levels: []Level{
		{Name: "session", Kind: KindSession, Budget: 300},
		{Name: "core", Kind: KindCount, Span: 8, Budget: 600},
		{Name: "sphere", Kind: KindCount, Span: 8, Budget: 1000},
	}}
}

// ChunksPolicy is the default count pyramid: micro = 10 turns, mini = 2
// micros (20 turns), macro = 5 minis (100 turns).
func ChunksPolicy() Policy {
	return Policy{Name: "chunks", Levels: []Level{
		{Name: "micro", Kind: KindCount, Span: 10, Budget: 100},
		{Name: "mini", Kind: KindCount, Span: 2, Budget: 160},
		{Name: "macro", Kind: KindCount, Span: 5, Budget: 240},
	}}
}

// Presets are the names of the built-in policies.
var Presets = []string{"chunks", "calendar", "sessions"}

// Preset returns the named built-in policy.
func Preset(name string) (Policy, error) {
	switch name {
	case "", "chunks":
		return ChunksPolicy(), nil
	case "calendar":
		return CalendarPolicy(), nil
	case "sessions":
		return SessionsPolicy(), nil
	}
	return Policy{}, Errorf(EINVALID, "unknown policy %q (known: %s, or a policy of the config file)", name, strings.Join(Presets, ", "))
}

// Validate reports the first problem with the policy, naming the level and
// field.
func (p Policy) Validate() error {
	if p.Name == "" {
		return Errorf(EINVALID, "policy: name is empty")
	}
	if len(p.Levels) == 0 {
		return Errorf(EINVALID, "policy %q: no levels", p.Name)
	}
	if len(p.Levels) > 8 {
		return Errorf(EINVALID, "policy %q: %d levels, at most 8", p.Name, len(p.Levels))
	}
	seen := map[string]bool{}
	for i, l := range p.Levels {
		where := fmt.Sprintf("policy %q level %d", p.Name, i+1)
		if l.Name == "" {
			return Errorf(EINVALID, "%s: name is empty", where)
		}
		if seen[strings.ToLower(l.Name)] {
			return Errorf(EINVALID, "%s: name %q is used twice", where, l.Name)
		}
		seen[strings.ToLower(l.Name)] = true
		where = fmt.Sprintf("%s (%s)", where, l.Name)
		if err := p.checkKind(i, where); err != nil {
			return err
		}
		if l.Budget < 16 || l.Budget > 100000 {
			return Errorf(EINVALID, "%s: budget %d is outside 16..100000 tokens", where, l.Budget)
		}
		if l.ImportantBudget != 0 && (l.ImportantBudget < l.Budget || l.ImportantBudget > 100000) {
			return Errorf(EINVALID, "%s: important_budget %d is outside %d..100000 tokens", where, l.ImportantBudget, l.Budget)
		}
		if l.Window < 0 {
			return Errorf(EINVALID, "%s: window %v is negative", where, l.Window)
		}
		switch l.Summarizer {
		case "", MethodExtractive, MethodLLM, MethodAggregate:
		default:
			return Errorf(EINVALID, "%s: summarizer %q is not available (want extractive, llm or aggregate)", where, l.Summarizer)
		}
	}
	return nil
}

// checkKind checks level i's kind and the span or period it takes;
// where names the level in errors.
func (p Policy) checkKind(i int, where string) error {
	l := p.Levels[i]
	switch l.Kind {
	case KindCount:
		min := 2
		if i == 0 {
			min = 1
		}
		if l.Span < min || l.Span > 10000 {
			return Errorf(EINVALID, "%s: span %d is outside %d..10000", where, l.Span, min)
		}
		if l.Period != "" {
			return Errorf(EINVALID, "%s: a count level has no period (got %q)", where, l.Period)
		}
	case KindSession:
		if i != 0 {
			return Errorf(EINVALID, "%s: a session level must be the first level (its children are turns)", where)
		}
		if l.Span != 0 || l.Period != "" {
			return Errorf(EINVALID, "%s: a session level has no span or period", where)
		}
	case KindCalendar:
		rank := periodRank(l.Period)
		if rank == 0 {
			return Errorf(EINVALID, "%s: period %q is not a calendar period (want day, week or month)", where, l.Period)
		}
		if l.Span != 0 {
			return Errorf(EINVALID, "%s: a calendar level has no span (got %d)", where, l.Span)
		}
		// A calendar level must be coarser than every calendar level
		// below it, and cannot sit above a count level (a count node
		// can straddle its periods).
		for j := i - 1; j >= 0; j-- {
			below := p.Levels[j]
			if below.Kind == KindCount {
				return Errorf(EINVALID, "%s: a calendar level cannot sit above the count level %q", where, below.Name)
			}
			if below.Kind == KindCalendar && periodRank(below.Period) >= rank {
				return Errorf(EINVALID, "%s: period %s is not coarser than the %s of level %q below it", where, l.Period, below.Period, below.Name)
			}
		}
	case "":
		return Errorf(EINVALID, "%s: kind is empty (want count, session or calendar)", where)
	default:
		return Errorf(EINVALID, "%s: kind %q is not supported (want count, session or calendar)", where, l.Kind)
	}
	return nil
}

// BudgetFor is the summary budget of a node of the level: ImportantBudget
// (twice Budget if unset) when its period is marked important, else
// Budget.
func (l Level) BudgetFor(important bool) int {
	if !important {
		return l.Budget
	}
	if l.ImportantBudget == 0 {
		return 2 * l.Budget
	}
	return l.ImportantBudget
}

// periodRank orders calendar periods from fine to coarse; 0 for anything
// else.
func periodRank(k PeriodKind) int {
	switch k {
	case PeriodDay:
		return 1
	case PeriodWeek:
		return 2
	case PeriodMonth:
		return 3
	}
	return 0
}

// Calendar reports whether any level of the policy is a calendar level.
func (p Policy) Calendar() bool {
	for _, l := range p.Levels {
		if l.Kind == KindCalendar {
			return true
		}
	}
	return false
}

// MonthCut reports whether pyramid level lvl (1-based) is cut at month
// ends: a week or session level with a month level above it. Such a level
// closes a node at the end of each month in the conversation's time zone,
// as well as at the end of its week or session, so that the nodes of the
// month level hold whole nodes and cover exactly their calendar month. A
// week or session that runs across the end of a month makes one node in
// each month; the part after the first is labelled with its month
// ("2026-W40 (2026-10)", "session 12 (2026-10)").
func (p Policy) MonthCut(lvl int) bool {
	if lvl < 1 || lvl > len(p.Levels) {
		return false
	}
	l := p.Levels[lvl-1]
	if l.Kind != KindSession && !(l.Kind == KindCalendar && l.Period == PeriodWeek) {
		return false
	}
	for _, up := range p.Levels[lvl:] {
		if up.Kind == KindCalendar && up.Period == PeriodMonth {
			return true
		}
	}
	return false
}

// LevelOf returns the pyramid level (1-based) of the calendar level with
// period k, or 0 if the policy has none.
func (p Policy) LevelOf(k PeriodKind) int {
	for i, l := range p.Levels {
		if l.Kind == KindCalendar && l.Period == k {
			return i + 1
		}
	}
	return 0
}

// Duration is a time.Duration that reads and writes as text ("168h",
// "30m") in configuration files and JSON.
type Duration time.Duration

// String writes the duration as time.Duration.String does.
func (d Duration) String() string { return time.Duration(d).String() }

// MarshalText writes the duration as time.Duration.String does.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UnmarshalText reads a duration as ParseDuration does, a negative one
// too: Policy.Validate then names the level whose window it is.
func (d *Duration) UnmarshalText(b []byte) error {
	s := strings.TrimSpace(string(b))
	v, ok := parseDuration(s)
	if !ok {
		return Errorf(EINVALID, "duration %q: %s", s, durationWant)
	}
	*d = Duration(v)
	return nil
}

const durationWant = "want a duration like 30m, 720h or 30d"

// ParseDuration reads a duration that is not negative, as
// time.ParseDuration does ("30m", "168h"), or in days ("7d"), as the
// configuration writes windows and ages.
func ParseDuration(s string) (time.Duration, error) {
	d, ok := parseDuration(s)
	if !ok || d < 0 {
		return 0, Errorf(EINVALID, "%s", durationWant)
	}
	return d, nil
}

// parseDuration reads a Go duration or a whole number of days, of either
// sign.
func parseDuration(s string) (time.Duration, bool) {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.Atoi(n)
		return time.Duration(days) * 24 * time.Hour, err == nil
	}
	d, err := time.ParseDuration(s)
	return d, err == nil
}

// LevelName returns the name of pyramid level lvl; level 0 is "turns".
func (p Policy) LevelName(lvl int) string {
	if lvl <= 0 || lvl > len(p.Levels) {
		return "turns"
	}
	return p.Levels[lvl-1].Name
}
