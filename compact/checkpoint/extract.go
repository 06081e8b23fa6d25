package checkpoint

import (
	"sort"
	"strconv"
	"strings"
)

// Caps of the extractive prose, before the budget trims it further.
const (
	maxItemBytes   = 280 // an item longer than this is cut at a word, with "…"
	maxGoalBytes   = 420
	maxConstraints = 16
	maxDone        = 24
	maxInProgress  = 4
	maxDecisions   = 12
	maxNextSteps   = 6
	sentenceScan   = 16 << 10 // of a message, sentences are read from its first 16 KiB
)

// item is a line of the prose with its position in the span, for order.
type item struct {
	pos  int
	text string
}

// extract writes the prose sections of a span without a model, one
// section after the other.
func extract(si *spanInfo) Sections {
	var s Sections
	users := userTexts(si)
	s.Goal = extractGoal(si, users)
	s.Constraints = extractConstraints(si, users)
	finals := finalReplies(si)
	done, doing := actionItems(si)
	done = append(done, replyItems(si, finals)...)
	s.Done = capItems(done, maxDone)
	if it, ok := pendingRequest(si, users, finals); ok {
		doing = append(doing, it)
	}
	s.InProgress = capItems(doing, maxInProgress)
	s.Decisions = extractDecisions(si)
	s.NextSteps = extractNextSteps(si, s.Decisions)
	return s
}

// userTexts returns the positions of the user's non-empty texts, in order.
func userTexts(si *spanInfo) []int {
	var users []int
	for i, e := range si.entries {
		if !si.skip[i] && e.Role == "user" && e.Kind == "text" && strings.TrimSpace(e.Text) != "" {
			users = append(users, i)
		}
	}
	return users
}

// extractGoal returns the goal: the first user request's first sentence,
// and the next ones while it is short (a constraint is not the goal), with
// the next request if the first is only a few words.
func extractGoal(si *spanInfo, users []int) string {
	var goalSents []string
	words := 0
	for _, ui := range users {
		for _, snt := range sentences(si.entries[ui].Text, sentenceScan) {
			if len(goalSents) >= 2 || words >= 12 {
				break
			}
			if len(goalSents) > 0 && leadsWithConstraint(strings.ToLower(snt)) {
				continue
			}
			goalSents = append(goalSents, snt)
			words += len(strings.Fields(snt))
		}
		if words >= 6 {
			break
		}
	}
	return cutWords(strings.Join(goalSents, " "), maxGoalBytes)
}

// extractConstraints returns the user's sentences that state a constraint
// or preference, collapsed where they differ only in identifiers.
func extractConstraints(si *spanInfo, users []int) []string {
	var cs []string
	seen := map[string]bool{}
	for _, ui := range users {
		for _, snt := range sentences(si.entries[ui].Text, sentenceScan) {
			l := strings.ToLower(snt)
			if !isConstraint(l) || seen[l] || strings.HasSuffix(snt, "?") {
				continue
			}
			seen[l] = true
			cs = append(cs, snt)
		}
	}
	// The cap counts sentences before they collapse: collapsing makes the
	// section shorter, never longer.
	if len(cs) > maxConstraints {
		cs = cs[:maxConstraints]
	}
	cs = collapseConstraints(cs)
	for i, c := range cs {
		cs[i] = cutWords(c, maxItemBytes)
	}
	return cs
}

// fileEdits is what the span did to one file.
type fileEdits struct {
	pos     int
	path    string
	verb    string
	n       int
	deleted bool
}

// checkRun is the last run of one check command.
type checkRun struct {
	pos     int
	cmd     string
	outcome outcome
	err     string
}

