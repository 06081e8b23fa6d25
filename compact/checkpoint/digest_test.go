package checkpoint_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/strata-memory/strata/compact/checkpoint"
)

// A failing output's digest spends its room on the failure first: the
// first error line, what the error lines and stack frames name (the
// failing tests, the file:line sites, codes, URLs and ids), then the
// other error lines, before the paths and ids of the passing part.
func TestDigestKeepsFailureEvidence(t *testing.T) {
	var b strings.Builder
	b.WriteString("$ go test ./... -v\n")
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&b, "=== RUN   TestCatalog%02d\n--- PASS: TestCatalog%02d (0.01s)\n", i, i)
		fmt.Fprintf(&b, "    fixtures: internal/catalog/testdata/item_%02d.json loaded\n", i)
	}
	b.WriteString("ok  \tgithub.com/acme/shop/internal/catalog\t0.412s\n")
	b.WriteString("=== RUN   TestRouteMatch\n")
	b.WriteString("panic: runtime error: index out of range [4] with length 4\n\n")
	b.WriteString("goroutine 7 [running]:\n")
	b.WriteString("github.com/acme/shop/internal/router.(*Table).match(0xc000112000, {0xc00001a0c0, 0x9})\n")
	b.WriteString("\t/home/ci/shop/internal/router/table.go:118 +0x1d4\n")
	b.WriteString("github.com/acme/shop/internal/router.TestRouteMatch(0xc000182340)\n")
	b.WriteString("\t/home/ci/shop/internal/router/table_test.go:42 +0x65\n")
	b.WriteString("FAIL\tgithub.com/acme/shop/internal/router\t0.031s\n")
	for i := 0; i < 30; i++ {
		fmt.Fprintf(&b, "2026-03-02T10:%02d:11Z ERROR upstream https://inventory.internal:8443/v1/stock failed: dial tcp 10.0.4.%d:8443: connect: ECONNREFUSED req_%07d\n", i, i, 4411000+i)
	}
	b.WriteString("--- FAIL: TestCheckoutTotals (0.00s)\n")
	b.WriteString("    checkout_test.go:77: total = 1999, want 2099 (code E4012)\n")
	b.WriteString("FAIL\tgithub.com/acme/shop/internal/checkout\t0.020s\n")
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&b, "ok  \tgithub.com/acme/shop/internal/pkg%02d\t0.0%02ds\n", i, i)
	}
	out := b.String()

	d := checkpoint.Digest(out, 400, 800)
	if !strings.HasPrefix(d, checkpoint.DigestPrefix) || strings.Contains(d, "\n") {
		t.Fatalf("not one digest line: %q", d)
	}
	if n := utf8.RuneCountInString(d); n > 800 {
		t.Fatalf("the digest has %d characters, over 800: %s", n, d)
	}
	for _, want := range []string{
		"panic: runtime error: index out of range [4] with length 4",
		"/home/ci/shop/internal/router/table.go:118",
		"/home/ci/shop/internal/router/table_test.go:42",
		"https://inventory.internal:8443/v1/stock",
		"ECONNREFUSED",
		"TestCheckoutTotals",
		"checkout_test.go:77",
		"E4012",
	} {
		if !strings.Contains(d, want) {
			t.Errorf("the digest lacks %q:\n%s", want, d)
		}
	}
	// The repeated error log line is listed once, not once per request.
	if n := strings.Count(d, "ERROR upstream"); n > 1 {
		t.Errorf("the repeated error line is listed %d times:\n%s", n, d)
	}

	// An output without an error line keeps the smaller limit.
	pass := strings.ReplaceAll(strings.ReplaceAll(out[:strings.Index(out, "=== RUN   TestRouteMatch")], "FAIL", "ok"), "failed", "done")
	p := checkpoint.Digest(pass, 400, 800)
	if p == "" || utf8.RuneCountInString(p) > 400 {
		t.Fatalf("a passing output's digest has %d characters (limit 400): %s", utf8.RuneCountInString(p), p)
	}
	if !strings.Contains(p, "internal/catalog/testdata/item_00.json") {
		t.Errorf("the passing output's digest lacks its first path: %s", p)
	}
}

