package serve

import (
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/batch"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/httpfront"
	"github.com/yardstick-dev/yardstick/pkg/serve/internal/routes"
)

// The streams of issue 21 ("batches at district scale", docs/api.md): a service names its
// NDJSON batch path and its group streams in Service; the frame routes them (internal/routes),
// checks the token, media type and admission (internal/httpfront, stream.go) and runs the
// engine (internal/batch). A batch record runs as a unary call of its own path on this front.

// GroupStream is one group forecast in progress on a group stream: the service validates,
// forecasts and encodes each student line, then the group (internal/batch's GroupStream).
type GroupStream = batch.GroupStream

// OpenGroup validates a group stream's settings line and starts the group; its error is the
// answer to the whole request.
type OpenGroup = batch.OpenGroup

// addStreams adds the service's stream routes to the route table and hands the front what they
// need.
func (s *Server) addStreams(svc Service, front *httpfront.Handler) {
	if svc.BatchPath != "" {
		s.routes.AddStream(svc.BatchPath, routes.Batch, routes.Rule{Permission: svc.BatchPermission})
	}
	for path := range svc.GroupStreams {
		s.routes.AddStream(path, routes.GroupStream, routes.Rule{Permission: svc.BatchPermission, Also: svc.GroupPermission})
	}
	front.Streams(svc.GroupStreams, batch.Options{Log: s.log})
}
