// Command growthchart draws a growth percentile (POST /api/forecast/growth) as an SVG chart, the
// way a teacher report shows one: the student's prior measure(s) and current measure at their
// school times, the cuts answered as a fan from the latest prior to the current school time, and
// the student's SGP. It reads the request and the service's answer as JSON files, so the picture
// in docs/examples.md is made from a real answer (`make docs` runs it). Standard library only.
//
//	growthchart -request growth-request.json -answer growth-answer.json -o docs/growth.svg
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	fs := flag.NewFlagSet("growthchart", flag.ContinueOnError)
	reqPath := fs.String("request", "", "the growth request (JSON) whose answer is drawn: its measures are the points")
	ansPath := fs.String("answer", "", "the service's answer to that request (JSON)")
	outPath := fs.String("o", "", "the SVG file to write (default: stdout)")
	switch err := fs.Parse(os.Args[1:]); {
	case err == flag.ErrHelp:
		return
	case err != nil:
		os.Exit(2)
	}
	if err := run(*reqPath, *ansPath, *outPath); err != nil {
		fmt.Fprintln(os.Stderr, "growthchart:", err)
		os.Exit(1)
	}
}

func run(reqPath, ansPath, outPath string) error {
	if reqPath == "" || ansPath == "" {
		return fmt.Errorf("-request and -answer are required")
	}
	var req request
	if err := readJSON(reqPath, &req); err != nil {
		return err
	}
	var ans answer
	if err := readJSON(ansPath, &ans); err != nil {
		return err
	}
	switch {
	case len(req.Priors) == 0:
		return fmt.Errorf("%s: no priors", reqPath)
	case ans.Sgp < 1 || ans.Sgp > 99:
		return fmt.Errorf("%s: sgp %d is not a growth percentile 1 … 99", ansPath, ans.Sgp)
	case len(ans.Cuts) == 0:
		return fmt.Errorf("%s: no cuts to draw as a fan (ask for percentiles)", ansPath)
	}
	var out io.Writer = os.Stdout
	if outPath != "" {
		f, err := os.Create(outPath)
		if err != nil {
			return err
		}
		defer f.Close()
		out = f
	}
	return draw(out, req, ans)
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

// measure is a measure at a school time, as the request gives the current one and its priors.
type measure struct {
	Grade      int     `json:"grade"`
	TimeOfYear string  `json:"timeOfYear"`
	Ability    float64 `json:"ability"`
}

type request struct {
	measure
	Priors []measure `json:"priors"`
}

type cut struct {
	Percentile     int     `json:"percentile"`
	Ability        float64 `json:"ability"`
	AbilityDisplay string  `json:"abilityDisplay"`
}

type answer struct {
	Sgp      int `json:"sgp"`
	SgpOrder int `json:"sgpOrder"`
	Cuts     []cut
	Priors   []struct {
		Grade      int    `json:"grade"`
		TimeOfYear string `json:"timeOfYear"`
	} `json:"priors"`
	Framework string `json:"framework"`
}
