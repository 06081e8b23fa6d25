package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"pgregory.net/rapid"
)

// This file holds a property-based test of the HTTP API against its own
// OpenAPI document: requests are generated from /openapi.json, valid and
// mutated (missing, null, mistyped, unknown and recased keys, lone
// surrogates, bytes that are not UTF-8, numbers that are not finite,
// other tokens, other content types), and sent to a real server over a
// real SQLite store. Every answer must be below 500, have a status the
// document declares for the operation, and a body that matches the
// document's schema for that status and content type. The number of
// checks is rapid's flag: go test -run TestContract -rapid.checks=2000.

// oaDoc is the part of an OpenAPI document the test reads.
type oaDoc struct {
	Paths      map[string]map[string]*oaOp `json:"paths"`
	Components struct {
		Schemas map[string]map[string]any `json:"schemas"`
	} `json:"components"`
}

type oaOp struct {
	OperationID string `json:"operationId"`
	Parameters  []struct {
		Name     string         `json:"name"`
		In       string         `json:"in"`
		Required bool           `json:"required"`
		Schema   map[string]any `json:"schema"`
	} `json:"parameters"`
	RequestBody *struct {
		Required bool                            `json:"required"`
		Content  map[string]struct{ Schema any } `json:"content"`
	} `json:"requestBody"`
	Responses map[string]struct {
		Content map[string]struct {
			Schema map[string]any `json:"schema"`
		} `json:"content"`
	} `json:"responses"`
}

// resolve follows a schema's $ref.
func (d *oaDoc) resolve(s map[string]any) map[string]any {
	for s != nil {
		ref, ok := s["$ref"].(string)
		if !ok {
			return s
		}
		s = d.Components.Schemas[strings.TrimPrefix(ref, "#/components/schemas/")]
	}
	return s
}

