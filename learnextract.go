package strata

import (
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// This file reads learnings out of turns without a model: each clause of
// a turn that states something about its speaker becomes a statement
// about a named subject, with its time words resolved against the turn's
// time and the turn it came from. The rules, in order:
//
//   - Turns of tools and the system, and of an unnamed assistant (a model,
//     not a person), state nothing learnable.
//   - A turn is cut into sentences, a sentence into clauses (at ";", a
//     dash between spaces, and a conjunction before a new first-person
//     subject: "..., and I ..."). Greetings and interjections leading a
//     clause ("Wow,", "Hey Mel!") are dropped.
//   - Questions, clauses of fewer than four words, clauses about the other
//     speaker or addressed to them (any "you" or "your"), and small talk
//     (see smallTalk) are not learnings. A clause that shows something
//     ("Here's a pic of my family") says the speaker showed it, and one
//     that shows nothing it names ("Here's something ...") is dropped.
//   - A clause is kept when it speaks of its speaker: its subject is "I",
//     "we", "my" or "our", or, with another subject, it names the speaker
//     as "me", "my", "we", "us" or "our" ("The group made me feel
//     accepted").
//   - First person becomes the speaker's name ("I" -> "Caroline", "my" ->
//     "Caroline's", "we" -> "Caroline and others") with the verb agreeing
//     ("I love" -> "Caroline loves", "I'm" -> "Caroline is").
//   - Time words the time parser knows (FindTimes), and those of the
//     future it does not ("tomorrow", "next month", "in two weeks") and
//     "a few days (weeks, months) ago", are resolved against the turn's
//     time: the words stay, the date follows them in parentheses, and
//     the first such date is the learning's When.
//   - The subject of the learning is who it is about and an attribute:
//     see stateRules for the attributes a later statement supersedes;
//     any other statement's subject is its whole normalized text, so only
//     a repeat of it matches.

// ExtractedLearning is a learning read out of a turn, before it is stored.
type extracted struct {
	about, attribute, value, text, when string
	subject                             string
}

// turnSpeakers says, for each turn of a run, who speaks and to whom: the
// addressee is the speaker of the nearest turn before it by someone else,
// else of the nearest after it.
func turnSpeakers(ts []Turn) (speakers, addressees []string) {
	speakers = make([]string, len(ts))
	addressees = make([]string, len(ts))
	for i := range ts {
		speakers[i] = ts[i].Speaker()
	}
	last := ""
	for i := range ts {
		if last != "" && last != speakers[i] {
			addressees[i] = last
		}
		if learnableTurn(ts[i]) {
			if last != speakers[i] {
				last = speakers[i]
			}
		}
	}
	next := ""
	for i := len(ts) - 1; i >= 0; i-- {
		if addressees[i] == "" && next != "" && next != speakers[i] {
			addressees[i] = next
		}
		if learnableTurn(ts[i]) && ts[i].Speaker() != "" {
			next = speakers[i]
		}
	}
	return speakers, addressees
}

// learnableTurn reports whether a turn's words may hold learnings: a
// person's, not a tool's, the system's or an unnamed model's.
func learnableTurn(t Turn) bool {
	switch t.Role {
	case RoleTool, RoleSystem:
		return false
	case RoleAssistant:
		return t.Name != "" && !strings.EqualFold(t.Name, "assistant")
	}
	return true
}

// ExtractLearnings returns the learnings the offline rules read out of
// turns, a run of consecutive turns of one conversation, in order. Their
// times resolve in loc (nil: UTC). Each learning's Sources is the turn it
// came from, and FirstSeq and LastSeq that turn's seq; Node, Conversation
// and Status are left for the caller.
func ExtractLearnings(ts []Turn, loc *time.Location) []Learning {
	if loc == nil {
		loc = time.UTC
	}
	speakers, addressees := turnSpeakers(ts)
	var out []Learning
	for i, t := range ts {
		if !learnableTurn(t) || speakers[i] == "" {
			continue
		}
		for _, x := range extractTurn(t.Content, speakers[i], addressees[i], t.Time, loc) {
			out = append(out, Learning{Subject: x.subject, Text: x.text, About: x.about, Attribute: x.attribute,
				Value: x.value, When: x.when, Sources: []LearningSource{{Seq: t.Seq, ExtID: t.ExtID}},
				FirstSeq: t.Seq, LastSeq: t.Seq})
		}
	}
	return out
}

// extractTurn applies the rules to the content of one turn by speaker,
// addressed to addressee, at time at.
func extractTurn(content, speaker, addressee string, at time.Time, loc *time.Location) []extracted {
	var out []extracted
	seen := map[string]bool{}
	for _, sent := range splitSentences(content) {
		cls := splitClauses(sent)
		if strings.HasSuffix(sent, "?") && len(cls) > 0 {
			// The question is the last clause; those before it may
			// state something ("I finished another pottery project -
			// want to see a pic?"), unless they ask too.
			cls = cls[:len(cls)-1]
			for len(cls) > 0 && asks(cls[len(cls)-1]) {
				cls = cls[:len(cls)-1]
			}
		}
		for _, cl := range cls {
			x, ok := extractClause(cl, speaker, addressee, at, loc)
			if !ok || seen[x.subject+"\x00"+x.text] {
				continue
			}
			seen[x.subject+"\x00"+x.text] = true
			out = append(out, x)
		}
	}
	return out
}

// questionOpen are the words that open a question.
var questionOpen = map[string]bool{"do": true, "does": true, "did": true, "have": true, "has": true, "had": true, "are": true,
	"is": true, "was": true, "were": true, "am": true, "can": true, "could": true, "would": true, "will": true, "should": true,
	"shall": true, "may": true, "might": true, "what": true, "what's": true, "how": true, "how's": true, "why": true, "where": true,
	"when": true, "who": true, "which": true, "whose": true, "any": true, "anything": true, "want": true, "wanna": true,
	"got": true, "ever": true, "isn't": true, "aren't": true, "don't": true, "doesn't": true, "didn't": true, "right": true}

// asks reports whether a clause opens as a question does.
func asks(cl string) bool {
	ws := clauseWords(cl)
	return len(ws) > 0 && questionOpen[ws[0]]
}

// sentenceEnd ends a sentence: final punctuation followed by space, or a
// line break.
var sentenceEnd = regexp.MustCompile(`[.!?]+["')\]]*\s+|\n+`)

// splitSentences cuts text into sentences, each with its final
// punctuation, trimmed.
func splitSentences(text string) []string {
	var out []string
	start := 0
	for _, m := range sentenceEnd.FindAllStringIndex(text, -1) {
		// "Mr. Smith", "e.g. this": a single capital or a known
		// abbreviation before the dot does not end a sentence.
		if s := strings.TrimSpace(text[start:m[1]]); s != "" {
			if abbreviated(text[start : m[0]+1]) {
				continue
			}
			out = append(out, s)
		}
		start = m[1]
	}
	if s := strings.TrimSpace(text[start:]); s != "" {
		out = append(out, s)
	}
	return out
}

// abbreviated reports whether s ends with an abbreviation's dot.
func abbreviated(s string) bool {
	if !strings.HasSuffix(s, ".") {
		return false
	}
	f := strings.Fields(s)
	if len(f) == 0 {
		return false
	}
	w := strings.ToLower(f[len(f)-1])
	switch w {
	case "mr.", "mrs.", "ms.", "dr.", "st.", "e.g.", "i.e.", "vs.", "etc.", "jr.", "sr.":
		return true
	}
	r, n := utf8.DecodeRuneInString(f[len(f)-1])
	return n+1 == len(f[len(f)-1]) && unicode.IsUpper(r)
}

// clauseCut finds where a sentence holds another clause: a semicolon, a
// dash between spaces, or a conjunction before a new subject, in the first
// person or a pronoun (group 1 is the subject's start).
var clauseCut = regexp.MustCompile(`(?i)\s*;\s*|\s+[-–—]+\s+|,?\s+(?:but|so|and|because|although|though|while|since|plus)\s+((?:i|we|my|our|i'm|i've|i'd|i'll|we're|we've|we'll|it|it's|that|that's|this|they|they're|he|she|there|there's)\b)`)

// commaCut finds a comma and a conjunction: the clause after it stands
// on its own ("..., but it was great", "..., so I signed up").
var commaCut = regexp.MustCompile(`(?i),\s+(?:and|but|so|because|although|though|while|since|plus|which|and then)\s+`)

// andVerb finds "and" before a verb in the past, the second of two
// things the same subject did ("I went to the park and played").
var andVerb = regexp.MustCompile(`(?i)\s+and\s+(?:then\s+|also\s+)?([a-z]+)\b`)

// splitClauses cuts a sentence into clauses. A clause that starts with a
// past verb after "and" gets the subject of the clause before it, when
// that one opens with "I" or "we".
func splitClauses(sent string) []string {
	var parts []string
	start := 0
	cut := func(end, next int) {
		if s := strings.TrimSpace(sent[start:end]); s != "" {
			parts = append(parts, s)
		}
		start = next
	}
	for _, m := range clauseCut.FindAllStringSubmatchIndex(sent, -1) {
		next := m[1]
		if m[2] >= 0 {
			next = m[2]
		}
		cut(m[0], next)
	}
	cut(len(sent), len(sent))
	var out []string
	for _, p := range parts {
		for _, q := range cutAt(p, commaCut) {
			out = append(out, splitAndVerb(q)...)
		}
	}
	return out
}

// cutAt cuts s at every match of re.
func cutAt(s string, re *regexp.Regexp) []string {
	var out []string
	start := 0
	for _, m := range re.FindAllStringIndex(s, -1) {
		if t := strings.TrimSpace(s[start:m[0]]); t != "" {
			out = append(out, t)
		}
		start = m[1]
	}
	if t := strings.TrimSpace(s[start:]); t != "" {
		out = append(out, t)
	}
	return out
}

// splitAndVerb cuts "I went to the park and played frisbee" into "I went
// to the park" and "I played frisbee".
func splitAndVerb(cl string) []string {
	ws := clauseWords(cl)
	if len(ws) == 0 || (ws[0] != "i" && ws[0] != "we") {
		return []string{cl}
	}
	subj := cl[:len(ws[0])]
	var out []string
	start := 0
	for _, m := range andVerb.FindAllStringSubmatchIndex(cl, -1) {
		v := strings.ToLower(cl[m[2]:m[3]])
		if !pastVerb(v) {
			continue
		}
		out = append(out, strings.TrimSpace(cl[start:m[0]]))
		cl = cl[:m[0]] + " " + subj + " " + cl[m[2]:]
		start = m[0] + 1
		return append(out, splitAndVerb(strings.TrimSpace(cl[start:]))...)
	}
	return []string{cl}
}

// pastVerb reports whether w is a verb in the past tense: a known
// irregular one, or a word ending in "ed" (but need, feed and the other
// presentEd).
func pastVerb(w string) bool {
	if len(w) > 3 && strings.HasSuffix(w, "ed") && !presentEd[w] {
		return true
	}
	return verbsKept[w] && !modals[w] && w != "and" && w != "or" && w != "but" && w != "to" && w != "in" && w != "at" &&
		w != "on" && w != "with" && w != "myself" && w != "too" && w != "used"
}

// presentEd are verbs whose present ends in "ed" ("Need help with
// marketing" is no past).
var presentEd = map[string]bool{"need": true, "feed": true, "bleed": true, "breed": true, "speed": true, "succeed": true,
	"proceed": true, "exceed": true, "shred": true, "embed": true, "weed": true, "heed": true, "seed": true}

// leadWords are interjections and greetings that open a clause without
// being part of what it states.
var leadWords = regexp.MustCompile(`(?i)^(?:(?:wow|oh|ooh|ah|aw+|aww+|yeah|yep|yes|no|nope|hey|hi|hello|thanks|thank you|haha+|lol|ha|well|ok|okay|so|um|hmm|omg|gosh|man|dude|anyway|also|actually|honestly|totally|absolutely|definitely|sure|cool|great|nice|awesome|sweet|right|true|by the way|btw|oh my|oh wow|oh yeah|oh man|good news|guess what|besides that|best of all|overall|anyways)\b[\s,!.:]*)+`)

// leadName is a vocative naming the addressee: "Hey Mel!", "Caroline,".
var leadName = regexp.MustCompile(`^(?:hey |hi |hello )?[\p{Lu}][\p{L}]*[,!]\s+`)

// smallTalk matches first-person clauses that are manners or feelings
// about the talk itself, not facts: "I'm so glad", "I hope so", "I love
// that", "I agree", "I can't wait".
var smallTalk = regexp.MustCompile(`(?i)^(?:i|we)(?:'m| am|'re| are)? (?:(?:so|really|totally|just|also|too|very|super) )*(?:` +
	`glad|happy for|proud of|sorry|sure|excited for|thrilled for|hope|hoping|agree|bet|guess|know|see|understand|appreciate|wish|wonder|` +
	`can't wait|cannot wait|can't believe|couldn't agree|feel the same|get it|get that|mean|think so|love (?:that|this|it)\b|like (?:that|this|it)\b|` +
	`(?:have|'ve) to say|must say|can (?:only )?imagine|can't imagine|totally agree|have no idea|thank|miss (?:you|talking)|am here for|'m here for|will (?:do|try)|'ll (?:do|try))\b`)

// aboutOther finds a clause's feelings or manners towards the addressee.
var aboutOther = regexp.MustCompile(`(?i)\b(?:for|of|to|with|about|at|from|by|like|than|thanks?|love|miss|admire|appreciate|congratulate|help|support|inspire[sd]?|know|tell|told|see|show|meet|message|hear|heard|ask|wish|hope) (?:you|your|yourself)\b|\byou(?:'d|'ll)\b|\b(?:you|your)(?:'re|'ve| are| have| were| did| do| look| sound| seem| got| must| should| can| could)\b`)

// modals are verbs of what could be, not what is.
var modals = map[string]bool{"can": true, "could": true, "would": true, "should": true, "might": true, "may": true, "must": true, "will": true, "'ll": true, "shall": true}

// hasAny reports whether one of ws is in set.
func hasAny(ws []string, set map[string]bool) bool {
	for _, w := range ws {
		if set[w] {
			return true
		}
	}
	return false
}

// pronoun words, lower case.
var (
	firstPerson  = map[string]bool{"i": true, "me": true, "my": true, "mine": true, "myself": true, "we": true, "us": true, "our": true, "ours": true, "ourselves": true, "i'm": true, "i've": true, "i'd": true, "i'll": true, "we're": true, "we've": true, "we'd": true, "we'll": true}
	secondPerson = map[string]bool{"you": true, "your": true, "yours": true, "yourself": true, "yourselves": true, "you're": true, "you've": true, "you'd": true, "you'll": true, "ya": true, "u": true}
	subjectFirst = map[string]bool{"i": true, "we": true, "my": true, "our": true, "i'm": true, "i've": true, "i'd": true, "i'll": true, "we're": true, "we've": true, "we'd": true, "we'll": true}
	// Openings of a clause that comment on something said rather than
	// state a fact.
	commentOpen = map[string]bool{"that": true, "that's": true, "this": true, "it's": true, "it": true, "sounds": true, "what": true,
		"how": true, "glad": true, "congrats": true, "congratulations": true, "good": true, "love": true, "looks": true, "take": true,
		"let's": true, "let": true, "keep": true, "have": true, "enjoy": true, "hope": true, "see": true, "talk": true, "bye": true,
		"thanks": true, "thank": true, "can't": true, "please": true, "don't": true, "maybe": true, "there": true, "here": true,
		"which": true}
)

// clauseWords splits a clause into its words, lower case, with inner
// apostrophes kept (curly ones made straight).
func clauseWords(s string) []string {
	s = strings.ReplaceAll(strings.ToLower(s), "’", "'")
	return strings.FieldsFunc(s, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'')
	})
}

