package postgres

import (
	"strings"
	"testing"
)

// BenchmarkTurnSum is the checksum of one hot row of 1,000 content bytes,
// the cost each append and each read of a row pays for it.
func BenchmarkTurnSum(b *testing.B) {
	ext, meta := "msg-0001", `{"k":"v"}`
	tm := int64(1)
	r := turnRow{seq: 12345, extID: &ext, session: 3, label: "s3", role: "assistant",
		content: []byte(strings.Repeat("the otter crossed the weir ", 37)), time: &tm, model: "m", tokens: 250, metadata: &meta}
	b.SetBytes(int64(len(r.content)))
	for b.Loop() {
		r.sum()
	}
}

// TestTurnSumGolden: the store's row gives spanfmt.Row the fields it
// sums (the value is spanfmt's golden one for the same row).
func TestTurnSumGolden(t *testing.T) {
	ext, tc, meta := "msg-0001", `[{"id":"c1"}]`, `{"k":"v"}`
	tm := int64(1700000000123456789)
	r := turnRow{seq: 12345, extID: &ext, session: 3, label: "s3", role: "assistant", name: "Ana",
		content: []byte("the otter crossed the weir ünïcode"), time: &tm, model: "m", toolCalls: &tc, tokens: 250, metadata: &meta}
	if got := r.sum(); got != 0xc1380d9b {
		t.Errorf("sum %08x, want c1380d9b", got)
	}
}
