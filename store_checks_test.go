package strata_test

import (
	"math"
	"strings"
	"testing"

	"github.com/strata-memory/strata"
)

// wantInvalid fails unless err is nil when says is "", or an EINVALID
// error whose message contains says.
func wantInvalid(t *testing.T, what string, err error, says string) {
	t.Helper()
	switch {
	case says == "" && err != nil:
		t.Errorf("%s = %v, want nil", what, err)
	case says != "" && (strata.ErrorCode(err) != strata.EINVALID || !strings.Contains(err.Error(), says)):
		t.Errorf("%s = %v (code %q), want EINVALID saying %q", what, err, strata.ErrorCode(err), says)
	}
}

func TestCheckEmbeddings(t *testing.T) {
	space := strata.EmbedSpace{Model: "m", Dim: 3}
	good := strata.Embedding{EmbedRef: strata.EmbedRef{Seq: 1}, Vector: []float32{1, 0, 0}}
	node := strata.Embedding{EmbedRef: strata.EmbedRef{Level: 2, Seq: 1, Node: "L2-0001"}, Vector: []float32{0, 1, 0}}
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	for _, tc := range []struct {
		name  string
		space strata.EmbedSpace
		e     strata.Embedding
		says  string
	}{
		{"a turn", space, good, ""},
		{"a node with its level", space, node, ""},
		{"a node by its id alone", space, strata.Embedding{EmbedRef: strata.EmbedRef{Node: "x"}, Vector: []float32{1, 1, 1}}, ""},
		{"empty model", strata.EmbedSpace{Dim: 3}, good, "space.model is empty"},
		{"zero dimension", strata.EmbedSpace{Model: "m"}, good, "space.dimensions 0 is not positive"},
		{"negative dimension", strata.EmbedSpace{Model: "m", Dim: -2}, good, "space.dimensions -2"},
		{"short vector", space, strata.Embedding{Vector: []float32{1, 2}}, "embeddings[1].vector has 2 dimensions, want 3"},
		{"long vector", space, strata.Embedding{Vector: []float32{1, 2, 3, 4}}, "embeddings[1].vector has 4 dimensions"},
		{"no vector", space, strata.Embedding{}, "embeddings[1].vector has 0 dimensions"},
		{"NaN", space, strata.Embedding{Vector: []float32{1, nan, 3}}, "embeddings[1].vector[1] is NaN"},
		{"infinity", space, strata.Embedding{Vector: []float32{1, 2, -inf}}, "embeddings[1].vector[2] is -Inf"},
		{"turn with a level", space, strata.Embedding{EmbedRef: strata.EmbedRef{Level: 1, Seq: 2}, Vector: []float32{1, 2, 3}},
			"embeddings[1].level 1"},
	} {
		wantInvalid(t, "CheckEmbeddings: "+tc.name, strata.CheckEmbeddings(tc.space, []strata.Embedding{good, tc.e}), tc.says)
	}
	wantInvalid(t, "CheckEmbeddings of nothing", strata.CheckEmbeddings(space, nil), "")
	wantInvalid(t, "CheckEmbeddings of nothing, without a model", strata.CheckEmbeddings(strata.EmbedSpace{Dim: 3}, nil), "space.model")
}

func TestCheckFilters(t *testing.T) {
	space := strata.EmbedSpace{Model: "m", Dim: 4}
	for _, tc := range []struct {
		name string
		f    strata.EmbedFilter
		says string
	}{
		{"space", strata.EmbedFilter{Space: space}, ""},
		{"any dimension", strata.EmbedFilter{Space: strata.EmbedSpace{Model: "m"}}, ""},
		{"turns", strata.EmbedFilter{Space: space, Kind: strata.KindTurn}, ""},
		{"summaries", strata.EmbedFilter{Space: space, Kind: strata.KindSummary}, ""},
		{"empty model", strata.EmbedFilter{Space: strata.EmbedSpace{Dim: 4}}, "unembedded: space.model is empty"},
		{"negative dimension", strata.EmbedFilter{Space: strata.EmbedSpace{Model: "m", Dim: -1}}, "space.dimensions -1 is negative"},
		{"unknown kind", strata.EmbedFilter{Space: space, Kind: "learning"}, `unknown kind "learning"`},
	} {
		wantInvalid(t, "CheckEmbedFilter: "+tc.name, strata.CheckEmbedFilter(tc.f), tc.says)
	}
	for _, tc := range []struct {
		name string
		f    strata.VectorFilter
		says string
	}{
		{"space", strata.VectorFilter{Space: space}, ""},
		{"any dimension, since a version", strata.VectorFilter{Space: strata.EmbedSpace{Model: "m"}, Since: 3}, ""},
		{"summaries", strata.VectorFilter{Space: space, Kind: strata.KindSummary}, ""},
		{"empty model", strata.VectorFilter{Space: strata.EmbedSpace{Dim: 4}}, "vectors: space.model is empty"},
		{"unknown kind", strata.VectorFilter{Space: space, Kind: "turns"}, `unknown kind "turns"`},
	} {
		wantInvalid(t, "CheckVectorFilter: "+tc.name, strata.CheckVectorFilter(tc.f), tc.says)
	}
	for kind, says := range map[string]string{"": "", strata.KindTurn: "", strata.KindSummary: "", "Turn": `search: unknown kind "Turn"`} {
		wantInvalid(t, "CheckKind("+kind+")", strata.CheckKind("search", kind), says)
	}
}

func TestCheckImportance(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		says string
	}{
		{0, ""}, {0.5, ""}, {strata.PinnedImportance, ""}, {1, ""},
		{-0.01, "importance -0.01 of turn 7 is outside 0..1"},
		{1.0001, "importance 1.0001 of turn 7"},
		{math.NaN(), "importance NaN of turn 7"},
		{math.Inf(1), "importance +Inf of turn 7"},
	} {
		wantInvalid(t, "CheckImportance", strata.CheckImportance(7, tc.v), tc.says)
	}
}
