// Command planchart draws a growth plan (POST /api/forecast/plan) as an SVG chart, the way a
// partner shows one: the expected measure at each school time with its 80% band, the target, the
// probability of being at or above it at each point, and the day it is first reached. It reads
// the request and the service's answer as JSON files, so the picture in docs/examples.md is made
// from a real answer (`make docs` runs it). Standard library only.
//
//	planchart -request plan-request.json -answer plan-answer.json -o docs/plan.svg
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	fs := flag.NewFlagSet("planchart", flag.ContinueOnError)
	reqPath := fs.String("request", "", "the plan request (JSON) whose answer is drawn: its target is the line to reach")
	ansPath := fs.String("answer", "", "the service's answer to that request (JSON)")
	outPath := fs.String("o", "", "the SVG file to write (default: stdout)")
	switch err := fs.Parse(os.Args[1:]); {
	case err == flag.ErrHelp:
		return
	case err != nil:
		os.Exit(2)
	}
	if err := run(*reqPath, *ansPath, *outPath); err != nil {
		fmt.Fprintln(os.Stderr, "planchart:", err)
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
	if req.Target == nil {
		return fmt.Errorf("%s: no target", reqPath)
	}
	if len(ans.Trajectory) == 0 {
		return fmt.Errorf("%s: an empty trajectory has nothing to draw", ansPath)
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

type request struct {
	PriorAbility     float64  `json:"priorAbility"`
	PriorUncertainty float64  `json:"priorUncertainty"`
	Target           *float64 `json:"target"`
	Probability      *float64 `json:"probability"`
	Grade            int      `json:"grade"`
	TimeOfYear       string   `json:"timeOfYear"`
}

type point struct {
	Grade          int     `json:"grade"`
	TimeOfYear     string  `json:"timeOfYear"`
	ElapsedDays    float64 `json:"elapsedDays"`
	Ability        float64 `json:"ability"`
	AbilityDisplay string  `json:"abilityDisplay"`
	Uncertainty    float64 `json:"uncertainty"`
	Probability    float64 `json:"probability"`
}

type answer struct {
	Trajectory []point `json:"trajectory"`
	Reach      *point  `json:"reach"`
	Framework  string  `json:"framework"`
}
