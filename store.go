package strata

import (
	"context"
	"time"
)

// Store keeps conversations, turns and nodes. It is made of one small
// interface per entity, below, so that each can be read, tested and
// implemented on its own. Every method is scoped by a namespace; nothing
// crosses it. Implementations: sqlite (embedded). Every
// implementation passes the conformance suite in package storetest.
//
// Errors: a missing conversation is ENOTFOUND for every method that names
// one (Turns, Nodes, PutNodes, Search and AppendTurns included); invalid
// arguments are EINVALID; anything else is returned wrapped. Where this
// package has a Check function for a method's arguments (CheckEmbeddings,
// CheckEmbedFilter, CheckVectorFilter, CheckImportance, CheckLearnings,
// CheckLearningStatus), a store calls it first, so that every store
// refuses the same input with the same error.
//
// Node ids are unique within a conversation (they derive from it). A turn
// with an empty ExtID is never deduplicated (the engine always sets one).
type Store interface {
	ConversationStore
	TurnStore
	NodeStore
	SearchStore
	TierStore
	CallStore
	LearningStore
	CompactionStore
	VectorStore
	ClaimStore
	WatchStore

	// Stats reports counts for the namespace; Bytes is the size of the
	// whole store on disk, whatever the namespace.
	Stats(ctx context.Context, namespace string) (Stats, error)

	// Close releases the store.
	Close() error
}

// ConversationStore keeps conversations: their settings, counts and deletion.
type ConversationStore interface {
	// EnsureConversation creates c if no conversation (c.Namespace, c.ID)
	// exists, and returns the stored conversation either way (an existing
	// conversation keeps its policy).
	EnsureConversation(ctx context.Context, c Conversation) (Conversation, error)

	// Conversation returns a conversation with its turn and session counts
	// and the earliest and latest of its turns' times. ENOTFOUND if it does
	// not exist.
	Conversation(ctx context.Context, namespace, id string) (Conversation, error)

	// UpdateConversation changes the settings u names (nil fields are left
	// as they are) and returns the conversation. ENOTFOUND if it does not
	// exist; EINVALID for a time zone that does not load.
	UpdateConversation(ctx context.Context, namespace, id string, u ConversationUpdate) (Conversation, error)

	// Conversations lists the namespace's conversations by id.
	Conversations(ctx context.Context, namespace string) ([]Conversation, error)

	// Namespaces lists, sorted (byte order), the namespaces that hold
	// anything: a conversation, a live-compaction state, a watch state, a
	// bearer token (see TokenStore) or the audit record of a deleted
	// conversation. A namespace that holds no conversation is listed all
	// the same, so that a copy of the store misses none of its tokens
	// and settings.
	Namespaces(ctx context.Context) ([]string, error)

	// DeleteConversation removes a conversation and everything it holds:
	// its turns, nodes, vectors, learnings, call log, live-compaction
	// state and archive segments, whatever their tier, and keeps an audit
	// record of what went (returned, and listed by Deletions). Nothing of
	// it is found afterwards, and a conversation created again with the
	// same id starts empty. ENOTFOUND for an unknown conversation.
	DeleteConversation(ctx context.Context, namespace, id, reason string, at time.Time) (Deletion, error)

	// Deletions returns the audit records of the namespace's deleted
	// conversations, oldest first.
	Deletions(ctx context.Context, namespace string) ([]Deletion, error)
}

