package extractive

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// stopWords are English function words and the small talk of chat ("wow",
// "awesome", "gonna"); they carry no weight in sentence scores and never
// become themes.
var stopWords = func() map[string]bool {
	const list = `a about above after again against ago all almost along already also although always am among an and another any anybody anyone anything anyway anyways anywhere are aren't around as at away back be became because become becomes been before being below besides between both but by can can't cannot could couldn't did didn't do does doesn't doing don't done down during each either else enough especially even ever every everybody everyone everything few for from further get gets getting give given go goes going gone gonna got gotta gotten had hadn't has hasn't have haven't having he he'd he'll he's her here here's hers herself him himself his how how's however i i'd i'll i'm i've if in into is isn't it it'd it'll it's its itself just kinda kind lets let let's like likely made make makes many may maybe me might mine more most much must mustn't my myself need needs neither never no nope nor not nothing now of off often oh ok okay on once one ones only onto or other others otherwise our ours ourselves out over own per perhaps please quite rather really same say says said see seem seems seen shall she she'd she'll she's should shouldn't since so some somebody someone something sometimes somewhat soon still such sure than that that'll that's the their theirs them themselves then there there'd there's these they they'd they'll they're they've thing things this those though through thus to too toward towards under until up upon us use used using very via want wanna wants was wasn't way we we'd we'll we're we've well were weren't what what's whatever when when's where where's whether which while who who's whom whose why why's will with within without won't would wouldn't yeah yes yet you you'd you'll you're you've your yours yourself yourselves
two three four five six seven eight nine ten eleven twelve twenty hundred thousand
wow lol haha hahaha hey hi hello bye thanks thank thx cool awesome great good nice totally yep yup amazing super pretty lot lots stuff bit definitely absolutely glad love loved loving lovely sounds sound know think thought guess mean look looks looking tell told talk talking chat keep keeps kept feel feels felt gonna wanna gotta ya yo cheers sorry hope hoping hopefully agree true right awesome fantastic wonderful incredible exactly probably actually basically literally anyways thanks also etc e.g i.e vs
`
	m := make(map[string]bool, 400)
	for _, w := range strings.Fields(list) {
		m[w] = true
	}
	return m
}()

// maxStopLen is the length of the longest stop word.
const maxStopLen = 16

// stopFilter[len][first][last] is set when some stop word of that length
// starts and ends with those ASCII letters: most content words miss it and
// skip the map lookup.
var stopFilter = func() (f [maxStopLen + 1][26][26]bool) {
	for w := range stopWords {
		if n := len(w); n <= maxStopLen && w[0] >= 'a' && w[0] <= 'z' && w[n-1] >= 'a' && w[n-1] <= 'z' {
			f[n][w[0]-'a'][w[n-1]-'a'] = true
		}
	}
	return f
}()

// isStop reports whether the word s, in any case, is a stop word.
func isStop(s string) bool {
	n := len(s)
	if n == 0 || n > maxStopLen {
		return false
	}
	if a, z := s[0]|0x20, s[n-1]|0x20; a >= 'a' && a <= 'z' && z >= 'a' && z <= 'z' && !stopFilter[n][a-'a'][z-'a'] {
		return false
	}
	return stopSet.hasFold(s)
}

// trivialSentences are whole sentences that say nothing worth keeping,
// compared after lower-casing and dropping everything but letters and
// spaces.
var trivialSentences = func() map[string]bool {
	m := map[string]bool{}
	for _, s := range strings.Split(`ok|okay|k|kk|thanks|thank you|thanks a lot|thank you so much|thx|ty|lol|lmao|haha|hahaha|yes|no|yeah|yep|yup|nope|sure|cool|nice|great|awesome|wow|hi|hello|hey|bye|goodbye|cheers|got it|sounds good|ok thanks|okay thanks|np|no problem|you are welcome|youre welcome|welcome|hmm|oh|ah|right|exactly|true|agreed|totally|me too|same|good|perfect|done|indeed|of course|sounds great|that sounds great|thats great|thats awesome|thats cool|thats amazing|so cool|how are you|how have you been|whats up|good to see you|nice to see you|talk soon|talk to you soon|see you|see ya|take care|good night|good morning|what now|anything new|you too|same here|i agree|totally agree|great idea|good idea|love it|love that|i love it|i love that|lol yes|yes please|please|sorry|my bad|fine|alright|all right|go on|continue|next|ok cool|cool thanks|great thanks|perfect thanks`, "|") {
		m[s] = true
	}
	return m
}()

