package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"hash/maphash"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/strata-memory/strata/internal/gencache"

	"github.com/strata-memory/strata"
)

// Node texts (summaries, facts, themes) are most of what a long history
// keeps in the database: at a million turns, 123 MB against 242 MB of raw
// turns as JSON lines. One node's text is a few hundred bytes, too little
// for a compressor on its own (1.4x), but against a dictionary trained on
// the store's own summaries it compresses about 2x. So a store keeps
// zstd dictionaries in text_dicts, and once it has one it writes every
// node text of at least minCompressed bytes as a zstd frame made with the
// newest dictionary, stored as a BLOB; text it cannot shrink stays as it
// is. Readers tell the two apart by the frame's magic number (a valid
// UTF-8 text never starts with it) and find the dictionary by the id the
// frame carries. A frame also carries its checksum, so a wrong or damaged
// dictionary is an error, never different text.
//
// Vacuum trains the first dictionary (when the store holds at least
// minTraining bytes of node text) and rewrites the texts written before
// it at a stronger level than writes take; dictionaries are never
// removed, since frames name them. Another
// process that meets a dictionary it has not loaded reads text_dicts
// again.

// zstdMagic starts every zstd frame.
var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

const (
	// minCompressed is the shortest text worth a frame: below it the
	// frame's header and checksum eat the gain.
	minCompressed = 48
	// minTraining is how much node text a store needs before Vacuum
	// trains a dictionary; maxTraining bounds the sample it reads.
	minTraining = 64 << 10
	maxTraining = 2 << 20
	// dictHistory bounds the raw history of a dictionary: 32 KiB gave
	// 2.05x on a million synthetic turns' summaries and 1.97x on LoCoMo's,
	// against 2.15x with 110 KiB, at the same speed.
	dictHistory = 32 << 10
)

// textCodec compresses and expands node texts with the store's
// dictionaries. It is safe for concurrent use.
type textCodec struct {
	min    int                                 // shortest text compressed; minCompressed unless a test lowers it
	always bool                                // tests: write a frame even when it is not shorter
	cache  *gencache.Cache[uint64, cachedText] // texts of frames read lately (cached, keep)
	raw    rawCodec                            // frames against a node's children (derivedtext.go)
	mu     sync.RWMutex
	dicts  map[uint32][]byte // by id
	enc    *zstd.Encoder     // with the newest dictionary, fastest level; nil when there is none
	pack   *zstd.Encoder     // the same at a stronger level, for Vacuum
	dec    *zstd.Decoder     // with every dictionary
	newID  uint32
}

// load reads every dictionary of the store and rebuilds the codec.
func (c *textCodec) load(ctx context.Context, q querier) error {
	rows, err := q.QueryContext(ctx, `SELECT id, dict FROM text_dicts ORDER BY created, id`)
	if err != nil {
		return fmt.Errorf("text dictionaries: %w", err)
	}
	defer rows.Close()
	dicts := map[uint32][]byte{}
	var newest uint32
	for rows.Next() {
		var id int64
		var d []byte
		if err := rows.Scan(&id, &d); err != nil {
			return fmt.Errorf("text dictionaries: %w", err)
		}
		dicts[uint32(id)] = d
		newest = uint32(id)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("text dictionaries: %w", err)
	}
	return c.install(dicts, newest)
}

// install makes dicts the codec's dictionaries, newest the one it
// compresses with (0: none).
func (c *textCodec) install(dicts map[uint32][]byte, newest uint32) error {
	list := make([][]byte, 0, len(dicts))
	for _, d := range dicts {
		list = append(list, d)
	}
	dec, err := zstd.NewReader(nil, zstd.WithDecoderDicts(list...), zstd.WithDecoderConcurrency(0),
		zstd.WithDecoderMaxMemory(1<<26))
	if err != nil {
		return fmt.Errorf("text dictionaries: %w", err)
	}
	// Writes take the fastest level: with a dictionary it keeps 95% of
	// the stronger level's gain (1.96x against 2.05x on a million
	// synthetic turns' node texts, 1.89x against 1.97x on LoCoMo's) at a
	// third of the time (about 9 us a text against 25). Vacuum, which
	// rewrites once, takes the stronger one.
	var enc, pack *zstd.Encoder
	if newest != 0 {
		for _, e := range []struct {
			dst   **zstd.Encoder
			level zstd.EncoderLevel
		}{{&enc, zstd.SpeedFastest}, {&pack, zstd.SpeedBetterCompression}} {
			if *e.dst, err = zstd.NewWriter(nil, zstd.WithEncoderDict(dicts[newest]), zstd.WithEncoderCRC(true),
				zstd.WithEncoderLevel(e.level), zstd.WithZeroFrames(true)); err != nil {
				return fmt.Errorf("text dictionary %d: %w", newest, err)
			}
		}
	}
	// The decoder being replaced is not closed: a read may still be using
	// it (DecodeAll starts no goroutine, so it goes with the garbage).
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dicts, c.enc, c.pack, c.dec, c.newID = dicts, enc, pack, dec, newest
	return nil
}

