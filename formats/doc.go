// Package formats reads conversations from files into strata turns.
//
// Open returns a Reader for one input; its Next yields one Record at a time
// (a strata.Turn, the conversation it belongs to, and the line it starts
// on) and io.EOF at the end. Formats: "jsonl", "openai", "locomo", the
// agent transcripts "claude-code", "codex", "chatgpt" and "anthropic"
// (their fields, and what they skip on purpose, are in docs/formats.md;
// their readers implement Counter), and "auto", which picks one of them
// from the first 64 KiB (see Detect).
//
// # What every format guarantees
//
// Every record passes strata.Turn.Validate. Its ExtID is always set: taken
// from the source when it has one, otherwise derived with
// strata.DeriveExtID(&turn, occurrence), where occurrence counts the earlier
// turns of the same conversation in this input that derive the same base id.
// Identical turns therefore get distinct ids ("h…", "h…-1", "h…-2"), and
// reading the same input again derives the same ids, so re-importing a file
// adds nothing. Seq, Session and Tokens are left zero (the engine assigns
// them); times are in UTC; a turn without a time has the zero time (the
// engine stamps it).
//
// A turn must have content, tool calls or tool results: a message with none
// of them is an error, except the image-only messages noted below. Text must
// be valid UTF-8: encoding/json would silently turn invalid bytes and lone
// \u surrogate escapes into U+FFFD, so the source bytes of every text field
// are checked and rejected.
//
// Bad input is a *ParseError naming the file, the line and the field, like
//
//	chat.jsonl:12: field "time": cannot parse "yesterday" as a time (want RFC 3339)
//	chat.json:40: field "[7].tool_calls[0].function.name": missing
//
// In the JSON document formats the field is a JSON path from the document
// root, so it locates the record even when the whole file is one line.
// strata.ErrorCode of a ParseError is strata.EINVALID. After a ParseError
// about one record, Next may be called again to skip it and go on; a
// malformed JSON document (openai, locomo) ends the input, and every later
// Next returns the same error. An empty input, or one of only white space,
// is no error: Next returns io.EOF at once. A leading UTF-8 byte order mark
// is skipped.
//
// # jsonl
//
// One JSON object per line; blank lines are skipped; lines may be of any
// length. A line is read whole, so memory holds one line at a time. Fields:
//
//	conversation  string or number: the conversation id; absent or "" = the
//	              caller's default
//	session       string or number (kept as written): Turn.SessionLabel
//	ext_id        string or number (kept as written): Turn.ExtID; absent or
//	              "" = derived
//	role          required: user, assistant, system or tool (any case)
//	name          string: the speaker's name
//	content       string
//	time          RFC 3339 string (fraction and offset allowed), or a number
//	              of unix seconds (fraction allowed, read exactly to the
//	              nanosecond; years 1 to 9999, so milliseconds are refused);
//	              absent, null or "" = no time; a time outside what a
//	              store keeps (strata.MinTime..MaxTime, 1677-09-21 to
//	              2262-04-11) is refused, as is 0001-01-01T00:00:00Z, the
//	              zero time, which would read as no time
//	model         string: the model that produced the turn
//	metadata      object: Turn.Metadata (numbers become float64)
//	importance    number from 0 to 1
//	tags          array of strings
//	tool_calls    array of {id, name, arguments}: name is required; id may be
//	              a string or a number; arguments are kept as the exact
//	              bytes given: a string is the text it holds, JSON or not,
//	              spacing kept ("{\"a\": tru" is {"a": tru), any other
//	              JSON value is kept as written, and "" is no arguments
//	tool_results  array of {call_id, name, content, is_error}: content is a
//	              string, or any other JSON value kept as its JSON text;
//	              is_error is a boolean
//	tokens        ignored (the engine counts tokens itself)
//
// null is the same as an absent field. Any other field is an error naming
// it, so that a misspelt field ("contnet") is caught rather than dropped;
// tool_calls and tool_results elements are checked the same way. content
// may be empty or absent only when the turn has tool calls or tool results.
// Line is the 1-based line number in the file.
//
// # openai
//
// OpenAI chat-completion messages, in one of three shapes:
//
//   - a JSON array of messages: records have conversation "" (the caller's
//     default); the array is streamed, one message in memory at a time;
//   - a JSON object with "messages" (an array of messages), and optionally
//     "conversation" or "id" (string or number; "conversation" wins) naming
//     the conversation, and "model", the model of its assistant turns; other
//     keys (tools, temperature, ...) are ignored. The object is read whole;
//   - a JSON array of such objects, streamed one object at a time (arrays
//     may mix objects and messages).
//
// A message has:
//
//	role          required: system, developer (→ system), user, assistant,
//	              tool, function (→ tool); any case
//	content       a string, null, or an array of content parts: parts of type
//	              text, input_text, output_text (their "text") and refusal
//	              (its "refusal"), and parts without a type that have a
//	              "text", are joined with newlines into Turn.Content;
//	              image_url parts ({"image_url": {"url": ...}} or
//	              {"image_url": "..."}) go to Metadata["images"], a list of
//	              URLs; parts of any other type go whole to
//	              Metadata["parts"]. A message whose parts are all non-text
//	              imports with empty content.
//	name          Turn.Name; on tool and function messages, ToolResult.Name
//	tool_calls    array of {id, type, function: {name, arguments}}: one
//	              strata.ToolCall each. arguments is a JSON string in OpenAI;
//	              the text it holds is stored as it is, JSON or not
//	              (ToolCall.Arguments = {"city": "Paris"}, or a truncated
//	              {"city": "Par). type "custom" ({custom:
//	              {name, input}}) is read the same way; other types are
//	              errors.
//	function_call legacy {name, arguments}: one more tool call, without id
//	tool_call_id  on tool messages: ToolResult.CallID
//	refusal       when content is empty: becomes the content, and
//	              Metadata["refusal"] is true
//
// A tool (or function) message becomes a tool turn whose one ToolResult
// holds the text (CallID = tool_call_id, Name = name, Content = the message
// content); Turn.Content and Turn.Name are left empty, so the text is not
// stored twice. Other keys of a message are ignored. OpenAI messages carry
// no time: Time is zero and the engine stamps it on ingest.
//
// Line is the line where the message's object starts. The field of an error
// is a JSON path from the root, "[3].content" in a bare array,
// "messages[3].content" in an object, "[1].messages[3].content" in an array
// of objects, which locates the message in a file written on one line.
//
// # locomo
//
// The LoCoMo benchmark file (Maharana et al., 2024): a JSON array of
// samples, streamed one sample at a time. Each sample is one conversation:
//
//	sample_id     required (string or number): the conversation id
//	conversation  required object:
//	  speaker_a, speaker_b   required names. Turns by speaker_a get role
//	                         user, turns by speaker_b role assistant; a turn
//	                         by anyone else is an error
//	  session_N              array of turns; N is a number, and sessions are
//	                         read in numeric order (session_2 before
//	                         session_10) whatever their order in the file
//	  session_N_date_time    the session's start, like "1:56 pm on 8 May,
//	                         2023", read in UTC (also "Jan" month
//	                         abbreviations and "May 8, 2023"). Required for
//	                         a session with turns; a date whose session is
//	                         absent or empty is skipped
//
// Other keys (qa, observation, session_summary, event_summary, and unknown
// ones) are ignored. A turn:
//
//	speaker       required: Turn.Name, and the role as above
//	dia_id        Turn.ExtID (like "D1:3"); absent = derived
//	text          Turn.Content; may be empty only with img_url
//	img_url       Metadata["img_url"]: a list of URLs (a single string
//	              becomes a one-element list)
//	blip_caption  Metadata["blip_caption"]
//	query         Metadata["image_query"]
//
// Other turn keys (such as re-download) are ignored. Turn.SessionLabel is
// "session_N" and the turns of a session are one second apart, the first at
// the session's date. Line is the line where the turn's object starts.
package formats
