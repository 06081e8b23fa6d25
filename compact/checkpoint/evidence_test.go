package checkpoint_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/strata-memory/strata/compact/checkpoint"
)

// TestEverythingFitsEverythingSurvives checks that when listing every
// identifier of a span takes at most half of the budget, the checkpoint
// carries every one: an output's error lines past its first few, error
// lines that differ only in a request id, and the names a read printed.
func TestEverythingFitsEverythingSurvives(t *testing.T) {
	var log strings.Builder
	var want []string
	for i := 1; i <= 12; i++ {
		line := fmt.Sprintf("ERROR upstream %d refused: dial tcp 10.0.0.%d:8443: connect: connection refused", i, i)
		log.WriteString(line + "\n")
		want = append(want, line)
	}
	for _, id := range []string{"4f9a2c81d3e7b6", "9be07d41aa5c3f"} {
		line := "ERROR request " + id + " timed out"
		log.WriteString(line + "\n")
		want = append(want, line)
	}
	span := []checkpoint.Entry{
		user("Find out why the gateway fails to reach its upstreams."),
		call("read_file", `{"path": "internal/gateway/pool.go"}`),
		output("read_file", "package gateway\n\nfunc dialUpstream(addr string) error {\n\treturn nil\n}\n\ntype connPool struct{}\n"),
	}
	span = append(span, run("c9", "go run ./cmd/gateway", log.String())...)
	want = append(want, "dialUpstream", "connPool")
	res, err := newWriter(t, checkpoint.Options{}).Checkpoint(context.Background(), span, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range want {
		if !strings.Contains(res.Text, w) {
			t.Errorf("%q lost from a checkpoint with room for everything:\n%s", w, res.Text)
		}
	}
	// Ledger, the package's ranked choice, still leaves the spare ones out.
	if ids := checkpoint.Ledger(span, ""); hasText(ids, want[len(want)-1]) {
		t.Errorf("Ledger lists %q, a name only a read printed", want[len(want)-1])
	}
}

// TestFailureEvidenceFirst checks that, in a budget too small for
// everything, what a failing output's error lines name outranks what a
// passing output or a read shows, and a file written outranks a file read.
func TestFailureEvidenceFirst(t *testing.T) {
	var span []checkpoint.Entry
	span = append(span, user("Make the router tests pass."))
	for i := 0; i < 60; i++ {
		span = append(span, call("read_file", fmt.Sprintf(`{"path": "internal/router/file%02d.go"}`, i)),
			output("read_file", "package router\n"))
	}
	span = append(span, call("write_file", `{"path": "internal/router/route_table.go", "content": "package router\n"}`),
		output("write_file", "wrote internal/router/route_table.go"))
	span = append(span, run("t1", "go test ./internal/router/",
		"--- FAIL: TestMatchWildcard (0.00s)\npanic: runtime error: index out of range [3] with length 3\n\ngoroutine 7 [running]:\n"+
			"example.com/gw/internal/router.(*Table).match(...)\n\t/src/gw/internal/router/table.go:118 +0x1d4\n"+
			"FAIL\texample.com/gw/internal/router\t0.011s")...)
	res, err := newWriter(t, checkpoint.Options{Budget: 300}).Checkpoint(context.Background(), span, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"TestMatchWildcard", "index out of range [3] with length 3", "internal/router/route_table.go"} {
		if !strings.Contains(res.Text, w) {
			t.Errorf("%q lost while files only read were kept:\n%s", w, res.Text)
		}
	}
	// With room, the panic's site is kept with its line.
	res, err = newWriter(t, checkpoint.Options{}).Checkpoint(context.Background(), span, "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Text, "internal/router/table.go:118") {
		t.Errorf("the panic site is lost:\n%s", res.Text)
	}
}

// TestConstraintsCollapse checks that constraint lines differing only in
// their identifiers become one line that keeps every identifier.
func TestConstraintsCollapse(t *testing.T) {
	var span []checkpoint.Entry
	files := []string{"internal/router/match.go", "internal/router/table.go", "internal/router/trie.go", "internal/router/params.go"}
	for _, f := range files {
		span = append(span, user("Don't touch "+f+" in this change."), said("Understood."))
	}
	span = append(span, user("Never log the value of `API_TOKEN`."), said("Understood."))
	res, err := newWriter(t, checkpoint.Options{}).Checkpoint(context.Background(), span, "")
	if err != nil {
		t.Fatal(err)
	}
	s, err := checkpoint.Parse(res.Text)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Don't touch " + strings.Join(files, ", ") + " in this change.", "Never log the value of `API_TOKEN`."}
	if strings.Join(s.Constraints, "\n") != strings.Join(want, "\n") {
		t.Errorf("constraints:\n%s\nwant:\n%s", strings.Join(s.Constraints, "\n"), strings.Join(want, "\n"))
	}
}

// TestPassingTestsSurvive checks that the tests a passing run reported on
// (go test -v, pytest -v) fill the room the budget leaves, as the URLs
// and ids a run printed do, where the names a read printed do not: here
// listing every identifier of the span takes more than half the budget
// (a long file read), yet the run's tests fit.
func TestPassingTestsSurvive(t *testing.T) {
	var src strings.Builder
	src.WriteString("package router\n\n")
	for i := 0; i < 400; i++ {
		fmt.Fprintf(&src, "func routeHandlerNumber%03d(w http.ResponseWriter) { serveRouteNumber%03d(w) }\n", i, i)
	}
	var run strings.Builder
	var want []string
	for i := 0; i < 15; i++ {
		name := fmt.Sprintf("TestRouterMatch%02d", i)
		fmt.Fprintf(&run, "=== RUN   %s\n--- PASS: %s (0.00s)\n", name, name)
		want = append(want, name)
	}
	run.WriteString("=== RUN   TestRouterParams/empty_path\n    --- PASS: TestRouterParams/empty_path (0.00s)\n")
	want = append(want, "TestRouterParams/empty_path")
	run.WriteString("tests/test_api.py::test_refund_roundtrip PASSED\nPASSED tests/test_api.py::test_quota_limits\n")
	want = append(want, "test_refund_roundtrip", "test_quota_limits")
	run.WriteString("ok  \tgithub.com/acme/gw/internal/router\t0.412s\n")
	span := []checkpoint.Entry{
		user("Check the router still passes after the refactor."),
		call("read_file", `{"path": "internal/router/handlers.go"}`),
		output("read_file", src.String()),
		call("bash", `{"command": "go test -v ./internal/router/"}`),
		output("bash", run.String()),
		said("The router tests pass."),
	}
	res, err := newWriter(t, checkpoint.Options{}).Checkpoint(context.Background(), span, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range want {
		if !strings.Contains(res.Text, w) {
			t.Errorf("%q, a test the run reported on, lost:\n%s", w, res.Text)
		}
	}
	if strings.Contains(res.Text, "routeHandlerNumber399") {
		t.Errorf("the names only a read printed are listed although they do not all fit:\n%s", res.Text)
	}
}

// TestPassingDetailsComeLast checks that, in a budget too small for
// everything, the lines a passing output locates (file:line sites of its
// log lines) and the tests it says passed come after the paths, URLs and
// ids only output shows: a long passing run does not crowd them out; and
// that a passing go test run's log lines are no failure.
func TestPassingDetailsComeLast(t *testing.T) {
	span := []checkpoint.Entry{user("Add retries to the upstream client.")}
	var want []string
	for i := 0; i < 12; i++ {
		id := fmt.Sprintf("l%d", i)
		p := fmt.Sprintf("/srv/gw/config/upstream-%02d.yaml", i)
		span = append(span, run(id, "gw config check", fmt.Sprintf("loaded %s from https://cfg.internal.example.com/v1/upstream/%02d rev=a1b2c3d%02d\n", p, i, i))...)
		want = append(want, p, fmt.Sprintf("https://cfg.internal.example.com/v1/upstream/%02d", i))
	}
	var v strings.Builder
	for i := 0; i < 300; i++ {
		fmt.Fprintf(&v, "=== RUN   TestUpstreamRetry%03d\n    client_test.go:%d: attempt ok\n--- PASS: TestUpstreamRetry%03d (0.00s)\n", i, 100+i, i)
	}
	v.WriteString("ok  \tgithub.com/acme/gw/internal/upstream\t1.412s\n")
	span = append(span, run("t1", "go test -v ./internal/upstream/", v.String())...)
	res, err := newWriter(t, checkpoint.Options{Budget: 1500}).Checkpoint(context.Background(), span, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range want {
		if !strings.Contains(res.Text, w) {
			t.Errorf("%q lost to the passing run's lines:\n%s", w, res.Text)
		}
	}
	// The tests' log lines (client_test.go:101: attempt ok) are no
	// failure: the run passed.
	if !strings.Contains(res.Text, "`go test -v ./internal/upstream/` passes") || strings.Contains(res.Text, "- error: client_test.go") {
		t.Errorf("a passing run's log lines read as failures:\n%s", res.Text)
	}
}

// TestPassingStateSurvivesWhenNothingFits checks that when the span's
// identifiers are far more than the budget holds, and what other outputs
// show would fill it, the latest state a passing output shows (the tests
// the last passing run reported on) still gets a small share. (What the
// conversation names and failure evidence still come first.)
func TestPassingStateSurvivesWhenNothingFits(t *testing.T) {
	span := []checkpoint.Entry{user("Make the upstream client retry.")}
	for r := 0; r < 20; r++ {
		var log strings.Builder
		for i := 0; i < 8; i++ {
			fmt.Fprintf(&log, "GET https://up%02d.example.com/v1/items/%d 200 OK trace=%x\n", r, i, 0xabc12300+r*8+i)
		}
		span = append(span, run(fmt.Sprintf("f%d", r), fmt.Sprintf("go run ./cmd/gw -shard %d", r), log.String())...)
	}
	var v strings.Builder
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&v, "=== RUN   TestUpstreamRetry%03d\n--- PASS: TestUpstreamRetry%03d (0.00s)\n", i, i)
	}
	v.WriteString("ok  \tgithub.com/acme/gw/internal/upstream\t1.412s\n")
	span = append(span, run("t1", "go test -v ./internal/upstream/", v.String())...)
	res, err := newWriter(t, checkpoint.Options{Budget: 1500}).Checkpoint(context.Background(), span, "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Text, "TestUpstreamRetry039") {
		t.Errorf("the last passing run's tests are all lost:\n%s", res.Text)
	}
	// The share is small: failure evidence still fills most of it.
	if n := strings.Count(res.Text, "TestUpstreamRetry0"); n > 12 {
		t.Errorf("%d passing tests listed, more than a small share:\n%s", n, res.Text)
	}
	if n := strings.Count(res.Text, "https://up"); n < 20 {
		t.Errorf("only %d of the outputs' URLs kept: the share is not small:\n%s", n, res.Text)
	}
}

// TestErrorLinesBeforeNames checks that, when a budget cannot hold both,
// what the error lines of failing runs name (codes, ids, URLs, failing
// subtests, a JSON error body's fields, the headers of a response that
// failed, the project's crash site) is kept
// before the URLs the user listed, and that a frame in the language's
// runtime does not rank as a crash site.
func TestErrorLinesBeforeNames(t *testing.T) {
	var ask strings.Builder
	ask.WriteString("These endpoints time out since the deploy:")
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&ask, " https://svc-%02d.example.test/api/v1/items/%d", i, 1000+i)
	}
	span := []checkpoint.Entry{user(ask.String())}
	var want []string
	for i := 0; i < 6; i++ {
		code, req := fmt.Sprintf("E%d", 7100+i), fmt.Sprintf("req_%dQx7Lm", 31+i)
		sub := fmt.Sprintf("TestForwardPool/case_%d", i)
		out := fmt.Sprintf("=== RUN   TestForwardPool\n    --- FAIL: %s (0.01s)\n"+
			`{"error":{"code":%q,"message":"upstream returned 503","request_id":%q}}`+"\n"+
			"panic: runtime error: index out of range [%d] with length %d\n\ngoroutine 9 [running]:\n"+
			"example.com/gw/internal/pool.(*Pool).pick(...)\n\t/src/gw/internal/pool/pick.go:%d +0x1d4\n"+
			"testing.tRunner(0xc000102000, 0x5a1b28)\n\t/usr/local/go/src/testing/testing.go:%d +0xd4\nFAIL",
			sub, code, req, i+2, i+2, 40+i, 1600+i)
		span = append(span, run(fmt.Sprintf("t%d", i), "go test ./internal/pool/", out)...)
		want = append(want, code, req, sub, fmt.Sprintf("internal/pool/pick.go:%d", 40+i))
	}
	// A failed response's headers name its request.
	span = append(span, run("h1", "curl -si https://gw.example.test/v1/charge",
		"HTTP/1.1 503 Service Unavailable\ncontent-type: text/plain\nx-request-id: req_77HdQ2pLx9\nretry-after: 30\n\nupstream unavailable")...)
	want = append(want, "req_77HdQ2pLx9")
	res, err := newWriter(t, checkpoint.Options{Budget: 920}).Checkpoint(context.Background(), span, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range want {
		if !strings.Contains(res.Text, w) {
			t.Errorf("%q, named by a failing run, lost while the user's URLs were kept:\n%s", w, res.Text)
		}
	}
	if !strings.Contains(res.Text, "https://svc-39.example.test/api/v1/items/1039") {
		t.Errorf("no room left for the user's URLs:\n%s", res.Text)
	}
	// The ranking puts the runtime's frames after the user's URLs, and
	// the project's crash sites before them.
	pos := map[string]int{}
	for i, id := range checkpoint.Ledger(span, "") {
		pos[id.Text] = i
	}
	runtime, ok := pos["/usr/local/go/src/testing/testing.go:1600"]
	if !ok || runtime < pos["https://svc-39.example.test/api/v1/items/1039"] {
		t.Errorf("a frame in the Go runtime at %d (listed: %v), before the user's last URL at %d", runtime, ok, pos["https://svc-39.example.test/api/v1/items/1039"])
	}
	if site := pos["/src/gw/internal/pool/pick.go:40"]; site > pos["https://svc-00.example.test/api/v1/items/1000"] {
		t.Errorf("the project's crash site at %d, after the user's first URL", site)
	}
}

