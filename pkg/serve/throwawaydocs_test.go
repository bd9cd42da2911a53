package serve

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	throwawayv1 "github.com/yardstick-dev/yardstick/pkg/serve/testdata/throwaway/v1"
	"github.com/yardstick-dev/yardstick/proto/yardstick"
	authv1 "github.com/yardstick-dev/yardstick/proto/yardstick/auth/v1"
)

// testThrowawayDocs holds the throwaway contract's docs entry (testdata/throwaway/api.md) to it, as
// pkg/token's TestDocsPermissions and proto/openapi's TestAPIDocCoversDocument hold docs/api.md
// to the contract: a row of the permissions table for each permission its rpcs declare, with the
// service it belongs to; a section for each path of its generated OpenAPI document, naming each
// field of the request in backquotes.
func testThrowawayDocs(t *testing.T) {
	md, err := os.ReadFile("testdata/throwaway/api.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z]+:[a-z]+)` \\| ([a-z]+) \\|").FindAllSubmatch(md, -1) {
		rows[string(m[1])] = string(m[2])
	}
	owners, err := yardstick.Permissions()
	if err != nil {
		t.Fatal(err)
	}
	perms := declaredPermissions(throwawayv1.File_yardstick_scoring_v1_throwaway_proto.Services().Get(0))
	if len(perms) != 2 {
		t.Errorf("got permissions %v; want the contract's two", perms)
	}
	for _, p := range perms {
		if rows[p] != owners[p] {
			t.Errorf("api.md: permission %s's row names service %q; want %q", p, rows[p], owners[p])
		}
	}
	fields, err := swaggerRequestFields("testdata/throwaway/v1/throwaway.swagger.json")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"label", "pieces", "pieces[].count", "pieces[].text", "text"}; len(fields) != 1 || !slices.Equal(slices.Sorted(slices.Values(fields[reversePath])), want) {
		t.Errorf("got the request fields %v in the OpenAPI document; want %s's %v alone", fields, reversePath, want)
	}
	for path, names := range fields {
		section := sectionOf(string(md), "### POST "+path)
		if section == "" {
			t.Errorf("api.md: no section ### POST %s", path)
		}
		for _, name := range names {
			if !strings.Contains(section, "`"+name+"`") {
				t.Errorf("api.md, ### POST %s: field %s not named", path, name)
			}
		}
	}
}

// declaredPermissions are the permissions sd's rpcs declare.
func declaredPermissions(sd protoreflect.ServiceDescriptor) []string {
	var out []string
	for i := range sd.Methods().Len() {
		if p := proto.GetExtension(sd.Methods().Get(i).Options(), authv1.E_Permission).(string); p != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// sectionOf is the text of md from the heading to the next heading of any level, "" if none.
func sectionOf(md, heading string) string {
	_, rest, ok := strings.Cut(md, "\n"+heading+"\n")
	if !ok {
		return ""
	}
	if i := strings.Index(rest, "\n#"); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

// swaggerRequestFields are the request body's fields (their JSON names, at any depth) of each POST
// path of a Swagger 2.0 document.
func swaggerRequestFields(file string) (map[string][]string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	type schema struct {
		Ref        string             `json:"$ref"`
		Items      *schema            `json:"items"`
		Properties map[string]*schema `json:"properties"`
	}
	var doc struct {
		Paths map[string]struct {
			Post struct {
				Parameters []struct {
					In     string  `json:"in"`
					Schema *schema `json:"schema"`
				} `json:"parameters"`
			} `json:"post"`
		} `json:"paths"`
		Definitions map[string]*schema `json:"definitions"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	// walk lists s's fields under prefix: "pieces", then "pieces[].text".
	var walk func(s *schema, prefix string, seen map[string]bool, out []string) []string
	walk = func(s *schema, prefix string, seen map[string]bool, out []string) []string {
		switch {
		case s == nil:
		case s.Ref != "":
			name := strings.TrimPrefix(s.Ref, "#/definitions/")
			if !seen[name] { // a message within itself is listed once
				seen[name] = true
				out = walk(doc.Definitions[name], prefix, seen, out)
			}
		case s.Items != nil:
			out = walk(s.Items, strings.TrimSuffix(prefix, ".")+"[].", seen, out)
		default:
			for name, p := range s.Properties {
				out = walk(p, prefix+name+".", seen, append(out, prefix+name))
			}
		}
		return out
	}
	fields := map[string][]string{}
	for path, item := range doc.Paths {
		for _, p := range item.Post.Parameters {
			if p.In == "body" {
				fields[path] = walk(p.Schema, "", map[string]bool{}, nil)
			}
		}
	}
	return fields, nil
}