// maxTrivialLen is the length of the longest of trivialSentences.
var maxTrivialLen = func() int {
	n := 0
	for s := range trivialSentences {
		n = max(n, len(s))
	}
	return n
}()

// alnumBytes counts the ASCII letters and digits of s: a lower bound on
// the length of s normalized, which keeps them all.
func alnumBytes(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if c := s[i] | 0x20; c >= 'a' && c <= 'z' || s[i] >= '0' && s[i] <= '9' {
			n++
		}
	}
	return n
}

// normalizeTrivial lower-cases s and keeps only letters, digits and single
// spaces, for trivialSentences and duplicate detection.
func normalizeTrivial(s string, buf []byte) []byte {
	buf = buf[:0]
	space := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '\'':
				continue
			case c >= 'A' && c <= 'Z':
				c += 'a' - 'A'
				fallthrough
			case c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
				if space && len(buf) > 0 {
					buf = append(buf, ' ')
				}
				space = false
				buf = append(buf, c)
			default:
				space = true
			}
			continue
		}
		r, sz := utf8.DecodeRuneInString(s[i:])
		i += sz - 1
		switch {
		case r == '’':
		case isWordRune(r):
			if space && len(buf) > 0 {
				buf = append(buf, ' ')
			}
			space = false
			buf = utf8.AppendRune(buf, unicode.ToLower(r))
		default:
			space = true
		}
	}
	return buf
}

// normalizedEqual reports whether normalizeTrivial(s) is want, comparing
// as it goes: most texts differ from want within a few bytes.
func normalizedEqual(s string, want []byte) bool {
	j := 0 // bytes of want matched
	space := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		var b []byte // what normalizeTrivial appends next, after a space
		var a [utf8.UTFMax]byte
		if c < utf8.RuneSelf {
			switch {
			case c == '\'':
				continue
			case c >= 'A' && c <= 'Z':
				c += 'a' - 'A'
			case c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
			default:
				space = true
				continue
			}
			if space && j > 0 {
				if j >= len(want) || want[j] != ' ' {
					return false
				}
				j++
			}
			space = false
			if j >= len(want) || want[j] != c {
				return false
			}
			j++
			continue
		}
		r, sz := utf8.DecodeRuneInString(s[i:])
		i += sz - 1
		switch {
		case r == '’':
			continue
		case isWordRune(r):
			b = utf8.AppendRune(a[:0], unicode.ToLower(r))
		default:
			space = true
			continue
		}
		if space && j > 0 {
			if j >= len(want) || want[j] != ' ' {
				return false
			}
			j++
		}
		space = false
		if len(want)-j < len(b) || string(want[j:j+len(b)]) != string(b) {
			return false
		}
		j += len(b)
	}
	return j == len(want)
}

// factVerbs mark "X is/has/likes/works ..." statements.
var factVerbs = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`am is are was were has have had 'm 've 're 's 'd like likes liked love loves loved enjoy enjoys enjoyed work works worked working live lives lived living went go goes started start starts joined join bought buy moved move made got finished finish chose choose decided decide want wants wanted plan plans planned planning need needs needed use uses prefer prefers preferred painted paint paints ran run runs visited visit study studies studied studying teach teaches taught own owns owned adopted adopt born married created create built build wrote write fixed fix changed change set configured configure deployed deploy installed install upgraded upgrade failed fails broke returns return takes took ran runs keen hate hates got signed applied graduated met meet lost won researched researching volunteer volunteered volunteering attend attended attending signed`) {
		m[w] = true
	}
	return m
}()

