// Package ctf reads and writes CTF, the Compact Turn Format: a header line
// that names the fields once, then one tab-separated row per record.
//
//	#CTF v1 turns=2 fields=role,name,content
//	user	Caroline	Hey Mel! Good to see you!
//	assistant	Melanie	Hi Caroline␊How have you been?
//
// The format is written down in docs/ctf.md. In short: rows end with LF; a
// field that is exactly "-" is null; TAB, LF and CR inside a value are
// written as the glyphs ␉, ␊ and ␍, and the escape glyph ␛ marks a literal
// glyph (␛␉, ␛␊, ␛␍, ␛␛) or a value that is exactly "-" (␛-). Every
// string round-trips byte for byte.
//
// The package has three layers:
//
//   - a generic codec over rows of optional strings: [Encoder], [Decoder],
//     [Marshal], [Unmarshal], [Escape], [Unescape];
//   - the mappings of strata's types: [EncodeTurns] / [DecodeTurns] for
//     [strata.Turn] (with the streaming [TurnEncoder] and [TurnDecoder]) and
//     [EncodeNodes] / [DecodeNodes] for [strata.Node] summaries; both also
//     read the files of the original sketch the format comes from;
//   - two helpers to render rows into a prompt: [HeaderLine] and [Row].
//
// Every malformed input is an error of type [*Error] naming the line
// (1-based, the header is line 1) and, when it applies, the field.
package ctf