// column returns text as the store keeps it: a frame made with the
// newest dictionary when there is one and the frame is shorter, the text
// itself otherwise.
func (c *textCodec) column(text string) any { return c.encode(text, false) }

// packed is column at Vacuum's stronger level.
func (c *textCodec) packed(text string) any { return c.encode(text, true) }

func (c *textCodec) encode(text string, strong bool) any {
	if len(text) < max(c.min, 1) || text == "" {
		return text
	}
	c.mu.RLock()
	enc := c.enc
	if strong {
		enc = c.pack
	}
	c.mu.RUnlock()
	if enc == nil {
		return text
	}
	out := enc.EncodeAll([]byte(text), make([]byte, 0, len(text)/2+32))
	if len(out) >= len(text) && !c.always {
		return text
	}
	return out
}

// nullable is column for a column that may be NULL (a nil or non-string v
// is returned as it is); strong takes Vacuum's level.
func (c *textCodec) nullable(v any, strong bool) any {
	if s, ok := v.(string); ok {
		return c.encode(s, strong)
	}
	return v
}

// compressed reports whether a stored value is a frame.
func compressed(v string) bool { return len(v) >= 4 && v[:4] == string(zstdMagic) }

// text returns the text a stored value holds. A frame whose dictionary
// the codec lacks makes it read text_dicts again (another process may
// have trained it) through q.
func (c *textCodec) text(ctx context.Context, q querier, v string) (string, error) {
	if !compressed(v) {
		return v, nil
	}
	if t, ok := c.cached(v); ok {
		return t, nil
	}
	var out []byte
	err := zstd.ErrUnknownDictionary // a codec that loaded nothing yet knows none
	if dec := c.decoder(); dec != nil {
		out, err = dec.DecodeAll([]byte(v), nil)
	}
	if errors.Is(err, zstd.ErrUnknownDictionary) {
		if err := c.load(ctx, q); err != nil {
			return "", err
		}
		out, err = c.decoder().DecodeAll([]byte(v), nil)
	}
	if err != nil {
		return "", strata.Errorf(strata.EINTERNAL, "a compressed node text does not decode: %v", err)
	}
	t := string(out)
	c.keep(v, t)
	return t, nil
}

// The codec's cache keeps the texts of recently read frames: a context
// package reads the same few hundred nodes (the overview of the history)
// on every call, and expanding their three texts each time cost about 3 ms
// at a million turns. Two generations of frameCacheSize entries
// (internal/gencache), by a hash of the frame; an entry holds its frame,
// so a hit is the same bytes, not only the same hash.
type cachedText struct{ frame, text string }

const frameCacheSize = 8192

// frameSeed seeds the hashes of the cache's keys.
var frameSeed = maphash.MakeSeed()

// newTextCodec returns a codec with no dictionary, writing frames of
// texts of at least min bytes once it has one.
func newTextCodec(min int) *textCodec {
	return &textCodec{min: min, cache: gencache.New[uint64, cachedText](frameCacheSize)}
}

// cached returns the text of frame, if the cache holds it.
func (c *textCodec) cached(frame string) (string, bool) {
	e, ok := c.cache.Get(maphash.String(frameSeed, frame))
	if !ok || e.frame != frame {
		return "", false
	}
	return e.text, true
}

// keep caches the text of frame.
func (c *textCodec) keep(frame, text string) {
	c.cache.Put(maphash.String(frameSeed, frame), cachedText{frame, text})
}

// hasDictionary reports whether the codec writes frames.
func (c *textCodec) hasDictionary() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.enc != nil
}

// decoder is the codec's decoder, nil before its first load.
func (c *textCodec) decoder() *zstd.Decoder {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.dec
}

