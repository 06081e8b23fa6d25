-- The initial schema. Times are unix nanoseconds (bigint): timestamptz
-- keeps microseconds only, and turns keep their nanoseconds. Content and
-- the compaction checkpoint are bytea, so that any bytes (NUL included)
-- come back exactly; JSON columns are text, written by encoding/json.

CREATE EXTENSION IF NOT EXISTS vector;
CREATE EXTENSION IF NOT EXISTS unaccent;

-- Full-text configuration: English stemming after accents are removed,
-- over text the store has already split into words (package textseg).
CREATE TEXT SEARCH CONFIGURATION strata_text (COPY = english);
ALTER TEXT SEARCH CONFIGURATION strata_text
	ALTER MAPPING FOR word, hword, hword_part, asciiword, asciihword, hword_asciipart
	WITH unaccent, english_stem;

-- tsquery_or ORs two queries (the || operator); the aggregate ORs a
-- query's terms.
CREATE AGGREGATE strata_or_agg (tsquery) (SFUNC = tsquery_or, STYPE = tsquery);

CREATE TABLE conversations (
	pk            bigint  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	namespace     text    NOT NULL,
	id            text    NOT NULL,
	policy        text    NOT NULL DEFAULT '',
	created       bigint  NOT NULL,
	turns         bigint  NOT NULL DEFAULT 0,  -- running counters kept by AppendTurns
	sessions      integer NOT NULL DEFAULT 0,  -- highest session
	content_bytes bigint  NOT NULL DEFAULT 0,
	tokens        bigint  NOT NULL DEFAULT 0,
	first_time    bigint,                      -- earliest turn time
	last_time     bigint,                      -- latest turn time
	time_zone     text    NOT NULL DEFAULT '', -- IANA name; '' is UTC
	important     text,                        -- JSON array of period labels
	learned_seq   bigint  NOT NULL DEFAULT 0,
	UNIQUE (namespace, id)
);

-- Tiers as in package sqlite: 0 hot (content in the row), 1 warm, 2 cold,
-- 3 expired; span is the pk of the level-1 node holding the content.
CREATE TABLE turns (
	pk            bigint  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	conversation  bigint  NOT NULL REFERENCES conversations (pk) ON DELETE CASCADE,
	seq           bigint  NOT NULL,
	ext_id        text,                        -- NULL: never deduplicated
	session       integer NOT NULL DEFAULT 0,
	session_label text    NOT NULL DEFAULT '',
	role          text    NOT NULL,
	name          text    NOT NULL DEFAULT '',
	content       bytea,                       -- whole; NULL once it lives with its span
	time          bigint,                      -- NULL for the zero time
	model         text    NOT NULL DEFAULT '',
	tool_calls    text,                        -- JSON, arguments kept as exact text
	tool_results  text,                        -- JSON
	tokens        integer NOT NULL DEFAULT 0,
	importance    double precision NOT NULL DEFAULT 0,
	tags          text,                        -- JSON array
	metadata      text,                        -- JSON object
	tier          smallint NOT NULL DEFAULT 0,
	span          bigint,
	size          bigint  NOT NULL DEFAULT 0,  -- content bytes
	UNIQUE (conversation, seq),
	UNIQUE (conversation, ext_id)
);
CREATE INDEX turns_pinned ON turns (conversation, seq) WHERE importance >= 0.8;

-- The full-text index of turns: one row per part of a turn's words (a
-- tsvector holds at most 1 MB of lexemes, and a turn can be bigger).
CREATE TABLE turn_index (
	conversation  bigint  NOT NULL,
	seq           bigint  NOT NULL,
	part          integer NOT NULL,
	fts           tsvector NOT NULL,
	PRIMARY KEY (conversation, seq, part),
	FOREIGN KEY (conversation, seq) REFERENCES turns (conversation, seq) ON DELETE CASCADE
);
CREATE INDEX turn_index_fts ON turn_index USING gin (fts);

CREATE TABLE nodes (
	pk            bigint  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	id            text    NOT NULL,
	conversation  bigint  NOT NULL REFERENCES conversations (pk) ON DELETE CASCADE,
	level         integer NOT NULL,
	first_seq     bigint  NOT NULL,
	last_seq      bigint  NOT NULL,
	start         bigint,
	"end"         bigint,
	children      text,                        -- JSON array of node ids
	summary       text    NOT NULL DEFAULT '',
	facts         text,                        -- JSON array (ranges into the summary or texts)
	themes        text,                        -- JSON array
	source_tokens integer NOT NULL DEFAULT 0,
	tokens        integer NOT NULL DEFAULT 0,
	method        text    NOT NULL DEFAULT '',
	status        text    NOT NULL DEFAULT '',
	fallback      text    NOT NULL DEFAULT '',
	created       bigint,
	derived       boolean NOT NULL DEFAULT false, -- summary kept out of the index
	tier          smallint NOT NULL DEFAULT 0,
	block         bytea,                       -- warm copy of the span
	segments      text,                        -- JSON array of archive days while cold
	key           text    NOT NULL DEFAULT '',
	aggregates    text,                        -- JSON
	pending       boolean NOT NULL DEFAULT false, -- a model summary is due
	model         text    NOT NULL DEFAULT '',
	rejected      text,                        -- JSON strata.RejectedReply
	cold_at       bigint,
	UNIQUE (conversation, id)
);
CREATE INDEX nodes_id ON nodes (id);
CREATE INDEX nodes_span ON nodes (conversation, level, first_seq, last_seq, id);
CREATE INDEX nodes_last ON nodes (conversation, level, last_seq);
CREATE INDEX nodes_pending ON nodes (conversation, level, first_seq) WHERE pending;

