package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/strata-memory/strata"
)

// tokenizer is the FTS5 tokenizer of both full-text tables: Porter stemming
// over unicode61 with diacritics removed, where combining marks (M*) are
// word characters as letters and digits are, so that words of Indic and
// other scripts written with marks stay whole.
const tokenizer = `porter unicode61 remove_diacritics 2 categories 'L* N* Co M*'`

// migration is one step of the schema. Steps are applied in order, each in
// its own transaction; a step, once released, is never edited: changes are
// new steps appended to migrations.
type migration struct {
	version int
	name    string
	sql     string
}

// migrations is the schema's history. Its last version is the newest schema
// this build can read and write.
var migrations = []migration{
	{1, "initial schema", `
CREATE TABLE conversations (
	pk            INTEGER PRIMARY KEY,
	namespace     TEXT    NOT NULL,
	id            TEXT    NOT NULL,
	policy        TEXT    NOT NULL DEFAULT '',
	created       INTEGER NOT NULL,           -- unix nanoseconds
	turns         INTEGER NOT NULL DEFAULT 0, -- running counters kept by AppendTurns
	sessions      INTEGER NOT NULL DEFAULT 0, -- highest session
	content_bytes INTEGER NOT NULL DEFAULT 0,
	tokens        INTEGER NOT NULL DEFAULT 0,
	first_time    INTEGER,                    -- earliest turn time, unix nanoseconds
	last_time     INTEGER,                    -- latest turn time
	UNIQUE (namespace, id)
);

CREATE TABLE turns (
	pk            INTEGER PRIMARY KEY,        -- rowid of turns_fts
	conversation  INTEGER NOT NULL REFERENCES conversations (pk) ON DELETE CASCADE,
	seq           INTEGER NOT NULL,
	ext_id        TEXT,                       -- NULL when the turn has none: never deduplicated
	session       INTEGER NOT NULL DEFAULT 0,
	session_label TEXT    NOT NULL DEFAULT '',
	role          TEXT    NOT NULL,
	name          TEXT    NOT NULL DEFAULT '',
	content       TEXT    NOT NULL,           -- whole, never truncated
	time          INTEGER,                    -- unix nanoseconds, NULL for the zero time
	model         TEXT    NOT NULL DEFAULT '',
	tool_calls    TEXT,                       -- JSON, arguments kept as exact text
	tool_results  TEXT,                       -- JSON
	tokens        INTEGER NOT NULL DEFAULT 0,
	importance    REAL    NOT NULL DEFAULT 0,
	tags          TEXT,                       -- JSON array
	metadata      TEXT                        -- JSON object
);
CREATE UNIQUE INDEX turns_conversation_seq ON turns (conversation, seq);
CREATE UNIQUE INDEX turns_conversation_ext_id ON turns (conversation, ext_id);

CREATE TABLE nodes (
	pk            INTEGER PRIMARY KEY,        -- rowid of nodes_fts
	id            TEXT    NOT NULL,
	conversation  INTEGER NOT NULL REFERENCES conversations (pk) ON DELETE CASCADE,
	level         INTEGER NOT NULL,
	first_seq     INTEGER NOT NULL,
	last_seq      INTEGER NOT NULL,
	start         INTEGER,                    -- unix nanoseconds
	"end"         INTEGER,
	children      TEXT,                       -- JSON array of node ids
	summary       TEXT    NOT NULL DEFAULT '',
	facts         TEXT,                       -- JSON array
	themes        TEXT,                       -- JSON array
	source_tokens INTEGER NOT NULL DEFAULT 0,
	tokens        INTEGER NOT NULL DEFAULT 0,
	method        TEXT    NOT NULL DEFAULT '',
	status        TEXT    NOT NULL DEFAULT '',
	fallback      TEXT    NOT NULL DEFAULT '',
	created       INTEGER
);
CREATE UNIQUE INDEX nodes_conversation_id ON nodes (conversation, id);
CREATE INDEX nodes_id ON nodes (id);
CREATE INDEX nodes_conversation_level_first ON nodes (conversation, level, first_seq);
CREATE INDEX nodes_conversation_level_last ON nodes (conversation, level, last_seq);

-- Contentless full-text indexes: the text lives in the base tables only.
-- Column text holds the content (summary), segmented for scripts written
-- without spaces; column scope holds the tokens of the row's conversation
-- and namespace, so a scoped search is an index intersection. Turns are
-- never replaced, and contentless_delete costs 30% of the insert rate, so
-- turns_fts does without it (a turn's row can still be removed with the
-- FTS5 'delete' command and its indexed values); nodes are replaced.
CREATE VIRTUAL TABLE turns_fts USING fts5 (text, scope, content = '',
	tokenize = "` + tokenizer + `");
CREATE VIRTUAL TABLE nodes_fts USING fts5 (text, scope, content = '',
	tokenize = "` + tokenizer + `");
`},
	{2, "index of pinned turns; node spans in index order", `
CREATE INDEX turns_pinned ON turns (conversation, seq) WHERE importance >= ` + pinnedLiteral + `;
DROP INDEX nodes_conversation_level_first;
CREATE INDEX nodes_span ON nodes (conversation, level, first_seq, last_seq, id);
`},
	{3, "derived nodes", `
ALTER TABLE nodes ADD COLUMN derived INTEGER NOT NULL DEFAULT 0; -- 1: summary kept out of nodes_fts
`},
	{4, "storage tiers", `
-- Where a turn's content lives: 0 in its row (hot, or pinned in any tier),
-- 1 in the warm block of its level-1 node, 2 in an archive segment, 3
-- expired. A row whose tier is not 0 keeps its seq, ext_id, session, role,
-- name, time, tokens and importance; the rest is with its span.
ALTER TABLE turns ADD COLUMN tier INTEGER NOT NULL DEFAULT 0;
ALTER TABLE turns ADD COLUMN span INTEGER;                     -- pk of the level-1 node holding the content
ALTER TABLE turns ADD COLUMN size INTEGER NOT NULL DEFAULT 0;  -- content bytes
UPDATE turns SET size = length(CAST(content AS BLOB));
-- A level-1 node's tier, as above; block is the zstd-compressed CTF of its
-- turns while warm; segments the archive days (JSON array) while cold.
ALTER TABLE nodes ADD COLUMN tier INTEGER NOT NULL DEFAULT 0;
ALTER TABLE nodes ADD COLUMN block BLOB;
ALTER TABLE nodes ADD COLUMN segments TEXT;
CREATE INDEX nodes_unsettled ON nodes (conversation, level, first_seq) WHERE tier < 2;
-- One row per archive segment: a conversation's cold turns of one day.
CREATE TABLE segments (
	conversation  INTEGER NOT NULL REFERENCES conversations (pk) ON DELETE CASCADE,
	day           TEXT    NOT NULL,  -- YYYY-MM-DD (UTC)
	records       INTEGER NOT NULL,
	bytes         INTEGER NOT NULL,  -- compressed
	raw_bytes     INTEGER NOT NULL,
	PRIMARY KEY (conversation, day)
) WITHOUT ROWID;
-- The audit trail of retention: what was deleted, when, by which rule.
CREATE TABLE expiries (
	pk            INTEGER PRIMARY KEY,
	conversation  INTEGER NOT NULL REFERENCES conversations (pk) ON DELETE CASCADE,
	node          TEXT    NOT NULL,
	first_seq     INTEGER NOT NULL,
	last_seq      INTEGER NOT NULL,
	turns         INTEGER NOT NULL,
	bytes         INTEGER NOT NULL,
	segments      TEXT,              -- JSON array of days
	rule          TEXT    NOT NULL,
	at            INTEGER NOT NULL   -- unix nanoseconds
);
`},
	{5, "node keys and aggregates; conversation time zones and important periods", `
ALTER TABLE nodes ADD COLUMN key TEXT NOT NULL DEFAULT '';        -- period or session of the node's group
ALTER TABLE nodes ADD COLUMN aggregates TEXT;                     -- JSON statistics of the span's metadata
ALTER TABLE conversations ADD COLUMN time_zone TEXT NOT NULL DEFAULT ''; -- IANA name; '' is UTC
ALTER TABLE conversations ADD COLUMN important TEXT;              -- JSON array of period labels marked important
`},
	{6, "model summaries: pending nodes, the model of a node, the log of model calls", `
ALTER TABLE nodes ADD COLUMN pending INTEGER NOT NULL DEFAULT 0;  -- 1: a model summary is due
ALTER TABLE nodes ADD COLUMN model TEXT NOT NULL DEFAULT '';      -- the model that wrote the summary
CREATE INDEX nodes_pending ON nodes (conversation, level, first_seq) WHERE pending = 1;
-- One row per call to a model: what it cost and how it ended.
CREATE TABLE llm_calls (
	pk            INTEGER PRIMARY KEY,
	conversation  INTEGER NOT NULL REFERENCES conversations (pk) ON DELETE CASCADE,
	node          TEXT    NOT NULL,
	level         INTEGER NOT NULL,
	provider      TEXT    NOT NULL,
	model         TEXT    NOT NULL,
	attempt       INTEGER NOT NULL,  -- 1-based, per node and pass
	tokens_in     INTEGER NOT NULL,
	tokens_out    INTEGER NOT NULL,
	elapsed_ms    INTEGER NOT NULL,
	outcome       TEXT    NOT NULL,  -- ok, over_budget, or the error
	at            INTEGER NOT NULL   -- unix nanoseconds
);
CREATE INDEX llm_calls_conversation ON llm_calls (conversation, node);
`},
	{7, "learnings", `
-- Key facts extracted from turns, with provenance and status. A row is
-- never deleted but with its conversation: superseded rows are history.
CREATE TABLE learnings (
	pk            INTEGER PRIMARY KEY,        -- the learning's id
	conversation  INTEGER NOT NULL REFERENCES conversations (pk) ON DELETE CASCADE,
	subject       TEXT    NOT NULL,
	text          TEXT    NOT NULL,
	norm          TEXT    NOT NULL,           -- text as strata.NormalizeLearningText returns it: repeats compare it
	node          TEXT    NOT NULL DEFAULT '',
	first_seq     INTEGER NOT NULL DEFAULT 0,
	last_seq      INTEGER NOT NULL DEFAULT 0,
	status        TEXT    NOT NULL,           -- auto, confirmed, rejected, superseded
	superseded_by INTEGER,                    -- pk of the learning that replaced this one
	created       INTEGER NOT NULL,           -- unix nanoseconds
	updated       INTEGER NOT NULL
);
CREATE INDEX learnings_conversation ON learnings (conversation);
CREATE INDEX learnings_active ON learnings (conversation, subject) WHERE status IN ('auto', 'confirmed');
`},
	{8, "how far learnings have read a conversation", `
ALTER TABLE conversations ADD COLUMN learned_seq INTEGER NOT NULL DEFAULT 0; -- last turn whose level-1 node's facts are learnings
`},
	{9, "live compaction state", `
-- The checkpoint and counters of live compaction, per conversation id. The
-- conversation need not exist in conversations: compaction can run
-- without appending its spans to memory.
CREATE TABLE compaction_state (
	namespace        TEXT    NOT NULL,
	conversation     TEXT    NOT NULL,
	checkpoint       TEXT    NOT NULL,
	turn_count       INTEGER NOT NULL,
	compaction_count INTEGER NOT NULL,
	updated          INTEGER NOT NULL, -- unix nanoseconds
	PRIMARY KEY (namespace, conversation)
) WITHOUT ROWID;
`},
	{10, "embeddings", `
-- The vectors of turns and node summaries: one per item and model, as
-- little-endian float32 values (4 * dim bytes), with the model and
-- dimension that made them. version is the conversation's
-- vector_state.version when the vector was written.
CREATE TABLE turn_vectors (
	pk            INTEGER PRIMARY KEY,
	conversation  INTEGER NOT NULL REFERENCES conversations (pk) ON DELETE CASCADE,
	seq           INTEGER NOT NULL,
	model         TEXT    NOT NULL,
	dim           INTEGER NOT NULL,
	version       INTEGER NOT NULL,
	vec           BLOB    NOT NULL,
	FOREIGN KEY (conversation, seq) REFERENCES turns (conversation, seq) ON DELETE CASCADE
);
CREATE UNIQUE INDEX turn_vectors_item ON turn_vectors (conversation, seq, model);
CREATE INDEX turn_vectors_space ON turn_vectors (conversation, model, dim, version);
CREATE TABLE node_vectors (
	pk            INTEGER PRIMARY KEY,
	node          INTEGER NOT NULL REFERENCES nodes (pk) ON DELETE CASCADE,
	conversation  INTEGER NOT NULL REFERENCES conversations (pk) ON DELETE CASCADE,
	model         TEXT    NOT NULL,
	dim           INTEGER NOT NULL,
	version       INTEGER NOT NULL,
	vec           BLOB    NOT NULL
);
CREATE UNIQUE INDEX node_vectors_item ON node_vectors (node, model);
CREATE INDEX node_vectors_space ON node_vectors (conversation, model, dim, version);
-- How far each conversation's vectors have changed (strata.VectorVersion):
-- version grows with every put and removal; *_removed is the version of
-- the latest removal of a turn's or a node's vector.
CREATE TABLE vector_state (
	conversation  INTEGER PRIMARY KEY REFERENCES conversations (pk) ON DELETE CASCADE,
	version       INTEGER NOT NULL DEFAULT 0,
	turns_removed INTEGER NOT NULL DEFAULT 0,
	nodes_removed INTEGER NOT NULL DEFAULT 0
);
-- A node's vector goes with its summary: when the summary changes (a
-- model summary replaces the extractive one) or the node is removed
-- (ResetPyramid). Every removal of a node's vector is recorded.
CREATE TRIGGER node_summary_changed AFTER UPDATE OF summary ON nodes
WHEN old.summary IS NOT new.summary BEGIN
	DELETE FROM node_vectors WHERE node = new.pk;
END;
CREATE TRIGGER node_vectors_removed AFTER DELETE ON node_vectors BEGIN
	UPDATE vector_state SET version = version + 1, nodes_removed = version + 1 WHERE conversation = old.conversation;
END;
`},
	{11, "merge the index of summaries in wider steps", `
-- Every rollup writes one segment of summaries to nodes_fts. Merging them 8
-- at a time instead of FTS5's default 4 rewrites each entry fewer times:
-- imports run about 5% faster at a million turns, and a search reads at
-- most 7 segments per level instead of 3. The setting persists in
-- nodes_fts_config.
INSERT INTO nodes_fts (nodes_fts, rank) VALUES ('automerge', 8);
`},
	{12, "model replies a node keeps without serving them", `
-- A model's last reply when every try came back over the level's budget:
-- the node serves the shorter summary and keeps this one for review, as
-- JSON (strata.RejectedReply). NULL when there is none. Never indexed.
ALTER TABLE nodes ADD COLUMN rejected TEXT;
`},
	{13, "when spans went cold; both times in the retention audit", `
-- When a level-1 span went cold (unix nanoseconds, by the clock of the
-- pass that archived it): retention counts from it, not from the span's
-- turn times, so importing old history never expires it on the spot.
ALTER TABLE nodes ADD COLUMN cold_at INTEGER;
-- Spans already cold did not record it. The migration's time is the
-- latest they can have gone cold, so counting from it never deletes
-- anything sooner than the rule says; the earliest bound (the node's
-- creation) could delete content the day after an upgrade. Expired spans
-- keep NULL: unknown, and no longer used.
UPDATE nodes SET cold_at = unixepoch() * 1000000000 WHERE level = 1 AND tier = 2;
-- The audit record keeps when the span went cold (NULL for records made
-- before this version) and its newest turn's time (taken from the node
-- for older records).
ALTER TABLE expiries ADD COLUMN cold_at INTEGER;
ALTER TABLE expiries ADD COLUMN newest_turn INTEGER;
UPDATE expiries SET newest_turn = (SELECT n."end" FROM nodes n
	WHERE n.conversation = expiries.conversation AND n.id = expiries.node);
`},
	{14, "the audit record of deleted conversations", `
-- One row per conversation deleted (strata.Deletion): what went and when.
-- It outlives the conversation, so it names it by namespace and id.
CREATE TABLE deletions (
	pk            INTEGER PRIMARY KEY,
	namespace     TEXT    NOT NULL,
	conversation  TEXT    NOT NULL,
	turns         INTEGER NOT NULL,
	nodes         INTEGER NOT NULL,
	content_bytes INTEGER NOT NULL,
	segments      INTEGER NOT NULL,
	reason        TEXT    NOT NULL DEFAULT '',
	at            INTEGER NOT NULL  -- unix nanoseconds
);
CREATE INDEX deletions_namespace ON deletions (namespace, pk);
`},
	{15, "bearer tokens", `
-- Bearer tokens of the server (strata.Token): only the SHA-256 of each
-- secret is kept. Each maps to one namespace.
CREATE TABLE tokens (
	pk        INTEGER PRIMARY KEY,
	id        TEXT    NOT NULL UNIQUE,
	hash      TEXT    NOT NULL UNIQUE,
	namespace TEXT    NOT NULL,
	label     TEXT    NOT NULL DEFAULT '',
	created   INTEGER NOT NULL, -- unix nanoseconds
	revoked   INTEGER           -- unix nanoseconds; NULL while valid
);
CREATE INDEX tokens_namespace ON tokens (namespace, pk);
`},
	{16, "claims on units of background work", `
-- Claims (strata.ClaimStore): a lease on one unit of background work, so
-- that processes sharing this file do each unit once. A row is held by
-- holder while the claimer's clock is before until; a released claim is
-- deleted, an ended one stays until another holder takes the key over.
CREATE TABLE claims (
	unit    TEXT    PRIMARY KEY, -- the claim's key
	holder  TEXT    NOT NULL,
	since   INTEGER NOT NULL, -- unix nanoseconds: when holder took it
	until   INTEGER NOT NULL  -- unix nanoseconds
) WITHOUT ROWID;
`},
	{17, "how far strata watch has read each file", `
-- Watch states (strata.WatchStore): per namespace and file path (exact
-- bytes, a BLOB), the bytes and lines imported and a fingerprint of the
-- file's first head_len bytes.
CREATE TABLE watch_state (
	namespace   TEXT    NOT NULL,
	path        BLOB    NOT NULL,
	byte_offset INTEGER NOT NULL,
	lines       INTEGER NOT NULL,
	head_len    INTEGER NOT NULL,
	head        TEXT    NOT NULL,
	updated     INTEGER NOT NULL, -- unix nanoseconds
	PRIMARY KEY (namespace, path)
) WITHOUT ROWID;
`},
	{18, "dictionaries of compressed node texts", `
-- zstd dictionaries trained on the store's own node texts (textcodec.go):
-- once there is one, summaries, facts and themes are written as frames
-- made with the newest, which name it by id. Never deleted.
CREATE TABLE text_dicts (
	id      INTEGER PRIMARY KEY, -- the dictionary id the frames carry
	dict    BLOB    NOT NULL,
	created INTEGER NOT NULL     -- unix nanoseconds
);
-- A compressed summary differs from its text, so the trigger that dropped
-- a node's vectors when its summary changed would drop them when it is
-- compressed: putNodes compares the texts and drops them itself.
DROP TRIGGER node_summary_changed;
`},
	{19, "log of summary index changes", `
-- The row key of every node inserted into, changed in or deleted from
-- nodes_fts (derived nodes are not indexed), so that a process holding
-- summaries in memory (sumindex.go) reads what changed since it looked.
-- The newest 32768 entries are kept; a process further behind loads again.
CREATE TABLE node_fts_log (
	seq          INTEGER PRIMARY KEY AUTOINCREMENT, -- never reused, whatever is deleted
	conversation INTEGER NOT NULL,
	node         INTEGER NOT NULL
);
CREATE TRIGGER node_fts_log_insert AFTER INSERT ON nodes WHEN NEW.derived = 0
BEGIN
	INSERT INTO node_fts_log (conversation, node) VALUES (NEW.conversation, NEW.pk);
END;
CREATE TRIGGER node_fts_log_update AFTER UPDATE OF summary, derived ON nodes WHEN OLD.derived = 0 OR NEW.derived = 0
BEGIN
	INSERT INTO node_fts_log (conversation, node) VALUES (NEW.conversation, NEW.pk);
END;
CREATE TRIGGER node_fts_log_delete AFTER DELETE ON nodes WHEN OLD.derived = 0
BEGIN
	INSERT INTO node_fts_log (conversation, node) VALUES (OLD.conversation, OLD.pk);
END;
-- Each word's count of summaries, for BM25 over a file of several
-- conversations.
CREATE VIRTUAL TABLE nodes_fts_vocab USING fts5vocab (nodes_fts, 'col');
CREATE TRIGGER node_fts_log_trim AFTER INSERT ON node_fts_log
BEGIN
	DELETE FROM node_fts_log WHERE seq <= NEW.seq - 32768;
END;
-- The same for turns (turnindex.go): a turn enters or leaves turns_fts
-- with its tier, and its indexed text is its content and tool calls.
-- Appended turns need no entry: their row keys are higher.
CREATE TABLE turn_fts_log (
	seq          INTEGER PRIMARY KEY AUTOINCREMENT,
	conversation INTEGER NOT NULL,
	turn         INTEGER NOT NULL
);
CREATE TRIGGER turn_fts_log_update AFTER UPDATE OF tier, content, tool_calls, tool_results ON turns
BEGIN
	INSERT INTO turn_fts_log (conversation, turn) VALUES (NEW.conversation, NEW.pk);
END;
CREATE TRIGGER turn_fts_log_delete AFTER DELETE ON turns
BEGIN
	INSERT INTO turn_fts_log (conversation, turn) VALUES (OLD.conversation, OLD.pk);
END;
CREATE TRIGGER turn_fts_log_trim AFTER INSERT ON turn_fts_log
BEGIN
	DELETE FROM turn_fts_log WHERE seq <= NEW.seq - 32768;
END;
`},
	{20, "node texts compressed against their children", `
-- Holds its one row once a derived node's text has been written as a
-- frame against its children's (derivedtext.go): from then on, a write
-- that changes or removes nodes first rewrites the parents framed
-- against them, and builds that predate such frames refuse the file.
CREATE TABLE derived_frames (id INTEGER PRIMARY KEY CHECK (id = 1));
`},
	{21, "cold turns stay in the full-text index", `
-- A cold turn keeps its entry in turns_fts: every turn is findable by its
-- own words whatever its tier. Earlier versions took a cold span's turns
-- out of the index; their level-1 nodes are listed here until Open has
-- indexed those turns again from the span's segments (coldfts.go). While
-- a node is listed, its cold rows are not in turns_fts.
CREATE TABLE cold_unindexed (node INTEGER PRIMARY KEY);
INSERT INTO cold_unindexed (node) SELECT pk FROM nodes WHERE level = 1 AND tier = 2;
`},
	{22, "checksums of hot turn rows", `
-- The CRC-32C of a hot row's content fields (turnsum.go), checked on every
-- read; NULL while the content is with its span (warm or cold), whose
-- block or segment is checked instead.
ALTER TABLE turns ADD COLUMN crc INTEGER;
UPDATE turns SET crc = strata_turn_crc(` + turnSumCols + `) WHERE tier = 0;
`},
	{23, "the parts and source turns of learnings", `
-- A learning read as a statement about a named subject keeps its parts
-- (strata.Learning: about, attribute, value), the date its time words
-- name (fact_when), and the turns it came from, as a JSON list of
-- {"seq", "ext_id"} (empty text: none known).
ALTER TABLE learnings ADD COLUMN about     TEXT NOT NULL DEFAULT '';
ALTER TABLE learnings ADD COLUMN attribute TEXT NOT NULL DEFAULT '';
ALTER TABLE learnings ADD COLUMN value     TEXT NOT NULL DEFAULT '';
ALTER TABLE learnings ADD COLUMN fact_when TEXT NOT NULL DEFAULT '';
ALTER TABLE learnings ADD COLUMN sources   TEXT NOT NULL DEFAULT '';
`},
	{24, "learnings by subject, whatever their status", `
-- Adding learnings reads the ones of each new subject that are not
-- superseded (rejected ones included), which learnings_active does not
-- cover: without this index each read scanned every learning of the
-- conversation, so a conversation's learn pass grew with the square of
-- its learnings.
CREATE INDEX IF NOT EXISTS learnings_subject ON learnings (conversation, subject);
`},
	{25, "full-text tables without stop words", `
-- What the full-text tables are given of a text (ftsForm, segment.go):
-- 1, the text itself; 2, its words without the stop words no query
-- searches for, about half the index of chat text. A file that already
-- indexes text keeps form 1 for good (removing a row from a contentless
-- table takes the exact text it was given); a new one takes form 2.
CREATE TABLE IF NOT EXISTS fts_form (
	id   INTEGER PRIMARY KEY CHECK (id = 1),
	form INTEGER NOT NULL CHECK (form IN (1, 2))
);
INSERT OR IGNORE INTO fts_form (id, form) SELECT 1, CASE
	WHEN EXISTS (SELECT 1 FROM turns) OR EXISTS (SELECT 1 FROM nodes) THEN 1 ELSE 2 END;
`},
}

