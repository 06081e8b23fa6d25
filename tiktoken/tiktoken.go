package tiktoken

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"unicode/utf8"
)

// Encoding names accepted by New.
const (
	O200kBase  = "o200k_base"
	Cl100kBase = "cl100k_base"

	// Default is the encoding New uses for the empty name.
	Default = O200kBase
)

// encodings lists the supported encodings, in the order error messages name
// them.
var encodings = []struct {
	name  string
	file  string                    // in github.com/pkoukk/tiktoken-go-loader/assets
	split func(s string, i int) int // returns the end of the pre-token at s[i]
}{
	{O200kBase, "o200k_base.tiktoken", nextO200k},
	{Cl100kBase, "cl100k_base.tiktoken", nextCl100k},
}

// loaded holds one lazily built Tokenizer per encoding.
var loaded [2]struct {
	once sync.Once
	tok  *Tokenizer
	err  error
}

// Tokenizer counts the tokens of a tiktoken encoding. It is safe for
// concurrent use by multiple goroutines.
type Tokenizer struct {
	name  string
	vocab vocab
	split func(s string, i int) int
	cache *countCache
}

// New returns the Tokenizer for the named encoding: "o200k_base" (also "",
// the default) or "cl100k_base". Its vocabulary is loaded on first use and
// shared by the whole process, so every call for an encoding returns the same
// Tokenizer.
func New(encoding string) (*Tokenizer, error) {
	if encoding == "" {
		encoding = Default
	}
	for i, e := range encodings {
		if e.name != encoding {
			continue
		}
		l := &loaded[i]
		l.once.Do(func() {
			initClasses()
			v, err := loadVocab(e.file)
			if err != nil {
				l.err = fmt.Errorf("tiktoken: loading %s: %w", e.name, err)
				return
			}
			l.tok = &Tokenizer{name: e.name, vocab: v, split: e.split, cache: newCountCache()}
		})
		return l.tok, l.err
	}
	names := make([]string, len(encodings))
	for i, e := range encodings {
		names[i] = fmt.Sprintf("%q", e.name)
	}
	return nil, fmt.Errorf("tiktoken: unknown encoding %q (valid: %s)", encoding, strings.Join(names, ", "))
}

// Name returns the encoding name, such as "o200k_base".
func (t *Tokenizer) Name() string { return t.name }

// Count returns the number of tokens in s, as tiktoken's encode_ordinary
// would produce them: special-token text such as "<|endoftext|>" is
// counted as ordinary text. The count is exact but for a pre-token longer
// than MaxPiece bytes (a run without spaces or punctuation: base64, a long
// URL, one letter repeated), which is counted in pieces of at most
// MaxPiece bytes (see pieceCount).
func (t *Tokenizer) Count(s string) int {
	n, _ := t.CountContext(context.Background(), s)
	return n
}

// checkEvery is how many bytes CountContext counts between two looks at
// its context, when it also yields its core: a few milliseconds of the
// slowest text (a run without spaces, about a microsecond a byte), under
// a tenth of a millisecond of prose.
const checkEvery = 4 << 10

// CountContext is Count, given up with ctx's error once ctx is done: a
// text of many megabytes takes a second or more to count. Between two
// looks at ctx it lets other goroutines run (runtime.Gosched): counting
// never blocks, so a server counting a large text on every core would
// otherwise keep a short request, even a health check, waiting for the
// scheduler to preempt it.
func (t *Tokenizer) CountContext(ctx context.Context, s string) (int, error) {
	s = validUTF8(s)
	n, checked := 0, 0
	for i := 0; i < len(s); {
		if i-checked >= checkEvery {
			if err := ctx.Err(); err != nil {
				return n, err
			}
			runtime.Gosched()
			checked = i
		}
		e := t.next(s, i)
		// A pre-token longer than MaxPiece is counted a piece at a time.
		for e-i > MaxPiece {
			cut := i + MaxPiece
			for !utf8.RuneStart(s[cut]) {
				cut--
			}
			n += t.pieceCount(s[i:cut])
			i = cut
			if i-checked >= checkEvery {
				if err := ctx.Err(); err != nil {
					return n, err
				}
				runtime.Gosched()
				checked = i
			}
		}
		n += t.pieceCount(s[i:e])
		i = e
	}
	return n, nil
}

// MaxPiece is the longest pre-token Count merges whole, in bytes.
//
// Byte-pair merging costs time and memory with a pre-token's length (16
// MiB of one letter took 27 s and 1.3 GB), and the pre-tokenizer lets a
// run without spaces, digits or punctuation grow without bound. Such a
// run is counted in pieces of at most MaxPiece bytes, cut at character
// boundaries. A cut only changes the tokens that would have spanned it,
// so each costs at most a token or two: on 64 KiB runs (TestLongPieceCount)
// random letters count 0.04% over the exact count, non-ASCII letters
// 0.01% over, one letter repeated and base64 text exactly. A pre-token of
// ordinary text, Thai or Chinese without spaces included, is far shorter
// and counted exactly, and an overcount keeps a budget safe. Memory stays
// bounded by the piece, and time grows linearly with the run.
const MaxPiece = 1024

// next returns the end of the pre-token that starts at s[i].
func (t *Tokenizer) next(s string, i int) int {
	e := t.split(s, i)
	if e <= i {
		// Every character starts a pre-token; the tests check it.
		panic(fmt.Sprintf("tiktoken: %s pre-tokenizer stalled at %q", t.name, s[i:]))
	}
	return e
}

// pieceCount returns the number of tokens of one pre-token.
func (t *Tokenizer) pieceCount(piece string) int {
	// Every byte is a token, and so are most words with their leading
	// space; tiktoken takes a pre-token in the vocabulary as is.
	if len(piece) == 1 {
		return 1
	}
	if _, ok := t.vocab[piece]; ok {
		return 1
	}
	if n, ok := t.cache.get(piece); ok {
		return n
	}
	n := t.vocab.mergeCount(piece)
	t.cache.put(piece, n)
	return n
}

// Encode returns the token ids of s, exactly as tiktoken's encode_ordinary
// would. It is meant for tests and debugging and does not use the cache.
func (t *Tokenizer) Encode(s string) []int {
	s = validUTF8(s)
	var ids []int
	for i := 0; i < len(s); {
		e := t.next(s, i)
		piece := s[i:e]
		if id, ok := t.vocab[piece]; ok {
			ids = append(ids, int(id))
		} else {
			starts := t.vocab.merge(piece)
			for k := range len(starts) - 1 {
				ids = append(ids, int(t.vocab[piece[starts[k]:starts[k+1]]]))
			}
		}
		i = e
	}
	return ids
}

// validUTF8 returns s with every byte that is not part of a valid UTF-8
// sequence replaced by U+FFFD, as Go's conversion to runes does. That is
// what the regular-expression engines of the Go ports see, and the closest
// a Go string comes to Python's str, which cannot hold such bytes.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return string([]rune(s))
}
