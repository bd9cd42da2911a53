// Package overlay turns the Swagger 2.0 files protoc-gen-openapiv2 writes into one OpenAPI 3.0
// document per service: it merges the token endpoint's file with the service's, converts with
// kin-openapi's openapi2conv, then applies the checked-in overlay (overlay.yaml) for what the
// .proto files cannot say: required fields, enums, ranges, security, error answers, the token
// endpoint's form bodies and OAuth2 answers, and alternative shapes of a value.
//
// The overlay never states a type the generator emits: its property patches have no type,
// format or $ref field (decoding rejects unknown keys), so a type changed in a .proto file flows
// through unchanged. Every schema, property and path it names must exist in some service's
// document, or Build fails: a renamed field cannot silently lose its constraints.
//
// kin-openapi is the library of choice for OpenAPI in Go (conversion, loading, validation); it
// does the 2.0 to 3.0 conversion and validates the result before anything is written.
package overlay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"

	"github.com/getkin/kin-openapi/openapi2"
	"github.com/getkin/kin-openapi/openapi2conv"
	"github.com/getkin/kin-openapi/openapi3"
	"gopkg.in/yaml.v3"
)

// Overlay is the decoded overlay file. Verbatim fragments (components, responses, request
// content) are OpenAPI 3.0 as written; patches are typed so an unknown key is an error.
type Overlay struct {
	// Services gives each service's document its title and the description of what it does.
	Services map[string]Info `yaml:"services"`
	// About follows each service's own description in its document's info.description: what
	// every service shares (authorization, numbers, strict input, errors).
	About string `yaml:"about"`
	// Contact and License are every document's info.contact and info.license.
	Contact map[string]any `yaml:"contact"`
	License map[string]any `yaml:"license"`
	// Servers are every document's servers.
	Servers []map[string]any `yaml:"servers"`
	// Tags replace the description of each tag (one per gRPC service, taken from its .proto
	// comment, which speaks gRPC) with what the HTTP page should say. Every tag of every
	// document must have one, or Build fails.
	Tags map[string]string `yaml:"tags"`
	// Components are added to every document's components (securitySchemes, schemas,
	// responses, headers); a name the generator already uses is an error.
	Components map[string]map[string]any `yaml:"components"`
	// DerivedSchemas are components built from a generated schema's properties.
	DerivedSchemas map[string]Derived `yaml:"derivedSchemas"`
	// Security is set on every operation not marked public.
	Security []map[string][]string `yaml:"security"`
	// ErrorResponses maps a status code to a component response, added to every operation.
	ErrorResponses map[string]string `yaml:"errorResponses"`
	// ProtectedResponses are added to every operation not marked public (e.g. a 401 with
	// WWW-Authenticate), replacing ErrorResponses' entry for the same status.
	ProtectedResponses map[string]string `yaml:"protectedResponses"`
	// Operations patches operations, keyed by path (every method of the path).
	Operations map[string]Operation `yaml:"operations"`
	// Schemas patches generated schemas, keyed by schema name.
	Schemas map[string]Schema `yaml:"schemas"`
	// Scopes describe each permission: the oauth2 scheme's scopes in a document are those its
	// operations need (and "*"), each with its description here.
	Scopes map[string]string `yaml:"scopes"`
	// Streams are the NDJSON paths, keyed by path: the gateway serves no streams, so the
	// generator never sees them.
	Streams map[string]Stream `yaml:"streams"`
	// StreamSchemas are the schemas of the streams' lines, added to a document when one of its
	// streams lists them.
	StreamSchemas map[string]any `yaml:"streamSchemas"`

	// Permissions, when set, gives the permissions a token needs to call an rpc (by its
	// operationId, "ScoringService_ScoreItemResults"), read from the contract's method options:
	// each operation's oauth2 requirement lists them. ok is false for an rpc it does not know.
	Permissions func(rpc string) (perms []string, ok bool) `yaml:"-"`
}

// Info is a document's title and description.
type Info struct {
	Title       string `yaml:"title"`
	Description string `yaml:"description"`
	// Servers follow the overlay's common servers in this service's document: where the
	// service runs in each environment, as absolute URLs.
	Servers []map[string]any `yaml:"servers"`
}

// Stream is an NDJSON path of one service: its request body and its answer are one JSON value a
// line.
type Stream struct {
	Service     string `yaml:"service"`
	OperationID string `yaml:"operationId"`
	// RPC is the operationId of the rpc whose permissions the path takes (a stream's gRPC
	// twin).
	RPC         string         `yaml:"rpc"`
	Tag         string         `yaml:"tag"`
	Summary     string         `yaml:"summary"`
	Description string         `yaml:"description"`
	Request     map[string]any `yaml:"request"` // the schema of one line of the body
	Answer      map[string]any `yaml:"answer"`  // the schema of one line of the answer
	// AnswerDescription is the 200's description.
	AnswerDescription string `yaml:"answerDescription"`
	// Schemas names the StreamSchemas the lines refer to.
	Schemas []string `yaml:"schemas"`
}

