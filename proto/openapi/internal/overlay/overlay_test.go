package overlay

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
)

// swagger is a minimal pair of generated files: the token endpoint and one service whose
// request has a field of type fieldType.
func swagger(fieldType string) fstest.MapFS {
	auth := `{"swagger":"2.0","info":{"title":"a","version":"x"},"consumes":["application/json"],"produces":["application/json"],
	  "paths":{"/authToken":{"post":{"operationId":"IssueToken","parameters":[{"name":"body","in":"body","required":true,"schema":{"$ref":"#/definitions/v1Tok"}}],
	    "responses":{"200":{"description":"ok","schema":{"$ref":"#/definitions/v1Tok"}}}}}},
	  "definitions":{"v1Tok":{"type":"object","properties":{"clientId":{"type":"string"}}}}}`
	svc := `{"swagger":"2.0","info":{"title":"s","version":"x"},"consumes":["application/json"],"produces":["application/json"],
	  "tags":[{"name":"SvcService","description":"SvcService answers INVALID_ARGUMENT on a bad elapsed_days."}],
	  "paths":{"/api/x":{"post":{"operationId":"X","parameters":[{"name":"body","in":"body","required":true,"schema":{"$ref":"#/definitions/v1Req"}}],
	    "responses":{"200":{"description":"ok","schema":{"$ref":"#/definitions/v1Req"}}}}}},
	  "definitions":{"v1Req":{"type":"object","properties":{
	    "prior":{"type":"` + fieldType + `"},"days":{"type":"integer","format":"int32"},
	    "rows":{"type":"array","items":{"$ref":"#/definitions/v1Row"}},"rowsTotal":{"type":"integer","format":"int32"},
	    "name":{"type":"string","description":"Used with rows_total; grant_type and not_a_field stay."},"grant_type":{"type":"string"}}},
	  "v1Row":{"type":"object","properties":{"a":{"type":"number","format":"double"},"b":{"type":"integer","format":"int32"}}}}}`
	return fstest.MapFS{
		"yardstick/auth/v1/auth.swagger.json": {Data: []byte(auth)},
		"yardstick/svc/v1/svc.swagger.json":   {Data: []byte(svc)},
	}
}

const base = `
services: {svc: {title: T, description: D}}
security: [{bearer: []}]
components:
  securitySchemes: {bearer: {type: http, scheme: bearer}}
  schemas: {Error: {type: object, properties: {message: {type: string}}}}
  responses: {Bad: {description: bad, content: {application/json: {schema: {$ref: '#/components/schemas/Error'}}}}}
errorResponses: {"400": Bad}
operations: {/authToken: {public: true}}
tags: {SvcService: A bad elapsedDays is a 400.}
`

func build(t *testing.T, fieldType, extra string) (map[string]any, error) {
	t.Helper()
	return buildRaw(t, fieldType, base+extra)
}

// buildRaw builds with the whole overlay given.
func buildRaw(t *testing.T, fieldType, overlay string) (map[string]any, error) {
	t.Helper()
	o, err := Parse([]byte(overlay))
	if err != nil {
		return nil, err
	}
	docs, err := Build(swagger(fieldType), o, []string{"svc"}, "v7")
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := json.Unmarshal(docs["svc"], &doc); err != nil {
		t.Fatal(err)
	}
	return doc, nil
}

// at walks a JSON document along keys.
func at(t *testing.T, v any, keys ...string) any {
	t.Helper()
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("at %v: not an object before %q", keys, k)
		}
		v = m[k]
	}
	return v
}

// TestTypesComeFromTheGenerator: the same overlay over an integer and a number field keeps the
// generated type and adds the range either way.
func TestTypesComeFromTheGenerator(t *testing.T) {
	t.Parallel()
	for _, typ := range []string{"integer", "number"} {
		t.Run(typ, func(t *testing.T) {
			t.Parallel()
			doc, err := build(t, typ, `
schemas:
  v1Req:
    required: [prior, days]
    properties:
      prior: {minimum: -10, maximum: 10, description: 'Unit: days.'}
`)
			if err != nil {
				t.Fatal(err)
			}
			prior := at(t, doc, "components", "schemas", "v1Req", "properties", "prior")
			want := map[string]any{"type": typ, "minimum": -10.0, "maximum": 10.0, "description": "Unit: days."}
			if !reflect.DeepEqual(prior, want) {
				t.Errorf("prior: got %v; want %v", prior, want)
			}
			if got := at(t, doc, "components", "schemas", "v1Req", "required"); !reflect.DeepEqual(got, []any{"prior", "days"}) {
				t.Errorf("required: got %v; want [prior days]", got)
			}
			if got := at(t, doc, "info", "version"); got != "v7" {
				t.Errorf("info.version: got %v; want v7", got)
			}
		})
	}
}

