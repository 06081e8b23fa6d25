// Package checkpoint writes the checkpoint that replaces the older part of
// an agent's message list when live compaction cuts it: a structured
// summary in six sections, within a token budget, whose Critical Context
// carries an identifier ledger collected mechanically from the span.
//
//	w, err := checkpoint.New(checkpoint.Options{LLM: model, Tokenizer: tok})
//	res, err := w.Checkpoint(ctx, span, previous) // previous: the last checkpoint, or ""
//
// Package compact flattens the messages it cuts to []Entry (one entry per
// text, thinking block, tool call and tool result) and keeps res.Text as
// the conversation's checkpoint; the next compaction passes it back as
// previous.
//
// # Format
//
//	## Goal
//	Fix the failing TestApplyDiscount without changing the billing API.
//
//	## Constraints & Preferences
//	- Please don't change the public API of the billing package.
//
//	## Progress
//	### Done
//	- [x] Edited `internal/billing/discount.go`
//	- [x] `go test ./...` passes
//
//	### In Progress
//	- [ ] `go build ./...` fails: `internal/http/routes.go:41:9: undefined: newRatelimiter`
//
//	## Key Decisions
//	- I'll round half up instead of truncating, since totals are compared to the cent.
//
//	## Next Steps
//	1. Add a case for negative amounts to `internal/billing/discount_test.go`.
//
//	## Critical Context
//	- paths: internal/http/routes.go, internal/http/ratelimit.go
//	- command: curl -s -i -X POST http://localhost:8080/api/v1/orders
//	- error: panic: runtime error: invalid memory address or nil pointer dereference
//	- symbols: applyDiscount, newRateLimiter
//	- ids: #412, 3f9c2ab
//	- numbers: 100 requests per minute, 30s
//
// A section with nothing in it is left out, heading and all (Progress
// when both its lists are empty): no "- none" placeholder. The Goal and
// Critical Context headings are always written, and a text with both is
// read as a checkpoint. Critical Context holds free notes (a
// model's, or an earlier summary that was not a checkpoint) and then the
// ledger: one line per kind, comma separated, in the order of Kinds, and
// one line per command and per error (they hold commas); what the
// sections above already quote is not listed again. Parse reads a
// checkpoint back into Sections, tolerating what models do to the format
// (other heading levels, bold headings, "Constraints and Preferences",
// numbered or starred lists, wrapped items); Sections.Format writes it.
//
// # The identifier ledger
//
// What a continuing agent must have verbatim is not left to a model: a
// hand-written scanner (no regular expressions) collects it from every
// entry of the span.
//
//   - path: rooted (/etc/x, ./a, ~/a, C:\x), three segments or more
//     (a/b/c), a module path (github.com/a/b), a Go pattern (./x/...),
//     or a file name with a known extension in lower case (main.go, a/b.py;
//     not threading.Lock, nor res.json, a member of a common receiver),
//     without its :line:col; an API route (/api/v1/orders) is a path too.
//     A tool call's path, file_path, filename... argument is a path as
//     given.
//   - command: a tool call's command (cmd, script) argument, or argv with
//     bash -c unwrapped, as its first line; in text, an inline code span
//     or a "$ " line whose first word is a known program with arguments,
//     and the lines of a sh/bash fenced block.
//   - url: anything with ://, and localhost:port and the like.
//   - number: a number glued to a unit or currency (30s, 250ms, 3.5GB,
//     80%, $4,500) or followed by a unit word (512 MB, 30 seconds, 3
//     retries, 100 requests per minute); in tool output only sizes and
//     percentages count (timings there are noise). Bare numbers do not.
//   - error: a line of output (or a quoted one) shaped like an error: a
//     prefix such as "panic: ", "Error: ", "FAILED ", "--- FAIL: ", a
//     compiler location (file.go:12:5: msg, a.ts(3,4): error TS...), an
//     exception (TypeError: msg), or, in output, a phrase such as
//     "undefined: ", "no such file or directory", "connection refused";
//     a logger's record at error level whatever its prefix (a level
//     word, ERROR, ERR, FATAL, SEVERE..., in capitals or in brackets or
//     angle brackets in any case, past what only a prefix holds: times,
//     dates, month and day names, numbers, tags in brackets or braces,
//     a host's name, a source and a colon such as "uart0:" or
//     "app[912]:"), a line that names an exception or an
//     error level past its start ("Code: 60. DB::Exception: ...",
//     "psql:a.sql:12: ERROR:  ...", .NET's "Name (0x80131904): msg"),
//     one that opens with a failure word and goes on in words ("Error
//     in query string: ...", "Failed to connect to ..."), or with a
//     thing and "failed" ("Assertion failed at a.c:88: ..."), one that
//     ends in a runner's verdict on what it names first ("name ...
//     FAILED (52ms)", "a_SUITE ==> case: FAILED", "test_x (a.T) ...
//     ERROR"; not a count, "0 ERROR", a sentence's last word, nor a
//     setting, "log_level: ERROR"),
//     TAP's "not ok N - ..." and ztest's "FAIL - name", and a JSON
//     field naming a state, a status, a result, an outcome, a
//     conclusion or a phase whose value is a failure word
//     ("provisioningState": "Failed", "conclusion": "failure"). A
//     diagnostic drawn in a box ("│ Error: ...") is read inside its
//     border.
//     Go's bare FAIL summary lines and grep hits are not errors. A failed
//     output (its result is an error, or it shows an exit status, FAIL,
//     ...) in which no line is shaped so gets its lines that report a
//     failure in words as error lines. A log collector's prefix (docker
//     compose's "api-1  | ", journald's "Nov 05 11:40:48 host app[9]: ",
//     an ISO timestamp, a tag in brackets holding an id) is read past. A
//     line is cut at 200 bytes on a word boundary (a prefix of the line,
//     so still verbatim), and a line longer than 120 bytes whose last
//     clause (past its last ": ") a digest's cut would lose gives that
//     clause as an error line too: wrapping messages end with the cause
//     that names the value. What an error line quotes in single or
//     double quotes, a name with a digit or a separator (_ . - / : @),
//     is an id. At most 8 error lines are taken per tool result.
//   - symbol: snake_case, camelCase, compound PascalCase (TokenStore,
//     TestRefresh), dotted names (pkg.Func), calls (total()), declared
//     names in code (func Name, def name, class Name), stack frame
//     functions; any name inside an inline code span.
//   - id: commit hashes (7 to 40 hex digits with a letter and a digit),
//     #123, BILL-231, UUIDs, versions (v1.2.3, 1.2.3, go1.22, ^4.17.0,
//     lodash@4.17.21), port 8080, :8080, an id glued to its name by a
//     colon (ClientConnectionId:6f1c0e2a-...), and key=value settings
//     (PORT=8080, --timeout=30s), but for the counts of a line that sums
//     up a run in three or more of them (PASS=3 WARN=0 ERROR=1).
//
// Identifiers are deduplicated by a key that ignores case, trailing
// punctuation, a leading ./ of a path and the () of a call; a text found
// as two kinds takes the stronger (command, error, url, path, id,
// number, symbol). The text kept is the one a tool call gave, else the
// first seen.
//
// What the conversation does not name comes second: an identifier found
// only in tool output or in code a tool call writes is in the first tier
// only if it is an error line, or an error line or a stack frame names it
// (the file and function of a crash, with its file:line site), or a line
// under an error line names it (up to a blank line, at most 12 lines; a
// name of code excepted), or another line of output that reports a
// failure in words (a JSON body's "error" field, "... FAILED",
// "connection refused"; not a count of none such as "errors: 0") names
// it, or the written code declares it. What only the repeats of an
// error line name (lines of one output that differ only in their ids and
// numbers: a log's request ids) counts as named on such another line.
// The other URLs, paths, ids and sizes of tool output form a second tier
// that fills what room the budget leaves; then come the file:line sites other output shows (a log,
// grep -n, a profile) and the tests a runner says passed; the code names
// in a file the agent read, a directory listing or a build log are not
// listed. When not everything fits, up to 5% of the budget of what
// passing outputs show (latest first, one site per file) ranks right
// after the first tier, ahead of what other output shows, so that the
// last passing state of each thing survives. Three or more reads of one pattern (cat <path>, the same
// program and flags on one path each) are one command line with the
// pattern, the count, the shared directory and every command. A cleared
// tool result is read through its digest (see Digest). The sections
// quote the conversation without its Markdown layout (emphasis, heading
// hashes, leading symbols), leave out lines that are only headings, and
// never hold an item that only says there is nothing.
//
// Ranking: the kind's weight (error 5, command 4.5, path 4, url 4, id 3,
// number 3, symbol 2.5), times 1 + ln(occurrences)/2, plus 4 if the user
// said it, 2.5 if a tool call named it, 2 if the assistant said it, 0.5
// if it thought it, and up to 2 for recency (its last occurrence's
// position in the span); an identifier only output or written code shows
// (an error excepted) keeps 70% of that; failure evidence gains 3 (1.5
// for a line that reports a failure only in words). Ties go to the first seen.
// Error lines that differ only in opaque tokens (hashes, ids of six
// digits or more) keep the best ranked of them, and those that differ
// only in numbers standing alone (one compiler message at many
// line:column places) the best two. The first tier is then taken in
// four parts, each in turns by kind (each kind's best, then each kind's
// second best...), so that every kind is listed before any kind is
// complete: first the failure evidence the conversation does not name
// (error lines of tool output; what an error line names, a failing
// test's whole name, a JSON error body's fields, the headers of an HTTP
// response that failed with a 5xx and the line that closes a Python
// traceback included; the sites
// of stack frames in the project), then what the conversation names,
// then what only code the agent wrote shows (the URLs, codes and ports
// it put in a file), and last the commands and paths of the tool calls
// that only read, which no person or model text says. A path in a
// language's runtime or a dependency (/usr/local/go/src/, site-packages/,
// node_modules/, ...) that only a stack frame shows ranks with what only
// output shows.
//
// Work is bounded: of a tool result or a long argument, the first 48 KiB
// and the last 16 KiB are scanned. A span of about 1,000 entries (95k
// tokens) takes about 15 ms, one of 3,900 entries about 30 ms (see
// BenchmarkLedger).
//
// # Budget
//
// Options.Budget (default 6000 tokens: at the default compaction
// threshold a span's identifiers alone need about 2,800) bounds the whole text as counted by Options.Tokenizer. The
// sections above Critical Context get at most 40% of it (25% when the
// ledger then does not fit the rest, if that carries more identifiers);
// when they need more, Done items go first (the oldest), then decisions (the oldest),
// notes, constraints, next steps and in-progress items (the last), each
// list keeping a few items until nothing else is left to drop, and the
// goal is cut last. When not every identifier fits in half the budget,
// whole error lines take at most 15% of it ahead of the rest of the
// first tier (a line longer than a quarter of that share is not among
// them): the lines past that share move to the head of the second
// tier, and the identifiers on them (codes, sites, ids, URLs, ports),
// candidates of their own, stand for them at a fraction of their cost.
// What only a failure reported in words names moves there too, after
// the first tier and before what other output shows.
// The ledger gets the rest: identifiers in rank order,
// each skipped when the text already says it (the prose quotes it, or a
// listed identifier contains it as a whole word) and listed if its entry
// still fits, a smaller one further down taking room a larger one could
// not use. The text is then counted whole and the last listed
// identifiers dropped until it fits. Result.Ledger is what the text
// carries (listed or quoted), Result.Omitted what did not fit.
//
// # Extractive and model checkpoints
//
// Without a model (Options.LLM nil) the prose is extractive and
// deterministic: the same span and previous text give the same bytes.
//
//   - Goal: the first user request's first sentence, and the next one
//     while the goal is short and the sentence is no constraint (with the
//     next request if the first is a few words).
//   - Constraints & Preferences: the user's sentences that say must,
//     should, don't, never, always, prefer, avoid, only, keep, make sure,
//     at most...
//   - Done: files written, edited, moved or deleted by successful tool
//     calls (one item per file, with its count of edits); test, build and
//     lint commands whose last run passed ("`go test ./...` passes": its
//     output was read and says no FAIL, "N failed", panic, error or
//     non-zero exit status), and those whose output was cleared before
//     it was read, without an outcome ("Ran `go test ./...` (output not
//     kept)");
//     commands that changed state (git commit, npm install, mv, ...); and
//     the assistant's statements of completion, and the first statement
//     of each final reply (an assistant text no tool call follows).
//   - In Progress: checks whose last run failed, with their first error
//     line; the last user request if the span ends before its final
//     reply.
//   - Key Decisions: sentences of the user and the assistant that decide
//     (decided, chose, going with, settled on, ...) or commit to one thing
//     instead of or rather than another.
//   - Next Steps: the plan in the assistant's last message: the list after
//     a line announcing it ("Next steps:"), else its sentences that look
//     ahead (next, then I'll, still need, remaining, TODO).
//
// With a model, the writer asks for the prose with the CHECKPOINT prompt
// on a first compaction and the UPDATE prompt (the current checkpoint,
// then the new messages) on later ones; both give the format and its
// rules, and tell the model that identifiers are appended mechanically.
// The span is shown by Serialize: one paragraph per entry, tool calls as
// name(args), long tool outputs, arguments, thinking and text shortened
// to their head and tail around a marker, and, over Options.PromptBudget,
// shortened harder and then thinned from the middle. The reply is parsed;
// sections it leaves out are taken from the extractive checkpoint; notes
// of its Critical Context that only list identifiers go to the ledger
// (if the span or the previous checkpoint says them); then the prose is
// fitted and the ledger added as above, so identifiers the model dropped
// are there all the same. A reply with no section heading is sent back
// once with a repair prompt; if the repair is no checkpoint either (or
// the reply was empty), the extractive checkpoint is used and
// Result.Fallback says why. A model
// call that fails (after retrying retryable provider errors, see
// Options.Retries), a model that cannot be reached included, gives the
// extractive checkpoint too, with Result.Fallback saying why: the span is
// never dropped for want of a model.
//
// # Updates
//
// When previous is not empty (or the span holds an earlier checkpoint
// message, such as compact's summary pair, which is then not read as
// conversation), the result is an update. Its ledger is the span's, then
// the previous checkpoint's identifiers (its Critical Context lines and
// what the scanner finds in its other sections) that the span does not
// repeat, older entries last, minus those the span supersedes:
//
//   - a path the span deletes or renames away (rm, git rm, mv, git mv, a
//     delete or rename tool), or one under such a directory;
//   - a key=value setting the span sets to another value;
//   - an error whose subject (the first path, else the first name, it
//     mentions) a successful test or build run of the span covers: the
//     run names it, names a directory above it, or covers everything (no
//     path argument, or ./...); or that the assistant says is fixed.
//
// The extractive prose of an update keeps the previous goal (with the
// span's last request as "Latest request: ..."), constraints, decisions,
// notes and Done items, and adds the new ones; an In Progress or Next
// Steps item the span completes (a new Done item names one of its
// identifiers or shares 60% of its words) leaves, and new next steps come
// first. A previous text that is not a checkpoint becomes a note.
package checkpoint
