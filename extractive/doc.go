// Package extractive is strata's offline, deterministic summarizer: it
// writes a node's summary by choosing sentences of the span and listing
// the identifiers those sentences leave out, within the node's token
// budget, with no model and no network.
//
//	sum, err := extractive.New().Summarize(ctx, strata.SummaryRequest{
//		Level: 1, Budget: 120, Turns: turns, Tokenizer: tok})
//
// # Output
//
// Summary.Text groups the chosen sentences, in chronological order, under
// their speaker, then lists what they miss:
//
//	Caroline: I went to a LGBTQ support group yesterday. Melanie: I painted that lake sunrise last year!
//	Mentions: /etc/nginx/nginx.conf; $4,500; 7 May 2023
//
// When the span covers more than one calendar day (by Turn.Time, or by the
// children's Start), each day's sentences open with a marker such as
// "[25 May 2023]". Summary.Facts holds up to 10 short statements, each
// "Speaker: sentence"; Summary.Themes 3 to 6 lower-case keywords.
//
// # Algorithm
//
//  1. Sentences. Each turn's Text (so tool calls and results count) is
//     split at . ! ? followed by a space, at newlines and at CJK full
//     stops. A period is no boundary after a title or an abbreviation
//     ("Dr.", "e.g.", "U.S."), after an initial, or before a lower-case
//     word (unless that word is a speaker label, "assistant: "); periods
//     inside tokens (3.5, example.com, ./a.go, URLs) never are, since no
//     space follows them. Runs longer than 480 bytes are cut at a space,
//     or between characters of a script written without spaces (Thai,
//     Chinese, Japanese). List bullets and leading interjections ("Wow, ")
//     are dropped, white space collapsed, and blobs (over 256 bytes
//     without a space: base64, minified code) shortened. Code is no
//     sentence: fenced blocks, indented blocks and code-like lines (SQL,
//     key=value, braces, diffs, test output) only give identifiers.
//  2. Tokens and identifiers, by a hand-written scanner (no regular
//     expressions: it runs on every turn of every import): URLs, e-mail
//     addresses, paths (/x/y.go, ./a, ~/a, C:\x, src/main.go), code
//     identifiers (snake_case, camelCase, pkg.Func, foo(), --flags,
//     `backticked spans`, #12, @user, v1.2.3), dates (7 May 2023,
//     2023-05-07, May 7, Saturday), times (1:56 pm, 10am), numbers with
//     their currency, unit or counted noun ($4,500, 3.5 GB, 5 miles), and
//     names: runs of capitalized words ("New York", "Dr. Smith", "Crumb &
//     Co"), acronyms, and speakers. A capitalized word opening a sentence
//     or a clause is a name only if it also appears capitalized elsewhere
//     in the span or is a speaker. Inside code and backticks only URLs,
//     addresses, paths and code identifiers count. A bare number ("14")
//     weighs but is never listed. Identifiers rank by frequency, then
//     first occurrence.
//  3. Content words: the other words, lower-cased, minus English stop
//     words and chat small talk, folded by a crude stemmer (painted,
//     painting -> paint); spaceless scripts count character pairs. A
//     term weighs 1 + ln(its frequency in the span).
//  4. Trivial sentences ("ok", "thanks!", "lol", greetings, a bare name)
//     are dropped unless nothing else exists.
//  5. Candidates. A sentence of 10 words or more also competes as its head
//     clause, cut before ", which", ", but", " - ", "; " and the like
//     (the first and the last such cut); at most one version of a
//     sentence is chosen. Every candidate is counted once with
//     req.Tokenizer.
//  6. Selection. Pinned turns (importance >= 0.8) are quoted whole first
//     if they fit. Then, greedily, the candidate whose uncovered weight
//     per token is highest is added: the weights of its content words and
//     identifiers that no chosen sentence carries yet (identifiers weigh
//     2.5 to 4 words each), scaled by turn importance (1 + importance),
//     x1.15 for a turn's first sentence, x1.25 for an "I/we/my/Name +
//     verb" statement, x0.8 for one about the listener ("You'd be ..."),
//     x0.6 for a question, x0.5 for a sentence ending in ":" and, above
//     level 1, x1.3 for a child not yet represented, so that a macro
//     digests all its children rather than the first. Its cost includes
//     the speaker label or day marker it adds. A candidate repeating a
//     chosen one (75% of the same terms and identifiers) is skipped. A
//     share of the budget (up to 35%) stays free while identifiers remain
//     uncovered, for the Mentions.
//  7. Mentions: the identifiers no chosen sentence carries, best ranked
//     first, as many as fit. If no sentence fits at all, the text is the
//     Mentions alone; if none fits either, the best sentence cut at the
//     last word boundary that fits, marked "…". Cuts never fall inside a
//     word or an identifier.
//  8. One exact count of the assembled text (the parts were counted
//     separately and summed); if it exceeds the budget, Mentions and then
//     the least valuable sentences are dropped and the text recounted.
//     A text is over budget only when not even one word fits; the engine
//     then marks the node over_budget.
//  9. Facts: sentences that are not questions, scored 3 for a name or
//     code identifier together with a number or date, 2 for a number or
//     date alone, 1 for either alone, +2 for an "I/we/my/Name is/has/
//     likes/went ..." statement (+1 for "it/the/this ..."), +2 for a
//     pinned turn or a child's fact; the best (score >= 2) up to 10, in
//     chronological order, sentences over 30 words cut at a clause
//     boundary. Themes: the terms of highest frequency (children's themes
//     add 2 each), shown in their most frequent surface form, ties
//     alphabetical; names, numbers and weak words (last, day, take...)
//     excluded, acronyms included.
//
// Levels above 1 read their children the same way: the sentences of each
// child's Summary (speaker labels and day markers as this package prints
// them are parsed back; a sentence that itself opens like a label,
// "Decision: ...", is always printed after its speaker's label so that it
// cannot be taken for one), its Facts as further candidates (in the text
// only when the child covers a single day, whose marker they then take),
// its Mentions as identifiers to keep, and its Themes.
//
// # Determinism and bounds
//
// The same request gives the same summary, byte for byte: no clock, no
// randomness, every ordering sorted with complete tie-breaks, no map
// iteration reaching the output. Work is bounded per turn, whatever its
// size: sentences are taken from its first 8 KiB and identifiers from its
// first 64 KiB and last 8 KiB (see Options); at most 256 sentences per
// request are counted by the tokenizer. A micro span of 10 turns of about
// 45 tokens takes well under 100 µs besides tokenizer time (see
// BenchmarkMicro). A Summarizer is safe for concurrent use.
package extractive