// actionItems returns what the tool calls did (files written, state
// changed, checks that pass) and the checks whose last run fails.
func actionItems(si *spanInfo) (done, doing []item) {
	files := map[string]*fileEdits{}
	var fileOrder []string
	lastRun := map[string]*checkRun{}
	var runOrder []string
	for _, a := range si.actions {
		if a.result < 0 {
			continue
		}
		res := si.entries[a.result]
		switch a.kind {
		case actWrite:
			if res.IsError || a.failed && si.errs[a.result] > 0 && len(res.Text) < 400 {
				continue
			}
			verb := writeVerb(si, a)
			for _, p := range writtenPaths(verb, a.paths) {
				k := normPath(p)
				f := files[k]
				if f == nil {
					f = &fileEdits{pos: a.call, path: p, verb: verb}
					files[k] = f
					fileOrder = append(fileOrder, k)
				}
				f.n++
				if verb == "Deleted" {
					f.verb = verb
				}
			}
		case actRun:
			if a.command == "" {
				continue
			}
			key := strings.Join(strings.Fields(a.command), " ")
			if isCheck(a.command) {
				r := lastRun[key]
				if r == nil {
					r = &checkRun{}
					lastRun[key] = r
					runOrder = append(runOrder, key)
				}
				*r = checkRun{pos: a.result, cmd: a.command, outcome: a.outcome, err: a.errLine}
				continue
			}
			if a.failed {
				continue
			}
			if changesState(a.command) {
				done = append(done, item{a.result, "Ran `" + a.command + "`"})
			}
		}
	}
	for _, k := range fileOrder {
		f := files[k]
		t := f.verb + " `" + f.path + "`"
		if f.n > 1 && f.verb == "Edited" {
			t += " (" + strconv.Itoa(f.n) + " edits)"
		}
		done = append(done, item{f.pos, t})
	}
	for _, k := range runOrder {
		it, failing := checkItem(lastRun[k])
		if failing {
			doing = append(doing, it)
		} else {
			done = append(done, it)
		}
	}
	return done, doing
}

// writeVerb names what a write call did to its paths.
func writeVerb(si *spanInfo, a action) string {
	verb := "Edited"
	switch {
	case containsAny(a.tool, "delete", "remove"):
		verb = "Deleted"
	case containsAny(a.tool, "rename", "move"):
		verb = "Moved"
	case containsAny(a.tool, "create", "write") && !containsAny(a.tool, "rewrite"):
		verb = "Wrote"
	}
	if ec, _ := si.args[a.call]["command"].(string); ec == "create" {
		verb = "Wrote"
	}
	return verb
}

// writtenPaths returns the paths a write's line names: a move names its
// source and destination as one.
func writtenPaths(verb string, paths []string) []string {
	if verb == "Moved" && len(paths) > 2 {
		paths = paths[:2]
	}
	if verb == "Moved" && len(paths) == 2 {
		paths = []string{paths[0] + "` to `" + paths[1]}
	}
	return paths
}

// checkItem states the last run of a check, and whether it fails.
func checkItem(r *checkRun) (item, bool) {
	switch r.outcome {
	case outUnknown:
		// Its output was not read: the run is stated, not its outcome.
		return item{r.pos, "Ran `" + r.cmd + "` (output not kept)"}, false
	case outFailed:
		t := "`" + r.cmd + "` fails"
		if r.err != "" {
			// Quoted whole, so that the next update reads it back as an
			// error.
			if strings.IndexByte(r.err, '`') < 0 {
				t += ": `" + r.err + "`"
			} else {
				t += ": " + r.err
			}
		}
		return item{r.pos, t}, true
	default:
		return item{r.pos, "`" + r.cmd + "` passes"}, false
	}
}

// replyItems returns what the assistant's replies say was done: a turn's
// final reply (its last text, with no tool call after it) says what came
// of the request, by its first statement of completion or else its first
// statement; other text counts only for a statement of completion.
func replyItems(si *spanInfo, finals []bool) []item {
	var done []item
	for i, e := range si.entries {
		if si.skip[i] || e.Role != "assistant" || e.Kind != "text" {
			continue
		}
		snts := sentences(e.Text, sentenceScan)
		pick := ""
		for _, snt := range snts {
			if isCompletion(snt) {
				pick = snt
				break
			}
		}
		if pick == "" && finals[i] {
			for _, snt := range snts {
				l := strings.ToLower(snt)
				if !strings.HasSuffix(snt, "?") && len(strings.Fields(snt)) >= 3 && !isPlan(l) && !isDecision(l) {
					pick = snt
					break
				}
			}
		}
		if pick != "" {
			done = append(done, item{i, cutWords(pick, maxItemBytes)})
		}
	}
	return done
}

