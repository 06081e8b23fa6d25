package storecopy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/strata-memory/strata"
)

// Mismatch is one difference Verify found between the two stores.
type Mismatch struct {
	Namespace    string `json:"namespace"`
	Conversation string `json:"conversation,omitempty"`
	What         string `json:"what"`
}

func (m Mismatch) String() string {
	if m.Conversation == "" {
		return fmt.Sprintf("%s: %s", m.Namespace, m.What)
	}
	return fmt.Sprintf("%s/%s: %s", m.Namespace, m.Conversation, m.What)
}

// Digest sums up one conversation as a store holds it: what Verify
// compares.
type Digest struct {
	Turns     int64  `json:"turns"`
	Sessions  int    `json:"sessions"`
	TurnsSum  string `json:"turns_sha256"` // every turn, expired stubs included, in seq order
	Nodes     int    `json:"nodes"`
	NodeIDs   string `json:"node_ids_sha256"`
	NodesSum  string `json:"nodes_sha256"` // every node: span, summary, facts, tier, status
	Learnings string `json:"learnings"`    // counts by status
	Calls     int    `json:"calls"`
	Vectors   string `json:"vectors"` // counts by space
	Expiries  int    `json:"expiries"`
	Settings  string `json:"settings"` // policy, time zone, important periods, learned seq, compaction state
}

// Verify compares every conversation of the namespaces (every namespace
// of src if none, see Copy) in src and dst, and each namespace's tokens,
// watch states and live-compaction states, whether or not it holds a
// conversation, and returns what differs; none means dst holds what src
// holds.
func Verify(ctx context.Context, src, dst strata.Store, nss []string) ([]Mismatch, error) {
	nss, err := namespaces(ctx, src, nss)
	if err != nil {
		return nil, err
	}
	var out []Mismatch
	for _, ns := range nss {
		a, err := src.Conversations(ctx, ns)
		if err != nil {
			return nil, err
		}
		b, err := dst.Conversations(ctx, ns)
		if err != nil {
			return nil, err
		}
		ids := func(cs []strata.Conversation) []string {
			var s []string
			for _, c := range cs {
				s = append(s, c.ID)
			}
			return s
		}
		if !slices.Equal(ids(a), ids(b)) {
			out = append(out, Mismatch{Namespace: ns, What: fmt.Sprintf("conversations %q in the source, %q in the destination", ids(a), ids(b))})
		}
		wa, err := src.WatchStates(ctx, ns)
		if err != nil {
			return nil, err
		}
		wb, err := dst.WatchStates(ctx, ns)
		if err != nil {
			return nil, err
		}
		if w := watchDiff(wa, wb); w != "" {
			out = append(out, Mismatch{Namespace: ns, What: w})
		}
		ca, err := src.CompactionStates(ctx, ns)
		if err != nil {
			return nil, err
		}
		cb, err := dst.CompactionStates(ctx, ns)
		if err != nil {
			return nil, err
		}
		for _, w := range compactionDiff(ca, cb) {
			out = append(out, Mismatch{Namespace: ns, What: w})
		}
		ts, err := tokenDiffs(ctx, src, dst, ns)
		if err != nil {
			return nil, err
		}
		for _, w := range ts {
			out = append(out, Mismatch{Namespace: ns, What: w})
		}
		inDst := map[string]bool{}
		for _, c := range b {
			inDst[c.ID] = true
		}
		for _, c := range a {
			if !inDst[c.ID] {
				continue
			}
			da, err := DigestOf(ctx, src, ns, c.ID)
			if err != nil {
				return nil, fmt.Errorf("verify: source %s/%s: %w", ns, c.ID, err)
			}
			db, err := DigestOf(ctx, dst, ns, c.ID)
			if err != nil {
				return nil, fmt.Errorf("verify: destination %s/%s: %w", ns, c.ID, err)
			}
			for _, d := range diff(da, db) {
				out = append(out, Mismatch{Namespace: ns, Conversation: c.ID, What: d})
			}
		}
	}
	return out, nil
}

// watchDiff describes how two namespaces' watch states differ ("" when
// they do not): the first path missing on one side or saved differently.
func watchDiff(a, b []strata.WatchFile) string {
	in := map[string]strata.WatchState{}
	for _, f := range b {
		in[f.Path] = f.WatchState
	}
	for _, f := range a {
		g, ok := in[f.Path]
		switch {
		case !ok:
			return fmt.Sprintf("watch state of %q only in the source", f.Path)
		case !sameWatch(f.WatchState, g):
			return fmt.Sprintf("watch state of %q: offset %d, %d lines in the source; offset %d, %d lines in the destination",
				f.Path, f.Offset, f.Lines, g.Offset, g.Lines)
		}
		delete(in, f.Path)
	}
	for _, f := range b {
		if _, ok := in[f.Path]; ok {
			return fmt.Sprintf("watch state of %q only in the destination", f.Path)
		}
	}
	return ""
}

