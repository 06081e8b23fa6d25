package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/ctf"
	"github.com/strata-memory/strata/httpapi/wire"
)

type convPath struct {
	ID string `path:"id" maxLength:"256" doc:"The conversation id."`
}

type appendIn struct {
	ID   string `path:"id" maxLength:"256" doc:"The conversation id; the first append creates it."`
	Body wire.AppendRequest
}

type body[T any] struct{ Body T }

type contextIn struct {
	ID   string `path:"id" maxLength:"256"`
	Body wire.ContextRequest
}

type searchIn struct {
	Q            string `query:"q" required:"true" minLength:"1" doc:"The query."`
	Conversation string `query:"conversation" doc:"Search one conversation (default: every one)."`
	K            int    `query:"k" default:"10" minimum:"1" maximum:"1000" doc:"Number of hits."`
}

// SearchHit is the public JSON shape of one search hit, as the search
// route and 'strata search --json' print it.
type SearchHit = wire.SearchHit

// NewSearchHit flattens a hit into its public shape.
func NewSearchHit(h strata.Hit) SearchHit { return wire.NewSearchHit(h) }

type zoomIn struct {
	ID   string    `path:"id" maxLength:"256"`
	When string    `query:"when" required:"true" minLength:"1" doc:"A period label or time expression: 2023-05-08, 2023-W19, 2023-05, yesterday, last week, in March."`
	Now  time.Time `query:"now" doc:"What relative expressions count from (default: the conversation's newest turn)."`
}

type expandIn struct {
	ID           string `path:"id" doc:"The node id (see the tree)."`
	Conversation string `query:"conversation" doc:"If given, the node must belong to this conversation."`
}

type turnsIn struct {
	ID    string `path:"id" maxLength:"256"`
	From  int64  `query:"from" minimum:"0" doc:"The first seq (default 1)."`
	To    int64  `query:"to" minimum:"0" doc:"The last seq (default: the last turn)."`
	Limit int    `query:"limit" minimum:"0" maximum:"1000" doc:"Turns per page (default 100, at most 1,000)."`
}

type pinIn struct {
	ID         string  `path:"id" maxLength:"256"`
	Seq        int64   `path:"seq" minimum:"1" doc:"The turn's seq."`
	Importance float64 `query:"importance" default:"1" minimum:"0" maximum:"1" doc:"Importance to set; 0.8 and above pins, 0 unpins."`
}

type learningsIn struct {
	ID     string `path:"id" maxLength:"256"`
	Status string `query:"status" enum:"auto,confirmed,rejected,superseded,all" doc:"Which learnings (default: auto and confirmed)."`
}

type createIn struct {
	Body wire.CreateRequest
}

type deleteIn struct {
	ID     string `path:"id" maxLength:"256"`
	Reason string `query:"reason" maxLength:"1024" doc:"Why, kept in the audit record."`
}

type learningIDIn struct {
	ID int64 `path:"id" minimum:"1" doc:"The learning id."`
}

// register registers every /v1 operation but those of browse.go and
// compact.go, each with its named handler, in the order the routes list
// them.
func (s *Server) register() {
	s.registerConversations()
	s.registerReads()
	s.registerMarks()
}

// registerConversations registers the routes that write and list
// conversations and their turns.
func (s *Server) registerConversations() {
	huma.Register(s.api, s.op(http.MethodPost, "/v1/conversations/{id}/turns", "append-turns",
		"Append a batch of turns (idempotent by ext_id)"), s.appendTurns)
	huma.Register(s.api, s.op(http.MethodGet, "/v1/conversations/{id}/turns", "list-turns",
		"A page of a conversation's turns in seq order, whole whatever their tier"), s.listTurns)
	huma.Register(s.api, s.op(http.MethodPost, "/v1/conversations", "create-conversation",
		"Create a conversation with no turns yet, with its pyramid policy and time zone"), s.createConversation)
	huma.Register(s.api, s.op(http.MethodGet, "/v1/conversations", "list-conversations", "List conversations"),
		s.listConversations)
	huma.Register(s.api, s.op(http.MethodGet, "/v1/conversations/{id}", "get-conversation", "Get a conversation"),
		s.getConversation)
	huma.Register(s.api, s.op(http.MethodDelete, "/v1/conversations/{id}", "delete-conversation",
		"Forget a conversation: its turns, summaries, vectors, learnings and archive, keeping an audit record"),
		s.deleteConversation)
}