// pendingRequest returns the last request when the span ends before the
// assistant's final reply to it: it is in progress.
func pendingRequest(si *spanInfo, users []int, finals []bool) (item, bool) {
	if len(users) == 0 {
		return item{}, false
	}
	lastUser := users[len(users)-1]
	for i := lastUser + 1; i < len(si.entries); i++ {
		if finals[i] {
			return item{}, false
		}
	}
	snts := sentences(si.entries[lastUser].Text, sentenceScan)
	if len(snts) == 0 {
		return item{}, false
	}
	return item{lastUser, cutWords(snts[0], maxItemBytes)}, true
}

// capItems orders items by position, drops repeats and keeps the last n.
func capItems(its []item, n int) []string {
	sortItems(its)
	its = dedupeItems(its)
	if len(its) > n {
		its = its[len(its)-n:]
	}
	var out []string
	for _, it := range its {
		out = append(out, it.text)
	}
	return out
}

// extractDecisions returns the sentences of the user and the assistant
// that state a decision, the last maxDecisions of them.
func extractDecisions(si *spanInfo) []string {
	var dec []item
	for i, e := range si.entries {
		if si.skip[i] || e.Kind != "text" || (e.Role != "user" && e.Role != "assistant") {
			continue
		}
		for _, snt := range sentences(e.Text, sentenceScan) {
			if !strings.HasSuffix(snt, "?") && isDecision(strings.ToLower(snt)) {
				dec = append(dec, item{i, cutWords(snt, maxItemBytes)})
			}
		}
	}
	return capItems(dec, maxDecisions) // in position order already: the sort keeps it
}

// extractNextSteps returns the plan in the assistant's last message,
// without the steps already stated as decisions.
func extractNextSteps(si *spanInfo, decisions []string) []string {
	var steps []string
	for i := len(si.entries) - 1; i >= 0; i-- {
		e := si.entries[i]
		if si.skip[i] || e.Role != "assistant" || e.Kind != "text" {
			continue
		}
		for _, step := range planOf(e.Text) {
			if !contains(decisions, step) {
				steps = append(steps, step)
			}
		}
		break
	}
	return steps
}

// collapseConstraints merges constraint sentences that differ only in
// their identifiers ("Don't touch internal/a.go." and "Don't touch
// internal/b.go.") into the first of them, each identifier replaced by
// all the distinct ones the group names at that place ("Don't touch
// internal/a.go, internal/b.go."), so that no identifier is lost and the
// line is said once.
func collapseConstraints(cs []string) []string {
	type group struct {
		fields []string
		ids    map[int][]string // field index -> distinct identifiers there
	}
	var groups []*group
	byShape := map[string]*group{}
	for _, c := range cs {
		fields := strings.Fields(c)
		var shape strings.Builder
		var idAt []int
		for i, f := range fields {
			if constraintIdent(f) {
				shape.WriteString("\x00 ")
				idAt = append(idAt, i)
				continue
			}
			shape.WriteString(strings.ToLower(f))
			shape.WriteByte(' ')
		}
		key := shape.String()
		g := byShape[key]
		if g == nil || len(idAt) == 0 {
			g = &group{fields: fields, ids: map[int][]string{}}
			groups = append(groups, g)
			if len(idAt) > 0 {
				byShape[key] = g
			}
		}
		for _, i := range idAt {
			id := trimIdentPunct(fields[i])
			if !contains(g.ids[i], id) {
				g.ids[i] = append(g.ids[i], id)
			}
		}
	}
	out := make([]string, 0, len(groups))
	for _, g := range groups {
		fields := append([]string(nil), g.fields...)
		for i, ids := range g.ids {
			if len(ids) > 1 {
				first := trimIdentPunct(fields[i])
				fields[i] = strings.Replace(fields[i], first, strings.Join(ids, ", "), 1)
			}
		}
		out = append(out, strings.Join(fields, " "))
	}
	return out
}

