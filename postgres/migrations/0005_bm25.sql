-- BM25 statistics of the full-text indexes, so that search ranks as
-- SQLite's FTS5 does (inverse document frequency, length normalization)
-- instead of by ts_rank. Each row of turn_index and node_index is a
-- document; its length is its number of words, and the statistics of
-- each conversation are the number of its documents, their total length
-- and, per lexeme, the number of its documents holding it. Triggers on
-- the two index tables keep them in the transaction that writes the
-- index, whichever statement does (appends, node replacement, tier
-- moves, deletions).

-- A document's length is the number of its words (stop words included),
-- which the statements that write the index give as strata_fts_length
-- of the words they index (separated by single spaces, as package textseg
-- writes them). Rows indexed before this version, or written without it,
-- count the position of their last lexeme instead (strata_fts_words):
-- their words up to the last that is not a stop word.
CREATE FUNCTION strata_fts_length(words text) RETURNS integer
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
	RETURN cardinality(string_to_array(btrim(words, ' '), ' '));
CREATE FUNCTION strata_fts_words(v tsvector) RETURNS integer
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
	RETURN (SELECT coalesce(max(u.positions[cardinality(u.positions)]), 0) FROM unnest(v) AS u);

ALTER TABLE turn_index ADD COLUMN words integer;
ALTER TABLE node_index ADD COLUMN words integer;
UPDATE turn_index SET words = strata_fts_words(fts);
UPDATE node_index SET words = strata_fts_words(fts);
ALTER TABLE turn_index ALTER COLUMN words SET NOT NULL;
ALTER TABLE node_index ALTER COLUMN words SET NOT NULL;
CREATE FUNCTION strata_fts_fill() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	NEW.words := strata_fts_words(NEW.fts);
	RETURN NEW;
END $$;
CREATE TRIGGER turn_index_words BEFORE INSERT ON turn_index
	FOR EACH ROW WHEN (NEW.words IS NULL) EXECUTE FUNCTION strata_fts_fill();
CREATE TRIGGER node_index_words BEFORE INSERT ON node_index
	FOR EACH ROW WHEN (NEW.words IS NULL) EXECUTE FUNCTION strata_fts_fill();

-- kind is 0 for turn_index, 1 for node_index. A lexeme whose count falls
-- to 0 keeps its row until its conversation is deleted.
CREATE TABLE fts_docs (
	conversation  bigint   NOT NULL,
	kind          smallint NOT NULL,
	docs          bigint   NOT NULL,
	words         bigint   NOT NULL,
	PRIMARY KEY (conversation, kind)
);
CREATE TABLE fts_terms (
	conversation  bigint   NOT NULL,
	kind          smallint NOT NULL,
	lexeme        text     NOT NULL,
	docs          bigint   NOT NULL,
	PRIMARY KEY (conversation, kind, lexeme)
);

INSERT INTO fts_docs (conversation, kind, docs, words)
	SELECT conversation, 0, count(*), sum(words) FROM turn_index GROUP BY conversation;
INSERT INTO fts_docs (conversation, kind, docs, words)
	SELECT conversation, 1, count(*), sum(words) FROM node_index GROUP BY conversation;
INSERT INTO fts_terms (conversation, kind, lexeme, docs)
	SELECT i.conversation, 0, u.lexeme, count(*) FROM turn_index i, unnest(i.fts) AS u GROUP BY 1, 3;
INSERT INTO fts_terms (conversation, kind, lexeme, docs)
	SELECT i.conversation, 1, u.lexeme, count(*) FROM node_index i, unnest(i.fts) AS u GROUP BY 1, 3;

-- strata_fts_added and strata_fts_removed count the documents a statement
-- added to or removed from an index (TG_ARGV[0] is its kind). Rows are
-- taken in lexeme order, so that two writers never wait for each other's
-- rows in opposite orders.
CREATE FUNCTION strata_fts_added() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
	k smallint := TG_ARGV[0]::smallint;
