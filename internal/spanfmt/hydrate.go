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
	h := &hydration{store: store, seg: seg, namespace: namespace, conversation: conversation, out: out,
		bySpan: map[int64][]Stub{}, whole: map[int64]strata.Turn{}, periods: map[string]*window{}, owner: map[string]Span{}}
	drop, err := h.group(stubs)
	if err != nil {
		return nil, err
	}
	if err := h.readSpans(span); err != nil {
		return nil, err
	}
	if err := h.readSegments(ctx); err != nil {
		return nil, err
	}
	if err := h.fill(); err != nil {
		return nil, err
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

// A hydration is the state of one Hydrate.
type hydration struct {
	store, namespace, conversation string
	seg                            archive.Segments
	out                            []strata.Turn
	bySpan                         map[int64][]Stub // the stubs, by span key
	order                          []int64          // the span keys, in the order of their first stub
	spans                          map[int64]Span   // by key
	whole                          map[int64]strata.Turn
	periods                        map[string]*window // the seqs to read of each segment
	periodOrder                    []string
	owner                          map[string]Span // a span naming each period, for errors
}

// A window is the range of seqs to read of a segment.
type window struct{ lo, hi int64 }

// group groups the stubs by span and returns the indexes in out of the
// expired ones.
func (h *hydration) group(stubs []Stub) (map[int]bool, error) {
	drop := map[int]bool{}
	for _, st := range stubs {
		if st.Tier == TierExpired {
			drop[st.Index] = true
			continue
		}
		if !st.HasSpan {
			return nil, fmt.Errorf("%s: turn %d of %q: %s with no span", h.store, h.out[st.Index].Seq, h.conversation, TierName(st.Tier))
		}
		if _, ok := h.bySpan[st.Span]; !ok {
			h.order = append(h.order, st.Span)
		}
		h.bySpan[st.Span] = append(h.bySpan[st.Span], st)
	}
	return drop, nil
}

// readSpans reads each span once: the turns of a warm one from its block,
// and for a cold one the window of seqs to read of each of its segments.
func (h *hydration) readSpans(span func(key int64) (Span, error)) error {
	h.spans = make(map[int64]Span, len(h.order))
	out := h.out
	for _, key := range h.order {
		sts := h.bySpan[key]
		sp, err := span(key)
		if err != nil {
			return fmt.Errorf("%s: span of turn %d of %q: %w", h.store, out[sts[0].Index].Seq, h.conversation, err)
		}
		h.spans[key] = sp
		lo, hi := out[sts[0].Index].Seq, out[sts[0].Index].Seq
		for _, st := range sts {
			lo, hi = min(lo, out[st.Index].Seq), max(hi, out[st.Index].Seq)
		}
		switch sp.Tier {
		case TierWarm:
			ts, err := DecodeBlock(sp.Block)
			if err != nil {
				return fmt.Errorf("%s: warm block of node %s of %q: %w", h.store, sp.ID, h.conversation, err)
			}
			for _, t := range ts {
				h.whole[t.Seq] = t
			}
		case TierCold:
			lo, hi = max(lo, sp.First), min(hi, sp.Last)
			for _, p := range sp.Periods {
				w := h.periods[p]
				if w == nil {
					h.periods[p] = &window{lo, hi}
					h.periodOrder = append(h.periodOrder, p)
					h.owner[p] = sp
					continue
				}
				w.lo, w.hi = min(w.lo, lo), max(w.hi, hi)
			}
		default:
			return fmt.Errorf("%s: node %s of %q is %s: its turns are in their rows", h.store, sp.ID, h.conversation, TierName(sp.Tier))
		}
	}
	return nil
}

// readSegments reads the turns of the cold spans from the windows of
// their segments, each segment once.
func (h *hydration) readSegments(ctx context.Context) error {
	out, conversation, seg := h.out, h.conversation, h.seg
	wanted := map[int64]*strata.Turn{}
	for _, key := range h.order {
		if h.spans[key].Tier == TierCold {
			for _, st := range h.bySpan[key] {
				wanted[out[st.Index].Seq] = &out[st.Index]
			}
		}
	}
	for _, p := range h.periodOrder {
		w := h.periods[p]
		key := archive.Key(h.namespace, conversation, p)
		recs, err := seg.Read(ctx, key, w.lo, w.hi)
		if errors.Is(err, fs.ErrNotExist) {
			return strata.Errorf(strata.ENOTFOUND, "archive segment %s of conversation %q (node %s) is missing",
				seg.Blobs.Locate(key), conversation, h.owner[p].ID)
		}
		if err != nil {
			return fmt.Errorf("node %s of %q: %w", h.owner[p].ID, conversation, err)
		}
		for _, r := range recs {
			row, ok := wanted[r.Seq]
			if !ok {
				continue // in the period's window, not asked for
			}
			t, err := DecodeRecord(r.Line, row)
			if err != nil {
				return fmt.Errorf("archive segment %s: turn %d: %w", seg.Blobs.Locate(key), r.Seq, err)
			}
			h.whole[t.Seq] = t
		}
	}
	return nil
}

// fill replaces each stub by its whole turn, which must be the turn the
// stub's row names.
func (h *hydration) fill() error {
	for _, key := range h.order {
		sp := h.spans[key]
		for _, st := range h.bySpan[key] {
			stub := &h.out[st.Index]
			t, ok := h.whole[stub.Seq]
			if !ok {
				return fmt.Errorf("%s: turn %d of %q is missing from the %s copy of node %s", h.store, stub.Seq, h.conversation, TierName(sp.Tier), sp.ID)
			}
			if t.ExtID != stub.ExtID {
				return fmt.Errorf("%s: turn %d of %q: the %s copy of node %s holds ext_id %q, the row %q",
					h.store, stub.Seq, h.conversation, TierName(sp.Tier), sp.ID, t.ExtID, stub.ExtID)
			}
			*stub = t
		}
	}
	return nil
}

// HydrateReadable is Hydrate for search: a span whose copy cannot be read
// (a segment removed by hand) loses its turns, not the search. hydrate is
// the store's Hydrate of one conversation. It hydrates every span at
// once, and span by span if that fails, keeping the turns of ts that are
// no stub; it fails only if ctx is done.
func HydrateReadable(ctx context.Context, ts []strata.Turn, stubs []Stub, hydrate func([]strata.Turn, []Stub) ([]strata.Turn, error)) ([]strata.Turn, error) {
	whole, err := hydrate(ts, stubs)
	if err == nil || ctx.Err() != nil {
		return whole, err
	}
	isStub := make(map[int]bool, len(stubs))
	for _, st := range stubs {
		isStub[st.Index] = true
	}
	var out []strata.Turn
	for i, t := range ts {
		if !isStub[i] {
			out = append(out, t) // hot: whole in its row
		}
	}
	bySpan := map[int64][]int{}
	var order []int64
	for i, st := range stubs {
		if _, ok := bySpan[st.Span]; !ok {
			order = append(order, st.Span)
		}
		bySpan[st.Span] = append(bySpan[st.Span], i)
	}
	for _, sp := range order {
		var part []strata.Turn
		var local []Stub
		for _, i := range bySpan[sp] {
			st := stubs[i]
			part = append(part, ts[st.Index])
			st.Index = len(part) - 1
			local = append(local, st)
		}
		whole, err := hydrate(part, local)
		if err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			continue
		}
		out = append(out, whole...)
	}
	return out, nil
}

