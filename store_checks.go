package strata

import (
	"math"
	"time"
)

// This file holds the checks of arguments that every Store makes alike,
// so that each store refuses the same input with the same EINVALID error
// before it reads or writes anything.

// CheckKind returns an EINVALID error, prefixed with what, for a kind
// other than "" (both), KindTurn or KindSummary.
func CheckKind(what, kind string) error {
	switch kind {
	case "", KindTurn, KindSummary:
		return nil
	}
	return Errorf(EINVALID, "%s: unknown kind %q (want %q, %q or empty)", what, kind, KindTurn, KindSummary)
}

// CheckSearch returns an EINVALID error, naming the field, for a search
// query every store refuses: an unknown Kind, a negative FromSeq, and a
// FromSeq without a Conversation.
func CheckSearch(q SearchQuery) error {
	if err := CheckKind("search", q.Kind); err != nil {
		return err
	}
	if q.FromSeq < 0 {
		return Errorf(EINVALID, "search: from_seq %d is negative", q.FromSeq)
	}
	if q.FromSeq > 0 && q.Conversation == "" {
		return Errorf(EINVALID, "search: from_seq needs a conversation")
	}
	return nil
}

// CheckEmbeddings returns an EINVALID error, naming the field, for what
// PutEmbeddings refuses whatever is stored: an empty space.Model, a
// space.Dim below 1, a vector whose length is not space.Dim or that holds
// NaN or infinity, and a turn's ref (no node id) with a level. That a
// turn seq or node id exists is the store's to check.
func CheckEmbeddings(space EmbedSpace, es []Embedding) error {
	if space.Model == "" {
		return Errorf(EINVALID, "put embeddings: space.model is empty")
	}
	if space.Dim < 1 {
		return Errorf(EINVALID, "put embeddings: space.dimensions %d is not positive", space.Dim)
	}
	for i, e := range es {
		if len(e.Vector) != space.Dim {
			return Errorf(EINVALID, "put embeddings: embeddings[%d].vector has %d dimensions, want %d", i, len(e.Vector), space.Dim)
		}
		if e.Node == "" && e.Level != 0 {
			return Errorf(EINVALID, "put embeddings: embeddings[%d].level %d: a turn's is 0 (a node needs its id)", i, e.Level)
		}
		for j, x := range e.Vector {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return Errorf(EINVALID, "put embeddings: embeddings[%d].vector[%d] is %v", i, j, x)
			}
		}
	}
	return nil
}

// CheckEmbedFilter returns an EINVALID error for an EmbedFilter that
// Unembedded refuses: an empty Space.Model, a negative Space.Dim or an
// unknown Kind.
func CheckEmbedFilter(f EmbedFilter) error {
	if f.Space.Model == "" {
		return Errorf(EINVALID, "unembedded: space.model is empty")
	}
	if f.Space.Dim < 0 {
		return Errorf(EINVALID, "unembedded: space.dimensions %d is negative", f.Space.Dim)
	}
	return CheckKind("unembedded", f.Kind)
}

// CheckVectorFilter returns an EINVALID error for a VectorFilter that
// Vectors (and CountVectors) refuse: an empty Space.Model or an unknown
// Kind.
func CheckVectorFilter(f VectorFilter) error {
	if f.Space.Model == "" {
		return Errorf(EINVALID, "vectors: space.model is empty")
	}
	return CheckKind("vectors", f.Kind)
}

// CheckImportance returns an EINVALID error for an importance that
// SetImportance refuses for turn seq: NaN, or outside 0..1.
func CheckImportance(seq int64, importance float64) error {
	if math.IsNaN(importance) || importance < 0 || importance > 1 {
		return Errorf(EINVALID, "importance %v of turn %d is outside 0..1", importance, seq)
	}
	return nil
}

// CheckClaim checks the arguments of ClaimStore.Claim: EINVALID for an
// empty key or holder, or an until not after now.
func CheckClaim(key, holder string, now, until time.Time) error {
	if key == "" || holder == "" {
		return Errorf(EINVALID, "claim: key and holder are required (key %q, holder %q)", key, holder)
	}
	if now.IsZero() || !until.After(now) {
		return Errorf(EINVALID, "claim %q: until %s is not after now %s",
			key, until.Format(time.RFC3339Nano), now.Format(time.RFC3339Nano))
	}
	return nil
}