// TestSaidKeepsCase checks that an identifier counts as said by the text
// only in its own case: the goal's URL with a "#rate_limited" fragment
// does not carry the code RATE_LIMITED a log line printed.
func TestSaidKeepsCase(t *testing.T) {
	span := []checkpoint.Entry{
		user("Why do clients land on https://docs.example.test/errors#rate_limited since the deploy?"),
	}
	span = append(span, run("r1", "tail -n 1 /var/log/gateway.log", "level=warn code=RATE_LIMITED tenant=acme")...)
	res, err := newWriter(t, checkpoint.Options{Budget: 2000}).Checkpoint(context.Background(), span, "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Text, "RATE_LIMITED") {
		t.Errorf("RATE_LIMITED lost (Ledger carries it: %v):\n%s", hasText(res.Ledger, "RATE_LIMITED"), res.Text)
	}
}

// TestWrittenBeforeRead checks that what only the code an agent wrote
// shows (an endpoint, an error code, a port it put in a file) ranks
// before the commands and paths of the files it only read.
func TestWrittenBeforeRead(t *testing.T) {
	span := []checkpoint.Entry{user("Add a health check for the billing upstream.")}
	for i := 0; i < 40; i++ {
		span = append(span, call("shell", fmt.Sprintf(`{"command": "sed -n 1,80p internal/billing/part%02d.go"}`, i)),
			output("shell", "package billing\n"))
	}
	span = append(span, call("write_file", `{"path": "internal/billing/health.go", "content": "package billing\n\n`+
		`const healthURL = \"https://billing.example.test:8443/v2/health\"\n\nconst errUnhealthy = \"E4417\"\n\nconst adminAddr = \"127.0.0.1:39117\"\n"}`),
		output("write_file", "wrote internal/billing/health.go"))
	pos := map[string]int{}
	for i, id := range checkpoint.Ledger(span, "") {
		pos[id.Text] = i
	}
	read, ok := pos["sed -n 1,80p internal/billing/part00.go"]
	if !ok {
		t.Fatal("the first read is not in the ledger")
	}
	for _, w := range []string{"https://billing.example.test:8443/v2/health", "E4417", "127.0.0.1:39117"} {
		if p, ok := pos[w]; !ok || p > read {
			t.Errorf("%q, in the file written, at %d (listed: %v), after the first read at %d", w, p, ok, read)
		}
	}
	res, err := newWriter(t, checkpoint.Options{Budget: 400}).Checkpoint(context.Background(), span, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"internal/billing/health.go", "https://billing.example.test:8443/v2/health", "E4417", "127.0.0.1:39117"} {
		if !strings.Contains(res.Text, w) {
			t.Errorf("%q lost while reads were kept:\n%s", w, res.Text)
		}
	}
}

