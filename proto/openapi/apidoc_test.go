package openapi

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/yardstick-dev/yardstick/proto/yardstick"
)

// TestAPIDocCoversDocument keeps docs/api.md true to the served contract: every route of each
// service's OpenAPI document has its section in docs/api.md ("### POST /path"), and every request
// field of that route (body properties at any depth, form and query parameters) is named there in
// backquotes. It reads Swagger 2.0 (definitions, body/formData parameters) and OpenAPI 3
// (components.schemas, requestBody) alike.
func TestAPIDocCoversDocument(t *testing.T) {
	t.Parallel()
	md, err := os.ReadFile("../../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, service := range []string{"scoring", "forecast"} {
		t.Run(service, func(t *testing.T) {
			t.Parallel()
			doc, err := Document(service, "test")
			if err != nil {
				t.Fatal(err)
			}
			missing, routes, err := undocumented(doc, string(md))
			if err != nil {
				t.Fatal(err)
			}
			if routes < 5 {
				t.Errorf("got %d routes in the %s document; want at least 5 (is it read right?)", routes, service)
			}
			for _, m := range missing {
				t.Errorf("docs/api.md: %s", m)
			}
		})
	}
}

// TestUndocumented shows the check on small documents of both OpenAPI versions: what it must
// find missing, and what it must accept.
func TestUndocumented(t *testing.T) {
	t.Parallel()
	swagger2 := `{"swagger":"2.0","paths":{"/a":{"post":{"parameters":[{"in":"body","name":"body","schema":{"$ref":"#/definitions/Req"}}]}},
		"/token":{"post":{"parameters":[{"in":"formData","name":"grant_type"}]}}},
		"definitions":{"Req":{"properties":{"count":{"type":"integer"},"items":{"type":"array","items":{"$ref":"#/definitions/Item"}}}},
		"Item":{"properties":{"id":{"type":"string"},"self":{"$ref":"#/definitions/Item"}}}}}`
	openapi3 := `{"openapi":"3.0.3","paths":{"/a":{"post":{"requestBody":{"content":{"application/json":{"schema":{"$ref":"#/components/schemas/Req"}}}}}},
		"/token":{"post":{"requestBody":{"content":{"application/x-www-form-urlencoded":{"schema":{"properties":{"grant_type":{"type":"string"}}}}}}}},
		"/healthz":{"get":{"parameters":[{"in":"header","name":"X-Request-Id"}]}}},
		"components":{"schemas":{"Req":{"allOf":[{"properties":{"count":{"type":"integer"}}}],"properties":{"items":{"type":"array","items":{"oneOf":[{"$ref":"#/components/schemas/Item"},{"type":"array"}]}}}},
		"Item":{"properties":{"id":{"type":"string"},"self":{"$ref":"#/components/schemas/Item"}}}}}}`
	full := "### POST /a\n`items`, `items[].id`, `self` and `count`.\n### POST /token\n`grant_type`\n\n| `/healthz` | ok |\n"
	for _, tc := range []struct {
		name, doc, md string
		want          []string
	}{
		{"2.0 complete", swagger2, full, nil},
		{"3.0 complete", openapi3, full, nil},
		{"2.0 field missing", swagger2, strings.Replace(full, "`count`", "count", 1),
			[]string{`POST /a: request field "count" is not named`}},
		{"3.0 nested field missing", openapi3, strings.Replace(full, "`items[].id`", "ids", 1),
			[]string{`POST /a: request field "id" is not named`}},
		{"2.0 form field missing", swagger2, strings.Replace(full, "`grant_type`", "", 1),
			[]string{`POST /token: request field "grant_type" is not named`}},
		{"3.0 route missing", openapi3, strings.Replace(full, "### POST /token\n", "", 1),
			[]string{`POST /token: no "### POST /token" section`}},
		{"3.0 GET path missing", openapi3, strings.Replace(full, "`/healthz`", "", 1),
			[]string{"GET /healthz: the path is not named"}},
		{"field only in another section", swagger2, "### POST /a\n`items`, `items[].id`, `self`\n### POST /token\n`grant_type` `count`\n",
			[]string{`POST /a: request field "count" is not named`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, _, err := undocumented([]byte(tc.doc), tc.md)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %q; want %q", got, tc.want)
			}
		})
	}
}

