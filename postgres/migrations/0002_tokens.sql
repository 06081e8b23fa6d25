-- Bearer tokens of the server (strata.Token): only the SHA-256 of each
-- secret is kept, so several servers on one database share them.
CREATE TABLE tokens (
	pk        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	id        text   NOT NULL UNIQUE,
	hash      text   NOT NULL UNIQUE,
	namespace text   NOT NULL,
	label     text   NOT NULL DEFAULT '',
	created   bigint NOT NULL,
	revoked   bigint
);
CREATE INDEX tokens_namespace ON tokens (namespace);
