package strata

import "context"

// IngestDeferred is Ingest in two steps: it appends b's turns (validated,
// deduplicated by ext_id, committed) and returns without rolling up,
// leaving the rollup and tier pass that Ingest runs next to the function
// it returns. Once IngestDeferred returns, the turns are stored: they are
// read, listed and searched like any other; only the pyramid's nodes over
// them wait for the rollup. A caller answering a request can thus reply
// as soon as the turns are safe and roll up afterwards. The function
// returns the result with Nodes and Moved filled (and RollupDeferred when
// the rollup could not finish, which the next rollup completes, as after
// Ingest); it may be called once, from any goroutine, or not at all (the
// next append's rollup, the worker's or 'strata rollup' then closes the
// spans). It is nil when the append failed.
func (m *Memory) IngestDeferred(ctx context.Context, b Batch) (IngestResult, func(context.Context) IngestResult, error) {
	res, job, err := m.appendBatch(ctx, b, false)
	if err != nil {
		return res, nil, err
	}
	rollup := func(ctx context.Context) IngestResult {
		out := res
		var err error
		out.Nodes, out.Moved, err = m.rollupAndTier(ctx, job.conv, job.policy, job.added)
		if err != nil {
			out.RollupDeferred = "rollup after ingest: " + err.Error()
			m.log.Warn("the rollup after an append failed; the next rollup completes it",
				"conversation", job.conv, "added", res.Added, "error", err)
		}
		return out
	}
	return res, rollup, nil
}