// jsonType is the JSON Schema type of a decoded JSON value.
func jsonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		if x == math.Trunc(x) {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// check returns an error naming where v does not match schema s.
func (d *oaDoc) check(s map[string]any, v any, at string) error {
	s = d.resolve(s)
	if s == nil {
		return nil
	}
	if alts, ok := s["oneOf"].([]any); ok {
		n := 0
		for _, a := range alts {
			if d.check(a.(map[string]any), v, at) == nil {
				n++
			}
		}
		if n != 1 {
			return fmt.Errorf("%s: matches %d of the %d schemas of oneOf", at, n, len(alts))
		}
	}
	if typ, ok := s["type"].(string); ok {
		got := jsonType(v)
		if got != typ && !(typ == "number" && got == "integer") {
			return fmt.Errorf("%s: %s, want %s", at, got, typ)
		}
	}
	if enum, ok := s["enum"].([]any); ok {
		found := false
		for _, e := range enum {
			if e == v {
				found = true
			}
		}
		if !found {
			return fmt.Errorf("%s: %v is none of %v", at, v, enum)
		}
	}
	switch x := v.(type) {
	case string:
		if n, ok := s["maxLength"].(float64); ok && float64(utf8.RuneCountInString(x)) > n {
			return fmt.Errorf("%s: longer than %v", at, n)
		}
		if n, ok := s["minLength"].(float64); ok && float64(utf8.RuneCountInString(x)) < n {
			return fmt.Errorf("%s: shorter than %v", at, n)
		}
		if s["format"] == "date-time" {
			if _, err := time.Parse(time.RFC3339Nano, x); err != nil {
				return fmt.Errorf("%s: %v", at, err)
			}
		}
	case float64:
		if n, ok := s["minimum"].(float64); ok && x < n {
			return fmt.Errorf("%s: %v is below %v", at, x, n)
		}
		if n, ok := s["maximum"].(float64); ok && x > n {
			return fmt.Errorf("%s: %v is above %v", at, x, n)
		}
	case []any:
		if n, ok := s["minItems"].(float64); ok && float64(len(x)) < n {
			return fmt.Errorf("%s: fewer than %v items", at, n)
		}
		if items, ok := s["items"].(map[string]any); ok {
			for i, e := range x {
				if err := d.check(items, e, fmt.Sprintf("%s[%d]", at, i)); err != nil {
					return err
				}
			}
		}
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		if req, ok := s["required"].([]any); ok {
			for _, k := range req {
				if _, ok := x[k.(string)]; !ok {
					return fmt.Errorf("%s: no %s", at, k)
				}
			}
		}
		for k, e := range x {
			if p, ok := props[k].(map[string]any); ok {
				if err := d.check(p, e, at+"."+k); err != nil {
					return err
				}
				continue
			}
			switch addl := s["additionalProperties"].(type) {
			case bool:
				if !addl {
					return fmt.Errorf("%s: unexpected %s", at, k)
				}
			case map[string]any:
				if err := d.check(addl, e, at+"."+k); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// gen draws a value for schema s: one that matches it, mostly.
func (d *oaDoc) gen(t *rapid.T, s map[string]any, label string, depth int) any {
	s = d.resolve(s)
	if alts, ok := s["oneOf"].([]any); ok {
		return d.gen(t, rapid.SampledFrom(alts).Draw(t, label+".oneOf").(map[string]any), label, depth)
	}
	if enum, ok := s["enum"].([]any); ok {
		return rapid.SampledFrom(enum).Draw(t, label)
	}
	num := func(k string, def float64) float64 {
		if n, ok := s[k].(float64); ok {
			return n
		}
		return def
	}
	switch s["type"] {
	case "string":
		if s["format"] == "date-time" {
			sec := rapid.Int64Range(946684800, 4102444800).Draw(t, label)
			return time.Unix(sec, 0).UTC().Format(time.RFC3339)
		}
		return rapid.SampledFrom([]string{"hello", "the garden and the tomatoes", "c", "", "día 😀",
			strings.Repeat("x", int(num("maxLength", 300))), "chunks", "calendar", "UTC", "Europe/Paris"}).Draw(t, label)
	case "integer":
		return rapid.IntRange(int(num("minimum", -3)), int(min(num("maximum", 2000), 2000))).Draw(t, label)
	case "number":
		return rapid.Float64Range(num("minimum", -10), num("maximum", 10)).Draw(t, label)
	case "boolean":
		return rapid.Bool().Draw(t, label)
	case "array":
		if depth > 3 {
			return []any{}
		}
		n := rapid.IntRange(int(num("minItems", 0)), int(num("minItems", 0))+3).Draw(t, label+".len")
		out := []any{}
		items, _ := s["items"].(map[string]any)
		for i := 0; i < n; i++ {
			out = append(out, d.gen(t, items, fmt.Sprintf("%s[%d]", label, i), depth+1))
		}
		return out
	case "object":
		out := map[string]any{}
		if depth > 3 {
			return out
		}
		props, _ := s["properties"].(map[string]any)
		req := map[string]bool{}
		if r, ok := s["required"].([]any); ok {
			for _, k := range r {
				req[k.(string)] = true
			}
		}
		keys := make([]string, 0, len(props))
		for k := range props {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if k == "$schema" || (!req[k] && !likely[k] && !rapid.Bool().Draw(t, label+"."+k+"?")) {
				continue
			}
			if k == "messages" {
				out[k] = rapid.SampledFrom(messageLists).Draw(t, label+"."+k)
				continue
			}
			out[k] = d.gen(t, props[k].(map[string]any), label+"."+k, depth+1)
		}
		if _, ok := s["additionalProperties"].(map[string]any); ok && rapid.Bool().Draw(t, label+".extra") {
			out["note"] = "free"
		}
		return out
	}
	return rapid.SampledFrom([]any{"x", 1.0, true, nil, map[string]any{}}).Draw(t, label)
}

// likely are the optional properties a body mostly has: without them most
// requests would be refused for the same reason.
var likely = map[string]bool{"content": true, "budget": true}

// messageLists are message lists of the compaction routes' two shapes.
var messageLists = []any{
	[]any{map[string]any{"role": "user", "content": "hello"}, map[string]any{"role": "assistant", "content": "hi there"}},
	map[string]any{"system": "be brief", "messages": []any{map[string]any{"role": "user", "content": "hello"}}},
	[]any{},
	[]any{map[string]any{"role": "user"}},
}

// plainAppend is an append-turns body of 1 to 4 turns the server should
// take: user and assistant turns with text, times after the setup's, and
// ext_ids that may repeat earlier ones (a repeat is skipped, not refused).
func plainAppend(t *rapid.T) map[string]any {
	n := rapid.IntRange(1, 4).Draw(t, "plain turns")
	at := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(rapid.IntRange(0, 1e6).Draw(t, "plain minute")) * time.Minute)
	out := []any{}
	for i := 0; i < n; i++ {
		turn := map[string]any{
			"role":    rapid.SampledFrom([]string{"user", "assistant"}).Draw(t, "plain role"),
			"content": rapid.SampledFrom([]string{"hello", "the garden and the tomatoes", "día 😀", "东京的天气", strings.Repeat("word ", 200)}).Draw(t, "plain content"),
			"time":    at.Add(time.Duration(i) * time.Minute).Format(time.RFC3339),
		}
		if rapid.Bool().Draw(t, "plain ext_id?") {
			turn["ext_id"] = fmt.Sprintf("p%d", rapid.IntRange(0, 50).Draw(t, "plain ext_id"))
		}
		out = append(out, turn)
	}
	return map[string]any{"turns": out}
}

// mutate changes a body so that it no longer matches its schema, or
// carries text a decoder would change.
func mutate(t *rapid.T, v any) []byte {
	obj, _ := v.(map[string]any)
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b, _ := json.Marshal(v)
	switch rapid.IntRange(0, 9).Draw(t, "mutation") {
	case 0: // a key left out
		if len(keys) > 0 {
			delete(obj, rapid.SampledFrom(keys).Draw(t, "drop"))
		}
	case 1: // a value null
		if len(keys) > 0 {
			obj[rapid.SampledFrom(keys).Draw(t, "null")] = nil
		}
	case 2: // a value of another type
		if len(keys) > 0 {
			obj[rapid.SampledFrom(keys).Draw(t, "retype")] = rapid.SampledFrom([]any{"s", 12.5, -1.0, true, []any{}, map[string]any{}}).Draw(t, "as")
		}
	case 3: // a key of another case
		if len(keys) > 0 {
			k := rapid.SampledFrom(keys).Draw(t, "recase")
			obj[strings.ToUpper(k)] = obj[k]
		}
	case 4: // an unknown key
		if obj != nil {
			obj["mood"] = "ok"
		}
	case 5: // a lone surrogate inside a string
		if i := bytes.IndexByte(b[1:], '"'); i >= 0 {
			return append(append(append([]byte{}, b[:i+2]...), []byte(`\ud800`)...), b[i+2:]...)
		}
	case 6: // a byte that is not UTF-8
		if i := bytes.IndexByte(b[1:], '"'); i >= 0 {
			return append(append(append([]byte{}, b[:i+2]...), 0xff), b[i+2:]...)
		}
	case 7: // not JSON at all
		return []byte(rapid.SampledFrom([]string{`{"turns": [`, `null`, `[]`, `"x"`, `{}`, `{"budget": 1e999}`, ``}).Draw(t, "garbage"))
	case 8: // a huge number
		if len(keys) > 0 {
			k := rapid.SampledFrom(keys).Draw(t, "huge")
			out, _ := json.Marshal(obj)
			return bytes.Replace(out, []byte(`"`+k+`":`), []byte(`"`+k+`":1e400,"x`+k+`":`), 1)
		}
	}
	out, _ := json.Marshal(v)
	return out
}

var contractRequests atomic.Int64

func TestContract(t *testing.T) {
	ts, sec := newTokenServer(t, Options{MaxBody: 1 << 20}, "a", "b")
	a := sec["a"]
	if code, _, data := as(t, ts, a, "POST", "/v1/conversations/c/turns", map[string]any{"turns": turns(0, 40)}, nil); code != 200 {
		t.Fatalf("setup: %d %s", code, data)
	}
	var tree struct {
		Nodes []struct {
			ID string `json:"id"`
		} `json:"nodes"`
	}
	as(t, ts, a, "GET", "/v1/conversations/c/tree", nil, &tree)
	nodes := []string{"n-none"}
	for _, n := range tree.Nodes {
		nodes = append(nodes, n.ID)
	}
	var doc oaDoc
	if code, _, data := as(t, ts, a, "GET", "/openapi.json", nil, &doc); code != 200 {
		t.Fatalf("openapi.json: %d %s", code, data)
	}
	type opRef struct {
		path, method string
		op           *oaOp
	}
	var ops []opRef
	for path, m := range doc.Paths {
		for method, op := range m {
			ops = append(ops, opRef{path, strings.ToUpper(method), op})
		}
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].path+ops[i].method < ops[j].path+ops[j].method })
	start := contractRequests.Load()
	var statusMu sync.Mutex
	statuses := map[int]int{}
	byOp := map[string]int{}
	rapid.Check(t, func(rt *rapid.T) {
		o := rapid.SampledFrom(ops).Draw(rt, "operation")
		path := o.path
		q := url.Values{}
		for _, p := range o.op.Parameters {
			var v string
			switch {
			case p.In == "path" && p.Name == "id" && o.op.OperationID == "delete-conversation":
				// Conversation c stays, for the other operations to find.
				v = rapid.SampledFrom([]string{"new", "gone", "..", strings.Repeat("z", 300)}).Draw(rt, "conversation")
			case p.In == "path" && p.Name == "id" && strings.HasPrefix(o.path, "/v1/conversations/"):
				v = rapid.SampledFrom([]string{"c", "c", "c", "new", "a b", "..", "ü", strings.Repeat("z", 300)}).Draw(rt, "conversation")
			case p.In == "path" && p.Name == "id" && strings.HasPrefix(o.path, "/v1/nodes/"):
				v = rapid.SampledFrom(nodes).Draw(rt, "node")
			case p.In == "query" && p.Name == "when":
				v = rapid.SampledFrom([]string{"2023-05-08", "2023-W19", "2023-05", "yesterday", "in May", "9999-12-31", "0000-01-01", "soon", ""}).Draw(rt, "when")
			case p.In == "query" && !p.Required && rapid.Bool().Draw(rt, p.Name+"?"):
				continue
			default:
				v = fmt.Sprint(doc.gen(rt, p.Schema, p.Name, 0))
				// rapid draws small numbers most often: the mutation is
				// the largest.
				if rapid.IntRange(0, 9).Draw(rt, p.Name+" mutated") == 9 {
					v = rapid.SampledFrom([]string{"", "NaN", "Infinity", "-1", "1e999", "abc", "%00", "0", "99999999999999999999"}).Draw(rt, p.Name+" as")
				}
			}
			if p.In == "path" {
				path = strings.Replace(path, "{"+p.Name+"}", url.PathEscape(v), 1)
			} else {
				q.Set(p.Name, v)
			}
		}
		var body []byte
		ctype := "application/json"
		if o.op.RequestBody != nil {
			v := doc.gen(rt, o.op.RequestBody.Content["application/json"].Schema.(map[string]any), "body", 0)
			if o.op.OperationID == "append-turns" && rapid.Bool().Draw(rt, "a plain append") {
				// Generated turns are mostly refused (a tool call
				// without its id, a tool turn without its result...):
				// half the appends are plain ones, so that the success
				// path is exercised as often as the refusals.
				v = plainAppend(rt)
			}
			if rapid.IntRange(0, 2).Draw(rt, "mutate") == 2 {
				body = mutate(rt, v)
			} else {
				body, _ = json.Marshal(v)
			}
			if rapid.IntRange(0, 19).Draw(rt, "content type") == 19 {
				ctype = "text/plain"
			}
		}
		target := ts.URL + path
		if len(q) > 0 {
			target += "?" + q.Encode()
		}
		req, err := http.NewRequest(o.method, target, bytes.NewReader(body))
		if err != nil {
			rt.Fatal(err)
		}
		if body != nil {
			req.Header.Set("Content-Type", ctype)
		}
		switch rapid.IntRange(0, 19).Draw(rt, "token") {
		case 19:
		case 18:
			req.Header.Set("Authorization", "Bearer strata_nope")
		case 17:
			req.Header.Set("Authorization", "Bearer "+sec["b"])
		default:
			req.Header.Set("Authorization", "Bearer "+a)
		}
		resp, err := ts.Client().Do(req)
		if err != nil {
			rt.Fatalf("%s %s: %v", o.method, target, err)
		}
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		contractRequests.Add(1)
		statusMu.Lock()
		statuses[resp.StatusCode]++
		byOp[o.op.OperationID+" "+strconv.Itoa(resp.StatusCode)]++
		statusMu.Unlock()
		if err != nil {
			rt.Fatal(err)
		}
		what := fmt.Sprintf("%s %s %.300q -> %d %.500s", o.method, target, body, resp.StatusCode, data)
		if resp.StatusCode >= 500 {
			rt.Fatalf("a 5xx: %s", what)
		}
		declared, ok := o.op.Responses[strconv.Itoa(resp.StatusCode)]
		if !ok {
			rt.Fatalf("status not in the document: %s", what)
		}
		mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
		content, ok := declared.Content[mt]
		if !ok {
			rt.Fatalf("content type %q not in the document: %s", mt, what)
		}
		if resp.Header.Get("X-Request-Id") == "" {
			rt.Fatalf("no X-Request-Id: %s", what)
		}
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			rt.Fatalf("the body is not JSON (%v): %s", err, what)
		}
		if err := doc.check(content.Schema, v, "body"); err != nil {
			rt.Fatalf("the body does not match the document: %v: %s", err, what)
		}
	})
	t.Logf("%d requests, none a 5xx, each answered as the document says; by status: %v", contractRequests.Load()-start, statuses)
	if testing.Verbose() {
		t.Logf("by operation and status: %v", byOp)
	}
}
