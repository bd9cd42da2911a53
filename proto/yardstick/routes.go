// Package yardstick holds what code needs of the contract at run time, beyond the generated
// packages: its HTTP routes (http.yaml, the file the gateway and OpenAPI generators read; the
// serving frame authenticates a JSON request by its rpc before it decodes the body), the name of
// a batch record's field for an rpc, and the permissions declared on the rpcs with the service
// each belongs to (pkg/token checks a clients file against them).
package yardstick

import (
	_ "embed"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

//go:embed http.yaml
var httpRules []byte

// Route is the HTTP binding of one rpc.
type Route struct {
	Method     string // POST
	Path       string // /api/score/items/idsWithResults/standard
	FullMethod string // /yardstick.scoring.v1.ScoringService/ScoreItemResults
}

// Routes lists every HTTP binding of the contract.
func Routes() ([]Route, error) {
	var doc struct {
		HTTP struct {
			Rules []map[string]string `yaml:"rules"`
		} `yaml:"http"`
	}
	if err := yaml.Unmarshal(httpRules, &doc); err != nil {
		return nil, fmt.Errorf("parse http.yaml: %w", err)
	}
	var out []Route
	for _, rule := range doc.HTTP.Rules {
		sel := rule["selector"]
		dot := strings.LastIndex(sel, ".")
		if dot < 0 {
			return nil, fmt.Errorf("http.yaml: selector %q is not service.method", sel)
		}
		full := "/" + sel[:dot] + "/" + sel[dot+1:]
		found := false
		for _, m := range []string{"get", "post", "put", "patch", "delete"} {
			if path, ok := rule[m]; ok {
				out = append(out, Route{Method: strings.ToUpper(m), Path: path, FullMethod: full})
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("http.yaml: rule %q has no method", sel)
		}
	}
	return out, nil
}
