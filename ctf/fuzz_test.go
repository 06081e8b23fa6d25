package ctf

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/strata-memory/strata"
)

func FuzzRoundTrip(f *testing.F) {
	for i, c := range escapes {
		f.Add(c.value, c.field, escapes[len(escapes)-1-i].value, uint8(i))
	}
	f.Add("-", "", "␛-", uint8(0))
	f.Add("\r\n", "␍␊", "␛", uint8(5))
	f.Fuzz(func(t *testing.T, a, b, c string, nulls uint8) {
		for _, s := range []string{a, b, c} {
			field := Escape(s)
			if strings.ContainsAny(field, "\t\n\r") || field == "-" {
				t.Fatalf("Escape(%q) = %q", s, field)
			}
			v, err := Unescape(field)
			if err != nil || v.Null || v.S != s {
				t.Fatalf("Unescape(Escape(%q)) = %+v, %v", s, v, err)
			}
		}
		val := func(s string, bit uint) Value {
			if nulls&(1<<bit) != 0 {
				return Null()
			}
			return Str(s)
		}
		rows := [][]Value{
			{val(a, 0), val(b, 1), val(c, 2)},
			{val(c, 3), val(a, 4), val(b, 5)},
		}
		h := Header{Version: 1, Fields: []string{"a", "b", "c"}, Attrs: []Attr{CountAttr("count", 2)}}
		block, err := Marshal(h, rows)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.IndexByte(block, '\r') >= 0 || bytes.Count(block, []byte{'\n'}) != 3 {
			t.Fatalf("block %q", block)
		}
		h2, got, err := Unmarshal(block)
		if err != nil {
			t.Fatalf("%q: %v", block, err)
		}
		if !reflect.DeepEqual(h2, h) || !reflect.DeepEqual(got, rows) {
			t.Fatalf("%q: got %+v", block, got)
		}
		line := Row(a, b, c)
		_, got, err = Unmarshal([]byte(HeaderLine([]string{"a", "b", "c"}) + line))
		if err != nil || got[0][0].S != a || got[0][1].S != b || got[0][2].S != c || got[0][0].Null {
			t.Fatalf("Row %q: %v %v", line, got, err)
		}
	})
}

func FuzzTurns(f *testing.F) {
	f.Add("Hello there!\nHow are you?", "Caroline", `{"city": "Paris"}`, "tag", "key", "value", int64(1), int64(1768471200123456789), 0.5)
	f.Add("-", "-", "", "", "", "", int64(0), int64(0), 0.0)
	f.Add("␛␉\t␊\n␍\r", "␛", `"␛-"`, "a|b", "␉", "␊", int64(-1), int64(-1), 1.0)
	f.Add("\xff", "ok", "{}", "t", "k", "v", int64(2), int64(3), 0.25)
	f.Fuzz(func(t *testing.T, content, name, args, tag, mkey, mval string, seq, nanos int64, imp float64) {
		if math.IsNaN(imp) {
			imp = 0
		}
		tm := time.Unix(0, nanos).UTC()
		if nanos == 0 {
			tm = time.Time{}
		}
		turns := []strata.Turn{
			{
				Seq: seq, ExtID: name + "-1", Session: int(seq % 1000), SessionLabel: tag,
				Role: strata.Role(tag), Name: name, Content: content, Time: tm, Model: mval,
				ToolCalls:   []strata.ToolCall{{ID: tag, Name: name, Arguments: json.RawMessage(args)}},
				ToolResults: []strata.ToolResult{{CallID: tag, Name: name, Content: content, IsError: seq%2 == 0}},
				Tokens:      len(content), Importance: imp,
				Tags:     []string{tag, content},
				Metadata: map[string]any{mkey: mval, "list": []any{mval, imp, true, nil}},
			},
			{Role: "assistant", Content: args, Name: "-"},
			{},
		}
		if args == "" {
			turns[0].ToolCalls[0].Arguments = nil
		}
		if math.IsInf(imp, 0) {
			turns[0].Metadata["list"] = nil
		}
		valid := true
		for _, s := range []string{content, name, args, tag, mkey, mval} {
			valid = valid && utf8.ValidString(s)
		}
		b, err := EncodeTurns(turns, nil)
		if !valid {
			if err == nil {
				t.Fatalf("invalid UTF-8 encoded without error:\n%q", b)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeTurns(b)
		if err != nil {
			t.Fatalf("%q: %v", b, err)
		}
		if !reflect.DeepEqual(got, turns) {
			t.Fatalf("%q:\n got %#v\nwant %#v", b, got, turns)
		}
	})
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte("#CTF v1 turns=2 fields=role,content,timestamp,model\nuser\thello␊␉x\t2026-01-15T10:00:00\t-\nassistant\thi\t2026-01-15T10:00:01Z\tgpt-4o"))
	f.Add([]byte("#CTF v1 type=summaries count=2 fields=chunk_id,turn_range,summary,themes\nm1\t0-10\tx\ta|b\nm2\t10-20\ty\t\n"))
	f.Add([]byte("#CTF v1 fields=tool_calls,metadata,tags,importance,seq\n[{\"name\":\"f\",\"arguments\":\"{}\"}]\t{\"a\":1}\t[\"x\"]\t0.5\t3\n"))
	f.Add([]byte("#CTF v1 fields=a,b\r\nx\t␛␛\n"))
	f.Add([]byte("#CTF v1 fields=id,children,facts,derived,start\nn\t[\"a\"]\t[]\ttrue\t2026-01-15T10:00:00.5+01:00\n"))
	f.Add([]byte("#CTF v2 fields=a\n"))
	if b, err := EncodeTurns(fullTurns(), nil); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if h, rows, err := Unmarshal(data); err == nil {
			b, err := Marshal(h, rows)
			if err != nil {
				t.Fatalf("%q: decoded, but Marshal fails: %v", data, err)
			}
			h2, rows2, err := Unmarshal(b)
			if err != nil || !reflect.DeepEqual(h2, h) || !reflect.DeepEqual(rows2, rows) {
				t.Fatalf("%q: re-decoded %q as %+v %v", data, b, rows2, err)
			}
			// Every value has one spelling: the rows come back byte for
			// byte (the header may differ in spacing).
			_, in, _ := bytes.Cut(data, []byte{'\n'})
			_, out, _ := bytes.Cut(b, []byte{'\n'})
			if len(in) > 0 && in[len(in)-1] != '\n' {
				in = append(in[:len(in):len(in)], '\n')
			}
			if !bytes.Equal(in, out) {
				t.Fatalf("%q: rows written back as %q", data, b)
			}
		} else if _, ok := err.(*Error); !ok {
			t.Fatalf("%q: error %T %v", data, err, err)
		}
		if turns, err := DecodeTurns(data); err == nil {
			if b, err := EncodeTurns(turns, nil); err == nil {
				again, err := DecodeTurns(b)
				if err != nil {
					t.Fatalf("%q: re-encoded as %q: %v", data, b, err)
				}
				for i := range turns {
					if math.IsNaN(turns[i].Importance) {
						turns[i].Importance, again[i].Importance = 0, 0
					}
				}
				if !reflect.DeepEqual(again, turns) {
					t.Fatalf("%q: re-encoded as %q:\n got %#v\nwant %#v", data, b, again, turns)
				}
			}
		}
		if nodes, err := DecodeNodes(data); err == nil {
			if b, err := EncodeNodes(nodes, nil); err == nil {
				again, err := DecodeNodes(b)
				if err != nil || !reflect.DeepEqual(again, nodes) {
					t.Fatalf("%q: re-encoded as %q: %+v %v", data, b, again, err)
				}
			}
		}
	})
}