// Derived is a schema whose properties are copied from a generated one (types as generated),
// plus properties of its own.
type Derived struct {
	From          string         `yaml:"from"`
	Description   string         `yaml:"description"`
	AddProperties map[string]any `yaml:"addProperties"`
}

// Operation patches the operations of one path.
type Operation struct {
	// Public operations take no credentials: no security, no ProtectedResponses.
	Public      bool   `yaml:"public"`
	Description string `yaml:"description"`
	// RequestContent adds media types to the request body.
	RequestContent map[string]any `yaml:"requestContent"`
	// Responses replace the responses of these statuses.
	Responses map[string]any `yaml:"responses"`
}

// Schema patches one generated schema.
type Schema struct {
	Description string              `yaml:"description"`
	Required    []string            `yaml:"required"`
	Properties  map[string]Property `yaml:"properties"`
}

// Property patches one property (or, under items, its array's elements). It has no type,
// format or $ref on purpose.
type Property struct {
	Description      string        `yaml:"description"`
	Enum             []any         `yaml:"enum"`
	Minimum          *float64      `yaml:"minimum"`
	Maximum          *float64      `yaml:"maximum"`
	ExclusiveMinimum bool          `yaml:"exclusiveMinimum"`
	ExclusiveMaximum bool          `yaml:"exclusiveMaximum"`
	MinItems         *int          `yaml:"minItems"`
	MaxItems         *int          `yaml:"maxItems"`
	MinLength        *int          `yaml:"minLength"`
	Pattern          string        `yaml:"pattern"`
	Default          any           `yaml:"default"`
	Example          any           `yaml:"example"`
	Items            *Property     `yaml:"items"`
	OneOfAlso        []Alternative `yaml:"oneOfAlso"`
}

// Alternative is another shape a value may take: a schema written out, or a fixed-length array
// of a generated schema's properties in order (their types as generated).
type Alternative struct {
	Schema  map[string]any `yaml:"schema"`
	TupleOf *Tuple         `yaml:"tupleOf"`
}

// Tuple names the generated properties an array alternative holds, in order.
type Tuple struct {
	Schema     string   `yaml:"schema"`
	Properties []string `yaml:"properties"`
}

// Parse decodes an overlay, rejecting unknown keys.
func Parse(raw []byte) (*Overlay, error) {
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	var o Overlay
	if err := dec.Decode(&o); err != nil {
		return nil, fmt.Errorf("parse overlay: %w", err)
	}
	return &o, nil
}

// Build makes the OpenAPI 3.0 document of each service from the Swagger 2.0 files in swagger
// (yardstick/<name>/v1/<name>.swagger.json, "auth" merged into every service) and the overlay.
// version is the documents' info.version.
func Build(swagger fs.FS, o *Overlay, services []string, version string) (map[string][]byte, error) {
	seen := newUsage()
	out := map[string][]byte{}
	for _, svc := range services {
		doc, err := convert(swagger, svc)
		if err != nil {
			return nil, err
		}
		if err := o.apply(doc, svc, version, seen); err != nil {
			return nil, fmt.Errorf("overlay on %s: %w", svc, err)
		}
		raw, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			return nil, fmt.Errorf("encode %s document: %w", svc, err)
		}
		if err := Validate(raw); err != nil {
			return nil, fmt.Errorf("%s document: %w", svc, err)
		}
		out[svc] = append(raw, '\n')
	}
	if err := seen.unused(o); err != nil {
		return nil, err
	}
	return out, nil
}

