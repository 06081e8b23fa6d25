package web_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/extractive"
	"github.com/strata-memory/strata/formats"
	"github.com/strata-memory/strata/httpapi"
	"github.com/strata-memory/strata/internal/synth"
	"github.com/strata-memory/strata/sqlite"
	"github.com/strata-memory/strata/web"
)

// browser returns the path of the Chromium the tests drive, or skips.
func browser(t *testing.T) string {
	t.Helper()
	path := os.Getenv("CHROMIUM")
	if path == "" {
		path = "/usr/bin/chromium"
	}
	if _, err := os.Stat(path); err != nil {
		t.Skipf("no browser at %s (install Debian's chromium package, or set CHROMIUM): %v", path, err)
	}
	return path
}

// site is a strata server with tokens, its page mounted, holding one
// conversation.
type site struct {
	url    string
	secret string
	conv   string
	mem    *strata.Memory
}

// newSite serves a store holding LoCoMo's conv-26 when STRATA_LOCOMO
// names locomo-dev.json, else a synthetic conversation of n turns with a
// charity race told at turn 437.
func newSite(t *testing.T, n int) *site {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "strata.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	m, err := strata.New(strata.Config{Store: st, Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New()})
	if err != nil {
		t.Fatal(err)
	}
	secret, tok, err := strata.NewToken(m.Namespace(), "web test", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := st.PutToken(ctx, tok); err != nil {
		t.Fatal(err)
	}
	s := &site{secret: secret, mem: m}
	var turns []strata.Turn
	if path := os.Getenv("STRATA_LOCOMO"); path != "" {
		s.conv = "conv-26"
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		r, err := formats.Open("auto", path, f)
		if err != nil {
			t.Fatal(err)
		}
		for {
			rec, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if rec.Conversation == s.conv {
				turns = append(turns, rec.Turn)
			}
		}
	} else {
		s.conv = "synth"
		turns = synth.New(26).Turns(n)
		if n >= 437 {
			turns[436].Content = "I ran a charity race for mental health last Saturday, it was so rewarding."
		}
	}
	for i := 0; i < len(turns); i += 5000 {
		if _, err := m.Ingest(ctx, strata.Batch{Conversation: s.conv, Turns: turns[i:min(i+5000, len(turns))]}); err != nil {
			t.Fatal(err)
		}
	}
	srv, err := httpapi.New(m, httpapi.Options{Tokens: st, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	srv.Mount("/ui/", web.New(web.Options{Memory: srv.MemoryOf, Tokens: srv.Tokens()}))
	srv.SetReady(true)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	s.url = ts.URL
	return s
}

// chrome starts a headless Chromium with a fresh profile and no network
// services of its own, and returns a browser for the test.
func chrome(t *testing.T) *tab {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(browser(t)),
		chromedp.Flag("headless", true), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		// A headless tab counts as hidden: without these its timers would
		// be throttled to one a second.
		chromedp.Flag("disable-background-timer-throttling", true), chromedp.Flag("disable-renderer-backgrounding", true),
		chromedp.Flag("disable-backgrounding-occluded-windows", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1400, 1000),
	}
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel2 := chromedp.NewContext(actx)
	t.Cleanup(cancel2)
	// The first action starts the browser, on a context with no deadline
	// (a deadline there would end the browser); each step then has its own.
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("starting %s: %v", browser(t), err)
	}
	return &tab{t: t, ctx: ctx}
}

// tab runs steps in the browser, failing the test on an error.
type tab struct {
	t   *testing.T
	ctx context.Context
}

func (b *tab) step() (context.Context, context.CancelFunc) {
	return context.WithTimeout(b.ctx, 30*time.Second)
}

func (b *tab) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := b.step()
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

func (b *tab) text(sel string) string {
	b.t.Helper()
	ctx, cancel := b.step()
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		b.t.Fatalf("text of %s: %v", sel, err)
	}
	return s
}

func (b *tab) attr(sel, name string) string {
	b.t.Helper()
	ctx, cancel := b.step()
	defer cancel()
	r, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS(sel), name))
	if err != nil {
		b.t.Fatalf("attribute %s of %s: %v", name, sel, err)
	}
	return r.Value
}

func eval[T any](b *tab, js string) T {
	b.t.Helper()
	ctx, cancel := b.step()
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		b.t.Fatalf("evaluating %s: %v", js, err)
	}
	return v
}