// factSubject reports whether the lower-case word w opens an "X is/has
// ..." statement: 2 for the speaker or someone named, 1 for a thing, 0 if
// it does not. scan asks wordFlags (fSubject2, fSubject1).
func factSubject(w []byte) int {
	switch {
	case subjects2[string(w)]:
		return 2
	case subjects1[string(w)]:
		return 1
	}
	return 0
}

var (
	subjects2 = wordMap("i i'm i've i'd i'll we we're we've my our he she they he's she's they're")
	subjects1 = wordMap("it it's the this that")
)

func wordMap(list string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(list) {
		m[w] = true
	}
	return m
}

// themeStop are words that may weigh in sentence scores (they often carry
// time) but make poor themes.
var themeStop = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`last next first new old big little long small today yesterday tomorrow tonight day days week weeks month months year years time times moment morning evening night ago later early soon recently lately take taking took make making start starting started give giving come coming try trying doing done getting put find found work working worked stay staying help helping call called feel feeling important special happy hard different whole real takes change changes changed convert instead comes add added adds nobody plus case cases covers better still run runs set sets thing way ways lot need needs fine sure works using use used says said tell told point points part parts kind`) {
		m[w] = true
	}
	return m
}()

// sentenceStarters are capitalized words that open sentences but never
// names: "Yesterday Caroline left" names Caroline, not "Yesterday
// Caroline".
var sentenceStarters = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`yesterday today tomorrow tonight last next congrats congratulations happy dear welcome morning evening afternoon finally recently lately meanwhile luckily unfortunately sadly honestly actually sometimes usually someday first then also anyway besides afterwards later earlier remember see ask tell call meet thank thanks please`) {
		m[w] = true
	}
	return m
}()

// unitWords are upper-case units kept with the number before them.
var unitWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`gb mb kb tb pb gib mib kib tib usd eur gbp cad aud jpy chf cny inr hz khz mhz ghz rpm bpm`) {
		m[w] = true
	}
	return m
}()

// wordSet is a set of words with a cheaper lookup than a map's: open
// addressing over a power-of-two table, FNV-1a over the bytes. It answers
// exactly what indexing the map it was built from answers.
type wordSet struct {
	slots []string
	mask  uint32
}

func newWordSet(m map[string]bool) *wordSet {
	n := 8
	for n < 2*len(m) {
		n *= 2
	}
	s := &wordSet{slots: make([]string, n), mask: uint32(n - 1)}
	for w, ok := range m {
		if !ok {
			continue
		}
		if w == "" {
			panic("extractive: empty word in a word set")
		}
		for i := wordHash(w) & s.mask; ; i = (i + 1) & s.mask {
			if s.slots[i] == "" {
				s.slots[i] = w
				break
			}
		}
	}
	return s
}

const (
	fnvOffset = 2166136261
	fnvPrime  = 16777619
)

func wordHash[T string | []byte](w T) uint32 {
	h := uint32(fnvOffset)
	for i := 0; i < len(w); i++ {
		h = (h ^ uint32(w[i])) * fnvPrime
	}
	return h
}

// has reports whether w is in the set, as m[w] would.
func (s *wordSet) has(w string) bool {
	return s.index(w) >= 0
}

// index returns the slot of w, or -1.
func (s *wordSet) index(w string) int {
	if w == "" {
		return -1
	}
	for i := wordHash(w) & s.mask; ; i = (i + 1) & s.mask {
		e := s.slots[i]
		if e == "" {
			return -1
		}
		if e == w {
			return int(i)
		}
	}
}

// hasBytes is has for a byte slice.
func (s *wordSet) hasBytes(w []byte) bool {
	return s.indexBytes(w) >= 0
}

