package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/strata-memory/strata"
)

// parseNow reads --now: RFC 3339, or a date (midnight UTC). Empty is zero.
func parseNow(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t, nil
	}
	return time.Time{}, usagef("--now %q: want RFC 3339 (2023-05-25T18:00:00Z) or a date (2023-05-25)", s)
}

func runZoom(ctx context.Context, m *Main, args []string) error {
	fs := m.command("zoom", "--conversation ID (--date D | --week YYYY-Www | --month YYYY-MM | --from D --to D | --when TEXT) [--now T] [--json]")
	conv := fs.String("conversation", "", "conversation id (required)")
	var zf zoomFlags
	zf.date = fs.String("date", "", "a day: 2023-05-08")
	zf.week = fs.String("week", "", "an ISO week: 2023-W19")
	zf.month = fs.String("month", "", "a month: 2023-05")
	zf.from = fs.String("from", "", "first day of a range: 2023-05-08")
	zf.to = fs.String("to", "", "last day of a range (inclusive): 2023-05-14")
	zf.when = fs.String("when", "", "a period label or time expression: yesterday, last week, on Tuesday, in March, 25 May 2023, 2023-W19")
	now := fs.String("now", "", "what relative expressions count from (default: the conversation's newest turn)")
	if err := fs.parse(args); err != nil {
		return err
	}
	if err := requireConversation(*conv); err != nil {
		return err
	}
	if err := zf.check(); err != nil {
		return err
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
	c, err := a.mem.Conversation(ctx, *conv)
	if err != nil {
		return err
	}
	p, err := zf.period(ctx, a, *conv, c, ref)
	if err != nil {
		return err
	}
	turns, err := a.mem.Zoom(ctx, *conv, p)
	if err != nil {
		return err
	}
	if *fs.json {
		items := make([]strata.Item, len(turns))
		for i, t := range turns {
			items[i] = strata.TurnItem(t, strata.ReasonZoom)
		}
		return writeJSON(m.Stdout, struct {
			Conversation string        `json:"conversation"`
			Period       string        `json:"period"`
			Start        time.Time     `json:"start"`
			End          time.Time     `json:"end"`
			Turns        int           `json:"turns"`
			Items        []strata.Item `json:"items"`
		}{*conv, p.Label(), p.Start, p.End, len(turns), items})
	}
	fmt.Fprintf(m.Stdout, "%s, %s (%s .. %s %s): %d turns\n\n", *conv, p.Label(),
		p.Start.Format("2006-01-02 15:04"), p.End.Format("2006-01-02 15:04"), c.Location(), len(turns))
	for _, t := range turns {
		fmt.Fprintf(m.Stdout, "[%d %s %s] %s: %s\n", t.Seq, t.ExtID, day(t.Time), t.Speaker(), t.Text())
	}
	return nil
}

// zoomFlags are the flags of 'strata zoom' that name its period.
type zoomFlags struct {
	date, week, month, from, to, when *string
}

// check refuses anything but one way of naming the period.
func (zf zoomFlags) check() error {
	given := 0
	for _, v := range []string{*zf.date, *zf.week, *zf.month, *zf.when} {
		if v != "" {
			given++
		}
	}
	if *zf.from != "" || *zf.to != "" {
		given++
		if *zf.from == "" || *zf.to == "" {
			return usagef("zoom: --from and --to go together")
		}
	}
	if given != 1 {
		return usagef("zoom: give one of --date, --week, --month, --from/--to or --when")
	}
	return nil
}

// period returns the period the flags name in conversation conv (c), a
// --when expression counting from ref.
func (zf zoomFlags) period(ctx context.Context, a *app, conv string, c strata.Conversation, ref time.Time) (strata.Period, error) {
	switch {
	case *zf.date != "" || *zf.week != "" || *zf.month != "":
		label, flagName := first(*zf.date, *zf.week, *zf.month), "--date"
		if *zf.week != "" {
			flagName = "--week"
		} else if *zf.month != "" {
			flagName = "--month"
		}
		p, err := strata.ParsePeriod(label, c.Location())
		if err != nil {
			return p, usagef("zoom %s: %v", flagName, err)
		}
		want := map[string]strata.PeriodKind{"--date": strata.PeriodDay, "--week": strata.PeriodWeek, "--month": strata.PeriodMonth}[flagName]
		if p.Kind != want {
			return p, usagef("zoom %s %q: that is a %s, not a %s", flagName, label, p.Kind, want)
		}
		return p, nil
	case *zf.when != "":
		p, err := a.mem.ZoomPeriod(ctx, conv, *zf.when, ref)
		if err != nil && strata.ErrorCode(err) == strata.EINVALID {
			return p, usagef("zoom --when: %v", err)
		}
		return p, err
	default:
		f, err1 := strata.ParsePeriod(*zf.from, c.Location())
		t, err2 := strata.ParsePeriod(*zf.to, c.Location())
		if err := errors.Join(err1, err2); err != nil {
			return strata.Period{}, usagef("zoom --from/--to: %v", err)
		}
		p, err := strata.RangePeriod(f.Start, t.Start, c.Location())
		if err != nil {
			return p, usagef("%v", err)
		}
		return p, nil
	}
}

func runPin(ctx context.Context, m *Main, args []string) error {
	fs := m.command("pin", "--conversation ID (--seq N | --ext-id ID | --day D) [--importance X | --unpin] [--json]")
	conv := fs.String("conversation", "", "conversation id (required)")
	seq := fs.Int64("seq", 0, "the turn's seq (see 'strata expand' or 'search')")
	extID := fs.String("ext-id", "", "the turn's ext_id")
	period := fs.String("day", "", "mark a whole period important instead: a day (2023-05-08), week (2023-W19) or month (2023-05)")
	importance := fs.Float64("importance", 1, "importance to set, 0..1 (0.8 and above pins)")
	unpin := fs.Bool("unpin", false, "unpin: importance 0, or clear the period's mark")
	if err := fs.parse(args); err != nil {
		return err
	}
	if err := requireConversation(*conv); err != nil {
		return err
	}
	picked := 0
	for _, b := range []bool{*seq != 0, *extID != "", *period != ""} {
		if b {
			picked++
		}
	}
	if picked != 1 {
		return usagef("pin: give one of --seq, --ext-id or --day")
	}
	a, err := m.open(ctx, fs.g)
	if err != nil {
		return err
	}
	defer a.Close()
	if *period != "" {
		marks, err := a.mem.MarkImportant(ctx, *conv, *period, !*unpin)
		if err != nil {
			return err
		}
		if *fs.json {
			return writeJSON(m.Stdout, map[string]any{"conversation": *conv, "important": marks})
		}
		verb := "marked important"
		if *unpin {
			verb = "no longer marked important"
		}
		fmt.Fprintf(m.Stdout, "%s: %s %s; important periods: %v\n", *conv, *period, verb, marks)
		return nil
	}
	if *extID != "" {
		ts, err := a.mem.Store().Turns(ctx, strata.TurnFilter{Namespace: a.mem.Namespace(), Conversation: *conv, ExtIDs: []string{*extID}})
		if err != nil {
			return err
		}
		if len(ts) == 0 {
			return strata.Errorf(strata.ENOTFOUND, "conversation %q has no turn with ext_id %q", *conv, *extID)
		}
		*seq = ts[0].Seq
	}
	if *unpin {
		*importance = 0
	}
	t, err := a.mem.Pin(ctx, *conv, *seq, *importance)
	if err != nil {
		return err
	}
	if *fs.json {
		return writeJSON(m.Stdout, t)
	}
	state := "pinned (a milestone)"
	if !t.Pinned() {
		state = "not pinned"
	}
	fmt.Fprintf(m.Stdout, "%s turn %d (%s): importance %g, %s\n", *conv, t.Seq, t.ExtID, t.Importance, state)
	return nil
}

const policyUsage = "Usage: strata policy show [--conversation ID] [--json]  |  strata policy set --conversation ID NAME [--json]"

func runPolicy(ctx context.Context, m *Main, args []string) error {
	if len(args) > 0 && isHelpFlag(args[0]) {
		m.printHelp("policy", policyUsage+"\n\nRun 'strata help policy show' or 'strata help policy set' for the flags.")
		return flag.ErrHelp
	}
	if len(args) == 0 || (args[0] != "set" && args[0] != "show") {
		return usagef("policy: 'strata policy show [--conversation ID]' or 'strata policy set --conversation ID NAME'")
	}
	sub := args[0]
	fs := m.command("policy "+sub, "--conversation ID [NAME] [--json]")
	conv := fs.String("conversation", "", "conversation id")
	if err := fs.parse(args[1:]); err != nil {
		return err
	}
	open := m.open
	if sub == "show" {
		open = m.openReading
	}
	a, err := open(ctx, fs.g)
	if err != nil {
		return err
	}
	defer a.Close()
	if sub == "show" {
		return showPolicy(ctx, m, a, fs, *conv)
	}
	if err := requireConversation(*conv); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("policy set: give one policy NAME (chunks, calendar, sessions, or one of the config file)")
	}
	ch, err := a.mem.SetPolicy(ctx, *conv, fs.Arg(0))
	if err != nil {
		return err
	}
	if *fs.json {
		return writeJSON(m.Stdout, ch)
	}
	fmt.Fprintf(m.Stdout, "%s: policy %s -> %s: %d nodes removed, %d made, %d spans moved between tiers\n",
		ch.Conversation, first(ch.From, "(default)"), ch.To, ch.Removed, ch.Made, ch.Moved)
	return nil
}

