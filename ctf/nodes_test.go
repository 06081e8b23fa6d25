package ctf

import (
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/strata-memory/strata"
)

func TestNodesRoundTrip(t *testing.T) {
	t0 := time.Date(2026, 1, 15, 10, 0, 0, 0, time.UTC)
	nodes := []strata.Node{
		{
			ID: "n1", Conversation: "c", Level: 1, FirstSeq: 1, LastSeq: 10,
			Start: t0, End: t0.Add(time.Hour),
			Summary: "Caroline asked about Paris.\nMelanie answered.\t-",
			Facts:   []string{"Paris is in France", "a|b", "-"},
			Themes:  []string{"travel|weather", "food"},
			Tokens:  20, SourceTokens: 400, Method: strata.MethodExtractive, Status: strata.StatusOK,
			Created: t0.Add(2 * time.Hour),
		},
		{
			ID: "n2", Conversation: "c", Level: 2, FirstSeq: 1, LastSeq: 40,
			Children: []string{"n1", "n1b"}, Summary: "-", Method: strata.MethodLLM,
			Status: strata.StatusOverBudget, Fallback: "extractive", Derived: true,
		},
		{ID: "n3"},
	}
	b, err := EncodeNodes(nodes, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", b)
	if h := "#CTF v1 type=summaries count=3 fields=id,conversation,level,first_seq,last_seq,start,end,children,summary,facts,themes,tokens,source_tokens,method,status,fallback,derived,created\n"; !strings.HasPrefix(string(b), h) {
		t.Errorf("header %q", strings.SplitN(string(b), "\n", 2)[0])
	}
	got, err := DecodeNodes(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, nodes) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, nodes)
	}

	b, err = EncodeNodes(nodes[:1], []string{"id", "level", "summary", "themes"})
	if err != nil {
		t.Fatal(err)
	}
	want := "#CTF v1 type=summaries count=1 fields=id,level,summary,themes\n" +
		"n1\t1\tCaroline asked about Paris.␊Melanie answered.␉-\t[\"travel|weather\",\"food\"]\n"
	if string(b) != want {
		t.Errorf("got\n%q\nwant\n%q", b, want)
	}
	if b, _ := EncodeNodes(nil, nil); string(b) != "#CTF v1 type=summaries count=0 fields=id,summary\n" {
		t.Errorf("no nodes: %q", b)
	}
	if _, err := EncodeNodes(nodes, []string{"chunk_id"}); err == nil {
		t.Error("chunk_id is read, not written")
	}
	_, err = EncodeNodes([]strata.Node{{}, {Summary: "\xff"}}, []string{"summary"})
	checkErr(t, "utf8", err, "row 2, field summary:", "invalid UTF-8")
}

// The original sketch's summary block decodes to nodes.
func TestNodesSketch(t *testing.T) {
	in := "#CTF v1 type=summaries count=2 fields=chunk_id,turn_range,summary,themes\n" +
		"micro_abc123\t0-10\tUser introduced themselves as lb\tidentity|capabilities\n" +
		"micro_def456\t10-20\tTested file creation limitations\ttools|limitations"
	got, err := DecodeNodes([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []strata.Node{
		{ID: "micro_abc123", FirstSeq: 1, LastSeq: 10, Summary: "User introduced themselves as lb", Themes: []string{"identity", "capabilities"}},
		{ID: "micro_def456", FirstSeq: 11, LastSeq: 20, Summary: "Tested file creation limitations", Themes: []string{"tools", "limitations"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v", got)
	}
	// No themes, and the sketch's escapes.
	got, err = DecodeNodes([]byte("#CTF v1 type=summaries count=1 fields=chunk_id,turn_range,summary,themes\nm\t0-1\ta␊b\t\n"))
	if err != nil || got[0].Themes != nil || got[0].Summary != "a\nb" {
		t.Fatalf("%+v %v", got, err)
	}
}

func TestNodesDecodeErrors(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"#CTF v1 turns=0 type=turns fields=id\n", []string{"line 1:", "type=turns is not a summary block"}},
		{"#CTF v1 fields=id,mood\n", []string{"line 1, field mood:", "not a summary field"}},
		{"#CTF v1 fields=id,chunk_id\n", []string{"line 1, field chunk_id:", "same node field as id"}},
		{"#CTF v1 fields=first_seq,turn_range\n", []string{"line 1, field turn_range:", "first_seq"}},
		{"#CTF v1 fields=chunk_id,turn_range\nm\t10-5\n", []string{"line 2, field turn_range:", "not a turn range"}},
		{"#CTF v1 fields=chunk_id,turn_range\nm\t10\n", []string{"line 2, field turn_range:"}},
		{"#CTF v1 fields=id,themes\nm\ta|b\n", []string{"line 2, field themes:", "array of strings"}},
		{"#CTF v1 fields=id,derived\nm\tyes\n", []string{"line 2, field derived:", "not true or false"}},
		{"#CTF v1 fields=id,level\nm\t1\nm\tone\n", []string{"line 3, field level:"}},
		{"#CTF v1 fields=id,start\nm\tnow\n", []string{"line 2, field start:"}},
		{"#CTF v1 type=summaries count=3 fields=id\nm\n", []string{"line 1:", "count=3 but the block has 1 rows"}},
	} {
		_, err := DecodeNodes([]byte(c.in))
		checkErr(t, c.in, err, c.want...)
	}
}

// The example blocks of docs/ctf.md decode, and are written as strata
// writes them.
func TestDocExamples(t *testing.T) {
	doc, err := os.ReadFile("../docs/ctf.md")
	if err != nil {
		t.Skip(err)
	}
	n := 0
	for i, part := range strings.Split(string(doc), "```") {
		if i%2 == 0 || !strings.HasPrefix(strings.TrimPrefix(part, "\n"), "#CTF v1") {
			continue
		}
		block := []byte(strings.TrimPrefix(part, "\n"))
		n++
		h, rows, err := Unmarshal(block)
		if err != nil {
			t.Errorf("%s: %v", block, err)
			continue
		}
		if b, _ := Marshal(h, rows); string(b) != string(block) {
			t.Errorf("example written as\n%s\nnot\n%s", b, block)
		}
		if typ, _ := h.Attr("type"); typ == SummariesType {
			_, err = DecodeNodes(block)
		} else {
			_, err = DecodeTurns(block)
		}
		if err != nil {
			t.Errorf("%s: %v", block, err)
		}
	}
	if n < 2 {
		t.Errorf("%d examples", n)
	}
}
