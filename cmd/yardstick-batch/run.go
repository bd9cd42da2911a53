package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
)

var (
	errUsage = errors.New("usage")
	// errHelp: -help was asked for, and the usage printed on stdout.
	errHelp = errors.New("help requested")
	// errSomeFailed: every record was answered, and some not with 200.
	errSomeFailed = errors.New("some records failed")
)

// config is the command line.
type config struct {
	url          string
	token        string
	clientID     string
	clientSecret string
	in, out      string // formats: ndjson or csv
	output       string // file; "" = stdout
	input        string // file; "" or "-" = stdin
	path         string // the path of CSV rows without a path column
	parallel     int
	window       int // records sent and not yet answered, per stream
	retries      int // reconnections in a row without an answer before giving up
	backoff      time.Duration
	progress     string // auto, on, off
	resume       bool   // append to -o after the records an earlier run answered
}

func parse(args []string, stdout, stderr io.Writer) (config, error) {
	c := config{}
	fs := flag.NewFlagSet("yardstick-batch", flag.ContinueOnError)
	var said bytes.Buffer // the flag package's words: the usage goes to stdout when asked for
	fs.SetOutput(&said)
	fs.StringVar(&c.url, "url", "", "the batch endpoint, e.g. http://localhost:8080/api/score/batch")
	fs.StringVar(&c.token, "token", os.Getenv("YARDSTICK_TOKEN"), "bearer token (default $YARDSTICK_TOKEN)")
	fs.StringVar(&c.clientID, "client-id", "", "client id, to get a token from the service's /authToken")
	fs.StringVar(&c.clientSecret, "client-secret", os.Getenv("YARDSTICK_CLIENT_SECRET"), "client secret (default $YARDSTICK_CLIENT_SECRET)")
	fs.StringVar(&c.in, "in", "", "input format: ndjson or csv (default from the file's extension, else ndjson)")
	fs.StringVar(&c.out, "out", "ndjson", "output format: ndjson or csv")
	fs.StringVar(&c.output, "o", "", "output file (default stdout)")
	fs.StringVar(&c.path, "path", "", "the path of CSV rows that have no path column, e.g. /api/forecast/reading")
	fs.IntVar(&c.parallel, "parallel", 1, "streams to spread the records over")
	fs.IntVar(&c.window, "window", 256, "records sent and not yet answered, per stream")
	fs.IntVar(&c.retries, "retries", 5, "reconnections in a row without an answer before giving up")
	fs.DurationVar(&c.backoff, "backoff", 500*time.Millisecond, "first wait before reconnecting (doubles, at most 30s)")
	fs.StringVar(&c.progress, "progress", "auto", "progress on stderr: auto (when it is a terminal), on, off")
	fs.BoolVar(&c.resume, "resume", false, "carry on an earlier run cut short: skip the records its -o file answered and append the rest")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: yardstick-batch -url URL [-token T | -client-id ID -client-secret S] [flags] [file]")
		fmt.Fprint(fs.Output(), usageText)
		fs.PrintDefaults()
	}
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		_, _ = stdout.Write(said.Bytes())
		return c, errHelp
	case err != nil:
		_, _ = stderr.Write(said.Bytes())
		return c, fmt.Errorf("%w: %v", errUsage, err)
	}
	switch fs.NArg() {
	case 0:
	case 1:
		c.input = fs.Arg(0)
	default:
		return c, fmt.Errorf("%w: one input file at most, got %q", errUsage, fs.Args())
	}
	if c.in == "" {
		c.in = "ndjson"
		if strings.EqualFold(filepath.Ext(c.input), ".csv") {
			c.in = "csv"
		}
	}
	bad := c.problems()
	if len(bad) > 0 {
		return c, fmt.Errorf("%w: %s", errUsage, strings.Join(bad, "; "))
	}
	return c, nil
}

// usageText is -help's, between the synopsis and the flags.
const usageText = `
Sends the records of file (default stdin) to a batch endpoint and writes the answers in input
order, streaming: any number of records in constant memory.

Input (-in, default from the file's extension): ndjson, one record {"id","path","body"} a line;
or csv, a header row naming an id column, a path column (or -path for every row) and either a
body column holding the request's JSON or one column per request field (a cell that is a JSON
number, boolean, array or object is that value, any other a string; an empty cell is no field).

Output (-out): ndjson, the service's answer lines verbatim and the summary last; or csv, the
columns line,id,status,body,ability,abilityDisplay,uncertainty,framework,percentile,
exceptionType,error: body the whole answer, the measure's fields flattened into their columns
(empty when the answer has none), exceptionType and error (its validation problems, or its
additionalInfo) for a record that failed.

Exit status: 0 every record answered 200; 1 every record answered, some not 200; 2 the command
line is wrong; 3 the stream could not run to its end (no token, the service unreachable or
refusing the stream after -retries, the input unreadable, the output unwritable, interrupted).
`

