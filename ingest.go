package strata

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"sync"
	"time"
)

// Batch is a run of turns for one conversation, in order.
type Batch struct {
	Conversation string
	Turns        []Turn
	// Policy names the pyramid policy of the conversation if this batch
	// creates it ("" is the configured default). A conversation that exists
	// with another policy is an ECONFLICT error: see Memory.SetPolicy.
	Policy string
	// TimeZone is the IANA zone of the conversation if this batch creates
	// it ("" is the configured default).
	TimeZone string
}

// IngestResult says what an Ingest did.
type IngestResult struct {
	Conversation string `json:"conversation"`
	Received     int    `json:"received"`
	Added        int    `json:"added"`
	Skipped      int    `json:"skipped"` // already stored (same ext_id)
	Nodes        int    `json:"nodes"`   // nodes made by the rollup that followed
	Moved        int    `json:"moved"`   // spans that changed tier after it
	// RollupDeferred, when set, says why the rollup after the append did
	// not finish. The turns are stored all the same (Added counts them);
	// the next rollup (the next append's, the worker's, `strata rollup`)
	// closes the spans they complete.
	RollupDeferred string `json:"rollup_deferred,omitempty"`
}

// Ingest appends b's turns to the end of the conversation (creating it with
// the configured policy if needed), then rolls up every span the new turns
// complete. It validates every turn before writing any: a bad turn fails the
// whole batch with an EINVALID error naming its index and field, and nothing
// of the batch is stored. Turns whose ext_id is already stored are skipped,
// so ingesting the same batch twice adds nothing when its turns carry
// ext_ids. Ingest is a live append: a turn without ext_id is always added,
// never deduplicated by its content (a user may say "yes" twice), and gets
// a new random id (see LiveExtID); give ext_ids to make retries safe. A
// turn without time is stamped with the clock; token counts are always
// computed with the Tokenizer. Import, by contrast, derives the missing
// ext_ids from the turns' content, so that importing a file twice adds
// nothing. Once the turns are stored Ingest does not fail: a rollup that
// cannot finish (a model or store error, a context cancelled) is reported
// in the result's RollupDeferred, and the next rollup completes it.
func (m *Memory) Ingest(ctx context.Context, b Batch) (IngestResult, error) {
	return m.ingest.ingest(ctx, b)
}

// ingester appends turns (Ingest, Import, CreateConversation) and has the
// pyramid roll up what they complete.
type ingester struct {
	scope
	tok     Tokenizer
	tz      string        // Config.TimeZone
	gap     time.Duration // Config.SessionGap
	workers int           // turns counted at once
	pyramid *pyramid
}

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
	res, job, err := m.ingest.appendBatch(ctx, b, false)
	if err != nil {
		return res, nil, err
	}
	return res, func(ctx context.Context) IngestResult { return m.ingest.rollup(ctx, res, job) }, nil
}

func (in *ingester) ingest(ctx context.Context, b Batch) (IngestResult, error) {
	res, job, err := in.appendBatch(ctx, b, false)
	if err != nil {
		return res, err
	}
	return in.rollup(ctx, res, job), nil
}

// rollup runs the rollup and tier pass an append left (job) and adds what
// it did to the append's result.
func (in *ingester) rollup(ctx context.Context, res IngestResult, job rollupJob) IngestResult {
	var err error
	res.Nodes, res.Moved, err = in.pyramid.rollupAndTier(ctx, job.conv, job.policy, job.added)
	if err != nil {
		// The batch is committed: refusing it now would have a client
		// that retries without ext_ids store its turns twice. The pyramid
		// is derived from the turns, and the next rollup catches up.
		res.RollupDeferred = "rollup after ingest: " + err.Error()
		in.log.Warn("the rollup after an append failed; the next rollup completes it",
			"conversation", job.conv, "added", res.Added, "error", err)
	}
	return res
}

// rollupJob is the rollup an append leaves to do.
type rollupJob struct {
	conv   string
	policy Policy
	added  []Turn // the turns appended, in seq order; nil if none
}

// appendTries bounds how many times an append reads the conversation's end
// again because another process appended first.
const appendTries = 16

