package moorgen

import (
	"strings"

	"github.com/strata-memory/strata/compact/internal/opsgen"
)

// The kinds of place a text of the session can be in. A label must occur
// in places of its own class only (a written path may also be named in
// any place after the write that created it).
type placeKind uint8

const (
	inSystem placeKind = iota
	inUser
	inAssistant
	inCall  // arguments of a call that does not write
	inWrite // arguments of write_file and replace_in_file
	inError // a failure line of a failed command
	inPass  // any other line of a tool output
	nKinds
)

var home = map[opsgen.Class]placeKind{
	opsgen.ErrorLine:     inError,
	opsgen.PassingOutput: inPass,
	opsgen.FileWritten:   inWrite,
	opsgen.UserTurn:      inUser,
}

type place struct {
	kind placeKind
	text string
}

// places lists the session's texts in order with the kind of their place.
func places(system string, msgs []opsgen.Message) []place {
	ps := []place{{inSystem, system}}
	for _, m := range msgs {
		switch m.Role {
		case "user":
			ps = append(ps, place{inUser, m.Text})
		case "assistant":
			ps = append(ps, place{inAssistant, m.Text})
			for _, c := range m.Calls {
				k := inCall
				if c.Writes() {
					k = inWrite
				}
				for _, a := range c.Args {
					ps = append(ps, place{k, a.Value})
				}
			}
		case "tool":
			for _, r := range m.Results {
				errs := map[int]bool{}
				if r.Failed() {
					for _, i := range r.ErrLines {
						errs[i] = true
					}
				}
				for i, l := range strings.Split(r.Output, "\n") {
					k := inPass
					if errs[i] {
						k = inError
					}
					ps = append(ps, place{k, l})
				}
			}
		}
	}
	return ps
}

// occurrence records where a label was found: the kinds of place, and the
// kind of its first place.
type occurrence struct {
	kinds [nKinds]bool
	first placeKind
	found bool
}

// locate finds every label in every place. Labels are at least six bytes
// long; they are indexed by their first six bytes, so the session is
// scanned once.
func locate(labels []opsgen.Label, ps []place) []occurrence {
	const key = 6
	idx := map[string][]int{}
	var two [1 << 16]bool
	for i, l := range labels {
		k := l.Text[:key]
		idx[k] = append(idx[k], i)
		two[int(k[0])<<8|int(k[1])] = true
	}
	occ := make([]occurrence, len(labels))
	for _, p := range ps {
		t := p.text
		for i := 0; i+key <= len(t); i++ {
			if !two[int(t[i])<<8|int(t[i+1])] {
				continue
			}
			cands, ok := idx[t[i:i+key]]
			if !ok {
				continue
			}
			for _, c := range cands {
				if strings.HasPrefix(t[i:], labels[c].Text) {
					o := &occ[c]
					if !o.found {
						o.found, o.first = true, p.kind
					}
					o.kinds[p.kind] = true
				}
			}
		}
	}
	return occ
}

// validate takes back every label that is not where the contract says: a
// label found in no place of its class, or in a place of another class
// (a written path: first found anywhere but in a write). Such a clash can
// only be chance (noise that happens to hold a label); the generator keeps
// count of them.
func (g *gen) validate(system string) {
	ps := places(system, g.msgs)
	occ := locate(g.labels, ps)
	kept := g.labels[:0]
	for i, l := range g.labels {
		o := occ[i]
		want := home[l.Class]
		ok := o.found && o.kinds[want]
		if l.Class == opsgen.FileWritten && l.Kind == "path" {
			ok = ok && o.first == inWrite
		} else {
			for k := range nKinds {
				if o.kinds[k] && k != want {
					ok = false
				}
			}
		}
		if ok {
			kept = append(kept, l)
		} else {
			g.dropped++
		}
	}
	g.labels = kept
}
