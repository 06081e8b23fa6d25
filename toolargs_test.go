package strata_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/ctf"
)

// toolArgCases are tool-call arguments as a JSONL line gives them (the
// JSON value of "arguments") and the exact bytes strata keeps: a string
// holds the text the model produced, valid JSON or not; any other value is
// kept as written.
var toolArgCases = []struct{ wire, want string }{
	{`"{\"a\": tru"`, `{"a": tru`},                                             // a truncated model output
	{`" {\"q\" : \"x\",\n \"n\": 1.50} "`, " {\"q\" : \"x\",\n \"n\": 1.50} "}, // valid JSON, spacing kept
	{`{ "q" :  [1, 2],  "s": "<&>" }`, `{ "q" :  [1, 2],  "s": "<&>" }`},       // a raw JSON value
	{`"not json at all"`, `not json at all`},
}

// toolArgTurns reads n turns from JSONL through the importer: every other
// turn an assistant's tool call, its arguments cycling through
// toolArgCases.
func toolArgTurns(t *testing.T, n int) []strata.Turn {
	t.Helper()
	var b strings.Builder
	for i := 0; i < n; i++ {
		ts := fmt.Sprintf("2024-03-01T%02d:%02d:00Z", i/60, i%60)
		if i%2 == 0 {
			fmt.Fprintf(&b, `{"ext_id":"u%d","role":"user","content":"ask %d","time":%q}`+"\n", i, i, ts)
			continue
		}
		c := toolArgCases[(i/2)%len(toolArgCases)]
		fmt.Fprintf(&b, `{"ext_id":"a%d","role":"assistant","content":"","time":%q,"tool_calls":[{"id":"c%d","name":"f","arguments":%s}]}`+"\n", i, ts, i, c.wire)
	}
	return readJSONL(t, "args.jsonl", strings.NewReader(b.String()))
}

// wantArgs returns the exact arguments turn i of toolArgTurns carries.
func wantArgs(i int) string {
	if i%2 == 0 {
		return ""
	}
	return toolArgCases[(i/2)%len(toolArgCases)].want
}

// TestToolArgumentsExact: tool-call arguments, valid JSON or not, come back
// as the exact bytes given from the importer, from every tier a span is
// in (hot rows, warm blocks, cold archive records), in a rendered context
// package and through CTF.
func TestToolArgumentsExact(t *testing.T) {
	turns := toolArgTurns(t, 40)
	for i, tr := range turns {
		if got := string(argsOf(tr)); got != wantArgs(i) {
			t.Fatalf("import, turn %d: arguments %q, want %q", i, got, wantArgs(i))
		}
	}

	// 40 turns in chunks of 10: 1-10 and 11-20 cold, 21-30 warm, 31-40 hot.
	c := &clock{t: at("2024-03-02T00:00:00Z")}
	m, st := newClocked(t, c, &strata.TierPolicy{HotChunks: 1, WarmMaxTurns: 15})
	ctx := context.Background()
	if _, err := m.Ingest(ctx, strata.Batch{Conversation: "t", Turns: turns}); err != nil {
		t.Fatal(err)
	}
	nodes, err := st.Nodes(ctx, strata.NodeFilter{Namespace: "default", Conversation: "t", Level: 1})
	if err != nil {
		t.Fatal(err)
	}
	tiers := map[strata.Tier]int{}
	for _, n := range nodes {
		tiers[n.Tier]++
		_, got, err := m.Expand(ctx, n.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range got {
			if want := wantArgs(int(tr.Seq - 1)); string(argsOf(tr)) != want {
				t.Errorf("%s span %d-%d, turn %d: arguments %q, want %q", n.Tier, n.FirstSeq, n.LastSeq, tr.Seq, argsOf(tr), want)
			}
		}
	}
	if tiers[strata.TierHot] == 0 || tiers[strata.TierWarm] == 0 || tiers[strata.TierCold] == 0 {
		t.Fatalf("tiers %v: want spans hot, warm and cold", tiers)
	}

	// Rendered: the text a model reads holds the bytes, not a JSON string.
	pkg, err := m.Context(ctx, strata.ContextRequest{Conversation: "t", Budget: 20000})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`[tool call f id=c1] {"a": tru` + "\n", `[tool call f id=c7] not json at all`} {
		if !strings.Contains(pkg.Rendered, want) {
			t.Errorf("the rendered package lacks %q", want)
		}
	}
	if strings.Contains(pkg.Rendered, `\"a\"`) {
		t.Errorf("the rendered package quotes arguments as a JSON string")
	}

	// CTF: encoded and decoded, the same bytes.
	all, err := m.Zoom(ctx, "t", strata.Period{Kind: strata.PeriodRange, Start: at("2024-01-01T00:00:00Z"), End: at("2025-01-01T00:00:00Z")})
	if err != nil || len(all) != 40 {
		t.Fatalf("zoom: %d turns, %v", len(all), err)
	}
	block, err := ctf.EncodeTurns(all, nil)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ctf.DecodeTurns(block)
	if err != nil {
		t.Fatal(err)
	}
	for i := range back {
		if !bytes.Equal(argsOf(back[i]), argsOf(all[i])) {
			t.Errorf("CTF, turn %d: arguments %q, want %q", i+1, argsOf(back[i]), argsOf(all[i]))
		}
	}

	// A Turn in JSON carries the arguments as a string of their text.
	js, err := json.Marshal(all[1])
	if err != nil {
		t.Fatalf("json.Marshal of a turn with truncated arguments: %v", err)
	}
	var fromJSON strata.Turn
	if err := json.Unmarshal(js, &fromJSON); err != nil || string(argsOf(fromJSON)) != wantArgs(1) {
		t.Errorf("JSON %s reads back as %q, %v", js, argsOf(fromJSON), err)
	}
}

// argsOf returns the arguments of the turn's one tool call, or nil.
func argsOf(t strata.Turn) []byte {
	if len(t.ToolCalls) == 0 {
		return nil
	}
	return t.ToolCalls[0].Arguments
}
