package textseg

import (
	"strings"
	"testing"
)

func TestWords(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"plain ascii, unchanged", "plain ascii unchanged "},
		{"see https://example.com/a-b?q=1 or /srv/app.log", "see https example com a b q 1 or srv app log "},
		{"Café — ünïcode ✓", "Café ünïcode "},
		{"去北京", "去 北 京 去北 北京 "},
		{"see 東京!", "see 東 京 東京 "},
	} {
		if got := Words(tc.in); got != tc.want {
			t.Errorf("Words(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestQueryTermsAreWords checks that every term of a text is one of the
// words Words gives for it (case folded), so that an index fed with Words
// holds each query term.
func TestQueryTermsAreWords(t *testing.T) {
	text := "Deploy the billing-service to prod.example.com 去北京 iPhone12を買った"
	words := map[string]bool{}
	for _, w := range strings.Fields(Words(text)) {
		words[strings.ToLower(w)] = true
	}
	for _, term := range QueryTerms(text) {
		if !words[term] {
			t.Errorf("term %q is not among the words %q", term, Words(text))
		}
	}
}

func TestContentWords(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"The cat and THE dog, it's mine", "cat dog mine "},
		{"Themselves yourselves ourselves", ""},
		{"Thé Über 去北京 of the", "Thé Über 去 北 京 去北 北京 "},
		{"don't won't", "won "},
	} {
		if got := ContentWords(tc.in); got != tc.want {
			t.Errorf("ContentWords(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	for w := range stopWords {
		if len(w) > maxStopLen {
			t.Errorf("stop word %q is longer than maxStopLen %d", w, maxStopLen)
		}
	}
}

// TestContentWordsKeepQueryTerms checks that an index fed with
// ContentWords holds every term a query of the same text searches for.
func TestContentWordsKeepQueryTerms(t *testing.T) {
	text := "Deploy the billing-service to prod.example.com, I said; 去北京 iPhone12を買った and THEN some"
	words := map[string]bool{}
	for _, w := range strings.Fields(ContentWords(text)) {
		words[strings.ToLower(w)] = true
	}
	for _, term := range QueryTerms(text) {
		if !words[term] {
			t.Errorf("term %q is not among the content words %q", term, ContentWords(text))
		}
	}
	if words["the"] || words["then"] || words["some"] || words["i"] {
		t.Errorf("stop words kept: %q", ContentWords(text))
	}
}
