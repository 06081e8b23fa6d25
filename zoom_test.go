package strata_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/strata-memory/strata"
)

// whenCase is one row of testdata/when.tsv.
type whenCase struct {
	line int
	text string
	now  time.Time
	want string // a period label, or "error"
}

// whenTable reads testdata/when.tsv, the table of time expressions that
// every path reading one (FindTimes, ParseWhen, ZoomPeriod, a context
// query, the CLI's zoom --when) is tested with.
func whenTable(t testing.TB) []whenCase {
	t.Helper()
	f, err := os.Open("testdata/when.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []whenCase
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		cols := strings.Split(line, "\t")
		if len(cols) != 3 {
			t.Fatalf("testdata/when.tsv:%d: %d columns, want 3", n, len(cols))
		}
		now, err := time.Parse(time.RFC3339, cols[1])
		if err != nil {
			t.Fatalf("testdata/when.tsv:%d: %v", n, err)
		}
		out = append(out, whenCase{line: n, text: cols[0], now: now, want: cols[2]})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) < 20 {
		t.Fatalf("testdata/when.tsv: %d cases", len(out))
	}
	return out
}

func (c whenCase) name() string { return fmt.Sprintf("line %d %q", c.line, c.text) }

// TestWhenTable runs the table through the parser a caller names a period
// with (ParseWhen) and the one that finds periods in a query (FindTimes):
// an expression standing alone is one match of the same period, and text
// that names no period has no match.
func TestWhenTable(t *testing.T) {
	for _, c := range whenTable(t) {
		t.Run(c.name(), func(t *testing.T) {
			p, err := strata.ParseWhen(c.text, c.now, time.UTC)
			ms := strata.FindTimes(c.text, c.now, time.UTC)
			if c.want == "error" {
				if err == nil {
					t.Errorf("ParseWhen: %s, want an error", p.Label())
				} else if strata.ErrorCode(err) != strata.EINVALID || !strings.Contains(err.Error(), fmt.Sprintf("%q", c.text)) {
					t.Errorf("ParseWhen: error %v does not name the text as EINVALID", err)
				}
				if len(ms) != 0 {
					t.Errorf("FindTimes: %d matches (%q is %s), want none", len(ms), ms[0].Text, ms[0].Period.Label())
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseWhen: %v", err)
			}
			if p.Label() != c.want {
				t.Errorf("ParseWhen: %s, want %s", p.Label(), c.want)
			}
			if len(ms) != 1 || ms[0].Period != p {
				var got []string
				for _, m := range ms {
					got = append(got, m.Text+"="+m.Period.Label())
				}
				t.Errorf("FindTimes: %q, want one match of %s", got, c.want)
			}
		})
	}
}

// TestZoomWhenTable runs the table through the library's zoom
// (ZoomPeriod, then Zoom) and a context query, over a conversation of one
// turn a day: both read the same period, or both refuse.
func TestZoomWhenTable(t *testing.T) {
	m := newMemory(t, nil)
	ctx := context.Background()
	var turns []strata.Turn
	for d := at("2022-01-01T10:00:00Z"); d.Before(at("2023-05-11T00:00:00Z")); d = d.AddDate(0, 0, 1) {
		turns = append(turns, turnAt(d.Format("d2006-01-02"), d.Format(time.RFC3339), "Notes of "+d.Format("Monday 2 January 2006")+"."))
	}
	ingest(t, m, "w", turns)
	for _, c := range whenTable(t) {
		t.Run(c.name(), func(t *testing.T) {
			pkg, err := m.Context(ctx, strata.ContextRequest{Conversation: "w", Query: c.text, Budget: 4000, Now: c.now})
			if err != nil && c.text != "" {
				t.Fatalf("Context: %v", err)
			}
			var zoomed []strata.Item
			if err == nil {
				for _, it := range pkg.Items {
					if it.Reason == strata.ReasonZoom {
						zoomed = append(zoomed, it)
					}
				}
			}
			p, err := m.ZoomPeriod(ctx, "w", c.text, c.now)
			if c.want == "error" {
				if err == nil {
					t.Errorf("ZoomPeriod: %s, want an error", p.Label())
				}
				if len(zoomed) != 0 {
					t.Errorf("Context zooms into %d turns, from %s", len(zoomed), zoomed[0].ExtID)
				}
				return
			}
			if err != nil {
				t.Fatalf("ZoomPeriod: %v", err)
			}
			if p.Label() != c.want {
				t.Errorf("ZoomPeriod: %s, want %s", p.Label(), c.want)
			}
			got, err := m.Zoom(ctx, "w", p)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) == 0 {
				t.Fatalf("Zoom %s: no turns: the case tests nothing", p.Label())
			}
			for _, tr := range got {
				if !p.Contains(tr.Time) {
					t.Errorf("Zoom %s: turn %s at %s", p.Label(), tr.ExtID, tr.Time)
				}
			}
			if len(zoomed) == 0 {
				t.Errorf("Context: no turn of %s", p.Label())
			}
			for _, it := range zoomed {
				if !p.Contains(it.Start) {
					t.Errorf("Context zooms into turn %s at %s, outside %s", it.ExtID, it.Start, p.Label())
				}
			}
		})
	}
}