// shots returns the folder screenshots go to: STRATA_WEB_SHOTS, or one of
// the test's own.
func shots(t *testing.T) string {
	dir := os.Getenv("STRATA_WEB_SHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func (b *tab) shot(dir, name string) {
	b.t.Helper()
	ctx, cancel := b.step()
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot %s", path)
}

type css = chromedp.CSS

// TestBrowser walks the page as a person would: sign in with a token,
// open the conversation, zoom into a macro node down to its turns, search
// "charity race" and see the hit on the timeline, preview a context and
// read its token meter, and confirm a learning.
func TestBrowser(t *testing.T) {
	s := newSite(t, 1000)
	b := chrome(t)
	dir := shots(t)
	ctx := context.Background()

	b.do("sign in", chromedp.Navigate(s.url+"/ui/"), chromedp.WaitVisible(css(`#token`)))
	b.shot(dir, "01-login")
	if loc := eval[string](b, `document.location.pathname`); loc != "/ui/login" {
		t.Errorf("without a cookie the page went to %s; want /ui/login", loc)
	}
	b.do("wrong token", chromedp.SendKeys(css(`#token`), "strata_wrong"), chromedp.Submit(css(`#token`)),
		chromedp.WaitVisible(css(`.error`)))
	b.do("list", chromedp.SendKeys(css(`#token`), s.secret), chromedp.Submit(css(`#token`)),
		chromedp.WaitVisible(css(`table.convs`)))
	b.shot(dir, "02-conversations")
	list := b.text(`table.convs`)
	conv, err := s.mem.Conversation(ctx, s.conv)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(list, s.conv) || !strings.Contains(list, strconv.FormatInt(conv.Turns, 10)) || !strings.Contains(list, "chunks") {
		t.Errorf("the list says %q; want %s, its %d turns and its policy", list, s.conv, conv.Turns)
	}
	contrast(b, "the conversation list")

	start := time.Now()
	b.do("open", chromedp.Click(css(`a[href="/ui/c/`+s.conv+`"]`)),
		chromedp.WaitVisible(css(`.row[data-level="3"] .blk`)), chromedp.WaitVisible(css(`.row[data-level="1"] .blk`)))
	t.Logf("timeline of %d turns drawn %v after the click", conv.Turns, time.Since(start).Round(time.Millisecond))
	b.shot(dir, "03-timeline")
	contrast(b, "the timeline")

	// A macro node, then its exact turns.
	b.do("macro", chromedp.Click(css(`.row[data-level="3"] .blk`)), chromedp.WaitVisible(css(`#expand`)))
	title := b.text(`#detail h2`)
	b.do("expand", chromedp.Click(css(`#expand`)), chromedp.WaitVisible(css(`#detail .turnlist li`)),
		chromedp.WaitVisible(css(`.row[data-level="0"] .blk.turn`)))
	b.shot(dir, "04-macro-turns")
	turns := eval[int](b, `document.querySelectorAll("#detail .turnlist li").length`)
	if title != "macro 1-100" || turns != 100 {
		t.Errorf("the first macro node shows %q with %d turns; want macro 1-100 and its 100 turns", title, turns)
	}
	first := b.text(`#detail .turnlist li[data-seq="1"] .text`)
	t1, _, err := s.mem.Turns(ctx, s.conv, 1, 1, 1)
	if err != nil || len(t1) != 1 || strings.TrimSpace(first) != strings.TrimSpace(t1[0].Content) {
		t.Errorf("turn 1 shows %q; want its stored content %+v (%v)", first, t1, err)
	}

	// Search: the hit is listed and marked on the timeline.
	b.do("search", chromedp.SendKeys(css(`#q`), "charity race"), chromedp.Click(css(`#search-form button`)),
		chromedp.WaitVisible(css(`.hitlist li`)))
	hitText := b.text(`#hits`)
	marks := eval[int](b, `document.querySelectorAll(".overlay .mark.hit").length`)
	if !strings.Contains(strings.ToLower(hitText), "charity race") || marks == 0 {
		t.Errorf("search for charity race: %d marks, hits %q", marks, hitText)
	}
	b.do("to the hit", chromedp.Click(css(`.hitlist .hitbtn`)), chromedp.WaitVisible(css(`.overlay .mark.hit`)))
	seq := b.attr(`.overlay .mark.hit`, "data-seq")
	b.do("the hit's turn", chromedp.WaitVisible(css(`.row[data-level="0"] .blk.turn[data-seq="`+seq+`"]`)))
	b.shot(dir, "05-search")

	// Context preview: the meter reads the package's tokens.
	b.do("context", chromedp.SendKeys(css(`#ctx-q`), "charity race"), chromedp.Click(css(`#ctx-form button`)),
		chromedp.WaitVisible(css(`#meter-text`)), chromedp.ScrollIntoView(css(`#meter`)))
	b.shot(dir, "06-context")
	meter := b.text(`#meter-text`)
	mm := regexp.MustCompile(`^(\d+) / (\d+) tokens`).FindStringSubmatch(meter)
	pkg, err := s.mem.Context(ctx, strata.ContextRequest{Conversation: s.conv, Query: "charity race", Budget: 2000})
	if err != nil {
		t.Fatal(err)
	}
	if mm == nil || mm[1] != strconv.Itoa(pkg.Tokens) || mm[2] != "2000" {
		t.Errorf("the meter reads %q; want %d / 2000 tokens", meter, pkg.Tokens)
	}

	// A learning, confirmed.
	b.do("learnings", chromedp.Click(css(`#load-learnings`)), chromedp.WaitVisible(css(`.learnlist li`)))
	id := b.attr(`.learnlist li`, "data-learning")
	b.do("confirm", chromedp.Click(css(`.learnlist li[data-learning="`+id+`"] .confirm`)),
		chromedp.WaitVisible(css(`.learnlist li[data-learning="`+id+`"] .st-confirmed`)), chromedp.ScrollIntoView(css(`.learnlist`)))
	b.shot(dir, "07-learning-confirmed")
	ls, err := s.mem.Learnings(ctx, strata.LearningFilter{Conversation: s.conv, Statuses: []string{strata.LearningConfirmed}})
	if err != nil || len(ls) != 1 || strconv.FormatInt(ls[0].ID, 10) != id {
		t.Errorf("confirmed learnings in the store: %+v, %v; want learning %s", ls, err, id)
	}
}

// TestKeyboard drives the timeline with keys alone: zoom and pan, then
// Tab to a block and open it with Enter.
func TestKeyboard(t *testing.T) {
	s := newSite(t, 1000)
	b := chrome(t)
	b.do("sign in", chromedp.Navigate(s.url+"/ui/login"), chromedp.WaitVisible(css(`#token`)),
		chromedp.SendKeys(css(`#token`), s.secret), chromedp.Submit(css(`#token`)), chromedp.WaitVisible(css(`table.convs`)),
		chromedp.Navigate(s.url+"/ui/c/"+s.conv), chromedp.WaitVisible(css(`.row[data-level="1"] .blk`)))
	r0 := b.text(`#range`)
	b.do("+", chromedp.Focus(css(`#timeline`)), chromedp.KeyEvent("+"), chromedp.WaitVisible(css(`#timeline[data-loaded]:not([data-busy])`)))
	r1 := b.text(`#range`)
	b.do("right", chromedp.KeyEvent(kb.ArrowRight), chromedp.WaitVisible(css(`#timeline[data-loaded]:not([data-busy])`)))
	r2 := b.text(`#range`)
	b.do("tab, enter", chromedp.KeyEvent(kb.Tab), chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(css(`#expand`)))
	title := b.text(`#detail h2`)
	span := func(r string) (int, int) {
		m := regexp.MustCompile(`Turns (\d+) to (\d+)`).FindStringSubmatch(r)
		if m == nil {
			t.Fatalf("range %q", r)
		}
		a, _ := strconv.Atoi(m[1])
		b, _ := strconv.Atoi(m[2])
		return a, b
	}
	a0, b0 := span(r0)
	a1, b1 := span(r1)
	a2, b2 := span(r2)
	if b1-a1 >= b0-a0 {
		t.Errorf("+ did not zoom in: %q then %q", r0, r1)
	}
	if a2 <= a1 || b2-a2 != b1-a1 {
		t.Errorf("ArrowRight did not pan right: %q then %q", r1, r2)
	}
	if !regexp.MustCompile(`^macro \d+-\d+$`).MatchString(title) {
		t.Errorf("Tab then Enter opened %q; want the first macro block", title)
	}
}

// contrastJS finds every element with text of its own whose colour
// contrasts less than 4.5:1 (WCAG AA) with the background behind it.
const contrastJS = `(() => {
  const parse = (c) => { const m = c.match(/[\d.]+/g); return m ? m.map(Number) : [0,0,0,0]; };
  const lum = ([r,g,b]) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v/12.92 : Math.pow((v+0.055)/1.055, 2.4); }; return 0.2126*f(r)+0.7152*f(g)+0.0722*f(b); };
  const bg = (e) => { for (; e; e = e.parentElement) { const c = parse(getComputedStyle(e).backgroundColor); if (c.length < 4 || c[3] > 0.5) return c; } return [255,255,255]; };
  const bad = [];
  for (const e of document.querySelectorAll("body *")) {
    if (!e.offsetParent && e.tagName !== "BODY") continue;
    const own = [...e.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
    if (!own) continue;
    const fg = parse(getComputedStyle(e).color), b = bg(e);
    const l1 = lum(fg), l2 = lum(b);
    const ratio = (Math.max(l1,l2)+0.05)/(Math.min(l1,l2)+0.05);
    if (ratio < 4.5) bad.push(e.tagName + "." + e.className + " " + ratio.toFixed(2) + ": " + e.textContent.trim().slice(0, 30));
  }
  return bad;
})()`

func contrast(b *tab, view string) {
	b.t.Helper()
	bad := eval[[]string](b, contrastJS)
	if len(bad) > 0 {
		b.t.Errorf("%s: %d texts contrast less than 4.5:1 with their background: %s", view, len(bad), strings.Join(bad, "; "))
	}
}

// TestPageWithoutTokens checks a server without tokens serves the page
// with no sign-in, and that / is not the page's business (serve
// redirects it).
func TestPageWithoutTokens(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "strata.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m, err := strata.New(strata.Config{Store: st, Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New()})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := httpapi.New(m, httpapi.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	srv.Mount("/ui/", web.New(web.Options{Memory: srv.MemoryOf}))
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	for path, want := range map[string]int{"/ui/": 200, "/ui/login": 200, "/ui/c/none": 404, "/ui/static/app.js": 200} {
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s = %d; want %d", path, resp.StatusCode, want)
		}
		if path == "/ui/login" && strings.Contains(string(b), `name="token"`) {
			t.Errorf("GET /ui/login without tokens shows the sign-in form")
		}
		if path == "/ui/" && !strings.Contains(string(b), "No conversations yet") {
			t.Errorf("GET /ui/ = %s", b)
		}
	}
}

