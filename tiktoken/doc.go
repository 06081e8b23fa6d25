// Package tiktoken counts tokens exactly as OpenAI's tiktoken does, for the
// o200k_base encoding (GPT-4o, GPT-4.1, GPT-5, o-series; the default) and
// cl100k_base (GPT-4, GPT-3.5).
//
// # Offline vocabularies
//
// The vocabularies are OpenAI's own .tiktoken files, embedded in the binary
// by github.com/pkoukk/tiktoken-go-loader, so nothing is read from disk or
// downloaded at run time: no network access, no cache directory, no
// TIKTOKEN_CACHE_DIR. The tests check the files against the SHA-256 digests
// tiktoken publishes. The embedded files add about 7 MB to the binary. A
// vocabulary is parsed the first time [New] asks for its encoding (tens of
// milliseconds, about 10 MB of memory for o200k_base) and is then shared by
// the whole process.
//
// # Fast, exact counting
//
// tiktoken splits text into pre-tokens with an encoding-specific regular
// expression, then byte-pair encodes each pre-token on its own; a pre-token
// that is itself in the vocabulary is one token. Go ports spend most of their
// time in a backtracking regular-expression engine. This package splits with
// hand-written scanners instead, which reproduce the two patterns exactly,
// with the backtracking semantics of tiktoken's engine, over all of Unicode
// (the character classes come from Go's unicode tables, Unicode 15.0). Most
// pre-tokens of natural text are single tokens, found with one map lookup;
// the token counts of the others are kept in a bounded, lock-free cache, so
// the byte-pair merge only runs for pre-tokens not seen recently.
//
// The tests compare Count and Encode with github.com/pkoukk/tiktoken-go, an
// independent port with another regular-expression engine and another merge,
// on real conversations, hand-picked edge cases and fuzzed input, and compare
// the scanners with the patterns on every short string over an alphabet of
// every character class the patterns distinguish.
//
// Two Go ports disagree with tiktoken in rare cases, which this package gets
// right: github.com/tiktoken-go/tokenizer v0.10.0 stops \s*[\r\n]+ at the
// first line break of a run of white space rather than the last, so it counts
// "\n \n" as 2 tokens instead of 1; and the .NET-style case folding of
// github.com/pkoukk/tiktoken-go does not let the contraction 's match 'ſ
// (U+017F), as tiktoken's does.
//
// Strings that are not valid UTF-8 are counted with every byte that is not
// part of a valid sequence replaced by U+FFFD, as the Go ports do.
package tiktoken
