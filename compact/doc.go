// Package compact shrinks the live message list of an agent whose context
// window is filling up, in the two shapes agents send: OpenAI chat
// messages and Anthropic messages. It works in two layers.
//
// Layer 1, tool-output pruning (Prune), is cheap and needs no model; run
// it before every call in a tool loop. Old tool results are soft-trimmed
// to their head and tail around a marker that says how much was cut:
//
//	[first 1500 characters]
//
//	--- trimmed (kept 1500 head + 1500 tail of 24000 chars) ---
//	It held: [the digest of the part cut out, see below]
//
//	[last 1500 characters]
//
// (the digest line only where the room left below ToolSoftTrimChars
// holds one),
// and very old ones are hard-cleared to ClearedPlaceholder, followed by
// a digest line naming the identifiers they held (checkpoint.Digest,
// at most DigestMaxChars, DigestFailMaxChars for a result with an error
// line, whose failure evidence comes first, or all its lines when they
// fit; Config.ToolClearDigest). The latest
// tool results, results with images, user text and everything an
// assistant wrote (text, tool calls, thinking) are never touched.
//
// Layer 2, history compaction (Compactor.Compact), runs when the estimated
// input plus the output headroom exceeds a threshold. It cuts the list at
// a user turn so that about KeepRecentTokens of recent history stay
// verbatim, hands the older span to a PreCompact hook (to keep it in
// long-term memory, see SpanTurns) and to a Checkpointer, which writes a
// structured checkpoint (Goal, Constraints & Preferences, Progress, Key
// Decisions, Next Steps, Critical Context) or updates the previous one,
// and rebuilds the list as
//
//	[system messages] + user "[Previous conversation summary]\n\n<checkpoint>"
//	                  + assistant Acknowledgement + recent window
//
// so that roles alternate as the provider requires and no tool call is
// separated from its result. If the checkpointer fails, the span is
// dropped anyway and the previous checkpoint, if any, stays (Result says
// so). The conversation's strata.CompactionState (checkpoint, messages
// handed to memory, compactions) goes in and out of each call; a
// StateStore keeps it across restarts.
//
// Tokens are counted with a strata.Tokenizer (chars/4 by default), and can
// be calibrated with the input tokens the provider reported for the last
// call (Request.Usage).
//
// Message lists are parsed (Parse) from a JSON array of messages or an
// object with "messages" (and "system" for Anthropic); every other field,
// and every message and block strata does not change or does not know,
// is written back byte for byte.
//
// # Configuration
//
// Config holds both layers' settings; DefaultConfig and ConfigFromEnv
// give the defaults, overridden by environment variables:
//
//	field                   variable                        default
//	ToolPruningEnabled      STRATA_TOOL_PRUNING_ENABLED     true
//	ToolSoftTrimChars       STRATA_TOOL_SOFT_TRIM_CHARS     4000 (characters)
//	ToolSoftTrimHead        STRATA_TOOL_SOFT_TRIM_HEAD      1500
//	ToolSoftTrimTail        STRATA_TOOL_SOFT_TRIM_TAIL      1500
//	ToolHardClearAfter      STRATA_TOOL_HARD_CLEAR_AFTER    6 (tool-result messages; 0 never)
//	ToolClearDigest         STRATA_TOOL_CLEAR_DIGEST        true (a cleared result names what it held)
//	KeepLastToolResults     STRATA_KEEP_LAST_TOOL_RESULTS   2
//	CompactionEnabled       STRATA_COMPACTION_ENABLED       false (opt-in)
//	CompactionThreshold     STRATA_COMPACTION_THRESHOLD     100000 (tokens)
//	KeepRecentTokens        STRATA_KEEP_RECENT_TOKENS       20000
//	OutputHeadroom          STRATA_OUTPUT_HEADROOM          16000
//
// A typical agent loop:
//
//	cfg, err := compact.ConfigFromEnv(os.Getenv)
//	c, err := compact.New(compact.Options{Config: cfg, Tokenizer: tok, Checkpointer: writer})
//	t, err := compact.Parse(compact.Anthropic, body)
//	res, err := c.Compact(ctx, compact.Request{Transcript: t, State: state})
//	state = res.State // save it
//	body = res.Transcript.JSON() // the list to send
package compact
