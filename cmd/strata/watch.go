package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/formats"
)

const (
	// watchChunk is how many bytes a watch reads and imports in one step
	// (more when a single line is longer).
	watchChunk = 4 << 20
	// watchHeadMax is how many of a file's first bytes its fingerprint
	// covers once the file is that long.
	watchHeadMax = 4096
	// watchIdle is how long a file that stopped growing stays open.
	watchIdle = 5 * time.Minute
)

func runWatch(ctx context.Context, m *Main, args []string) error {
	fs := m.command("watch", "[--format auto|jsonl] [--conversation ID] [--match GLOB] [--poll D] [--policy NAME] [--tz ZONE] [--json] [PATH...] (default: ~/.claude/projects)")
	format := fs.String("format", formats.Auto, "format of the files: auto (detected per file) or a format of one record per line, like jsonl")
	conv := fs.String("conversation", "", "conversation for turns whose source names none (default: the file's name without its extension)")
	match := fs.String("match", "*.jsonl", "in folders, follow the files whose name matches this pattern")
	poll := fs.Duration("poll", 2*time.Second, "also look at every file this often, for what the file system did not report")
	var opts strata.ImportOptions
	fs.StringVar(&opts.Policy, "policy", "", "pyramid policy of conversations the watch creates (default: the config's)")
	fs.StringVar(&opts.TimeZone, "tz", "", "time zone of conversations the watch creates, like Europe/Berlin (default: the config's, else UTC)")
	if err := fs.parse(args); err != nil {
		return err
	}
	f, err := checkWatchFlags(*format, *match, *poll, *conv, opts)
	if err != nil {
		return err
	}
	paths := fs.Args()
	if len(paths) == 0 {
		def, err := claudeProjects(m)
		if err != nil {
			return err
		}
		paths = []string{def}
	}
	w := &watcher{m: m, format: f, conv: *conv, match: *match, opts: opts,
		named: map[string]bool{}, files: map[string]*watchFile{}, watched: map[string]bool{}}
	for _, p := range paths {
		if err := w.follow(p); err != nil {
			return err
		}
	}
	a, err := m.open(ctx, fs.g)
	if err != nil {
		return err
	}
	defer a.Close()
	w.a = a
	var h slog.Handler = slog.NewTextHandler(m.Stderr, nil)
	if *fs.json {
		h = slog.NewJSONHandler(m.Stderr, nil)
	}
	w.log = slog.New(h)
	return w.run(ctx, *poll)
}

// checkWatchFlags refuses bad values of watch's flags, and returns the
// format named, in lower case.
func checkWatchFlags(format, match string, poll time.Duration, conv string, opts strata.ImportOptions) (string, error) {
	f := strings.ToLower(strings.TrimSpace(format))
	switch {
	case f == formats.OpenAI || f == formats.LoCoMo:
		return "", usagef("--format %s: a watch follows files of one record per line; import JSON documents with strata import", f)
	case !slices.Contains(formats.Formats(), f):
		return "", usagef("--format %q: want one of %s", format, strings.Join(formats.Formats(), ", "))
	}
	if _, err := filepath.Match(match, ""); err != nil {
		return "", usagef("--match %q: %v", match, err)
	}
	if poll <= 0 {
		return "", usagef("--poll %s: want a positive duration", poll)
	}
	if conv != "" {
		if err := strata.ValidateConversationID(conv); err != nil {
			return "", usagef("--conversation: %v", err)
		}
	}
	if opts.TimeZone != "" {
		if _, err := strata.LoadTimeZone(opts.TimeZone); err != nil {
			return "", err
		}
	}
	return f, nil
}

// claudeProjects is the folder a watch follows when given no path:
// Claude Code's projects folder, which must be there.
func claudeProjects(m *Main) (string, error) {
	home := m.Getenv("HOME")
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", usagef("watch: no PATH given, and no home folder to find ~/.claude/projects in (%v)", err)
		}
		home = h
	}
	def := filepath.Join(home, ".claude", "projects")
	if _, err := os.Stat(def); err != nil {
		return "", usagef("watch: no PATH given, and Claude Code's projects folder %s cannot be read (%v): give the files or folders to follow", def, err)
	}
	return def, nil
}