// TestPythonExceptionLine checks that the line closing a Python traceback
// is an error line whatever the exception is called, and that what it
// names ranks with the failure evidence, before the frames of the
// standard library.
func TestPythonExceptionLine(t *testing.T) {
	span := []checkpoint.Entry{user("Fix the importer.")}
	span = append(span, run("p1", "pytest -x tests/test_import.py", `tests/test_import.py F
Traceback (most recent call last):
  File "/srv/app/importer/rows.py", line 88, in parse_row
    return Decimal(cell)
  File "/usr/lib/python3.11/decimal.py", line 120, in __new__
    raise InvalidOperation(value)
decimal.InvalidOperation: row 4471 of batch 7f3c2a9e-1b4d-4e8a-9c55-2f0e1d3b6a71
FAILED tests/test_import.py::test_import_rows - decimal.InvalidOperation
`)...)
	ids := checkpoint.Ledger(span, "")
	pos := map[string]int{}
	for i, id := range ids {
		pos[id.Kind+" "+id.Text] = i
	}
	if _, ok := pos["error decimal.InvalidOperation: row 4471 of batch 7f3c2a9e-1b4d-4e8a-9c55-2f0e1d3b6a71"]; !ok {
		t.Fatalf("the exception line is not an error line: %v", ids)
	}
	uuid, ok := pos["id 7f3c2a9e-1b4d-4e8a-9c55-2f0e1d3b6a71"]
	lib := pos["path /usr/lib/python3.11/decimal.py"]
	if !ok || uuid > lib {
		t.Errorf("the batch id on the exception line at %d (listed: %v), after the standard library's frame at %d", uuid, ok, lib)
	}
}

