package spanfmt

import (
	"context"
	"testing"

	"github.com/strata-memory/strata/archive"
	"github.com/strata-memory/strata/internal/synth"
)

// BenchmarkColdMove is the archive's share of one live move to cold: a
// span of 12 synthetic turns merged into the segment it goes to, which
// already holds the conversation's earlier records of the period, read,
// rewritten whole at the strongest level, fsynced, read back and renamed.
// "day" is a segment as day segments averaged on a million synthetic
// turns (24 records), "month" one as month segments do (360), "full
// month" one at about MaxMonthBytes (1,400), past which a month takes no
// more spans, and "busy month" the whole month of a conversation of 1,000
// turns a day (30,000), which that bound avoids.
func BenchmarkColdMove(b *testing.B) {
	const most = 30000
	turns := synth.New(1).Turns(most + 12)
	recs := make([]archive.Record, len(turns))
	for i := range turns {
		turns[i].Seq = int64(i + 1)
		r, err := Record(&turns[i])
		if err != nil {
			b.Fatal(err)
		}
		recs[i] = r
	}
	for _, c := range []struct {
		name string
		held int
	}{{"day", 24}, {"month", 360}, {"full-month", 1400}, {"busy-month", most}} {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			seg := archive.Segments{Blobs: archive.NewFiles(b.TempDir())}
			key := archive.Key("ns", "c", c.name)
			in, err := seg.Merge(ctx, key, recs[:c.held])
			if err != nil {
				b.Fatal(err)
			}
			span := recs[most : most+12]
			b.ReportAllocs()
			for b.Loop() {
				// The same span each time: Merge replaces its records, so
				// every iteration rewrites a segment of the same size.
				if _, err := seg.Merge(ctx, key, span); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(in.Bytes), "held-bytes")
		})
	}
}
