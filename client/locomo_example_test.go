package client_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/client"
	"github.com/strata-memory/strata/extractive"
	"github.com/strata-memory/strata/formats"
	"github.com/strata-memory/strata/httpapi"
	"github.com/strata-memory/strata/sqlite"
)

// TestLoCoMoThroughJQ posts examples/locomo-turns.jq's body, as the README
// does with curl, and expects exactly the turns 'strata import' reads from
// the same file: ids, roles, names, times, sessions, content and metadata.
func TestLoCoMoThroughJQ(t *testing.T) {
	jq, err := exec.LookPath("jq")
	if err != nil {
		t.Skip("no jq here")
	}
	file := filepath.Join("..", "formats", "testdata", "locomo-mini.json")
	body, err := exec.Command(jq, "--arg", "id", "mini-1", "-f", filepath.Join("..", "examples", "locomo-turns.jq"), file).Output()
	if err != nil {
		t.Fatalf("jq: %v", err)
	}
	var in struct {
		Turns []client.Turn `json:"turns"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		t.Fatalf("jq printed no turns body: %v\n%s", err, body)
	}

	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := formats.Open("locomo", file, f)
	if err != nil {
		t.Fatal(err)
	}
	var want []strata.Turn
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, rec.Turn)
	}
	if len(want) == 0 || len(in.Turns) != len(want) {
		t.Fatalf("jq gave %d turns, the importer %d", len(in.Turns), len(want))
	}

	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "strata.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m, err := strata.New(strata.Config{Store: st, Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New()})
	if err != nil {
		t.Fatal(err)
	}
	s, err := httpapi.New(m, httpapi.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	s.SetReady(true)
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	c := client.New(ts.URL, "", nil)
	res, err := c.Append(ctx, "mini-1", in.Turns)
	if err != nil {
		t.Fatal(err)
	}
	if res.Added != len(want) {
		t.Fatalf("added %d turns, want %d", res.Added, len(want))
	}
	got, err := st.Turns(ctx, strata.TurnFilter{Namespace: m.Namespace(), Conversation: "mini-1"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		g, w := got[i], want[i]
		// What the store assigns on append: seq, session, tokens.
		g.Seq, g.Session, g.Tokens = 0, 0, 0
		if !g.Time.Equal(w.Time) {
			t.Errorf("turn %d: time %v, the importer's %v", i+1, g.Time, w.Time)
		}
		g.Time = w.Time
		if !reflect.DeepEqual(g, w) {
			t.Errorf("turn %d through jq and the API:\n%+v\nthe importer's:\n%+v", i+1, g, w)
		}
	}
}