// extractClause applies the rules to one clause.
func extractClause(cl, speaker, addressee string, at time.Time, loc *time.Location) (extracted, bool) {
	cl = strings.ReplaceAll(cl, "’", "'")
	if thanksFor.MatchString(cl) {
		return extracted{}, false
	}
	// Greetings and vocatives, in any order: "Hey Mel!", "Wow, Caroline,".
	for prev := ""; prev != cl; {
		prev = cl
		cl = leadName.ReplaceAllString(cl, "")
		cl = strings.TrimSpace(leadWords.ReplaceAllString(cl, ""))
	}
	cl = strings.TrimLeft(cl, ",;:!.- ")
	if strings.HasSuffix(cl, "?") {
		return extracted{}, false
	}
	// A clause cut after "which" opens with the verb of a subject left
	// behind: "which means I'm seeing more sales" says its own clause,
	// "which has me questioning my goals" says nothing on its own.
	if m := meansThat.FindStringIndex(cl); m != nil {
		cl = cl[m[1]:]
	} else if subjectless.MatchString(cl) {
		return extracted{}, false
	}
	cl, shown := shownThing(cl)
	if !shown {
		return extracted{}, false
	}
	ws := clauseWords(cl)
	if len(ws) < 4 {
		return extracted{}, false
	}
	// A clause that opens with a past verb or "been" has left out its "I"
	// ("Just got some new shoes", "Been busy with a project").
	if k := leadingAdverbs(ws); k+1 < len(ws) && (pastVerb(ws[k]) || ws[k] == "been") &&
		ws[k] != "was" && ws[k] != "were" && ws[k] != "did" && !firstPerson[ws[k+1]] {
		subj := "I "
		if ws[k] == "been" {
			subj = "I've " // "Been busy": "I've been busy"
		}
		r, n := utf8.DecodeRuneInString(cl)
		cl, ws = subj+string(unicode.ToLower(r))+cl[n:], append([]string{"i"}, ws...)
	}
	if secondPerson[ws[0]] || addressee == "" && hasAny(ws, secondPerson) {
		return extracted{}, false
	}
	first, personal := false, false
	for i, w := range ws {
		if firstPerson[w] {
			personal = true
			if i == 0 {
				first = true
			}
		}
	}
	if !personal {
		return namedStatement(cl, at, loc)
	}
	if !subjectFirst[ws[0]] && commentOpen[ws[0]] {
		return extracted{}, false
	}
	if first && smallTalk.MatchString(cl) {
		return extracted{}, false
	}
	// Feelings and wishes about the other speaker ("I'm so proud of you",
	// "we should hang out with your kids") are not facts.
	if hasAny(ws, secondPerson) && (aboutOther.MatchString(cl) || hasAny(ws, modals)) {
		return extracted{}, false
	}
	// What "we" could or would do is a wish, not a fact.
	if (ws[0] == "we" || ws[0] == "we'll" || ws[0] == "we'd") && (ws[0] != "we" || modals[ws[1]]) {
		return extracted{}, false
	}
	text := toThirdPerson(cl, speaker, addressee)
	text, when := resolveTimes(text, at, loc)
	text = strings.TrimRight(text, " ,;:-–—!.")
	text += "."
	r, n := utf8.DecodeRuneInString(text)
	text = string(unicode.ToUpper(r)) + text[n:]
	x := extracted{text: text, when: when, about: speaker}
	x.attribute, x.value = stateAttribute(text, speaker)
	if x.attribute != "" {
		x.subject = strings.ToLower(speaker) + "|" + x.attribute
	} else {
		x.attribute, x.value = mainVerb(text, speaker)
		x.subject = strings.ToLower(speaker) + "|" + NormalizeLearningText(stripWhen(text))
	}
	return x, true
}

