package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/primers"
)

// runExport dispatches "strata export KIND".
func runExport(ctx context.Context, m *Main, args []string) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			m.printHelp("export", "Usage: strata export primers --conversation ID --dir DIR [--now T] [--json]\n\n"+
				"Run 'strata help export primers' for the flags.")
			return flag.ErrHelp
		}
		return usagef("export: say what to export: strata export primers --conversation ID --dir DIR")
	}
	switch args[0] {
	case "primers":
		return runExportPrimers(ctx, m, args[1:])
	}
	return usagef("export: unknown kind %q (want primers)", args[0])
}

// runExportPrimers writes a conversation's primer tree.
func runExportPrimers(ctx context.Context, m *Main, args []string) error {
	fs := m.command("export primers", "--conversation ID --dir DIR [--now T] [--json]")
	conv := fs.String("conversation", "", "conversation id (required)")
	dir := fs.String("dir", "", "folder of the primer tree, created if missing (required)")
	now := fs.String("now", "", "reference time: weeks and months that ended by its day get their files, and dailies older than 30 days and weeklies older than 12 weeks move to archive/ (default: the conversation's newest turn)")
	if err := fs.parse(args); err != nil {
		return err
	}
	if err := requireConversation(*conv); err != nil {
		return err
	}
	if *dir == "" {
		return usagef("--dir is required")
	}
	if fs.NArg() > 0 {
		return usagef("export primers: unexpected argument %q", fs.Arg(0))
	}
	ref, err := parseNow(*now)
	if err != nil {
		return err
	}
	a, err := m.openReading(ctx, fs.g)
	if err != nil {
		return err
	}
	defer a.Close()
	res, err := primers.Export(ctx, a.mem, *conv, *dir, ref)
	if err != nil {
		return err
	}
	if *fs.json {
		return writeJSON(m.Stdout, res)
	}
	fmt.Fprintf(m.Stdout, "%s: %d files in %s: %d written (%d in the archive), %d unchanged, %d moved to the archive\n",
		*conv, len(res.Files), *dir, res.Written, res.WrittenInArchive, res.Unchanged, res.Moved)
	return nil
}

// runUpload is "strata context --format upload": 003's upload package
// instead of a budgeted context package. The token budget applies only
// when --budget is given. Stderr gets one line of figures: the size, how
// many closed periods are merged into an overview, how many turns are
// omitted, and the sections dropped with nothing standing for them.
func runUpload(ctx context.Context, m *Main, fs *cmdline, conv string, ref time.Time, secs []strata.Section, budget, maxBytes int) error {
	req := strata.UploadRequest{Conversation: conv, Now: ref, MaxBytes: maxBytes, Sections: secs}
	var refused string
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "budget":
			req.Budget = budget
		case "query", "facts":
			refused = f.Name
		}
	})
	if refused != "" {
		return usagef("context: --%s does not apply to --format upload", refused)
	}
	a, err := m.openReading(ctx, fs.g)
	if err != nil {
		return err
	}
	defer a.Close()
	pkg, err := a.mem.Upload(ctx, req)
	if err != nil {
		return err
	}
	if *fs.json {
		return writeJSON(m.Stdout, pkg)
	}
	io.WriteString(m.Stdout, pkg.Markdown)
	limit := fmt.Sprintf("%d of %d bytes, %d tokens", pkg.Bytes, pkg.MaxBytes, pkg.Tokens)
	if pkg.Budget > 0 {
		limit = fmt.Sprintf("%d of %d bytes, %d of %d tokens", pkg.Bytes, pkg.MaxBytes, pkg.Tokens, pkg.Budget)
	}
	dropped := "nothing"
	if len(pkg.Dropped) > 0 {
		dropped = strings.Join(pkg.Dropped, ", ")
	}
	var omitted int64
	for _, o := range pkg.Omitted {
		omitted += o.LastSeq - o.FirstSeq + 1
	}
	fmt.Fprintf(m.Stderr, "(upload package: %s by %s; merged periods: %d; omitted turns: %d; dropped: %s)\n",
		limit, pkg.Tokenizer, len(pkg.Merged), omitted, dropped)
	for _, w := range pkg.Warnings {
		fmt.Fprintln(m.Stderr, "warning:", w)
	}
	return nil
}
