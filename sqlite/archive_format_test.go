package sqlite

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/archive"
	"github.com/strata-memory/strata/extractive"
)

// recordV1 is a turn as format 1 archive records held it: one object with
// every field by name.
type recordV1 struct {
	ExtID        string          `json:"ext_id,omitempty"`
	Session      int             `json:"session,omitempty"`
	SessionLabel string          `json:"session_label,omitempty"`
	Role         string          `json:"role"`
	Name         string          `json:"name,omitempty"`
	Content      string          `json:"content"`
	Time         string          `json:"time,omitempty"`
	Model        string          `json:"model,omitempty"`
	ToolCalls    json.RawMessage `json:"tool_calls,omitempty"`
	ToolResults  json.RawMessage `json:"tool_results,omitempty"`
	Tokens       int             `json:"tokens"`
	Importance   float64         `json:"importance,omitempty"`
	Tags         json.RawMessage `json:"tags,omitempty"`
	Metadata     json.RawMessage `json:"metadata,omitempty"`
}

// TestArchiveFormats archives a conversation (every closed span cold),
// checks that the segments hold format 2 rows, then rewrites every segment
// in format 1 (one object per turn, SHA-256 trailer), as earlier versions
// wrote them, and checks that every turn still reads back exactly.
func TestArchiveFormats(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := Open(ctx, filepath.Join(dir, "f.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m, err := strata.New(strata.Config{Store: st, Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New(), Tiers: &strata.TierPolicy{WarmMaxAge: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2024, 2, 29, 22, 0, 0, 0, time.UTC) // over a month's end
	var turns []strata.Turn
	for i := range 60 {
		tu := strata.Turn{Role: strata.RoleUser, Name: "Ana", Content: fmt.Sprintf("turn %d\twith a tab, ␉ and\na newline", i),
			Time: start.Add(time.Duration(i) * 5 * time.Minute), SessionLabel: "s1"}
		if i%2 == 1 {
			tu.Role, tu.Name, tu.Model = strata.RoleAssistant, "", "m-1"
		}
		switch i % 7 {
		case 3:
			tu.Metadata = map[string]any{"k": "v", "n": 2.5}
		case 5:
			tu.Tags = []string{"a", "b"}
			tu.Importance = 0.3
		}
		turns = append(turns, tu)
	}
	if _, err := m.Ingest(ctx, strata.Batch{Conversation: "c", Turns: turns}); err != nil {
		t.Fatal(err)
	}
	want, err := st.Turns(ctx, strata.TurnFilter{Namespace: strata.DefaultNamespace, Conversation: "c"})
	if err != nil {
		t.Fatal(err)
	}
	segs, _ := filepath.Glob(filepath.Join(dir, "archive", "f", "*", "c", "*"+archive.Ext))
	if len(segs) < 2 {
		t.Fatalf("%d segments, want one per month (2)", len(segs))
	}
	bySeq := map[int64]strata.Turn{}
	for _, tu := range want {
		bySeq[tu.Seq] = tu
	}
	archived := 0
	for _, path := range segs {
		recs, err := archive.Read(path, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		var v1 strings.Builder
		for _, r := range recs {
			if r.Line[0] != '[' {
				t.Fatalf("%s: turn %d is not a format 2 row: %s", path, r.Seq, r.Line)
			}
			tu := bySeq[r.Seq]
			old := recordV1{ExtID: tu.ExtID, Session: tu.Session, SessionLabel: tu.SessionLabel, Role: string(tu.Role),
				Name: tu.Name, Content: tu.Content, Time: tu.Time.Format(time.RFC3339Nano), Model: tu.Model,
				Tokens: tu.Tokens, Importance: tu.Importance}
			if tu.Metadata != nil {
				old.Metadata, _ = json.Marshal(tu.Metadata)
			}
			if tu.Tags != nil {
				old.Tags, _ = json.Marshal(tu.Tags)
			}
			var b bytes.Buffer
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(false)
			enc.Encode(old)
			fmt.Fprintf(&v1, `{"seq":%d,"rec":%s}`+"\n", r.Seq, bytes.TrimSpace(b.Bytes()))
			archived++
		}
		sum := sha256.Sum256([]byte(v1.String()))
		fmt.Fprintf(&v1, `{"checksum":"sha256:%s","records":%d}`+"\n", hex.EncodeToString(sum[:]), len(recs))
		if err := os.WriteFile(path, archive.Compress([]byte(v1.String())), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if archived < 40 {
		t.Fatalf("%d turns archived, want most of 60", archived)
	}
	got, err := st.Turns(ctx, strata.TurnFilter{Namespace: strata.DefaultNamespace, Conversation: "c"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("turns read from format 1 segments differ:\n got %+v\nwant %+v", got, want)
	}
	for i := range want {
		if want[i].Content != turns[i].Content || want[i].Model != turns[i].Model || want[i].Importance != turns[i].Importance {
			t.Fatalf("turn %d: stored %+v, ingested %+v", i+1, want[i], turns[i])
		}
	}
}
