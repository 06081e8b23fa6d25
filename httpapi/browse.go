package httpapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/httpapi/wire"
)

// The routes a browser needs beyond the CLI's: a level's nodes a window
// at a time (the tree route ships every node), marking a period
// important, and writing a summary again.

type nodesIn struct {
	ID    string `path:"id" maxLength:"256"`
	Level int    `query:"level" required:"true" minimum:"1" doc:"The level (1 is the finest summary level)."`
	From  int64  `query:"from" minimum:"0" doc:"The first turn seq of the range (default 1)."`
	To    int64  `query:"to" minimum:"0" doc:"The last turn seq of the range (default: the last turn)."`
	Limit int    `query:"limit" minimum:"0" maximum:"2000" doc:"Nodes per page (default 200, at most 2,000)."`
}

type importantIn struct {
	ID        string `path:"id" maxLength:"256"`
	Period    string `query:"period" required:"true" minLength:"1" maxLength:"64" doc:"A day, ISO week or month: 2023-05-08, 2023-W19, 2023-05."`
	Important bool   `query:"important" default:"true" doc:"false clears the mark."`
}

type nodeIDIn struct {
	ID string `path:"id" maxLength:"256" doc:"The node id."`
}

func (s *Server) registerBrowse() {
	huma.Register(s.api, s.op(http.MethodGet, "/v1/conversations/{id}/nodes", "list-nodes",
		"A page of one level's nodes whose spans meet a range of turns"), s.listNodes)
	huma.Register(s.api, s.op(http.MethodPost, "/v1/conversations/{id}/important", "mark-important",
		"Mark a day, week or month important (its summaries keep more detail), or clear the mark"), s.markImportant)
	huma.Register(s.api, s.op(http.MethodPost, "/v1/nodes/{id}/resummarize", "resummarize",
		"Write a node's summary again, and those over it (a model level is left pending for the next pass)"), s.resummarize)
}

// listNodes returns a page of one level's nodes, with the level's name.
func (s *Server) listNodes(ctx context.Context, in *nodesIn) (*body[wire.NodePage], error) {
	m := s.memory(ctx)
	ns, next, err := m.NodesIn(ctx, in.ID, in.Level, in.From, in.To, in.Limit)
	if err != nil {
		return nil, s.httpError(ctx, err)
	}
	p, err := m.PolicyOf(ctx, in.ID)
	if err != nil {
		return nil, s.httpError(ctx, err)
	}
	return &body[wire.NodePage]{wire.NodePage{Conversation: in.ID, Level: in.Level, Name: p.LevelName(in.Level), Nodes: ns, Next: next}}, nil
}

// markImportant marks a period important, or clears the mark, and
// returns the conversation's marks.
func (s *Server) markImportant(ctx context.Context, in *importantIn) (*body[wire.ImportantMarks], error) {
	marks, err := s.memory(ctx).MarkImportant(ctx, in.ID, in.Period, in.Important)
	if err != nil {
		return nil, s.httpError(ctx, err)
	}
	if marks == nil {
		marks = []string{}
	}
	return &body[wire.ImportantMarks]{wire.ImportantMarks{Conversation: in.ID, Important: marks}}, nil
}

// resummarize writes a node's summary again, and those over it.
func (s *Server) resummarize(ctx context.Context, in *nodeIDIn) (*body[strata.Node], error) {
	n, err := s.memory(ctx).Resummarize(ctx, in.ID)
	if err != nil {
		return nil, s.httpError(ctx, err)
	}
	return &body[strata.Node]{n}, nil
}
