package main

import (
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/strata-memory/strata/internal/hashembed"
)

// evalTiny is a LoCoMo-format file of one conversation in two sessions,
// with an evidence string that joins two ids and an id that names no turn.
const evalTiny = `[
 {"sample_id": "conv-a",
  "conversation": {
   "speaker_a": "Ann", "speaker_b": "Bob",
   "session_1_date_time": "1:56 pm on 8 May, 2023",
   "session_1": [
    {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a puppy named Biscuit last weekend."},
    {"speaker": "Bob", "dia_id": "D1:2", "text": "My sister moved to Lisbon for a new job at the aquarium."}
   ],
   "session_2_date_time": "10:00 am on 20 June, 2023",
   "session_2": [
    {"speaker": "Bob", "dia_id": "D2:1", "text": "I visited my sister in Lisbon and we saw the sharks."},
    {"speaker": "Ann", "dia_id": "D2:2", "text": "I finished the marathon in Boston in under four hours."}
   ]
  },
  "qa": [
   {"question": "What is the name of Ann's puppy?", "answer": "Biscuit", "evidence": ["D1:1"], "category": 4},
   {"question": "Where does Bob's sister live and where did he visit her?", "answer": "Lisbon", "evidence": ["D1:2; D2:1"], "category": 1},
   {"question": "When did Ann run the marathon in Boston?", "answer": "June 2023", "evidence": ["D2:2", "D9:9"], "category": 2},
   {"question": "What did Bob's puppy chew?", "adversarial_answer": "shoes", "evidence": ["D1:1"], "category": 5}
  ]
 }
]`

// evalReport is the part of eval --json the tests read.
type evalReport struct {
	Conversations   int      `json:"conversations"`
	Turns           int      `json:"turns"`
	Questions       int      `json:"questions"`
	EvidenceTurns   int      `json:"evidence_turns"`
	UnknownEvidence []string `json:"unknown_evidence"`
	Budgets         []struct {
		Budget  int `json:"budget"`
		Overall struct {
			Questions int `json:"questions"`
			Context   struct {
				Recall   float64 `json:"recall"`
				Pooled   float64 `json:"pooled_recall"`
				Coverage float64 `json:"coverage"`
			} `json:"context"`
			BM25 struct {
				Recall float64 `json:"recall"`
				Pooled float64 `json:"pooled_recall"`
			} `json:"bm25"`
		} `json:"overall"`
		Categories []struct {
			Category  int `json:"category"`
			Questions int `json:"questions"`
		} `json:"categories"`
	} `json:"budgets"`
}