// undocumented returns what docs/api.md (md) lacks of an OpenAPI document, sorted, and how many
// routes the document has.
func undocumented(raw []byte, md string) ([]string, int, error) {
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, 0, fmt.Errorf("parse OpenAPI document: %w", err)
	}
	sections := sectionsOf(md)
	paths, _ := doc["paths"].(map[string]any)
	var missing []string
	routes := 0
	for path, item := range paths {
		ops, _ := item.(map[string]any)
		for method, op := range ops {
			o, ok := op.(map[string]any)
			if !ok || method == "parameters" {
				continue
			}
			routes++
			route := strings.ToUpper(method) + " " + path
			fields := map[string]bool{}
			requestFields(doc, o, fields)
			section, ok := sections[route]
			switch {
			case !ok && (method == "post" || len(fields) > 0):
				missing = append(missing, fmt.Sprintf("%s: no %q section", route, "### "+route))
				continue
			case !ok:
				if !strings.Contains(md, "`"+path+"`") {
					missing = append(missing, route+": the path is not named")
				}
				continue
			}
			for f := range fields {
				if !regexp.MustCompile("`(?:[A-Za-z_]+(?:\\[\\])?\\.)*" + regexp.QuoteMeta(f) + "`").MatchString(section) {
					missing = append(missing, fmt.Sprintf("%s: request field %q is not named", route, f))
				}
			}
		}
	}
	sort.Strings(missing)
	return missing, routes, nil
}

// sectionsOf splits docs/api.md into its route sections, "### METHOD /path" up to the next heading
// of that level or above.
func sectionsOf(md string) map[string]string {
	out := map[string]string{}
	heading := regexp.MustCompile(`(?m)^#{1,3} .*$`)
	route := regexp.MustCompile(`^### ([A-Z]+ /\S*)\s*$`)
	locs := heading.FindAllStringIndex(md, -1)
	for i, loc := range locs {
		m := route.FindStringSubmatch(md[loc[0]:loc[1]])
		if m == nil {
			continue
		}
		end := len(md)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		out[m[1]] = md[loc[1]:end]
	}
	return out
}

// requestFields adds the names of an operation's request fields: Swagger 2.0 body schemas and
// formData/query parameters, OpenAPI 3 requestBody schemas of every media type and query
// parameters. Header parameters (Authorization, X-Request-Id) are not request fields.
func requestFields(doc, op map[string]any, into map[string]bool) {
	params, _ := op["parameters"].([]any)
	for _, p := range params {
		pm, _ := p.(map[string]any)
		switch pm["in"] {
		case "body":
			schemaFields(doc, pm["schema"], into, map[string]bool{})
		case "formData", "query":
			if name, _ := pm["name"].(string); name != "" {
				into[name] = true
			}
		}
	}
	body, _ := op["requestBody"].(map[string]any)
	if ref, ok := body["$ref"].(string); ok {
		body, _ = lookup(doc, ref).(map[string]any)
	}
	content, _ := body["content"].(map[string]any)
	for _, media := range content {
		mm, _ := media.(map[string]any)
		schemaFields(doc, mm["schema"], into, map[string]bool{})
	}
}

// schemaFields adds the property names of a schema at any depth, following $ref (once each),
// array items and allOf/oneOf/anyOf.
func schemaFields(doc map[string]any, schema any, into, seen map[string]bool) {
	s, _ := schema.(map[string]any)
	if s == nil {
		return
	}
	if ref, ok := s["$ref"].(string); ok {
		if seen[ref] {
			return
		}
		seen[ref] = true
		schemaFields(doc, lookup(doc, ref), into, seen)
		return
	}
	props, _ := s["properties"].(map[string]any)
	for name, p := range props {
		into[name] = true
		schemaFields(doc, p, into, seen)
	}
	schemaFields(doc, s["items"], into, seen)
	for _, k := range []string{"allOf", "oneOf", "anyOf"} {
		list, _ := s[k].([]any)
		for _, sub := range list {
			schemaFields(doc, sub, into, seen)
		}
	}
}

// lookup resolves a local JSON pointer ("#/definitions/X", "#/components/schemas/X").
func lookup(doc map[string]any, ref string) any {
	var cur any = doc
	for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		m, _ := cur.(map[string]any)
		cur = m[strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")]
	}
	return cur
}

// TestAPIDocGRPCTable: docs/api.md's gRPC table names the rpc of every route of the contract
// (http.yaml), so a new endpoint cannot be left out of it.
func TestAPIDocGRPCTable(t *testing.T) {
	t.Parallel()
	md, err := os.ReadFile("../../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	routes, err := yardstick.Routes()
	if err != nil {
		t.Fatal(err)
	}
	if len(routes) < 20 {
		t.Fatalf("got %d routes from the contract; want every one (at least 20)", len(routes))
	}
	for _, r := range routes {
		row := fmt.Sprintf("| `%s` | `%s` |", r.Path, strings.TrimPrefix(r.FullMethod, "/"))
		if !strings.Contains(string(md), row) {
			t.Errorf("docs/api.md, gRPC: no row %s", row)
		}
	}
}