// problems lists what is wrong with the command line, every problem at once.
func (c config) problems() []string {
	var bad []string
	for _, check := range []struct {
		wrong bool
		say   string
	}{
		{!validURL(c.url), "-url must be an http(s) URL of a batch endpoint"},
		{c.in != "ndjson" && c.in != "csv", "-in must be ndjson or csv"},
		{c.out != "ndjson" && c.out != "csv", "-out must be ndjson or csv"},
		{c.token == "" && (c.clientID == "" || c.clientSecret == ""), "give -token, or -client-id and -client-secret"},
		{c.parallel < 1 || c.parallel > 64, "-parallel must be 1 to 64"},
		{c.window < 1, "-window must be at least 1"},
		{c.retries < 0, "-retries must be at least 0"},
		{c.resume && c.output == "", "-resume needs the -o file of the earlier run"},
		{c.progress != "auto" && c.progress != "on" && c.progress != "off", "-progress must be auto, on or off"},
	} {
		if check.wrong {
			bad = append(bad, check.say)
		}
	}
	return bad
}

// validURL reports whether raw is an absolute http(s) URL with a host.
func validURL(raw string) bool {
	u, err := url.Parse(raw)
	return raw != "" && err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// run is the whole command: read, send over the streams, write in input order.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	c, err := parse(args, stdout, stderr)
	if err != nil {
		return err
	}
	in := stdin
	if c.input != "" && c.input != "-" {
		f, err := os.Open(c.input)
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}
	out := stdout
	var outFile *os.File
	var before done
	switch {
	case c.resume:
		if outFile, before, err = openResumed(c); err != nil {
			return err
		}
		defer outFile.Close()
		if before.complete {
			return failedOf(before.records, before.ok) // the earlier run finished: its summary is there
		}
		out = outFile
	case c.output != "":
		if outFile, err = os.Create(c.output); err != nil {
			return err
		}
		defer outFile.Close()
		out = outFile
	}
	client := &http.Client{} // no timeout: a stream lasts as long as its records
	tokens := newTokens(c, client)
	if _, err := tokens.get(ctx, ""); err != nil {
		return err
	}

	var st stats
	g, ctx := errgroup.WithContext(ctx)
	order := make(chan *job, c.parallel*c.window+c.parallel) // input order, bounded
	streams := make([]*stream, c.parallel)
	for i := range streams {
		streams[i] = newStream(c, client, tokens, &st)
		s := streams[i]
		g.Go(func() error { return s.run(ctx) })
	}
	g.Go(func() error {
		defer close(order)
		defer func() {
			for _, s := range streams {
				close(s.in)
			}
		}()
		return readInput(ctx, c, in, before.records, func(j *job) error {
			select {
			case order <- j:
			case <-ctx.Done():
				return context.Cause(ctx)
			}
			if j.local {
				close(j.done)
				return nil
			}
			// Round robin: the writer takes stream k's answers in the order it sent them.
			select {
			case streams[j.seq%len(streams)].in <- j:
			case <-ctx.Done():
				return context.Cause(ctx)
			}
			return nil
		}, &st)
	})
	var tally counts
	g.Go(func() error { return writeOutput(ctx, c, out, order, before, &st, &tally) })
	stopProgress := startProgress(c, stderr, &st)
	err = g.Wait()
	stopProgress()
	if err != nil {
		return err
	}
	if outFile != nil {
		if err := outFile.Close(); err != nil {
			return err
		}
	}
	return failedOf(tally.records, tally.ok)
}

// failedOf is errSomeFailed when not every record answered was answered 200.
func failedOf(records, ok int) error {
	if records != ok {
		return fmt.Errorf("%w: %d of %d records were not answered 200 (see their status in the output)", errSomeFailed, records-ok, records)
	}
	return nil
}

// isTerminal says whether w is a character device (a terminal), without a dependency.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

func startProgress(c config, stderr io.Writer, st *stats) (stop func()) {
	if c.progress == "off" || (c.progress == "auto" && !isTerminal(stderr)) {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	start := time.Now()
	show := func(end string) {
		answered := st.ok.Load() + st.failed.Load()
		rate := float64(answered) / max(time.Since(start).Seconds(), 1e-3)
		fmt.Fprintf(stderr, "\r\033[K%d read, %d sent, %d answered (%d ok, %d failed), %d reconnections, %.0f/s%s",
			st.read.Load(), st.sent.Load(), answered, st.ok.Load(), st.failed.Load(), st.reconnects.Load(), rate, end)
	}
	go func() {
		defer close(finished)
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				show("")
			case <-done:
				show("\n")
				return
			}
		}
	}()
	return func() { close(done); <-finished }
}