// pinnedLiteral is strata.PinnedImportance as SQL text: the pinned-turns
// index and the queries that use it must spell the same literal.
const pinnedLiteral = "0.8"

// SchemaVersion is the newest schema version this build knows.
func SchemaVersion() int { return migrations[len(migrations)-1].version }

// MigratedFrom is the schema version the file had when Open found it (0
// for a new file); Open brought it to SchemaVersion.
func (s *Store) MigratedFrom() int { return s.from }

// migrate brings the schema up to SchemaVersion, one migration per
// transaction. Transactions on the write pool begin IMMEDIATE, so two
// processes opening the same new file migrate it once.
func (s *Store) migrate(ctx context.Context) error {
	if _, err := s.w.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY,
		name    TEXT    NOT NULL,
		applied INTEGER NOT NULL -- unix nanoseconds
	)`); err != nil {
		return fmt.Errorf("sqlite: opening %s: %w", s.path, err)
	}
	if err := s.w.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&s.from); err != nil {
		return fmt.Errorf("sqlite: opening %s: %w", s.path, err)
	}
	for _, m := range migrations {
		if err := s.apply(ctx, m); err != nil {
			return err
		}
	}
	return nil
}

// apply runs m in its own transaction unless the file already has it. It
// refuses a file whose schema is newer than this build.
func (s *Store) apply(ctx context.Context, m migration) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: migrating %s: %w", s.path, err)
	}
	defer tx.Rollback()
	var cur int
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&cur); err != nil {
		return fmt.Errorf("sqlite: migrating %s: %w", s.path, err)
	}
	if cur > SchemaVersion() {
		return strata.Errorf(strata.ECONFLICT,
			"sqlite: %s has schema version %d, newer than this build of strata knows (%d); use a newer strata",
			s.path, cur, SchemaVersion())
	}
	if cur >= m.version {
		return nil
	}
	if _, err := tx.ExecContext(ctx, m.sql); err != nil {
		return fmt.Errorf("sqlite: migrating %s to version %d (%s): %w", s.path, m.version, m.name, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied) VALUES (?, ?, ?)`,
		m.version, m.name, time.Now().UnixNano()); err != nil {
		return fmt.Errorf("sqlite: migrating %s to version %d: %w", s.path, m.version, err)
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, m.version)); err != nil {
		return fmt.Errorf("sqlite: migrating %s to version %d: %w", s.path, m.version, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: migrating %s to version %d: %w", s.path, m.version, err)
	}
	return nil
}
