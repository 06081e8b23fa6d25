// Package strata is long-term memory for LLM conversations.
//
// strata stores every turn of a conversation whole, rolls older history up
// into a pyramid of summaries, and assembles a context package for the next
// prompt that never exceeds a hard token budget. A conversation's Policy
// shapes its pyramid: by turn count (the default: micro = 10 turns, mini =
// 2 micros, macro = 5 minis), by session (session, core, sphere) or by
// calendar (day, ISO week, month, closing at midnight in the
// conversation's time zone), or a mix of these. Memory.Zoom returns the
// turns of a period; Context zooms to the periods a query names.
//
// The root package holds the domain types (Turn, Conversation, Node,
// Policy), the interfaces the engine consumes (Store, Summarizer,
// Tokenizer) and the engine itself (Memory). It imports only the standard
// library; every dependency lives in a subpackage named after it:
// sqlite (the embedded Store), tiktoken (the Tokenizer), extractive (the
// offline Summarizer), formats (importers), and cmd/strata wires them.
//
// A minimal program:
//
//	st, err := sqlite.Open(ctx, "memory.db")
//	tok, err := tiktoken.New("o200k_base")
//	mem, err := strata.New(strata.Config{Store: st, Tokenizer: tok, Summarizer: extractive.New()})
//	_, err = mem.Ingest(ctx, strata.Batch{Conversation: "c1", Turns: turns})
//	pkg, err := mem.Context(ctx, strata.ContextRequest{Conversation: "c1", Budget: 2000})
//	fmt.Print(pkg.Rendered)
//
// For bulk loads, Memory.Import reads turns from an iterator and overlaps
// parsing, appending and summarizing on separate goroutines.
//
// Invariants the engine keeps (see the design notes in the README): turn
// content is never truncated; re-ingesting a turn with the same ext_id adds
// nothing and re-running a rollup creates no duplicate node, because node ids
// derive from (namespace, conversation, level, span); a context package never
// exceeds its budget as counted by the configured Tokenizer.
package strata
