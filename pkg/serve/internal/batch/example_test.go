package batch_test

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/batch"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
)

// How the frame is to wire a batch route. allowed, admit and unary stand for the frame's own
// token check, admission and in-process unary call (the same chain a unary request meets).
func ExampleServe() {
	var (
		allowed = func(r *http.Request, permission string) error { return nil }
		admit   = func(ctx context.Context) (release func(), err error) { return func() {}, nil }
		unary   = func(ctx context.Context, path string, body []byte) (int, []byte) {
			// Authorise the path's own permission with the stream's token, then run the unary
			// handler and encode its answer or its error exactly as the JSON front does.
			return http.StatusNotFound, rpcerr.JSON(rpcerr.BodyFor(http.StatusNotFound, nil))
		}
		log = slog.Default()
	)
	http.HandleFunc("POST /api/score/batch", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Content-Type") != "application/x-ndjson" {
			rpcerr.WriteStatus(w, http.StatusUnsupportedMediaType)
			return
		}
		if err := allowed(r, "score:batch"); err != nil { // 401 or 403, before any line
			rpcerr.Write(w, rpcerr.ToHTTP(err))
			return
		}
		release, err := admit(r.Context()) // one admission for the stream's life, else 503
		if err != nil {
			rpcerr.Write(w, rpcerr.ToHTTP(err))
			return
		}
		defer release()
		start := time.Now()
		counts, err := batch.Serve(r.Context(), w, r.Body, batch.DispatcherFunc(unary), batch.Options{Log: log})
		log.InfoContext(r.Context(), "batch stream", "path", r.URL.Path, "lines", counts.Lines,
			"records", counts.Records, "ok", counts.OK, "failed", counts.Failed, "complete", counts.Complete,
			"peak_held_bytes", counts.PeakHeld, "duration", time.Since(start), "error", err)
	})
}
