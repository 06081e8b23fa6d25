package checkpoint

// Scan returns every identifier the ledger's scanners find in span, in
// the order first seen and deduplicated as the ledger does, before the
// ledger leaves out what the conversation does not name (an identifier
// only tool output or written code shows) and before any ranking or
// budget. It is the widest reading of "the span's identifiers", for
// measuring what a compaction keeps; Ledger is what a checkpoint lists.
func Scan(span []Entry) []Identifier {
	c := collect(analyze(span))
	out := make([]Identifier, len(c.cands))
	for i, d := range c.cands {
		out[i] = Identifier{Kind: kindNames[d.kind], Text: d.text}
	}
	return out
}
