package overlay

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
)

// apply patches one converted document in place.
func (o *Overlay) apply(doc map[string]any, svc, version string, seen *usage) error {
	info, ok := o.Services[svc]
	if !ok {
		return fmt.Errorf("services.%s: the overlay gives this service no title", svc)
	}
	seen.services[svc] = true
	docInfo := map[string]any{"title": info.Title, "description": appendText(strings.TrimSpace(info.Description), o.About), "version": version}
	if o.Contact != nil {
		docInfo["contact"] = deepCopy(o.Contact)
	}
	if o.License != nil {
		docInfo["license"] = deepCopy(o.License)
	}
	doc["info"] = docInfo
	if all := append(append([]map[string]any(nil), o.Servers...), info.Servers...); len(all) > 0 {
		servers := make([]any, len(all))
		for i, s := range all {
			servers[i] = deepCopy(map[string]any(s))
		}
		doc["servers"] = servers
	}

	components, _ := doc["components"].(map[string]any)
	if components == nil {
		components = map[string]any{}
		doc["components"] = components
	}
	schemas, _ := components["schemas"].(map[string]any)
	if schemas == nil {
		schemas = map[string]any{}
		components["schemas"] = schemas
	}
	var errs []error
	// Generated schemas are patched before components are added, so a patch cannot land on a
	// schema the overlay wrote itself.
	for _, name := range sortedKeys(o.Schemas) {
		target, ok := schemas[name].(map[string]any)
		if !ok {
			continue
		}
		seen.schemas[name] = true
		errs = append(errs, o.Schemas[name].apply(target, name, schemas, seen))
	}
	for _, kind := range sortedKeys(o.Components) {
		section, _ := components[kind].(map[string]any)
		if section == nil {
			section = map[string]any{}
			components[kind] = section
		}
		for _, name := range sortedKeys(o.Components[kind]) {
			if _, dup := section[name]; dup {
				errs = append(errs, fmt.Errorf("components.%s.%s: the generator already defines it", kind, name))
				continue
			}
			section[name] = deepCopy(o.Components[kind][name])
		}
	}
	for _, name := range sortedKeys(o.DerivedSchemas) {
		errs = append(errs, o.DerivedSchemas[name].apply(name, schemas))
	}
	paths, _ := doc["paths"].(map[string]any)
	if paths == nil {
		paths = map[string]any{}
		doc["paths"] = paths
	}
	rpcs := map[string]string{} // operationId -> the rpc whose permissions it takes
	for _, p := range sortedKeys(o.Streams) {
		if s := o.Streams[p]; s.Service == svc {
			errs = append(errs, o.addStream(paths, schemas, p, s, seen))
			rpcs[s.OperationID] = s.RPC
		}
	}
	tags, _ := doc["tags"].([]any)
	for _, t := range tags {
		tag, _ := t.(map[string]any)
		name, _ := tag["name"].(string)
		text, ok := o.Tags[name]
		if !ok {
			errs = append(errs, fmt.Errorf("tags.%s: the overlay gives this tag no description for the HTTP page", name))
			continue
		}
		seen.tags[name] = true
		tag["description"] = strings.TrimSpace(text)
	}
	used := map[string]bool{} // the permissions the document's operations need
	for _, p := range sortedKeys(paths) {
		patch, ok := o.Operations[p]
		if ok {
			seen.paths[p] = true
		}
		item, _ := paths[p].(map[string]any)
		for _, method := range sortedKeys(item) {
			op, ok := item[method].(map[string]any)
			if !ok {
				continue
			}
			id, _ := op["operationId"].(string)
			rpc := id
			if r, ok := rpcs[id]; ok {
				rpc = r
			}
			errs = append(errs, o.patchOperation(op, patch, rpc, method+" "+p, used))
		}
	}
	errs = append(errs, o.setScopes(components, used, seen))
	jsonNames(doc)
	errs = append(errs, unreferencedComponents(doc))
	return errors.Join(errs...)
}

// snakeWord is a word in a .proto comment that may be a proto field name (time_of_year).
var snakeWord = regexp.MustCompile(`\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b`)

// jsonNames rewrites, in every description and summary, the proto field names the .proto comments
// use (time_of_year, ability_display) as the JSON names the HTTP page shows (timeOfYear,
// abilityDisplay): a snake_case word becomes lowerCamelCase where that is a property name of the
// document and the word itself is not (grant_type, a form field of its own, stays).
func jsonNames(doc map[string]any) {
	props := map[string]bool{}
	var collect func(v any)
	collect = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if p, ok := v["properties"].(map[string]any); ok {
				for name := range p {
					props[name] = true
				}
			}
			for _, e := range v {
				collect(e)
			}
		case []any:
			for _, e := range v {
				collect(e)
			}
		}
	}
	collect(doc["components"])
	rename := func(text string) string {
		return snakeWord.ReplaceAllStringFunc(text, func(w string) string {
			if props[w] {
				return w
			}
			parts := strings.Split(w, "_")
			for i := 1; i < len(parts); i++ {
				parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
			}
			if camel := strings.Join(parts, ""); props[camel] {
				return camel
			}
			return w
		})
	}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				if s, ok := e.(string); ok && (k == "description" || k == "summary") {
					v[k] = rename(s)
					continue
				}
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(doc)
}

