-- Watch states (strata.WatchStore): per namespace and file path (exact
-- bytes: paths need not be UTF-8), the bytes and lines imported and a
-- fingerprint of the file's first head_len bytes.
CREATE TABLE watch_state (
	namespace   text   NOT NULL,
	path        bytea  NOT NULL,
	byte_offset bigint NOT NULL,
	lines       bigint NOT NULL,
	head_len    bigint NOT NULL,
	head        text   NOT NULL,
	updated     bigint NOT NULL, -- unix nanoseconds
	PRIMARY KEY (namespace, path)
);