// Whatever the output, the digest is one line within its limit, and a
// failing output's first error line leads it.
func TestDigestBounds(t *testing.T) {
	for _, out := range []string{
		"",
		"plain words only\n",
		"Error: connect ECONNREFUSED 127.0.0.1:5432\n" + strings.Repeat("at Object.<anonymous> (/srv/app/src/db.js:12:5)\n", 50),
		strings.Repeat("FAILED tests/test_api.py::test_refund_roundtrip - AssertionError: 404 != 200; see https://x.example.com/a\n", 30),
		strings.Repeat("/a/very/long/path/"+strings.Repeat("segment/", 40)+"file.go\n", 10),
	} {
		d := checkpoint.Digest(out, 400, 800)
		if d == "" {
			continue
		}
		if strings.Contains(d, "\n") || utf8.RuneCountInString(d) > 800 {
			t.Errorf("digest of %.40q: %d characters: %q", out, utf8.RuneCountInString(d), d)
		}
		if strings.HasPrefix(out, "Error: connect") && !strings.HasPrefix(d, checkpoint.DigestPrefix+"Error: connect ECONNREFUSED 127.0.0.1:5432") {
			t.Errorf("the first error line does not lead: %q", d)
		}
	}
}

// junitFailure is a JUnit 5 failure as Gradle prints it: the frames of
// JUnit, the JDK and Spring around the two of the project, and a cause.
const junitFailure = `> Task :ledger:test

InvoiceServiceTest > closesPeriodOnce() FAILED
    org.opentest4j.AssertionFailedError: expected: <2> but was: <3>
        at app//org.junit.jupiter.api.AssertionFailureBuilder.build(AssertionFailureBuilder.java:151)
        at app//org.junit.jupiter.api.AssertionFailureBuilder.buildAndThrow(AssertionFailureBuilder.java:132)
        at app//org.junit.jupiter.api.AssertEquals.failNotEqual(AssertEquals.java:197)
        at app//org.junit.jupiter.api.AssertEquals.assertEquals(AssertEquals.java:150)
        at app//org.junit.jupiter.api.Assertions.assertEquals(Assertions.java:560)
        at app//com.quire.ledger.period.PeriodCloser.close(PeriodCloser.kt:88)
        at app//com.quire.ledger.InvoiceServiceTest.closesPeriodOnce(InvoiceServiceTest.kt:57)
        at java.base/jdk.internal.reflect.DirectMethodHandleAccessor.invoke(DirectMethodHandleAccessor.java:103)
        at java.base/java.lang.reflect.Method.invoke(Method.java:580)
        at app//org.junit.platform.commons.util.ReflectionUtils.invokeMethod(ReflectionUtils.java:728)
        at app//org.junit.jupiter.engine.execution.MethodInvocation.proceed(MethodInvocation.java:60)
        at app//org.springframework.transaction.support.TransactionTemplate.execute(TransactionTemplate.java:140)

    Caused by: java.sql.SQLTransientConnectionException: HikariPool-1 - Connection is not available, request timed out after 30004ms.
        at app//com.zaxxer.hikari.pool.HikariPool.createTimeoutException(HikariPool.java:686)
        at app//com.zaxxer.hikari.pool.HikariPool.getConnection(HikariPool.java:179)
        at app//com.quire.ledger.store.LedgerStore.connect(LedgerStore.kt:31)

12 tests completed, 1 failed
`

// TestDigestProjectFramesFirst checks that a cleared JVM failure keeps
// the project's frame sites, and that the frames of the JDK and of
// libraries (JUnit, Spring, HikariCP) do not take their room.
func TestDigestProjectFramesFirst(t *testing.T) {
	d := checkpoint.Digest(junitFailure, 400, 800)
	for _, want := range []string{"PeriodCloser.kt:88", "InvoiceServiceTest.kt:57", "LedgerStore.kt:31", "HikariPool-1"} {
		if !strings.Contains(d, want) {
			t.Errorf("the digest lacks %q:\n%s", want, d)
		}
	}
	for _, lib := range []string{"AssertionFailureBuilder.java:151", "org.junit.jupiter.api.Assertions.assertEquals", "Method.java:580"} {
		if i, j := strings.Index(d, lib), strings.Index(d, "LedgerStore.kt:31"); i >= 0 && i < j {
			t.Errorf("the library frame %q before the project's last site:\n%s", lib, d)
		}
	}
	// In the ledger, the project's sites are failure evidence, ranked
	// before what the user names; the library frames' sites after it.
	checkFailureRank(t, junitFailure, []string{"PeriodCloser.kt:88", "InvoiceServiceTest.kt:57", "LedgerStore.kt:31"},
		[]string{"AssertionFailureBuilder.java:151", "Method.java:580", "HikariPool.java:686"})
}