// appendBatch is the first half of Ingest: validate, derive, dedupe,
// assign sessions, count tokens and append. It returns the rollup to run.
// derive says how a turn without ext_id gets one: from its content and
// occurrence in the batch (DeriveExtID), as imports do, or at random
// (LiveExtID), as live appends do.
func (in *ingester) appendBatch(ctx context.Context, b Batch, derive bool) (IngestResult, rollupJob, error) {
	res := IngestResult{Conversation: b.Conversation, Received: len(b.Turns)}
	job := rollupJob{conv: b.Conversation}
	if err := ValidateConversationID(b.Conversation); err != nil {
		return res, job, err
	}
	if len(b.Turns) == 0 {
		return res, job, nil // nothing to store, and a job with no policy rolls nothing up
	}
	turns, err := in.prepareTurns(b, derive)
	if err != nil {
		return res, job, err
	}

	// Tokens are counted before anything is written or locked: counting
	// megabytes of text takes seconds, and a request whose deadline ends
	// meanwhile must leave nothing behind, not even an empty conversation.
	if err := in.countTokens(ctx, turns); err != nil {
		return res, job, err
	}

	lock := in.convLock(b.Conversation)
	lock.Lock()
	defer lock.Unlock()

	conv, err := in.ensureConversation(ctx, b)
	if err != nil {
		return res, job, err
	}
	if job.policy, err = in.policyFor(conv); err != nil {
		return res, job, err
	}
	fresh, added, err := in.appendNew(ctx, b.Conversation, turns)
	if fresh != nil {
		res.Skipped = len(turns) - len(fresh)
	}
	if err != nil || len(fresh) == 0 {
		// With nothing new, an earlier ingest may have been killed
		// between its append and its rollup: the rollup finishes it.
		return res, job, err
	}
	res.Added = len(added)
	res.Skipped += len(fresh) - len(added)
	job.added = added
	return res, job, nil
}

// prepareTurns returns a copy of the batch's turns, each checked, with an
// ext_id (a live one, or with derive one derived from its content) and a
// time (the clock's if it had none).
func (in *ingester) prepareTurns(b Batch, derive bool) ([]Turn, error) {
	turns := make([]Turn, len(b.Turns))
	copy(turns, b.Turns)
	occ := map[string]int{}
	for i := range turns {
		t := &turns[i]
		if err := t.Validate(); err != nil {
			return nil, Errorf(EINVALID, "conversation %q turn %d: %s", b.Conversation, i+1, err.Error())
		}
		if !derive && t.Content == "" && len(t.ToolCalls) == 0 && len(t.ToolResults) == 0 {
			return nil, Errorf(EINVALID, "conversation %q turn %d: content: empty (a turn needs content, tool calls or tool results)", b.Conversation, i+1)
		}
		if t.ExtID == "" && !derive {
			t.ExtID = LiveExtID()
		}
		if t.ExtID == "" {
			base := DeriveExtID(t, 0)
			t.ExtID = DeriveExtID(t, occ[base])
			occ[base]++
		}
		if t.Time.IsZero() {
			t.Time = in.now().UTC()
		}
	}
	return turns, nil
}

// ensureConversation returns the batch's conversation, created with the
// batch's policy and time zone (or the defaults) if it is new. A batch
// naming a policy the conversation does not have is an ECONFLICT error.
func (in *ingester) ensureConversation(ctx context.Context, b Batch) (Conversation, error) {
	policy, tz := in.policy.Name, in.tz
	if b.Policy != "" {
		if _, err := in.policyNamed(b.Policy); err != nil {
			return Conversation{}, err
		}
		policy = b.Policy
	}
	if b.TimeZone != "" {
		if _, err := LoadTimeZone(b.TimeZone); err != nil {
			return Conversation{}, err
		}
		tz = b.TimeZone
	}
	conv, err := in.store.EnsureConversation(ctx, Conversation{
		Namespace: in.ns, ID: b.Conversation, Policy: policy, TimeZone: tz, Created: in.now().UTC(),
	})
	if err != nil {
		return conv, fmt.Errorf("ensure conversation: %w", err)
	}
	if b.Policy != "" && conv.Policy != b.Policy && !(conv.Policy == "" && b.Policy == in.policy.Name) {
		return conv, Errorf(ECONFLICT, "conversation %q has policy %q, not %q: change it with SetPolicy (strata policy set)",
			b.Conversation, conv.Policy, b.Policy)
	}
	return conv, nil
}

