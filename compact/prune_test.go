package compact_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/compact"
	"github.com/strata-memory/strata/compact/checkpoint"
)

// results builds a list with n tool rounds in one user turn, the k-th
// round's output given by out(k) (k = 0 is the oldest).
func results(p compact.Provider, n int, out func(k int) string) string {
	msgs := []string{user(p, "run the checks")}
	for k := 0; k < n; k++ {
		msgs = append(msgs, toolRound(p, fmt.Sprintf("call_%d", k), "bash", `{"cmd":"make test"}`, out(k))...)
	}
	msgs = append(msgs, assistant(p, "done"))
	return list(msgs...)
}

// resultText returns the output of the k-th tool result message of tr.
func resultText(t *testing.T, tr *compact.Transcript, k int) string {
	t.Helper()
	seen := 0
	for _, m := range tr.Messages {
		if !m.IsToolResult() {
			continue
		}
		if seen == k {
			if tr.Provider == compact.OpenAI {
				return m.Text()
			}
			var msg struct {
				Content []struct {
					Content json.RawMessage `json:"content"`
				} `json:"content"`
			}
			if err := json.Unmarshal(m.JSON(), &msg); err != nil {
				t.Fatal(err)
			}
			var s string
			if err := json.Unmarshal(msg.Content[0].Content, &s); err != nil {
				t.Fatalf("tool_result content is not a string: %s", msg.Content[0].Content)
			}
			return s
		}
		seen++
	}
	t.Fatalf("no tool result %d", k)
	return ""
}

