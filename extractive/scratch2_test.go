package extractive

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"encoding/json"

	"strata"
)

func TestScratch2(t *testing.T) {
	big := strings.Repeat("The quick brown fox jumps over the lazy dog near /var/log/syslog. ", 160000) + " Finally call parseConfig at https://tail.example.com/x."
	blob := strings.Repeat("QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo", 300000)
	cases := map[string][]strata.Turn{
		"empty":   nil,
		"blank":   {turn("Caroline", ""), turn("Melanie", "   \n ")},
		"trivial": {turn("Caroline", "ok"), turn("Melanie", "thanks!"), turn("Caroline", "lol")},
		"one":     {turn("Caroline", "I adopted a dog named Rex on 3 March 2024.")},
		"tool": {{Role: strata.RoleAssistant, ToolCalls: []strata.ToolCall{{ID: "c1", Name: "read_file", Arguments: json.RawMessage(`{"path":"/etc/hosts","max_bytes":4096}`)}}},
			{Role: strata.RoleTool, ToolResults: []strata.ToolResult{{CallID: "c1", Name: "read_file", Content: "127.0.0.1 localhost\n::1 localhost ip6-localhost"}}}},
		"cjk":   {turn("Ken", "今日は東京タワーに行きました。とても楽しかったです！明日は京都に行きます。"), turn("Yui", "東京タワーはいいですね。京都では金閣寺を見てください。")},
		"thai":  {turn("Som", "วันนี้ฉันไปตลาดกับแม่ แล้วเราก็ซื้อผลไม้มากมาย พรุ่งนี้จะไปทะเล"), turn("Nok", "ทะเลสวยมาก ไปกับใครบ้าง")},
		"emoji": {turn("Caroline", "🎉🎉🎉"), turn("Melanie", "Congrats!! 🥳 So proud of you 💖 — the new job at Acme Corp starts Monday 👩‍💻")},
		"big":   {turn("Caroline", big), turn("Melanie", "Did you check the logs?")},
		"blob":  {turn("Caroline", blob)},
	}
	for _, name := range []string{"empty", "blank", "trivial", "one", "tool", "cjk", "thai", "emoji", "big", "blob"} {
		for _, b := range []int{120, 12} {
			start := time.Now()
			s := summarize(t, strata.SummaryRequest{Level: 1, Budget: b, Turns: cases[name], Tokenizer: wordTok{}})
			fmt.Printf("--- %s/%d (%v, %d tokens)\n%s\nfacts %q themes %q\n", name, b, time.Since(start), wordTok{}.Count(s.Text), s.Text, s.Facts, s.Themes)
		}
	}
}
