package spanfmt

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/archive"
)

// Tier codes, as both stores keep them in their turn and node rows.
const (
	TierHot     = 0
	TierWarm    = 1
	TierCold    = 2
	TierExpired = 3
)

// TierCode is the code of t.
func TierCode(t strata.Tier) int {
	switch t {
	case strata.TierWarm:
		return TierWarm
	case strata.TierCold:
		return TierCold
	case strata.TierExpired:
		return TierExpired
	}
	return TierHot
}

// TierName is the tier of code c.
func TierName(c int) strata.Tier {
	switch c {
	case TierWarm:
		return strata.TierWarm
	case TierCold:
		return strata.TierCold
	case TierExpired:
		return strata.TierExpired
	}
	return strata.TierHot
}

// Span is a level-1 node's copy of its turns, as a store reads it.
type Span struct {
	ID          string
	First, Last int64
	Tier        int      // a tier code
	Block       []byte   // the warm block
	Periods     []string // the archive segment periods of a cold span (months, or days for spans made cold before months)
}

// Stub is a turn row whose content lives with its span.
type Stub struct {
	Index   int   // in the turns being filled
	Tier    int   // the row's tier code
	Span    int64 // the store's key of the level-1 node holding the content
	HasSpan bool  // whether the row names one
}

// Hydrate replaces the stubs of out (turn rows whose content lives with
// their span) by the whole turns from the spans' warm blocks or archive
// segments, and drops the expired ones. span reads a level-1 node by the
// key a stub names; seg reads the conversation's segments. Each span is
// read once, and each segment once for every cold span that needs it.
// store names the store in errors ("sqlite", "postgres"). A missing
// segment is an ENOTFOUND error naming it; a copy that lacks a turn or
// holds another is an error naming the node.
func Hydrate(ctx context.Context, store string, seg archive.Segments, namespace, conversation string,
	out []strata.Turn, stubs []Stub, span func(key int64) (Span, error)) ([]strata.Turn, error) {
	if len(stubs) == 0 {
		return out, nil
	}
	bySpan := map[int64][]Stub{}
	var order []int64
	drop := map[int]bool{}
	for _, st := range stubs {
		if st.Tier == TierExpired {
			drop[st.Index] = true
			continue
		}
		if !st.HasSpan {
			return nil, fmt.Errorf("%s: turn %d of %q: %s with no span", store, out[st.Index].Seq, conversation, TierName(st.Tier))
		}
		if _, ok := bySpan[st.Span]; !ok {
			order = append(order, st.Span)
		}
		bySpan[st.Span] = append(bySpan[st.Span], st)
	}
	spans := make(map[int64]Span, len(order))
	whole := map[int64]strata.Turn{}
	type window struct{ lo, hi int64 }
	periods := map[string]*window{}
	var periodOrder []string
	owner := map[string]Span{} // a span naming each period, for errors
	for _, key := range order {
		sts := bySpan[key]
		sp, err := span(key)
		if err != nil {
			return nil, fmt.Errorf("%s: span of turn %d of %q: %w", store, out[sts[0].Index].Seq, conversation, err)
		}
		spans[key] = sp
		lo, hi := out[sts[0].Index].Seq, out[sts[0].Index].Seq
		for _, st := range sts {
			lo, hi = min(lo, out[st.Index].Seq), max(hi, out[st.Index].Seq)
		}
		switch sp.Tier {
		case TierWarm:
			ts, err := DecodeBlock(sp.Block)
			if err != nil {
				return nil, fmt.Errorf("%s: warm block of node %s of %q: %w", store, sp.ID, conversation, err)
			}
			for _, t := range ts {
				whole[t.Seq] = t
			}
		case TierCold:
			lo, hi = max(lo, sp.First), min(hi, sp.Last)
			for _, p := range sp.Periods {
				w := periods[p]
				if w == nil {
					periods[p] = &window{lo, hi}
					periodOrder = append(periodOrder, p)
					owner[p] = sp
					continue
				}
				w.lo, w.hi = min(w.lo, lo), max(w.hi, hi)
			}
		default:
			return nil, fmt.Errorf("%s: node %s of %q is %s: its turns are in their rows", store, sp.ID, conversation, TierName(sp.Tier))
		}
	}
	wanted := map[int64]*strata.Turn{}
	for _, key := range order {
		if spans[key].Tier == TierCold {
			for _, st := range bySpan[key] {
				wanted[out[st.Index].Seq] = &out[st.Index]
			}
		}
	}
	for _, p := range periodOrder {
		w := periods[p]
		key := archive.Key(namespace, conversation, p)
		recs, err := seg.Read(ctx, key, w.lo, w.hi)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, strata.Errorf(strata.ENOTFOUND, "archive segment %s of conversation %q (node %s) is missing",
				seg.Blobs.Locate(key), conversation, owner[p].ID)
		}
		if err != nil {
			return nil, fmt.Errorf("node %s of %q: %w", owner[p].ID, conversation, err)
		}
		for _, r := range recs {
			row, ok := wanted[r.Seq]
			if !ok {
				continue // in the period's window, not asked for
			}
			t, err := DecodeRecord(r.Line, row)
			if err != nil {
				return nil, fmt.Errorf("archive segment %s: turn %d: %w", seg.Blobs.Locate(key), r.Seq, err)
			}
			whole[t.Seq] = t
		}
	}
	for _, key := range order {
		sp := spans[key]
		for _, st := range bySpan[key] {
			stub := &out[st.Index]
			t, ok := whole[stub.Seq]
			if !ok {
				return nil, fmt.Errorf("%s: turn %d of %q is missing from the %s copy of node %s", store, stub.Seq, conversation, TierName(sp.Tier), sp.ID)
			}
			if t.ExtID != stub.ExtID {
				return nil, fmt.Errorf("%s: turn %d of %q: the %s copy of node %s holds ext_id %q, the row %q",
					store, stub.Seq, conversation, TierName(sp.Tier), sp.ID, t.ExtID, stub.ExtID)
			}
			*stub = t
		}
	}
	if len(drop) == 0 {
		return out, nil
	}
	kept := out[:0]
	for i := range out {
		if !drop[i] {
			kept = append(kept, out[i])
		}
	}
	return kept, nil
}