// TurnStore keeps the turns of conversations, appended in order and read whole whatever their tier.
type TurnStore interface {
	// ExistingExtIDs returns the subset of extIDs already stored in the
	// conversation (empty if the conversation does not exist).
	ExistingExtIDs(ctx context.Context, namespace, conversation string, extIDs []string) (map[string]bool, error)

	// AppendTurns appends turns, in order, at the end of an existing
	// conversation in one transaction, assigning Seq from the current end.
	// A turn whose ExtID is already stored in the conversation is skipped:
	// appending is idempotent by ext_id. It returns the turns appended, with
	// Seq set. Content is stored whole. ENOTFOUND if the conversation does
	// not exist.
	AppendTurns(ctx context.Context, namespace, conversation string, turns []Turn) ([]Turn, error)

	// AppendTurnsAfter appends turns as AppendTurns does, provided the
	// conversation's last turn is seq after (0: it has no turn, expired
	// turns count) when the transaction starts; otherwise it changes
	// nothing and returns ECONFLICT. A writer that derived the turns
	// from the last one it read (their sessions follow it) appends with
	// its seq, and on ECONFLICT reads again: writers in several
	// processes then append as one writer would. EINVALID for an after
	// below 0.
	AppendTurnsAfter(ctx context.Context, namespace, conversation string, after int64, turns []Turn) ([]Turn, error)

	// Turns returns the turns that match f, in seq order (newest first if
	// f.Newest), whole whatever the tier of their span: from their rows, a
	// warm block or an archive segment. Turns whose content expired are
	// left out. An archive segment that is missing or corrupt is an error
	// naming it (ENOTFOUND if missing).
	Turns(ctx context.Context, f TurnFilter) ([]Turn, error)

	// SetImportance sets the importance (0..1) of the turn seq and returns
	// the turn, whole. A turn that becomes pinned keeps its content in its
	// row whatever the tier of its span (and is searchable); one that stops
	// being pinned in a warm or cold span gives its row's content up to
	// that span's copy. ENOTFOUND for an unknown conversation or seq;
	// EINVALID for an importance outside 0..1; ECONFLICT when unpinning a
	// turn whose span expired (its row holds the only copy). What becomes
	// of the content is DecidePin's decision.
	SetImportance(ctx context.Context, namespace, conversation string, seq int64, importance float64) (Turn, error)
}

// NodeStore keeps the nodes of the pyramid.
type NodeStore interface {
	// PutNodes stores nodes of one conversation in one transaction. A node
	// whose ID is already stored is replaced, so re-running a rollup creates
	// no duplicate. A node whose Conversation names another conversation is
	// EINVALID.
	PutNodes(ctx context.Context, namespace, conversation string, nodes []Node) error

	// ReplaceNodes removes the nodes ids of a conversation (with their
	// vectors and index entries) and stores nodes as PutNodes does, in one
	// transaction, and returns how many distinct nodes it stored that were
	// not stored before (a node put again, by another process's rollup of
	// the same span, say, is not counted). A rollup writes with it, and
	// rebuilds a node whose period received a turn after it closed. A removed level-1 node whose span is warm
	// or cold gives its turns back to the hot tier first, byte for byte
	// and searchable again; Turns returns the same turns before and
	// after. ENOTFOUND for an unknown conversation or id; ECONFLICT,
	// changing nothing, for a level-1 node whose span expired. Which
	// removed nodes give their turns back, and which are refused, is
	// CheckNodeRemoval's decision. Removing a node removes the stored
	// nodes above it too (those of a higher level whose span meets its),
	// unless nodes puts it back under its id, and a node whose child is neither stored nor among nodes is
	// ECONFLICT, changing nothing: a parent never stands over a child
	// another writer replaced.
	ReplaceNodes(ctx context.Context, namespace, conversation string, ids []string, nodes []Node) (int, error)

	// Nodes returns the nodes that match f, ordered by level then first seq
	// (the whole order reversed if f.Newest: coarsest level first, newest
	// first within it), with Conversation set.
	Nodes(ctx context.Context, f NodeFilter) ([]Node, error)

	// ResetPyramid removes every node of the conversation and sets its
	// policy name, so that the next rollup builds the pyramid anew. Warm
	// and cold spans come back to hot first (their turns' content back in
	// their rows and in the full-text index, byte for byte), since their
	// copies hang off the nodes being removed. It returns the number of
	// nodes removed. ECONFLICT, changing nothing, if any span expired:
	// its summary is all that is left of it. ENOTFOUND for an unknown
	// conversation.
	ResetPyramid(ctx context.Context, namespace, conversation, policy string) (int, error)
}

// SearchStore ranks turns and summaries against words.
type SearchStore interface {
	// Search ranks turns (their Text: content, tool calls and tool results)
	// and node summaries against q.Text with BM25 and
	// returns at most q.K hits (10 if q.K <= 0), best first; with q.Kind ""
	// turn and summary hits are merged by raw score. Text the store cannot
	// parse as a query is treated as plain words, never as an error.
	Search(ctx context.Context, q SearchQuery) ([]Hit, error)
}