// thanksFor is gratitude for something ("Thanks for being there for
// me"): manners, not a fact.
var thanksFor = regexp.MustCompile(`(?i)^(?:[a-z]+[,!.]?\s+)?(?:thanks|thank you)(?:\s+(?:so much|a lot|again))?\s+for\b`)

// meansThat opens a clause that says what something else means.
var meansThat = regexp.MustCompile(`(?i)^(?:which |that |this |it )?means (?:that )?`)

// subjectless opens a clause with a verb whose subject is elsewhere (a
// clause cut after "which").
var subjectless = regexp.MustCompile(`(?i)^(?:has|makes|keeps|gives|lets|helps|shows|reminds|gets|takes|brings|puts|leaves|sounds|looks|seems)\s`)

// showOpen opens a clause that shows something ("Here's a pic of my
// family", "Check out this painting I made"); its group is the
// determiner, if any.
var showOpen = regexp.MustCompile(`(?i)^(?:here(?:'s| is| are)|check(?: out)?|look at)\s+(?:(this|that|these|those|a|an)\s+)?`)

// shownThing rewrites a clause that shows something as the speaker's
// showing it ("Here's a pic of my family" -> "I showed a pic of my
// family", "Check out this painting" -> "I showed a painting"), so that
// it reads as a fact out of its turn. A clause that shows only
// "something", "one" or "it" names nothing: ok is false.
func shownThing(cl string) (_ string, ok bool) {
	m := showOpen.FindStringSubmatchIndex(cl)
	if m == nil {
		return cl, true
	}
	rest := cl[m[1]:]
	ws := clauseWords(rest)
	if len(ws) == 0 || shownNothing[ws[0]] {
		return cl, false
	}
	article := ""
	if m[2] >= 0 {
		switch strings.ToLower(cl[m[2]:m[3]]) {
		case "these", "those":
		default:
			article = "a "
			if strings.ContainsRune("aeiou", rune(ws[0][0])) {
				article = "an "
			}
		}
	}
	return "I showed " + article + rest, true
}

