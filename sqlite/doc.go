// Package sqlite is strata's embedded Store: one SQLite file holding
// conversations, turns and summary nodes, with SQLite's FTS5 full-text
// index for BM25 search. It uses the pure-Go driver modernc.org/sqlite, so
// binaries need no cgo.
//
// # Layout
//
// Open creates the file (and its directory) if missing and brings its schema
// up to date with the ordered migrations embedded in this package, each in
// its own transaction, recorded in the schema_migrations table and mirrored
// in PRAGMA user_version. A file whose schema is newer than this build knows
// is refused with a clear error rather than misread.
//
// The tables are conversations (with running counters, so Conversation and
// Stats do not scan turns), turns (content stored whole as TEXT, time as
// unix nanoseconds, tool calls, tool results, tags and metadata as JSON),
// nodes, and two contentless FTS5 tables, turns_fts and nodes_fts, whose
// rowids are the base tables' integer primary keys. The FTS rows are written
// explicitly in the same transaction as the base rows (not by triggers,
// which are about 3x slower). Once Vacuum has trained a zstd dictionary on
// the store's own node texts (table text_dicts), summaries, facts and
// themes are written as frames made with it, about half their size; the
// index takes the text itself (textcodec.go). Vacuum also rewrites the
// texts of derived nodes (upper levels that repeat their children's
// sentences) as frames made against their children's texts, a fifth of
// that (derivedtext.go). A cold turn's row
// keeps what filters and orders it (seq, ext_id, session, time, tokens,
// importance); its segment holds the rest.
//
// # Tiers and the archive
//
// The formats of a span's turns outside their rows (warm CTF blocks in
// nodes.block, archive records) are those of internal/spanfmt, which every
// store shares; this package holds only the SQL around them. Cold turns
// live in archive segments read and written through archive.Segments over
// an archive.Blobs: the files of ArchiveRoot(path) by default, or the
// Blobs given to Open with WithBlobs. The segments table records what each
// segment holds (records, bytes; its column day holds the segment's
// period, a month, or a day for segments of earlier versions) and a cold
// node names the periods of its segments, so Stats and the tier code
// never list the blobs; only the cleanup of a pyramid reset and the check
// for orphaned segments at Open do.
//
// # Concurrency
//
// The database runs in WAL mode with synchronous=NORMAL. Writes go through
// a dedicated single-connection pool whose transactions begin IMMEDIATE, so
// concurrent writers in one process queue in Go instead of failing with
// SQLITE_BUSY; writers in other processes wait up to the busy timeout
// (10 s). Reads use a separate pool of several read-only connections and
// never wait for writers.
//
// # Search
//
// The FTS5 tokenizer is porter unicode61 with remove_diacritics 2 and
// marks (M*) counted as word characters, so words match their simple
// inflections ("deploy" finds "deployed"), case and accents are ignored,
// and Indic words stay whole. Scripts written without spaces (Chinese,
// Japanese kana and kanji, Thai, Lao, Khmer, Myanmar) are indexed as
// character unigrams and bigrams, so any substring of two or more
// characters, or a single character, is findable. A query's free text is
// never parsed as FTS5 syntax: its words are extracted, lowercased, stripped
// of English stop words, quoted and ORed, and ranked by bm25 (Score =
// -bm25, higher is better) inside a LIMITed subquery before the base rows
// are joined. Files created from schema 25 on give the index a text's
// words without those stop words (segment.go's ftsForm), which no query
// asks for: the same rows match, the index of chat text is about half as
// large, and bm25 counts a document's length in content words; files
// that held text before schema 25 keep indexing whole texts, since a
// contentless table's row can only be removed with the text it was
// given. Each FTS row also carries scope tokens for its conversation
// and namespace, so a search limited to a conversation or a namespace is an
// index intersection, not a filter after ranking (the intersection is
// skipped when the scope holds every conversation in the file). Turn and
// summary hits are ranked in their own indexes; for Kind "" the two lists
// are merged by score.
//
// The summaries of a conversation of 20,000 turns or more are ranked in
// memory instead (sumindex.go), with the same scores: FTS5's bm25 scores
// every summary that holds a query word, which at a million turns is most
// of a query's cost. So are the newest turns a query package searches
// (SearchQuery.FromSeq; turnindex.go): bm25 counts each word's documents
// over every indexed turn of the file.
// The indexes count FTS5's own tokens (ftstoken.go), are loaded by the
// process's first search of the conversation, and are kept in step with
// writes from any process by node_fts_log and turn_fts_log, which
// triggers fill. WithSummaryIndex(false) turns them off for a process that
// answers one query.
package sqlite
