package formats

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/strata-memory/strata"
)

type locomoReader struct {
	docReader
}

func (r *locomoReader) Next() (Record, error) {
	for {
		if rec, err, ok := r.next(); ok {
			return rec, err
		}
		if r.err != nil {
			return Record{}, r.err
		}
		if !r.started {
			c, err := r.start()
			switch {
			case err != nil:
				r.err = err
			case c != '[':
				r.err = &ParseError{File: r.name, Line: r.lt.lineAt(0), Msg: "want a JSON array of LoCoMo samples, got " + kind([]byte{c})}
			default:
				if _, err := r.dec.Token(); err != nil {
					r.err = r.syntax(err)
				}
			}
			continue
		}
		raw, line, err := r.element()
		if err != nil {
			r.err = err
			continue
		}
		prefix := fmt.Sprintf("[%d].", r.index)
		r.index++
		r.pending = r.sample(raw, line, prefix)
	}
}

// locomoSession is one session_N of a sample, as found in the file.
type locomoSession struct {
	n        int
	key      string // "session_N"
	turns    []member
	lines    []int // line of each turn
	turnsRaw json.RawMessage
	turnsAt  int // line of the session_N value
	date     json.RawMessage
	dateAt   int // line of the session_N_date_time value
}

// sample parses one LoCoMo sample into its records.
func (r *locomoReader) sample(raw []byte, line int, prefix string) []result {
	fail := func(err error) []result { return []result{{err: err}} }
	o, err := parseObject(r.name, line, prefix, raw)
	if err != nil {
		return fail(err)
	}
	conv, err := o.id("sample_id")
	if err != nil {
		return fail(err)
	}
	if conv == "" {
		return fail(o.errf("sample_id", "missing"))
	}
	cv, ok := o.get("conversation")
	if !ok {
		return fail(o.errf("conversation", "missing"))
	}
	lc := newLineCounter(raw, line)
	sm, _ := members(raw)
	cOff := 0
	for _, m := range sm {
		if m.key == "conversation" {
			cOff = m.off // the last one wins, as in o.m
		}
	}
	co, err := parseObject(r.name, lc.at(cOff), prefix+"conversation.", cv)
	if err != nil {
		return fail(err)
	}
	speakerA, err := co.str("speaker_a")
	if err != nil {
		return fail(err)
	}
	speakerB, err := co.str("speaker_b")
	if err != nil {
		return fail(err)
	}
	if speakerA == "" {
		return fail(co.errf("speaker_a", "missing"))
	}
	if speakerB == "" {
		return fail(co.errf("speaker_b", "missing"))
	}

	var out []result
	for _, s := range locomoSessions(cv, lc, cOff) {
		out = append(out, r.session(co, s, conv, speakerA, speakerB)...)
	}
	return out
}

// locomoSessions walks the conversation cv in file order, noting the line
// of every turn, and returns its sessions in order. cv is at offset cOff
// of what lc counts the lines of.
func locomoSessions(cv json.RawMessage, lc *lineCounter, cOff int) []*locomoSession {
	cms, _ := members(cv)
	sessions := map[int]*locomoSession{}
	session := func(n int) *locomoSession {
		s := sessions[n]
		if s == nil {
			s = &locomoSession{n: n, key: "session_" + strconv.Itoa(n)}
			sessions[n] = s
		}
		return s
	}
	for _, m := range cms {
		at := lc.at(cOff + m.off)
		rest, ok := strings.CutPrefix(m.key, "session_")
		if !ok {
			continue
		}
		num, isDate := strings.CutSuffix(rest, "_date_time")
		n, err := strconv.Atoi(num)
		if err != nil || n < 0 || num[0] == '+' || num[0] == '-' {
			continue
		}
		s := session(n)
		if isDate {
			s.date, s.dateAt = m.val, at
			continue
		}
		s.key, s.turnsRaw, s.turnsAt, s.turns, s.lines = m.key, m.val, at, nil, nil
		if m.val[0] != '[' {
			continue // reported below
		}
		s.turns, _ = members(m.val)
		for _, t := range s.turns {
			s.lines = append(s.lines, lc.at(cOff+m.off+t.off))
		}
	}
	order := make([]*locomoSession, 0, len(sessions))
	for _, s := range sessions {
		order = append(order, s)
	}
	slices.SortFunc(order, func(a, b *locomoSession) int { return a.n - b.n })
	return order
}