// TestDigestFrameNoise checks that what a frame prints besides its
// function and site (a sanitizer frame's number and parameter types,
// logback's packaging data) takes no room in a digest, and that the
// runtime's frames (libc, the sanitizer's own) come after the project's.
func TestDigestFrameNoise(t *testing.T) {
	asan := "==812==ERROR: AddressSanitizer: heap-use-after-free on address 0x602000000010 at pc 0x55d0c3a2b1c4\n" +
		"READ of size 8 at 0x602000000010 thread T0\n" +
		"    #0 0x55d0c3a2b1c3 in pricing::Book::rate(std::basic_string_view<char, std::char_traits<char> >) const /src/pricing/src/book.cc:52:9\n" +
		"    #1 0x55d0c3a2a0f1 in BookTest_RatesAfterReload_Test::TestBody() /src/pricing/tests/book_test.cc:88:3\n" +
		"    #2 0x7f2b1c0d in __libc_start_call_main ../sysdeps/nptl/libc_start_call_main.h:58\n" +
		"    #3 0x7f2b1c0e (/src/pricing/build/tests/pricing_tests+0x2d81a3)\n" +
		"freed by thread T0 here:\n" +
		"    #0 0x7f51c750 in operator delete(void*) ../../../../src/libsanitizer/asan/asan_new_delete.cpp:164\n" +
		"    #1 0x55d0c3a29e10 in pricing::Book::reload() /src/pricing/src/book.cc:140:5\n"
	// Rooms under the outputs' lengths: an output that fits is kept
	// whole (TestDigestWholeWhenItFits).
	d := checkpoint.Digest(asan, 300, 600)
	for _, want := range []string{"/src/pricing/src/book.cc:52:9", "BookTest_RatesAfterReload_Test::TestBody()", "/src/pricing/src/book.cc:140:5"} {
		if !strings.Contains(d, want) {
			t.Errorf("the digest lacks %q:\n%s", want, d)
		}
	}
	for _, noise := range []string{"#1", "std::char_traits", "__libc_start_call_main", "pricing_tests+"} {
		if strings.Contains(d, noise) {
			t.Errorf("the digest lists %q:\n%s", noise, d)
		}
	}
	for _, lib := range []string{"libc_start_call_main.h:58", "asan_new_delete.cpp:164"} {
		if i, j := strings.Index(d, lib), strings.Index(d, "/src/pricing/src/book.cc:140:5"); i >= 0 && i < j {
			t.Errorf("the runtime's frame %q before the project's last site:\n%s", lib, d)
		}
	}

	jvm := "java.lang.IllegalStateException: rate missing\n" +
		"\tat com.acme.fx.RateBook.lookup(RateBook.kt:77) ~[main/:na]\n" +
		"\tat org.springframework.web.servlet.FrameworkServlet.service(FrameworkServlet.java:885) ~[spring-webmvc-6.1.14.jar!/:6.1.14]\n" +
		"\tat jakarta.servlet.http.HttpServlet.service(HttpServlet.java:658) ~[tomcat-embed-core-10.1.31.jar!/:na]\n" +
		"\tat com.acme.fx.RateController.get(RateController.kt:31) ~[main/:na]\n"
	d = checkpoint.Digest(jvm, 300, 360)
	if !strings.Contains(d, "RateBook.kt:77") || !strings.Contains(d, "RateController.kt:31") {
		t.Errorf("the digest lacks the project's frames:\n%s", d)
	}
	for _, noise := range []string{"spring-webmvc", "tomcat-embed-core", "main/:na"} {
		if strings.Contains(d, noise) {
			t.Errorf("the digest lists %q:\n%s", noise, d)
		}
	}
	for _, lib := range []string{"FrameworkServlet.java:885", "HttpServlet.java:658"} {
		if i, j := strings.Index(d, lib), strings.Index(d, "RateController.kt:31"); i >= 0 && i < j {
			t.Errorf("the library frame %q before the project's last site:\n%s", lib, d)
		}
	}
}

