package main

import (
	"context"
	"fmt"

	"github.com/strata-memory/strata"
)

// conversationIDs is the conversation named by id, or every conversation.
func (a *app) conversationIDs(ctx context.Context, id string) ([]string, error) {
	if id != "" {
		if _, err := a.mem.Conversation(ctx, id); err != nil {
			return nil, err
		}
		return []string{id}, nil
	}
	cs, err := a.mem.Conversations(ctx)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(cs))
	for i, c := range cs {
		ids[i] = c.ID
	}
	return ids, nil
}

func runTier(ctx context.Context, m *Main, args []string) error {
	fs := m.command("tier", "[--conversation ID] [--dry-run] [--vacuum] [--json]")
	conv := fs.String("conversation", "", "conversation id (default: every conversation)")
	dry := fs.Bool("dry-run", false, "show what would move and expire; change nothing")
	vacuum := fs.Bool("vacuum", false, "then compress the summaries (SQLite: with a dictionary trained on them, and those of upper levels against their children's) and give the database's free pages back to the file system")
	if err := fs.parse(args); err != nil {
		return err
	}
	a, err := m.open(ctx, fs.g)
	if err != nil {
		return err
	}
	defer a.Close()
	if a.set.Tiers.Off && !*fs.json {
		fmt.Fprintln(m.Stderr, "strata: tiering is off in the configuration (tiers: off: true); nothing moves")
	}
	ids, err := a.conversationIDs(ctx, *conv)
	if err != nil {
		return err
	}
	results := []strata.TierResult{}
	for _, id := range ids {
		var r strata.TierResult
		if *dry {
			r, err = a.mem.TierPlan(ctx, id)
		} else {
			r, err = a.mem.Tier(ctx, id)
		}
		results = append(results, r)
		if err != nil {
			printTier(m, results, *dry)
			return fmt.Errorf("%s: %w", id, err)
		}
	}
	if *vacuum && !*dry {
		// SQLite merges its full-text indexes and gives free pages
		// back; PostgreSQL's autovacuum does that work itself.
		if v, ok := a.store.(interface{ Vacuum(context.Context) error }); ok {
			if err := v.Vacuum(ctx); err != nil {
				return err
			}
		}
	}
	if *fs.json {
		return writeJSON(m.Stdout, results)
	}
	printTier(m, results, *dry)
	return nil
}

func printTier(m *Main, results []strata.TierResult, dry bool) {
	verb := "moved"
	if dry {
		verb = "would move"
	}
	for _, r := range results {
		counts := map[strata.Tier]int{}
		var turns, bytes int64
		for _, mv := range r.Moves {
			counts[mv.To]++
			turns += mv.Turns
			bytes += mv.Bytes
		}
		var expTurns int64
		for _, e := range r.Expired {
			expTurns += e.Turns
		}
		line := fmt.Sprintf("%s: %s %d spans to warm and %d to cold (%d turns", r.Conversation, verb,
			counts[strata.TierWarm], counts[strata.TierCold], turns)
		if !dry {
			line += ", " + bytesHuman(bytes)
		}
		line += ")"
		if len(r.Expired) > 0 {
			v := "expired"
			if dry {
				v = "would expire"
			}
			line += fmt.Sprintf("; %s %d spans (%d turns)", v, len(r.Expired), expTurns)
		}
		fmt.Fprintln(m.Stdout, line)
	}
}

func runRetention(ctx context.Context, m *Main, args []string) error {
	fs := m.command("retention", "[--conversation ID] [--dry-run] [--log] [--json]")
	conv := fs.String("conversation", "", "conversation id (default: every conversation)")
	dry := fs.Bool("dry-run", false, "show what would be deleted; delete nothing")
	log := fs.Bool("log", false, "list the audit records of earlier deletions instead")
	if err := fs.parse(args); err != nil {
		return err
	}
	a, err := m.open(ctx, fs.g)
	if err != nil {
		return err
	}
	defer a.Close()
	if *log {
		ex, err := a.store.Expiries(ctx, a.mem.Namespace(), *conv)
		if err != nil {
			return err
		}
		if *fs.json {
			return writeJSON(m.Stdout, ex)
		}
		if len(ex) == 0 {
			fmt.Fprintln(m.Stdout, "no raw content has expired")
		}
		for _, e := range ex {
			printExpiry(m, e, "deleted")
		}
		return nil
	}
	days := a.set.Tiers.ColdRetentionDays
	if days == 0 && !*fs.json {
		fmt.Fprintln(m.Stderr, "strata: cold_retention_days is 0 (keep forever): nothing expires")
	}
	ids, err := a.conversationIDs(ctx, *conv)
	if err != nil {
		return err
	}
	var all []strata.Expiry
	for _, id := range ids {
		r, err := a.mem.Retention(ctx, id, *dry)
		all = append(all, r.Expired...)
		if err != nil {
			return fmt.Errorf("%s: %w", id, err)
		}
	}
	if *fs.json {
		if all == nil {
			all = []strata.Expiry{}
		}
		return writeJSON(m.Stdout, all)
	}
	verb := "deleted"
	if *dry {
		verb = "would delete"
	}
	for _, e := range all {
		printExpiry(m, e, verb)
	}
	if len(all) == 0 && days > 0 {
		fmt.Fprintf(m.Stdout, "nothing went cold more than %d days ago\n", days)
	}
	return nil
}

// printExpiry writes one audit record: when, what, by which rule, and the
// two times retention knows of the span (when it went cold, which the rule
// counts from, and its newest turn).
func printExpiry(m *Main, e strata.Expiry, verb string) {
	const day = "2006-01-02 15:04"
	cold := "unknown"
	if !e.ColdAt.IsZero() {
		cold = e.ColdAt.Format(day)
	}
	newest := "unknown"
	if !e.NewestTurn.IsZero() {
		newest = e.NewestTurn.Format(day)
	}
	fmt.Fprintf(m.Stdout, "%s %s: %s turns %d-%d of %s (%d turns, %s) by %s; cold since %s, newest turn %s\n",
		e.At.Format(day), verb, e.NodeID, e.FirstSeq, e.LastSeq, e.Conversation, e.Turns, bytesHuman(e.Bytes), e.Rule,
		cold, newest)
}
