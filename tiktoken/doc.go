// Package tiktoken counts tokens exactly as OpenAI's tiktoken does, for the
// o200k_base encoding (GPT-4o, GPT-4.1, GPT-5, o-series; the default) and
// cl100k_base (GPT-4, GPT-3.5).
//
// # Offline vocabularies
//
// The vocabularies come from github.com/tiktoken-go/tokenizer, which compiles
// them into the binary as Go map literals, so nothing is read from disk or
// downloaded at run time: no network access, no cache directory, no
// TIKTOKEN_CACHE_DIR. Only the o200k_base and cl100k_base codecs are
// referenced, so the linker drops the other encodings; together the two
// vocabularies add about 10 MB to the binary. A vocabulary is built in memory
// the first time [New] asks for its encoding (tens of milliseconds) and is
// then shared by every [Tokenizer] of that encoding in the process.
//
// # Fast, exact counting
//
// tiktoken first splits text into pre-tokens with an encoding-specific
// regular expression and then byte-pair-encodes each pre-token on its own.
// The library spends most of its time in a backtracking regular-expression
// engine. This package instead splits with hand-written scanners that
// reproduce the two encodings' patterns exactly, over all of Unicode (the
// character classes come from the same Go unicode tables the regular
// expression engine uses). The token count of each pre-token is then looked
// up in a bounded, lock-free cache, so the byte-pair merge runs only for
// pre-tokens not seen recently; because the words of natural text follow a
// Zipf distribution, almost every lookup hits. The library itself remains the
// reference: a cache miss asks it for the count of that one pre-token, and
// the tests compare the results with the library's on real conversations,
// hand-picked edge cases and fuzzed input.
//
// Strings that are not valid UTF-8 are counted as the library counts them:
// every byte that is not part of a valid UTF-8 sequence counts as U+FFFD.
package tiktoken