// HydrateHits fills the turns of the search hits whose rows are stubs
// (stubs index hits) with the whole turns from their spans' copies, and
// drops the hits whose turn has none (expired, or its copy unreadable).
// hydrate reads the copies of one conversation's stubs (HydrateReadable):
// each conversation's are read at once, so that each span and segment is
// read once.
func HydrateHits(hits []strata.Hit, stubs []Stub, hydrate func(conversation string, ts []strata.Turn, stubs []Stub) ([]strata.Turn, error)) ([]strata.Hit, error) {
	byConv := map[string][]Stub{}
	var convs []string
	for _, st := range stubs {
		c := hits[st.Index].Conversation
		if byConv[c] == nil {
			convs = append(convs, c)
		}
		byConv[c] = append(byConv[c], st)
	}
	for _, c := range convs {
		sts := byConv[c]
		ts := make([]strata.Turn, len(sts))
		local := make([]Stub, len(sts))
		for i, st := range sts {
			ts[i] = *hits[st.Index].Turn
			local[i] = st
			local[i].Index = i
		}
		whole, err := hydrate(c, ts, local)
		if err != nil {
			return nil, err
		}
		bySeq := make(map[int64]strata.Turn, len(whole))
		for _, t := range whole {
			bySeq[t.Seq] = t
		}
		for i, st := range sts {
			h := &hits[st.Index]
			if t, ok := bySeq[ts[i].Seq]; ok {
				*h.Turn = t
			} else {
				h.Turn = nil // expired or unreadable: dropped below
			}
		}
	}
	kept := hits[:0]
	for _, h := range hits {
		if h.Turn != nil {
			kept = append(kept, h)
		}
	}
	return kept, nil
}
