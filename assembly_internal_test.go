package strata

import "testing"

// TestQueryCoverageShareDefaults checks the query coverage share's
// default, its "none", and how a RelevanceShare set alone reads.
func TestQueryCoverageShareDefaults(t *testing.T) {
	tests := []struct {
		name string
		in   AssemblyOptions
		want float64
		bad  bool
	}{
		{name: "default", want: DefaultQueryCoverageShare},
		{name: "set", in: AssemblyOptions{QueryCoverageShare: 0.3}, want: 0.3},
		{name: "none", in: AssemblyOptions{QueryCoverageShare: -0.5}, want: -1},
		{name: "relevance share alone", in: AssemblyOptions{RelevanceShare: 0.75}, want: 0.25},
		{name: "relevance share 1 leaves none", in: AssemblyOptions{RelevanceShare: 1}, want: -1},
		{name: "both set: the coverage share wins", in: AssemblyOptions{RelevanceShare: 0.5, QueryCoverageShare: 0.2}, want: 0.2},
		{name: "over 1", in: AssemblyOptions{QueryCoverageShare: 1.5}, bad: true},
	}
	for _, tt := range tests {
		got, err := tt.in.withDefaults()
		if tt.bad {
			if ErrorCode(err) != EINVALID {
				t.Errorf("%s: err %v, want EINVALID", tt.name, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got.QueryCoverageShare != tt.want {
			t.Errorf("%s: query coverage share %v, want %v", tt.name, got.QueryCoverageShare, tt.want)
		}
	}
}