-- The full-text index of summaries, as turn_index.
CREATE TABLE node_index (
	node          bigint  NOT NULL REFERENCES nodes (pk) ON DELETE CASCADE,
	part          integer NOT NULL,
	conversation  bigint  NOT NULL,
	fts           tsvector NOT NULL,
	PRIMARY KEY (node, part)
);
CREATE INDEX node_index_fts ON node_index USING gin (fts);

-- The audit trail of retention.
CREATE TABLE expiries (
	pk            bigint  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	conversation  bigint  NOT NULL REFERENCES conversations (pk) ON DELETE CASCADE,
	node          text    NOT NULL,
	first_seq     bigint  NOT NULL,
	last_seq      bigint  NOT NULL,
	turns         bigint  NOT NULL,
	bytes         bigint  NOT NULL,
	segments      text,                        -- JSON array of days
	rule          text    NOT NULL,
	at            bigint  NOT NULL,
	cold_at       bigint,
	newest_turn   bigint
);
CREATE INDEX expiries_conversation ON expiries (conversation, pk);

CREATE TABLE llm_calls (
	pk            bigint  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	conversation  bigint  NOT NULL REFERENCES conversations (pk) ON DELETE CASCADE,
	node          text    NOT NULL,
	level         integer NOT NULL,
	provider      text    NOT NULL,
	model         text    NOT NULL,
	attempt       integer NOT NULL,
	tokens_in     integer NOT NULL,
	tokens_out    integer NOT NULL,
	elapsed_ms    bigint  NOT NULL,
	outcome       text    NOT NULL,
	at            bigint  NOT NULL
);
CREATE INDEX llm_calls_conversation ON llm_calls (conversation, pk);

CREATE TABLE learnings (
	pk            bigint  GENERATED ALWAYS AS IDENTITY PRIMARY KEY, -- the learning's id
	conversation  bigint  NOT NULL REFERENCES conversations (pk) ON DELETE CASCADE,
	subject       text    NOT NULL,
	text          text    NOT NULL,
	norm          text    NOT NULL,            -- strata.NormalizeLearningText(text)
	node          text    NOT NULL DEFAULT '',
	first_seq     bigint  NOT NULL DEFAULT 0,
	last_seq      bigint  NOT NULL DEFAULT 0,
	status        text    NOT NULL,            -- auto, confirmed, rejected, superseded
	superseded_by bigint,
	created       bigint  NOT NULL,
	updated       bigint  NOT NULL
);
CREATE INDEX learnings_conversation ON learnings (conversation, pk);
CREATE INDEX learnings_active ON learnings (conversation, subject) WHERE status IN ('auto', 'confirmed');

-- Live compaction state; the conversation need not exist.
CREATE TABLE compaction_state (
	namespace        text    NOT NULL,
	conversation     text    NOT NULL,
	checkpoint       bytea   NOT NULL,
	turn_count       bigint  NOT NULL,
	compaction_count bigint  NOT NULL,
	updated          bigint  NOT NULL,
	PRIMARY KEY (namespace, conversation)
);

-- Vectors of turns and summaries, one per item and model; vec has no
-- fixed dimension (models differ), dim says it.
CREATE TABLE turn_vectors (
	conversation  bigint  NOT NULL,
	seq           bigint  NOT NULL,
	model         text    NOT NULL,
	dim           integer NOT NULL,
	version       bigint  NOT NULL,
	vec           vector  NOT NULL,
	PRIMARY KEY (conversation, seq, model),
	FOREIGN KEY (conversation, seq) REFERENCES turns (conversation, seq) ON DELETE CASCADE
);
CREATE INDEX turn_vectors_space ON turn_vectors (conversation, model, dim, version);
CREATE TABLE node_vectors (
	node          bigint  NOT NULL REFERENCES nodes (pk) ON DELETE CASCADE,
	conversation  bigint  NOT NULL,
	model         text    NOT NULL,
	dim           integer NOT NULL,
	version       bigint  NOT NULL,
	vec           vector  NOT NULL,
	PRIMARY KEY (node, model)
);
CREATE INDEX node_vectors_space ON node_vectors (conversation, model, dim, version);
-- strata.VectorVersion of each conversation.
CREATE TABLE vector_state (
	conversation  bigint  PRIMARY KEY REFERENCES conversations (pk) ON DELETE CASCADE,
	version       bigint  NOT NULL DEFAULT 0,
	turns_removed bigint  NOT NULL DEFAULT 0,
	nodes_removed bigint  NOT NULL DEFAULT 0
);
-- A node's vector goes with its summary; every removal of a node's vector
-- is recorded in vector_state.
CREATE FUNCTION strata_node_summary_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	DELETE FROM node_vectors WHERE node = NEW.pk;
	RETURN NULL;
END $$;
CREATE TRIGGER node_summary_changed AFTER UPDATE OF summary ON nodes
	FOR EACH ROW WHEN (OLD.summary IS DISTINCT FROM NEW.summary)
	EXECUTE FUNCTION strata_node_summary_changed();
CREATE FUNCTION strata_node_vectors_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	UPDATE vector_state SET version = version + 1, nodes_removed = version + 1
		WHERE conversation = OLD.conversation;
	RETURN NULL;
END $$;
CREATE TRIGGER node_vectors_removed AFTER DELETE ON node_vectors
	FOR EACH ROW EXECUTE FUNCTION strata_node_vectors_removed();

CREATE TABLE deletions (
	pk            bigint  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	namespace     text    NOT NULL,
	conversation  text    NOT NULL,
	turns         bigint  NOT NULL,
	nodes         bigint  NOT NULL,
	content_bytes bigint  NOT NULL,
	segments      bigint  NOT NULL,
	reason        text    NOT NULL DEFAULT '',
	at            bigint  NOT NULL
);
CREATE INDEX deletions_namespace ON deletions (namespace, pk);