// constraintIdent reports whether a word of a constraint is an
// identifier: code in backquotes, or what the scanner classifies as one.
func constraintIdent(f string) bool {
	if strings.Contains(f, "`") {
		return true
	}
	k, _ := classify(trimToken(f), false, false)
	return k != kNone
}

// trimIdentPunct drops the sentence punctuation and backquotes around an
// identifier word.
func trimIdentPunct(f string) string {
	if strings.HasSuffix(f, "/...") {
		return strings.TrimLeft(f, "(\"'`")
	}
	return strings.TrimRight(strings.TrimLeft(f, "(\"'`"), ".,;:!?)\"'`")
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// finalReplies marks the assistant texts that end a turn: no tool call
// follows them before the next user message or the end of the span.
func finalReplies(si *spanInfo) []bool {
	final := make([]bool, len(si.entries))
	cand := -1
	for i, e := range si.entries {
		if si.skip[i] {
			continue
		}
		switch {
		case e.Role == "user" && e.Kind == "text":
			if cand >= 0 {
				final[cand] = true
			}
			cand = -1
		case e.Kind == "tool_call":
			cand = -1
		case e.Role == "assistant" && e.Kind == "text":
			cand = i
		}
	}
	if cand >= 0 {
		final[cand] = true
	}
	return final
}

// planOf returns the steps an assistant message plans: the items of a
// list after a line that announces a plan, or its sentences that look
// ahead ("Next, I'll ...", "still need to ...").
func planOf(text string) []string {
	var out []string
	seen := map[string]bool{}
	addStep := func(t string) {
		t = cutWords(t, maxItemBytes)
		if l := strings.ToLower(t); !seen[l] && len(out) < maxNextSteps {
			seen[l] = true
			out = append(out, t)
		}
	}
	inPlan := false
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		if t == "" {
			continue
		}
		it, bulleted, _ := unbullet(t)
		if bulleted && inPlan {
			addStep(it)
			continue
		}
		l := strings.ToLower(t)
		inPlan = strings.HasSuffix(t, ":") && containsAny(l, "next", "plan", "remaining", "todo", "to do", "steps", "follow-up", "left")
	}
	if len(out) > 0 {
		return out
	}
	for _, snt := range sentences(text, sentenceScan) {
		if isPlan(strings.ToLower(snt)) && !isCompletion(snt) {
			addStep(snt)
		}
	}
	return out
}

func sortItems(its []item) {
	sort.SliceStable(its, func(i, j int) bool { return its[i].pos < its[j].pos })
}

// dedupeItems drops items whose text repeats an earlier one (case
// insensitive), keeping the first.
func dedupeItems(its []item) []item {
	seen := map[string]bool{}
	out := its[:0]
	for _, it := range its {
		k := strings.ToLower(it.text)
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, it)
	}
	return out
}

// Sentence classes, by the words they use.

var constraintWords = setOf(`must mustn't should shouldn't don't dont never always prefer avoid ensure keep only without
required requirement compatible limit cannot can't mustn’t don’t shouldn’t`)

var constraintPairs = []string{"do not", "make sure", "no more than", "at most", "at least", "not allowed", "stick to",
	"not use", "not change", "not touch", "please don", "no new"}

func isConstraint(l string) bool {
	for _, w := range wordsOf(l) {
		if constraintWords[w] {
			return true
		}
	}
	return containsAny(l, constraintPairs...)
}

