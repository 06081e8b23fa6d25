package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestQueryCoverageShareSetting reads the query coverage share from
// strata.yaml and STRATA_QUERY_COVERAGE_SHARE, the variable first.
func TestQueryCoverageShareSetting(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "strata.yaml")
	tests := []struct {
		name, yaml, env string
		want            float64
		err             string
	}{
		{name: "unset", want: 0},
		{name: "file", yaml: "assembly:\n  query_coverage_share: 0.25\n", want: 0.25},
		{name: "variable over file", yaml: "assembly:\n  query_coverage_share: 0.25\n", env: "0.05", want: 0.05},
		{name: "variable 0 is none", env: "0", want: -1},
		{name: "variable negative is none", env: "-1", want: -1},
		{name: "variable not a number", env: "a tenth", err: `STRATA_QUERY_COVERAGE_SHARE "a tenth"`},
		{name: "variable over 1", env: "1.5", err: `STRATA_QUERY_COVERAGE_SHARE "1.5"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.WriteFile(cfg, []byte(tt.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			env := map[string]string{"STRATA_QUERY_COVERAGE_SHARE": tt.env}
			m := &Main{Getenv: func(k string) string { return env[k] }}
			s, err := m.resolve(&globals{config: cfg, db: filepath.Join(dir, "s.db")})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want one naming %s", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Assembly.QueryCoverageShare; got != tt.want {
				t.Errorf("query coverage share %v, want %v", got, tt.want)
			}
		})
	}
}

// TestQueryCoverageShareOutOfRange checks that a share over 1 in the file
// is refused with the setting's name.
func TestQueryCoverageShareOutOfRange(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "strata.yaml")
	if err := os.WriteFile(cfg, []byte("assembly:\n  query_coverage_share: 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "s.db")
	mustRun(t, db, "add", "--conversation", "c", "--role", "user", "hello") // a store to list
	_, errs, err := runCfg(t, db, cfg, "", "list")
	if err == nil || !strings.Contains(err.Error()+errs, "query coverage share 2") {
		t.Fatalf("err %v (%s), want one naming the query coverage share", err, errs)
	}
}