// TestRepeatedLogErrors checks that of a log's error lines that differ
// only in their ids and numbers, the first ones' identifiers are
// failure evidence and the repeats' are not.
func TestRepeatedLogErrors(t *testing.T) {
	ids := []string{"7c1e0f55-0a4b-4c7e-9d51-2b8e6f3a9c10", "0d9b2f71-5e3a-4b8c-a6d2-91f0c4e7b853", "e4a8c6b2-1f3d-4a5e-b7c9-0d2f4e6a8b1c",
		"5b7d9f1a-3c5e-4a7b-9d1f-3a5c7e9b1d3f", "a1c3e5b7-9d1f-4b3c-8e5a-7c9e1b3d5f7a"}
	var b strings.Builder
	for i, id := range ids {
		fmt.Fprintf(&b, "2025-03-03T09:%02d:11.482Z ERROR relay: insert order %s (attempt %d/5): duplicate key value violates unique constraint \"orders_ref_key\"\n", 10+i, id, 2+i%3)
		fmt.Fprintf(&b, "2025-03-03T09:%02d:12.007Z INFO relay: backing off 2s\n", 10+i)
	}
	checkFailureRank(t, b.String(), ids[:1], ids[2:])
}

// TestDigestPassingSitesLast checks that in a failing run the file:line
// of the tests a runner says passed do not take the room of the failure's
// sites.
func TestDigestPassingSitesLast(t *testing.T) {
	var b strings.Builder
	for i := range 40 {
		fmt.Fprintf(&b, "  ✓  %d [chromium] › e2e/checkout_%02d.spec.ts:%d:3 › checkout › pays with a saved card (1.%ds)\n", i+1, i, 10+i, i%10)
	}
	b.WriteString("  ✘  41 [chromium] › e2e/refund.spec.ts:88:3 › refund › refunds a split order (30.2s)\n\n" +
		"  1) [chromium] › e2e/refund.spec.ts:88:3 › refund › refunds a split order\n\n" +
		"    Error: Timed out 5000ms waiting for expect(locator).toBeVisible()\n\n" +
		"        at /srv/web/e2e/refund.spec.ts:97:41\n\n  1 failed\n  40 passed (1.2m)\n")
	d := checkpoint.Digest(b.String(), 300, 800)
	if !strings.Contains(d, "/srv/web/e2e/refund.spec.ts:97:41") {
		t.Errorf("the digest lacks the failure's site:\n%s", d)
	}
	if i, j := strings.Index(d, "checkout_00.spec.ts"), strings.Index(d, "refund.spec.ts:97:41"); i >= 0 && i < j {
		t.Errorf("a passing test's site before the failure's:\n%s", d)
	}
}

// TestDigestPrettyErrorBody checks a pretty-printed JSON error body (a
// search engine's): the line that names the error's type is an error
// line, a generated id under it (the node that failed) is what the error
// names, and it comes before the identifiers of the request's lines.
func TestDigestPrettyErrorBody(t *testing.T) {
	var b strings.Builder
	b.WriteString("GET /orders-2025.03/_search?q=status:late\n")
	for i := range 12 {
		fmt.Fprintf(&b, "# shard orders-2025.0%d-r%d on 10.4.0.%d:9300\n", i%9+1, i, i+10)
	}
	b.WriteString("{\n  \"error\" : {\n    \"type\" : \"index_not_found_exception\",\n" +
		"    \"reason\" : \"no such index [orders-2025.03]\",\n    \"shard\" : \"3\",\n" +
		"    \"node\" : \"Zk4qP0sT2uV6wX8yA1bC3d\"\n  },\n  \"status\" : 404\n}\n")
	d := checkpoint.Digest(b.String(), 300, 300)
	if !strings.Contains(d, "index_not_found_exception") || !strings.Contains(d, "Zk4qP0sT2uV6wX8yA1bC3d") {
		t.Errorf("the digest lacks the error's type or the node it names:\n%s", d)
	}
}

// TestDigestLogRecordsApart checks that in a log, the records after an
// error line are records of their own, not its report: what they name
// does not rank as what the failure names.
func TestDigestLogRecordsApart(t *testing.T) {
	out := "[2025-01-02 10:00:00] app.ERROR: payout po_Aa11Bb22 failed: card declined\n" +
		"[2025-01-02 10:00:01] app.INFO: synced acct_91XkQm2 in 212ms\n" +
		"[2025-01-02 10:00:02] app.INFO: synced acct_7Lp0Zr4 in 198ms\n" +
		"see docs/runbooks/payouts.md\n"
	d := checkpoint.Digest(out, 150, 180)
	i, j := strings.Index(d, "docs/runbooks/payouts.md"), strings.Index(d, "acct_91XkQm2")
	if !strings.Contains(d, "po_Aa11Bb22") || i < 0 || j >= 0 && j < i {
		t.Errorf("a later record's id ranks as the failure's, or the failure's id is missing:\n%s", d)
	}
}