// appendNew drops the turns already stored, and repeats within turns;
// assigns sessions after the conversation's last turn; and appends,
// provided no other process appended meanwhile. If one did (ECONFLICT),
// the turns it stored are dropped and the sessions assigned again: the
// convLock (which the caller holds) serializes the writers of this
// process, the check those of several processes, so that they append as
// one writer would. It returns the turns that were new at the last try
// (nil if it never read which were) and those appended.
func (in *ingester) appendNew(ctx context.Context, conv string, turns []Turn) (fresh, added []Turn, err error) {
	ids := make([]string, len(turns))
	for i := range turns {
		ids[i] = turns[i].ExtID
	}
	for try := 1; ; try++ {
		have, err := in.store.ExistingExtIDs(ctx, in.ns, conv, ids)
		if err != nil {
			return fresh, nil, fmt.Errorf("look up ext ids: %w", err)
		}
		fresh = make([]Turn, 0, len(turns))
		seen := make(map[string]bool, len(turns))
		for _, t := range turns {
			if have[t.ExtID] || seen[t.ExtID] {
				continue
			}
			seen[t.ExtID] = true
			fresh = append(fresh, t)
		}
		if len(fresh) == 0 {
			return fresh, nil, nil
		}
		var prev *Turn
		var after int64
		last, err := in.store.Turns(ctx, TurnFilter{Namespace: in.ns, Conversation: conv, Newest: true, Limit: 1, WithExpired: true})
		if err != nil {
			return fresh, nil, fmt.Errorf("read last turn: %w", err)
		}
		if len(last) == 1 {
			prev, after = &last[0], last[0].Seq
		}
		for i := range fresh {
			t := &fresh[i]
			t.Session = in.sessionOf(prev, t)
			prev = t
		}
		added, err = in.store.AppendTurnsAfter(ctx, in.ns, conv, after, fresh)
		if ErrorCode(err) == ECONFLICT && try < appendTries {
			in.log.Debug("another writer appended; reading the conversation's end again", "conversation", conv, "error", err)
			select {
			case <-ctx.Done():
				return fresh, nil, ctx.Err()
			case <-time.After(time.Duration(rand.Int64N(int64(try) * int64(5*time.Millisecond)))):
			}
			continue
		}
		if err != nil {
			return fresh, nil, fmt.Errorf("append turns: %w", err)
		}
		return fresh, added, nil
	}
}

// Importer ingests a stream of batches, as Ingest does (except that a turn
// without ext_id gets one derived from its content, as Import's do), but
// rolls each batch up in the background while the next one is appended,
// so that summarizing on one core overlaps writing on another. Rollups run in
// order, one at a time; Close waits for the last. It is meant for bulk
// imports: one goroutine calls Add and then Close.
type Importer struct {
	in      *ingester
	ctx     context.Context
	jobs    chan importJob
	done    chan struct{}
	mu      sync.Mutex
	results []IngestResult
	err     error
}

type importJob struct {
	rollupJob
	index int // into results
}

// NewImporter starts an Importer. Cancelling ctx stops it.
func (m *Memory) NewImporter(ctx context.Context) *Importer { return m.ingest.newImporter(ctx) }

func (in *ingester) newImporter(ctx context.Context) *Importer {
	im := &Importer{in: in, ctx: ctx, jobs: make(chan importJob, 1), done: make(chan struct{})}
	go im.run()
	return im
}

func (im *Importer) run() {
	defer close(im.done)
	for j := range im.jobs {
		if im.failed() {
			continue // drain: the import has failed
		}
		n, moved, err := im.in.pyramid.rollupAndTier(im.ctx, j.conv, j.policy, j.added)
		im.mu.Lock()
		im.results[j.index].Nodes += n
		im.results[j.index].Moved += moved
		if err != nil && im.err == nil {
			im.err = fmt.Errorf("rollup of %q: %w", j.conv, err)
		}
		im.mu.Unlock()
	}
}

func (im *Importer) failed() bool {
	im.mu.Lock()
	defer im.mu.Unlock()
	return im.err != nil
}

// Add appends a batch and queues its rollup. It returns the append's
// error, or the error of an earlier rollup; after an error the Importer
// takes no more batches.
func (im *Importer) Add(b Batch) error {
	im.mu.Lock()
	err := im.err
	im.mu.Unlock()
	if err != nil {
		return err
	}
	res, job, err := im.in.appendBatch(im.ctx, b, true)
	im.mu.Lock()
	im.results = append(im.results, res)
	idx := len(im.results) - 1
	if err != nil && im.err == nil {
		im.err = err
	}
	im.mu.Unlock()
	if err != nil {
		return err
	}
	select {
	case im.jobs <- importJob{rollupJob: job, index: idx}:
		return nil
	case <-im.ctx.Done():
		return im.ctx.Err()
	}
}

