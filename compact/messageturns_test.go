package compact_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/strata-memory/strata/compact"
)

// TestMessageTurnsIDsProperty: a message's ext id depends on its place
// and its content only: the same list grown by more messages gives its
// first messages the same ids, and a message whose text changes at its
// place gets a new id.
func TestMessageTurnsIDsProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		texts := rapid.SliceOfN(rapid.SampledFrom([]string{"yes", "no", "the orchard", "yes", ""}), 1, 12).Draw(rt, "texts")
		more := rapid.IntRange(0, 4).Draw(rt, "more")
		list := func(texts []string) []*compact.Message {
			var raw []map[string]any
			for i, s := range texts {
				role := "user"
				if i%2 == 1 {
					role = "assistant"
				}
				raw = append(raw, map[string]any{"role": role, "content": s})
			}
			b, _ := json.Marshal(raw)
			tr, err := compact.Parse(compact.OpenAI, b)
			if err != nil {
				rt.Fatal(err)
			}
			return tr.Messages
		}
		at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		short := compact.MessageTurns(list(texts), 0, "p-", at)
		grown := append(append([]string(nil), texts...), strings.Split(strings.Repeat("more,", more), ",")[:more]...)
		long := compact.MessageTurns(list(grown), 0, "p-", at)
		seen := map[string]bool{}
		for i := range short {
			if short[i].ExtID != long[i].ExtID {
				rt.Fatalf("message %d: id %s, then %s once the list grew", i, short[i].ExtID, long[i].ExtID)
			}
			if seen[short[i].ExtID] {
				rt.Fatalf("message %d: id %s given twice", i, short[i].ExtID)
			}
			seen[short[i].ExtID] = true
			if !short[i].Time.Equal(at) || !strings.HasPrefix(short[i].ExtID, "p-") {
				rt.Fatalf("message %d: %+v", i, short[i])
			}
		}
		i := rapid.IntRange(0, len(texts)-1).Draw(rt, "changed")
		changed := append([]string(nil), texts...)
		changed[i] += " (edited)"
		if c := compact.MessageTurns(list(changed), 0, "p-", at); c[i].ExtID == short[i].ExtID {
			rt.Fatalf("message %d changed but kept id %s", i, c[i].ExtID)
		}
		if from := rapid.IntRange(0, len(texts)).Draw(rt, "from"); len(compact.MessageTurns(list(texts), from, "p-", at)) != len(texts)-from {
			rt.Fatalf("from %d: wrong count", from)
		}
	})
}
