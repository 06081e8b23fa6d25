package proxy_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/strata-memory/strata/proxy"
	"github.com/strata-memory/strata/tiktoken"
)

// BenchmarkAddedLatency measures, in one run, what the proxy adds to a
// model call: each iteration sends a chat app's next call (its whole
// history, which grows by a user message and the reply each time, from 80
// messages of about 60 tokens, counted with o200k_base) to the fake upstream directly, through the
// proxy in off mode (remembering, no reshaping), and through it in memory
// mode (the history is over the 2,000-token budget, so older history is
// replaced by a context package every call), each mode with its own
// store, and in off mode with X-Strata-Remember: false (nothing stored:
// what the proxy costs beside the append). The rollup each append leaves
// to run after the reply is waited for between iterations, as a chat
// app's user gives it time to run. It reports the p50 and p90 of
// the direct call, and the added p50 of each (the proxy's p50 minus the
// direct p50), in ms.
//
//	go test ./proxy/ -run '^$' -bench AddedLatency -benchtime 200x
func BenchmarkAddedLatency(b *testing.B) {
	tok, err := tiktoken.New("o200k_base")
	if err != nil {
		b.Fatal(err)
	}
	off := newRigTok(b, proxy.Options{Mode: proxy.ModeOff}, tok)
	mem := newRigTok(b, proxy.Options{Mode: proxy.ModeMemory, Budget: 2000}, tok)
	topics := []string{"the orchard", "a sailing trip", "the new job", "my sister's wedding", "the garden", "a chess club"}
	var msgs []oaMsg
	for i := 0; i < 80; i++ {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		msgs = append(msgs, oaMsg{Role: role, Content: text(fmt.Sprintf("Message %d: %s", i, filler(40, topics[i%len(topics)])))})
	}
	do := func(url string, body []byte, conv string, remember bool) time.Duration {
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer sk-bench")
		req.Header.Set(proxy.HeaderConversation, conv)
		if !remember {
			req.Header.Set(proxy.HeaderRemember, "false")
		}
		start := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		d := time.Since(start)
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("%s: status %d", url, resp.StatusCode)
		}
		return d
	}
	var direct, viaOff, viaMem, bare []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		msgs = append(msgs, oaMsg{Role: "user", Content: text(fmt.Sprintf("Question %d: what did I say about %s?", i, topics[i%len(topics)]))})
		body, _ := json.Marshal(map[string]any{"model": "m", "messages": msgs})
		direct = append(direct, do(off.up.srv.URL+"/v1/chat/completions", body, "bench", true))
		bare = append(bare, do(off.proxy.URL+"/v1/chat/completions", body, "bare", false))
		viaOff = append(viaOff, do(off.proxy.URL+"/v1/chat/completions", body, "bench", true))
		viaMem = append(viaMem, do(mem.proxy.URL+"/v1/chat/completions", body, "bench", true))
		// A chat app's next call comes after its user has read the reply
		// and written another message: the rollup that follows each
		// append runs in that time, not in the next call's.
		off.px.Wait()
		mem.px.Wait()
		msgs = append(msgs, oaMsg{Role: "assistant", Content: text("You said: " + *msgs[len(msgs)-1].Content)})
	}
	b.StopTimer()
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	p50, p90 := pct(direct, 50), pct(direct, 90)
	b.ReportMetric(ms(p50), "direct-p50-ms")
	b.ReportMetric(ms(p90), "direct-p90-ms")
	b.ReportMetric(ms(pct(bare, 50)-p50), "unremembered-added-p50-ms")
	b.ReportMetric(ms(pct(viaOff, 50)-p50), "off-added-p50-ms")
	b.ReportMetric(ms(pct(viaMem, 50)-p50), "memory-added-p50-ms")
	b.ReportMetric(ms(pct(viaMem, 90)-p90), "memory-added-p90-ms")
	b.ReportMetric(0, "ns/op")
}

// pct is the p-th percentile of ds.
func pct(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}
