package main

import (
	"context"
	"fmt"
)

// runForget deletes a conversation and everything it holds, keeping an
// audit record. It asks for --yes, since nothing brings the turns back.
func runForget(ctx context.Context, m *Main, args []string) error {
	fs := m.command("forget", "--conversation ID --yes [--reason TEXT] [--json]")
	conv := fs.String("conversation", "", "conversation id (required)")
	yes := fs.Bool("yes", false, "really delete: the turns, summaries, vectors, learnings and archive segments go for good")
	reason := fs.String("reason", "", "why, kept in the audit record")
	if err := fs.parse(args); err != nil {
		return err
	}
	if err := requireConversation(*conv); err != nil {
		return err
	}
	a, err := m.open(ctx, fs.g)
	if err != nil {
		return err
	}
	defer a.Close()
	if !*yes {
		c, err := a.mem.Conversation(ctx, *conv)
		if err != nil {
			return err
		}
		return usagef("forget: %q holds %d turns; nothing brings them back once deleted: run again with --yes", *conv, c.Turns)
	}
	d, err := a.mem.DeleteConversation(ctx, *conv, *reason)
	if err != nil {
		return err
	}
	if *fs.json {
		return writeJSON(m.Stdout, d)
	}
	fmt.Fprintf(m.Stdout, "%s: deleted %d turns, %d summary nodes, %d archive segments (%s of content); audit record kept\n",
		d.Conversation, d.Turns, d.Nodes, d.Segments, bytesHuman(d.ContentBytes))
	return nil
}
