// Command growthchart draws a growth percentile (POST /api/forecast/growth) as an SVG chart, the
// way a teacher report shows one: the student's prior measure(s) and current measure at their
// school times, the cuts answered as a fan from the latest prior to the current school time, and
// the student's SGP. It reads the request and the service's answer as JSON files, so the picture
// in docs/examples.md is made from a real answer (`make docs` runs it). Standard library only.
//
//	growthchart -request growth-request.json -answer growth-answer.json -o docs/growth.svg
package main

import (
	"fmt"

	"github.com/yardstick-dev/yardstick/scripts/internal/chart"
)

func main() {
	chart.Main("growthchart", "the growth request (JSON) whose answer is drawn: its measures are the points", run)
}

func run(reqPath, ansPath, outPath string) error {
	return chart.Run(reqPath, ansPath, outPath, drawable, draw)
}

// drawable refuses a request and answer the chart cannot be drawn from.
func drawable(reqPath, ansPath string, req request, ans answer) error {
	switch {
	case len(req.Priors) == 0:
		return fmt.Errorf("%s: no priors", reqPath)
	case ans.Sgp < 1 || ans.Sgp > 99:
		return fmt.Errorf("%s: sgp %d is not a growth percentile 1 … 99", ansPath, ans.Sgp)
	case len(ans.Cuts) == 0:
		return fmt.Errorf("%s: no cuts to draw as a fan (ask for percentiles)", ansPath)
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
