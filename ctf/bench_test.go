package ctf

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/formats"
)

// chatWords is the vocabulary of the generated conversations, with the
// curly quotes and dashes of real chat text (their UTF-8 starts with the
// byte 0xE2, like the glyphs, so the encoder cannot skip them blindly).
var chatWords = strings.Fields(`I you we they it the a an and but so because
	that this there here what when where why how really just very much more
	good great nice awesome amazing fun love like think know feel want need
	going went been doing did make made take took see saw look looking
	painting camping hiking music dog kids family friends work weekend trip
	beach mountains garden book reading school support group pride journey
	yesterday today tomorrow last week month year always never sometimes
	it’s I’m that’s don’t can’t you’re “really” — … 😊 👍 café naïve`)

// chatTurns returns n turns of generated chat: one to four sentences each,
// with now and then a line break.
func chatTurns(n int) []strata.Turn {
	r := rand.New(rand.NewPCG(1, 2))
	names := []string{"Caroline", "Melanie"}
	t0 := time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC)
	turns := make([]strata.Turn, n)
	var b strings.Builder
	for i := range turns {
		b.Reset()
		for s := r.IntN(4); s >= 0; s-- {
			if b.Len() > 0 {
				if r.IntN(20) == 0 {
					b.WriteString("\n")
				} else {
					b.WriteString(" ")
				}
			}
			w := chatWords[r.IntN(len(chatWords))]
			if 'a' <= w[0] && w[0] <= 'z' {
				w = strings.ToUpper(w[:1]) + w[1:]
			}
			b.WriteString(w)
			for k := 4 + r.IntN(18); k > 0; k-- {
				b.WriteString(" ")
				b.WriteString(chatWords[r.IntN(len(chatWords))])
			}
			b.WriteString([]string{".", "!", "?", "."}[r.IntN(4)])
		}
		role := strata.RoleUser
		if i%2 == 1 {
			role = strata.RoleAssistant
		}
		turns[i] = strata.Turn{
			Seq: int64(i + 1), ExtID: "D1:" + strconv.Itoa(i+1), Session: 1 + i/20,
			Role: role, Name: names[i%2], Content: b.String(),
			Time: t0.Add(time.Duration(i) * time.Second), Tokens: b.Len() / 4,
		}
	}
	return turns
}

var benchOnce struct {
	sync.Once
	turns []strata.Turn
	err   error
}

// benchTurns returns the LoCoMo turns when STRATA_LOCOMO names the file,
// else generated ones.
func benchTurns(tb testing.TB) []strata.Turn {
	benchOnce.Do(func() {
		if os.Getenv("STRATA_LOCOMO") == "" {
			benchOnce.turns = chatTurns(2760)
			return
		}
		benchOnce.turns, benchOnce.err = locomoTurns()
	})
	if benchOnce.err != nil {
		tb.Fatal(benchOnce.err)
	}
	return benchOnce.turns
}

// locomoTurns reads the turns of the file STRATA_LOCOMO names.
func locomoTurns() ([]strata.Turn, error) {
	path := os.Getenv("STRATA_LOCOMO")
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rd, err := formats.Open(formats.LoCoMo, path, f)
	if err != nil {
		return nil, err
	}
	var turns []strata.Turn
	for {
		rec, err := rd.Next()
		if err == io.EOF {
			return turns, nil
		}
		if err != nil {
			return nil, err
		}
		turns = append(turns, rec.Turn)
	}
}

var benchFields = []string{"seq", "ext_id", "session", "role", "name", "content", "time", "tokens"}

// benchRows returns the turns as generic rows of role, name, content.
func benchRows(tb testing.TB) (Header, [][]Value) {
	turns := benchTurns(tb)
	rows := make([][]Value, len(turns))
	for i, t := range turns {
		rows[i] = []Value{Str(string(t.Role)), Str(t.Name), Str(t.Content)}
	}
	return Header{Fields: []string{"role", "name", "content"}, Attrs: []Attr{CountAttr("turns", len(rows))}}, rows
}

func BenchmarkMarshal(b *testing.B) {
	h, rows := benchRows(b)
	block, _ := Marshal(h, rows)
	b.SetBytes(int64(len(block)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Marshal(h, rows); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkUnmarshal(b *testing.B) {
	h, rows := benchRows(b)
	block, _ := Marshal(h, rows)
	b.SetBytes(int64(len(block)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Unmarshal(block); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncoder(b *testing.B) {
	h, rows := benchRows(b)
	block, _ := Marshal(h, rows)
	b.SetBytes(int64(len(block)))
	b.ReportAllocs()
	for b.Loop() {
		e, _ := NewEncoder(io.Discard, h)
		for _, r := range rows {
			if err := e.Encode(r); err != nil {
				b.Fatal(err)
			}
		}
		if err := e.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecoder(b *testing.B) {
	h, rows := benchRows(b)
	block, _ := Marshal(h, rows)
	b.SetBytes(int64(len(block)))
	b.ReportAllocs()
	for b.Loop() {
		d := NewDecoder(bytes.NewReader(block))
		for {
			_, err := d.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	}
}

func BenchmarkEncodeTurns(b *testing.B) {
	turns := benchTurns(b)
	block, _ := EncodeTurns(turns, benchFields)
	b.SetBytes(int64(len(block)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := EncodeTurns(turns, benchFields); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeTurns(b *testing.B) {
	block, _ := EncodeTurns(benchTurns(b), benchFields)
	b.SetBytes(int64(len(block)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeTurns(block); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEscape measures a value that needs escaping all along.
func BenchmarkEscape(b *testing.B) {
	s := strings.Repeat("col1\tcol2\tit’s ␉ here\n", 200)
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	var dst []byte
	for b.Loop() {
		dst = appendEscaped(dst[:0], s)
	}
	if _, msg := unescape(string(dst)); msg != "" {
		b.Fatal(msg)
	}
}

func BenchmarkUnescape(b *testing.B) {
	f := Escape(strings.Repeat("col1\tcol2\tit’s ␉ here\n", 200))
	b.SetBytes(int64(len(f)))
	b.ReportAllocs()
	for b.Loop() {
		if _, msg := unescape(f); msg != "" {
			b.Fatal(msg)
		}
	}
}

func TestChatTurnsRoundTrip(t *testing.T) {
	turns := benchTurns(t)
	b, err := EncodeTurns(turns, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeTurns(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(turns) {
		t.Fatalf("%d turns", len(got))
	}
	for i := range got {
		if !turnsEqual(&got[i], &turns[i]) {
			t.Fatalf("turn %d:\n got %+v\nwant %+v", i, got[i], turns[i])
		}
	}
}

// turnsEqual compares turns with their times in UTC and their metadata as
// JSON reads it back (numbers as float64), as the round trip promises.
func turnsEqual(a, b *strata.Turn) bool {
	ab, err1 := EncodeTurns([]strata.Turn{*a}, TurnFields())
	bb, err2 := EncodeTurns([]strata.Turn{*b}, TurnFields())
	return err1 == nil && err2 == nil && bytes.Equal(ab, bb)
}
