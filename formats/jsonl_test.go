package formats

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestParseRFC3339 checks the fast time parser against time.Parse: where
// it accepts a text, time.Parse gives the same time.
func TestParseRFC3339(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var texts []string
	for _, s := range []string{"2024-03-01T09:00:00Z", "2024-03-01T09:00:06.5+01:00", "2024-02-29T23:59:59.999999999-23:59",
		"2023-02-29T00:00:00Z", "0000-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "2024-03-01T09:00:00.Z",
		"2024-03-01T09:00:00.1234567890Z", "2024-03-01t09:00:00Z", "2024-03-01T24:00:00Z", "2024-03-01T09:60:00Z",
		"2024-03-01T09:00:60Z", "2024-13-01T09:00:00Z", "2024-00-01T09:00:00Z", "2024-04-31T09:00:00Z",
		"2024-03-01T09:00:00+24:00", "2024-03-01T09:00:00+01:60", "2024-03-01T09:00:00+0100", "2024-03-01 09:00:00Z",
		"+024-03-01T09:00:00Z", "2024-3-01T09:00:00Z", "2024-03-01T09:00:00z", "2024-03-01T09:00:00"} {
		texts = append(texts, s)
	}
	const set = "0123456789-:T.Z+z "
	for i := 0; i < 300000; i++ {
		y, mo, d := r.IntN(10000), 1+r.IntN(13), 1+r.IntN(32)
		s := fmt.Sprintf("%04d-%02d-%02dT%02d:%02d:%02d", y, mo, d, r.IntN(25), r.IntN(61), r.IntN(61))
		if r.IntN(2) == 0 {
			s += "." + fmt.Sprintf("%09d", r.IntN(1000000000))[:1+r.IntN(9)]
		}
		switch r.IntN(3) {
		case 0:
			s += "Z"
		default:
			s += fmt.Sprintf("%c%02d:%02d", "+-"[r.IntN(2)], r.IntN(25), r.IntN(61))
		}
		if r.IntN(8) == 0 {
			b := []byte(s)
			b[r.IntN(len(b))] = set[r.IntN(len(set))]
			s = string(b)
		}
		texts = append(texts, s)
	}
	accepted := 0
	for _, s := range texts {
		got, ok := parseRFC3339([]byte(s))
		want, err := time.Parse(time.RFC3339Nano, s)
		if !ok {
			continue
		}
		accepted++
		if err != nil {
			t.Fatalf("parseRFC3339(%q) accepts what time.Parse rejects: %v", s, err)
		}
		if want = want.UTC(); !reflect.DeepEqual(got, want) {
			t.Fatalf("parseRFC3339(%q) = %#v, want %#v", s, got, want)
		}
	}
	if accepted < len(texts)/4 {
		t.Errorf("only %d of %d texts parsed: the test tests little", accepted, len(texts))
	}
	t.Logf("%d of %d texts parsed", accepted, len(texts))
}

func TestJSONLFieldIndex(t *testing.T) {
	if len(jsonlMembers{}) != len(jsonlFields) {
		t.Fatalf("jsonlMembers has %d members, jsonlFields %d", len(jsonlMembers{}), len(jsonlFields))
	}
	for i, f := range jsonlFields {
		if got := jsonlFieldIndex(f); got != i {
			t.Errorf("jsonlFieldIndex(%q) = %d, want %d", f, got, i)
		}
	}
	for _, f := range []string{"", "Content", "contents", "x"} {
		if got := jsonlFieldIndex(f); got != -1 {
			t.Errorf("jsonlFieldIndex(%q) = %d, want -1", f, got)
		}
	}
}

// readBoth reads data as jsonl through the fast path and through the
// general one (encoding/json into a map), and fails on any difference in
// records or errors.
func readBoth(t *testing.T, data []byte) {
	t.Helper()
	read := func(general bool) []string {
		jsonlGeneral = general
		defer func() { jsonlGeneral = false }()
		rd, err := Open(JSONL, "f.jsonl", bytes.NewReader(data))
		if err != nil {
			return []string{err.Error()}
		}
		var out []string
		for i := 0; i <= len(data); i++ {
			rec, err := rd.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				out = append(out, fmt.Sprintf("error %#v", err))
				continue
			}
			out = append(out, fmt.Sprintf("%#v", rec))
		}
		return out
	}
	fast, general := read(false), read(true)
	if !reflect.DeepEqual(fast, general) {
		t.Fatalf("input %q:\nfast    %q\ngeneral %q", data, fast, general)
	}
}

// TestJSONLPaths checks that the fast path reads lines as the general path
// does: generated lines, the test file, and mutations of both.
func TestJSONLPaths(t *testing.T) {
	seed, err := os.ReadFile("testdata/chat.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(seed), "\n")
	lines = append(lines, strings.Split(string(synthJSONL(t, 200)), "\n")...)
	lines = append(lines, `{"role":"user","content":"a","time":"2024-03-01T09:00:00.123+02:00","importance":0.5,"tokens":{"a":[1,2,{"b":null}]}}`,
		`{"role":"user","content":"\u00e9\ud83d\ude00\n","name":"\u0041","session":-1.5e3,"ext_id":1e2,"model":null}`,
		`{ "role" : "user" , "content" : "x" }`, `{"role":"user","content":"x","role":"assistant"}`, `{"role":"user","Content":"x"}`,
		`{"role":"user","content":"x"} x`, `{"r\u006fle":"user","content":"x"}`, `{"role":"user","content":"a\ud800"}`,
		`{"role":"user","content":"x","metadata":{"k":[true,false,null,-0.5e-3]}}`, "{\"role\":\"user\",\"content\":\"\t\"}")
	for _, l := range lines {
		readBoth(t, []byte(l))
	}
	r := rand.New(rand.NewPCG(11, 12))
	const set = "{}[]\",:\\ \t0-.eE+tfnua\xff\xe9"
	for i := 0; i < 20000; i++ {
		b := []byte(lines[r.IntN(len(lines))])
		for k := r.IntN(4); k >= 0 && len(b) > 0; k-- {
			j := r.IntN(len(b))
			switch r.IntN(3) {
			case 0:
				b = append(b[:j], b[j+1:]...)
			case 1:
				b = append(b[:j], append([]byte{set[r.IntN(len(set))]}, b[j:]...)...)
			default:
				b[j] = set[r.IntN(len(set))]
			}
		}
		readBoth(t, b)
	}
}

func FuzzJSONLPaths(f *testing.F) {
	seed, _ := os.ReadFile("testdata/chat.jsonl")
	f.Add(seed)
	f.Add(synthJSONL(f, 3))
	f.Fuzz(func(t *testing.T, data []byte) {
		readBoth(t, data)
	})
}