// compactionDiff describes how two namespaces' live-compaction states
// differ: each conversation whose state is missing on one side or saved
// differently.
func compactionDiff(a, b []strata.ConversationCompaction) []string {
	in := map[string]strata.CompactionState{}
	for _, c := range b {
		in[c.Conversation] = c.CompactionState
	}
	var out []string
	for _, c := range a {
		d, ok := in[c.Conversation]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("compaction state of %q only in the source", c.Conversation))
		case !sameCompaction(c.CompactionState, d):
			out = append(out, fmt.Sprintf("compaction state of %q: %d turns, %d compactions, a checkpoint of %d bytes, updated %s in the source; %d turns, %d compactions, %d bytes, updated %s in the destination",
				c.Conversation, c.TurnCount, c.CompactionCount, len(c.Checkpoint), c.Updated.Format(time.RFC3339Nano),
				d.TurnCount, d.CompactionCount, len(d.Checkpoint), d.Updated.Format(time.RFC3339Nano)))
		}
		delete(in, c.Conversation)
	}
	for _, c := range b {
		if _, ok := in[c.Conversation]; ok {
			out = append(out, fmt.Sprintf("compaction state of %q only in the destination", c.Conversation))
		}
	}
	return out
}

// tokenDiffs describes how the namespace's bearer tokens differ in src
// and dst, when both keep tokens: each token missing on one side, held
// otherwise, or revoked on one side only or at another time.
func tokenDiffs(ctx context.Context, src, dst strata.Store, ns string) ([]string, error) {
	from, ok1 := src.(strata.TokenStore)
	to, ok2 := dst.(strata.TokenStore)
	if !ok1 || !ok2 {
		return nil, nil
	}
	a, err := from.Tokens(ctx, ns)
	if err != nil {
		return nil, err
	}
	b, err := to.Tokens(ctx, ns)
	if err != nil {
		return nil, err
	}
	in := map[string]strata.Token{}
	for _, t := range b {
		in[t.ID] = t
	}
	revoked := func(t strata.Token) string {
		if t.Revoked.IsZero() {
			return "not revoked"
		}
		return "revoked at " + t.Revoked.Format(time.RFC3339Nano)
	}
	var out []string
	for _, t := range a {
		u, ok := in[t.ID]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("token %s (%q) only in the source", t.ID, t.Label))
		case tokenDiff(t, u) != "":
			out = append(out, fmt.Sprintf("token %s: %s", t.ID, tokenDiff(t, u)))
		case !t.Revoked.Equal(u.Revoked):
			out = append(out, fmt.Sprintf("token %s: %s in the source, %s in the destination", t.ID, revoked(t), revoked(u)))
		}
		delete(in, t.ID)
	}
	for _, t := range b {
		if _, ok := in[t.ID]; ok {
			out = append(out, fmt.Sprintf("token %s (%q) only in the destination", t.ID, t.Label))
		}
	}
	return out, nil
}

// tokenDiff says how the token a differs from b, revocation aside, or ""
// if it does not. The secret's hash is not shown.
func tokenDiff(a, b strata.Token) string {
	var d []string
	if a.Hash != b.Hash {
		d = append(d, "another secret")
	}
	if a.Namespace != b.Namespace {
		d = append(d, fmt.Sprintf("namespace %q in the source, %q in the destination", a.Namespace, b.Namespace))
	}
	if a.Label != b.Label {
		d = append(d, fmt.Sprintf("label %q in the source, %q in the destination", a.Label, b.Label))
	}
	if !a.Created.Equal(b.Created) {
		d = append(d, fmt.Sprintf("created %s in the source, %s in the destination", a.Created.Format(time.RFC3339Nano), b.Created.Format(time.RFC3339Nano)))
	}
	return strings.Join(d, "; ")
}