// TestJavaException checks a Java stack trace: the "Exception in thread"
// line is an error line, and a frame's site is the file:line inside its
// parentheses, not the method before them.
func TestJavaException(t *testing.T) {
	span := []checkpoint.Entry{user("The app dies at start.")}
	span = append(span, run("j1", "java -jar app.jar", "Exception in thread \"main\" java.lang.IllegalStateException: pool closed for tenant t-8841\n"+
		"\tat com.acme.pool.Pool.take(Pool.java:118)\n\tat com.acme.App.main(App.java:42)\n"+
		"Caused by: java.net.ConnectException: Connection refused: db-7.internal:5432\n\t... 2 more")...)
	ids := checkpoint.Ledger(span, "")
	for _, want := range []string{"error Exception in thread \"main\" java.lang.IllegalStateException: pool closed for tenant t-8841",
		"path Pool.java:118", "path App.java:42"} {
		if !hasText(ids, strings.SplitN(want, " ", 2)[1]) {
			t.Errorf("%s missing from the ledger: %v", want, ids)
		}
	}
	for _, id := range ids {
		if id.Kind == checkpoint.KindPath && strings.Contains(id.Text, "(") {
			t.Errorf("path %q: a frame's method taken for its site", id.Text)
		}
	}
}

// TestRustPanicMessage checks that the message Rust prints on the line
// after "thread 'main' panicked at src/x.rs:212:9:" is an error line.
func TestRustPanicMessage(t *testing.T) {
	span := []checkpoint.Entry{user("The store test panics.")}
	span = append(span, run("r1", "cargo test", "thread 'main' panicked at src/store/mod.rs:212:9:\n"+
		"segment 0x7f3c2a9e missing from manifest m-20931\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace")...)
	ids := checkpoint.Ledger(span, "")
	if !hasText(ids, "segment 0x7f3c2a9e missing from manifest m-20931") {
		t.Errorf("the panic's message is not an error line: %v", ids)
	}
}