// registerReads registers the routes that read a conversation's memory:
// context, search, tree, zoom, expand and stats.
func (s *Server) registerReads() {
	huma.Register(s.api, s.op(http.MethodPost, "/v1/conversations/{id}/context", "context",
		"Assemble a context package within a token budget"), s.assembleContext)
	huma.Register(s.api, s.op(http.MethodGet, "/v1/search", "search", "Search turns and summaries"), s.search)
	huma.Register(s.api, s.op(http.MethodGet, "/v1/conversations/{id}/tree", "tree", "A conversation's summary pyramid"),
		s.tree)
	huma.Register(s.api, s.op(http.MethodGet, "/v1/conversations/{id}/zoom", "zoom",
		"The whole turns of a day, week, month or named period, whatever their tier"), s.zoom)
	huma.Register(s.api, s.op(http.MethodGet, "/v1/nodes/{id}/expand", "expand",
		"The exact turns under a summary node, whatever their tier"), s.expand)
	huma.Register(s.api, s.op(http.MethodGet, "/v1/stats", "stats", "Counts and bytes on disk"), s.stats)
}

// registerMarks registers the routes that pin turns and list, confirm and
// reject learnings.
func (s *Server) registerMarks() {
	huma.Register(s.api, s.op(http.MethodPost, "/v1/conversations/{id}/turns/{seq}/pin", "pin",
		"Pin a turn as a milestone (or set its importance)"), s.pin)
	huma.Register(s.api, s.op(http.MethodGet, "/v1/conversations/{id}/learnings", "list-learnings",
		"The key facts learned from a conversation"), s.listLearnings)
	huma.Register(s.api, s.op(http.MethodPost, "/v1/learnings/{id}/confirm", "confirm-learning",
		"Mark a learning "+strata.LearningConfirmed), s.confirmLearning)
	huma.Register(s.api, s.op(http.MethodPost, "/v1/learnings/{id}/reject", "reject-learning",
		"Mark a learning "+strata.LearningRejected), s.rejectLearning)
}

// appendTurns appends a batch of turns, counting them in the metrics
// whether or not the batch fails.
func (s *Server) appendTurns(ctx context.Context, in *appendIn) (*body[strata.IngestResult], error) {
	b := strata.Batch{Conversation: in.ID, Policy: in.Body.Policy, TimeZone: in.Body.TimeZone,
		Turns: make([]strata.Turn, len(in.Body.Turns))}
	for i, t := range in.Body.Turns {
		b.Turns[i] = t.Turn()
	}
	res, err := s.memory(ctx).Ingest(ctx, b)
	s.metrics.turns.WithLabelValues("added").Add(float64(res.Added))
	s.metrics.turns.WithLabelValues("skipped").Add(float64(res.Skipped))
	s.metrics.nodes.Add(float64(res.Nodes))
	if err != nil {
		return nil, s.httpError(ctx, err)
	}
	return &body[strata.IngestResult]{res}, nil
}

// listTurns returns a page of a conversation's turns.
func (s *Server) listTurns(ctx context.Context, in *turnsIn) (*body[wire.TurnPage], error) {
	ts, next, err := s.memory(ctx).Turns(ctx, in.ID, in.From, in.To, in.Limit)
	if err != nil {
		return nil, s.httpError(ctx, err)
	}
	if ts == nil {
		ts = []strata.Turn{}
	}
	return &body[wire.TurnPage]{wire.TurnPage{Conversation: in.ID, Turns: ts, Next: next}}, nil
}

// createConversation creates a conversation with no turns.
func (s *Server) createConversation(ctx context.Context, in *createIn) (*body[strata.Conversation], error) {
	c, err := s.memory(ctx).CreateConversation(ctx, in.Body.ID, in.Body.Policy, in.Body.TimeZone)
	if err != nil {
		return nil, s.httpError(ctx, err)
	}
	return &body[strata.Conversation]{c}, nil
}