func prune(t *testing.T, tr *compact.Transcript, cfg compact.Config) compact.PruneStats {
	t.Helper()
	st, err := compact.Prune(tr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestIsToolResultMessage(t *testing.T) {
	tests := []struct {
		name string
		p    compact.Provider
		msg  string
		want bool
	}{
		{"openai tool", compact.OpenAI, oaTool("c1", "out"), true},
		{"openai user", compact.OpenAI, oaUser("hi"), false},
		{"openai assistant with calls", compact.OpenAI, oaCalls(call{"c1", "bash", "{}"}), false},
		{"openai system", compact.OpenAI, oaSystem("be brief"), false},
		{"anthropic user string", compact.Anthropic, anUser("hi"), false},
		{"anthropic user text blocks", compact.Anthropic, `{"role":"user","content":[{"type":"text","text":"hi"}]}`, false},
		{"anthropic tool_result first", compact.Anthropic, anResults(result{id: "t1", content: "out"}), true},
		{"anthropic tool_result after text", compact.Anthropic,
			`{"role":"user","content":[{"type":"text","text":"note"},{"type":"tool_result","tool_use_id":"t1","content":"x"}]}`, true},
		{"anthropic assistant tool_use", compact.Anthropic, anUses(call{"t1", "bash", "{}"}), false},
		{"anthropic empty blocks", compact.Anthropic, `{"role":"user","content":[]}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := mustParse(t, tt.p, list(tt.msg))
			if got := tr.Messages[0].IsToolResult(); got != tt.want {
				t.Fatalf("IsToolResult = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSoftTrimLargeResult(t *testing.T) {
	for _, p := range providers {
		t.Run(string(p), func(t *testing.T) {
			big := strings.Repeat("a", 1500) + strings.Repeat("m", 21000) + strings.Repeat("z", 1500)
			// Four results: the two newest are protected; the oldest two
			// are soft-trimmed (hard clearing starts after 6).
			tr := mustParse(t, p, results(p, 4, func(k int) string { return big }))
			st := prune(t, tr, compact.DefaultConfig())
			if st.Trimmed != 2 || st.Cleared != 0 {
				t.Fatalf("stats = %+v, want 2 trimmed, 0 cleared", st)
			}
			want := strings.Repeat("a", 1500) +
				"\n\n--- trimmed (kept 1500 head + 1500 tail of 24000 chars) ---\n\n" +
				strings.Repeat("z", 1500)
			for k := 0; k < 2; k++ {
				if got := resultText(t, tr, k); got != want {
					t.Fatalf("result %d = %.80q... (%d chars), want head + marker + tail", k, got, len(got))
				}
			}
			marker := len("\n\n--- trimmed (kept 1500 head + 1500 tail of 24000 chars) ---\n\n")
			if st.CharsRemoved != 2*(24000-3000-marker) {
				t.Fatalf("CharsRemoved = %d, want %d", st.CharsRemoved, 2*(24000-3000-marker))
			}
			for k := 2; k < 4; k++ {
				if got := resultText(t, tr, k); got != big {
					t.Fatalf("protected result %d changed", k)
				}
			}
		})
	}
}

// Characters are runes: a multi-byte result is cut at rune boundaries and
// the counts in the marker are runes.
func TestSoftTrimCountsRunes(t *testing.T) {
	for _, p := range providers {
		t.Run(string(p), func(t *testing.T) {
			big := strings.Repeat("é🙂測", 2000) // 6000 runes, 18000 bytes
			tr := mustParse(t, p, results(p, 3, func(k int) string { return big }))
			prune(t, tr, compact.DefaultConfig())
			got := resultText(t, tr, 0)
			if !utf8.ValidString(got) {
				t.Fatal("trimmed result is not valid UTF-8")
			}
			head, tail, ok := strings.Cut(got, "\n\n--- trimmed (kept 1500 head + 1500 tail of 6000 chars) ---\n\n")
			if !ok {
				t.Fatalf("no marker with rune counts in %.200q", got)
			}
			if n := utf8.RuneCountInString(head); n != 1500 || head != string([]rune(big)[:1500]) {
				t.Fatalf("head has %d runes, want the first 1500", n)
			}
			if n := utf8.RuneCountInString(tail); n != 1500 || tail != string([]rune(big)[4500:]) {
				t.Fatalf("tail has %d runes, want the last 1500", n)
			}
		})
	}
}

func TestSoftTrimPreservesSmall(t *testing.T) {
	for _, p := range providers {
		t.Run(string(p), func(t *testing.T) {
			// Exactly at the threshold (in runes, though more in bytes).
			atLimit := strings.Repeat("ü", 4000)
			doc := results(p, 5, func(k int) string { return atLimit })
			tr := mustParse(t, p, doc)
			st := prune(t, tr, compact.DefaultConfig())
			if st != (compact.PruneStats{}) {
				t.Fatalf("stats = %+v, want nothing done", st)
			}
			if got := marshal(t, tr); got != doc {
				t.Fatal("a list with only small results changed")
			}
		})
	}
}

func TestHardClearOldResults(t *testing.T) {
	for _, p := range providers {
		t.Run(string(p), func(t *testing.T) {
			out := func(k int) string { return fmt.Sprintf("output %d: %s", k, strings.Repeat("x", 500)) }
			tr := mustParse(t, p, results(p, 9, out))
			st := prune(t, tr, compact.DefaultConfig())
			// Ages 9, 8, 7 are older than 6: cleared. Ages 3..6 are short:
			// left whole. Ages 1, 2 are protected.
			if st.Cleared != 3 || st.Trimmed != 0 {
				t.Fatalf("stats = %+v, want 3 cleared", st)
			}
			for k := 0; k < 9; k++ {
				got := resultText(t, tr, k)
				if k < 3 && got != compact.ClearedPlaceholder {
					t.Fatalf("result %d = %.40q, want the placeholder", k, got)
				}
				if k >= 3 && got != out(k) {
					t.Fatalf("result %d changed: %.40q", k, got)
				}
			}
			want := 3 * (utf8.RuneCountInString(out(0)) - utf8.RuneCountInString(compact.ClearedPlaceholder))
			if st.CharsRemoved != want {
				t.Fatalf("CharsRemoved = %d, want %d", st.CharsRemoved, want)
			}
		})
	}
}

// A result no longer than the placeholder is left as it is: clearing it
// would make it longer.
func TestHardClearSkipsShortResults(t *testing.T) {
	for _, p := range providers {
		t.Run(string(p), func(t *testing.T) {
			doc := results(p, 10, func(k int) string { return "ok" })
			tr := mustParse(t, p, doc)
			if st := prune(t, tr, compact.DefaultConfig()); st.Cleared != 0 {
				t.Fatalf("cleared %d short results", st.Cleared)
			}
			if marshal(t, tr) != doc {
				t.Fatal("list changed")
			}
		})
	}
}

func TestProtectLastNResults(t *testing.T) {
	for _, p := range providers {
		t.Run(string(p), func(t *testing.T) {
			big := strings.Repeat("b", 50000)
			for _, keep := range []int{0, 1, 2, 5} {
				cfg := compact.DefaultConfig()
				cfg.KeepLastToolResults = keep
				cfg.ToolHardClearAfter = 0
				tr := mustParse(t, p, results(p, 6, func(int) string { return big }))
				st := prune(t, tr, cfg)
				if st.Trimmed != 6-keep {
					t.Fatalf("keep %d: trimmed %d, want %d", keep, st.Trimmed, 6-keep)
				}
				for k := 6 - keep; k < 6; k++ {
					if resultText(t, tr, k) != big {
						t.Fatalf("keep %d: protected result %d changed", keep, k)
					}
				}
			}
		})
	}
}

// OpenAI tool messages answering one assistant message's parallel calls
// count as one tool-result message, as one Anthropic user message of
// several tool_result blocks does.
func TestParallelResultsCountAsOneMessage(t *testing.T) {
	big := strings.Repeat("p", 9000)
	docs := map[compact.Provider]string{
		compact.OpenAI: list(oaUser("go"),
			oaCalls(call{"a", "bash", "{}"}), oaTool("a", big),
			oaCalls(call{"b1", "bash", "{}"}, call{"b2", "bash", "{}"}, call{"b3", "bash", "{}"}),
			oaTool("b1", big), oaTool("b2", big), oaTool("b3", big),
			oaCalls(call{"c", "bash", "{}"}), oaTool("c", big),
			oaAssistant("done")),
		compact.Anthropic: list(anUser("go"),
			anUses(call{"a", "bash", "{}"}), anResults(result{id: "a", content: big}),
			anUses(call{"b1", "bash", "{}"}, call{"b2", "bash", "{}"}, call{"b3", "bash", "{}"}),
			anResults(result{id: "b1", content: big}, result{id: "b2", content: big}, result{id: "b3", content: big}),
			anUses(call{"c", "bash", "{}"}), anResults(result{id: "c", content: big}),
			anAssistant("done")),
	}
	for _, p := range providers {
		t.Run(string(p), func(t *testing.T) {
			tr := mustParse(t, p, docs[p])
			st := prune(t, tr, compact.DefaultConfig())
			// Protected: the "c" message and the three "b" results.
			if st.Trimmed != 1 {
				t.Fatalf("trimmed %d, want only the oldest result", st.Trimmed)
			}
		})
	}
}

func TestNeverModifyAssistantBlocks(t *testing.T) {
	huge := strings.Repeat("t", 30000)
	docs := map[compact.Provider]string{
		compact.OpenAI: list(oaUser("go"),
			js(map[string]any{"role": "assistant", "content": huge, "tool_calls": []any{map[string]any{"id": "a", "type": "function",
				"function": map[string]any{"name": "write", "arguments": js(map[string]any{"body": huge})}}}}),
			oaTool("a", huge)),
		compact.Anthropic: list(anUser("go"),
			js(map[string]any{"role": "assistant", "content": []any{
				map[string]any{"type": "thinking", "thinking": huge, "signature": "abc"},
				map[string]any{"type": "redacted_thinking", "data": huge},
				map[string]any{"type": "text", "text": huge},
				map[string]any{"type": "tool_use", "id": "a", "name": "write", "input": map[string]any{"body": huge}},
			}}),
			anResults(result{id: "a", content: huge})),
	}
	for _, p := range providers {
		t.Run(string(p), func(t *testing.T) {
			cfg := compact.DefaultConfig()
			cfg.KeepLastToolResults = 0
			cfg.ToolHardClearAfter = 0
			tr := mustParse(t, p, docs[p])
			before := string(tr.Messages[1].JSON())
			st := prune(t, tr, cfg)
			if st.Trimmed != 1 {
				t.Fatalf("trimmed %d, want the one tool result", st.Trimmed)
			}
			if got := string(tr.Messages[1].JSON()); got != before {
				t.Fatal("the assistant message changed")
			}
		})
	}
}

func TestNeverModifyUserText(t *testing.T) {
	huge := strings.Repeat("u", 30000)
	docs := map[compact.Provider]string{
		compact.OpenAI: list(oaUser(huge),
			oaCalls(call{"a", "bash", "{}"}), oaTool("a", huge),
			oaAssistant("ok"), oaUser(huge)),
		compact.Anthropic: list(anUser(huge),
			anUses(call{"a", "bash", "{}"}),
			js(map[string]any{"role": "user", "content": []any{
				map[string]any{"type": "tool_result", "tool_use_id": "a", "content": huge},
				map[string]any{"type": "text", "text": huge},
			}}),
			anAssistant("ok"), anUser(huge)),
	}
	for _, p := range providers {
		t.Run(string(p), func(t *testing.T) {
			cfg := compact.DefaultConfig()
			cfg.KeepLastToolResults = 0
			tr := mustParse(t, p, docs[p])
			st := prune(t, tr, cfg)
			if st.Trimmed != 1 {
				t.Fatalf("trimmed %d, want 1", st.Trimmed)
			}
			if tr.Messages[0].Text() != huge || tr.Messages[4].Text() != huge {
				t.Fatal("user text changed")
			}
			if p == compact.Anthropic {
				// The text block riding with the tool result is user text.
				var msg struct {
					Content []struct {
						Type string `json:"type"`
						Text string `json:"text"`
					} `json:"content"`
				}
				json.Unmarshal(tr.Messages[2].JSON(), &msg)
				if msg.Content[1].Type != "text" || msg.Content[1].Text != huge {
					t.Fatal("text block beside the tool result changed")
				}
			}
		})
	}
}

func TestSkipImageResults(t *testing.T) {
	big := strings.Repeat("i", 20000)
	docs := map[compact.Provider]string{
		compact.OpenAI: list(oaUser("look"),
			oaCalls(call{"a", "screenshot", "{}"}),
			js(map[string]any{"role": "tool", "tool_call_id": "a", "content": []any{
				map[string]any{"type": "text", "text": big},
				map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:image/png;base64,iVBORw0KGgo="}},
			}}),
			oaCalls(call{"b", "bash", "{}"}), oaTool("b", "x"),
			oaCalls(call{"c", "bash", "{}"}), oaTool("c", "y"),
			oaAssistant("done")),
		compact.Anthropic: list(anUser("look"),
			anUses(call{"a", "screenshot", "{}"}), anResults(result{id: "a", content: big, image: true}),
			anUses(call{"b", "bash", "{}"}), anResults(result{id: "b", content: "x"}),
			anUses(call{"c", "bash", "{}"}), anResults(result{id: "c", content: "y"}),
			anAssistant("done")),
	}
	for _, p := range providers {
		t.Run(string(p), func(t *testing.T) {
			for _, hard := range []int{0, 2} { // soft zone, then hard-clear zone
				cfg := compact.DefaultConfig()
				cfg.ToolHardClearAfter = hard
				tr := mustParse(t, p, docs[p])
				st := prune(t, tr, cfg)
				if st.Skipped != 1 || st.Trimmed+st.Cleared != 0 {
					t.Fatalf("hard %d: stats = %+v, want the image result skipped", hard, st)
				}
				if marshal(t, tr) != docs[p] {
					t.Fatalf("hard %d: list changed", hard)
				}
			}
		})
	}
}

func TestEmptyMessagesNoop(t *testing.T) {
	for _, p := range providers {
		for _, doc := range []string{`[]`, ` [ ] `, `{"messages":[]}`} {
			tr := mustParse(t, p, doc)
			if st := prune(t, tr, compact.DefaultConfig()); st != (compact.PruneStats{}) {
				t.Fatalf("%s %s: stats = %+v", p, doc, st)
			}
			if got := marshal(t, tr); got != doc {
				t.Fatalf("%s: %q became %q", p, doc, got)
			}
		}
	}
}

func TestAllProtectedNoop(t *testing.T) {
	for _, p := range providers {
		t.Run(string(p), func(t *testing.T) {
			doc := results(p, 2, func(int) string { return strings.Repeat("q", 90000) })
			tr := mustParse(t, p, doc)
			first := tr.Messages
			if st := prune(t, tr, compact.DefaultConfig()); st != (compact.PruneStats{}) {
				t.Fatalf("stats = %+v, want nothing done", st)
			}
			for i := range first {
				if tr.Messages[i] != first[i] {
					t.Fatalf("message %d replaced", i)
				}
			}
			if marshal(t, tr) != doc {
				t.Fatal("list changed")
			}
		})
	}
}

func TestPruneDisabled(t *testing.T) {
	cfg := compact.DefaultConfig()
	cfg.ToolPruningEnabled = false
	doc := results(compact.OpenAI, 10, func(int) string { return strings.Repeat("d", 9000) })
	tr := mustParse(t, compact.OpenAI, doc)
	if st := prune(t, tr, cfg); st != (compact.PruneStats{}) || marshal(t, tr) != doc {
		t.Fatalf("disabled pruning did something: %+v", st)
	}
}

func TestPruneRejectsBadConfig(t *testing.T) {
	cfg := compact.DefaultConfig()
	cfg.ToolSoftTrimChars = 0
	tr := mustParse(t, compact.OpenAI, `[]`)
	if _, err := compact.Prune(tr, cfg); err == nil || !strings.Contains(err.Error(), "tool_soft_trim_chars") {
		t.Fatalf("err = %v, want one naming tool_soft_trim_chars", err)
	}
}

// A second Prune changes nothing; once results age, it clears them.
func TestPruneIdempotent(t *testing.T) {
	for _, p := range providers {
		t.Run(string(p), func(t *testing.T) {
			tr := mustParse(t, p, results(p, 9, func(int) string { return strings.Repeat("r", 12000) }))
			prune(t, tr, compact.DefaultConfig())
			once := marshal(t, tr)
			if st := prune(t, tr, compact.DefaultConfig()); st != (compact.PruneStats{}) {
				t.Fatalf("second prune: %+v", st)
			}
			if marshal(t, tr) != once {
				t.Fatal("second prune changed the list")
			}
			// Age everything by four more rounds: the trimmed results pass
			// the hard-clear age.
			out := once[:len(once)-1]
			for k := 0; k < 4; k++ {
				for _, m := range toolRound(p, fmt.Sprintf("late_%d", k), "bash", "{}", "fine") {
					out += "," + m
				}
			}
			tr = mustParse(t, p, out+"]")
			st := prune(t, tr, compact.DefaultConfig())
			// The 4 trimmed results are now 7..10 old: cleared; the 2
			// that were protected are now 5 and 6 old: trimmed.
			if st.Cleared != 4 || st.Trimmed != 2 {
				t.Fatalf("after aging: %+v, want 4 cleared and 2 trimmed", st)
			}
		})
	}
}

// Prune replaces changed messages; a *Message taken before stays as it was.
func TestPruneLeavesOldMessagesAlone(t *testing.T) {
	tr := mustParse(t, compact.Anthropic, results(compact.Anthropic, 3, func(int) string { return strings.Repeat("o", 9000) }))
	old := tr.Messages[2]
	before := string(old.JSON())
	clone := tr.Clone()
	prune(t, tr, compact.DefaultConfig())
	if tr.Messages[2] == old {
		t.Fatal("the changed message was not replaced")
	}
	if string(old.JSON()) != before || string(clone.Messages[2].JSON()) != before {
		t.Fatal("the old message changed")
	}
}

// A result made of several text blocks is trimmed as one text (blocks
// joined by a newline) into one block that keeps the blocks' other fields.
func TestSoftTrimMultiBlockResult(t *testing.T) {
	a, b := strings.Repeat("A", 3000), strings.Repeat("B", 3000)
	res := js(map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "t0", "content": []any{
		map[string]any{"type": "text", "text": a},
		map[string]any{"type": "text", "text": b, "cache_control": map[string]any{"type": "ephemeral"}},
	}}}})
	msgs := []string{anUser("go"), anUses(call{"t0", "bash", "{}"}), res}
	for k := 1; k < 3; k++ {
		msgs = append(msgs, toolRound(compact.Anthropic, fmt.Sprintf("t%d", k), "bash", "{}", "ok")...)
	}
	tr := mustParse(t, compact.Anthropic, list(msgs...))
	if st := prune(t, tr, compact.DefaultConfig()); st.Trimmed != 1 {
		t.Fatalf("stats %+v", st)
	}
	var msg struct {
		Content []struct {
			Content []map[string]any `json:"content"`
		} `json:"content"`
	}
	if err := json.Unmarshal(tr.Messages[2].JSON(), &msg); err != nil {
		t.Fatal(err)
	}
	blocks := msg.Content[0].Content
	if len(blocks) != 1 {
		t.Fatalf("%d blocks, want 1", len(blocks))
	}
	want := strings.Repeat("A", 1500) + "\n\n--- trimmed (kept 1500 head + 1500 tail of 6001 chars) ---\n\n" + strings.Repeat("B", 1500)
	if blocks[0]["text"] != want {
		t.Fatalf("text = %.100q", blocks[0]["text"])
	}
	if blocks[0]["cache_control"] == nil {
		t.Fatal("cache_control was dropped")
	}
}

// TestClearedDigestOfAFailedResult checks that a cleared Anthropic result
// its tool marked is_error keeps, in its digest, the line that says in
// words how it failed, though no rule knows the tool's format.
func TestClearedDigestOfAFailedResult(t *testing.T) {
	var b strings.Builder
	for i := range 30 {
		fmt.Fprintf(&b, "copied shards/s-%02d/part-%04d.dat\n", i, i*7)
	}
	b.WriteString("shard s-31 copy failed: checksum differs at blk_7f3a9\n")
	msgs := []string{user(compact.Anthropic, "copy the shards")}
	msgs = append(msgs, anUses(call{"c0", "bash", `{"cmd":"shardcp --all"}`}), anResults(result{id: "c0", content: b.String(), isError: true}))
	for k := 1; k < 9; k++ {
		msgs = append(msgs, toolRound(compact.Anthropic, fmt.Sprintf("c%d", k), "bash", `{"cmd":"ls"}`, strings.Repeat("y", 300))...)
	}
	tr := mustParse(t, compact.Anthropic, list(append(msgs, assistant(compact.Anthropic, "done"))...))
	if st := prune(t, tr, compact.DefaultConfig()); st.Cleared == 0 {
		t.Fatalf("nothing cleared: %+v", st)
	}
	if got := resultText(t, tr, 0); !strings.Contains(got, "blk_7f3a9") {
		t.Errorf("the failed result's digest lacks its failure:\n%s", got)
	}
}

// TestMarkFailedOpenAI checks that a tool message marked failed
// (MarkFailed: what a stored turn's is_error says, which OpenAI's form
// cannot) is digested as a failed result, and that the mark leaves the
// list unchanged.
func TestMarkFailedOpenAI(t *testing.T) {
	var b strings.Builder
	for i := range 30 {
		fmt.Fprintf(&b, "copied shards/s-%02d/part-%04d.dat\n", i, i*7)
	}
	b.WriteString("shard s-31 copy failed: checksum differs at blk_7f3a9\n")
	msgs := []string{user(compact.OpenAI, "copy the shards")}
	msgs = append(msgs, toolRound(compact.OpenAI, "c0", "bash", `{"cmd":"shardcp --all"}`, b.String())...)
	for k := 1; k < 9; k++ {
		msgs = append(msgs, toolRound(compact.OpenAI, fmt.Sprintf("c%d", k), "bash", `{"cmd":"ls"}`, strings.Repeat("y", 300))...)
	}
	doc := list(append(msgs, assistant(compact.OpenAI, "done"))...)
	for _, mark := range []bool{false, true} {
		tr := mustParse(t, compact.OpenAI, doc)
		if mark {
			tr.MarkFailed("c0", "nope")
			if got := marshal(t, tr); got != marshal(t, mustParse(t, compact.OpenAI, doc)) {
				t.Fatalf("MarkFailed changed the list:\n%s", got)
			}
		}
		if st := prune(t, tr, compact.DefaultConfig()); st.Cleared == 0 {
			t.Fatalf("nothing cleared: %+v", st)
		}
		if got := resultText(t, tr, 0); strings.Contains(got, "blk_7f3a9") != mark {
			t.Errorf("marked %v: the digest holds the failure %v, want %v:\n%s", mark, !mark, mark, got)
		}
	}
	turns := []strata.Turn{{Role: strata.RoleTool, ToolResults: []strata.ToolResult{{CallID: "a", IsError: true}, {CallID: "b"}, {IsError: true}}}}
	if got := compact.FailedCalls(turns); len(got) != 1 || got[0] != "a" {
		t.Errorf("FailedCalls = %v, want [a]", got)
	}
}

// TestSoftTrimDigestsTheCut checks that a soft-trimmed result keeps, under
// its marker, the digest of the part the trim cut out (an error in the
// middle of a long log), within ToolSoftTrimChars so that pruning again
// changes nothing, that the digest is read back when the trimmed result
// ages into a cleared one, and that there is none when the settings leave
// no room for it.
func TestSoftTrimDigestsTheCut(t *testing.T) {
	var b strings.Builder
	for i := range 300 {
		fmt.Fprintf(&b, "24/11/05 10:%02d:%02d INFO BlockManager: stored block rdd_%d_0 in memory\n", i/60, i%60, i)
		if i == 150 {
			b.WriteString("24/11/05 10:02:30 ERROR Executor: task 81.0 in stage 4.0 lost: shuffle file shuffle_4_81_0.data not found\n")
		}
	}
	big := b.String()
	const errLine = "ERROR Executor: task 81.0 in stage 4.0 lost: shuffle file shuffle_4_81_0.data not found"
	for _, p := range providers {
		t.Run(string(p), func(t *testing.T) {
			cfg := compact.DefaultConfig()
			tr := mustParse(t, p, results(p, 3, func(int) string { return big }))
			if st := prune(t, tr, cfg); st.Trimmed != 1 {
				t.Fatalf("stats = %+v, want 1 trimmed", st)
			}
			got := resultText(t, tr, 0)
			head, rest, ok := strings.Cut(got, fmt.Sprintf("\n\n--- trimmed (kept 1500 head + 1500 tail of %d chars) ---\n", utf8.RuneCountInString(big)))
			if !ok || head != big[:1500] {
				t.Fatalf("no head and marker in %.300q", got)
			}
			digest, tail, _ := strings.Cut(rest, "\n\n")
			if !strings.HasPrefix(digest, checkpoint.DigestPrefix) || !strings.Contains(digest, errLine) {
				t.Fatalf("the cut's digest lost the error line: %q", digest)
			}
			if tail != big[len(big)-1500:] {
				t.Fatalf("tail changed: %.100q", tail)
			}
			if n := utf8.RuneCountInString(got); n > cfg.ToolSoftTrimChars {
				t.Fatalf("the trimmed result has %d chars, over tool_soft_trim_chars %d", n, cfg.ToolSoftTrimChars)
			}
			once := marshal(t, tr)
			if st := prune(t, tr, cfg); st != (compact.PruneStats{}) || marshal(t, tr) != once {
				t.Fatalf("a second prune changed the list: %+v", st)
			}
			// Aged into a cleared result, its digest still holds the error.
			if d := checkpoint.Digest(got, compact.DigestMaxChars, compact.DigestFailMaxChars); !strings.Contains(d, errLine) {
				t.Fatalf("the digest of the trimmed result lost the error line: %s", d)
			}
			// No room under tool_soft_trim_chars: no digest.
			cfg.ToolSoftTrimChars = 3100
			tr = mustParse(t, p, results(p, 3, func(int) string { return big }))
			prune(t, tr, cfg)
			if got := resultText(t, tr, 0); strings.Contains(got, checkpoint.DigestPrefix) {
				t.Fatalf("a digest with no room for it: %.200q", got[1500:])
			}
		})
	}
}
