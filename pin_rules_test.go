package strata_test

import (
	"strings"
	"testing"

	"github.com/strata-memory/strata"
)

// TestDecidePin: a pinned turn keeps its content in its row whatever the
// tier of its span; an unpinned one in a warm or cold span keeps it only
// in the span's copy; a turn whose content expired cannot be pinned, nor
// one whose row holds the only copy unpinned.
func TestDecidePin(t *testing.T) {
	const (
		hot, warm, cold, expired = strata.TierHot, strata.TierWarm, strata.TierCold, strata.TierExpired
		pin, unpin, low          = 0.9, 0.3, 0.1
	)
	for _, tc := range []struct {
		name        string
		row, span   strata.Tier
		old, to     float64
		want        strata.PinMove
		conflictSay string
	}{
		{"hot turn, no span", hot, "", low, unpin, strata.PinKeep, ""},
		{"hot turn pinned, no span", hot, "", low, pin, strata.PinKeep, ""},
		{"hot turn in a hot span", hot, hot, pin, unpin, strata.PinKeep, ""},
		{"pinned row in a warm span stays pinned", hot, warm, pin, 1, strata.PinKeep, ""},
		{"pinned row in a cold span stays pinned", hot, cold, pin, pin, strata.PinKeep, ""},
		{"pinned row in a warm span unpinned", hot, warm, pin, unpin, strata.PinRelease, ""},
		{"pinned row in a cold span unpinned", hot, cold, pin, low, strata.PinRelease, ""},
		{"unpinned to just below the threshold", hot, cold, pin, strata.PinnedImportance - 0.01, strata.PinRelease, ""},
		{"pinned row of an expired span stays pinned", hot, expired, pin, 1, strata.PinKeep, ""},
		{"pinned row of an expired span unpinned", hot, expired, pin, unpin, strata.PinKeep, "cannot be unpinned"},
		{"warm stub pinned", warm, warm, low, pin, strata.PinRestore, ""},
		{"cold stub pinned at the threshold", cold, cold, low, strata.PinnedImportance, strata.PinRestore, ""},
		{"warm stub changes importance", warm, warm, low, unpin, strata.PinRewrite, ""},
		{"cold stub changes importance", cold, cold, unpin, 0, strata.PinRewrite, ""},
		{"stub keeps its importance", cold, cold, unpin, unpin, strata.PinKeep, ""},
		{"expired turn", expired, expired, low, pin, strata.PinKeep, "expired"},
		{"expired turn, unchanged", expired, expired, low, low, strata.PinKeep, "expired"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := strata.DecidePin("c", 7, tc.row, tc.span, "L1-0001", tc.old, tc.to)
			if tc.conflictSay != "" {
				if strata.ErrorCode(err) != strata.ECONFLICT || !strings.Contains(err.Error(), tc.conflictSay) ||
					!strings.Contains(err.Error(), "turn 7") {
					t.Fatalf("DecidePin = %v, %v; want ECONFLICT naming turn 7 and saying %q", got, err, tc.conflictSay)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("DecidePin = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

// TestCheckNodeRemoval: a removed level-1 node of a warm or cold span
// gives its turns back first; a node of an expired span is refused.
func TestCheckNodeRemoval(t *testing.T) {
	for _, tc := range []struct {
		level   int
		tier    strata.Tier
		restore bool
		code    string
	}{
		{1, "", false, ""},
		{1, strata.TierHot, false, ""},
		{1, strata.TierWarm, true, ""},
		{1, strata.TierCold, true, ""},
		{1, strata.TierExpired, false, strata.ECONFLICT},
		{2, strata.TierHot, false, ""},
		{2, strata.TierCold, false, ""},
		{3, strata.TierExpired, false, strata.ECONFLICT},
	} {
		restore, err := strata.CheckNodeRemoval("c", strata.Node{ID: "L1-0001", Level: tc.level, Tier: tc.tier})
		if restore != tc.restore || strata.ErrorCode(err) != tc.code {
			t.Errorf("level %d, tier %q: restore %v, error %v; want restore %v, code %q", tc.level, tc.tier, restore, err, tc.restore, tc.code)
		}
		if err != nil && !strings.Contains(err.Error(), "node L1-0001") {
			t.Errorf("level %d, tier %q: error %q does not name the node", tc.level, tc.tier, err)
		}
	}
}