// indexBytes returns the slot of w, or -1.
func (s *wordSet) indexBytes(w []byte) int {
	if len(w) == 0 {
		return -1
	}
	for i := wordHash(w) & s.mask; ; i = (i + 1) & s.mask {
		e := s.slots[i]
		if e == "" {
			return -1
		}
		if e == string(w) {
			return int(i)
		}
	}
}

// hasFold reports whether s, lower-cased (see foldKey), is in the set:
// what looking up foldKey(s) in the map the set was built from reports
// (nothing for words longer than 24 bytes).
func (s *wordSet) hasFold(w string) bool {
	return s.indexFold(w) >= 0
}

// indexFold returns the slot of w, lower-cased, or -1 (as hasFold).
func (s *wordSet) indexFold(w string) int {
	if len(w) > 24 || w == "" {
		return -1
	}
	h := uint32(fnvOffset)
	for i := 0; i < len(w); i++ {
		c := w[i]
		if c >= utf8.RuneSelf {
			var a [32]byte
			return s.indexBytes(foldKey(a[:0], w))
		}
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		h = (h ^ uint32(c)) * fnvPrime
	}
	for i := h & s.mask; ; i = (i + 1) & s.mask {
		e := s.slots[i]
		if e == "" {
			return -1
		}
		if len(e) == len(w) && equalLowerASCII(e, w) {
			return int(i)
		}
	}
}

// equalLowerASCII reports whether the ASCII string w, lower-cased, is e.
func equalLowerASCII(e, w string) bool {
	for i := 0; i < len(w); i++ {
		c := w[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if e[i] != c {
			return false
		}
	}
	return true
}

// Sets for lookups on every word scanned; built from the maps above and in
// scan.go and text.go, which remain the lists of record. scan asks
// wordFlags.
var (
	stopSet      = newWordSet(stopWords)
	factVerbSet  = newWordSet(factVerbs)
	trivialSet   = newWordSet(trivialSentences)
	themeStopSet = newWordSet(themeStop)
	titleSet     = newWordSet(titles)
	fillerSet    = newWordSet(fillers)
)

// Word flags: which of the word lists a word is in, for scan, which asks
// several of them about most capitalized words.
const (
	fStop uint16 = 1 << iota
	fMonth
	fWeekday
	fWeekdayAbbrev
	fFiller
	fStarter
	fConnector
	fTitle
	fUnit
	fFactVerb
	fSubject2
	fSubject1

	flagsUnknown uint16 = 1 << 15
)

// flagSet maps words to their flags, like wordSet.
type flagSet struct {
	wordSet
	flags []uint16
}

var wordFlagSet = func() *flagSet {
	all := map[string]uint16{}
	for _, x := range []struct {
		m    map[string]bool
		flag uint16
	}{
		{stopWords, fStop}, {months, fMonth}, {weekdays, fWeekday}, {weekdayAbbrevs, fWeekdayAbbrev},
		{fillers, fFiller}, {sentenceStarters, fStarter}, {nameConnectors, fConnector}, {titles, fTitle},
		{unitWords, fUnit}, {factVerbs, fFactVerb}, {subjects2, fSubject2}, {subjects1, fSubject1},
	} {
		for w, ok := range x.m {
			if ok {
				all[w] |= x.flag
			}
		}
	}
	set := map[string]bool{}
	for w := range all {
		set[w] = true
	}
	f := &flagSet{wordSet: *newWordSet(set)}
	f.flags = make([]uint16, len(f.slots))
	for i, w := range f.slots {
		f.flags[i] = all[w]
	}
	return f
}()

// plainWordFlags is wordFlags for lower-case ASCII, which needs no folding.
func plainWordFlags(s string) uint16 {
	if len(s) > 24 {
		return 0
	}
	if i := wordFlagSet.index(s); i >= 0 {
		return wordFlagSet.flags[i]
	}
	return 0
}

// wordFlags returns the flags of s, lower-cased as hasFold has it: the
// lists that inSet would find s in.
func wordFlags(s string) uint16 {
	if i := wordFlagSet.indexFold(s); i >= 0 {
		return wordFlagSet.flags[i]
	}
	return 0
}