// follow follows path p: a folder's matching files, or a file, which may
// not exist yet if its folder does.
func (w *watcher) follow(p string) error {
	abs, err := filepath.Abs(p)
	if err != nil {
		return err
	}
	st, err := os.Stat(abs)
	switch {
	case err == nil && st.IsDir():
		w.dirs = append(w.dirs, abs)
	case err == nil && st.Mode().IsRegular():
		w.named[abs] = true
	case err == nil:
		return usagef("watch: %s is neither a file nor a folder", p)
	case errors.Is(err, iofs.ErrNotExist):
		// A file yet to be written: followed once it appears, if its
		// folder exists.
		if d, derr := os.Stat(filepath.Dir(abs)); derr != nil || !d.IsDir() {
			return fmt.Errorf("watch: %s does not exist, nor does its folder", p)
		}
		w.named[abs] = true
	default:
		return fmt.Errorf("watch: %w", err)
	}
	return nil
}

// watcher follows files and folders and imports what is appended to them.
// It runs on one goroutine.
type watcher struct {
	m      *Main
	a      *app
	log    *slog.Logger
	format string // formats.Auto or a format of one record per line
	conv   string // --conversation
	match  string // --match
	opts   strata.ImportOptions

	dirs    []string        // folders followed, absolute
	named   map[string]bool // files named on the command line, absolute
	files   map[string]*watchFile
	fsw     *fsnotify.Watcher
	watched map[string]bool // folders fsnotify reports on
}

// watchFile is one followed path and the file open at it.
type watchFile struct {
	path    string
	conv    string // the conversation of records that name none
	f       *os.File
	id      os.FileInfo // the file last read at path, to notice another one there
	gone    bool        // the path no longer names f (renamed or removed)
	loaded  bool        // st holds the state saved in the store
	st      strata.WatchState
	format  string // the file's format, "" until detected
	refused bool   // the file cannot be followed (said once in the log)
	// ids counts, per conversation (as the source names it) and derived
	// ext_id, the turns of the file without an ext_id of their own, from
	// its start: the occurrence numbers strata import derives. nil until
	// a turn needs it.
	ids     map[[2]string]int
	changed time.Time // when the file last grew
}

func (w *watcher) run(ctx context.Context, poll time.Duration) error {
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watch: %w", err)
	}
	defer fsw.Close()
	w.fsw = fsw
	defer w.closeFiles()
	for p := range w.named {
		w.watchDir(filepath.Dir(p))
		w.add(p)
	}
	for _, d := range w.dirs {
		w.scan(d)
	}
	w.log.Info("watching", "folders", w.dirs, "files", len(w.files), "db", showDB(w.a.set.DB), "namespace", w.a.set.Namespace)
	w.syncAll(ctx)
	w.catchUpTiers(ctx)
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			w.log.Info("stopped")
			return nil
		case ev, ok := <-fsw.Events:
			if !ok {
				return nil
			}
			w.event(ctx, ev)
		case err, ok := <-fsw.Errors:
			if !ok {
				return nil
			}
			// An overflow of events, say: the next poll catches up.
			w.log.Warn("file system events", "error", err)
		case <-tick.C:
			for _, d := range w.dirs {
				w.scan(d)
			}
			w.syncAll(ctx)
			w.closeIdle()
		}
		if ctx.Err() != nil {
			w.log.Info("stopped")
			return nil
		}
	}
}

// catchUpTiers moves what is due in the namespace's conversations, as an
// append to each would: a run killed between storing a chunk and moving
// its spans left them where they were, and the files may never grow
// again to bring the next append.
func (w *watcher) catchUpTiers(ctx context.Context) {
	if w.a.set.Tiers.Off {
		return
	}
	ids, err := w.a.conversationIDs(ctx, "")
	if err != nil {
		w.log.Error("cannot list conversations to move their tiers", "error", err)
		return
	}
	for _, id := range ids {
		if ctx.Err() != nil {
			return
		}
		r, err := w.a.mem.Tier(ctx, id)
		if err != nil {
			w.log.Error("cannot move tiers", "conversation", id, "error", err)
			continue
		}
		if len(r.Moves) > 0 || len(r.Expired) > 0 {
			w.log.Info("tiers caught up", "conversation", id, "moved", len(r.Moves), "expired", len(r.Expired))
		}
	}
}