// shownNothing are words that, shown, name nothing out of their turn.
var shownNothing = map[string]bool{"something": true, "one": true, "ones": true, "it": true, "them": true, "what": true,
	"how": true, "where": true, "when": true, "is": true, "are": true, "out": true, "up": true, "to": true}

// namedName opens a clause with a name: a capitalized word, maybe two.
var namedName = regexp.MustCompile(`^\p{Lu}[\p{L}-]+(?: \p{Lu}[\p{L}-]+)?`)

// namedStatement reads a clause without first person that states a
// superseding attribute of someone named ("Jon's job is nursing", "Ana
// moved to Lisbon"); any other such clause is no learning.
func namedStatement(cl string, at time.Time, loc *time.Location) (extracted, bool) {
	name := namedName.FindString(cl)
	if name == "" || commentOpen[strings.ToLower(name)] || firstPerson[strings.ToLower(name)] {
		return extracted{}, false
	}
	text, when := resolveTimes(strings.TrimRight(cl, " ,;:-–—!.")+".", at, loc)
	attr, val := stateAttribute(text, name)
	if attr == "" {
		return extracted{}, false
	}
	return extracted{about: name, attribute: attr, value: val, text: text, when: when,
		subject: strings.ToLower(name) + "|" + attr}, true
}

// whenNote is the parenthesized date resolveTimes adds after time words.
var whenNote = regexp.MustCompile(` \((?:\d{4}-\d{2}-\d{2}(?: to \d{4}-\d{2}-\d{2})?|week of \d{4}-\d{2}-\d{2}|[A-Z][a-z]+ \d{4}|\d{4})\)`)