// trainTextDictionary trains the store's first dictionary from a sample
// of its node texts, spread over the whole table, and stores it. It does
// nothing when the store has a dictionary or too little text; it reports
// whether it trained one.
func (s *Store) trainTextDictionary(ctx context.Context) (bool, error) {
	var have int
	if err := s.w.QueryRowContext(ctx, `SELECT count(*) FROM text_dicts`).Scan(&have); err != nil {
		return false, err
	}
	if have > 0 {
		return false, nil
	}
	var total int64
	if err := s.w.QueryRowContext(ctx, `SELECT coalesce(sum(length(summary) + coalesce(length(facts), 0)), 0)
		FROM nodes WHERE typeof(summary) = 'text'`).Scan(&total); err != nil {
		return false, err
	}
	if total < minTraining {
		return false, nil
	}
	// Every k-th node, so that the sample spans the history.
	step := max(1, total/maxTraining)
	q, err := s.w.QueryContext(ctx, `SELECT summary, coalesce(facts, ''), coalesce(themes, '') FROM nodes
		WHERE typeof(summary) = 'text' AND pk % ? = 0 ORDER BY pk`, step)
	if err != nil {
		return false, err
	}
	var samples [][]byte
	size := 0
	for q.Next() && size < maxTraining {
		var a, b, c string
		if err := q.Scan(&a, &b, &c); err != nil {
			q.Close()
			return false, err
		}
		for _, t := range []string{a, b, c} {
			if len(t) >= minCompressed && !compressed(t) {
				samples = append(samples, []byte(t))
				size += len(t)
			}
		}
	}
	err = q.Err()
	q.Close()
	if err != nil {
		return false, err
	}
	if size < minTraining/2 {
		return false, nil
	}
	return true, s.installTextDictionary(ctx, samples)
}

// installTextDictionary builds a dictionary from samples, stores it and
// makes it the one new texts are written with.
func (s *Store) installTextDictionary(ctx context.Context, samples [][]byte) error {
	id, dict, err := buildTextDictionary(samples)
	if err != nil {
		return err
	}
	return s.storeTextDictionary(ctx, id, dict)
}

// buildTextDictionary trains a dictionary on samples; its id is a hash of
// them.
func buildTextDictionary(samples [][]byte) (uint32, []byte, error) {
	var hist []byte
	for i := len(samples) - 1; i >= 0 && len(hist) < dictHistory; i-- {
		hist = append(bytes.Clone(samples[i]), hist...)
	}
	if len(hist) > dictHistory {
		hist = hist[len(hist)-dictHistory:]
	}
	h := fnv.New32a()
	for _, x := range samples {
		h.Write(x)
	}
	// Ids below 32768 are reserved by the zstd format; the hash keeps the
	// ids of two stores' dictionaries apart.
	id := 1<<15 + h.Sum32()%(1<<30)
	// The statistics are gathered at Vacuum's level. Left unset, the
	// level is the best one, whose encoder clears tables of tens of MB
	// for every sample: training took 4 s on the node texts of 3,000
	// turns, 0.2 s at this level, for the same compression (3.34x
	// against 3.33x after Vacuum, TestVacuumCompressesNodeTexts).
	dict, err := zstd.BuildDict(zstd.BuildDictOptions{ID: id, Contents: samples, History: hist, Offsets: [3]int{1, 4, 8},
		Level: zstd.SpeedBetterCompression})
	if err != nil {
		return 0, nil, fmt.Errorf("training a text dictionary: %w", err)
	}
	return id, dict, nil
}

// storeTextDictionary keeps dict under id and makes it the one new texts
// are written with.
func (s *Store) storeTextDictionary(ctx context.Context, id uint32, dict []byte) error {
	if _, err := s.w.ExecContext(ctx, `INSERT INTO text_dicts (id, dict, created) VALUES (?, ?, ?)`,
		int64(id), dict, time.Now().UnixNano()); err != nil {
		return err
	}
	return s.text.load(ctx, s.w)
}

// CompressReport says what CompressNodeTexts did.
type CompressReport struct {
	Dictionary bool `json:"dictionary"` // the store has a dictionary (too little text to train one otherwise)
	Trained    bool `json:"trained"`    // it trained the store's first dictionary
	Compressed int  `json:"compressed"` // nodes whose texts it rewrote as frames
	Derived    int  `json:"derived"`    // derived nodes whose texts it rewrote against their children's (derivedtext.go)
}

// CompressNodeTexts trains the store's first text dictionary if it has
// none and holds enough node text, then rewrites the node texts written
// without the newest dictionary (see the top of this file), then the
// texts of derived nodes against their children's (derivedtext.go).
// Vacuum does it first; a server's worker does it now and then. Each
// batch of nodes is one transaction, so a kill leaves every text readable.
func (s *Store) CompressNodeTexts(ctx context.Context) (CompressReport, error) {
	var r CompressReport
	var err error
	if r.Trained, err = s.trainTextDictionary(ctx); err != nil {
		return r, fmt.Errorf("sqlite: compressing node texts: %w", err)
	}
	if r.Compressed, err = s.compressNodeTexts(ctx); err != nil {
		return r, fmt.Errorf("sqlite: compressing node texts: %w", err)
	}
	if r.Derived, err = s.frameDerivedTexts(ctx); err != nil {
		return r, fmt.Errorf("sqlite: compressing node texts against their children: %w", err)
	}
	r.Dictionary = s.text.hasDictionary()
	return r, nil
}