// TestFailureShapes checks failure reports whose lines are not shaped as
// errors: what they name is failure evidence, ranked before what the
// user names, and a warning's site is not.
func TestFailureShapes(t *testing.T) {
	for _, c := range []struct {
		name, output string
		failing      []string // failure evidence
		not          []string // not failure evidence
	}{
		{"pytest's E lines and crash site", "    def test_load(tmp_path):\n>       cur.execute(SQL_INSERT, values)\n" +
			"E       psycopg.errors.UniqueViolation: duplicate key value violates unique constraint \"entries_pkey\"\n" +
			"E       DETAIL:  Key (tenant_id, entry_id)=(9bfc5d9d-ce25-4373-9778-1314e6173a20, 86475) already exists.\n\n" +
			"etl/loaders/csv_loader.py:49: UniqueViolation\n",
			[]string{"9bfc5d9d-ce25-4373-9778-1314e6173a20", "etl/loaders/csv_loader.py:49"}, nil},
		// Formats no rule knows: a failed output's lines that say it
		// failed, in words, are its error lines; the lines under an
		// error line, up to a blank line, are its report (but for the
		// names of code on them).
		{"an unknown tool's failure in words", "uploading 14 files to s3://assets-prod-7/site/\n" +
			"upload of css/site.css stopped: bucket locked by lease lse_91kq2 (request failed after 3 tries)\n" +
			"uploaded 13 of 14 files\nexit status 1\n",
			[]string{"lse_91kq2"}, nil},
		{"the lines under an error line", "applying 3 migrations\nError: migration 0042 did not apply\n" +
			"  while applying db/migrations/0042_add_index.sql line 7\n  lock held by txid 99a1c4f2e7 since 10:42\n\n" +
			"next step reads db/seed/fixtures.sql\n",
			[]string{"db/migrations/0042_add_index.sql", "99a1c4f2e7"}, []string{"db/seed/fixtures.sql"}},
		{"a warning that something failed", "14:02:11.204 INFO  sync.Worker - pulled 212 rows from ledger-eu\n" +
			"14:02:11.915 WARN  sync.Worker - batch b-7741 rejected by upstream: checksum mismatch (txn 5f0c2a9e)\n" +
			"14:02:12.010 INFO  sync.Worker - next pull for acct_91XkQm2 in 30s\n",
			[]string{"b-7741", "5f0c2a9e"}, []string{"acct_91XkQm2"}},
		{"an API's error body that names its type", `{"kind":"ThrottlingException","detail":"rate exceeded for key ak_7Hq2Lm9x on /v2/exports"}` + "\n",
			[]string{"ak_7Hq2Lm9x", "/v2/exports"}, nil},
		{"an error type in capitals", `{"type":"HTTPError","msg":"upstream said 502 for job jb_4Kx9Pq2w"}` + "\n",
			[]string{"jb_4Kx9Pq2w"}, nil},
		{"curl -v's failed response", "*   Trying 127.0.0.1:443...\n> POST /v1/batches HTTP/1.1\n>\n< HTTP/1.1 502 Bad Gateway\n" +
			"< Content-Type: application/json\n< X-Request-Id: req_IOeRVGVy90atPY\n<\n{\"status\":\"degraded\"}\n",
			[]string{"req_IOeRVGVy90atPY"}, nil},
		{"docker daemon's error", "Error response from daemon: driver failed programming external connectivity on endpoint api-1: " +
			"Bind for 0.0.0.0:37136 failed: port is already allocated\n",
			[]string{"0.0.0.0:37136"}, nil},
		{"rustc's error site, not its warning's", "warning: unused variable: `x`\n  --> src/io/writer.rs:9:2\n\n" +
			"error[E0308]: mismatched types\n  --> src/io/reader.rs:79:20\n",
			[]string{"src/io/reader.rs:79:20"}, []string{"src/io/writer.rs:9:2"}},
		{"cargo test's failing test, whole", "test io::reader::tests::skips_bom ... ok\ntest io::reader::tests::caps_flush ... FAILED\n\n" +
			"failures:\n    io::reader::tests::caps_flush\n\ntest result: FAILED. 1 passed; 1 failed\n",
			[]string{"io::reader::tests::caps_flush"}, []string{"io::reader::tests::skips_bom"}},
	} {
		t.Run(c.name, func(t *testing.T) { checkFailureRank(t, c.output, c.failing, c.not) })
	}
}