// watchDir asks fsnotify for the events of folder d.
func (w *watcher) watchDir(d string) {
	if w.watched[d] {
		return
	}
	if err := w.fsw.Add(d); err != nil {
		w.log.Warn("cannot watch folder; it is still looked at every poll", "folder", d, "error", err)
		return
	}
	w.watched[d] = true
}

// add follows path, if it is not followed yet, and reports whether it is
// new.
func (w *watcher) add(path string) bool {
	if w.files[path] != nil {
		return false
	}
	conv := w.conv
	if conv == "" {
		conv = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	w.files[path] = &watchFile{path: path, conv: conv}
	return true
}

// scan follows the folders under d and the files in them that match.
func (w *watcher) scan(d string) []*watchFile {
	var added []*watchFile
	err := filepath.WalkDir(d, func(p string, e iofs.DirEntry, err error) error {
		if err != nil {
			if p != d {
				w.log.Warn("cannot read", "path", p, "error", err)
			}
			return nil
		}
		if e.IsDir() {
			w.watchDir(p)
			return nil
		}
		if ok, _ := filepath.Match(w.match, e.Name()); ok && e.Type().IsRegular() && w.add(p) {
			added = append(added, w.files[p])
		}
		return nil
	})
	if err != nil {
		w.log.Warn("cannot read folder", "folder", d, "error", err)
	}
	return added
}

// under reports whether path lies in a followed folder.
func (w *watcher) under(path string) bool {
	for _, d := range w.dirs {
		if strings.HasPrefix(path, d+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// event handles one fsnotify event: a followed file changed, or a file or
// folder appeared under a followed folder.
func (w *watcher) event(ctx context.Context, ev fsnotify.Event) {
	if p := w.files[ev.Name]; p != nil {
		w.sync(ctx, p)
		return
	}
	if !w.under(ev.Name) || !ev.Has(fsnotify.Create) && !ev.Has(fsnotify.Write) {
		return
	}
	st, err := os.Stat(ev.Name)
	if err != nil {
		return // gone already
	}
	if st.IsDir() {
		for _, p := range w.scan(ev.Name) {
			w.log.Info("following", "file", p.path)
			w.sync(ctx, p)
		}
		return
	}
	if ok, _ := filepath.Match(w.match, filepath.Base(ev.Name)); ok && st.Mode().IsRegular() && w.add(ev.Name) {
		w.log.Info("following", "file", ev.Name)
		w.sync(ctx, w.files[ev.Name])
	}
}

func (w *watcher) syncAll(ctx context.Context) {
	paths := make([]string, 0, len(w.files))
	for p := range w.files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		if ctx.Err() != nil {
			return
		}
		w.sync(ctx, w.files[p])
	}
}

// sync imports what was appended to p's file since it was last read, and
// notices a file renamed, removed or replaced. Errors go to the log; the
// file is read again at the next event or poll.
func (w *watcher) sync(ctx context.Context, p *watchFile) {
	if err := w.syncErr(ctx, p); err != nil && ctx.Err() == nil {
		w.log.Error("cannot import; trying again at the next change or poll", "file", p.path, "error", err)
	}
}

func (w *watcher) syncErr(ctx context.Context, p *watchFile) error {
	info, err := os.Stat(p.path)
	if err != nil {
		if !errors.Is(err, iofs.ErrNotExist) {
			return err
		}
		if p.f != nil {
			// Renamed or removed while open: what its writer still
			// appends to it is read to its end, until another file
			// takes the path or it stops growing.
			if !p.gone {
				w.log.Info("renamed or removed; reading what is appended to it while it is open", "file", p.path)
				p.gone = true
			}
			return w.read(ctx, p)
		}
		return nil
	}
	if !info.Mode().IsRegular() {
		return nil
	}
	if p.f != nil && !os.SameFile(p.id, info) {
		// Another file at the path: the old one is read to its end
		// first, then the new one from its start.
		if err := w.read(ctx, p); err != nil {
			return err
		}
		p.f.Close()
		p.f = nil
		w.log.Info("another file at the path; reading it from its start", "file", p.path)
		if err := w.restart(ctx, p); err != nil {
			return err
		}
	}
	if p.f == nil {
		f, err := os.Open(p.path)
		if err != nil {
			return err
		}
		fi, err := f.Stat()
		if err != nil {
			f.Close()
			return err
		}
		if p.id != nil && !os.SameFile(p.id, fi) && p.st.Offset > 0 {
			w.log.Info("another file at the path; reading it from its start", "file", p.path)
			if err := w.restart(ctx, p); err != nil {
				f.Close()
				return err
			}
		}
		p.f, p.id, p.gone, p.changed = f, fi, false, time.Now()
	}
	return w.read(ctx, p)
}

// restart forgets what was read of p's path and saves that, so that a
// watch killed now starts the new file over too.
func (w *watcher) restart(ctx context.Context, p *watchFile) error {
	p.st = strata.WatchState{}
	p.loaded = true
	p.ids, p.format, p.refused = nil, "", false
	return w.save(ctx, p)
}

func (w *watcher) save(ctx context.Context, p *watchFile) error {
	p.st.Updated = time.Now()
	if err := w.a.store.SaveWatchState(ctx, w.a.set.Namespace, p.path, p.st); err != nil {
		return fmt.Errorf("saving how far it was read: %w", err)
	}
	return nil
}

// read imports the whole lines of p's open file past the saved offset.
// A last line without its newline waits for it.
func (w *watcher) read(ctx context.Context, p *watchFile) error {
	if !p.loaded {
		st, err := w.a.store.WatchState(ctx, w.a.set.Namespace, p.path)
		if err != nil {
			return err
		}
		p.st, p.loaded = st, true
		if st.Offset > 0 {
			w.log.Debug("resuming", "file", p.path, "offset", st.Offset, "line", st.Lines)
		}
	}
	info, err := p.f.Stat()
	if err != nil {
		return err
	}
	size := info.Size()
	if size < p.st.Offset {
		w.log.Warn("truncated: reading it again from its start (turns already imported are skipped by ext_id)",
			"file", p.path, "size", size, "read", p.st.Offset)
		if err := w.restart(ctx, p); err != nil {
			return err
		}
	} else if p.st.HeadLen > 0 {
		h, err := fingerprint(p.f, p.st.HeadLen)
		if err != nil {
			return err
		}
		if h != p.st.Head {
			w.log.Warn("its first bytes changed: reading it again from its start (turns already imported are skipped by ext_id)",
				"file", p.path)
			if err := w.restart(ctx, p); err != nil {
				return err
			}
		}
	}
	for size > p.st.Offset && !p.refused && ctx.Err() == nil {
		if p.format == "" {
			w.detect(p, size)
			continue
		}
		data, err := wholeLines(p.f, p.st.Offset, size)
		if err != nil {
			return err
		}
		if len(data) == 0 {
			return nil // a partial last line: it waits for its end
		}
		if err := w.importLines(ctx, p, data); err != nil {
			return err
		}
		p.changed = time.Now()
	}
	return nil
}

// detect sets p's format, or refuses the file (once, in the log).
func (w *watcher) detect(p *watchFile, size int64) {
	p.format = w.format
	if p.format == formats.Auto {
		peek := make([]byte, min(size, 64<<10))
		n, err := p.f.ReadAt(peek, 0)
		if err != nil && err != io.EOF {
			w.log.Error("cannot read", "file", p.path, "error", err)
			p.format = ""
			return
		}
		f, err := formats.Detect(peek[:n])
		if err != nil {
			p.refused = true
			w.log.Error("not followed", "file", p.path, "error", err)
			return
		}
		p.format = f
	}
	switch p.format {
	case formats.OpenAI, formats.LoCoMo, formats.ChatGPT, formats.Anthropic:
		p.refused = true
		w.log.Error("not followed: a JSON document, not one record per line; import it with strata import",
			"file", p.path, "format", p.format)
	}
}

// wholeLines reads from off to the end of the last whole line before size,
// at most watchChunk bytes unless one line is longer. It returns nothing
// when no line after off is whole yet.
func wholeLines(f *os.File, off, size int64) ([]byte, error) {
	for n := min(size-off, watchChunk); ; n = min(size-off, 2*n) {
		buf := make([]byte, n)
		got, err := f.ReadAt(buf, off)
		if err != nil && err != io.EOF {
			return nil, err
		}
		buf = buf[:got]
		if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
			return buf[:i+1], nil
		}
		if int64(got) < n || n == size-off {
			return nil, nil
		}
	}
}

// fingerprint is the hex SHA-256 of f's first n bytes.
func fingerprint(f *os.File, n int64) (string, error) {
	h := sha256.New()
	got, err := io.Copy(h, io.NewSectionReader(f, 0, n))
	if err != nil {
		return "", err
	}
	if got < n {
		return "", nil // shorter: never the fingerprint of n bytes
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// pending is what one chunk of a file holds for one conversation.
type pending struct {
	turns []strata.Turn
	lines []int64 // line of each turn in the file
}

// importLines parses data (whole lines of p's file, from the saved
// offset), imports their turns, then saves the offset past them. A bad
// line is logged with its file and line and skipped for good. Turns are
// appended before the offset is saved: a watch killed in between reads
// them again, and their ext_ids make the second import add nothing.
func (w *watcher) importLines(ctx context.Context, p *watchFile, data []byte) error {
	// A chunk begun is finished, its offset saved, even when the watch is
	// being stopped: otherwise a stop between storing its turns and saving
	// the offset makes the next run read it again.
	ctx = context.WithoutCancel(ctx)
	byConv, order, bad, err := w.parseLines(p, data)
	if err != nil {
		return err
	}
	var added, present, nodes int
	for _, conv := range order {
		b := byConv[conv]
		res, err := w.ingest(ctx, p, conv, b)
		if err != nil {
			p.ids = nil // counted past what is stored: counted again from the start
			return err
		}
		added, present, nodes = added+res.Added, present+res.Skipped, nodes+res.Nodes
		bad += res.Received - res.Added - res.Skipped
	}
	from := p.st.Lines + 1
	if err := p.advance(data); err != nil {
		return err
	}
	if err := w.save(ctx, p); err != nil {
		return err
	}
	w.log.Info("imported", "file", p.path, "lines", fmt.Sprintf("%d-%d", from, p.st.Lines),
		"conversations", order, "added", added, "present", present, "skipped", bad, "nodes", nodes)
	return nil
}

// parseLines parses data, whole lines of p's file, into the turns of
// each conversation they name, and returns them, the conversations in
// the order first named, and how many lines were bad (each logged).
func (w *watcher) parseLines(p *watchFile, data []byte) (map[string]*pending, []string, int, error) {
	r, err := formats.Open(p.format, p.path, bytes.NewReader(data))
	if err != nil {
		return nil, nil, 0, err
	}
	byConv := map[string]*pending{}
	var order []string
	bad := 0
	var last string
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *formats.ParseError
			if errors.As(err, &pe) && pe.Line > 0 && err.Error() != last {
				last = err.Error()
				w.badLine(p, int64(pe.Line), err)
				bad++
				continue
			}
			// An error that ends the input: what follows in this chunk
			// cannot be read.
			bad++
			w.log.Error("malformed; skipping the rest of what was written", "file", p.path, "line", p.st.Lines+1, "error", err)
			break
		}
		if rec.DerivedExtID {
			if err := w.deriveID(p, &rec); err != nil {
				return nil, nil, 0, err
			}
		}
		conv := first(rec.Conversation, p.conv)
		if err := strata.ValidateConversationID(conv); err != nil {
			w.badLine(p, int64(rec.Line), &formats.ParseError{File: p.path, Line: rec.Line, Field: "conversation", Msg: err.Error()})
			bad++
			continue
		}
		b := byConv[conv]
		if b == nil {
			b = &pending{}
			byConv[conv] = b
			order = append(order, conv)
		}
		b.turns = append(b.turns, rec.Turn)
		b.lines = append(b.lines, p.st.Lines+int64(rec.Line))
	}
	return byConv, order, bad, nil
}

// advance moves p's state past data, and fingerprints the file's head
// anew while it is shorter than watchHeadMax.
func (p *watchFile) advance(data []byte) error {
	p.st.Offset += int64(len(data))
	p.st.Lines += int64(bytes.Count(data, []byte{'\n'}))
	if p.st.HeadLen < min(p.st.Offset, watchHeadMax) {
		n := min(p.st.Offset, watchHeadMax)
		h, err := fingerprint(p.f, n)
		if err != nil {
			return err
		}
		if h != "" {
			p.st.HeadLen, p.st.Head = n, h
		}
	}
	return nil
}

// ingest appends one conversation's turns of a chunk. A batch the engine
// refuses as invalid is appended turn by turn, so that only the bad turns
// are skipped (and logged with their lines). Received counts the turns
// given, Added and Skipped those appended and already present.
func (w *watcher) ingest(ctx context.Context, p *watchFile, conv string, b *pending) (strata.IngestResult, error) {
	batch := strata.Batch{Conversation: conv, Turns: b.turns, Policy: w.opts.Policy, TimeZone: w.opts.TimeZone}
	res, err := w.a.mem.Ingest(ctx, batch)
	if strata.ErrorCode(err) != strata.EINVALID {
		return res, err
	}
	res = strata.IngestResult{Conversation: conv, Received: len(b.turns)}
	for i, t := range b.turns {
		batch.Turns = []strata.Turn{t}
		r, err := w.a.mem.Ingest(ctx, batch)
		if strata.ErrorCode(err) == strata.EINVALID {
			w.badLine(p, b.lines[i]-p.st.Lines, err)
			continue
		}
		if err != nil {
			return res, err
		}
		res.Added, res.Skipped, res.Nodes = res.Added+r.Added, res.Skipped+r.Skipped, res.Nodes+r.Nodes
	}
	return res, nil
}

// badLine logs a line that is skipped for good; line counts from the
// start of the chunk being read.
func (w *watcher) badLine(p *watchFile, line int64, err error) {
	msg := err.Error()
	var pe *formats.ParseError
	if errors.As(err, &pe) {
		// Name the line of the file, not of the chunk.
		e := *pe
		e.Line = 0
		msg = strings.TrimPrefix(e.Error(), e.File+": ")
	}
	w.log.Error("skipped a bad line", "file", p.path, "line", p.st.Lines+line, "error", msg)
}

// deriveID gives a turn without an ext_id of its own the id strata import
// gives it: strata.DeriveExtID with the number of earlier turns of the
// same conversation in the file that derive the same id. The counts of
// the part of the file read before (by an earlier run, say) are taken
// again from the file when first needed.
func (w *watcher) deriveID(p *watchFile, rec *formats.Record) error {
	if p.ids == nil {
		p.ids = map[[2]string]int{}
		if p.st.Offset > 0 {
			r, err := formats.Open(p.format, p.path, io.NewSectionReader(p.f, 0, p.st.Offset))
			if err != nil {
				return err
			}
			var last string
			for {
				old, err := r.Next()
				if err == io.EOF {
					break
				}
				var pe *formats.ParseError
				if errors.As(err, &pe) && err.Error() != last {
					last = err.Error()
					continue // skipped when it was read
				}
				if err != nil {
					return fmt.Errorf("counting the turns read before: %w", err)
				}
				if old.DerivedExtID {
					p.ids[[2]string{old.Conversation, strata.DeriveExtID(&old.Turn, 0)}]++
				}
			}
		}
	}
	k := [2]string{rec.Conversation, strata.DeriveExtID(&rec.Turn, 0)}
	rec.Turn.ExtID = strata.DeriveExtID(&rec.Turn, p.ids[k])
	p.ids[k]++
	return nil
}

// closeIdle closes the files that stopped growing a while ago (a file
// followed again is opened again at its next change).
func (w *watcher) closeIdle() {
	for _, p := range w.files {
		if p.f != nil && time.Since(p.changed) > watchIdle {
			p.f.Close()
			p.f = nil
			if p.gone && !w.named[p.path] {
				delete(w.files, p.path) // found again by a scan if it comes back
			}
		}
	}
}

func (w *watcher) closeFiles() {
	for _, p := range w.files {
		if p.f != nil {
			p.f.Close()
			p.f = nil
		}
	}
}