// TestDigestFailedByItsTool checks an output its tool reported as failed
// in a format no rule knows: the line that says, in words, that it
// failed is its error line, and the failure's id is kept ahead of the
// paths the output listed.
func TestDigestFailedByItsTool(t *testing.T) {
	var b strings.Builder
	for i := range 30 {
		fmt.Fprintf(&b, "copied shards/s-%02d/part-%04d.dat\n", i, i*7)
	}
	b.WriteString("shard s-31 copy failed: checksum differs at blk_7f3a9\n")
	out := b.String()
	if d := checkpoint.DigestFailed(out, 400, 800); !strings.Contains(d, "blk_7f3a9") || !strings.Contains(d, "copy failed") {
		t.Errorf("the failed output's digest lacks its failure:\n%s", d)
	}
	if d := checkpoint.Digest(out, 400, 800); strings.Contains(d, "copy failed") {
		t.Errorf("an output nothing marks as failed took a worded line as its error line:\n%s", d)
	}
}

// TestDigestExitStatus checks that an output that ends with its exit
// status, in the ways harnesses write one, is digested as a failed one
// when the status is not zero, and that a JSON wrapper with the status
// (Codex's) is digested as the text it wraps.
func TestDigestExitStatus(t *testing.T) {
	var b strings.Builder
	for i := range 30 {
		fmt.Fprintf(&b, "copied shards/s-%02d/part-%04d.dat\n", i, i*7)
	}
	b.WriteString("shard s-31 copy failed: checksum differs at blk_7f3a9\n")
	out := b.String()
	for _, c := range []struct {
		status string
		failed bool
	}{
		{"[process exited with status 2]", true}, {"Exit status: 1", true}, {`{"exit_code": 1, "duration_ms": 812}`, true},
		{`{"exitCode":137}`, true}, {"exit_code=1", true},
		{"Exit status: 0", false}, {`{"exit_code": 0}`, false}, {"exit_code=0", false},
	} {
		d := checkpoint.Digest(out+c.status+"\n", 400, 800)
		if strings.Contains(d, "copy failed") != c.failed {
			t.Errorf("%q: digested as failed %v, want %v:\n%s", c.status, !c.failed, c.failed, d)
		}
	}
	for _, code := range []int{0, 1} {
		wrapped, _ := json.Marshal(map[string]any{"output": out, "metadata": map[string]any{"exit_code": code, "duration_seconds": 0.4}})
		d := checkpoint.Digest(string(wrapped), 400, 800)
		if !strings.Contains(d, "shards/s-00/part-0000.dat") || strings.Contains(d, `\n`) {
			t.Errorf("exit_code %d: the wrapper's text was not digested as text:\n%s", code, d)
		}
		if strings.Contains(d, "copy failed") != (code != 0) {
			t.Errorf("exit_code %d: digested as failed %v:\n%s", code, code == 0, d)
		}
	}
	// In the ledger, a wrapped failed output's failure is evidence.
	wrapped, _ := json.Marshal(map[string]any{"output": "uploading 14 files\nupload of css/site.css stopped: bucket locked by lease lse_91kq2 (request failed after 3 tries)\n",
		"metadata": map[string]any{"exit_code": 1}})
	checkFailureRank(t, string(wrapped), []string{"lse_91kq2"}, nil)
}

