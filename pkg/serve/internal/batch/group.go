package batch

import (
	"context"
	"errors"
	"io"
	"net/http"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/quota"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
)

// GroupStream is one group call in progress: the service's work on each entry, then the group's.
type GroupStream interface {
	// Entry validates one entry line, adds it to the group and returns its answer as the unary
	// group call answers the entry; an error (a status error) is the line's answer and leaves it out.
	Entry(ctx context.Context, line []byte) (answer []byte, err error)
	// Group is the aggregate as the unary call answers it, called once, if an entry was added.
	Group(ctx context.Context) (group []byte, err error)
}

// OpenGroup validates the settings line (nil: the body is empty) and starts the group; an error
// answers the whole request.
type OpenGroup func(ctx context.Context, settings []byte) (GroupStream, error)

// GroupCounts are what one group stream did, for its log line and metrics.
type GroupCounts struct {
	Lines    int  // lines read, blank ones included
	Entries  int  // entries in the group
	Invalid  int  // entry lines answered with an error and left out
	Complete bool // the body ended and the group line went out
}

// ServeGroup runs one group stream (docs/api.md). Entries are handled one at a time in input
// order (the group's sums depend on it): Workers and InFlight are not used.
func ServeGroup(parent context.Context, w http.ResponseWriter, r io.Reader, open OpenGroup, o Options) (GroupCounts, error) {
	o = o.withDefaults()
	c := newConn(w, o.Idle)
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(parent))
	defer cancel(nil)
	defer c.detach(parent, cancel)()
	var counts GroupCounts
	if !c.deadlines {
		rpcerr.WriteStatus(w, http.StatusInternalServerError)
		return counts, ErrNoDeadlines
	}
	defer func() { c.release(counts.Complete) }()
	defer c.stopOn(ctx)()
	defer c.endReadsOn(ctx, o.Revoked)()
	b := &body{ctx: ctx, r: r, c: c}
	lr := NewLineReader(b, o.MaxLine)

	settings, num, tooLong, err := lr.nextNonBlank()
	counts.Lines = num
	var ended *endedError
	switch {
	case errors.As(err, &ended): // before the head: the answer a call would get now is the response
		rpcerr.Write(w, rpcerr.ToHTTP(ended.err))
		return counts, err
	case errors.Is(err, io.EOF): // the service says what the settings line must hold
		settings = nil
	case errors.Is(err, ErrIdle):
		rpcerr.WriteStatus(w, http.StatusRequestTimeout)
		return counts, err
	case err != nil:
		return counts, err
	case tooLong:
		rpcerr.Write(w, rpcerr.LineTooLarge(int64(o.MaxLine)))
		return counts, nil
	}
	g, err := open(ctx, settings)
	if err != nil {
		rpcerr.Write(w, rpcerr.ToHTTP(err))
		return counts, nil
	}

	b.flushFirst = true
	if err := c.head(); err != nil {
		return counts, err
	}
	var buf []byte
	tooLarge := lineTooLarge(o.MaxLine)
	for {
		line, num, tooLong, err := lr.nextNonBlank()
		counts.Lines = num
		if errors.Is(err, io.EOF) {
			break
		}
		if errors.As(err, &ended) { // no group for a caller whose rights are gone
			return counts, c.writeEnd(ended)
		}
		if err != nil {
			_ = c.flush()
			return counts, err
		}
		if err := quota.Pace(ctx); err != nil { // the client's rate: an entry waits, never refused
			return counts, err
		}
		status, answer, err := http.StatusRequestEntityTooLarge, tooLarge, BOMProblem(line)
		if !tooLong && err == nil {
			answer, err = g.Entry(ctx, line)
		}
		switch {
		case tooLong:
			counts.Invalid++
		case err != nil:
			counts.Invalid++
			status, answer = ErrorAnswer(err)
		default:
			counts.Entries++
			status, answer = checkAnswer(http.StatusOK, answer) // an entry that is not JSON: our fault
		}
		if status == http.StatusOK {
			buf = append(append(buf[:0], answer...), '\n')
		} else {
			buf = appendLineAnswer(buf[:0], num, status, answer)
		}
		if err := c.write(buf); err != nil {
			return counts, err
		}
		if ctx.Err() != nil {
			return counts, context.Cause(ctx)
		}
	}
	buf = append(buf[:0], `{"group":`...)
	if counts.Entries == 0 {
		buf = append(buf, "null"...)
	} else {
		group, err := g.Group(ctx)
		if err != nil {
			// A fault of ours (a group that is not finite): the stream ends without its last line.
			_ = c.flush()
			return counts, err
		}
		_, group = checkAnswer(http.StatusOK, group)
		buf = append(buf, group...)
	}
	err = c.last(append(buf, "}\n"...))
	counts.Complete = err == nil
	return counts, err
}