// TestTimelineFirstRender opens the conversation view of a long
// conversation (STRATA_WEB_TURNS turns, default 1,000) and logs how long
// the timeline takes to draw and how many bytes the page fetched. No row
// may hold more blocks than one window's page: a level too dense for the
// window says so instead.
func TestTimelineFirstRender(t *testing.T) {
	n := 1000
	if v := os.Getenv("STRATA_WEB_TURNS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			t.Fatalf("STRATA_WEB_TURNS=%q: want a number of turns", v)
		}
	}
	t0 := time.Now()
	s := newSite(t, n)
	t.Logf("%d turns stored in %v", n, time.Since(t0).Round(time.Millisecond))
	b := chrome(t)
	b.do("sign in", chromedp.Navigate(s.url+"/ui/login"), chromedp.WaitVisible(css(`#token`)),
		chromedp.SendKeys(css(`#token`), s.secret), chromedp.Submit(css(`#token`)), chromedp.WaitVisible(css(`table.convs`)))
	start := time.Now()
	b.do("open", chromedp.Navigate(s.url+"/ui/c/"+s.conv), chromedp.WaitVisible(css(`#timeline[data-loaded]:not([data-busy])`)))
	took := time.Since(start)
	blocks := eval[[]int](b, `[...document.querySelectorAll("#timeline .lane")].map((l) => l.querySelectorAll(".blk").length)`)
	bytes := eval[int](b, `performance.getEntriesByType("resource").concat(performance.getEntriesByType("navigation")).reduce((s, e) => s + (e.encodedBodySize || 0), 0)`)
	t.Logf("%d turns: timeline drawn %v after navigating; blocks per row (coarsest first) %v; %d bytes fetched", n, took.Round(time.Millisecond), blocks, bytes)
	for i, c := range blocks {
		if c > 300 {
			t.Errorf("row %d holds %d blocks; want at most one window's page of 300", i, c)
		}
	}
}

