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