// TierStore moves the raw content of closed spans between tiers and expires it.
type TierStore interface {
	// Demote moves the raw content of the level-1 nodes ids to tier to
	// (TierWarm or TierCold) and returns one Move per node moved; a node
	// already in that tier or beyond is skipped. Pinned turns keep their
	// content in their rows in every tier. The new copy is written and
	// verified before the old one is dropped, so a kill at any instant loses
	// nothing, and calling Demote again completes the move without
	// duplicating anything. Turns returns the same turns before and after.
	// at is the time of the move by the caller's clock: a node moved to
	// cold keeps it as its ColdAt, which retention counts from. ENOTFOUND
	// for an unknown conversation or node; EINVALID for a node that is not
	// at level 1, a tier other than warm or cold, or a move to cold with no
	// time.
	Demote(ctx context.Context, namespace, conversation string, ids []string, to Tier, at time.Time) ([]Move, error)

	// Expire deletes the archived raw content of the cold level-1 nodes
	// ids, except pinned turns, and keeps an Expiry audit record per node
	// (returned), with at as its time, and the node's ColdAt and End as
	// the record's ColdAt and NewestTurn. Expired nodes are skipped; a node that is not cold is
	// EINVALID. With dryRun it reports what it would delete and changes
	// nothing.
	Expire(ctx context.Context, namespace, conversation string, ids []string, rule string, at time.Time, dryRun bool) ([]Expiry, error)

	// Expiries returns the audit records of the conversation (of the whole
	// namespace if conversation is ""), oldest first.
	Expiries(ctx context.Context, namespace, conversation string) ([]Expiry, error)
}

// CallStore keeps the log of model calls.
type CallStore interface {
	// RecordCalls appends calls to the conversation's log of model calls.
	// ENOTFOUND if the conversation does not exist.
	RecordCalls(ctx context.Context, namespace, conversation string, calls []Call) error

	// Calls returns the log of model calls of the conversation (of the
	// whole namespace if conversation is ""), oldest first.
	Calls(ctx context.Context, namespace, conversation string) ([]Call, error)
}

// LearningStore keeps learnings and their history.
type LearningStore interface {
	// AddLearnings stores new learnings of a conversation (Status auto
	// unless set) in one transaction and returns them with their IDs. A
	// learning whose subject and text (compared ignoring case, spaces and
	// final punctuation) equal those of one that is not superseded (auto,
	// confirmed or rejected: a rejected fact found again stays rejected)
	// is a repeat: nothing is added and the existing one is returned. One
	// with the subject of an active learning and another text supersedes
	// it: the old one becomes superseded, pointing at the new one, and
	// stays as history. A confirmed learning is superseded like any other.
	// Learnings of one call are added in order, each seeing those before
	// it; one is returned per learning given. ENOTFOUND for an unknown
	// conversation; EINVALID for an empty subject or text, a status other
	// than auto, confirmed or rejected, or a Conversation other than the
	// one added to. These rules are the engine's: a store checks ls with
	// CheckLearnings and, in its transaction, carries out the plan
	// PlanLearnings makes of the stored learnings of ls's subjects.
	AddLearnings(ctx context.Context, namespace, conversation string, ls []Learning) ([]Learning, error)

	// Learnings returns the learnings that match f, oldest first (newest
	// first with f.Newest); f.Limit keeps the first ones of that order.
	// ENOTFOUND for an unknown f.Conversation.
	Learnings(ctx context.Context, f LearningFilter) ([]Learning, error)

	// SetLearningStatus sets the status of learning id (confirmed,
	// rejected or auto) and returns it. ENOTFOUND for an unknown id in the
	// namespace; EINVALID for another status, or for a superseded learning
	// (its history is fixed), as ChangeLearningStatus decides.
	SetLearningStatus(ctx context.Context, namespace string, id int64, status string) (Learning, error)
}

