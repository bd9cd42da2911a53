// Command yardstick-batch sends a file of records to a Yardstick batch endpoint
// (POST /api/score/batch or /api/forecast/batch) and writes the answers in input order: records
// from NDJSON ({"id","path","body"} a line) or CSV (an id column, a path column or -path, and a
// body column holding the request's JSON or one column per request field), answers as NDJSON
// (the service's answer lines, verbatim) or CSV (line, id, status, body). It streams: memory
// stays the same whatever the file's size. A dropped connection is resumed: the answers come
// back in order, so the client knows which records were answered and sends the rest again on
// a new stream. -parallel N spreads the records over N streams, answers still in input order.
// A run cut short altogether (the laptop closed) is carried on with -resume and the same -o
// file: the answers in it are the first records of the input, so those are skipped.
//
//	yardstick-batch -url http://localhost:8080/api/score/batch -client-id demo \
//	    -client-secret demo-secret records.ndjson > answers.ndjson
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	switch {
	case err == nil:
	case errors.Is(err, errUsage):
		fmt.Fprintf(os.Stderr, "yardstick-batch: %v\n", err)
		os.Exit(2)
	default:
		fmt.Fprintf(os.Stderr, "yardstick-batch: %v\n", err)
		os.Exit(1)
	}
}