// TestDigestErrorRecordsAnyFormat checks that an output no tool reported
// as failed, with no exit status, is digested as failing when a line of
// it is a logger's record at error level (whatever the prefix before the
// level) or names an exception past its start, and that the values such
// a line quotes and the cause a long one ends with are kept.
func TestDigestErrorRecordsAnyFormat(t *testing.T) {
	var filler strings.Builder
	for i := range 40 {
		fmt.Fprintf(&filler, "24/11/05 10:48:%02d INFO BlockManager: stored block rdd_%d_0 in memory (estimated size 41.2 KiB)\n", i, i)
	}
	for _, c := range []struct {
		name, line string
		want       []string
	}{
		{"a level after a short date", "24/11/05 10:49:02 ERROR TaskSetManager: Task 3 in stage 2.0 failed 4 times; aborting job",
			[]string{"ERROR TaskSetManager: Task 3 in stage 2.0 failed 4 times"}},
		{"a level after a time and a source in braces", "[2024-11-05T10:49:02.129+0000] {loader.py:84} ERROR - load of batch b-7731 stopped",
			[]string{"{loader.py:84} ERROR - load of batch b-7731 stopped"}},
		{"a level in brackets, lower case", "[error] (ledger / Compile / compileIncremental) Compilation failed",
			[]string{"[error] (ledger / Compile / compileIncremental) Compilation failed"}},
		{"an exception past the start", "Code: 81. DB::Exception: Database ledger_q4 does not exist. (UNKNOWN_DATABASE)",
			[]string{"Code: 81. DB::Exception: Database ledger_q4 does not exist"}},
		{"a .NET exception with its code", `Npgsql.PostgresException (0x80004005): 23505: duplicate key value violates unique constraint "ix_invoice_number"`,
			[]string{"Npgsql.PostgresException (0x80004005): 23505: duplicate key value", "ix_invoice_number"}},
		{"a line that opens with a failure word", "Error in query string: Error processing job 'ledger-prod:job_7f3a9c': Unrecognized name: tenant at [1:73]",
			[]string{"Error in query string: Error processing job 'ledger-prod:job_7f3a9c'", "ledger-prod:job_7f3a9c"}},
		{"a TAP failure", "not ok 14 - rounds a refund of 0.005 EUR half up (ledger_rounding.bats:41)",
			[]string{"not ok 14 - rounds a refund of 0.005 EUR half up"}},
		{"a quoted name", `psql:migrate.sql:12: ERROR:  column "invoice_total" does not exist`, []string{"invoice_total"}},
		{"a level in angle brackets, short", "[00:00:04.102,330] <err> ledger_rtc: drift of 913 ms past bound on core 1",
			[]string{"<err> ledger_rtc: drift of 913 ms past bound on core 1"}},
		{"a level past a capture's source", "12:04:55.0031 [INFO] uart1: [00:00:04.102,330] <err> ledger_rtc: drift of 913 ms past bound on core 1",
			[]string{"uart1: [00:00:04.102,330] <err> ledger_rtc: drift of 913 ms"}},
		{"a level after a journal's date, host and unit", "Nov 05 11:40:48 ledger-7 ledgerd[912]: ERROR payout batch pb_77x stalled",
			[]string{"ERROR payout batch pb_77x stalled"}},
		{"a runner's verdict last", "settles a refund twice ... FAILED (52ms)", []string{"settles a refund twice ... FAILED"}},
		{"a verdict after a suite's arrow", "%%% ledger_SUITE ==> refund_twice: FAILED", []string{"ledger_SUITE ==> refund_twice: FAILED"}},
		{"a verdict after a name, then a share", "tests/test_refunds.py::test_twice FAILED [ 50%]", []string{"tests/test_refunds.py::test_twice FAILED"}},
		{"a thing that failed, named first", "Assertion failed at ledger/round.c:88: round_half_up: (total == 4 is false)",
			[]string{"Assertion failed at ledger/round.c:88: round_half_up"}},
		{"a FAIL with a dash", " FAIL - test_refund_twice in 0.024 seconds", []string{"FAIL - test_refund_twice"}},
		{"a JSON status that says it failed", `  "provisioningState": "Failed",`, []string{`"provisioningState": "Failed"`}},
		{"a diagnostic in a box", "│ Error: creating queue (ledger-retries): QueueDeletedRecently: wait 60 seconds", []string{"Error: creating queue (ledger-retries)"}},
		{"an id glued to its name", "Error Number:2627,State:1,Class:14\nClientConnectionId:6f1c0e2a-93b4-4c1e-8d2f-0a7b5e9c3d11",
			[]string{"6f1c0e2a-93b4-4c1e-8d2f-0a7b5e9c3d11"}},
		{"the cause a long line ends with", "Exception in thread \"main\" com.quire.config.ConfigError: merge of /srv/ledger/conf/app.conf: " +
			"1,reference.conf @ jar:file:/srv/ledger/lib/ledger-core-2.4.1.jar!/reference.conf: 1: No setting found for key 'billing.retry.max-wait'",
			[]string{"No setting found for key 'billing.retry.max-wait'", "billing.retry.max-wait"}},
	} {
		d := checkpoint.Digest(filler.String()+c.line+"\n"+filler.String(), 400, 800)
		for _, w := range c.want {
			if !strings.Contains(d, w) {
				t.Errorf("%s: the digest lost %q:\n%s", c.name, w, d)
			}
		}
	}
	// A count of errors, a level word in prose and a word in capitals
	// that is no level are not error records.
	for _, line := range []string{"17:03:22  Done. PASS=4 WARN=0 ERROR=0 SKIP=0 TOTAL=4", "[info] Error handling specs: 12 passed",
		"2024-11-05 10:49:02 INFO ledger: the ERROR column stays empty", "see the Error: section of the manual", "[error]    |      ^^^^", "Failed: 0, Passed: 12",
		`10.4.7.21 - - [05/Nov/2024:10:49:02 +0000] "GET /api/v2/refunds HTTP/1.1" 200 512 "-" "ledger-cli/2.4.1"`,
		"Summary: 14 passed, 0 ERROR", "and then the nightly build FAILED", "Build succeeded; failed builds are retried",
		`  "provisioningState": "Succeeded",`, `  "lastState": "failedOver",`, "log_level: ERROR", "  minSeverity: ERROR"} {
		d := checkpoint.Digest(filler.String()+line+"\n", 400, 800)
		if strings.Contains(d, line[:min(len(line), 40)]) {
			t.Errorf("%q was taken for an error record:\n%s", line, d)
		}
	}
}

