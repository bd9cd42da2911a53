// Package chart is what the chart commands (growthchart, planchart) share: their command line (a
// request and the service's answer as JSON files, the SVG file to write), and the axis helpers.
// Each command owns its request and answer types, what makes them drawable, and its picture.
package chart

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
)

// Main is a chart command's main: -request, -answer and -o parsed from the arguments, then run;
// exit 2 on a bad command line, 1 when run fails.
func Main(name, requestUsage string, run func(reqPath, ansPath, outPath string) error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	reqPath := fs.String("request", "", requestUsage)
	ansPath := fs.String("answer", "", "the service's answer to that request (JSON)")
	outPath := fs.String("o", "", "the SVG file to write (default: stdout)")
	switch err := fs.Parse(os.Args[1:]); {
	case errors.Is(err, flag.ErrHelp):
		return
	case err != nil:
		os.Exit(2)
	}
	if err := run(*reqPath, *ansPath, *outPath); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
}

// Run reads the request and the answer, has check refuse what cannot be drawn (its errors name
// the file at fault), and draws them to outPath, or to stdout when it is "".
func Run[Req, Ans any](reqPath, ansPath, outPath string, check func(reqPath, ansPath string, req Req, ans Ans) error, draw func(io.Writer, Req, Ans) error) (err error) {
	if reqPath == "" || ansPath == "" {
		return fmt.Errorf("-request and -answer are required")
	}
	var req Req
	if err := readJSON(reqPath, &req); err != nil {
		return err
	}
	var ans Ans
	if err := readJSON(ansPath, &ans); err != nil {
		return err
	}
	if err := check(reqPath, ansPath, req, ans); err != nil {
		return err
	}
	if outPath == "" {
		return draw(os.Stdout, req, ans)
	}
	f, err := os.Create(outPath)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, f.Close()) }() // a write the close reports failed is a failed chart
	return draw(f, req, ans)
}

func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// Sep is the separator before the i-th point of an SVG list: none before the first.
func Sep(i int) string {
	if i == 0 {
		return ""
	}
	return " "
}

// NiceStep rounds a raw grid step up to 1, 2 or 5 times a power of ten.
func NiceStep(raw float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

// GradeName is the grade as a school says it: K, then 1 to 12.
func GradeName(g int) string {
	if g == 0 {
		return "grade K"
	}
	return fmt.Sprintf("grade %d", g)
}