// stripWhen removes the dates resolveTimes added, so that a repeat of a
// fact on another day keys alike.
func stripWhen(s string) string { return whenNote.ReplaceAllString(s, "") }

// wordRE finds words with inner apostrophes.
var wordRE = regexp.MustCompile(`[\p{L}\p{N}]+(?:['’][\p{L}]+)*`)

// personForms are the first- and second-person words toThirdPerson
// rewrites, and what each becomes: S stands for the speaker's name, A for
// the addressee's (the other words hold neither capital letter).
var personForms = map[string]string{
	"i":         "S",
	"i'm":       "S is",
	"i've":      "S has",
	"i'd":       "S would",
	"i'll":      "S will",
	"me":        "S",
	"myself":    "S",
	"my":        "S's",
	"mine":      "S's",
	"we":        "S and others",
	"us":        "S and others",
	"ourselves": "S and others",
	"we're":     "S and others are",
	"we've":     "S and others have",
	"we'd":      "S and others would",
	"we'll":     "S and others will",
	"our":       "S's",
	"ours":      "S's",
	"you":       "A",
	"yourself":  "A",
	"your":      "A's",
	"yours":     "A's",
	"you're":    "A is",
	"you've":    "A has",
	"you'd":     "A would",
	"you'll":    "A will",
	"gonna":     "going to",
	"wanna":     "want to",
	"gotta":     "has to",
}

// toThirdPerson rewrites the first person of cl as speaker and the
// second as addressee.
func toThirdPerson(cl, speaker, addressee string) string {
	var b strings.Builder
	last := 0
	locs := wordRE.FindAllStringIndex(cl, -1)
	for k := 0; k < len(locs); k++ {
		w := cl[locs[k][0]:locs[k][1]]
		lw := strings.ToLower(w)
		form, ok := personForms[lw]
		if !ok {
			continue
		}
		// The verb after "I" agrees with a third person; so does the one
		// after "you" where a clause opens with it ("how you feel"):
		// elsewhere "you" is mostly an object ("I sent you the recipe").
		verbAfter := lw == "i" || lw == "you" && k > 0 && clauseOpeners[strings.ToLower(cl[locs[k-1][0]:locs[k-1][1]])]
		rep := strings.NewReplacer("S", speaker, "A", addressee).Replace(form)
		b.WriteString(cl[last:locs[k][0]])
		b.WriteString(rep)
		last = locs[k][1]
		if !verbAfter {
			continue
		}
		// The verb after "I", past adverbs: made to agree with a third
		// person.
		j := k + 1
		for j < len(locs) && adverbs[strings.ToLower(cl[locs[j][0]:locs[j][1]])] {
			j++
		}
		if j < len(locs) && !firstPerson[strings.ToLower(cl[locs[j][0]:locs[j][1]])] && !secondPerson[strings.ToLower(cl[locs[j][0]:locs[j][1]])] &&
			!(lw == "you" && strings.HasSuffix(cl[locs[j][0]:locs[j][1]], "s")) { // "that you guys"
			v := cl[locs[j][0]:locs[j][1]]
			if t := thirdPersonVerb(v); t != v {
				b.WriteString(cl[last:locs[j][0]])
				b.WriteString(t)
				last = locs[j][1]
				k = j
			}
		}
	}
	b.WriteString(cl[last:])
	return b.String()
}