// TestTimelineDenseOverview: a conversation whose coarsest level holds
// more nodes than a row may draw (32,000 turns: 320 macro nodes) opens on
// ranges to zoom into rather than on empty rows, and a click on one shows
// that range's summaries.
func TestTimelineDenseOverview(t *testing.T) {
	s := newSite(t, 32000)
	b := chrome(t)
	b.do("sign in", chromedp.Navigate(s.url+"/ui/login"), chromedp.WaitVisible(css(`#token`)),
		chromedp.SendKeys(css(`#token`), s.secret), chromedp.Submit(css(`#token`)), chromedp.WaitVisible(css(`table.convs`)))
	b.do("open", chromedp.Navigate(s.url+"/ui/c/"+s.conv), chromedp.WaitVisible(css(`#timeline[data-loaded]:not([data-busy])`)))
	bins := eval[int](b, `document.querySelectorAll("#timeline .lane .blk.bin").length`)
	nodes := eval[int](b, `document.querySelectorAll("#timeline .lane .blk:not(.bin):not(.turn)").length`)
	if bins == 0 || nodes != 0 {
		t.Fatalf("the whole of 32,000 turns shows %d ranges and %d nodes; want ranges to zoom into and no node", bins, nodes)
	}
	gen := eval[string](b, `document.getElementById("timeline").dataset.loaded`)
	b.do("zoom into the first range", chromedp.Click(css(`#timeline .lane .blk.bin`)),
		chromedp.WaitVisible(css(`#timeline[data-loaded]:not([data-loaded="`+gen+`"]):not([data-busy])`)))
	if n := eval[int](b, `document.querySelectorAll("#timeline .lane .blk:not(.bin):not(.turn)").length`); n == 0 {
		t.Errorf("after zooming into a range, no summary is drawn")
	}
}
