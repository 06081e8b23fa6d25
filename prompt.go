package strata

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"text/template"
	"time"
)

//go:embed prompts/*.tmpl
var embeddedPrompts embed.FS

// Prompts renders the prompts of model summaries: Go templates, one file
// per level name (micro.tmpl, day.tmpl, core.tmpl, ...; default.tmpl for
// any other level) that defines "task" and may redefine "rules", over
// common.tmpl, which defines "system" and "user". The templates ship in
// the binary; a folder of files with the same names overrides them one by
// one.
type Prompts struct {
	files []fs.FS // searched in order: overrides first
	cache map[string]*template.Template
}

// LoadPrompts returns the embedded prompts, overridden by the .tmpl files
// of dir if dir is not "". Every template is parsed at once, so a broken
// override is an EINVALID error naming its file.
func LoadPrompts(dir fs.FS) (*Prompts, error) {
	sub, _ := fs.Sub(embeddedPrompts, "prompts")
	p := &Prompts{cache: map[string]*template.Template{}}
	if dir != nil {
		p.files = append(p.files, dir)
	}
	p.files = append(p.files, sub)
	names := map[string]bool{"default": true}
	for _, f := range p.files {
		ents, err := fs.ReadDir(f, ".")
		if err != nil {
			return nil, Errorf(EINVALID, "prompts: %v", err)
		}
		for _, e := range ents {
			if n, ok := strings.CutSuffix(e.Name(), ".tmpl"); ok && n != "common" {
				names[n] = true
			}
		}
	}
	for n := range names {
		if _, err := p.template(n); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func (p *Prompts) read(name string) ([]byte, string, error) {
	for _, f := range p.files {
		b, err := fs.ReadFile(f, name)
		if err == nil {
			return b, name, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, name, Errorf(EINVALID, "prompts: %s: %v", name, err)
		}
	}
	return nil, name, fs.ErrNotExist
}

// template returns the parsed prompt of a level.
func (p *Prompts) template(level string) (*template.Template, error) {
	if t, ok := p.cache[level]; ok {
		return t, nil
	}
	common, _, err := p.read("common.tmpl")
	if err != nil {
		return nil, Errorf(EINVALID, "prompts: common.tmpl: %v", err)
	}
	body, name, err := p.read(level + ".tmpl")
	if errors.Is(err, fs.ErrNotExist) {
		body, name, err = p.read("default.tmpl")
	}
	if err != nil {
		return nil, err
	}
	t := template.New(level).Funcs(template.FuncMap{"join": strings.Join}).Option("missingkey=error")
	if _, err := t.New("common.tmpl").Parse(string(common)); err != nil {
		return nil, Errorf(EINVALID, "prompts: %v", err)
	}
	if _, err := t.New(name).Parse(string(body)); err != nil {
		return nil, Errorf(EINVALID, "prompts: %v", err)
	}
	for _, part := range []string{"system", "user", "task", "rules"} {
		if t.Lookup(part) == nil {
			return nil, Errorf(EINVALID, "prompts: %s defines no %q template", name, part)
		}
	}
	if _, err := t.Clone(); err != nil {
		return nil, Errorf(EINVALID, "prompts: %v", err)
	}
	p.cache[level] = t
	return t, nil
}

// PromptTurn is a turn as a prompt shows it.
type PromptTurn struct{ Time, Speaker, Text string }

// PromptChild is a child summary as a prompt shows it.
type PromptChild struct {
	Key, Start, End, Summary string
	Facts                    []string
}

// PromptData is what a prompt template is rendered with.
type PromptData struct {
	Conversation string
	Level        string
	Key          string
	Budget       int
	Turns        []PromptTurn
	Children     []PromptChild
	Identifiers  []string
	// Tighter is the instruction of a retry after an answer over budget.
	Tighter string
}

// Render returns the system and user prompts of a level.
func (p *Prompts) Render(level string, d PromptData) (system, user string, err error) {
	t, err := p.template(level)
	if err != nil {
		return "", "", err
	}
	var sb, ub bytes.Buffer
	if err := t.ExecuteTemplate(&sb, "system", d); err != nil {
		return "", "", fmt.Errorf("prompt %s: %w", level, err)
	}
	if err := t.ExecuteTemplate(&ub, "user", d); err != nil {
		return "", "", fmt.Errorf("prompt %s: %w", level, err)
	}
	return strings.TrimSpace(sb.String()), strings.TrimSpace(ub.String()), nil
}

// promptData builds the data of a node's prompt.
func promptData(conv string, level Level, key string, budget int, turns []Turn, children []Node, loc *time.Location) PromptData {
	d := PromptData{Conversation: conv, Level: level.Name, Key: key, Budget: budget}
	for _, t := range turns {
		d.Turns = append(d.Turns, PromptTurn{Time: t.Time.In(loc).Format("2006-01-02 15:04"), Speaker: t.Speaker(), Text: t.Text()})
	}
	for _, c := range children {
		d.Children = append(d.Children, PromptChild{Key: c.Key, Start: c.Start.In(loc).Format("2006-01-02 15:04"),
			End: c.End.In(loc).Format("2006-01-02 15:04"), Summary: c.Summary, Facts: c.Facts})
	}
	return d
}
