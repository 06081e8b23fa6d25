package sqlite

import (
	"database/sql"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// TestFastListsEqualJSON: reading facts and string lists without
// encoding/json gives what encoding/json gives, for lists as the store
// writes them (any strings: quotes, escapes, HTML characters, control
// and invalid bytes, facts found in the summary or not), and leaves to
// encoding/json whatever it does not read itself.
func TestFastListsEqualJSON(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		piece := rapid.OneOf(rapid.SampledFrom([]string{"a", "deploy", " ", "\"", "\\", "<b>", "&", "é", "東京", "\n", "\x01", "\xff", "[1,2]", ","}),
			rapid.String())
		str := rapid.Custom(func(t *rapid.T) string {
			return strings.Join(rapid.SliceOfN(piece, 0, 4).Draw(t, "pieces"), "")
		})
		summary := str.Draw(t, "summary")
		facts := rapid.SliceOf(rapid.OneOf(str, rapid.Custom(func(t *rapid.T) string {
			i := rapid.IntRange(0, max(len(summary)-1, 0)).Draw(t, "from")
			if summary == "" {
				return "x"
			}
			return summary[i:rapid.IntRange(i+1, len(summary)).Draw(t, "to")]
		}))).Draw(t, "facts")
		if col, ok := factsColumn(summary, facts).(string); ok {
			if _, fast := fastFacts(summary, col); !fast && !strings.Contains(col, `\`) {
				t.Fatalf("facts %q: left to encoding/json, with no escape in them", col)
			}
			got, err := decodeFacts(summary, sql.NullString{String: col, Valid: true})
			if err != nil {
				t.Fatalf("decodeFacts(%q): %v", col, err)
			}
			var want []string
			var raw []json.RawMessage
			if err := json.Unmarshal([]byte(col), &raw); err != nil {
				t.Fatal(err)
			}
			for _, e := range raw {
				if e[0] == '"' {
					var s string
					json.Unmarshal(e, &s)
					want = append(want, s)
					continue
				}
				var r [2]int
				json.Unmarshal(e, &r)
				want = append(want, summary[r[0]:r[0]+r[1]])
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("facts %q of %q: read %q, want %q", col, summary, got, want)
			}
		}
		list := rapid.SliceOf(str).Draw(t, "list")
		if col, ok := jsonList(list).(string); ok {
			var want []string
			if err := json.Unmarshal([]byte(col), &want); err != nil {
				t.Fatal(err)
			}
			got, fast := fastStrings(col)
			if fast && !reflect.DeepEqual(got, want) {
				t.Fatalf("list %q: read %q, want %q", col, got, want)
			}
			if !fast && !strings.Contains(col, `\`) {
				t.Fatalf("list %q: left to encoding/json, with no escape in it", col)
			}
		}
	})
	for _, s := range []string{`[]`, `["a"]`, `[[0,1]]`, `["a",[0,1]]`} {
		if !scanJSONList(s, func(jsonElem) bool { return true }) {
			t.Errorf("%s: not read", s)
		}
	}
	for _, s := range []string{``, `[`, `[,]`, `["a" ]`, `[1]`, `["a\"b"]`, `[[0,1,2]]`, `[[0]]`, `["a"],`, `[[1e3,1]]`} {
		if _, ok := fastStrings(s); ok {
			t.Errorf("%s: read, want it left to encoding/json", s)
		}
	}
}