// clauseOpeners open a clause whose subject follows them.
var clauseOpeners = map[string]bool{"how": true, "that": true, "when": true, "if": true, "because": true, "since": true,
	"while": true, "where": true, "why": true, "whether": true, "as": true, "what": true, "unless": true, "until": true}

// leadingAdverbs counts the adverbs that open ws.
func leadingAdverbs(ws []string) int {
	k := 0
	for k < len(ws) && adverbs[ws[k]] {
		k++
	}
	return k
}

// adverbs may stand between a subject and its verb.
var adverbs = map[string]bool{"just": true, "also": true, "always": true, "never": true, "still": true, "even": true, "often": true,
	"usually": true, "sometimes": true, "actually": true, "finally": true, "recently": true, "already": true, "really": true,
	"totally": true, "definitely": true, "absolutely": true, "truly": true, "mostly": true, "only": true, "now": true, "too": true,
	"all": true, "both": true, "ever": true, "rarely": true, "seriously": true, "kinda": true, "sorta": true, "literally": true, "honestly": true}

// verbsKept are words after "I" that need no change for a third person:
// past forms, modals, and words that are no verb.
var verbsKept = map[string]bool{"was": true, "had": true, "did": true, "went": true, "got": true, "made": true, "saw": true,
	"took": true, "found": true, "felt": true, "left": true, "met": true, "ran": true, "bought": true, "brought": true,
	"thought": true, "told": true, "said": true, "came": true, "gave": true, "knew": true, "began": true, "kept": true,
	"lost": true, "won": true, "wrote": true, "read": true, "built": true, "sent": true, "spent": true, "taught": true,
	"caught": true, "heard": true, "held": true, "put": true, "set": true, "let": true, "cut": true, "hit": true,
	"became": true, "grew": true, "drew": true, "flew": true, "ate": true, "drove": true, "rode": true, "swam": true,
	"sang": true, "sat": true, "stood": true, "understood": true, "fell": true, "forgot": true, "chose": true, "paid": true,
	"sold": true, "slept": true, "woke": true, "wore": true, "broke": true, "spoke": true, "shot": true, "dug": true,
	"can": true, "could": true, "will": true, "would": true, "should": true, "must": true, "might": true, "may": true,
	"shall": true, "used": true, "and": true, "or": true, "but": true, "to": true, "in": true, "at": true, "on": true,
	"with": true, "myself": true, "too": true}

// thirdPersonVerb returns v as the verb of a third person singular.
func thirdPersonVerb(v string) string {
	lv := strings.ToLower(v)
	switch lv {
	case "am":
		return "is"
	case "have":
		return "has"
	case "do":
		return "does"
	case "go":
		return "goes"
	case "can't", "couldn't", "won't", "wouldn't", "shouldn't", "didn't", "wasn't", "haven't", "hadn't":
		if lv == "haven't" {
			return "hasn't"
		}
		return v
	case "don't":
		return "doesn't"
	case "has", "is", "does":
		return v // already agrees ("I has been" is a slip)
	case "aren't":
		return "isn't"
	}
	if verbsKept[lv] || v != lv || !allLetters(lv) || strings.HasSuffix(lv, "ed") && !presentEd[lv] || strings.Contains(lv, "'") || strings.HasSuffix(lv, "ly") {
		return v
	}
	switch {
	case strings.HasSuffix(lv, "s") || strings.HasSuffix(lv, "sh") || strings.HasSuffix(lv, "ch") ||
		strings.HasSuffix(lv, "x") || strings.HasSuffix(lv, "z") || strings.HasSuffix(lv, "o"):
		return v + "es"
	case len(lv) > 1 && strings.HasSuffix(lv, "y") && !strings.ContainsRune("aeiou", rune(lv[len(lv)-2])):
		return v[:len(v)-1] + "ies"
	}
	return v + "s"
}

// stateRule is an attribute whose newer value replaces the older: the
// pattern matches a third-person statement after the subject's name.
type stateRule struct {
	attribute string
	re        *regexp.Regexp // group 1 is the value; (?P<attr>...) names the attribute's own word where it varies
}