// TestFailureFormats checks the failure reports of test runners and
// sanitizers across ecosystems, as their documentation shows them: the
// failing tests, the sites and the messages are failure evidence, ranked
// before what the user names.
func TestFailureFormats(t *testing.T) {
	for _, c := range []struct {
		name, output string
		failing      []string
	}{
		{"AddressSanitizer", "==31337==ERROR: AddressSanitizer: heap-use-after-free on address 0x602000000010 at pc 0x55d0c3a2b1c4 bp 0x7ffd4e2a sp 0x7ffd4e20\n" +
			"READ of size 4 at 0x602000000010 thread T0\n" +
			"    #0 0x55d0c3a2b1c3 in pricing::Quote::total() const /src/pricing/src/quote.cc:88:12\n" +
			"    #1 0x55d0c3a2a0f1 in main /src/pricing/tests/quote_test.cc:41:5\n" +
			"    #2 0x7f2b1c0d in __libc_start_main (/lib/x86_64-linux-gnu/libc.so.6+0x270b2)\n\n" +
			"SUMMARY: AddressSanitizer: heap-use-after-free /src/pricing/src/quote.cc:88:12 in pricing::Quote::total() const\n",
			[]string{"/src/pricing/src/quote.cc:88:12", "/src/pricing/tests/quote_test.cc:41:5"}},
		{"GoogleTest", "[ RUN      ] QuoteTest.RoundsHalfEven\n/src/pricing/tests/quote_test.cc:57: Failure\nExpected equality of these values:\n  q.total()\n    Which is: 1049\n  1050\n" +
			"[  FAILED  ] QuoteTest.RoundsHalfEven (0 ms)\n[----------] 1 test from QuoteTest (0 ms total)\n\n[  FAILED  ] 1 test, listed below:\n[  FAILED  ] QuoteTest.RoundsHalfEven\n",
			[]string{"QuoteTest.RoundsHalfEven", "/src/pricing/tests/quote_test.cc:57"}},
		{"RSpec", "Failures:\n\n  1) Admin::InvoicesController GET #show renders the invoice\n" +
			"     Failure/Error: expect(response).to have_http_status(:ok)\n" +
			"       expected the response to have status code :ok (200) but it was :internal_server_error (500)\n" +
			"     # ./spec/controllers/admin/invoices_controller_spec.rb:17:in `block (3 levels) in <top (required)>'\n\n" +
			"Finished in 1.23 seconds (files took 2.1 seconds to load)\n12 examples, 1 failure\n\nFailed examples:\n\n" +
			"rspec ./spec/controllers/admin/invoices_controller_spec.rb:17 # Admin::InvoicesController GET #show renders the invoice\n",
			[]string{"./spec/controllers/admin/invoices_controller_spec.rb:17", "Failure/Error: expect(response).to have_http_status(:ok)",
				"rspec ./spec/controllers/admin/invoices_controller_spec.rb:17 # Admin::InvoicesController GET #show renders the invoice"}},
		{"a Ruby exception", "NoMethodError: undefined method `amount_cents' for nil:NilClass\n" +
			"app/models/invoice_line.rb:42:in `total'\napp/services/billing/close_period.rb:19:in `block in call'\n",
			[]string{"app/models/invoice_line.rb:42", "app/services/billing/close_period.rb:19"}},
		{"ExUnit", "  1) test delivers the webhook (Notifier.WebhookTest)\n     test/notifier/webhook_test.exs:23\n" +
			"     ** (MatchError) no match of right hand side value: {:error, :econnrefused}\n" +
			"     code: assert {:ok, _} = Webhook.deliver(event)\n     stacktrace:\n" +
			"       (notifier 0.3.1) lib/notifier/webhook.ex:57: Notifier.Webhook.deliver/1\n" +
			"       test/notifier/webhook_test.exs:25: (test)\n\nFinished in 0.4 seconds\n9 tests, 1 failure\n",
			[]string{"test/notifier/webhook_test.exs:23", "lib/notifier/webhook.ex:57", "1) test delivers the webhook (Notifier.WebhookTest)"}},
		{"Gradle and JUnit 5", "> Task :ledger:test\n\nInvoiceServiceTest > closesPeriod() FAILED\n" +
			"    org.opentest4j.AssertionFailedError: expected: <2> but was: <3>\n" +
			"        at app//org.junit.jupiter.api.AssertionFailureBuilder.build(AssertionFailureBuilder.java:151)\n" +
			"        at app//com.quire.ledger.InvoiceServiceTest.closesPeriod(InvoiceServiceTest.kt:57)\n\n" +
			"    Caused by: java.sql.SQLTransientConnectionException: HikariPool-1 - Connection is not available, request timed out after 30004ms.\n\n" +
			"12 tests completed, 1 failed\n\n> Task :ledger:test FAILED\n",
			[]string{"InvoiceServiceTest.kt:57", "HikariPool-1", "InvoiceServiceTest > closesPeriod() FAILED",
				"Caused by: java.sql.SQLTransientConnectionException"}},
		{"ctest", "    Start 3: pricing_quote_test\n3/5 Test #3: pricing_quote_test ...............***Failed    0.02 sec\n" +
			"80% tests passed, 1 tests failed out of 5\n\nThe following tests FAILED:\n\t  3 - pricing_quote_test (Failed)\nErrors while running CTest\n",
			[]string{"pricing_quote_test", "3 - pricing_quote_test (Failed)"}},
		{"the Kotlin compiler", "> Task :ledger:compileKotlin FAILED\ne: file:///work/ledger/src/main/kotlin/com/quire/ledger/Period.kt:42:13 Unresolved reference: closeAt\n",
			[]string{"Period.kt:42:13", "Unresolved reference: closeAt"}},
		{".NET", "  Failed Quire.Pricing.Tests.QuoteTests.RoundsHalfEven [12 ms]\n  Error Message:\n   Assert.Equal() Failure: Expected: 1050, Actual: 1049\n" +
			"  Stack Trace:\n     at Quire.Pricing.Tests.QuoteTests.RoundsHalfEven() in /src/Pricing.Tests/QuoteTests.cs:line 57\n",
			[]string{"Quire.Pricing.Tests.QuoteTests.RoundsHalfEven", "/src/Pricing.Tests/QuoteTests.cs:line 57"}},
		// Lines past a log collector's prefix are read as the program
		// printed them.
		{"docker compose logs", "web-1     | Started GET \"/orders/12\" for 172.18.0.1\n" +
			"web-1     | /app/app/models/order.rb:57:in 'Order#total': undefined method 'cents' for nil (NoMethodError)\n" +
			"web-1     | \tfrom /app/app/controllers/orders_controller.rb:9:in 'OrdersController#show'\n",
			[]string{"/app/app/models/order.rb:57", "/app/app/controllers/orders_controller.rb:9", "undefined method 'cents' for nil"}},
		{"journald", "Mar 03 09:12:44 app-02 java[4471]: Exception in thread \"main\" java.lang.IllegalStateException: pool closed\n" +
			"Mar 03 09:12:44 app-02 java[4471]: \tat com.acme.store.Pool.take(Pool.kt:118)\n",
			[]string{"Pool.kt:118", "Exception in thread"}},
		{"Android's logcat", "11-19 14:02:11.406  4417  4417 E AndroidRuntime: FATAL EXCEPTION: main\n" +
			"11-19 14:02:11.406  4417  4417 E AndroidRuntime: java.lang.IllegalStateException: sync queue closed\n" +
			"11-19 14:02:11.406  4417  4417 E AndroidRuntime: \tat android.app.ActivityThread.handleServiceArgs(ActivityThread.java:5101)\n" +
			"11-19 14:02:11.406  4417  4417 E AndroidRuntime: \tat com.acme.courier.sync.UploadWorker.drain(UploadWorker.kt:64)\n",
			[]string{"UploadWorker.kt:64", "sync queue closed"}},
		{"a CI log by job and step", "build\tTest\t2025-03-03T09:12:44.5040000Z   Failed Quire.Pricing.Tests.QuoteTests.RoundsHalfEven [12 ms]\n" +
			"build\tTest\t2025-03-03T09:12:44.5040000Z   Error Message:\n" +
			"build\tTest\t2025-03-03T09:12:44.5040000Z    Assert.Equal() Failure: Expected: 1050, Actual: 1049\n",
			[]string{"Quire.Pricing.Tests.QuoteTests.RoundsHalfEven"}},
		{"a trace context id", "HTTP/1.1 500\ncontent-type: application/problem+json\n\n" +
			"{\"title\":\"An error occurred while processing your request.\",\"status\":500,\"traceId\":\"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01\"}\n",
			[]string{"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}},
		{"a quoted value in an error body", "ERROR: (InvalidParameterValue) The request is invalid.\n{\n  \"error\": {\n    \"code\": \"InvalidParameterValue\",\n" +
			"    \"message\": \"Elastic pool 'ep-shop-stg-q7x2' and sku 'GP_Gen5' combination is invalid.\"\n  }\n}\n",
			[]string{"ep-shop-stg-q7x2"}},
		{"the Dart analyzer", "Analyzing mobile...\n\n   info • Unused import • lib/src/app.dart:3:8 • unused_import\n" +
			"  error • The method 'onTokenRefresh' isn't defined for the type 'FirebaseMessaging' • lib/src/push/push_service.dart:21:23 • undefined_method\n\n2 issues found.\n",
			[]string{"lib/src/push/push_service.dart:21:23", "The method 'onTokenRefresh' isn't defined"}},
		{"Rails' tagged log", "[5f0c1a2e-77d1-4b8e-9a41-0c2d9e1f3b6a] Completed 500 Internal Server Error in 12ms\n" +
			"[5f0c1a2e-77d1-4b8e-9a41-0c2d9e1f3b6a] ActiveRecord::RecordNotUnique (PG::UniqueViolation: duplicate key value violates \"idx_users_email\"):\n" +
			"[5f0c1a2e-77d1-4b8e-9a41-0c2d9e1f3b6a] app/models/user.rb:31:in 'User#register'\n",
			[]string{"app/models/user.rb:31", "ActiveRecord::RecordNotUnique", "PG::UniqueViolation"}},
		{"a scoped Ruby error", "  1) Signup rejects a taken email\n     Failure/Error: post :create\n\n     Mysql2::Error:\n" +
			"       Mysql2::Error: Duplicate entry 'usr_8kq2m' for key 'users.index_users_on_handle'\n",
			[]string{"usr_8kq2m"}},
		{"logback's packaging data", "java.lang.IllegalStateException: rate missing\n" +
			"\tat com.acme.fx.RateBook.lookup(RateBook.kt:77) ~[main/:na]\n" +
			"\tat org.springframework.web.servlet.FrameworkServlet.service(FrameworkServlet.java:885) ~[spring-webmvc-6.1.14.jar!/:6.1.14]\n",
			[]string{"RateBook.kt:77"}},
		{"an Elixir exit", "  1) test sends the receipt (Mailer.ReceiptTest)\n" +
			"     ** (exit) exited in: GenServer.call(Mailer.Queue, {:push, \"rcpt_4kd9q2\"}, 5000)\n",
			[]string{"rcpt_4kd9q2"}},
		{"an error body", "HTTP/1.1 500\ncontent-type: application/json\n\n" +
			"{\"timestamp\":\"2025-03-03T09:12:44Z\",\"status\":500,\"error\":\"Internal Server Error\",\"code\":\"PAY-4410\",\"traceId\":\"8c1f0e2d9b7a4c3e\"}\n",
			[]string{"PAY-4410", "8c1f0e2d9b7a4c3e"}},
		{"what an assertion compared", "  1) test signs the payload (Hooks.SignerTest)\n     test/hooks/signer_test.exs:14\n" +
			"     Assertion with == failed\n     code:  assert sig == expected\n" +
			"     left:  \"sha256=9f2c4e1a7b3d5f60\"\n     right: \"sha256=1e0d9c8b7a6f5e4d\"\n",
			[]string{"9f2c4e1a7b3d5f60"}},
		{"PHPUnit and a PHP trace", "There was 1 error:\n\n1) Tests\\Unit\\RateTableTest::test_rounds_half_up\n" +
			"Illuminate\\Database\\QueryException: SQLSTATE[HY000]: General error: 1 no such table: rates\n\n" +
			"/srv/shop/vendor/laravel/framework/src/Illuminate/Database/Connection.php:825\n" +
			"#0 /srv/shop/vendor/laravel/framework/src/Illuminate/Database/Connection.php(779): Illuminate\\Database\\Connection->runQueryCallback()\n" +
			"#1 /srv/shop/app/Services/RateTable.php(41): Illuminate\\Database\\Query\\Builder->get()\n#2 {main}\n",
			[]string{"SQLSTATE[HY000]", "/srv/shop/app/Services/RateTable.php(41)", "1) Tests\\Unit\\RateTableTest::test_rounds_half_up"}},
		{"Monolog's log", "[2025-02-11 08:14:02] production.INFO: queue worker started\n" +
			"[2025-02-11 08:14:09] production.ERROR: SQLSTATE[40001]: Serialization failure: 1213 Deadlock found {\"job\":\"job_7Qm2xk9d\"}\n",
			[]string{"SQLSTATE[40001]", "job_7Qm2xk9d"}},
		{"a driver's error line", "migrating 2025_01_09_add_unique_sku\n\n  SQLSTATE[23000]: Integrity constraint violation: 1062 Duplicate entry 'SKU-77812' for key 'items_sku_unique'\n",
			[]string{"SQLSTATE[23000]: Integrity constraint violation"}},
		{"an error class with its code", "Error: command failed\nMongoServerError[CursorNotFound]: cursor id 7712 not found\n",
			[]string{"MongoServerError[CursorNotFound]"}},
		{"gcc's note under an error", "src/quote.cc:41:17: error: no matching function for call to 'scale(double)'\n" +
			"include/pricing/money.h:108:37: note: candidate: 'Money Money::scale(Ratio) const'\n",
			[]string{"include/pricing/money.h:108:37"}},
	} {
		t.Run(c.name, func(t *testing.T) { checkFailureRank(t, c.output, c.failing, nil) })
	}
}

// TestDotNetSiteThroughADigest checks that a .NET frame's site keeps its
// line as .NET prints it (Quote.cs:line 57), in a cleared result's digest
// and in the ledger that reads the digest again.
func TestDotNetSiteThroughADigest(t *testing.T) {
	out := "  Failed Quire.Pricing.Tests.QuoteTests.RoundsHalfEven [12 ms]\n  Error Message:\n   Assert.Equal() Failure: Expected: 1050, Actual: 1049\n" +
		"  Stack Trace:\n     at Quire.Pricing.Quote.Round(Decimal d) in /src/Pricing/Quote.cs:line 88\n" +
		"     at Quire.Pricing.Tests.QuoteTests.RoundsHalfEven() in /src/Pricing.Tests/QuoteTests.cs:line 57\n"
	d := checkpoint.Digest(out, 400, 800)
	for _, want := range []string{"/src/Pricing/Quote.cs:line 88", "/src/Pricing.Tests/QuoteTests.cs:line 57"} {
		if !strings.Contains(d, want) {
			t.Errorf("the digest lacks %q:\n%s", want, d)
		}
	}
	cleared := "[Tool output cleared — content was processed in earlier turns]\n" + d
	checkFailureRank(t, cleared, []string{"/src/Pricing/Quote.cs:line 88", "/src/Pricing.Tests/QuoteTests.cs:line 57"}, nil)
}

// checkFailureRank checks the ledger of a span where the user names a
// path and a command prints output: each of failing (an identifier, or
// a part of an error line) ranks before the user's path, as failure
// evidence does, and none of not does.
func checkFailureRank(t *testing.T, output string, failing, not []string) {
	t.Helper()
	const anchorPath = "deploy/overlays/prod/kustomization.yaml"
	span := append([]checkpoint.Entry{user("Fix it; the settings stay in " + anchorPath + ".")}, run("f", "make check", output)...)
	ids := checkpoint.Ledger(span, "")
	pos := map[string]int{}
	for i, id := range ids {
		if _, ok := pos[id.Text]; !ok {
			pos[id.Text] = i
		}
	}
	anchor, ok := pos[anchorPath]
	if !ok {
		t.Fatalf("the user's path is not in the ledger: %v", ids)
	}
	for _, w := range failing {
		i, found := pos[w]
		for _, id := range ids {
			if !found && id.Kind == checkpoint.KindError && strings.Contains(id.Text, w) {
				i, found = pos[id.Text], true
			}
		}
		if !found || i > anchor {
			t.Errorf("%s at %d (listed: %v), after the user's path at %d: %v", w, i, found, anchor, ids)
		}
	}
	for _, w := range not {
		if i, found := pos[w]; found && i < anchor {
			t.Errorf("%s at %d, ranked as failure evidence, before the user's path at %d: %v", w, i, anchor, ids)
		}
	}
}
