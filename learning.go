package strata

import (
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
	ID           int64     `json:"id"` // assigned by the store, unique in the store
	Conversation string    `json:"conversation"`
	Subject      string    `json:"subject"` // normalized key of what the fact is about ("caroline|job"); facts with the same subject and a new text supersede
	Text         string    `json:"text"`
	Node         string    `json:"node"`      // provenance: the node it came from
	FirstSeq     int64     `json:"first_seq"` // and the turns that node covers
	LastSeq      int64     `json:"last_seq"`
	Status       string    `json:"status"`
	SupersededBy int64     `json:"superseded_by,omitempty"`
	Created      time.Time `json:"created"`
	Updated      time.Time `json:"updated"`
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
