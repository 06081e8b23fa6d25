package strata

// This file holds what SetImportance and ReplaceNodes decide about where
// turns' content lives: a pinned turn (a milestone) keeps its content in
// its row whatever the tier of its span, and an unpinned one in a warm or
// cold span keeps it only in that span's copy; a span that expired keeps
// only its summary. Every store follows these decisions; how it moves
// content (blocks, segments, indexes) is its own.

// PinMove is what SetImportance does with a turn's content.
type PinMove int

const (
	// PinKeep changes the importance only: the row holds the content and
	// keeps it (pinned, or in no span beyond the hot tier), or the row is
	// a stub whose importance does not change.
	PinKeep PinMove = iota
	// PinRelease writes the turn, with its new importance, into its warm
	// or cold span's copy, then leaves the row without its content (and,
	// in a cold span, out of the full-text index), as a move to that tier
	// leaves it: the turn stopped being pinned.
	PinRelease
	// PinRestore takes the whole turn back from its span's copy into its
	// row (and, from a cold span, into the full-text index): a stub became
	// pinned. The copy is left as it is.
	PinRestore
	// PinRewrite rewrites the turn in its span's copy with its new
	// importance; the row stays a stub: an unpinned stub changed
	// importance.
	PinRewrite
)

func (m PinMove) String() string {
	switch m {
	case PinKeep:
		return "keep"
	case PinRelease:
		return "release"
	case PinRestore:
		return "restore"
	case PinRewrite:
		return "rewrite"
	}
	return "unknown"
}

// DecidePin says what SetImportance does when the importance of turn seq
// of conversation changes from old to importance. row is where the row's
// content is: TierHot when the row holds it (hot, or pinned in any tier),
// TierWarm or TierCold for a stub whose content is in its span's copy,
// TierExpired when it was deleted. span is the tier of the level-1 node
// whose span covers the turn when that tier is beyond hot ("" or TierHot
// otherwise), and spanID that node's id.
//
// It is ECONFLICT for a turn whose content expired (only its span's
// summary is left to pin), and for unpinning a turn of an expired span
// (its row holds the only copy of it).
func DecidePin(conversation string, seq int64, row, span Tier, spanID string, old, importance float64) (PinMove, error) {
	pinned := importance >= PinnedImportance
	switch row {
	case TierExpired:
		return PinKeep, Errorf(ECONFLICT, "turn %d of %q expired: only its span's summary is left", seq, conversation)
	case TierWarm, TierCold:
		switch {
		case pinned:
			return PinRestore, nil
		case old != importance:
			return PinRewrite, nil
		}
		return PinKeep, nil
	}
	if pinned {
		return PinKeep, nil
	}
	switch span {
	case TierExpired:
		return PinKeep, Errorf(ECONFLICT,
			"turn %d of %q cannot be unpinned: its span (node %s) expired, so its row holds the only copy of it",
			seq, conversation, spanID)
	case TierWarm, TierCold:
		return PinRelease, nil
	}
	return PinKeep, nil
}

// CheckNodeRemoval says what ReplaceNodes does before it removes node n
// of conversation (its ID, Level and Tier set): restore reports that n is
// a level-1 node whose span is warm or cold, whose turns go back to the
// hot tier first, byte for byte and searchable again, since their copy
// hangs off n. A node whose span expired cannot be removed (ECONFLICT):
// its summary is all that is left of its turns.
func CheckNodeRemoval(conversation string, n Node) (restore bool, err error) {
	switch n.Tier {
	case TierExpired:
		return false, Errorf(ECONFLICT,
			"node %s of %q cannot be replaced: its span expired, and its summary is all that is left of its turns", n.ID, conversation)
	case TierWarm, TierCold:
		return n.Level == 1, nil
	}
	return false, nil
}
