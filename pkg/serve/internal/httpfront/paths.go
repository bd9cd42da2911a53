package httpfront

import (
	"maps"
	"slices"
	"strings"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/routes"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	"github.com/yardstick-dev/yardstick/proto/jsoncodec"
)

// tooLarge is the 413 of a body over limit on route rt, naming the stream that takes any number of
// its parts, one a line: its group stream for a group's entries, the batch path for records.
func (f *Handler) tooLarge(rt *routes.Route, limit int64) rpcerr.HTTP {
	e := rpcerr.TooLarge(limit)
	if rt == nil {
		return e
	}
	stream := f.Routes.ByPath[rt.Path+"/stream"]
	switch {
	case rt.Group != nil && stream != nil && stream.Stream == routes.GroupStream:
		e.Body.AdditionalInfo += " Send a group of any size one student a line (NDJSON) to POST " + rt.Path + "/stream."
	case rt.Record:
		if p := f.batchPath(); p != "" {
			e.Body.AdditionalInfo += " Send many requests as records of POST " + p + " (NDJSON, one a line), which has no size limit."
		}
	}
	return e
}

// batchPath is the service's NDJSON batch path, "" without one.
func (f *Handler) batchPath() string {
	for p, rt := range f.Routes.ByPath {
		if rt.Stream == routes.Batch {
			return p
		}
	}
	return ""
}

// NearestPath is the documented path (this service's, the other's, the operational ones) nearest to
// path when it is near enough to be a typo (a letter off, a segment missing, the case wrong), or "".
func (f *Handler) NearestPath(path string) string {
	known := slices.AppendSeq(slices.Collect(maps.Keys(f.Routes.ByPath)), maps.Keys(servedBy()))
	known = append(known, "/authToken", "/healthz", "/readyz", "/metrics", "/openapi.json", "/docs", "/.well-known/jwks.json")
	if slices.Contains(known, path) {
		return "" // a path that exists, not here (a batch record naming /healthz): no typo to fix
	}
	slices.Sort(known) // a tie goes to the same path every time
	best, bestDist := "", len(path)/4+2
	for _, k := range known {
		if strings.EqualFold(k, path) {
			return k
		}
		if d := jsoncodec.Distance(strings.ToLower(path), strings.ToLower(k)); d < bestDist {
			best, bestDist = k, d
		}
	}
	return best
}
