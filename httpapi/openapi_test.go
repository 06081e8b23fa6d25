package httpapi

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestOpenAPIContract checks what a client generated from /openapi.json
// relies on: bearer auth declared, every status the server's guards can
// answer listed on every operation, lists that are never null typed as
// arrays alone, the message lists given a shape, and the engine's closed
// sets of names given as enums.
func TestOpenAPIContract(t *testing.T) {
	ts := newServer(t, Options{})
	var doc map[string]any
	if code, data := call(t, ts, "GET", "/openapi.json", nil, &doc); code != 200 {
		t.Fatalf("openapi.json: %d %s", code, data)
	}
	get := func(v any, path ...string) any {
		for _, p := range path {
			m, _ := v.(map[string]any)
			v = m[p]
		}
		return v
	}
	if get(doc, "components", "securitySchemes", "bearer", "scheme") != "bearer" {
		t.Errorf("no bearer security scheme: %v", get(doc, "components", "securitySchemes"))
	}
	if sec, _ := doc["security"].([]any); len(sec) != 1 {
		t.Errorf("security: %v", doc["security"])
	}
	for path, ops := range doc["paths"].(map[string]any) {
		for method, op := range ops.(map[string]any) {
			for _, code := range []string{"400", "401", "413", "415", "429", "500", "503"} {
				if get(op, "responses", code) == nil {
					t.Errorf("%s %s documents no %s", method, path, code)
				}
			}
			if get(op, "responses", "200", "headers", "X-Request-Id") == nil && get(op, "responses", "204") == nil {
				t.Errorf("%s %s documents no X-Request-Id", method, path)
			}
		}
	}
	raw, _ := json.Marshal(doc)
	if strings.Contains(string(raw), `"null"`) {
		t.Errorf("the document still types something as null")
	}
	schemas := get(doc, "components", "schemas")
	for _, p := range [][2]string{{"CompactRequest", "messages"}, {"CompactResult", "messages"}} {
		if get(schemas, p[0], "properties", p[1], "oneOf") == nil {
			t.Errorf("%s.%s has no schema", p[0], p[1])
		}
	}
	for _, p := range [][2]string{{"Turn", "role"}, {"TurnIn", "role"}, {"Item", "role"}, {"Node", "tier"},
		{"ContextRequest", "format"}, {"Package", "format"}, {"Learning", "status"}} {
		if e, _ := get(schemas, p[0], "properties", p[1], "enum").([]any); len(e) == 0 {
			t.Errorf("%s.%s is no enum", p[0], p[1])
		}
	}
}