// listConversations lists the namespace's conversations.
func (s *Server) listConversations(ctx context.Context, _ *struct{}) (*body[wire.ConversationList], error) {
	cs, err := s.memory(ctx).Conversations(ctx)
	if err != nil {
		return nil, s.httpError(ctx, err)
	}
	if cs == nil {
		cs = []strata.Conversation{}
	}
	return &body[wire.ConversationList]{wire.ConversationList{Conversations: cs}}, nil
}

// getConversation returns one conversation.
func (s *Server) getConversation(ctx context.Context, in *convPath) (*body[strata.Conversation], error) {
	c, err := s.memory(ctx).Conversation(ctx, in.ID)
	if err != nil {
		return nil, s.httpError(ctx, err)
	}
	return &body[strata.Conversation]{c}, nil
}

// deleteConversation forgets a conversation, keeping an audit record.
func (s *Server) deleteConversation(ctx context.Context, in *deleteIn) (*body[strata.Deletion], error) {
	d, err := s.memory(ctx).DeleteConversation(ctx, in.ID, in.Reason)
	if err != nil {
		return nil, s.httpError(ctx, err)
	}
	return &body[strata.Deletion]{d}, nil
}

// assembleContext assembles a context package, rendered as CTF if asked.
// Asked for known facts, it first reads the learnings no pass has read
// yet, as listing them does.
func (s *Server) assembleContext(ctx context.Context, in *contextIn) (*body[*strata.Package], error) {
	req := strata.ContextRequest{Conversation: in.ID, Query: in.Body.Query, Budget: in.Body.Budget,
		Format: in.Body.Format, Sections: in.Body.Sections, Now: in.Body.Now, Facts: in.Body.Facts}
	if req.Format == ctf.FormatCTF {
		req.Renderer = ctf.ContextRenderer{}
	}
	m := s.memory(ctx)
	if req.Facts {
		if _, err := m.Learn(ctx, in.ID); err != nil {
			return nil, s.httpError(ctx, err)
		}
	}
	pkg, err := m.Context(ctx, req)
	if err != nil {
		return nil, s.httpError(ctx, err)
	}
	return &body[*strata.Package]{pkg}, nil
}

// search searches one conversation, which must exist, or every one.
func (s *Server) search(ctx context.Context, in *searchIn) (*body[wire.SearchResult], error) {
	m := s.memory(ctx)
	if in.Conversation != "" {
		if _, err := m.Conversation(ctx, in.Conversation); err != nil {
			return nil, s.httpError(ctx, err)
		}
	}
	hits, err := m.Search(ctx, in.Conversation, in.Q, in.K)
	if err != nil {
		return nil, s.httpError(ctx, err)
	}
	out := wire.SearchResult{Hits: []wire.SearchHit{}}
	for _, h := range hits {
		out.Hits = append(out.Hits, NewSearchHit(h))
	}
	return &body[wire.SearchResult]{out}, nil
}

// tree returns a conversation's summary pyramid.
func (s *Server) tree(ctx context.Context, in *convPath) (*body[*strata.Tree], error) {
	t, err := s.memory(ctx).Tree(ctx, in.ID)
	if err != nil {
		return nil, s.httpError(ctx, err)
	}
	return &body[*strata.Tree]{t}, nil
}

// zoom returns the whole turns of the period in.When names.
func (s *Server) zoom(ctx context.Context, in *zoomIn) (*body[wire.ZoomResult], error) {
	m := s.memory(ctx)
	p, err := m.ZoomPeriod(ctx, in.ID, in.When, in.Now)
	if err != nil {
		return nil, s.httpError(ctx, err)
	}
	turns, err := m.Zoom(ctx, in.ID, p)
	if err != nil {
		return nil, s.httpError(ctx, err)
	}
	items := make([]strata.Item, len(turns))
	for i, t := range turns {
		items[i] = strata.TurnItem(t, strata.ReasonZoom)
	}
	return &body[wire.ZoomResult]{wire.ZoomResult{Conversation: in.ID, Period: p.Label(), Start: p.Start, End: p.End, Turns: len(turns), Items: items}}, nil
}

