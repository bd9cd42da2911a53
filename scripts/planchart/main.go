// Command planchart draws a growth plan (POST /api/forecast/plan) as an SVG chart, the way a
// partner shows one: the expected measure at each school time with its 80% band, the target, the
// probability of being at or above it at each point, and the day it is first reached. It reads
// the request and the service's answer as JSON files, so the picture in docs/examples.md is made
// from a real answer (`make docs` runs it). Standard library only.
//
//	planchart -request plan-request.json -answer plan-answer.json -o docs/plan.svg
package main

import (
	"fmt"

	"github.com/yardstick-dev/yardstick/scripts/internal/chart"
)

func main() {
	chart.Main("planchart", "the plan request (JSON) whose answer is drawn: its target is the line to reach", run)
}

func run(reqPath, ansPath, outPath string) error {
	return chart.Run(reqPath, ansPath, outPath, drawable, draw)
}

// drawable refuses a request and answer the chart cannot be drawn from.
func drawable(reqPath, ansPath string, req request, ans answer) error {
	if req.Target == nil {
		return fmt.Errorf("%s: no target", reqPath)
	}
	if len(ans.Trajectory) == 0 {
		return fmt.Errorf("%s: an empty trajectory has nothing to draw", ansPath)
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