// ImportBatch is how many turns Import gives the store per transaction.
const ImportBatch = 5000

// importBatch is the batch size Import uses: ImportBatch, which tests may
// lower (SetImportBatch) to cover several batches with fewer turns.
var importBatch = ImportBatch

// importBuffer bounds what Import holds back while it gathers the turns of
// several conversations whose lines alternate: at most this many bytes of
// turn text across all conversations. Past it, the largest pending batch
// is written.
const importBuffer = 64 << 20

// Import ingests every turn that next yields, until next returns io.EOF,
// as Ingest would, in batches of up to ImportBatch turns of one
// conversation, whatever the order in which the conversations' turns
// come: the turns of each conversation are gathered (within a bound on
// memory) so that input whose lines alternate between conversations is
// still written a large batch per transaction. A turn without ext_id gets
// one derived from its content and its occurrence in its batch
// (DeriveExtID), so that importing the same input twice adds nothing.
// Three stages run at once: next (parsing, say) runs on its own goroutine,
// batches are appended on the caller's, and each batch is rolled up while
// the next one is appended. It returns the result of every batch in the
// order written, with the first error; what was ingested before an error
// stays ingested, and ingesting the same input again completes it.
func (m *Memory) Import(ctx context.Context, next func() (conversation string, t Turn, err error)) ([]IngestResult, error) {
	return m.ImportWith(ctx, ImportOptions{}, next)
}

// ImportOptions are the settings of the conversations an import creates.
type ImportOptions struct {
	Policy   string // see Batch.Policy
	TimeZone string // see Batch.TimeZone
}

// ImportWith is Import with the policy and time zone of the conversations
// it creates; a conversation that exists with another policy is an
// ECONFLICT error.
func (m *Memory) ImportWith(ctx context.Context, o ImportOptions, next func() (conversation string, t Turn, err error)) ([]IngestResult, error) {
	return m.ingest.importWith(ctx, o, next)
}

func (in *ingester) importWith(ctx context.Context, o ImportOptions, next func() (conversation string, t Turn, err error)) ([]IngestResult, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := make(chan Batch, 1)
	readErr := make(chan error, 1)
	go func() {
		defer close(batches)
		readErr <- gatherBatches(ctx, o, next, batches)
	}()
	im := in.newImporter(ctx)
	var addErr error
	for b := range batches {
		if addErr = im.Add(b); addErr != nil {
			cancel() // stops the reader; the loop drains what it sent
		}
	}
	results, err := im.Close()
	if rerr := <-readErr; rerr != nil && !(addErr != nil && errors.Is(rerr, context.Canceled)) {
		return results, rerr
	}
	if addErr != nil {
		return results, addErr
	}
	return results, err
}

// gatherBatches reads turns from next until io.EOF and sends them on
// batches, a batch per conversation of ImportBatch turns at most; when
// the turns gathered exceed importBuffer bytes, the largest batch goes
// early. It returns next's error, or ctx's if it ends first.
func gatherBatches(ctx context.Context, o ImportOptions, next func() (conversation string, t Turn, err error), batches chan<- Batch) error {
	// pending holds each conversation's batch being gathered, order
	// the conversations in the order they first came (so that output
	// is deterministic), size the text bytes pending in all.
	pending := map[string]*Batch{}
	var order []string
	size := 0
	send := func(conv string) bool {
		b := pending[conv]
		delete(pending, conv)
		order = slices.DeleteFunc(order, func(c string) bool { return c == conv })
		for _, t := range b.Turns {
			size -= turnSize(&t)
		}
		select {
		case batches <- *b:
			return true
		case <-ctx.Done():
			return false
		}
	}
	for {
		conv, t, err := next()
		if errors.Is(err, io.EOF) {
			for len(order) > 0 {
				if !send(order[0]) {
					return ctx.Err()
				}
			}
			return nil
		}
		if err != nil {
			return err
		}
		b := pending[conv]
		if b == nil {
			b = &Batch{Conversation: conv, Policy: o.Policy, TimeZone: o.TimeZone}
			pending[conv] = b
			order = append(order, conv)
		}
		b.Turns = append(b.Turns, t)
		size += turnSize(&t)
		if len(b.Turns) >= importBatch {
			if !send(conv) {
				return ctx.Err()
			}
		}
		for size > importBuffer && len(order) > 0 {
			largest := order[0]
			for _, c := range order {
				if len(pending[c].Turns) > len(pending[largest].Turns) {
					largest = c
				}
			}
			if !send(largest) {
				return ctx.Err()
			}
		}
	}
}

