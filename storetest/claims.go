package storetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/strata-memory/strata"
)

// claim calls s.Claim and fails the test on error.
func claim(t *testing.T, s strata.Store, key, holder string, now, until time.Time) bool {
	t.Helper()
	ok, err := s.Claim(ctx(t), key, holder, now, until)
	if err != nil {
		t.Fatalf("Claim(%q, %q): %v", key, holder, err)
	}
	return ok
}

// testClaims: a free key is taken; another holder is refused while the
// claim lasts (until is after now) and takes it over from the instant it
// ends; the holder renews its own, also to an earlier end; keys are exact
// strings and independent.
func testClaims(t *testing.T, s strata.Store) {
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	const key = `summary "ns" "conv" "n1"`
	if !claim(t, s, key, "a", t0, t0.Add(time.Minute)) {
		t.Fatal("a free key was refused")
	}
	if claim(t, s, key, "b", t0.Add(30*time.Second), t0.Add(2*time.Minute)) {
		t.Fatal("b took a's claim before it ended")
	}
	// a renews past its first end; b is refused past that first end too.
	if !claim(t, s, key, "a", t0.Add(50*time.Second), t0.Add(3*time.Minute)) {
		t.Fatal("a could not renew its own claim")
	}
	if claim(t, s, key, "b", t0.Add(2*time.Minute), t0.Add(4*time.Minute)) {
		t.Fatal("b took a's claim after a renewed it")
	}
	// Renewing may also move the end earlier.
	if !claim(t, s, key, "a", t0.Add(2*time.Minute), t0.Add(150*time.Second)) {
		t.Fatal("a could not shorten its own claim")
	}
	if claim(t, s, key, "b", t0.Add(149*time.Second), t0.Add(5*time.Minute)) {
		t.Fatal("b took a's claim one second before its (shortened) end")
	}
	// At its end the claim is over: b takes it over, and a is refused.
	if !claim(t, s, key, "b", t0.Add(150*time.Second), t0.Add(5*time.Minute)) {
		t.Fatal("b could not take over a's claim when it ended")
	}
	if claim(t, s, key, "a", t0.Add(3*time.Minute), t0.Add(6*time.Minute)) {
		t.Fatal("a took back a claim b had taken over")
	}
	// Keys are exact and independent: case, spaces and other bytes count.
	for _, other := range []string{`SUMMARY "ns" "conv" "n1"`, `summary "ns" "conv" "n1" `, `summary "ns" "conv" "n2"`, "tier\x00ns\x00conv", "ünï/cødé"} {
		if !claim(t, s, other, "a", t0.Add(3*time.Minute), t0.Add(6*time.Minute)) {
			t.Fatalf("key %q was refused while only %q is held by another", other, key)
		}
	}
	// A holder is an exact string too.
	if claim(t, s, key, "B", t0.Add(3*time.Minute), t0.Add(6*time.Minute)) {
		t.Fatal(`holder "B" took the claim of holder "b"`)
	}
}

// testClaimsRelease: a released claim is free at once for anyone; a
// holder cannot release another's claim (one that took over after its
// own ended), nor a key nobody holds, and neither is an error.
func testClaimsRelease(t *testing.T, s strata.Store) {
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	const key = "embed ns conv"
	if !claim(t, s, key, "a", t0, t0.Add(time.Hour)) {
		t.Fatal("a free key was refused")
	}
	if err := s.Release(ctx(t), key, "a"); err != nil {
		t.Fatal(err)
	}
	if !claim(t, s, key, "b", t0.Add(time.Second), t0.Add(time.Hour)) {
		t.Fatal("b was refused a claim a had released")
	}
	// a's release of b's claim leaves it held.
	if err := s.Release(ctx(t), key, "a"); err != nil {
		t.Fatalf("releasing a claim another holder holds: %v, want no error", err)
	}
	if claim(t, s, key, "c", t0.Add(2*time.Second), t0.Add(time.Hour)) {
		t.Fatal("c took b's claim after a released a claim it no longer held")
	}
	if err := s.Release(ctx(t), "never claimed", "a"); err != nil {
		t.Fatalf("releasing a key nobody holds: %v, want no error", err)
	}
	if err := s.Release(ctx(t), key, "b"); err != nil {
		t.Fatal(err)
	}
	if !claim(t, s, key, "c", t0.Add(3*time.Second), t0.Add(time.Hour)) {
		t.Fatal("c was refused a claim b had released")
	}
}

// testClaimsInvalid: an empty key or holder, or a claim that ends at or
// before now, is EINVALID and changes nothing.
func testClaimsInvalid(t *testing.T, s strata.Store) {
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	if !claim(t, s, "k", "a", t0, t0.Add(time.Minute)) {
		t.Fatal("a free key was refused")
	}
	for name, tc := range map[string]struct {
		key, holder string
		now, until  time.Time
	}{
		"empty key":            {"", "b", t0, t0.Add(time.Minute)},
		"empty holder":         {"k2", "", t0, t0.Add(time.Minute)},
		"until equal to now":   {"k2", "b", t0, t0},
		"until before now":     {"k2", "b", t0, t0.Add(-time.Second)},
		"renewal ending early": {"k", "a", t0.Add(2 * time.Minute), t0.Add(time.Minute)},
	} {
		ok, err := s.Claim(ctx(t), tc.key, tc.holder, tc.now, tc.until)
		wantCode(t, name, err, strata.EINVALID)
		if ok {
			t.Errorf("%s: claimed", name)
		}
	}
	wantCode(t, "release with an empty key", s.Release(ctx(t), "", "a"), strata.EINVALID)
	wantCode(t, "release with an empty holder", s.Release(ctx(t), "k", ""), strata.EINVALID)
	// The refused calls changed nothing: a still holds k, and k2 is free.
	if claim(t, s, "k", "b", t0.Add(30*time.Second), t0.Add(time.Hour)) {
		t.Fatal("a rejected renewal ended a's claim")
	}
	if !claim(t, s, "k2", "b", t0, t0.Add(time.Minute)) {
		t.Fatal("a rejected claim left k2 held")
	}
}

// testClaimsConcurrent: of many holders claiming one free key at once,
// exactly one gets it; the same when they take over an ended claim.
func testClaimsConcurrent(t *testing.T, s strata.Store) {
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	for round, now := range []time.Time{t0, t0.Add(2 * time.Minute)} {
		const n = 16
		var wg sync.WaitGroup
		won := make([]bool, n)
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				won[i], errs[i] = s.Claim(ctx(t), "contended", fmt.Sprintf("holder-%d-%d", round, i), now, now.Add(time.Minute))
			}()
		}
		wg.Wait()
		winners := 0
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("round %d, holder %d: %v", round, i, errs[i])
			}
			if won[i] {
				winners++
			}
		}
		if winners != 1 {
			t.Fatalf("round %d: %d of %d holders got the claim, want exactly 1", round, winners, n)
		}
	}
}