// session parses the turns of one session of conversation co; each turn's
// time is the session's date, a second after the turn before.
func (r *locomoReader) session(co *object, s *locomoSession, conv, speakerA, speakerB string) []result {
	fail := func(err error) []result { return []result{{err: err}} }
	if len(s.turnsRaw) == 0 || string(s.turnsRaw) == "null" {
		return nil // a date without turns
	}
	if s.turnsRaw[0] != '[' {
		return fail(&ParseError{File: r.name, Line: s.turnsAt, Field: co.prefix + s.key,
			Msg: "want an array of turns, got " + kind(s.turnsRaw)})
	}
	if len(s.turns) == 0 {
		return nil
	}
	dateField := s.key + "_date_time"
	if len(s.date) == 0 || string(s.date) == "null" {
		return fail(&ParseError{File: r.name, Line: s.turnsAt, Field: co.prefix + dateField,
			Msg: "missing (a session with turns needs a date)"})
	}
	do := &object{file: r.name, line: s.dateAt, prefix: co.prefix, m: map[string]json.RawMessage{dateField: s.date}}
	ds, err := do.str(dateField)
	if err != nil {
		return fail(err)
	}
	start, ok := parseLoCoMoDate(ds)
	if !ok {
		return fail(do.errf(dateField, "cannot parse %q as a date (want like \"1:56 pm on 8 May, 2023\")", ds))
	}
	var out []result
	for i, tm := range s.turns {
		rec, err := r.turn(tm.val, s.lines[i], fmt.Sprintf("%s%s[%d].", co.prefix, s.key, i), conv, speakerA, speakerB)
		if err == nil {
			imgs, _ := rec.Turn.Metadata["img_url"].([]any)
			rec.Turn.SessionLabel = s.key
			rec.Turn.Time = start.Add(time.Duration(i) * time.Second)
			rec, err = finish(r.ids, r.name, rec.Line, fmt.Sprintf("%s%s[%d].", co.prefix, s.key, i), conv, &rec.Turn, "text", len(imgs) > 0)
		}
		out = append(out, result{rec, err})
	}
	return out
}

// turn parses one turn of a session; finish is left to the caller, which
// knows the turn's time.
func (r *locomoReader) turn(raw []byte, line int, prefix, conv, speakerA, speakerB string) (Record, error) {
	o, err := parseObject(r.name, line, prefix, raw)
	if err != nil {
		return Record{}, err
	}
	var t strata.Turn
	if t.Name, err = o.str("speaker"); err != nil {
		return Record{}, err
	}
	switch t.Name {
	case "":
		return Record{}, o.errf("speaker", "missing")
	case speakerA:
		t.Role = strata.RoleUser
	case speakerB:
		t.Role = strata.RoleAssistant
	default:
		return Record{}, o.errf("speaker", "%q is neither speaker_a (%q) nor speaker_b (%q)", t.Name, speakerA, speakerB)
	}
	if t.ExtID, err = o.id("dia_id"); err != nil {
		return Record{}, err
	}
	if t.Content, err = o.str("text"); err != nil {
		return Record{}, err
	}
	for _, k := range [][2]string{{"img_url", "img_url"}, {"blip_caption", "blip_caption"}, {"query", "image_query"}} {
		v, err := o.anyValue(k[0])
		if err != nil {
			return Record{}, err
		}
		if v == nil {
			continue
		}
		if t.Metadata == nil {
			t.Metadata = map[string]any{}
		}
		if s, ok := v.(string); ok && k[0] == "img_url" {
			v = []any{s}
		}
		t.Metadata[k[1]] = v
	}
	if v, ok := t.Metadata["img_url"]; ok {
		if _, ok := v.([]any); !ok {
			return Record{}, o.errf("img_url", "want a string or an array of strings")
		}
	}
	return Record{Conversation: conv, Turn: t, Line: line}, nil
}

// parseLoCoMoDate parses a LoCoMo session time like "1:56 pm on 8 May,
// 2023", in UTC.
func parseLoCoMoDate(s string) (time.Time, bool) {
	s = strings.ToLower(strings.Join(strings.Fields(s), " "))
	for _, layout := range []string{
		"3:04 pm on 2 January, 2006",
		"3:04 pm on 2 Jan, 2006",
		"3:04 pm on January 2, 2006",
		"3:04 pm on Jan 2, 2006",
	} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}
