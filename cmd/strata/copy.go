package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/postgres"
	"github.com/strata-memory/strata/sqlite"
	"github.com/strata-memory/strata/storecopy"
)

// runMigrate brings the store's schema to the newest version this build
// knows, and says from which.
func runMigrate(ctx context.Context, m *Main, args []string) error {
	fs := m.command("migrate", "[--db PATH|postgres://...] [--json]")
	if err := fs.parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usagef("migrate: unexpected arguments %q", fs.Args())
	}
	s, err := m.resolve(fs.g)
	if err != nil {
		return err
	}
	var from, to int
	if isPostgres(s.DB) {
		if from, to, err = postgres.Migrate(ctx, s.DB); err != nil {
			return err
		}
	} else {
		_, statErr := os.Stat(s.DB)
		st, err := sqlite.Open(ctx, s.DB)
		if err != nil {
			return fmt.Errorf("open %s: %w", s.DB, err)
		}
		if errors.Is(statErr, os.ErrNotExist) {
			fmt.Fprintf(m.Stderr, "strata: created a new store at %s\n", s.DB)
		}
		from, to = st.MigratedFrom(), sqlite.SchemaVersion()
		if err := st.Close(); err != nil {
			return err
		}
	}
	if *fs.json {
		return writeJSON(m.Stdout, map[string]any{"store": showDB(s.DB), "from": from, "to": to})
	}
	if from == to {
		fmt.Fprintf(m.Stdout, "%s: schema version %d, up to date\n", showDB(s.DB), to)
	} else {
		fmt.Fprintf(m.Stdout, "%s: schema version %d -> %d\n", showDB(s.DB), from, to)
	}
	return nil
}

// copyBatch is the batch size strata copy gives storecopy: 0, its default.
// It is a variable only so that a test can copy several batches of a
// small store.
var copyBatch int

// runCopy copies every namespace (or those named) of one store into
// another, SQLite or PostgreSQL either way, then verifies the copy. A copy
// cut short is finished by running it again. Every namespace is one that
// holds anything: tokens, watch or compaction states, not only
// conversations.
func runCopy(ctx context.Context, m *Main, args []string) error {
	fs := m.command("copy", "--from SRC --to DST [--namespaces A,B] [--verify-only] [--json]")
	from := fs.String("from", "", "the store to copy: an SQLite file or a postgres:// URL (required)")
	to := fs.String("to", "", "the store to copy into, created if missing (required)")
	only := fs.String("namespaces", "", "comma-separated namespaces to copy (default: every namespace of --from)")
	verifyOnly := fs.Bool("verify-only", false, "copy nothing: only compare the two stores")
	if err := fs.parse(args); err != nil {
		return err
	}
	if err := checkCopyArgs(fs, *from, *to); err != nil {
		return err
	}
	var nss []string
	for _, ns := range strings.Split(*only, ",") {
		if ns = strings.TrimSpace(ns); ns != "" {
			nss = append(nss, ns)
		}
	}
	src, err := openStore(ctx, *from, false, readWrite, nil)
	if err != nil {
		return fmt.Errorf("copy: --from: %w", err)
	}
	defer src.Close()
	dst, err := openStore(ctx, *to, false, readWrite, m.Stderr)
	if err != nil {
		return fmt.Errorf("copy: --to: %w", err)
	}
	defer dst.Close()

	var rep storecopy.Report
	if !*verifyOnly {
		progress := func(c storecopy.ConversationReport) {
			if !*fs.json {
				fmt.Fprintf(m.Stderr, "  %s/%s: %d turns, %d nodes, %d tier moves, %d learnings, %d vectors\n",
					c.Namespace, c.Conversation, c.Turns, c.Nodes, c.Moves+c.Expired, c.Learnings, c.Vectors)
			}
		}
		rep, err = storecopy.Copy(ctx, src, dst, storecopy.Options{Namespaces: nss, Batch: copyBatch, Progress: progress})
		if err != nil && strata.ErrorCode(err) == strata.EINTERNAL {
			return fmt.Errorf("%w (what was copied stays; run the same copy again to finish it)", err)
		}
		if err != nil {
			return err
		}
	}
	ms, err := storecopy.Verify(ctx, src, dst, nss)
	if err != nil {
		return err
	}
	if *fs.json {
		if err := writeJSON(m.Stdout, struct {
			Report     storecopy.Report     `json:"copied"`
			Mismatches []storecopy.Mismatch `json:"mismatches"`
		}{rep, append([]storecopy.Mismatch{}, ms...)}); err != nil {
			return err
		}
	} else {
		if !*verifyOnly {
			printCopied(m, rep, *from, *to)
		}
		printVerified(m, ms)
	}
	if len(ms) > 0 {
		return fmt.Errorf("copy: %d differences between %s and %s", len(ms), showDB(*from), showDB(*to))
	}
	return nil
}

// checkCopyArgs refuses copy's arguments but two stores, of which the
// one copied from exists.
func checkCopyArgs(fs *cmdline, from, to string) error {
	if fs.NArg() != 0 {
		return usagef("copy: unexpected arguments %q", fs.Args())
	}
	if from == "" || to == "" {
		return usagef("copy: --from and --to are required")
	}
	if from == to {
		return usagef("copy: --from and --to name the same store")
	}
	if !isPostgres(from) {
		// Opening a missing SQLite file would create an empty store.
		if _, err := os.Stat(from); errors.Is(err, os.ErrNotExist) {
			return strata.Errorf(strata.ENOTFOUND, "copy: --from %s: no such store", from)
		}
	}
	return nil
}

// printCopied says what a copy from one store to another added.
func printCopied(m *Main, rep storecopy.Report, from, to string) {
	turns := 0
	for _, c := range rep.Conversations {
		turns += c.Turns
	}
	fmt.Fprintf(m.Stdout, "copied %d conversations of %d namespaces from %s to %s: %d turns added, %d tokens, %d watch states, %d compaction states",
		len(rep.Conversations), rep.Namespaces, showDB(from), showDB(to), turns, rep.Tokens, rep.Watches, rep.Compactions)
	if rep.Deletions > 0 {
		fmt.Fprintf(m.Stdout, "; %d audit records of deleted conversations stay behind", rep.Deletions)
	}
	fmt.Fprintln(m.Stdout)
}

// printVerified lists the differences between the two stores, or says
// there are none.
func printVerified(m *Main, ms []storecopy.Mismatch) {
	for _, x := range ms {
		fmt.Fprintln(m.Stdout, "differs:", x)
	}
	if len(ms) == 0 {
		fmt.Fprintln(m.Stdout, "verified: every conversation has the same turns, nodes, tiers, learnings, calls and vectors in both, "+
			"and every namespace the same tokens, watch states and compaction states")
	}
}
