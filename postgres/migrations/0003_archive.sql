-- Archive segments in the database, so that every process sharing it
-- reads the same cold turns: one row per blob of package archive (a
-- zstd-compressed segment, one per conversation and UTC day), keyed by its
-- blob key. Keys compare byte by byte (COLLATE "C"), so that a range of
-- keys is a key prefix and List sorts as Go sorts strings. The content is
-- already compressed: it is stored out of line without PostgreSQL's own
-- compression.
CREATE TABLE archive (
	key     text COLLATE "C" PRIMARY KEY,
	data    bytea  NOT NULL,
	updated bigint NOT NULL  -- unix nanoseconds of the last write
);
ALTER TABLE archive ALTER COLUMN data SET STORAGE EXTERNAL;

-- What each segment of a conversation holds, as package sqlite keeps it:
-- written in the transaction that writes the segment, so it always
-- describes the blob as it is.
CREATE TABLE segments (
	conversation  bigint NOT NULL REFERENCES conversations (pk) ON DELETE CASCADE,
	day           text   NOT NULL,             -- YYYY-MM-DD, UTC
	records       bigint NOT NULL,
	bytes         bigint NOT NULL,
	raw_bytes     bigint NOT NULL,
	PRIMARY KEY (conversation, day)
);

-- The level-1 spans beyond the hot tier, which tier moves and reads look up.
CREATE INDEX nodes_tiered ON nodes (conversation, first_seq) WHERE level = 1 AND tier > 0;
