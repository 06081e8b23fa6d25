package httpapi

import (
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/ctf"
)

// This file completes the OpenAPI document huma generates from the
// handlers' Go types with what those types cannot say: how a client
// authenticates, every status an operation can answer, the values of the
// engine's closed sets of names (roles, tiers...), and the shape of the
// message lists the compaction routes pass through. Clients generated
// from the document then type what the server sends exactly.

// opErrors are the error statuses every /v1 operation may answer, besides
// its own. The request id's header and the server's guards (guard.go,
// auth.go) answer them before or around the operation.
var opErrors = []int{
	http.StatusBadRequest,            // a body or parameter that fails the schema or the engine's checks
	http.StatusUnauthorized,          // no token, or an unknown or revoked one
	http.StatusNotFound,              // an unknown conversation, node, turn or learning
	http.StatusRequestTimeout,        // the body did not arrive within the timeout
	http.StatusConflict,              // a setting other than the conversation's
	http.StatusRequestEntityTooLarge, // a body over the bound
	http.StatusUnsupportedMediaType,  // a body that is not JSON
	http.StatusTooManyRequests,       // over the token's rate limit
	http.StatusInternalServerError,   // a fault of the server
	http.StatusServiceUnavailable,    // the request's deadline passed
}

// enums are the closed sets of names the engine answers with, by schema
// and property.
var enums = func() map[string]map[string][]any {
	roles := []any{string(strata.RoleUser), string(strata.RoleAssistant), string(strata.RoleSystem), string(strata.RoleTool)}
	tiers := []any{string(strata.TierHot), string(strata.TierWarm), string(strata.TierCold), string(strata.TierExpired)}
	kinds := []any{strata.KindTurn, strata.KindSummary, strata.KindLearning}
	reasons := []any{strata.ReasonPinned, strata.ReasonFresh, strata.ReasonCoverage, strata.ReasonRelevance, strata.ReasonZoom, strata.ReasonFact}
	learning := []any{strata.LearningAuto, strata.LearningConfirmed, strata.LearningRejected, strata.LearningSuperseded}
	return map[string]map[string][]any{
		"Turn":      {"role": roles},
		"Item":      {"role": roles, "kind": kinds, "reason": reasons},
		"Node":      {"tier": tiers},
		"TreeNode":  {"tier": tiers},
		"TierStats": {"tier": tiers},
		"Package":   {"format": {"text", "markdown", ctf.FormatCTF}},
		"Learning":  {"status": learning},
		"SearchHit": {"kind": {strata.KindTurn, strata.KindSummary}},
	}
}()

// messagesSchema is the shape of a compaction route's message list: an
// array of messages, or the request object that holds one.
func messagesSchema(doc string) *huma.Schema {
	s := &huma.Schema{Description: doc, OneOf: []*huma.Schema{
		{Type: huma.TypeArray, Items: &huma.Schema{Type: huma.TypeObject}, Description: "The messages."},
		{Type: huma.TypeObject, Description: "The request object holding the messages (and system, for Anthropic)."},
	}}
	s.PrecomputeMessages()
	return s
}

// refineDoc completes the document once every operation is registered.
func (s *Server) refineDoc() {
	doc := s.api.OpenAPI()
	doc.Servers = []*huma.Server{{URL: "/", Description: "The server that serves this document."}}
	if doc.Components.SecuritySchemes == nil {
		doc.Components.SecuritySchemes = map[string]*huma.SecurityScheme{}
	}
	doc.Components.SecuritySchemes["bearer"] = &huma.SecurityScheme{Type: "http", Scheme: "bearer",
		Description: "A token of 'strata token create': Authorization: Bearer strata_... . Each token reads and writes its own namespace alone."}
	doc.Security = []map[string][]string{{"bearer": {}}}
	schemas := doc.Components.Schemas.Map()
	for name, props := range enums {
		sc, ok := schemas[name]
		if !ok {
			continue
		}
		for prop, values := range props {
			if p, ok := sc.Properties[prop]; ok {
				p.Enum = values
				p.PrecomputeMessages()
			}
		}
	}
	if sc, ok := schemas["CompactRequest"]; ok {
		if p, ok := sc.Properties["messages"]; ok {
			sc.Properties["messages"] = messagesSchema(p.Description)
		}
	}
	if sc, ok := schemas["CompactResult"]; ok {
		if p, ok := sc.Properties["messages"]; ok {
			sc.Properties["messages"] = messagesSchema(p.Description)
		}
	}
	requestID := &huma.Header{Description: "The request's id: the caller's X-Request-Id if it sent a sane one, else the server's; also in the server's log record of the request.",
		Schema: &huma.Schema{Type: huma.TypeString}}
	for _, item := range doc.Paths {
		for _, op := range []*huma.Operation{item.Get, item.Post, item.Put, item.Patch, item.Delete} {
			if op == nil {
				continue
			}
			for _, r := range op.Responses {
				if r.Headers == nil {
					r.Headers = map[string]*huma.Param{}
				}
				r.Headers["X-Request-Id"] = requestID
			}
		}
	}
}
