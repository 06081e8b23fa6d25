// Package synth generates deterministic, realistic-looking conversations
// for tests and benchmarks: Zipf-distributed English words in sentences,
// with names, numbers, dates, paths and identifiers mixed in, two speakers
// taking turns, sessions separated by idle gaps.
package synth

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/strata-memory/strata"
)

var words = strings.Fields(`the be to of and a in that have I it for not on with he as you do at this but his by
from they we say her she or an will my one all would there their what so up out if about who get which go me when
make can like time no just him know take people into year your good some could them see other than then now look
only come its over think also back after use two how our work first well way even new want because any these give
day most us is was are been has had were said did made found went going really great love feel thanks sure maybe
today yesterday tomorrow week month weekend morning evening night family friend friends kids dog cat home house
school job project team meeting plan plans trip travel book books music song painting art class course run race
garden recipe dinner lunch coffee bakery flour bread order orders supplier price prices report email phone call
support group community event events party birthday camping hiking beach park city car bike game games movie movies
photo photos picture pictures idea ideas question answer problem fix bug test tests code server database deploy
release version config file files folder script command error log logs memory budget token tokens summary summaries
stress health doctor sleep exercise yoga running swimming guitar piano violin drawing pottery sculpture career
volunteer adoption counseling mentor workshop conference interview presentation deadline schedule calendar holiday`)

var names = strings.Fields(`Caroline Melanie Jon Gina Maya Tomás Priya Kenji Amara Lucas Sofia Omar Hannah Diego Yuki Nadia`)

var extras = []func(r *rand.Rand) string{
	func(r *rand.Rand) string { return fmt.Sprintf("%d", r.IntN(2000)) },
	func(r *rand.Rand) string { return fmt.Sprintf("$%d.%02d", r.IntN(500), r.IntN(100)) },
	func(r *rand.Rand) string {
		return time.Date(2023, time.Month(1+r.IntN(12)), 1+r.IntN(28), 0, 0, 0, 0, time.UTC).Format("2 January 2006")
	},
	func(r *rand.Rand) string { return fmt.Sprintf("/srv/app/%s/%s.go", pick(r, words), pick(r, words)) },
	func(r *rand.Rand) string {
		return fmt.Sprintf("https://example.org/%s/%d", pick(r, words), r.IntN(100))
	},
	func(r *rand.Rand) string { return fmt.Sprintf("%s_%s", pick(r, words), pick(r, words)) },
	func(r *rand.Rand) string { return fmt.Sprintf("%d kg", 1+r.IntN(90)) },
}

func pick(r *rand.Rand, list []string) string { return list[r.IntN(len(list))] }

// Generator yields turns one at a time.
type Generator struct {
	r        *rand.Rand
	zipf     *rand.Zipf
	seq      int
	t        time.Time
	session  int
	perSess  int
	speakers [2]string
}

// New returns a generator seeded with seed; the same seed yields the same
// conversation.
func New(seed uint64) *Generator {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	g := &Generator{r: r, zipf: rand.NewZipf(r, 1.2, 4, uint64(len(words)-1)),
		t: time.Date(2023, 1, 2, 9, 0, 0, 0, time.UTC)}
	g.speakers = [2]string{pick(r, names), pick(r, names)}
	return g
}

func (g *Generator) sentence() string {
	n := 5 + g.r.IntN(14)
	ws := make([]string, 0, n+2)
	for i := 0; i < n; i++ {
		switch x := g.r.IntN(40); {
		case x == 0:
			ws = append(ws, pick(g.r, names))
		case x == 1:
			ws = append(ws, extras[g.r.IntN(len(extras))](g.r))
		default:
			ws = append(ws, words[g.zipf.Uint64()])
		}
	}
	s := strings.Join(ws, " ")
	end := ".!?."[g.r.IntN(4)]
	return strings.ToUpper(s[:1]) + s[1:] + string(end)
}

// Next returns the next turn: 1-4 sentences (about 45 tokens on average),
// a second to two minutes after the previous one, with a new session after
// 10-40 turns.
func (g *Generator) Next() strata.Turn {
	if g.perSess == 0 {
		g.session++
		g.perSess = 10 + g.r.IntN(30)
		g.t = g.t.Add(time.Duration(20+g.r.IntN(60)) * time.Hour)
	}
	g.perSess--
	g.seq++
	g.t = g.t.Add(time.Duration(1+g.r.IntN(120)) * time.Second)
	k := 1 + g.r.IntN(3)
	parts := make([]string, k)
	for i := range parts {
		parts[i] = g.sentence()
	}
	role := strata.RoleUser
	if g.seq%2 == 0 {
		role = strata.RoleAssistant
	}
	return strata.Turn{
		ExtID:        fmt.Sprintf("t%d", g.seq),
		SessionLabel: fmt.Sprintf("s%d", g.session),
		Role:         role,
		Name:         g.speakers[g.seq%2],
		Content:      strings.Join(parts, " "),
		Time:         g.t,
	}
}

// Turns returns the next n turns.
func (g *Generator) Turns(n int) []strata.Turn {
	out := make([]strata.Turn, n)
	for i := range out {
		out[i] = g.Next()
	}
	return out
}