// Close waits for the queued rollups and returns the result of every
// batch, in the order added, with the first error.
func (im *Importer) Close() ([]IngestResult, error) {
	close(im.jobs)
	<-im.done
	im.mu.Lock()
	defer im.mu.Unlock()
	return im.results, im.err
}

// turnSize is roughly the memory a pending turn holds, for importBuffer.
func turnSize(t *Turn) int {
	n := 200 + len(t.Content) + len(t.Name) + len(t.ExtID)
	for _, c := range t.ToolCalls {
		n += len(c.Arguments) + len(c.Name)
	}
	for _, r := range t.ToolResults {
		n += len(r.Content)
	}
	return n
}

// sessionOf returns the session number of t, which follows prev.
func (in *ingester) sessionOf(prev, t *Turn) int {
	switch {
	case prev == nil:
		return 1
	case t.SessionLabel != "" || prev.SessionLabel != "":
		if t.SessionLabel == prev.SessionLabel {
			return prev.Session
		}
		return prev.Session + 1
	case t.Time.Sub(prev.Time) > in.gap:
		return prev.Session + 1
	}
	return prev.Session
}

// contextCounter is a Tokenizer that can give up counting when its
// context ends (tiktoken's).
type contextCounter interface {
	CountContext(ctx context.Context, s string) (int, error)
}

// countTokens sets Tokens on every turn, in parallel, and returns ctx's
// error if it ends first.
func (in *ingester) countTokens(ctx context.Context, turns []Turn) error {
	cc, _ := in.tok.(contextCounter)
	parallel(len(turns), in.workers, func(i int) {
		if ctx.Err() != nil {
			return
		}
		if cc != nil {
			turns[i].Tokens, _ = cc.CountContext(ctx, turns[i].Text())
		} else {
			turns[i].Tokens = in.tok.Count(turns[i].Text())
		}
	})
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("counting the tokens of %d turns: %w", len(turns), err)
	}
	return nil
}

// parallel runs f(0..n-1) on up to workers goroutines.
func parallel(n, workers int, f func(i int)) {
	if n < 64 || workers <= 1 {
		for i := 0; i < n; i++ {
			f(i)
		}
		return
	}
	var wg sync.WaitGroup
	chunk := (n + workers - 1) / workers
	for lo := 0; lo < n; lo += chunk {
		hi := min(lo+chunk, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := lo; i < hi; i++ {
				f(i)
			}
		}()
	}
	wg.Wait()
}

// CreateConversation creates a conversation with no turns yet, with the
// policy and time zone given ("" for the configured defaults), and returns
// it. Creating one that exists with the same settings returns it as it
// is; with another policy or time zone it is ECONFLICT (see SetPolicy).
// EINVALID for a bad id, an unknown policy or a zone that does not load.
func (m *Memory) CreateConversation(ctx context.Context, id, policy, timeZone string) (Conversation, error) {
	return m.ingest.createConversation(ctx, id, policy, timeZone)
}

func (in *ingester) createConversation(ctx context.Context, id, policy, timeZone string) (Conversation, error) {
	if err := ValidateConversationID(id); err != nil {
		return Conversation{}, err
	}
	if policy == "" {
		policy = in.policy.Name
	}
	if _, err := in.policyNamed(policy); err != nil {
		return Conversation{}, err
	}
	if timeZone == "" {
		timeZone = in.tz
	}
	if _, err := LoadTimeZone(timeZone); err != nil {
		return Conversation{}, err
	}
	lock := in.convLock(id)
	lock.Lock()
	defer lock.Unlock()
	c, err := in.store.EnsureConversation(ctx, Conversation{Namespace: in.ns, ID: id, Policy: policy, TimeZone: timeZone, Created: in.now().UTC()})
	if err != nil {
		return c, err
	}
	have := c.Policy
	if have == "" {
		have = in.policy.Name
	}
	if have != policy {
		return c, Errorf(ECONFLICT, "conversation %q exists with policy %q, not %q: change it with SetPolicy (strata policy set)", id, have, policy)
	}
	if c.TimeZone != timeZone && !(c.TimeZone == "" && (timeZone == "UTC" || timeZone == "")) {
		return c, Errorf(ECONFLICT, "conversation %q exists with time zone %q, not %q", id, c.TimeZone, timeZone)
	}
	return c, nil
}