func TestSecurityAndErrors(t *testing.T) {
	t.Parallel()
	doc, err := build(t, "integer", "")
	if err != nil {
		t.Fatal(err)
	}
	if got := at(t, doc, "paths", "/api/x", "post", "security"); !reflect.DeepEqual(got, []any{map[string]any{"bearer": []any{}}}) {
		t.Errorf("protected security: got %v", got)
	}
	if got := at(t, doc, "paths", "/authToken", "post", "security"); !reflect.DeepEqual(got, []any{}) {
		t.Errorf("public security: got %v; want []", got)
	}
	for _, p := range []string{"/api/x", "/authToken"} {
		if got := at(t, doc, "paths", p, "post", "responses", "400", "$ref"); got != "#/components/responses/Bad" {
			t.Errorf("%s 400: got %v; want the Bad response", p, got)
		}
	}
}

// TestTuple: the array shape takes the generated types of the named properties; one type gives
// plain items, two give anyOf.
func TestTuple(t *testing.T) {
	t.Parallel()
	doc, err := build(t, "integer", `
schemas:
  v1Req:
    properties:
      rows:
        maxItems: 9
        items:
          oneOfAlso:
            - tupleOf: {schema: v1Row, properties: [a, b]}
            - tupleOf: {schema: v1Row, properties: [a, a]}
`)
	if err != nil {
		t.Fatal(err)
	}
	shapes := at(t, doc, "components", "schemas", "v1Req", "properties", "rows", "items", "oneOf").([]any)
	if len(shapes) != 3 || at(t, shapes[0], "$ref") != "#/components/schemas/v1Row" {
		t.Fatalf("shapes: got %v; want the row and two arrays", shapes)
	}
	mixed := at(t, shapes[1], "items")
	want := map[string]any{"anyOf": []any{map[string]any{"type": "number", "format": "double"}, map[string]any{"type": "integer", "format": "int32"}}}
	if !reflect.DeepEqual(mixed, want) {
		t.Errorf("mixed tuple items: got %v; want %v", mixed, want)
	}
	if got := at(t, shapes[2], "items"); !reflect.DeepEqual(got, map[string]any{"type": "number", "format": "double"}) {
		t.Errorf("uniform tuple items: got %v", got)
	}
	if at(t, shapes[2], "minItems") != 2.0 || at(t, shapes[2], "maxItems") != 2.0 {
		t.Errorf("tuple length: got %v..%v; want 2..2", at(t, shapes[2], "minItems"), at(t, shapes[2], "maxItems"))
	}
}

// TestFailsLoudly: an overlay naming what is gone, or stating a type, stops generation.
func TestFailsLoudly(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, overlay, want string }{
		{"unknown schema", "schemas: {v1Gone: {required: [x]}}", "schemas.v1Gone: no document has this schema"},
		{"unknown property", "schemas: {v1Req: {properties: {priorAbility: {minimum: 0}}}}", "schemas.v1Req.properties.priorAbility: the schema has no such property"},
		{"unknown required", "schemas: {v1Req: {required: [gone]}}", `"gone" is not a property`},
		{"unknown path", strings.Replace(base, "/authToken:", "/api/gone:", 1), "operations./api/gone: no document has this path"},
		{"a type", "schemas: {v1Req: {properties: {prior: {type: number}}}}", "field type not found"},
		{"a format", "schemas: {v1Req: {properties: {prior: {format: double}}}}", "field format not found"},
		{"a ref", "schemas: {v1Req: {properties: {rows: {$ref: x}}}}", "field $ref not found"},
		{"range on a ref", "schemas: {v1Req: {properties: {rows: {items: {minimum: 1}}}}}", "a $ref schema takes only oneOfAlso"},
		{"items on a scalar", "schemas: {v1Req: {properties: {name: {items: {minimum: 1}}}}}", "not an array"},
		{"tuple of a missing field", "schemas: {v1Req: {properties: {rows: {items: {oneOfAlso: [{tupleOf: {schema: v1Row, properties: [a, z]}}]}}}}}", `no property "z"`},
		{"component clash", strings.Replace(base, "Error: {", "v1Req: {", 1), "components.schemas.v1Req: the generator already defines it"},
		{"derived from nothing", "derivedSchemas: {Form: {from: v1Gone}}", `from "v1Gone": no such schema`},
		{"derived clash", "derivedSchemas: {Form: {from: v1Tok, addProperties: {clientId: {type: string}}}}", `"clientId" is already a property`},
		{"invalid result", strings.Replace(base, `"400": Bad`, `"400": Nope`, 1), "#/components/responses/Nope: no such component"},
		{"unused component", strings.Replace(base, "  securitySchemes:", "  headers: {Unused: {schema: {type: string}}}\n  securitySchemes:", 1), "components.headers.Unused: nothing in the document refers to it"},
		{"tag without HTTP text", strings.Replace(base, "tags: {SvcService:", "tags: {Other:", 1), "tags.SvcService: the overlay gives this tag no description"},
		{"tag of no document", strings.Replace(base, "tags: {SvcService:", "tags: {Gone: y, SvcService:", 1), "tags.Gone: no document has this tag"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			overlay := c.overlay
			if !strings.Contains(overlay, "services:") {
				overlay = base + overlay
			}
			_, err := buildRaw(t, "integer", overlay)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got error %v; want one containing %q", err, c.want)
			}
		})
	}
}

