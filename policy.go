package strata

import (
	"fmt"
	"strings"
)

// Level kinds. Only count levels exist so far; session and calendar levels
// share the same engine once they land.
const (
	KindCount = "count"
)

// Level describes how one rung of the pyramid is formed.
type Level struct {
	// Name shows in trees and provenance ("micro", "mini", "macro").
	Name string `json:"name" yaml:"name"`
	// Kind is how spans close; "count" closes a node every Span children.
	Kind string `json:"kind" yaml:"kind"`
	// Span is the number of children per node: turns for the first level,
	// nodes of the level below for the others.
	Span int `json:"span" yaml:"span"`
	// Budget is the token budget of one node's summary.
	Budget int `json:"budget" yaml:"budget"`
	// Summarizer names the strategy ("extractive").
	Summarizer string `json:"summarizer,omitempty" yaml:"summarizer,omitempty"`
}

// Policy is the shape of a conversation's pyramid: its levels, finest
// first. Level i of Levels is pyramid level i+1; level 0 is the raw turns.
type Policy struct {
	Name   string  `json:"name" yaml:"name"`
	Levels []Level `json:"levels" yaml:"levels"`
}

// ChunksPolicy is the default count pyramid: micro = 10 turns, mini = 2
// micros (20 turns), macro = 5 minis (100 turns).
func ChunksPolicy() Policy {
	return Policy{Name: "chunks", Levels: []Level{
		{Name: "micro", Kind: KindCount, Span: 10, Budget: 100, Summarizer: MethodExtractive},
		{Name: "mini", Kind: KindCount, Span: 2, Budget: 160, Summarizer: MethodExtractive},
		{Name: "macro", Kind: KindCount, Span: 5, Budget: 240, Summarizer: MethodExtractive},
	}}
}

// Preset returns the named built-in policy.
func Preset(name string) (Policy, error) {
	switch name {
	case "", "chunks":
		return ChunksPolicy(), nil
	}
	return Policy{}, Errorf(EINVALID, "unknown policy %q (known: chunks)", name)
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
		if l.Kind != KindCount {
			return Errorf(EINVALID, "%s (%s): kind %q is not supported (want %q)", where, l.Name, l.Kind, KindCount)
		}
		min := 2
		if i == 0 {
			min = 1
		}
		if l.Span < min || l.Span > 10000 {
			return Errorf(EINVALID, "%s (%s): span %d is outside %d..10000", where, l.Name, l.Span, min)
		}
		if l.Budget < 16 || l.Budget > 100000 {
			return Errorf(EINVALID, "%s (%s): budget %d is outside 16..100000 tokens", where, l.Name, l.Budget)
		}
		switch l.Summarizer {
		case "", MethodExtractive:
		default:
			return Errorf(EINVALID, "%s (%s): summarizer %q is not available (want extractive)", where, l.Name, l.Summarizer)
		}
	}
	return nil
}

// TurnsPerNode returns how many turns a node of pyramid level lvl (1-based)
// covers.
func (p Policy) TurnsPerNode(lvl int) int64 {
	n := int64(1)
	for i := 0; i < lvl && i < len(p.Levels); i++ {
		n *= int64(p.Levels[i].Span)
	}
	return n
}

// LevelName returns the name of pyramid level lvl; level 0 is "turns".
func (p Policy) LevelName(lvl int) string {
	if lvl <= 0 || lvl > len(p.Levels) {
		return "turns"
	}
	return p.Levels[lvl-1].Name
}