func TestEval(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "tiny.json")
	if err := os.WriteFile(file, []byte(evalTiny), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "user.db")
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // where the scratch store goes
	tests := []struct {
		name      string
		args      []string
		questions int
		budgets   []int
		cats      []int
		want      []string // in the table
	}{
		{name: "table", args: []string{"eval", "--budgets", "100000", file}, questions: 3,
			want: []string{"1 conversations, 4 turns imported",
				"3 questions of categories 1,2,4 with 4 evidence turns (not asked: the file's category 5 (adversarial))\n",
				"budget  questions  recall    bm25    +pts  pooled    bm25    +pts   cover",
				"100000          3  100.0%  100.0%    +0.0  100.0%  100.0%    +0.0  100.0%",
				"at 100000:\n    1 (multi-hop) 100.0% / 100.0%, pooled 100.0% / 100.0% (1)\n    2 (temporal) 100.0% / 100.0%, pooled 100.0% / 100.0% (1)\n    4 (single-hop) 100.0% / 100.0%, pooled 100.0% / 100.0% (1)",
				"1 evidence ids that name no turn (conv-a:D9:9)"}},
		{name: "categories", args: []string{"eval", "--budgets", "100000", "--categories", "4,5", file}, questions: 2,
			want: []string{"2 questions of categories 4,5 with 2 evidence turns (not asked: the file's categories 1 (multi-hop), 2 (temporal))\n", "4 (single-hop) 100.0% / 100.0%, pooled 100.0% / 100.0% (1)\n    5 (adversarial) 100.0% / 100.0%, pooled 100.0% / 100.0% (1)"}},
		{name: "json", args: []string{"eval", "--json", "--budgets", "4000,100000", "--categories", "1,2", file},
			questions: 2, budgets: []int{4000, 100000}, cats: []int{1, 2}},
		{name: "json with defaults", args: []string{"eval", file, "--json", "--policy", "sessions"},
			questions: 3, budgets: []int{1000, 2000, 4000}, cats: []int{1, 2, 4}},
		{name: "absent category", args: []string{"eval", "--budgets", "100000", "--categories", "2,3,7", file}, questions: 1,
			want: []string{"1 questions of categories 2 with", "categories 3,7 asked for: no question of the file is of them (the file's categories: 1,2,4,5)\n",
				"at 100000:\n    2 (temporal) 100.0% / 100.0%, pooled 100.0% / 100.0% (1)\n\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := mustRun(t, db, tt.args...)
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			if tt.budgets != nil {
				var r evalReport
				if err := json.Unmarshal([]byte(out), &r); err != nil {
					t.Fatalf("%v:\n%s", err, out)
				}
				if r.Conversations != 1 || r.Turns != 4 || r.Questions != tt.questions || len(r.Budgets) != len(tt.budgets) {
					t.Fatalf("report %+v", r)
				}
				for i, b := range r.Budgets {
					if b.Budget != tt.budgets[i] || b.Overall.Questions != tt.questions || len(b.Categories) != len(tt.cats) {
						t.Errorf("budget row %d: %+v", i, b)
					}
					c, bm := b.Overall.Context, b.Overall.BM25
					if b.Budget == 100000 && (c.Recall != 1 || bm.Recall != 1 || c.Pooled != 1 || bm.Pooled != 1 || c.Coverage != 1) {
						t.Errorf("budget %d: recall %v and %v, pooled %v and %v, coverage %v, want 1", b.Budget, c.Recall, bm.Recall,
							c.Pooled, bm.Pooled, c.Coverage)
					}
				}
			}
			if _, err := os.Stat(db); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("eval touched the configured store %s: %v", db, err)
			}
			if left, err := os.ReadDir(tmp); err != nil || len(left) > 0 {
				t.Errorf("the scratch store is still there: %v %v", left, err)
			}
		})
	}
}

// TestEvalHybrid: with an embedder configured, eval embeds the scratch
// store and says with which model, dimension and vector weight.
func TestEvalHybrid(t *testing.T) {
	srv := &hashembed.Server{Dim: 16}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	dir := t.TempDir()
	file := filepath.Join(dir, "tiny.json")
	if err := os.WriteFile(file, []byte(evalTiny), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", t.TempDir())
	env := map[string]string{"STRATA_DB": filepath.Join(dir, "user.db"), "STRATA_EMBED_MODEL": "tiny-embed",
		"STRATA_EMBED_BASE_URL": ts.URL + "/v1", "STRATA_EMBED_WEIGHT": "0.5"}
	out := mustEnv(t, env, "eval", "--budgets", "100000", file)
	if !strings.Contains(out, "search: hybrid (BM25 and vectors of tiny-embed, 16 dimensions, vector weight 0.5; embedded in") ||
		!strings.Contains(out, "100000          3  100.0%") {
		t.Fatalf("eval with an embedder:\n%s", out)
	}
	if len(srv.Requests()) == 0 {
		t.Fatal("eval with an embedder made no embeddings request")
	}
	var r struct {
		Search string  `json:"search"`
		Model  string  `json:"embed_model"`
		Dim    int     `json:"embed_dimensions"`
		Weight float64 `json:"vector_weight"`
	}
	if err := json.Unmarshal([]byte(mustEnv(t, env, "eval", "--json", "--budgets", "100000", file)), &r); err != nil {
		t.Fatal(err)
	}
	if r.Search != "hybrid" || r.Model != "tiny-embed" || r.Dim != 16 || r.Weight != 0.5 {
		t.Fatalf("eval --json with an embedder: %+v", r)
	}
}

// TestEvalMisses: --misses writes one JSON line per missed evidence turn
// and says how many; a file it cannot create is an error naming the flag.
func TestEvalMisses(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "tiny.json")
	if err := os.WriteFile(file, []byte(evalTiny), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", t.TempDir())
	db := filepath.Join(dir, "user.db")
	out := filepath.Join(dir, "misses.jsonl")
	got := mustRun(t, db, "eval", "--budgets", "80,100000", "--misses", out, file)
	if !strings.Contains(got, "missed evidence turns: 4 at 80 (0 match no word of their question), 0 at 100000 (0 match no word of their question); written to "+out) {
		t.Fatalf("eval --misses:\n%s", got)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 4 {
		t.Fatalf("misses file:\n%s\nwant 4 lines", data)
	}
	for _, l := range lines {
		var m struct {
			Budget   int    `json:"budget"`
			Evidence string `json:"evidence"`
			Text     string `json:"text"`
			Rank     int    `json:"bm25_rank"`
		}
		if err := json.Unmarshal([]byte(l), &m); err != nil || m.Budget != 80 || m.Evidence == "" || m.Text == "" || m.Rank == 0 {
			t.Fatalf("misses line %s: %+v, %v", l, m, err)
		}
	}
	_, _, err = run(t, db, "", "eval", "--misses", filepath.Join(dir, "no-such-dir", "m.jsonl"), file)
	if err == nil || !strings.Contains(err.Error(), "--misses") {
		t.Fatalf("eval --misses into a missing folder: %v, want an error naming --misses", err)
	}
}

func TestEvalErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "tiny.json")
	bad := filepath.Join(dir, "bad.json")
	for p, text := range map[string]string{file: evalTiny, bad: `{"not": "a list"}`} {
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	db := filepath.Join(dir, "user.db")
	tests := []struct {
		name  string
		args  []string
		usage bool
		want  string
	}{
		{"no file", []string{"eval"}, true, "give one LoCoMo-format FILE"},
		{"two files", []string{"eval", file, file}, true, "give one"},
		{"bad budget", []string{"eval", "--budgets", "1000,x", file}, true, `--budgets: "x"`},
		{"zero category", []string{"eval", "--categories", "0", file}, true, `--categories: "0"`},
		{"empty list", []string{"eval", "--budgets", ",", file}, true, "at least one"},
		{"missing file", []string{"eval", filepath.Join(dir, "absent.json")}, false, "absent.json"},
		{"bad file", []string{"eval", bad}, false, "bad.json"},
		{"unknown policy", []string{"eval", "--policy", "nonesuch", file}, false, "nonesuch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := run(t, db, "", tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one saying %q", err, tt.want)
			}
			var u usageError
			if errors.As(err, &u) != tt.usage {
				t.Errorf("error %v: usage error %v, want %v", err, !tt.usage, tt.usage)
			}
		})
	}
}