// compressNodeTexts rewrites the node texts stored plain (written before
// the store had a dictionary, or by a process that had not loaded it) as
// frames at the stronger level, in batches of one transaction each. It
// returns how many nodes it rewrote.
func (s *Store) compressNodeTexts(ctx context.Context) (int, error) {
	if !s.text.hasDictionary() {
		return 0, nil
	}
	return s.rewriteNodeTexts(ctx, "", 2000, s.compressRow, nil)
}

// textRow is a node row as the passes that rewrite node texts read it.
type textRow struct {
	pk            int64
	id            string
	ref           nodeRef
	span          childSpan
	summary       string
	facts, themes sql.NullString
}

// rewriteNodeTexts runs rewrite on the node rows that match cond (an SQL
// condition on nodes, or ""), in row key order, batch rows to a
// transaction, and stores the summary, facts and themes it returns for
// each row it says to write. wrote, if not nil, runs in the transaction of
// each batch that wrote a row, before it commits. A kill leaves every
// batch committed before it. It returns how many rows it rewrote.
func (s *Store) rewriteNodeTexts(ctx context.Context, cond string, batch int,
	rewrite func(tx *sql.Tx, r textRow) (vals [3]any, write bool, err error), wrote func(tx *sql.Tx) error) (int, error) {
	if cond != "" {
		cond = " AND " + cond
	}
	query := `SELECT pk, id, conversation, level, first_seq, last_seq, children, summary, facts, themes FROM nodes
		WHERE pk > ?` + cond + ` ORDER BY pk LIMIT ?`
	done := 0
	for after := int64(0); ; {
		n, last, err := func() (n int, last int64, err error) {
			tx, err := s.w.BeginTx(ctx, nil)
			if err != nil {
				return 0, 0, err
			}
			defer tx.Rollback()
			rows, err := tx.QueryContext(ctx, query, after, batch)
			if err != nil {
				return 0, 0, err
			}
			var rs []textRow
			for rows.Next() {
				var r textRow
				if err := rows.Scan(&r.pk, &r.id, &r.ref.conv, &r.span.level, &r.span.first, &r.span.last,
					&r.ref.children, &r.summary, &r.facts, &r.themes); err != nil {
					rows.Close()
					return 0, 0, err
				}
				rs = append(rs, r)
			}
			err = rows.Err()
			rows.Close()
			if err != nil || len(rs) == 0 {
				return 0, 0, err
			}
			up, err := tx.PrepareContext(ctx, `UPDATE nodes SET summary = ?, facts = ?, themes = ? WHERE pk = ?`)
			if err != nil {
				return 0, 0, err
			}
			defer up.Close()
			for _, r := range rs {
				vals, write, err := rewrite(tx, r)
				if err == nil && write {
					_, err = up.ExecContext(ctx, vals[0], vals[1], vals[2], r.pk)
					n++
				}
				if err != nil {
					return 0, 0, fmt.Errorf("node %s: %w", r.id, err)
				}
			}
			if n > 0 && wrote != nil {
				if err := wrote(tx); err != nil {
					return 0, 0, err
				}
			}
			if err := tx.Commit(); err != nil {
				return 0, 0, err
			}
			return n, rs[len(rs)-1].pk, nil
		}()
		if err != nil {
			return done, err
		}
		done += n
		if last == 0 {
			return done, nil
		}
		after = last
	}
}

// compressRow is compressNodeTexts's rewrite: a row's texts as frames at
// the stronger level, if one of them shrank and none is a frame already.
func (s *Store) compressRow(_ *sql.Tx, r textRow) ([3]any, bool, error) {
	if compressed(r.summary) || r.facts.Valid && compressed(r.facts.String) || r.themes.Valid && compressed(r.themes.String) {
		return [3]any{}, false, nil // written with a dictionary already
	}
	sum, facts, themes := s.text.packed(r.summary), s.text.nullable(nullValue(r.facts), true), s.text.nullable(nullValue(r.themes), true)
	if !isFrame(sum) && !isFrame(facts) && !isFrame(themes) {
		return [3]any{}, false, nil // nothing shrank
	}
	return [3]any{sum, facts, themes}, true, nil
}

// isFrame reports whether a column value from encode is a frame.
func isFrame(v any) bool {
	_, ok := v.([]byte)
	return ok
}

// nullValue is v as a column value: its string, or nil for NULL.
func nullValue(v sql.NullString) any {
	if !v.Valid {
		return nil
	}
	return v.String
}