// Validate loads a document with kin-openapi and validates it against OpenAPI 3.0.
func Validate(raw []byte) error {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(raw)
	if err != nil {
		return fmt.Errorf("load: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return fmt.Errorf("validate: %w", err)
	}
	return nil
}

// convert merges the token endpoint's Swagger file with the service's and converts to 3.0,
// returning the document as generic JSON for patching.
func convert(swagger fs.FS, svc string) (map[string]any, error) {
	merged := map[string]any{}
	paths, defs := map[string]any{}, map[string]any{}
	var tags []any
	var files []string
	for _, name := range []string{"auth", svc} {
		// Every .proto file of the package: a service may be served beside another (the scoring
		// service's ContentService in content.proto beside scoring.proto).
		more, err := fs.Glob(swagger, path.Join("yardstick", name, "v1", "*.swagger.json"))
		if err != nil || len(more) == 0 {
			return nil, fmt.Errorf("swagger files of %q: none under yardstick/%s/v1 (%v)", name, name, err)
		}
		files = append(files, more...)
	}
	for _, file := range files {
		raw, err := fs.ReadFile(swagger, file)
		if err != nil {
			return nil, fmt.Errorf("swagger file %s: %w", file, err)
		}
		var doc map[string]any
		if err := json.Unmarshal(raw, &doc); err != nil {
			return nil, fmt.Errorf("parse %s: %w", file, err)
		}
		for k, v := range doc {
			if _, ok := merged[k]; !ok {
				merged[k] = v
			}
		}
		if err := mergeInto(paths, doc["paths"], file); err != nil {
			return nil, err
		}
		if err := mergeInto(defs, doc["definitions"], file); err != nil {
			return nil, err
		}
		t, _ := doc["tags"].([]any)
		tags = append(tags, t...)
	}
	merged["paths"], merged["definitions"], merged["tags"] = paths, defs, tags
	raw, err := json.Marshal(merged)
	if err != nil {
		return nil, fmt.Errorf("merge swagger of %s: %w", svc, err)
	}
	var v2 openapi2.T
	if err := json.Unmarshal(raw, &v2); err != nil {
		return nil, fmt.Errorf("decode merged swagger of %s: %w", svc, err)
	}
	v3, err := openapi2conv.ToV3(&v2)
	if err != nil {
		return nil, fmt.Errorf("convert %s to OpenAPI 3: %w", svc, err)
	}
	if raw, err = json.Marshal(v3); err != nil {
		return nil, fmt.Errorf("encode converted %s: %w", svc, err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("decode converted %s: %w", svc, err)
	}
	return doc, nil
}

// mergeInto adds src's entries to dst; a name both files define is an error, since one would
// silently hide the other.
func mergeInto(dst map[string]any, src any, file string) error {
	m, _ := src.(map[string]any)
	for k, v := range m {
		if _, dup := dst[k]; dup {
			return fmt.Errorf("%s: %q is defined by two swagger files", file, k)
		}
		dst[k] = v
	}
	return nil
}

// usage records which overlay entries matched something in some document.
type usage struct {
	schemas    map[string]bool
	properties map[string]bool // "schema.property"
	paths      map[string]bool
	services   map[string]bool
	tags       map[string]bool
	scopes     map[string]bool
	stream     map[string]bool // StreamSchemas added to some document
}

func newUsage() *usage {
	return &usage{schemas: map[string]bool{}, properties: map[string]bool{}, paths: map[string]bool{}, services: map[string]bool{},
		tags: map[string]bool{}, scopes: map[string]bool{}, stream: map[string]bool{}}
}

// unused fails on the overlay entries no document had: they name something that was renamed
// or removed, and their constraints would be lost without a word.
func (u *usage) unused(o *Overlay) error {
	var errs []error
	for _, name := range sortedKeys(o.Schemas) {
		if !u.schemas[name] {
			errs = append(errs, fmt.Errorf("schemas.%s: no document has this schema", name))
			continue
		}
		for _, p := range sortedKeys(o.Schemas[name].Properties) {
			if !u.properties[name+"."+p] {
				errs = append(errs, fmt.Errorf("schemas.%s.properties.%s: the schema has no such property", name, p))
			}
		}
	}
	for _, p := range sortedKeys(o.Operations) {
		if !u.paths[p] {
			errs = append(errs, fmt.Errorf("operations.%s: no document has this path", p))
		}
	}
	for _, s := range sortedKeys(o.Services) {
		if !u.services[s] {
			errs = append(errs, fmt.Errorf("services.%s: not a service built", s))
		}
	}
	for _, t := range sortedKeys(o.Tags) {
		if !u.tags[t] {
			errs = append(errs, fmt.Errorf("tags.%s: no document has this tag", t))
		}
	}
	if o.Permissions != nil {
		for _, s := range sortedKeys(o.Scopes) {
			if !u.scopes[s] {
				errs = append(errs, fmt.Errorf("scopes.%s: no operation needs this permission", s))
			}
		}
	}
	for _, s := range sortedKeys(o.StreamSchemas) {
		if !u.stream[s] {
			errs = append(errs, fmt.Errorf("streamSchemas.%s: no stream lists it", s))
		}
	}
	for _, p := range sortedKeys(o.Streams) {
		if !u.services[o.Streams[p].Service] {
			errs = append(errs, fmt.Errorf("streams.%s: service %q is not a service built", p, o.Streams[p].Service))
		}
	}
	return errors.Join(errs...)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// deepCopy copies a JSON-shaped value, so a fragment applied to two documents or two places is
// not shared.
func deepCopy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = deepCopy(e)
		}
		return out
	default:
		return v
	}
}

// union appends to list the names it lacks, keeping the order.
func union(list []any, names []string) []any {
	for _, n := range names {
		if !slices.Contains(list, any(n)) {
			list = append(list, n)
		}
	}
	return list
}
