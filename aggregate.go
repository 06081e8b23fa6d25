package strata

import (
	"encoding/json"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Aggregates are statistics over the metadata of a span's turns (002's
// statistical aggregation): for every numeric metadata key (such as
// "stress" or "warmth") its count, mean, minimum and maximum; for every
// label metadata key (such as "emotion") how often each label occurs and
// which one dominates. A node of a higher level merges its children's.
type Aggregates struct {
	Numbers map[string]NumberStat `json:"numbers,omitempty"`
	Labels  map[string]LabelStat  `json:"labels,omitempty"`
}

// NumberStat summarizes the values of one numeric metadata key.
type NumberStat struct {
	Count int     `json:"count"`
	Sum   float64 `json:"sum"`
	Mean  float64 `json:"mean"`
	Min   float64 `json:"min"`
	Max   float64 `json:"max"`
}

// LabelStat counts the values of one label metadata key. Dominant is the
// most frequent label (the smallest in byte order on a tie).
type LabelStat struct {
	Counts   map[string]int `json:"counts"`
	Dominant string         `json:"dominant"`
}

// maxLabelLen and maxLabels bound what counts as a label: one short word
// (like "warmth" or "needs-review"), in a key with few distinct values.
// Phrases, captions, URLs and ids are text, not labels.
const (
	maxLabelLen = 32
	maxLabels   = 32
)

// AggregateTurns returns the statistics of the turns' top-level metadata,
// or nil if no turn has a numeric or label value. Booleans, nested values,
// and strings that are not one short word are not aggregated. A key whose values are
// sometimes numbers and sometimes labels is aggregated both ways.
func AggregateTurns(turns []Turn) *Aggregates {
	a := &Aggregates{}
	for i := range turns {
		for k, v := range turns[i].Metadata {
			switch x := v.(type) {
			case float64:
				a.addNumber(k, NumberStat{Count: 1, Sum: x, Min: x, Max: x})
			case int:
				a.addNumber(k, NumberStat{Count: 1, Sum: float64(x), Min: float64(x), Max: float64(x)})
			case int64:
				a.addNumber(k, NumberStat{Count: 1, Sum: float64(x), Min: float64(x), Max: float64(x)})
			case json.Number:
				if f, err := x.Float64(); err == nil {
					a.addNumber(k, NumberStat{Count: 1, Sum: f, Min: f, Max: f})
				}
			case string:
				if isLabel(x) {
					a.addLabels(k, map[string]int{x: 1})
				}
			}
		}
	}
	return a.finish()
}

// MergeAggregates merges the statistics of children; nil if none has any.
func MergeAggregates(children []*Aggregates) *Aggregates {
	a := &Aggregates{}
	for _, c := range children {
		if c == nil {
			continue
		}
		for k, n := range c.Numbers {
			a.addNumber(k, n)
		}
		for k, l := range c.Labels {
			a.addLabels(k, l.Counts)
		}
	}
	return a.finish()
}

func isLabel(s string) bool {
	if s == "" || len(s) > maxLabelLen || strings.Contains(s, "://") || !utf8.ValidString(s) {
		return false
	}
	return strings.IndexFunc(s, unicode.IsSpace) < 0
}

func (a *Aggregates) addNumber(k string, n NumberStat) {
	if math.IsNaN(n.Sum) || math.IsInf(n.Sum, 0) {
		return
	}
	if a.Numbers == nil {
		a.Numbers = map[string]NumberStat{}
	}
	cur, ok := a.Numbers[k]
	if !ok {
		a.Numbers[k] = n
		return
	}
	cur.Count += n.Count
	cur.Sum += n.Sum
	cur.Min = min(cur.Min, n.Min)
	cur.Max = max(cur.Max, n.Max)
	a.Numbers[k] = cur
}

func (a *Aggregates) addLabels(k string, counts map[string]int) {
	if a.Labels == nil {
		a.Labels = map[string]LabelStat{}
	}
	cur, ok := a.Labels[k]
	if !ok {
		cur = LabelStat{Counts: map[string]int{}}
	}
	for l, n := range counts {
		cur.Counts[l] += n
	}
	a.Labels[k] = cur
}

// finish computes means and dominant labels, drops label keys with too
// many distinct values (free text, not labels), and returns nil if
// nothing is left.
func (a *Aggregates) finish() *Aggregates {
	for k, n := range a.Numbers {
		n.Mean = n.Sum / float64(n.Count)
		a.Numbers[k] = n
	}
	for k, l := range a.Labels {
		if len(l.Counts) > maxLabels {
			delete(a.Labels, k)
			continue
		}
		labels := make([]string, 0, len(l.Counts))
		for s := range l.Counts {
			labels = append(labels, s)
		}
		sort.Strings(labels)
		l.Dominant = ""
		for _, s := range labels {
			if l.Dominant == "" || l.Counts[s] > l.Counts[l.Dominant] {
				l.Dominant = s
			}
		}
		a.Labels[k] = l
	}
	if len(a.Numbers) == 0 {
		a.Numbers = nil
	}
	if len(a.Labels) == 0 {
		a.Labels = nil
	}
	if a.Numbers == nil && a.Labels == nil {
		return nil
	}
	return a
}

// String renders the statistics on one line, keys in order, as a node's
// digest shows them: "stress mean 0.25 (n=8); emotion: warmth 5, calm 3".
func (a *Aggregates) String() string {
	if a == nil {
		return ""
	}
	var parts []string
	keys := make([]string, 0, len(a.Numbers))
	for k := range a.Numbers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		n := a.Numbers[k]
		parts = append(parts, k+" mean "+formatFloat(n.Mean)+" (n="+strconv.Itoa(n.Count)+", "+formatFloat(n.Min)+".."+formatFloat(n.Max)+")")
	}
	keys = keys[:0]
	for k := range a.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		l := a.Labels[k]
		labels := make([]string, 0, len(l.Counts))
		for s := range l.Counts {
			labels = append(labels, s)
		}
		sort.Slice(labels, func(i, j int) bool {
			if l.Counts[labels[i]] != l.Counts[labels[j]] {
				return l.Counts[labels[i]] > l.Counts[labels[j]]
			}
			return labels[i] < labels[j]
		})
		var b strings.Builder
		b.WriteString(k + ":")
		for i, s := range labels {
			if i == 5 {
				b.WriteString(" ...")
				break
			}
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(" " + s + " " + strconv.Itoa(l.Counts[s]))
		}
		parts = append(parts, b.String())
	}
	return strings.Join(parts, "; ")
}

// formatFloat writes f with at most three decimals.
func formatFloat(f float64) string {
	return strconv.FormatFloat(math.Round(f*1000)/1000, 'f', -1, 64)
}
