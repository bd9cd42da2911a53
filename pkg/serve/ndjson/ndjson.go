// Package ndjson is the NDJSON batch format as the frame's engine (internal/batch) reads and
// answers it, for the yardstick-batch client: it answers a line the service would refuse the same
// way without sending it, and its tests serve with the engine itself. Every name is the engine's.
package ndjson

import "github.com/yardstick-dev/yardstick/pkg/serve/internal/batch"

// DefaultMaxLine is the longest record line a service takes, in bytes without its newline.
const DefaultMaxLine = batch.DefaultMaxLine

type (
	// DispatcherFunc answers one record: its status and answer body.
	DispatcherFunc = batch.DispatcherFunc
	// Options are a stream's limits; the zero value takes the engine's defaults.
	Options = batch.Options
)

var (
	// NewLineReader reads r in lines of at most max bytes.
	NewLineReader = batch.NewLineReader
	// Blank reports whether the engine leaves a line unanswered.
	Blank = batch.Blank
	// ParseRecord reads a line as the engine does; its error is what ErrorAnswer answers.
	ParseRecord = batch.ParseRecord
	// ErrorAnswer is the status and body the service answers err with.
	ErrorAnswer = batch.ErrorAnswer
	// TooLargeAnswer is the body of a line over the limit.
	TooLargeAnswer = batch.TooLargeAnswer
	// Serve answers a stream of records with d, as a service's batch route does.
	Serve = batch.Serve
)
