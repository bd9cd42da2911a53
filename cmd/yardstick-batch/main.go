// Command yardstick-batch sends a file of records to a Yardstick batch endpoint
// (POST /api/score/batch or /api/forecast/batch) and writes the answers in input order: records
// from NDJSON ({"id","path","body"} a line) or CSV (an id column, a path column or -path, and a
// body column holding the request's JSON or one column per request field), answers as NDJSON
// (the service's answer lines, verbatim) or CSV (line, id, status, body, then the answer's measure
// flattened into columns: ability, abilityDisplay, uncertainty, framework, percentile, and
// exceptionType and error for a record that failed). It streams: memory
// stays the same whatever the file's size. A dropped connection is resumed: the answers come
// back in order, so the client knows which records were answered and sends the rest again on
// a new stream. -parallel N spreads the records over N streams, answers still in input order.
// A run cut short altogether (the laptop closed) is carried on with -resume and the same -o
// file: the answers in it are the first records of the input, so those are skipped.
//
//	yardstick-batch -url http://localhost:8080/api/score/batch -client-id demo \
//	    -client-secret demo-secret records.ndjson > answers.ndjson
//
// Exit status: 0 when every record was answered 200; 1 when every record was answered and some
// not with 200 (the output is complete: see each one's status); 2 when the command line is
// wrong; 3 when the stream could not run to its end (no token, the service unreachable or
// refusing the stream after -retries, the input unreadable, the output unwritable, interrupted).
// -help prints the usage and exits 0.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// Exit statuses (the package comment and docs/api.md say what each means).
const (
	exitOK        = 0
	exitFailed    = 1 // some records failed; every one was answered
	exitUsage     = 2
	exitCannotRun = 3
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	code := exitCode(err)
	if code != exitOK {
		fmt.Fprintf(os.Stderr, "yardstick-batch: %v\n", err)
	}
	os.Exit(code)
}

// exitCode is the exit status of run's error.
func exitCode(err error) int {
	switch {
	case err == nil, errors.Is(err, errHelp):
		return exitOK
	case errors.Is(err, errSomeFailed):
		return exitFailed
	case errors.Is(err, errUsage):
		return exitUsage
	default:
		return exitCannotRun
	}
}