// showPolicy is 'strata policy show': the policy named, else that of
// conversation conv, else the configured one, level by level.
func showPolicy(ctx context.Context, m *Main, a *app, fs *cmdline, conv string) error {
	name := ""
	if conv != "" {
		c, err := a.mem.Conversation(ctx, conv)
		if err != nil {
			return err
		}
		name = c.Policy
	}
	if fs.NArg() == 1 {
		name = fs.Arg(0)
	}
	p := a.set.Policy
	if name != "" {
		var err error
		if p, err = a.mem.Policy(name); err != nil {
			return err
		}
	}
	if *fs.json {
		return writeJSON(m.Stdout, p)
	}
	fmt.Fprintf(m.Stdout, "policy %s\n", p.Name)
	for i, l := range p.Levels {
		what := ""
		switch l.Kind {
		case strata.KindCount:
			what = fmt.Sprintf("every %d %s nodes", l.Span, p.LevelName(i))
			if i == 0 {
				what = fmt.Sprintf("every %d turns", l.Span)
			}
		case strata.KindSession:
			what = "one per session"
		case strata.KindCalendar:
			what = "one per " + string(l.Period)
		}
		fmt.Fprintf(m.Stdout, "  level %d %-8s %-22s budget %d", i+1, l.Name, what, l.Budget)
		if l.Window > 0 {
			fmt.Fprintf(m.Stdout, ", window %s", time.Duration(l.Window))
		}
		fmt.Fprintln(m.Stdout)
	}
	return nil
}