// leadsWithConstraint reports whether a sentence opens as a constraint
// ("Don't ...", "Keep ...", "Make sure ...") rather than a request.
func leadsWithConstraint(l string) bool {
	ws := wordsOf(l)
	if len(ws) == 0 {
		return false
	}
	switch ws[0] {
	case "don't", "dont", "don’t", "never", "always", "must", "keep", "avoid", "only", "ensure", "prefer", "should",
		"no", "without", "please":
		return ws[0] != "please" || len(ws) > 1 && (ws[1] == "don't" || ws[1] == "never" || ws[1] == "keep" || ws[1] == "avoid")
	case "do", "make":
		return len(ws) > 1 && (ws[1] == "not" || ws[1] == "sure")
	}
	return false
}

var decisionPhrases = []string{"decided", "decide to", "decision", "chose ", "chosen", "choose ", "going with",
	"go with", "went with", "opted", "settled on", "switched to", "we'll use", "i'll use", "let's use", "will use",
	"trade-off", "tradeoff", "in favor of", "in favour of"}

// A comparison ("instead of", "rather than") is a decision only when the
// sentence also commits to something.
var (
	comparePhrases = []string{"instead of", "rather than", " over "}
	commitPhrases  = []string{"i'll", "we'll", "i will", "we will", "let's", "use ", "using ", "prefer", "switch",
		"stick", "keep ", "go with"}
)

func isDecision(l string) bool {
	return containsAny(l, decisionPhrases...) || containsAny(l, comparePhrases...) && containsAny(l, commitPhrases...)
}

var completionVerbs = setOf(`fixed added updated implemented created removed renamed refactored committed pushed
wrote rewrote replaced moved deleted changed merged migrated resolved installed upgraded bumped configured
finished completed done passes pass passing`)

// isCompletion reports whether a sentence says that something is done:
// a past tense verb of work (or "passes") in a statement that is neither
// a question nor about the future.
func isCompletion(snt string) bool {
	if strings.HasSuffix(snt, "?") {
		return false
	}
	l := strings.ToLower(snt)
	if containsAny(l, "i'll", "i will", "let me", "going to", "we'll", "next,", "need to", "should ", "let's", "if ",
		"could ", "would ", "not yet", "still ", "haven't", "didn't", "doesn't", "don't", "failed", "fails", "failing") {
		return false
	}
	ws := wordsOf(l)
	if len(ws) < 3 {
		return false
	}
	first := ws[0]
	subject := first == "i" || first == "i've" || first == "we" || first == "we've" || first == "done" || first == "all" ||
		first == "the" || first == "now" || first == "tests" || first == "both" || first == "this" || completionVerbs[first]
	if !subject {
		return false
	}
	for _, w := range ws {
		if completionVerbs[w] {
			return true
		}
	}
	return false
}

var planPhrases = []string{"next,", "next i", "next step", "then i", "i'll ", "i will ", "still need", "remaining",
	"todo", "to do:", "follow-up", "follow up", "afterwards", "after that", "we should", "we could", "should also",
	"plan is", "going to"}

func isPlan(l string) bool { return containsAny(l, planPhrases...) }

var stateCommands = []string{"git commit", "git push", "git merge", "git tag", "git checkout -b", "git switch -c",
	"git rebase", "git cherry-pick", "git revert", "git mv", "git rm", "git apply", "npm install", "npm i ",
	"npm uninstall", "yarn add", "yarn remove", "pnpm add", "pnpm install", "pip install", "pip uninstall",
	"poetry add", "uv add", "go get", "go mod tidy", "go install", "cargo add", "mkdir", "mv ", "rm ", "cp ",
	"docker build", "docker push", "docker compose up", "kubectl apply", "kubectl delete", "kubectl rollout",
	"helm upgrade", "helm install", "terraform apply", "make install", "sed -i", "gofmt -w", "goimports -w",
	"prettier --write", "black ", "ruff format", "alembic upgrade", "migrate", "touch ", "chmod ", "ln -s",
	"psql", "createdb", "dropdb", "npx prisma migrate", "rails db:migrate", "python manage.py migrate"}