// CompactionStore keeps the live-compaction state of each conversation.
type CompactionStore interface {
	// CompactionState returns the live-compaction state saved for
	// (namespace, conversation), or the zero state if none was saved. The
	// conversation need not exist: compaction can run without appending
	// to memory.
	CompactionState(ctx context.Context, namespace, conversation string) (CompactionState, error)

	// SaveCompactionState stores s as the state of (namespace,
	// conversation), replacing the one saved before (the last writer
	// wins). EINVALID for an empty conversation id or a negative count.
	SaveCompactionState(ctx context.Context, namespace, conversation string, s CompactionState) error

	// CompactionStates returns every state saved in the namespace,
	// whether or not its conversation exists in memory, ordered by
	// conversation id (byte order).
	CompactionStates(ctx context.Context, namespace string) ([]ConversationCompaction, error)
}

// VectorStore keeps the vectors of turns and nodes.
type VectorStore interface {
	// Unembedded returns, in EmbedRef order after f.After, at most f.Limit
	// (1000 if f.Limit <= 0) turns and nodes of the conversation that have
	// no vector in f.Space, with their text: a turn's Text (read whole
	// from its row, warm block or archive segment), a node's summary.
	// Turns whose content expired and nodes pending a model summary (their
	// summary will change) are left out. ENOTFOUND for an unknown
	// conversation; EINVALID for an empty f.Space.Model, a negative
	// f.Space.Dim or an unknown f.Kind.
	Unembedded(ctx context.Context, f EmbedFilter) ([]EmbedSource, error)

	// PutEmbeddings stores the vectors es of the conversation's turns and
	// nodes in space, in one transaction: an item keeps one vector per
	// model, so putting again replaces it (putting is idempotent), also
	// one of another dimension. A node's vector is removed when its
	// summary changes or the node is removed. Each put advances the
	// conversation's VectorVersion. ENOTFOUND for an unknown conversation;
	// EINVALID, naming the field and changing nothing, for an empty
	// space.Model, a space.Dim < 1, a vector whose length is not
	// space.Dim or that holds NaN or infinity, a turn seq or node id the
	// conversation does not have.
	PutEmbeddings(ctx context.Context, namespace, conversation string, space EmbedSpace, es []Embedding) error

	// Vectors calls fn with each vector of the conversation that matches
	// f, the turns' before the nodes' (each in no particular order), from
	// one consistent read; fn's error stops the scan and is returned. Vectors are streamed, not
	// gathered: Vector.Values is only valid during the call. ENOTFOUND
	// for an unknown conversation; EINVALID for an empty f.Space.Model or
	// an unknown f.Kind.
	Vectors(ctx context.Context, f VectorFilter, fn func(Vector) error) error

	// VectorVersion returns how far the conversation's vectors have
	// changed (zero if it never had any), cheaply enough to be asked
	// before every search. ENOTFOUND for an unknown conversation.
	VectorVersion(ctx context.Context, namespace, conversation string) (VectorVersion, error)

	// DeleteEmbeddings removes the conversation's vectors (of every
	// conversation of the namespace if conversation is "") that are not in
	// keep: of another model, or of another dimension when keep.Dim is not
	// 0; every vector if keep.Model is "". It returns how many it removed.
	// ENOTFOUND for an unknown conversation.
	DeleteEmbeddings(ctx context.Context, namespace, conversation string, keep EmbedSpace) (int64, error)

	// VectorCounts counts, per conversation (one, or every conversation of
	// the namespace if conversation is ""), ordered by id, what can be
	// embedded and the vectors stored by space (ordered by model and
	// dimension). ENOTFOUND for an unknown conversation.
	VectorCounts(ctx context.Context, namespace, conversation string) ([]VectorCounts, error)
}

// TurnFilter selects turns of one conversation. Zero fields do not filter.
type TurnFilter struct {
	Namespace    string
	Conversation string
	FromSeq      int64   // first seq, inclusive
	ToSeq        int64   // last seq, inclusive
	Seqs         []int64 // only these seqs
	// Since and Until bound the turns' times: Since <= time < Until. A
	// zero bound does not filter. Turn times need not grow with seq, so
	// a store may scan; callers narrow by seq first where they can.
	Since      time.Time
	Until      time.Time
	ExtIDs     []string
	PinnedOnly bool // importance >= PinnedImportance
	// WithExpired also returns the turns whose content expired, as the
	// stubs their rows keep: seq, ext_id, session, role, time, tokens and
	// importance, with no content. A copy of a store needs them.
	WithExpired bool
	Newest      bool // order by seq descending
	Limit       int
}

