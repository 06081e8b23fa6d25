package strata

import "time"

// CompactionState is what live compaction keeps per (namespace,
// conversation) between calls, so that a restarted agent resumes where it
// was: the latest checkpoint (which carries its identifier ledger in its
// Critical Context section), how many messages of the live list have been
// handed to memory so far, and how many compactions ran. Package compact
// reads and writes it through a Store.
type CompactionState struct {
	Checkpoint      string    `json:"checkpoint,omitempty"`
	TurnCount       int       `json:"turn_count"`
	CompactionCount int       `json:"compaction_count"`
	Updated         time.Time `json:"updated,omitzero"`
}

// ConversationCompaction is the live-compaction state saved for one
// conversation id.
type ConversationCompaction struct {
	Conversation string `json:"conversation"`
	CompactionState
}
