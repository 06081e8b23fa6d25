package checkpoint_test

import (
	"context"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-memory/strata/compact/checkpoint"
)

// Markdown layout from the conversation (headings, emphasis, check
// marks, labels) never becomes a section's content, nor does an item
// that only says there is nothing; code that looks like emphasis stays.
func TestMarkdownDoesNotLeakIntoSections(t *testing.T) {
	span := []checkpoint.Entry{
		user("## Task\n**Goal:** make the importer resumable.\n\n**Constraints:** none\n\n- **Don't** change the `__init__` signature.\n- Keep `**kwargs` as they are."),
		said("## Summary\n\n**Key Decisions:**\n- **✓ Technical Decisions**\n- ✓ We decided to **store the cursor** in the `import_state` table instead of a file.\n\n### Constraints\nNone identified.\n\nI fixed the *resume* path in `importer/run.py`."),
	}
	res, err := newWriter(t, checkpoint.Options{}).Checkpoint(context.Background(), span, "")
	if err != nil {
		t.Fatal(err)
	}
	sec, err := checkpoint.Parse(res.Text)
	if err != nil {
		t.Fatal(err)
	}
	items := map[string][]string{"goal": {sec.Goal}, "constraints": sec.Constraints, "done": sec.Done,
		"in progress": sec.InProgress, "decisions": sec.Decisions, "next": sec.NextSteps, "notes": sec.Notes}
	for name, its := range items {
		for _, it := range its {
			prose := it // without its code spans
			for {
				i := strings.IndexByte(prose, '`')
				j := strings.IndexByte(prose[i+1:], '`')
				if i < 0 || j < 0 {
					break
				}
				prose = prose[:i] + prose[i+1+j+1:]
			}
			if strings.Contains(prose, "**") || strings.Contains(it, "✓") || strings.HasPrefix(it, "#") || strings.Contains(it, "*resume*") {
				t.Errorf("%s: Markdown layout in %q", name, it)
			}
			l := strings.ToLower(it)
			if strings.Contains(l, "technical decisions") || strings.Contains(l, "key decisions") || strings.Contains(l, "none") {
				t.Errorf("%s: a heading or a 'none' as content: %q", name, it)
			}
		}
	}
	want := map[string]string{
		"decisions":   "We decided to store the cursor in the `import_state` table instead of a file.",
		"constraints": "Don't change the `__init__` signature.",
	}
	for name, w := range want {
		found := false
		for _, it := range items[name] {
			found = found || it == w
		}
		if !found {
			t.Errorf("%s lacks %q: %q\n%s", name, w, items[name], res.Text)
		}
	}
	if !strings.Contains(strings.Join(sec.Constraints, "\n"), "Keep `**kwargs` as they are.") {
		t.Errorf("code that looks like emphasis was changed: %q", sec.Constraints)
	}
}

// A model's checkpoint (or an earlier one read back) is read without its
// Markdown layout and without items that say there is nothing.
func TestParseDropsMarkdownLayout(t *testing.T) {
	text := "## Goal\n**Make the importer resumable**\n\n## Constraints & Preferences\n- Constraints: none\n- None identified\n- **Keep** the CLI flags.\n\n" +
		"## Progress\n### Done\n- [x] ✅ Added `--resume`\n\n### In Progress\n- No items in progress\n\n## Key Decisions\n- ✓ **Technical Decisions**\n- **Cursor in SQLite** over a JSON file.\n\n" +
		"## Next Steps\n1. ### Remaining Work\n2. Test a crash mid-import.\n\n## Critical Context\n- **Notes:**\n- paths: importer/run.py, importer/__init__.py\n- symbols: **kwargs"
	sec, err := checkpoint.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, got, want []string) {
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%s: got %q, want %q", name, got, want)
		}
	}
	if sec.Goal != "Make the importer resumable" {
		t.Errorf("goal %q", sec.Goal)
	}
	check("constraints", sec.Constraints, []string{"Keep the CLI flags."})
	check("done", sec.Done, []string{"Added `--resume`"})
	check("in progress", sec.InProgress, nil)
	check("decisions", sec.Decisions, []string{"Cursor in SQLite over a JSON file."})
	check("next", sec.NextSteps, []string{"Test a crash mid-import."})
	check("notes", sec.Notes, nil)
	var led []string
	for _, id := range sec.Ledger {
		led = append(led, id.Text)
	}
	check("ledger", led, []string{"importer/run.py", "importer/__init__.py", "**kwargs"})
}

// Reading a checkpoint back and writing it again gives the same text,
// whatever Markdown its items carried: Format writes items as Parse
// reads them, so that a checkpoint merged again and again does not drift.
func TestFormatParseStableWithMarkdown(t *testing.T) {
	words := []string{"**", "__", "*", "_", "✓", "✅ ", "# ", "### ", "Key", "Decisions:", "none", "None", "No", "constraints",
		"`**kwargs`", "`__init__`", "__init__", "snake_case", "*.go", "fix", "the", "cursor", "in", "run.py.", ":", "yet", "Next", "Steps:"}
	item := rapid.Custom(func(t *rapid.T) string {
		n := rapid.IntRange(1, 8).Draw(t, "n")
		var b strings.Builder
		for i := 0; i < n; i++ {
			w := rapid.SampledFrom(words).Draw(t, "w")
			if i > 0 && rapid.Bool().Draw(t, "space") {
				b.WriteByte(' ')
			}
			b.WriteString(w)
		}
		return b.String()
	})
	list := rapid.SliceOfN(item, 0, 4)
	rapid.Check(t, func(t *rapid.T) {
		s := checkpoint.Sections{
			Goal: item.Draw(t, "goal"), Constraints: list.Draw(t, "constraints"), Done: list.Draw(t, "done"),
			InProgress: list.Draw(t, "doing"), Decisions: list.Draw(t, "decisions"), NextSteps: list.Draw(t, "next"),
			Notes: list.Draw(t, "notes"),
		}
		text := s.Format()
		back, err := checkpoint.Parse(text)
		if err != nil {
			t.Fatal(err)
		}
		if again := back.Format(); again != text {
			t.Fatalf("not stable:\n%s\n---\n%s", text, again)
		}
	})
}