BEGIN
	IF NOT EXISTS (SELECT FROM new_rows) THEN
		RETURN NULL;
	END IF;
	INSERT INTO fts_docs AS f (conversation, kind, docs, words)
		SELECT n.conversation, k, count(*), sum(n.words) FROM new_rows n GROUP BY n.conversation ORDER BY 1
		ON CONFLICT (conversation, kind) DO UPDATE SET docs = f.docs + excluded.docs, words = f.words + excluded.words;
	INSERT INTO fts_terms AS f (conversation, kind, lexeme, docs)
		SELECT n.conversation, k, u.lexeme, count(*) FROM new_rows n, unnest(n.fts) AS u GROUP BY 1, 3 ORDER BY 1, 3
		ON CONFLICT (conversation, kind, lexeme) DO UPDATE SET docs = f.docs + excluded.docs;
	RETURN NULL;
END $$;

CREATE FUNCTION strata_fts_removed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
	k smallint := TG_ARGV[0]::smallint;
BEGIN
	IF NOT EXISTS (SELECT FROM old_rows) THEN
		RETURN NULL;
	END IF;
	UPDATE fts_docs f SET docs = f.docs - d.docs, words = f.words - d.words
		FROM (SELECT o.conversation, count(*) AS docs, sum(o.words) AS words FROM old_rows o GROUP BY 1) d
		WHERE f.conversation = d.conversation AND f.kind = k;
	UPDATE fts_terms f SET docs = f.docs - d.docs
		FROM (SELECT o.conversation, u.lexeme, count(*) AS docs FROM old_rows o, unnest(o.fts) AS u GROUP BY 1, 2 ORDER BY 1, 2) d
		WHERE f.conversation = d.conversation AND f.kind = k AND f.lexeme = d.lexeme;
	RETURN NULL;
END $$;

-- A trigger with transition tables serves one event; an update is a
-- removal and an addition.
CREATE TRIGGER turn_index_added AFTER INSERT ON turn_index
	REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION strata_fts_added(0);
CREATE TRIGGER turn_index_removed AFTER DELETE ON turn_index
	REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION strata_fts_removed(0);
CREATE TRIGGER turn_index_updated_old AFTER UPDATE ON turn_index
	REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION strata_fts_removed(0);
CREATE TRIGGER turn_index_updated_new AFTER UPDATE ON turn_index
	REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION strata_fts_added(0);
CREATE TRIGGER node_index_added AFTER INSERT ON node_index
	REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION strata_fts_added(1);
CREATE TRIGGER node_index_removed AFTER DELETE ON node_index
	REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION strata_fts_removed(1);
CREATE TRIGGER node_index_updated_old AFTER UPDATE ON node_index
	REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION strata_fts_removed(1);
CREATE TRIGGER node_index_updated_new AFTER UPDATE ON node_index
	REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION strata_fts_added(1);

-- A deleted conversation's index rows would otherwise go one turn at a
-- time (by the foreign key of each turn), each a statement for the
-- triggers above: remove them in one statement first, then the
-- statistics.
CREATE FUNCTION strata_fts_conversation_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	DELETE FROM turn_index WHERE conversation = OLD.pk;
	DELETE FROM node_index WHERE node IN (SELECT pk FROM nodes WHERE conversation = OLD.pk);
	DELETE FROM fts_docs WHERE conversation = OLD.pk;
	DELETE FROM fts_terms WHERE conversation = OLD.pk;
	RETURN OLD;
END $$;
CREATE TRIGGER conversation_fts_deleted BEFORE DELETE ON conversations
	FOR EACH ROW EXECUTE FUNCTION strata_fts_conversation_deleted();

-- Search keeps, beyond the best rows, one more for each row that is not
-- an item's first part (a turn or summary of more than one part): these
-- count them.
CREATE INDEX turn_index_parts ON turn_index (conversation) WHERE part > 0;
CREATE INDEX node_index_parts ON node_index (conversation) WHERE part > 0;
