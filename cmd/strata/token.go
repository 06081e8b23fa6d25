package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/strata-memory/strata"
)

// runToken creates, lists and revokes the server's bearer tokens. The
// secret is printed once, at creation; the store keeps only its hash.
func runToken(ctx context.Context, m *Main, args []string) error {
	sub := ""
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		sub, args = args[0], args[1:]
	}
	fs := m.command("token", "create --namespace N [--label L] | list [--namespace N] | revoke ID  [--json]")
	label := fs.String("label", "", "a note saying what the token is for (create)")
	if err := fs.parse(args); err != nil {
		return err
	}
	now := time.Now
	if m.Now != nil {
		now = m.Now
	}
	switch sub {
	case "create", "list", "revoke":
	default:
		return usagef("token: want create, list or revoke")
	}
	// --namespace is the global flag: the namespace a new token reads and
	// writes, and the one whose tokens are listed (every namespace's
	// without it).
	if sub == "create" && fs.g.namespace == "" {
		return usagef("token create: --namespace is required (the one namespace the token reads and writes)")
	}
	if sub == "revoke" && fs.NArg() != 1 {
		return usagef("token revoke: give one token ID (see 'strata token list')")
	}
	open := m.open
	if sub == "list" {
		open = m.openReading
	}
	a, err := open(ctx, fs.g)
	if err != nil {
		return err
	}
	defer a.Close()
	switch sub {
	case "create":
		return createToken(ctx, m, a, fs.g.namespace, *label, now(), *fs.json)
	case "list":
		return listTokens(ctx, m, a, fs.g.namespace, *fs.json)
	default:
		return revokeToken(ctx, m, a, fs.Arg(0), now(), *fs.json)
	}
}

// createToken stores a new token of namespace ns and prints its secret,
// which is shown this once.
func createToken(ctx context.Context, m *Main, a *app, ns, label string, now time.Time, asJSON bool) error {
	secret, t, err := strata.NewToken(ns, label, now)
	if err != nil {
		return err
	}
	if err := a.store.PutToken(ctx, t); err != nil {
		return err
	}
	if asJSON {
		return writeJSON(m.Stdout, map[string]any{"token": secret, "id": t.ID, "namespace": t.Namespace, "label": t.Label})
	}
	fmt.Fprintf(m.Stdout, "%s\n", secret)
	fmt.Fprintf(m.Stderr, "token %s for namespace %q: shown once, keep it; only its hash is stored\n", t.ID, t.Namespace)
	return nil
}

// listTokens lists the tokens of namespace ns, or of every namespace if
// ns is "".
func listTokens(ctx context.Context, m *Main, a *app, ns string, asJSON bool) error {
	ts, err := a.store.Tokens(ctx, ns)
	if err != nil {
		return err
	}
	if asJSON {
		if ts == nil {
			ts = []strata.Token{}
		}
		return writeJSON(m.Stdout, map[string]any{"tokens": ts})
	}
	for _, t := range ts {
		state := "valid"
		if !t.Revoked.IsZero() {
			state = "revoked " + t.Revoked.Format(time.RFC3339)
		}
		fmt.Fprintf(m.Stdout, "%s  %-20s  created %s  %s  %s\n", t.ID, t.Namespace, t.Created.Format(time.RFC3339), state, t.Label)
	}
	return nil
}

// revokeToken revokes the token of id at now.
func revokeToken(ctx context.Context, m *Main, a *app, id string, now time.Time, asJSON bool) error {
	t, err := a.store.RevokeToken(ctx, id, now)
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(m.Stdout, t)
	}
	fmt.Fprintf(m.Stdout, "token %s of namespace %q revoked at %s\n", t.ID, t.Namespace, t.Revoked.Format(time.RFC3339))
	return nil
}
