package ctf

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/strata-memory/strata"
)

// The node fields, in canonical order, then the original sketch's two.
const (
	ncID = iota
	ncConversation
	ncLevel
	ncFirstSeq
	ncLastSeq
	ncStart
	ncEnd
	ncChildren
	ncSummary
	ncFacts
	ncThemes
	ncTokens
	ncSourceTokens
	ncMethod
	ncStatus
	ncFallback
	ncDerived
	ncCreated
	numNodeCols
	ncChunkID   = numNodeCols     // the sketch's id
	ncTurnRange = numNodeCols + 1 // the sketch's "a-b" turn range
)

var nodeNames = [numNodeCols]string{
	"id", "conversation", "level", "first_seq", "last_seq", "start", "end",
	"children", "summary", "facts", "themes", "tokens", "source_tokens",
	"method", "status", "fallback", "derived", "created",
}

// SummariesType is the type= attribute of a node block.
const SummariesType = "summaries"

// NodeFields returns the names of the node fields in canonical order: id,
// conversation, level, first_seq, last_seq, start, end, children, summary,
// facts, themes, tokens, source_tokens, method, status, fallback, derived,
// created. Decoding also accepts the original sketch's chunk_id (for id)
// and turn_range (for first_seq and last_seq).
func NodeFields() []string { return append([]string(nil), nodeNames[:]...) }

// nodeCols resolves field names; line is the line to blame.
func nodeCols(fields []string, line int, decoding bool) ([]int, error) {
	cols := make([]int, len(fields))
	seen := map[int]string{}
	for i, f := range fields {
		c := -1
		for j, n := range nodeNames {
			if n == f {
				c = j
			}
		}
		if decoding {
			switch f {
			case "chunk_id":
				c = ncChunkID
			case "turn_range":
				c = ncTurnRange
			}
		}
		if c < 0 {
			return nil, &Error{Line: line, Field: f, Msg: "not a summary field (want " + strings.Join(nodeNames[:], ", ") + ")"}
		}
		cols[i] = c
		// chunk_id and id name the same thing, as do turn_range and the
		// two seqs.
		keys := []int{c}
		switch c {
		case ncChunkID:
			keys = []int{ncID}
		case ncTurnRange:
			keys = []int{ncFirstSeq, ncLastSeq}
		}
		for _, k := range keys {
			if prev, ok := seen[k]; ok {
				return nil, &Error{Line: line, Field: f, Msg: "names the same node field as " + prev}
			}
			seen[k] = f
		}
	}
	return cols, nil
}

// nodeEmpty reports whether field c of n holds its zero value.
func nodeEmpty(n *strata.Node, c int) bool {
	switch c {
	case ncID:
		return n.ID == ""
	case ncConversation:
		return n.Conversation == ""
	case ncLevel:
		return n.Level == 0
	case ncFirstSeq:
		return n.FirstSeq == 0
	case ncLastSeq:
		return n.LastSeq == 0
	case ncStart:
		return n.Start.IsZero()
	case ncEnd:
		return n.End.IsZero()
	case ncChildren:
		return len(n.Children) == 0
	case ncSummary:
		return n.Summary == ""
	case ncFacts:
		return len(n.Facts) == 0
	case ncThemes:
		return len(n.Themes) == 0
	case ncTokens:
		return n.Tokens == 0
	case ncSourceTokens:
		return n.SourceTokens == 0
	case ncMethod:
		return n.Method == ""
	case ncStatus:
		return n.Status == ""
	case ncFallback:
		return n.Fallback == ""
	case ncDerived:
		return !n.Derived
	default:
		return n.Created.IsZero()
	}
}

// EncodeNodes returns the nodes as a block with the header attributes
// type=summaries count=N. fields chooses the fields, in order (see
// NodeFields); nil means every field that is non-empty in at least one
// node, in canonical order (id and summary when none is). Lists (children,
// facts, themes) are JSON arrays of strings; times are as in EncodeTurns.
func EncodeNodes(nodes []strata.Node, fields []string) ([]byte, error) {
	if fields == nil {
		var used [numNodeCols]bool
		for i := range nodes {
			for c := range used {
				used[c] = used[c] || !nodeEmpty(&nodes[i], c)
			}
		}
		for c, u := range used {
			if u {
				fields = append(fields, nodeNames[c])
			}
		}
		if fields == nil {
			fields = []string{nodeNames[ncID], nodeNames[ncSummary]}
		}
	}
	cols, err := nodeCols(fields, 0, false)
	if err != nil {
		return nil, err
	}
	h := Header{Fields: fields, Attrs: []Attr{{Key: "type", Value: SummariesType}, CountAttr("count", len(nodes))}}
	if err := h.Validate(); err != nil {
		return nil, err
	}
	size := 64
	for i := range nodes {
		size += len(nodes[i].Summary) + 16*len(fields)
	}
	b := h.appendTo(make([]byte, 0, size))
	b = append(b, '\n')
	var js jsonWriter
	for r := range nodes {
		n := &nodes[r]
		for i, c := range cols {
			if i > 0 {
				b = append(b, '\t')
			}
			var msg string
			b, msg = appendNodeField(b, &js, n, c)
			if msg != "" {
				return nil, &Error{Row: r + 1, Field: fields[i], Msg: msg}
			}
		}
		b = append(b, '\n')
	}
	return b, nil
}