// stateRules are the attributes a later statement about the same subject
// supersedes (the documented list; docs/learnings.md says the same):
// where the subject lives, where or as what it works, what it is planning
// (per verb: planning to move and planning to adopt are two plans), its
// age, how many of something it has, its relationship status, and any
// "favorite X", "job", "name", "birthday" or other one-word possessive
// attribute ("Caroline's job is ...").
var stateRules = []stateRule{
	{"lives in", regexp.MustCompile(`^(?:now )?(?:lives|is living|has lived|moved|has moved|is moving|relocated|has relocated|lived) (?:in|to|back to) (.+)$`)},
	{"works at", regexp.MustCompile(`^(?:now )?(?:works|is working|started working|has started working|has been working|got a job|has a (?:new )?job|started a (?:new )?job|is employed|will work|will be working|is interning|started an internship) (?:at|for|as|in|with) (.+)$`)},
	{"is planning to", regexp.MustCompile(`^(?:is|was) (?:planning|hoping|going|preparing|about) to (?P<verb>[a-z]+) ?(.*)$`)},
	{"is planning to", regexp.MustCompile(`^(?:is|was) (?:thinking about|thinking of|looking into|considering) (?P<verb>[a-z]+ing) ?(.*)$`)},
	{"is planning to", regexp.MustCompile(`^(?:plans|intends|wants|hopes) to (?P<verb>[a-z]+) ?(.*)$`)},
	{"age", regexp.MustCompile(`^(?:is|just turned|turned|will turn|is turning) (\d{1,3}|[a-z]+-?[a-z]*)(?: years old| years of age)?$`)},
	{"has", regexp.MustCompile(`^has (\d+|one|two|three|four|five|six|seven|eight|nine|ten|no) (?P<noun>[a-z]+)(?:.*)$`)},
	{"relationship", regexp.MustCompile(`^(?:is|got|just got|recently got) (married|engaged|divorced|single|separated|widowed|in a relationship)\b(.*)$`)},
}

// vagueVerbs say too little for a plan to be keyed by them.
var vagueVerbs = map[string]bool{"keep": true, "make": true, "be": true, "do": true, "try": true, "stay": true, "get": true,
	"have": true, "give": true, "see": true, "let": true, "take": true, "put": true, "continue": true, "a": true, "the": true}

// possessiveRule is "<name>'s <attribute> is <value>".
var possessiveRule = regexp.MustCompile(`^'s ((?:favou?rite |new |current )?[a-z]+(?: name| day| date| color| colour| food| book| movie| song| band| team| city)?) (?:is|was|has become|will be|are) (.+)$`)

// stateAttribute returns the superseding attribute of text, a statement
// about speaker, and its value; "" if none of stateRules matches.
func stateAttribute(text, speaker string) (attribute, value string) {
	rest, ok := strings.CutPrefix(text, speaker)
	if !ok {
		return "", ""
	}
	rest = strings.TrimSuffix(strings.TrimSpace(stripWhen(rest)), ".")
	low := strings.ToLower(rest)
	if m := possessiveRule.FindStringSubmatch(low); m != nil {
		attr := strings.TrimPrefix(strings.TrimPrefix(m[1], "current "), "new ")
		return strings.Replace(attr, "favourite", "favorite", 1), rest[len(rest)-len(m[2]):]
	}
	for _, r := range stateRules {
		m := r.re.FindStringSubmatch(low)
		if m == nil {
			continue
		}
		attr := r.attribute
		for i, name := range r.re.SubexpNames() {
			if name != "" && m[i] != "" {
				attr += " " + strings.TrimSuffix(m[i], "ing")
			}
			if name == "verb" && vagueVerbs[m[i]] {
				attr = "" // "is going to keep at it", "wants to make it": no plan to key
			}
		}
		if attr == "" {
			continue
		}
		val := m[len(m)-1]
		if r.attribute == "has" {
			val = m[1]
		}
		return attr, strings.TrimSpace(rest[len(rest)-len(val):])
	}
	return "", ""
}

// mainVerb returns, for a statement without a superseding attribute, its
// first word after the subject's name (the verb, mostly) and the rest.
func mainVerb(text, speaker string) (attribute, value string) {
	rest, ok := strings.CutPrefix(text, speaker)
	if !ok {
		return "", strings.TrimSuffix(text, ".")
	}
	rest = strings.TrimSuffix(strings.TrimSpace(rest), ".")
	verb, val, _ := strings.Cut(rest, " ")
	for adverbs[strings.ToLower(verb)] && val != "" {
		verb, val, _ = strings.Cut(val, " ")
	}
	if strings.HasPrefix(verb, "'s") || verb == "and" {
		return "", rest
	}
	return strings.ToLower(verb), val
}

// resolveTimes finds the time words of text, resolved against at in loc,
// and returns text with each one's date in parentheses after it, and the
// first one's date as a When.
func resolveTimes(text string, at time.Time, loc *time.Location) (string, string) {
	if at.IsZero() {
		return text, ""
	}
	type found struct {
		start, end int
		p          Period
	}
	var fs []found
	for _, m := range FindTimes(text, at, loc) {
		if relativeWords.MatchString(m.Text) {
			fs = append(fs, found{m.Start, m.End, m.Period})
		}
	}
	for _, m := range futureTimes(text, at, loc) {
		overlaps := false
		for _, f := range fs {
			if m.Start < f.end && f.start < m.End {
				overlaps = true
			}
		}
		if !overlaps {
			fs = append(fs, found{m.Start, m.End, m.Period})
		}
	}
	if len(fs) == 0 {
		return text, ""
	}
	// In order of the text.
	for i := 1; i < len(fs); i++ {
		for j := i; j > 0 && fs[j].start < fs[j-1].start; j-- {
			fs[j], fs[j-1] = fs[j-1], fs[j]
		}
	}
	var b strings.Builder
	last := 0
	when := ""
	for _, f := range fs {
		b.WriteString(text[last:f.end])
		note, w := periodNote(f.p)
		b.WriteString(" (" + note + ")")
		if when == "" {
			when = w
		}
		last = f.end
	}
	b.WriteString(text[last:])
	return b.String(), when
}