// changesState reports whether a command changes the project (commits,
// installs, moves files), as opposed to reading it.
func changesState(cmd string) bool {
	for _, part := range splitShell(cmd) {
		p := strings.TrimSpace(part)
		for _, c := range stateCommands {
			if strings.HasPrefix(p, c) {
				return true
			}
		}
	}
	return false
}

// wordsOf splits lower-case text into words of letters and apostrophes.
func wordsOf(l string) []string {
	return strings.FieldsFunc(l, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r == '\'' || r == '’' || r >= 0x80 && r != '—' && r != '–')
	})
}

// sentences splits prose into sentences, within the first limit bytes of
// text: at . ! ? before a space and a capital (or a digit, quote, or
// code), and at line breaks. Code blocks, indented code, shell lines,
// log and error lines, headings (a line emphasized whole, a Title Case
// label ending with a colon) and lines that only say "none" are not
// prose and give no sentence; list markers, emphasis markers and the
// symbols a line opens with (✓, →) are dropped. Sentences of one word
// are dropped.
func sentences(text string, limit int) []string {
	if len(text) > limit {
		text = text[:limit]
		if i := strings.LastIndexByte(text, '\n'); i > limit/2 {
			text = text[:i]
		}
	}
	var out []string
	inFence := false
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			inFence = !inFence
			continue
		}
		if inFence || t == "" || strings.HasPrefix(line, "    ") || strings.HasPrefix(line, "\t") ||
			strings.HasPrefix(t, "$ ") || strings.HasPrefix(t, "#") || strings.HasPrefix(t, ">") || strings.HasPrefix(t, "|") {
			continue
		}
		if errorText(t, true) != "" || codeLike(t) {
			continue
		}
		t, _, _ = unbullet(t)
		// Headings and labels are layout; "none" says nothing.
		if t = layoutFree(t); t == "" {
			continue
		}
		start := 0
		for i := 0; i < len(t); i++ {
			c := t[i]
			if c != '.' && c != '!' && c != '?' {
				continue
			}
			if i+2 >= len(t) || t[i+1] != ' ' {
				continue
			}
			n := t[i+2]
			if !(n >= 'A' && n <= 'Z' || isDigit(n) || n == '`' || n == '"' || n == '(' || n == '*') {
				continue
			}
			if c == '.' && isAbbrevBefore(t[:i]) {
				continue
			}
			out = appendSentence(out, t[start:i+1])
			start = i + 2
		}
		out = appendSentence(out, t[start:])
	}
	return out
}

func appendSentence(out []string, s string) []string {
	s = strings.TrimSpace(s)
	if strings.IndexByte(s, ' ') < 0 {
		return out
	}
	return append(out, s)
}

// isAbbrevBefore reports whether the text before a period ends with an
// abbreviation (e.g, i.e, etc, vs, Dr) or an initial.
func isAbbrevBefore(t string) bool {
	j := len(t)
	i := j
	for i > 0 && (isLetter(t[i-1]) || t[i-1] == '.') {
		i--
	}
	w := strings.ToLower(t[i:j])
	switch w {
	case "e.g", "i.e", "etc", "vs", "dr", "mr", "mrs", "ms", "no", "cf", "approx", "fig", "st":
		return true
	}
	return len(w) == 1
}

// codeLike reports whether a line reads as code rather than prose: several
// of the characters code is made of, and few spaces.
func codeLike(t string) bool {
	n := 0
	for i := 0; i < len(t); i++ {
		switch t[i] {
		case '{', '}', ';', '=', '(', ')', '[', ']', '<', '>':
			n++
		}
	}
	return n >= 4 && n*8 > len(t)/4 || strings.HasSuffix(t, "{") || strings.HasSuffix(t, ";")
}

// cutWords cuts s to at most n bytes at a word boundary, with "…".
func cutWords(s string, n int) string {
	s = oneLine(s)
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && (s[cut]&0xC0) == 0x80 {
		cut--
	}
	if i := strings.LastIndexByte(s[:cut], ' '); i > n/2 {
		cut = i
	}
	return strings.TrimRight(s[:cut], " ,;:") + "…"
}
