package storecopy

import (
	"context"
	"fmt"
	"strings"

	"github.com/strata-memory/strata"
)

// maxProblems is how many bad records a refused copy names.
const maxProblems = 20

// check reads every namespace, conversation, turn, node and learning Copy
// would write and returns an EINVALID error naming the records that break
// strata's one definition of valid input (see strata.CheckText and
// Turn.Validate): a NUL or invalid UTF-8 in a text field, an id or a turn
// over its limit. An older store may hold such records (SQLite kept them
// before the rule); PostgreSQL cannot store NUL or invalid UTF-8 in text,
// and a copy that met one half way would stop there on every run. So the
// copy checks first and writes nothing if any is found: it never changes
// or drops what it carries. Remove or fix them at the source (strata
// forget the conversation, or export it, fix the lines and import again),
// then copy.
func check(ctx context.Context, src strata.Store, nss []string, batch int) error {
	var bad []string
	n := 0
	add := func(format string, args ...any) {
		n++
		if len(bad) < maxProblems {
			bad = append(bad, fmt.Sprintf(format, args...))
		}
	}
	for _, ns := range nss {
		if err := strata.ValidateNamespace(ns); err != nil {
			add("namespace %q: %v", ns, err)
			continue
		}
		convs, err := src.Conversations(ctx, ns)
		if err != nil {
			return fmt.Errorf("copy: listing conversations of namespace %q: %w", ns, err)
		}
		for _, c := range convs {
			if err := strata.ValidateConversationID(c.ID); err != nil {
				add("%s/%q: %v", ns, c.ID, err)
				continue
			}
			for from := int64(1); from <= c.Turns; {
				ts, err := src.Turns(ctx, strata.TurnFilter{Namespace: ns, Conversation: c.ID, FromSeq: from, Limit: batch, WithExpired: true})
				if err != nil {
					return fmt.Errorf("copy: checking %s/%s: %w", ns, c.ID, err)
				}
				if len(ts) == 0 {
					break
				}
				for i := range ts {
					if err := ts[i].Validate(); err != nil {
						add("%s/%s turn %d (ext_id %q): %v", ns, c.ID, ts[i].Seq, ts[i].ExtID, err)
					}
				}
				from = ts[len(ts)-1].Seq + 1
			}
			nodes, err := src.Nodes(ctx, strata.NodeFilter{Namespace: ns, Conversation: c.ID})
			if err != nil {
				return fmt.Errorf("copy: checking %s/%s: %w", ns, c.ID, err)
			}
			for _, nd := range nodes {
				texts := append([]string{nd.Summary, nd.Key}, nd.Facts...)
				texts = append(texts, nd.Themes...)
				for _, s := range texts {
					if err := strata.CheckText("summary", s); err != nil {
						add("%s/%s node %s: %v", ns, c.ID, nd.ID, err)
						break
					}
				}
			}
			ls, err := src.Learnings(ctx, strata.LearningFilter{Namespace: ns, Conversation: c.ID})
			if err != nil {
				return fmt.Errorf("copy: checking %s/%s: %w", ns, c.ID, err)
			}
			for _, l := range ls {
				if err := strata.CheckText("subject", l.Subject); err != nil {
					add("%s/%s learning %d: %v", ns, c.ID, l.ID, err)
				} else if err := strata.CheckText("text", l.Text); err != nil {
					add("%s/%s learning %d: %v", ns, c.ID, l.ID, err)
				}
			}
		}
	}
	if n == 0 {
		return nil
	}
	more := ""
	if n > len(bad) {
		more = fmt.Sprintf("\n  and %d more", n-len(bad))
	}
	return strata.Errorf(strata.EINVALID, "copy: the source holds %d records that no store may keep (a NUL or invalid UTF-8 in text, an id or a turn over its limit); nothing was copied. "+
		"Remove or fix them at the source (strata forget the conversation, or export it, fix the lines and import it again), then copy:\n  %s%s",
		n, strings.Join(bad, "\n  "), more)
}
