package sqlite

import "strconv"

// This file reads the JSON lists node rows keep (facts, themes, children)
// without encoding/json when they are as json.Marshal wrote them: an array
// of strings and [offset, length] pairs, with no space. Reading a context
// package's nodes decoded these lists with reflection, a fifth of the
// package's time at a million turns. Anything else, a string with an
// escape included, is left to encoding/json.

// jsonElem is one element of such a list: a string without escapes, or a
// pair of integers.
type jsonElem struct {
	str    string
	pair   [2]int
	isPair bool
}

// scanJSONList calls each with the elements of s in order. It reports
// false, having stopped, at anything outside the form above.
func scanJSONList(s string, each func(e jsonElem) bool) bool {
	if len(s) < 2 || s[0] != '[' || s[len(s)-1] != ']' {
		return false
	}
	i := 1
	if s[i] == ']' {
		return i == len(s)-1
	}
	for {
		var e jsonElem
		switch {
		case s[i] == '"':
			j := i + 1
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' || s[j] < 0x20 {
					return false
				}
				j++
			}
			if j >= len(s) {
				return false
			}
			e.str, i = s[i+1:j], j+1
		case s[i] == '[':
			var ok bool
			if e.pair[0], i, ok = scanInt(s, i+1); !ok || s[i] != ',' {
				return false
			}
			if e.pair[1], i, ok = scanInt(s, i+1); !ok || s[i] != ']' {
				return false
			}
			e.isPair, i = true, i+1
		default:
			return false
		}
		if !each(e) {
			return false
		}
		switch {
		case i == len(s)-1 && s[i] == ']':
			return true
		case i < len(s)-1 && s[i] == ',':
			i++
		default:
			return false
		}
	}
}

// scanInt reads the decimal integer at s[i:] and returns it with the index
// after it, which is inside s.
func scanInt(s string, i int) (int, int, bool) {
	j := i
	for j < len(s) && ('0' <= s[j] && s[j] <= '9' || j == i && s[j] == '-') {
		j++
	}
	if j == i || j >= len(s) {
		return 0, 0, false
	}
	n, err := strconv.Atoi(s[i:j])
	return n, j, err == nil
}

// fastStrings reads a list of strings; false if it cannot.
func fastStrings(s string) ([]string, bool) {
	out := []string{} // as encoding/json reads "[]"
	ok := scanJSONList(s, func(e jsonElem) bool {
		out = append(out, e.str)
		return !e.isPair
	})
	return out, ok
}

// fastFacts reads a facts column (factsColumn) against its summary; false
// if it cannot, a range outside the summary included.
func fastFacts(summary, s string) ([]string, bool) {
	out := []string{}
	ok := scanJSONList(s, func(e jsonElem) bool {
		if !e.isPair {
			out = append(out, e.str)
			return true
		}
		r := e.pair
		if r[0] < 0 || r[1] <= 0 || r[0]+r[1] > len(summary) {
			return false
		}
		out = append(out, summary[r[0]:r[0]+r[1]])
		return true
	})
	return out, ok
}