// TestEvalCategories: on a file whose categories are not LoCoMo's, eval
// needs no --categories and reports every category the file uses, by
// number (and by the file's name for it when its questions carry one).
func TestEvalCategories(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "realmem.json")
	text := strings.NewReplacer(`"category": 4}`, `"category": 21, "realmem_category": "Dynamic Incremental"}`,
		`"category": 1}`, `"category": 22}`, `"category": 2}`, `"category": 22}`, `"category": 5}`, `"category": 24}`).Replace(evalTiny)
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", t.TempDir())
	db := filepath.Join(dir, "user.db")
	out := mustRun(t, db, "eval", "--budgets", "100000", file)
	for _, w := range []string{"4 questions of categories 21,22,24 with 5 evidence turns\n",
		"at 100000:\n    21 (dynamic incremental) 100.0% / 100.0%, pooled 100.0% / 100.0% (1)\n" +
			"    22 100.0% / 100.0%, pooled 100.0% / 100.0% (2)\n    24 100.0% / 100.0%, pooled 100.0% / 100.0% (1)\n"} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	var r struct {
		Categories     []int `json:"categories"`
		FileCategories []int `json:"file_categories"`
		Budgets        []struct {
			Categories []struct {
				Category  int    `json:"category"`
				Name      string `json:"category_name"`
				Questions int    `json:"questions"`
			} `json:"categories"`
		} `json:"budgets"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, db, "eval", "--json", "--budgets", "100000", file)), &r); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Categories, []int{21, 22, 24}) || !slices.Equal(r.FileCategories, []int{21, 22, 24}) || len(r.Budgets) != 1 {
		t.Fatalf("eval --json: %+v", r)
	}
	rows := r.Budgets[0].Categories
	if len(rows) != 3 || rows[0].Category != 21 || rows[0].Name != "dynamic incremental" || rows[1].Category != 22 ||
		rows[1].Name != "" || rows[1].Questions != 2 || rows[2].Category != 24 {
		t.Fatalf("eval --json rows: %+v", rows)
	}
}
