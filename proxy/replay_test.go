package proxy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/compact"
	"github.com/strata-memory/strata/extractive"
	"github.com/strata-memory/strata/formats"
	"github.com/strata-memory/strata/proxy"
	"github.com/strata-memory/strata/sqlite"
	"github.com/strata-memory/strata/tiktoken"
)

// TestReplayLoCoMo replays LoCoMo conversations turn by turn through the
// proxy in memory mode, as a chat app that resends its whole history on
// every call: speaker A's turns are the user's messages, and the fake
// upstream answers each call with speaker B's next turn. It checks that
// every turn is stored once and that each call sends upstream at most the
// budget plus the newest turn, then asks each question (categories 1-4,
// or RealMem's 21-24, with evidence; not remembered) and reports the share of its evidence
// turns whose text went upstream, beside the same share in 'strata
// context' packages built for the question at the same budget.
//
// Set STRATA_LOCOMO_FILE to a LoCoMo-format file (and STRATA_LOCOMO_SAMPLES
// to how many of its conversations, default 1, or STRATA_LOCOMO_IDS to
// their sample ids, comma-separated); the budget is STRATA_PROXY_BUDGET
// (default 4000), counted with o200k_base. It also reports the time of a
// call through the proxy (the fake upstream answers at once).
func TestReplayLoCoMo(t *testing.T) {
	file := os.Getenv("STRATA_LOCOMO_FILE")
	if file == "" {
		t.Skip("set STRATA_LOCOMO_FILE to a LoCoMo-format file")
	}
	samples := 1
	if v := os.Getenv("STRATA_LOCOMO_SAMPLES"); v != "" {
		samples, _ = strconv.Atoi(v)
	}
	budget := proxy.DefaultBudget
	if v := os.Getenv("STRATA_PROXY_BUDGET"); v != "" {
		budget, _ = strconv.Atoi(v)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	convs := readLoCoMo(t, file, data)
	qs := readQuestions(t, data)
	tok, err := tiktoken.New("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "strata.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m, err := strata.New(strata.Config{Store: st, Tokenizer: tok, Summarizer: extractive.New()})
	if err != nil {
		t.Fatal(err)
	}
	up := &scripted{}
	upSrv := httptest.NewServer(up)
	defer upSrv.Close()
	var clock struct {
		sync.Mutex
		now time.Time
	}
	p, err := proxy.New(proxy.Options{Memory: func(context.Context) *strata.Memory { return m }, OpenAIURL: upSrv.URL,
		Mode: proxy.ModeMemory, Budget: budget,
		Now: func() time.Time { clock.Lock(); defer clock.Unlock(); return clock.now }})
	if err != nil {
		t.Fatal(err)
	}
	px := httptest.NewServer(p)
	defer px.Close()

	pick := convs[:min(samples, len(convs))]
	if v := os.Getenv("STRATA_LOCOMO_IDS"); v != "" {
		pick = nil
		for _, id := range strings.Split(v, ",") {
			i := slices.IndexFunc(convs, func(c loCoMoConv) bool { return c.id == strings.TrimSpace(id) })
			if i < 0 {
				t.Fatalf("STRATA_LOCOMO_IDS: no sample %q in %s", id, file)
			}
			pick = append(pick, convs[i])
		}
	}
	for _, conv := range pick {
		var msgs []oaMsg
		var took []time.Duration
		var calls, over int
		var upTokens, inTokens, maxUp int
		byText := map[string]string{} // evidence id -> text
		send := func(reply string, extra map[string]string) (http.Header, []byte) {
			up.set(reply)
			body, _ := json.Marshal(map[string]any{"model": "m", "messages": msgs})
			req, _ := http.NewRequest(http.MethodPost, px.URL+"/v1/chat/completions", bytes.NewReader(body))
			req.Header.Set(proxy.HeaderConversation, conv.id)
			for k, v := range extra {
				req.Header.Set(k, v)
			}
			start := time.Now()
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if extra == nil {
				took = append(took, time.Since(start))
			}
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%s: status %d: %s", conv.id, resp.StatusCode, b)
			}
			return resp.Header, up.lastBody()
		}
		turns := conv.turns
		for i := 0; i < len(turns); {
			// The user's run of turns, then the call; its reply is the
			// other speaker's next turn, and the rest of that run follows
			// as the app would append it.
			for ; i < len(turns) && turns[i].Role == strata.RoleUser; i++ {
				msgs = append(msgs, oaMsg{Role: "user", Name: turns[i].Name, Content: text(turns[i].Content)})
				byText[turns[i].ExtID] = turns[i].Content
			}
			if len(msgs) == 0 || msgs[len(msgs)-1].Role != "user" {
				for ; i < len(turns) && turns[i].Role != strata.RoleUser; i++ {
					msgs = append(msgs, oaMsg{Role: "assistant", Name: turns[i].Name, Content: text(turns[i].Content)})
					byText[turns[i].ExtID] = turns[i].Content
				}
				continue
			}
			reply := "OK."
			if i < len(turns) {
				reply = turns[i].Content
			}
			clock.Lock()
			clock.now = turns[max(i-1, 0)].Time
			clock.Unlock()
			h, sent := send(reply, nil)
			calls++
			recv, _ := strconv.Atoi(h.Get(proxy.HeaderReceived))
			upn, _ := strconv.Atoi(h.Get(proxy.HeaderUpstream))
			inTokens += recv
			upTokens += upn
			maxUp = max(maxUp, upn)
			newest := newestTokens(t, tok, sent, msgs)
			if upn > budget+newest {
				over++
				t.Errorf("%s call %d: %d tokens upstream, over the budget %d plus the newest turn's %d", conv.id, calls, upn, budget, newest)
			}
			var name string
			if i < len(turns) {
				name = turns[i].Name
				byText[turns[i].ExtID] = turns[i].Content
				i++
			}
			msgs = append(msgs, oaMsg{Role: "assistant", Name: name, Content: text(reply)})
		}
		// Every turn once, in order.
		var stored []strata.Turn
		for from := int64(0); ; {
			page, next, err := m.Turns(ctx, conv.id, from, 0, 1000)
			if err != nil {
				t.Fatal(err)
			}
			stored = append(stored, page...)
			if next == 0 || len(page) == 0 {
				break
			}
			from = next
		}
		if len(stored) != len(msgs) {
			t.Fatalf("%s: stored %d turns, the client holds %d messages", conv.id, len(stored), len(msgs))
		}
		for j, s := range stored {
			if s.Content != *msgs[j].Content || string(s.Role) != msgs[j].Role {
				t.Fatalf("%s: stored turn %d is %s %q, the client holds %s %q", conv.id, j, s.Role, s.Content, msgs[j].Role, *msgs[j].Content)
			}
		}
		t.Logf("%s: %d turns replayed in %d calls, each stored once; tokens received %d, sent upstream %d (%.1f%%), at most %d per call; %d calls over budget+newest",
			conv.id, len(stored), calls, inTokens, upTokens, 100*float64(upTokens)/float64(inTokens), maxUp, over)
		var total time.Duration
		for _, d := range took {
			total += d
		}
		t.Logf("%s: time per call through the proxy: p50 %v, p90 %v, max %v, mean %v",
			conv.id, pct(took, 50).Round(time.Millisecond), pct(took, 90).Round(time.Millisecond),
			pct(took, 100).Round(time.Millisecond), (total / time.Duration(max(1, len(took)))).Round(time.Millisecond))

		// The questions: each asked after the whole history, not remembered.
		var nq int
		var proxyRecall, ctxRecall, ctxItemRecall float64
		for _, q := range qs[conv.id] {
			var ev []string
			for _, id := range q.evidence {
				if _, ok := byText[id]; ok {
					ev = append(ev, id)
				}
			}
			if len(ev) == 0 {
				continue
			}
			nq++
			msgs = append(msgs, oaMsg{Role: "user", Content: text(q.question)})
			_, sent := send("I do not know.", map[string]string{proxy.HeaderRemember: "false"})
			msgs = msgs[:len(msgs)-1]
			upText := upstreamText(t, sent)
			pkg, err := m.Context(ctx, strata.ContextRequest{Conversation: conv.id, Query: q.question, Budget: budget})
			if err != nil {
				t.Fatal(err)
			}
			quoted := map[string]bool{}
			for _, it := range pkg.Items {
				if it.Kind == strata.KindTurn {
					for _, s := range stored {
						if s.Seq >= it.FirstSeq && s.Seq <= it.LastSeq {
							quoted[s.Content] = true
						}
					}
				}
			}
			var inUp, inCtx, inItems int
			for _, id := range ev {
				if strings.Contains(upText, byText[id]) {
					inUp++
				}
				if strings.Contains(pkg.Rendered, byText[id]) {
					inCtx++
				}
				if quoted[byText[id]] {
					inItems++
				}
			}
			proxyRecall += float64(inUp) / float64(len(ev))
			ctxRecall += float64(inCtx) / float64(len(ev))
			ctxItemRecall += float64(inItems) / float64(len(ev))
		}
		if nq > 0 {
			t.Logf("%s: %d questions at %d tokens: evidence recall in what went upstream %.1f%%; in 'strata context' packages %.1f%% (text found), %.1f%% (quoted as turn items, as 'strata eval' counts)",
				conv.id, nq, budget, 100*proxyRecall/float64(nq), 100*ctxRecall/float64(nq), 100*ctxItemRecall/float64(nq))
		}
	}
}

// newestTokens counts, as the proxy does, the messages of the newest turn
// that went upstream (from the last user message), or all of them when
// the list went whole.
func newestTokens(t *testing.T, tok strata.Tokenizer, sent []byte, msgs []oaMsg) int {
	tr, err := compact.Parse(compact.OpenAI, sent)
	if err != nil {
		t.Fatal(err)
	}
	ms := tr.Messages
	from := 0
	for j := len(ms) - 1; j >= 0; j-- {
		if ms[j].Role() == "user" && !strings.HasPrefix(ms[j].Text(), proxy.MemoryPrefix) {
			from = j
			break
		}
	}
	n := 0
	for _, m := range ms[from:] {
		n += tok.Count(m.Text()) + 4
	}
	return n
}

// upstreamText is the text of every message that went upstream.
func upstreamText(t *testing.T, sent []byte) string {
	tr, err := compact.Parse(compact.OpenAI, sent)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, m := range tr.Messages {
		b.WriteString(m.Text())
		b.WriteByte('\n')
	}
	return b.String()
}

// scripted is an upstream that answers each call with the text it was
// given, keeping the last body it received.
type scripted struct {
	mu    sync.Mutex
	reply string
	body  []byte
}

func (s *scripted) set(reply string) { s.mu.Lock(); s.reply = reply; s.mu.Unlock() }

func (s *scripted) lastBody() []byte { s.mu.Lock(); defer s.mu.Unlock(); return s.body }

func (s *scripted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.body = b
	reply := s.reply
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Write(openAIReply("echo", reply))
}

type loCoMoConv struct {
	id    string
	turns []strata.Turn
}

func readLoCoMo(t *testing.T, file string, data []byte) []loCoMoConv {
	r, err := formats.Open(formats.LoCoMo, file, bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var out []loCoMoConv
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(out) == 0 || out[len(out)-1].id != rec.Conversation {
			out = append(out, loCoMoConv{id: rec.Conversation})
		}
		c := &out[len(out)-1]
		c.turns = append(c.turns, rec.Turn)
	}
	return out
}

type loCoMoQuestion struct {
	question string
	evidence []string
}

// readQuestions reads each sample's questions of categories 1-4.
func readQuestions(t *testing.T, data []byte) map[string][]loCoMoQuestion {
	var samples []struct {
		SampleID string `json:"sample_id"`
		QA       []struct {
			Question string            `json:"question"`
			Evidence []json.RawMessage `json:"evidence"`
			Category int               `json:"category"`
		} `json:"qa"`
	}
	if err := json.Unmarshal(data, &samples); err != nil {
		t.Fatal(err)
	}
	out := map[string][]loCoMoQuestion{}
	for _, s := range samples {
		for _, q := range s.QA {
			// LoCoMo's categories 1-4 (5, adversarial, has no evidence to
			// recall) and RealMem's 21-24.
			if (q.Category < 1 || q.Category > 4) && (q.Category < 21 || q.Category > 24) {
				continue
			}
			var ev []string
			for _, raw := range q.Evidence {
				var e string
				if json.Unmarshal(raw, &e) != nil {
					continue
				}
				for _, id := range strings.Split(e, ";") {
					if id = strings.TrimSpace(id); id != "" && !slices.Contains(ev, id) {
						ev = append(ev, id)
					}
				}
			}
			out[s.SampleID] = append(out[s.SampleID], loCoMoQuestion{question: q.Question, evidence: ev})
		}
	}
	return out
}