// diff names the fields of two digests that differ.
func diff(a, b Digest) []string {
	var out []string
	add := func(name string, x, y any) {
		if x != y {
			out = append(out, fmt.Sprintf("%s: %v in the source, %v in the destination", name, x, y))
		}
	}
	add("turns", a.Turns, b.Turns)
	add("sessions", a.Sessions, b.Sessions)
	add("digest of the turns", a.TurnsSum, b.TurnsSum)
	add("nodes", a.Nodes, b.Nodes)
	add("node ids", a.NodeIDs, b.NodeIDs)
	add("digest of the nodes", a.NodesSum, b.NodesSum)
	add("learnings", a.Learnings, b.Learnings)
	add("model calls", a.Calls, b.Calls)
	add("vectors", a.Vectors, b.Vectors)
	add("expiry records", a.Expiries, b.Expiries)
	add("settings", a.Settings, b.Settings)
	return out
}

// turnsSum returns the hash of every turn of a conversation, expired
// ones too, with times in UTC.
func turnsSum(ctx context.Context, st strata.Store, ns, id string) (string, error) {
	h := sha256.New()
	enc := json.NewEncoder(h)
	for from := int64(1); ; {
		ts, err := st.Turns(ctx, strata.TurnFilter{Namespace: ns, Conversation: id, FromSeq: from, Limit: 5000, WithExpired: true})
		if err != nil {
			return "", err
		}
		for _, t := range ts {
			t.Time = t.Time.UTC()
			if err := enc.Encode(t); err != nil {
				return "", err
			}
		}
		if len(ts) < 5000 {
			break
		}
		from = ts[len(ts)-1].Seq + 1
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// nodesSum returns the number of nodes of a conversation, the hash of
// their ids and the hash of what they are.
func nodesSum(ctx context.Context, st strata.Store, ns, id string) (n int, ids, sum string, err error) {
	nodes, err := st.Nodes(ctx, strata.NodeFilter{Namespace: ns, Conversation: id})
	if err != nil {
		return 0, "", "", err
	}
	hi, hn := sha256.New(), sha256.New()
	encN := json.NewEncoder(hn)
	for _, n := range nodes {
		fmt.Fprintln(hi, n.ID)
		// What a node is, without times a store may round differently.
		if err := encN.Encode([]any{n.ID, n.Level, n.FirstSeq, n.LastSeq, n.Start.UTC(), n.End.UTC(), n.Children, n.Summary,
			n.Facts, n.Themes, n.Aggregates, n.SourceTokens, n.Tokens, n.Method, n.Status, n.Fallback, n.Derived, n.Key,
			n.Pending, n.Model, n.Rejected, n.Tier, n.ColdAt.UTC()}); err != nil {
			return 0, "", "", err
		}
	}
	return len(nodes), hex.EncodeToString(hi.Sum(nil)), hex.EncodeToString(hn.Sum(nil)), nil
}

// DigestOf reads one conversation of st whole and sums it up.
func DigestOf(ctx context.Context, st strata.Store, ns, id string) (Digest, error) {
	var d Digest
	c, err := st.Conversation(ctx, ns, id)
	if err != nil {
		return d, err
	}
	d.Turns, d.Sessions = c.Turns, c.Sessions
	if d.TurnsSum, err = turnsSum(ctx, st, ns, id); err != nil {
		return d, err
	}
	if d.Nodes, d.NodeIDs, d.NodesSum, err = nodesSum(ctx, st, ns, id); err != nil {
		return d, err
	}
	ls, err := st.Learnings(ctx, strata.LearningFilter{Namespace: ns, Conversation: id})
	if err != nil {
		return d, err
	}
	by := map[string]int{}
	for _, l := range ls {
		by[l.Status]++
	}
	d.Learnings = fmt.Sprint(by)
	calls, err := st.Calls(ctx, ns, id)
	if err != nil {
		return d, err
	}
	d.Calls = len(calls)
	vcs, err := st.VectorCounts(ctx, ns, id)
	if err != nil {
		return d, err
	}
	var vs []string
	for _, vc := range vcs {
		for _, sc := range vc.Spaces {
			vs = append(vs, fmt.Sprintf("%s/%d: %d turns, %d nodes", sc.Space.Model, sc.Space.Dim, sc.Turns, sc.Nodes))
		}
	}
	d.Vectors = fmt.Sprint(vs)
	ex, err := st.Expiries(ctx, ns, id)
	if err != nil {
		return d, err
	}
	d.Expiries = len(ex)
	cs, err := st.CompactionState(ctx, ns, id)
	if err != nil {
		return d, err
	}
	b, err := json.Marshal([]any{c.Policy, c.TimeZone, c.Important, c.LearnedSeq, cs})
	if err != nil {
		return d, err
	}
	d.Settings = string(b)
	return d, nil
}
