package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/strata-memory/strata"
)

func runLearnings(ctx context.Context, m *Main, args []string) error {
	sub := ""
	if len(args) > 0 && args[0] == "expand" {
		return runLearningExpand(ctx, m, args[1:])
	}
	if len(args) > 0 && (args[0] == "confirm" || args[0] == "reject" || args[0] == "reopen") {
		sub, args = args[0], args[1:]
	}
	fs := m.command("learnings", "[--conversation ID] [--status auto|confirmed|rejected|superseded] [--subject S] [--json]  |  learnings confirm|reject|reopen ID...  |  learnings expand ID")
	conv := fs.String("conversation", "", "conversation id (default: every conversation)")
	status := fs.String("status", "", "only learnings with this status (default: auto and confirmed; 'all' for every one)")
	subject := fs.String("subject", "", "only learnings about this subject (as listed)")
	if err := fs.parse(args); err != nil {
		return err
	}
	if sub == "" && fs.NArg() > 0 {
		return usagef("learnings: unexpected %q: a subcommand (confirm, reject, reopen, expand) comes before the flags, as in 'strata learnings expand ID --db FILE'", fs.Arg(0))
	}
	a, err := m.open(ctx, fs.g) // listing writes too: it extracts the learnings not yet extracted
	if err != nil {
		return err
	}
	defer a.Close()
	if sub != "" {
		return setLearningStatus(ctx, m, a, fs, sub)
	}
	// Listing reads the facts no pass has read yet first.
	if err := learnFirst(ctx, m, a.mem, *conv); err != nil {
		return err
	}
	f := strata.LearningFilter{Conversation: *conv, Subject: *subject}
	switch *status {
	case "":
		f.Statuses = []string{strata.LearningAuto, strata.LearningConfirmed}
	case "all":
	default:
		f.Statuses = []string{*status}
	}
	ls, err := a.mem.Learnings(ctx, f)
	if err != nil {
		return err
	}
	if *fs.json {
		if ls == nil {
			ls = []strata.Learning{}
		}
		return writeJSON(m.Stdout, struct {
			Learnings []strata.Learning `json:"learnings"`
		}{ls})
	}
	if len(ls) == 0 {
		fmt.Fprintln(m.Stdout, "no learnings")
		return nil
	}
	for _, l := range ls {
		line := fmt.Sprintf("#%-5d %-10s %s  (%s, turns %d-%d; subject %q)", l.ID, l.Status, oneLine(l.Text, 90),
			l.Conversation, l.FirstSeq, l.LastSeq, l.Subject)
		if l.SupersededBy != 0 {
			line += fmt.Sprintf(" -> #%d", l.SupersededBy)
		}
		fmt.Fprintln(m.Stdout, line)
	}
	return nil
}

// setLearningStatus is 'strata learnings confirm|reject|reopen ID...':
// it sets the status sub names on each learning given.
func setLearningStatus(ctx context.Context, m *Main, a *app, fs *cmdline, sub string) error {
	if fs.NArg() == 0 {
		return usagef("learnings %s: give at least one learning ID (see 'strata learnings')", sub)
	}
	to := map[string]string{"confirm": strata.LearningConfirmed, "reject": strata.LearningRejected, "reopen": strata.LearningAuto}[sub]
	var done []strata.Learning
	for _, arg := range fs.Args() {
		id, err := strconv.ParseInt(arg, 10, 64)
		if err != nil {
			return usagef("learnings %s: %q is not a learning ID", sub, arg)
		}
		l, err := a.mem.SetLearningStatus(ctx, id, to)
		if err != nil {
			return err
		}
		done = append(done, l)
	}
	if *fs.json {
		return writeJSON(m.Stdout, struct {
			Learnings []strata.Learning `json:"learnings"`
		}{done})
	}
	for _, l := range done {
		fmt.Fprintf(m.Stdout, "#%d %s: %s\n", l.ID, l.Status, l.Text)
	}
	return nil
}

// runLearningExpand is learnings expand: a learning and the turns it came
// from.
func runLearningExpand(ctx context.Context, m *Main, args []string) error {
	fs := m.command("learnings expand", "[--json] ID")
	if err := fs.parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("learnings expand: give one learning ID (see 'strata learnings')")
	}
	id, err := strconv.ParseInt(fs.Arg(0), 10, 64)
	if err != nil {
		return usagef("learnings expand: %q is not a learning ID", fs.Arg(0))
	}
	a, err := m.open(ctx, fs.g)
	if err != nil {
		return err
	}
	defer a.Close()
	l, ts, err := a.mem.ExpandLearning(ctx, id)
	if err != nil {
		return err
	}
	if *fs.json {
		if ts == nil {
			ts = []strata.Turn{}
		}
		return writeJSON(m.Stdout, struct {
			Learning strata.Learning `json:"learning"`
			Turns    []strata.Turn   `json:"turns"`
		}{l, ts})
	}
	fmt.Fprintf(m.Stdout, "#%d %s: %s\n", l.ID, l.Status, l.Text)
	fmt.Fprintf(m.Stdout, "  subject %q", l.Subject)
	if l.About != "" {
		fmt.Fprintf(m.Stdout, "; about %s, %s: %s", l.About, l.Attribute, l.Value)
	}
	if l.When != "" {
		fmt.Fprintf(m.Stdout, "; when %s", l.When)
	}
	if l.SupersededBy != 0 {
		fmt.Fprintf(m.Stdout, "; superseded by #%d", l.SupersededBy)
	}
	fmt.Fprintln(m.Stdout)
	for _, t := range ts {
		ext := ""
		if t.ExtID != "" {
			ext = " " + t.ExtID
		}
		fmt.Fprintf(m.Stdout, "  [turn %d%s, %s] %s: %s\n", t.Seq, ext, t.Time.Format("2006-01-02 15:04"), t.Speaker(), t.Content)
	}
	return nil
}

// learnFirst reads the learnings of conv (every conversation if "") that
// no pass has read yet, and says on stderr when another process holds the
// claim of some: their newest learnings come once it is done.
func learnFirst(ctx context.Context, m *Main, mem *strata.Memory, conv string) error {
	res, err := mem.Learn(ctx, conv)
	if err != nil {
		return err
	}
	if res.Claimed > 0 {
		fmt.Fprintf(m.Stderr, "strata: another process is reading the learnings of %d conversation(s); what it reads shows once it is done\n", res.Claimed)
	}
	return nil
}
