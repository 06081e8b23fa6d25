package loomgen

import (
	"fmt"
	"slices"
	"strings"
)

// out is the output of one call being written.
type out struct {
	g     *gen
	lines []string
	errs  []int // lines written as the failure
	exit  int
	read  bool
	toks  int // estimated tokens so far
}

func (o *out) put(s string, failing bool) {
	for _, l := range strings.Split(s, "\n") {
		if failing {
			o.errs = append(o.errs, len(o.lines))
		}
		o.lines = append(o.lines, l)
		o.toks += o.g.count(l) + 1
	}
}

// add writes lines that are not the failure.
func (o *out) add(s string) { o.put(s, false) }

// fail writes lines reporting the failure (or its frames).
func (o *out) fail(s string) { o.put(s, true) }

func (o *out) addf(format string, a ...any)  { o.add(fmt.Sprintf(format, a...)) }
func (o *out) failf(format string, a ...any) { o.fail(fmt.Sprintf(format, a...)) }

// at is a block of lines written once a fill has reached the fraction f of
// its length.
type at struct {
	f  float64
	fn func()
}

// fill writes filler with line until the output has grown by n tokens,
// writing each block when its fraction of n is reached; blocks not reached
// are written at the end.
func (o *out) fill(n int, line func(), blocks ...at) {
	slices.SortStableFunc(blocks, func(a, b at) int {
		switch {
		case a.f < b.f:
			return -1
		case a.f > b.f:
			return 1
		}
		return 0
	})
	start := o.toks
	i := 0
	for o.toks-start < n {
		for i < len(blocks) && float64(o.toks-start) >= blocks[i].f*float64(n) {
			blocks[i].fn()
			i++
		}
		before := len(o.lines)
		line()
		if len(o.lines) == before {
			panic("loomgen: filler wrote nothing")
		}
	}
	for ; i < len(blocks); i++ {
		blocks[i].fn()
	}
}

// spread places blocks at random fractions in [lo, hi).
func (g *gen) spread(lo, hi float64, fns ...func()) []at {
	bs := make([]at, len(fns))
	for i, fn := range fns {
		bs[i] = at{lo + (hi-lo)*g.r.Float64(), fn}
	}
	return bs
}

// budget is the tokens an output of weight w gets (see gen.want).
func (o *out) budget(w float64) int { return o.g.want(w) }

// exitLine sometimes writes the shell's report of a non-zero exit.
func (o *out) exitLine(code int) {
	o.exit = code
	if o.g.chance(0.35) {
		o.addf("exit status %d", code)
	}
}
