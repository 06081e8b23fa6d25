package strata

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode"
)

// Learning statuses.
const (
	LearningAuto       = "auto"       // extracted, not reviewed
	LearningConfirmed  = "confirmed"  // a person confirmed it: pinned in context packages
	LearningRejected   = "rejected"   // a person rejected it
	LearningSuperseded = "superseded" // a newer fact about the same subject replaced it
)

// Learning is a key fact extracted from the turns of a conversation, with
// its provenance and its status. A learning is active while its status is
// auto or confirmed; at most one text per subject is active after each
// AddLearnings, and the learnings it replaced stay as history, superseded.
//
// Subjects are compared as they are (the caller normalizes them); texts are
// compared as NormalizeLearningText returns them. AddLearnings keeps
// Created and Updated when they are set: a zero Created is the time of
// adding, a zero Updated is Created.
type Learning struct {
	ID           int64  `json:"id"` // assigned by the store, unique in the store
	Conversation string `json:"conversation"`
	Subject      string `json:"subject"` // normalized key of what the fact is about ("caroline|lives in"); facts with the same subject and a new text supersede
	Text         string `json:"text"`
	// The fact's parts, when it was read as a statement about a named
	// subject: who or what it is about ("Caroline"), the attribute as
	// normalized for supersession ("lives in"), and the rest ("Boston").
	About     string `json:"about,omitempty"`
	Attribute string `json:"attribute,omitempty"`
	Value     string `json:"value,omitempty"`
	// When is the date (2006-01-02), or the first and last dates joined by
	// "..", that the fact's time words name, resolved against the time of
	// the turn it came from; "" if it names none.
	When         string           `json:"when,omitempty"`
	Sources      []LearningSource `json:"sources,omitempty"` // the turns it came from, in order
	Node         string           `json:"node"`              // provenance: the node it came from
	FirstSeq     int64            `json:"first_seq"`         // and the turns that node covers
	LastSeq      int64            `json:"last_seq"`
	Status       string           `json:"status"`
	SupersededBy int64            `json:"superseded_by,omitempty"`
	Created      time.Time        `json:"created"`
	Updated      time.Time        `json:"updated"`
}

// LearningSource is a turn a learning came from.
type LearningSource struct {
	Seq   int64  `json:"seq"`
	ExtID string `json:"ext_id,omitempty"`
}

// Active reports whether l is in force: auto or confirmed.
func (l Learning) Active() bool {
	return l.Status == LearningAuto || l.Status == LearningConfirmed
}

// LearningFilter selects learnings of one namespace. Zero fields do not
// filter.
type LearningFilter struct {
	Namespace, Conversation string   // Conversation "" = the whole namespace
	Statuses                []string // empty: every status
	Subject                 string   // "" = any
	IDs                     []int64
	Limit                   int
	// Newest lists the newest first (id descending), so that Limit keeps
	// the newest learnings that match rather than the oldest.
	Newest bool
}

// NormalizeLearningText returns the form of a learning's text that stores
// compare to find repeats: lower case, runs of white space as one space,
// without leading or trailing space and without final punctuation.
// "Caroline works at Acme." and "  caroline works at ACME!" normalize
// alike.
func NormalizeLearningText(text string) string {
	s := strings.Join(strings.Fields(strings.ToLower(text)), " ")
	return strings.TrimRightFunc(s, func(r rune) bool { return unicode.IsPunct(r) || unicode.IsSpace(r) })
}

// EncodeLearningSources is how stores keep a learning's sources: a JSON
// list of {"seq", "ext_id"}, or "" for none.
func EncodeLearningSources(ss []LearningSource) string {
	if len(ss) == 0 {
		return ""
	}
	b, _ := json.Marshal(ss) // a list of plain structs always marshals
	return string(b)
}

// DecodeLearningSources reverses EncodeLearningSources.
func DecodeLearningSources(s string) ([]LearningSource, error) {
	if s == "" {
		return nil, nil
	}
	var out []LearningSource
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		return nil, fmt.Errorf("sources %q: %w", s, err)
	}
	return out, nil
}

// checkLearningWhen reports whether w is a Learning.When: "", a date, or
// two dates in order joined by "..".
func checkLearningWhen(w string) bool {
	if w == "" {
		return true
	}
	a, b, rng := strings.Cut(w, "..")
	ta, err := time.Parse(time.DateOnly, a)
	if err != nil {
		return false
	}
	if !rng {
		return true
	}
	tb, err := time.Parse(time.DateOnly, b)
	return err == nil && !tb.Before(ta)
}