// NodeFilter selects nodes. Conversation may be empty only when IDs is set.
type NodeFilter struct {
	Namespace    string
	Conversation string
	IDs          []string
	Level        int    // 0: all levels
	FromSeq      int64  // nodes whose FirstSeq >= FromSeq
	ToSeq        int64  // nodes whose LastSeq <= ToSeq
	Newest       bool   // reverse order: highest level, then highest seq, first
	Tiers        []Tier // only level-1 nodes in these tiers (higher levels have none)
	// Overlaps keeps the nodes whose [Start, End] meets [Overlaps.Start,
	// Overlaps.End); zero bounds do not filter.
	Overlaps Period
	Key      string // only nodes with this key
	Covers   int64  // only nodes whose span holds this seq
	Pending  bool   // only nodes whose model summary is due
	Limit    int
}

// Call is one call to a model, as the log of model calls keeps it.
type Call struct {
	Conversation string        `json:"conversation"`
	Node         string        `json:"node"`
	Level        int           `json:"level"`
	Provider     string        `json:"provider"`
	Model        string        `json:"model"`
	Attempt      int           `json:"attempt"` // 1-based, per node and pass
	TokensIn     int           `json:"tokens_in"`
	TokensOut    int           `json:"tokens_out"`
	Elapsed      time.Duration `json:"elapsed"`
	Outcome      string        `json:"outcome"` // "ok", "over_budget", or the error
	At           time.Time     `json:"at"`
}

// Hit kinds.
const (
	KindTurn    = "turn"
	KindSummary = "summary"
	// KindLearning is a confirmed learning in a context package.
	KindLearning = "learning"
)

// SearchQuery asks a store for the best BM25 matches.
type SearchQuery struct {
	Namespace    string
	Conversation string // empty: every conversation of the namespace
	Text         string
	K            int
	Kind         string // "" (both), KindTurn or KindSummary
	// FromSeq, if positive, keeps only the turns from this seq on
	// (summaries are not affected); it needs Conversation. A store reads
	// only those turns' index entries, so a search of a conversation's
	// newest turns costs what their number does, not the conversation's
	// length; scores are those of an unrestricted search.
	FromSeq int64
}

// Hit is one search result. Exactly one of Turn and Node is set.
type Hit struct {
	Kind         string  `json:"kind"`
	Conversation string  `json:"conversation"`
	Score        float64 `json:"score"` // higher is better
	Turn         *Turn   `json:"turn,omitempty"`
	Node         *Node   `json:"node,omitempty"`
}

// Stats describes what a store holds in one namespace.
type Stats struct {
	Conversations int          `json:"conversations"`
	Turns         int64        `json:"turns"`
	ContentBytes  int64        `json:"content_bytes"`
	TurnTokens    int64        `json:"turn_tokens"`    // tokens of the raw history
	SummaryTokens int64        `json:"summary_tokens"` // tokens of every node's summary
	Levels        []LevelStats `json:"levels"`
	Tiers         []TierStats  `json:"tiers"`
	Archive       ArchiveStats `json:"archive"`
	Bytes         int64        `json:"bytes_on_disk"` // the store's files, archive included
	FreeBytes     int64        `json:"free_bytes"`    // unused pages inside the database file
	Location      string       `json:"location"`
	Oldest        time.Time    `json:"oldest,omitempty"`
	Newest        time.Time    `json:"newest,omitempty"`
	// Search and Embeddings are filled by Memory.Stats, not by stores:
	// SearchHybrid when an embedder is configured, SearchLexical (BM25
	// only) when not; the vectors against the configured embedder (nil
	// with no embedder and no vectors).
	Search     string          `json:"search,omitempty"`
	Embeddings *EmbeddingStats `json:"embeddings,omitempty"`
	// PerConversation breaks turns, tiers, archive and tokens down by
	// conversation, ordered by id.
	PerConversation []ConversationStats `json:"per_conversation"`
}