// relativeWords tells a time expression that depends on when it was said
// from one that names its date.
var relativeWords = regexp.MustCompile(`(?i)\b(?:yesterday|today|tonight|this|last|past|ago|next|tomorrow|monday|tuesday|wednesday|thursday|friday|saturday|sunday|night|morning|afternoon|evening|weekend|in|during|of|early|mid|late)\b`)

// periodNote writes a period for a reader and as a When.
func periodNote(p Period) (note, when string) {
	first := p.Start
	lastDay := p.End.AddDate(0, 0, -1)
	d1, d2 := first.Format(time.DateOnly), lastDay.Format(time.DateOnly)
	switch {
	case p.Kind == PeriodDay || d1 == d2:
		return d1, d1
	case p.Kind == PeriodWeek:
		return "week of " + d1, d1 + ".." + d2
	case p.Kind == PeriodMonth:
		return first.Format("January 2006"), d1 + ".." + d2
	case first.Month() == time.January && first.Day() == 1 && lastDay.Month() == time.December && lastDay.Day() == 31 && first.Year() == lastDay.Year():
		return first.Format("2006"), d1 + ".." + d2
	}
	return d1 + " to " + d2, d1 + ".." + d2
}

// futureRE finds the time words FindTimes leaves out: the future, and a
// vague "a few days ago".
var futureRE = regexp.MustCompile(`(?i)\b(?:(tomorrow)|(?:the )?(next|coming|this coming) (week|weekend|month|year|monday|tuesday|wednesday|thursday|friday|saturday|sunday)|in (a|an|one|two|three|four|five|six|seven|eight|nine|ten|a couple of|a few|\d+) (days?|weeks?|months?|years?)|(a few|a couple of|few|several) (days?|weeks?|months?|years?) ago|(later|earlier) this (week|month|year))\b`)

// futureTimes returns the matches of futureRE resolved against ref.
func futureTimes(text string, ref time.Time, loc *time.Location) []TimeMatch {
	ref = ref.In(loc)
	y, mo, d := ref.Date()
	day := func(off int) Period { return dayPeriod(y, mo, d+off, loc) }
	var out []TimeMatch
	for _, m := range futureRE.FindAllStringSubmatchIndex(text, -1) {
		g := func(i int) string {
			if m[2*i] < 0 {
				return ""
			}
			return strings.ToLower(text[m[2*i]:m[2*i+1]])
		}
		var p Period
		switch {
		case g(1) != "":
			p = day(1)
		case g(2) != "":
			switch u := g(3); u {
			case "week":
				p = weekPeriod(y, mo, d+7, loc)
			case "weekend":
				// The Saturday and Sunday after ref's day.
				off := (int(time.Saturday) - int(ref.Weekday()) + 7) % 7
				if off == 0 {
					off = 7
				}
				sat := day(off)
				p = Period{Kind: PeriodRange, Start: sat.Start, End: day(off + 2).Start}
			case "month":
				p = monthPeriod(y, mo+1, loc)
			case "year":
				p = yearRange(y+1, loc)
			default:
				wd := weekdayNumber(u)
				off := (int(wd) - int(ref.Weekday()) + 7) % 7
				if off == 0 {
					off = 7
				}
				p = day(off)
			}
		case g(4) != "":
			n := countWord(g(4))
			p = unitFrom(ref, n, g(5), loc)
		case g(6) != "":
			// "A few days ago": two to six units back, a range.
			u := strings.TrimSuffix(g(7), "s")
			hi, lo := unitFrom(ref, -6, u, loc), unitFrom(ref, -2, u, loc)
			p = Period{Kind: PeriodRange, Start: hi.Start, End: lo.End}
		case g(8) != "":
			switch g(9) {
			case "week":
				p = weekPeriod(y, mo, d, loc)
			case "month":
				p = monthPeriod(y, mo, loc)
			default:
				p = yearRange(y, loc)
			}
		}
		if !p.Start.Before(p.End) {
			continue
		}
		out = append(out, TimeMatch{Period: p, Text: text[m[0]:m[1]], Start: m[0], End: m[1]})
	}
	return out
}

// unitFrom is the day, week, month or year n units from ref (n < 0:
// before it).
func unitFrom(ref time.Time, n int, unit string, loc *time.Location) Period {
	y, mo, d := ref.Date()
	switch strings.TrimSuffix(unit, "s") {
	case "day":
		return dayPeriod(y, mo, d+n, loc)
	case "week":
		return weekPeriod(y, mo, d+7*n, loc)
	case "month":
		return monthPeriod(y, mo+time.Month(n), loc)
	}
	return yearRange(y+n, loc)
}

// countWord reads "two", "a couple of", "a few" (three) or digits.
func countWord(s string) int {
	switch s {
	case "a", "an", "one":
		return 1
	case "a couple of":
		return 2
	case "a few":
		return 3
	}
	for i, w := range []string{"two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"} {
		if s == w {
			return i + 2
		}
	}
	n := 0
	fmt.Sscan(s, &n)
	return n
}

func weekdayNumber(s string) time.Weekday {
	for d := time.Sunday; d <= time.Saturday; d++ {
		if strings.EqualFold(d.String(), s) {
			return d
		}
	}
	return time.Sunday
}

// allLetters reports whether s is letters only.
func allLetters(s string) bool {
	for _, r := range s {
		if !unicode.IsLetter(r) {
			return false
		}
	}
	return s != ""
}