// TestInfoServersAndTags: each document's description is its service's own followed by what all
// share; contact, license and servers are set; a tag's text is the overlay's, not the .proto
// comment's.
func TestInfoServersAndTags(t *testing.T) {
	t.Parallel()
	doc, err := buildRaw(t, "integer", strings.Replace(base, "description: D}}", "description: Does svc things.}}", 1)+`
about: Shared by all.
contact: {name: C, url: 'https://example.org/c'}
license: {name: L, url: 'https://example.org/l'}
servers: [{url: /, description: here}]
`)
	if err != nil {
		t.Fatal(err)
	}
	if got := at(t, doc, "info", "description"); got != "Does svc things.\n\nShared by all." {
		t.Errorf("info.description: got %q", got)
	}
	if got := at(t, doc, "info", "contact"); !reflect.DeepEqual(got, map[string]any{"name": "C", "url": "https://example.org/c"}) {
		t.Errorf("info.contact: got %v", got)
	}
	if got := at(t, doc, "info", "license", "name"); got != "L" {
		t.Errorf("info.license.name: got %v", got)
	}
	if got := at(t, doc, "servers"); !reflect.DeepEqual(got, []any{map[string]any{"url": "/", "description": "here"}}) {
		t.Errorf("servers: got %v", got)
	}
	tags, _ := at(t, doc, "tags").([]any)
	if len(tags) != 1 || at(t, tags[0], "description") != "A bad elapsedDays is a 400." {
		t.Errorf("tags: got %v; want SvcService with the overlay's text", tags)
	}
}

// TestJSONNames: a proto field name in a description becomes the JSON name the document uses;
// a word that is a property itself, or no property's other spelling, stays.
func TestJSONNames(t *testing.T) {
	t.Parallel()
	doc, err := build(t, "integer", "")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := at(t, doc, "components", "schemas", "v1Req", "properties", "name", "description"), "Used with rowsTotal; grant_type and not_a_field stay."; got != want {
		t.Errorf("description: got %q; want %q", got, want)
	}
}