// unreferencedComponents fails on a $ref to no component, and on a component (other than a
// security scheme, which operations name rather than $ref) that nothing in the document refers
// to: dead text that client generators and linters trip on, usually an overlay entry left behind
// by a change.
func unreferencedComponents(doc map[string]any) error {
	refs := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if r, ok := v["$ref"].(string); ok {
				refs[r] = true
			}
			for _, e := range v {
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(doc)
	components, _ := doc["components"].(map[string]any)
	var errs []error
	for _, r := range sortedKeys(refs) {
		kind, name, ok := strings.Cut(strings.TrimPrefix(r, "#/components/"), "/")
		section, _ := components[kind].(map[string]any)
		if _, found := section[name]; !ok || !found {
			errs = append(errs, fmt.Errorf("%s: no such component", r))
		}
	}
	for _, kind := range sortedKeys(components) {
		if kind == "securitySchemes" {
			continue
		}
		section, _ := components[kind].(map[string]any)
		for _, name := range sortedKeys(section) {
			if !refs["#/components/"+kind+"/"+name] {
				errs = append(errs, fmt.Errorf("components.%s.%s: nothing in the document refers to it", kind, name))
			}
		}
	}
	return errors.Join(errs...)
}

func (o *Overlay) patchOperation(op map[string]any, patch Operation, rpc, where string, used map[string]bool) error {
	var perms []string
	if o.Permissions != nil && !patch.Public {
		var known bool
		if perms, known = o.Permissions(rpc); !known {
			return fmt.Errorf("%s: the contract has no rpc %q to take its permissions from", where, rpc)
		}
		for _, p := range perms {
			used[p] = true
		}
	}
	if patch.Public {
		op["security"] = []any{}
	} else {
		sec := make([]any, len(o.Security))
		for i, req := range o.Security {
			m := map[string]any{}
			for scheme, scopes := range req {
				if o.isOAuth2(scheme) && perms != nil {
					// The scopes of an OAuth2 requirement are the permissions the call needs.
					scopes = perms
				}
				s := make([]any, len(scopes))
				for j, v := range scopes {
					s[j] = v
				}
				m[scheme] = s
			}
			sec[i] = m
		}
		op["security"] = sec
	}
	responses, _ := op["responses"].(map[string]any)
	if responses == nil {
		return fmt.Errorf("%s: no responses", where)
	}
	ref := func(name string) map[string]any { return map[string]any{"$ref": "#/components/responses/" + name} }
	for status, name := range o.ErrorResponses {
		responses[status] = ref(name)
	}
	if !patch.Public {
		for status, name := range o.ProtectedResponses {
			responses[status] = ref(name)
		}
	}
	for status, resp := range patch.Responses {
		responses[status] = deepCopy(resp)
	}
	if patch.Description != "" {
		op["description"] = appendText(op["description"], patch.Description)
	}
	if len(patch.RequestContent) > 0 {
		body, _ := op["requestBody"].(map[string]any)
		content, _ := body["content"].(map[string]any)
		if content == nil {
			return fmt.Errorf("%s: requestContent given but the operation has no request body", where)
		}
		for mt, v := range patch.RequestContent {
			if _, dup := content[mt]; dup {
				return fmt.Errorf("%s: requestContent %s: the generator already emits it", where, mt)
			}
			content[mt] = deepCopy(v)
		}
	}
	return nil
}

func (s Schema) apply(target map[string]any, name string, schemas map[string]any, seen *usage) error {
	if s.Description != "" {
		target["description"] = appendText(target["description"], s.Description)
	}
	props, _ := target["properties"].(map[string]any)
	var errs []error
	for _, r := range s.Required {
		if _, ok := props[r]; !ok {
			errs = append(errs, fmt.Errorf("schemas.%s.required: %q is not a property", name, r))
		}
	}
	if len(s.Required) > 0 {
		req, _ := target["required"].([]any)
		target["required"] = union(req, s.Required)
	}
	for _, p := range sortedKeys(s.Properties) {
		prop, ok := props[p].(map[string]any)
		if !ok {
			errs = append(errs, fmt.Errorf("schemas.%s.properties.%s: the schema has no such property", name, p))
			continue
		}
		seen.properties[name+"."+p] = true
		patched, err := s.Properties[p].apply(prop, name+"."+p, schemas)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		props[p] = patched
	}
	return errors.Join(errs...)
}

// apply returns the patched property schema (a new one when alternatives wrap it).
func (p Property) apply(prop map[string]any, where string, schemas map[string]any) (map[string]any, error) {
	if _, isRef := prop["$ref"]; isRef {
		// Siblings of $ref are ignored in OpenAPI 3.0: only a wrapper can carry more.
		if !reflect.DeepEqual(p, Property{Description: p.Description, OneOfAlso: p.OneOfAlso}) || len(p.OneOfAlso) == 0 {
			return nil, fmt.Errorf("%s: a $ref schema takes only oneOfAlso (and a description with it)", where)
		}
	}
	set := func(key string, v any) error {
		if old, ok := prop[key]; ok && !reflect.DeepEqual(old, v) {
			return fmt.Errorf("%s: %s is %v as generated; the overlay says %v", where, key, old, v)
		}
		prop[key] = v
		return nil
	}
	var errs []error
	if p.Enum != nil {
		errs = append(errs, set("enum", p.Enum))
	}
	if p.Minimum != nil {
		errs = append(errs, set("minimum", *p.Minimum))
	}
	if p.Maximum != nil {
		errs = append(errs, set("maximum", *p.Maximum))
	}
	if p.ExclusiveMinimum {
		errs = append(errs, set("exclusiveMinimum", true))
	}
	if p.ExclusiveMaximum {
		errs = append(errs, set("exclusiveMaximum", true))
	}
	if p.MinItems != nil {
		errs = append(errs, set("minItems", *p.MinItems))
	}
	if p.MaxItems != nil {
		errs = append(errs, set("maxItems", *p.MaxItems))
	}
	if p.MinLength != nil {
		errs = append(errs, set("minLength", *p.MinLength))
	}
	if p.Pattern != "" {
		errs = append(errs, set("pattern", p.Pattern))
	}
	if p.Default != nil {
		errs = append(errs, set("default", p.Default))
	}
	if p.Example != nil {
		errs = append(errs, set("example", p.Example))
	}
	if p.Items != nil {
		items, ok := prop["items"].(map[string]any)
		if !ok {
			errs = append(errs, fmt.Errorf("%s: items given but the property is not an array", where))
		} else if patched, err := p.Items.apply(items, where+"[]", schemas); err != nil {
			errs = append(errs, err)
		} else {
			prop["items"] = patched
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if len(p.OneOfAlso) == 0 {
		if p.Description != "" {
			prop["description"] = appendText(prop["description"], p.Description)
		}
		return prop, nil
	}
	desc := appendText(prop["description"], p.Description)
	delete(prop, "description")
	shapes := []any{prop}
	for i, alt := range p.OneOfAlso {
		shape, err := alt.schema(schemas)
		if err != nil {
			return nil, fmt.Errorf("%s: oneOfAlso[%d]: %w", where, i, err)
		}
		shapes = append(shapes, shape)
	}
	wrapper := map[string]any{"oneOf": shapes}
	if desc != "" {
		wrapper["description"] = desc
	}
	return wrapper, nil
}

// schema is the alternative's schema: as written, or the tuple built from generated types.
func (a Alternative) schema(schemas map[string]any) (map[string]any, error) {
	switch {
	case (a.Schema == nil) == (a.TupleOf == nil):
		return nil, errors.New("give exactly one of schema and tupleOf")
	case a.Schema != nil:
		return deepCopy(a.Schema).(map[string]any), nil
	}
	t := a.TupleOf
	src, ok := schemas[t.Schema].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("tupleOf: no schema %q", t.Schema)
	}
	props, _ := src["properties"].(map[string]any)
	var kinds []any
	for _, name := range t.Properties {
		prop, ok := props[name].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("tupleOf: schema %s has no property %q", t.Schema, name)
		}
		kind := map[string]any{}
		for _, key := range []string{"type", "format"} {
			if v, ok := prop[key]; ok {
				kind[key] = v
			}
		}
		if len(kind) == 0 {
			return nil, fmt.Errorf("tupleOf: %s.%s has no scalar type", t.Schema, name)
		}
		if !containsEqual(kinds, kind) {
			kinds = append(kinds, kind)
		}
	}
	var items any = map[string]any{"anyOf": kinds}
	if len(kinds) == 1 {
		items = kinds[0]
	}
	n := len(t.Properties)
	return map[string]any{
		"type": "array", "minItems": n, "maxItems": n, "items": items,
		"description": fmt.Sprintf("The same values as an array, in this order: %s.", strings.Join(t.Properties, ", ")),
	}, nil
}

func (d Derived) apply(name string, schemas map[string]any) error {
	if _, dup := schemas[name]; dup {
		return fmt.Errorf("derivedSchemas.%s: the schema already exists", name)
	}
	src, ok := schemas[d.From].(map[string]any)
	if !ok {
		return fmt.Errorf("derivedSchemas.%s: from %q: no such schema", name, d.From)
	}
	props, _ := deepCopy(src["properties"]).(map[string]any)
	if props == nil {
		props = map[string]any{}
	}
	for _, k := range sortedKeys(d.AddProperties) {
		if _, dup := props[k]; dup {
			return fmt.Errorf("derivedSchemas.%s: %q is already a property of %s", name, k, d.From)
		}
		props[k] = deepCopy(d.AddProperties[k])
	}
	out := map[string]any{"type": "object", "properties": props}
	if d.Description != "" {
		out["description"] = strings.TrimSpace(d.Description)
	}
	schemas[name] = out
	return nil
}

// appendText adds a paragraph to a generated description.
func appendText(old any, add string) string {
	s, _ := old.(string)
	add = strings.TrimSpace(add)
	switch {
	case s == "":
		return add
	case add == "":
		return s
	}
	return s + "\n\n" + add
}

func containsEqual(list []any, v any) bool {
	for _, e := range list {
		if reflect.DeepEqual(e, v) {
			return true
		}
	}
	return false
}

// isOAuth2 reports whether the overlay's security scheme name is an OAuth2 one.
func (o *Overlay) isOAuth2(name string) bool {
	scheme, _ := o.Components["securitySchemes"][name].(map[string]any)
	return scheme["type"] == "oauth2"
}

// setScopes lists, in each OAuth2 flow of the document, the permissions its operations need and
// "*" (every permission), each with the overlay's description; a permission without one fails.
func (o *Overlay) setScopes(components map[string]any, used map[string]bool, seen *usage) error {
	if o.Permissions == nil {
		return nil
	}
	used["*"] = true
	scopes := map[string]any{}
	var errs []error
	for _, p := range sortedKeys(used) {
		desc, ok := o.Scopes[p]
		if !ok {
			errs = append(errs, fmt.Errorf("scopes.%s: an operation needs this permission and the overlay does not describe it", p))
			continue
		}
		seen.scopes[p] = true
		scopes[p] = strings.TrimSpace(desc)
	}
	schemes, _ := components["securitySchemes"].(map[string]any)
	for _, name := range sortedKeys(schemes) {
		scheme, _ := schemes[name].(map[string]any)
		flows, _ := scheme["flows"].(map[string]any)
		for _, f := range flows {
			if flow, ok := f.(map[string]any); ok {
				flow["scopes"] = deepCopy(scopes)
			}
		}
	}
	return errors.Join(errs...)
}

// addStream adds the NDJSON path p to the document: a POST whose body and answer are JSON lines
// of the schemas given, and the line schemas it lists.
func (o *Overlay) addStream(paths, schemas map[string]any, p string, s Stream, seen *usage) error {
	if _, dup := paths[p]; dup {
		return fmt.Errorf("streams.%s: the generator already emits this path", p)
	}
	if s.OperationID == "" || s.RPC == "" || s.Request == nil || s.Answer == nil {
		return fmt.Errorf("streams.%s: operationId, rpc, request and answer are required", p)
	}
	var errs []error
	for _, name := range s.Schemas {
		def, ok := o.StreamSchemas[name]
		if !ok {
			errs = append(errs, fmt.Errorf("streams.%s: no streamSchemas.%s", p, name))
			continue
		}
		// Another stream of the document may have added it already; a schema of the generator's
		// own of that name is a clash.
		if old, exists := schemas[name]; exists && !reflect.DeepEqual(old, def) {
			errs = append(errs, fmt.Errorf("streamSchemas.%s: the generator already defines it", name))
			continue
		}
		seen.stream[name] = true
		schemas[name] = deepCopy(def)
	}
	const ndjson = "application/x-ndjson"
	op := map[string]any{
		"operationId": s.OperationID,
		"summary":     strings.TrimSpace(s.Summary),
		"description": strings.TrimSpace(s.Description),
		"requestBody": map[string]any{"required": true, "content": map[string]any{
			ndjson: map[string]any{"schema": deepCopy(s.Request)},
		}},
		"responses": map[string]any{"200": map[string]any{
			"description": strings.TrimSpace(s.AnswerDescription),
			"content":     map[string]any{ndjson: map[string]any{"schema": deepCopy(s.Answer)}},
		}},
	}
	if s.Tag != "" {
		op["tags"] = []any{s.Tag}
	}
	paths[p] = map[string]any{"post": op}
	return errors.Join(errs...)
}