// appendNodeField appends field c of node n to b; msg says why it
// cannot, if it cannot.
func appendNodeField(b []byte, js *jsonWriter, n *strata.Node, c int) ([]byte, string) {
	var msg string
	switch c {
	case ncID:
		b, msg = appendText(b, n.ID)
	case ncConversation:
		b, msg = appendText(b, n.Conversation)
	case ncLevel:
		b = appendInt(b, int64(n.Level))
	case ncFirstSeq:
		b = appendInt(b, n.FirstSeq)
	case ncLastSeq:
		b = appendInt(b, n.LastSeq)
	case ncStart:
		b, msg = appendTime(b, n.Start)
	case ncEnd:
		b, msg = appendTime(b, n.End)
	case ncChildren:
		b, msg = js.appendStrings(b, n.Children)
	case ncSummary:
		b, msg = appendText(b, n.Summary)
	case ncFacts:
		b, msg = js.appendStrings(b, n.Facts)
	case ncThemes:
		b, msg = js.appendStrings(b, n.Themes)
	case ncTokens:
		b = appendInt(b, int64(n.Tokens))
	case ncSourceTokens:
		b = appendInt(b, int64(n.SourceTokens))
	case ncMethod:
		b, msg = appendText(b, n.Method)
	case ncStatus:
		b, msg = appendText(b, n.Status)
	case ncFallback:
		b, msg = appendText(b, n.Fallback)
	case ncDerived:
		b = appendBool(b, n.Derived)
	case ncCreated:
		b, msg = appendTime(b, n.Created)
	}
	return b, msg
}

// DecodeNodes decodes a summary block: one written by EncodeNodes, or by
// the original sketch (fields chunk_id, turn_range, summary, themes). In a
// block with a chunk_id or turn_range field, themes are joined by '|' as
// the sketch wrote them; elsewhere they are a JSON array. turn_range "a-b"
// is the sketch's 0-based, end-exclusive range: it reads as first_seq a+1
// and last_seq b. The type= attribute, if any, must be summaries. Null
// fields read as zero values; empty lists read as nil.
func DecodeNodes(data []byte) ([]strata.Node, error) {
	d := newStringDecoder(string(data))
	h, err := d.Header()
	if err != nil {
		return nil, err
	}
	if typ, ok := h.Attr("type"); ok && typ != SummariesType {
		return nil, &Error{Line: 1, Msg: fmt.Sprintf("type=%s is not a summary block (want type=%s)", typ, SummariesType)}
	}
	cols, err := nodeCols(h.Fields, 1, true)
	if err != nil {
		return nil, err
	}
	d.reuse = true
	sketch := h.Index("chunk_id") >= 0 || h.Index("turn_range") >= 0
	nodes := make([]strata.Node, 0, min(max(d.want, 0), 1<<16))
	for {
		row, err := d.Next()
		if err == io.EOF {
			return nodes, nil
		}
		if err != nil {
			return nil, err
		}
		var n strata.Node
		for i, c := range cols {
			if msg := setNodeField(&n, c, row[i], sketch); msg != "" {
				return nil, &Error{Line: d.line, Field: h.Fields[i], Msg: msg}
			}
		}
		nodes = append(nodes, n)
	}
}

// setNodeField sets field c of node n from v; sketch says whether the
// block is of the original sketch. msg says why it cannot, if it cannot.
func setNodeField(n *strata.Node, c int, v Value, sketch bool) string {
	var msg string
	var x int64
	switch c {
	case ncID, ncChunkID:
		n.ID = v.S
	case ncConversation:
		n.Conversation = v.S
	case ncLevel:
		x, msg = parseInt(v, strconv.IntSize)
		n.Level = int(x)
	case ncFirstSeq:
		n.FirstSeq, msg = parseInt(v, 64)
	case ncLastSeq:
		n.LastSeq, msg = parseInt(v, 64)
	case ncTurnRange:
		n.FirstSeq, n.LastSeq, msg = parseTurnRange(v)
	case ncStart:
		n.Start, msg = parseTime(v)
	case ncEnd:
		n.End, msg = parseTime(v)
	case ncChildren:
		n.Children, msg = parseStrings(v)
	case ncSummary:
		n.Summary = v.S
	case ncFacts:
		n.Facts, msg = parseStrings(v)
	case ncThemes:
		if sketch {
			if v.S != "" {
				n.Themes = strings.Split(v.S, "|")
			}
		} else {
			n.Themes, msg = parseStrings(v)
		}
	case ncTokens:
		x, msg = parseInt(v, strconv.IntSize)
		n.Tokens = int(x)
	case ncSourceTokens:
		x, msg = parseInt(v, strconv.IntSize)
		n.SourceTokens = int(x)
	case ncMethod:
		n.Method = v.S
	case ncStatus:
		n.Status = v.S
	case ncFallback:
		n.Fallback = v.S
	case ncDerived:
		n.Derived, msg = parseBool(v)
	case ncCreated:
		n.Created, msg = parseTime(v)
	}
	return msg
}

// parseTurnRange reads the sketch's "a-b" (0-based, end-exclusive) as
// 1-based inclusive seqs.
func parseTurnRange(v Value) (first, last int64, msg string) {
	if v.Null || v.S == "" {
		return 0, 0, ""
	}
	a, b, ok := strings.Cut(v.S, "-")
	x, err1 := strconv.ParseInt(a, 10, 64)
	y, err2 := strconv.ParseInt(b, 10, 64)
	if !ok || err1 != nil || err2 != nil || x < 0 || y <= x {
		return 0, 0, fmt.Sprintf("%q is not a turn range start-end with 0 <= start < end", clip(v.S))
	}
	return x + 1, y, ""
}