func TestMissingServiceInfo(t *testing.T) {
	t.Parallel()
	o, err := Parse([]byte("services: {other: {title: T}}"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Build(swagger("integer"), o, []string{"svc"}, "v1"); err == nil || !strings.Contains(err.Error(), "services.svc") {
		t.Errorf("got %v; want an error naming services.svc", err)
	}
}

// streamsBase is an overlay with an OAuth2 scheme, a stream and the permissions' scopes.
const streamsBase = `
services: {svc: {title: T, description: D, servers: [{url: 'http://127.0.0.1:1', description: local}]}}
servers: [{url: /, description: here}]
security: [{bearer: []}, {oauth: []}]
components:
  securitySchemes:
    bearer: {type: http, scheme: bearer}
    oauth: {type: oauth2, flows: {clientCredentials: {tokenUrl: /authToken, scopes: {}}}}
  schemas: {Error: {type: object, properties: {message: {type: string}}}}
  responses: {Bad: {description: bad, content: {application/json: {schema: {$ref: '#/components/schemas/Error'}}}}}
errorResponses: {"400": Bad}
operations: {/authToken: {public: true}}
tags: {SvcService: A bad elapsedDays is a 400.}
scopes: {"*": Everything., "svc:x": X., "svc:batch": Streams.}
streams:
  /api/x/stream:
    service: svc
    operationId: SvcService_StreamX
    rpc: SvcService_Stream
    tag: SvcService
    summary: X, one a line.
    answerDescription: One answer a line.
    request: {$ref: '#/components/schemas/Line'}
    answer: {oneOf: [{$ref: '#/components/schemas/Line'}, {$ref: '#/components/schemas/Error'}]}
    schemas: [Line]
streamSchemas: {Line: {type: object, properties: {n: {type: integer}}}}
`

// permissionsOf is a contract's permission options for the fixture's rpcs.
func permissionsOf(rpc string) ([]string, bool) {
	perms, ok := map[string][]string{"X": {"svc:x"}, "SvcService_Stream": {"svc:batch", "svc:x"}, "IssueToken": nil}[rpc]
	return perms, ok
}

func buildWithPermissions(t *testing.T, overlay string) (map[string]any, error) {
	t.Helper()
	o, err := Parse([]byte(overlay))
	if err != nil {
		return nil, err
	}
	o.Permissions = permissionsOf
	docs, err := Build(swagger("integer"), o, []string{"svc"}, "v7")
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := json.Unmarshal(docs["svc"], &doc); err != nil {
		t.Fatal(err)
	}
	return doc, nil
}

// TestStreamsScopesAndServers: a stream becomes a POST taking and answering NDJSON with its line
// schemas as components, and the operations' error answers and security like any other; each
// operation's OAuth2 requirement is its rpc's permissions (bearer's stays empty); the flow lists
// the permissions used and "*", described; the service's servers follow the common ones.
func TestStreamsScopesAndServers(t *testing.T) {
	t.Parallel()
	doc, err := buildWithPermissions(t, streamsBase)
	if err != nil {
		t.Fatal(err)
	}
	op := at(t, doc, "paths", "/api/x/stream", "post")
	if got := at(t, op, "requestBody", "content", "application/x-ndjson", "schema", "$ref"); got != "#/components/schemas/Line" {
		t.Errorf("stream request: got %v; want the Line component", got)
	}
	if got := at(t, op, "responses", "200", "content", "application/x-ndjson", "schema", "oneOf"); len(got.([]any)) != 2 {
		t.Errorf("stream answer: got %v; want the two line shapes", got)
	}
	if got := at(t, op, "responses", "400", "$ref"); got != "#/components/responses/Bad" {
		t.Errorf("stream 400: got %v; want the Bad response", got)
	}
	if got := at(t, op, "operationId"); got != "SvcService_StreamX" {
		t.Errorf("stream operationId: got %v", got)
	}
	if got := at(t, doc, "components", "schemas", "Line", "type"); got != "object" {
		t.Errorf("Line component: got %v", got)
	}
	for path, want := range map[string][]any{"/api/x/stream": {"svc:batch", "svc:x"}, "/api/x": {"svc:x"}} {
		got := at(t, doc, "paths", path, "post", "security")
		if !reflect.DeepEqual(got, []any{map[string]any{"bearer": []any{}}, map[string]any{"oauth": want}}) {
			t.Errorf("%s security: got %v; want bearer [] or oauth %v", path, got, want)
		}
	}
	if got := at(t, doc, "paths", "/authToken", "post", "security"); !reflect.DeepEqual(got, []any{}) {
		t.Errorf("public security: got %v; want []", got)
	}
	scopes := at(t, doc, "components", "securitySchemes", "oauth", "flows", "clientCredentials", "scopes")
	if want := map[string]any{"*": "Everything.", "svc:x": "X.", "svc:batch": "Streams."}; !reflect.DeepEqual(scopes, want) {
		t.Errorf("scopes: got %v; want %v", scopes, want)
	}
	servers := at(t, doc, "servers")
	if want := []any{map[string]any{"url": "/", "description": "here"}, map[string]any{"url": "http://127.0.0.1:1", "description": "local"}}; !reflect.DeepEqual(servers, want) {
		t.Errorf("servers: got %v; want %v", servers, want)
	}
}

// TestStreamsAndScopesFailLoudly: an rpc the contract lacks, a permission without its
// description, a description no operation needs, a line schema no stream lists or one that is
// missing, and a stream on a path the generator emits, each stop generation.
func TestStreamsAndScopesFailLoudly(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, from, to, want string }{
		{"unknown rpc", "rpc: SvcService_Stream", "rpc: SvcService_Gone", `no rpc "SvcService_Gone"`},
		{"permission undescribed", `"svc:batch": Streams.`, `"svc:other": Other.`, "scopes.svc:batch: an operation needs this permission"},
		{"description unused", `"svc:batch": Streams.`, `"svc:batch": Streams., "svc:gone": Gone.`, "scopes.svc:gone: no operation needs this permission"},
		{"line schema unused", "streamSchemas: {Line:", "streamSchemas: {Gone: {type: object}, Line:", "streamSchemas.Gone: no stream lists it"},
		{"line schema missing", "schemas: [Line]", "schemas: [Line, Nope]", "no streamSchemas.Nope"},
		{"stream on a generated path", "/api/x/stream:", "/api/x:", "streams./api/x: the generator already emits this path"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if !strings.Contains(streamsBase, c.from) {
				t.Fatalf("the fixture has no %q", c.from)
			}
			_, err := buildWithPermissions(t, strings.Replace(streamsBase, c.from, c.to, 1))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got error %v; want one containing %q", err, c.want)
			}
		})
	}
}