// TestDigestWholeWhenItFits checks that a failing output whose lines fit
// the failing digest's room is kept whole, each line once, and that a
// passing one is not: a short failure's every word may name it.
func TestDigestWholeWhenItFits(t *testing.T) {
	failing := "scheduling ledger-sweep: 1 placement failed\n" +
		"  Task Group \"sweep\" (failed to place 1 allocation):\n" +
		"    * Constraint \"${meta.zone} = fra2-dc4-q7z\": 3 nodes excluded by filter\n" +
		"    * Constraint \"${meta.zone} = fra2-dc4-q7z\": 3 nodes excluded by filter\n" +
		"[process exited with code 2]\n"
	d := checkpoint.Digest(failing, 400, 800)
	want := checkpoint.DigestPrefix + "scheduling ledger-sweep: 1 placement failed; Task Group \"sweep\" (failed to place 1 allocation):; " +
		"* Constraint \"${meta.zone} = fra2-dc4-q7z\": 3 nodes excluded by filter; [process exited with code 2]"
	if d != want {
		t.Errorf("the failing output is not kept whole:\n got %s\nwant %s", d, want)
	}
	if d := checkpoint.Digest(failing, 120, 120); strings.Contains(d, "3 nodes excluded") {
		t.Errorf("an output over the room is kept whole:\n%s", d)
	}
	passing := "synced 3 ledgers from fra2-dc4-q7z in 212 ms\nall 3 ledgers balanced\n"
	if d := checkpoint.Digest(passing, 400, 800); strings.Contains(d, "balanced") {
		t.Errorf("a passing output is kept whole:\n%s", d)
	}
}

// TestDigestKeepsTheRestOfALongErrorLine checks that what the digest's
// cut of a long error line leaves out is kept after the error lines,
// from the start of the word the cut split: a record's last field, a
// compiler's site past a long path.
func TestDigestKeepsTheRestOfALongErrorLine(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{`Nov 05 11:40:48 ledger-7 ledgerd[912]: level=error msg="spool replay failed" segment=/var/lib/ledgerd/spool/8gse.wal err="crc mismatch at offset 277776" tag=LDG-5116-9139`,
			"LDG-5116-9139"},
		{"[ERROR] /srv/build/ledger/core/src/main/java/com/quire/ledger/core/settlement/SettlementWindow.java:[41,18] method close cannot be applied to given types;",
			"SettlementWindow.java:[41,18]"},
		{"Microsoft.Data.SqlClient.SqlException (0x80131904): The CREATE UNIQUE INDEX statement terminated because a duplicate key was found for " +
			"the object name 'dbo.Payouts' and the index name 'IX_Payouts_Batch'. The duplicate key value is (9098, 2024-11-24 20:00:00.0000000).",
			"(9098, 2024-11-24 20:00:00.0000000)"},
	} {
		d := checkpoint.Digest(strings.Repeat("compiling module ledger-core\n", 30)+c.line+"\n"+strings.Repeat("compiling module ledger-api\n", 30), 400, 800)
		if !strings.Contains(d, c.want) {
			t.Errorf("the digest lost %q:\n%s", c.want, d)
		}
	}
}