// ConversationStats is the part of Stats that belongs to one conversation.
type ConversationStats struct {
	ID            string       `json:"id"`
	Turns         int64        `json:"turns"`
	Sessions      int          `json:"sessions"`
	ContentBytes  int64        `json:"content_bytes"`
	TurnTokens    int64        `json:"turn_tokens"`
	SummaryTokens int64        `json:"summary_tokens"`
	Tiers         []TierStats  `json:"tiers"`
	Archive       ArchiveStats `json:"archive"`
	// Policy and Counters are filled by Memory.Stats, not by stores:
	// the conversation's policy and 002's counters (see Tree.Counters).
	Policy   string         `json:"policy,omitempty"`
	Counters map[string]int `json:"counters,omitempty"`
	// Search and Embeddings are filled by Memory.Stats: SearchHybrid when
	// an embedder is configured and the conversation has current vectors.
	Search     string          `json:"search,omitempty"`
	Embeddings *EmbeddingStats `json:"embeddings,omitempty"`
}

// TierStats counts what lies in one tier. Turns not yet under a level-1
// node are hot. Bytes are content bytes; StoredBytes is what the tier's
// copy takes (rows' content, compressed blocks, or archive bytes).
type TierStats struct {
	Tier        Tier  `json:"tier"`
	Spans       int64 `json:"spans"` // level-1 nodes
	Turns       int64 `json:"turns"`
	Bytes       int64 `json:"bytes"`
	StoredBytes int64 `json:"stored_bytes"`
}

// ArchiveStats describes archive segments. Ratio is RawBytes / Bytes.
type ArchiveStats struct {
	Segments int     `json:"segments"`
	Records  int64   `json:"records"`
	Bytes    int64   `json:"bytes"`     // compressed, on disk
	RawBytes int64   `json:"raw_bytes"` // uncompressed JSON lines
	Ratio    float64 `json:"compression_ratio"`
}

// LevelStats counts the nodes of one pyramid level.
type LevelStats struct {
	Level         int   `json:"level"`
	Nodes         int64 `json:"nodes"`
	SummaryTokens int64 `json:"summary_tokens"`
	SourceTokens  int64 `json:"source_tokens"`
}

// Deletion is the audit record of a deleted conversation.
type Deletion struct {
	Namespace    string    `json:"namespace"`
	Conversation string    `json:"conversation"`
	Turns        int64     `json:"turns"`
	Nodes        int64     `json:"nodes"`
	ContentBytes int64     `json:"content_bytes"`
	Segments     int64     `json:"segments"` // archive segments removed
	Reason       string    `json:"reason,omitempty"`
	At           time.Time `json:"at"`
}

// ClaimStore keeps claims: leases on units of background work (a pending
// model summary, a conversation's tier pass, its missing embeddings, its
// learning pass), so that several processes sharing a store do each unit
// once, and a unit whose holder died is taken over once its claim ends.
//
// A claim names its unit by key and its holder by a string, both opaque
// to the store and compared exactly. It lasts while now is before its
// until; times are the callers' clocks, so processes on several machines
// must keep their claims far longer than the skew between those clocks.
type ClaimStore interface {
	// Claim takes or renews the claim on key for holder until until, and
	// reports whether holder holds it now. A claim of another holder that
	// has not ended (its until is after now) is refused: false, no error,
	// and nothing changes. A free key, one released, or one whose claim
	// ended is taken; the holder may renew its own, to a later or an
	// earlier end. Taking a key is atomic: of several holders claiming it
	// at once, one gets it. EINVALID, changing nothing, for an empty key
	// or holder, or an until not after now.
	Claim(ctx context.Context, key, holder string, now, until time.Time) (bool, error)

	// Release ends holder's claim on key, so that anyone may take it at
	// once. A claim of another holder (one that took the key over after
	// holder's ended), or none, is left as it is, and is no error.
	// EINVALID for an empty key or holder.
	Release(ctx context.Context, key, holder string) error
}