// expand returns the turns under a node; with in.Conversation, a node of
// another conversation is not found.
func (s *Server) expand(ctx context.Context, in *expandIn) (*body[wire.Expansion], error) {
	m := s.memory(ctx)
	if in.Conversation != "" {
		_, conv, err := m.Node(ctx, in.ID)
		if err != nil {
			return nil, s.httpError(ctx, err)
		}
		if conv != in.Conversation {
			return nil, s.httpError(ctx, strata.Errorf(strata.ENOTFOUND, "node %q not found in conversation %q", in.ID, in.Conversation))
		}
	}
	n, turns, err := m.Expand(ctx, in.ID)
	if err != nil {
		return nil, s.httpError(ctx, err)
	}
	return &body[wire.Expansion]{wire.Expansion{Node: n, Turns: turns}}, nil
}

// stats returns the namespace's counts.
func (s *Server) stats(ctx context.Context, _ *struct{}) (*body[wire.NamespaceStats], error) {
	m := s.memory(ctx)
	st, err := m.Stats(ctx)
	if err != nil {
		return nil, s.httpError(ctx, err)
	}
	if tokenOf(ctx) != "" {
		// A token sees its namespace's figures alone: where the
		// store is and how large it is as a whole are the
		// operator's, and other namespaces' data is part of them.
		st.Location, st.Bytes, st.FreeBytes = "", 0, 0
	}
	out := wire.NamespaceStats{Namespace: m.Namespace(), Tokenizer: m.Tokenizer().Name(), Stats: st}
	for _, l := range st.Levels {
		out.Nodes += l.Nodes
	}
	return &body[wire.NamespaceStats]{out}, nil
}

// pin sets a turn's importance.
func (s *Server) pin(ctx context.Context, in *pinIn) (*body[strata.Turn], error) {
	t, err := s.memory(ctx).Pin(ctx, in.ID, in.Seq, in.Importance)
	if err != nil {
		return nil, s.httpError(ctx, err)
	}
	return &body[strata.Turn]{t}, nil
}

// listLearnings lists a conversation's learnings, reading first the facts
// no pass has read yet, as the CLI does.
func (s *Server) listLearnings(ctx context.Context, in *learningsIn) (*body[wire.LearningList], error) {
	m := s.memory(ctx)
	if _, err := m.Conversation(ctx, in.ID); err != nil {
		return nil, s.httpError(ctx, err)
	}
	if _, err := m.Learn(ctx, in.ID); err != nil {
		return nil, s.httpError(ctx, err)
	}
	ls, err := m.Learnings(ctx, strata.LearningFilter{Conversation: in.ID, Statuses: learningStatuses(in.Status)})
	if err != nil {
		return nil, s.httpError(ctx, err)
	}
	if ls == nil {
		ls = []strata.Learning{}
	}
	return &body[wire.LearningList]{wire.LearningList{Learnings: ls}}, nil
}

// learningStatuses is the statuses the status query asks for: by default
// auto and confirmed, "all" every one (nil).
func learningStatuses(status string) []string {
	switch status {
	case "":
		return []string{strata.LearningAuto, strata.LearningConfirmed}
	case "all":
		return nil
	}
	return []string{status}
}

// confirmLearning marks a learning confirmed.
func (s *Server) confirmLearning(ctx context.Context, in *learningIDIn) (*body[strata.Learning], error) {
	return s.setLearningStatus(ctx, in.ID, strata.LearningConfirmed)
}

// rejectLearning marks a learning rejected.
func (s *Server) rejectLearning(ctx context.Context, in *learningIDIn) (*body[strata.Learning], error) {
	return s.setLearningStatus(ctx, in.ID, strata.LearningRejected)
}

// setLearningStatus sets a learning's status.
func (s *Server) setLearningStatus(ctx context.Context, id int64, status string) (*body[strata.Learning], error) {
	l, err := s.memory(ctx).SetLearningStatus(ctx, id, status)
	if err != nil {
		return nil, s.httpError(ctx, err)
	}
	return &body[strata.Learning]{l}, nil
}
