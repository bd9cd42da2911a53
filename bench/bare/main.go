// Command bare is the reference of make bench-e2e: the 40-item difficulties Bayes request served
// by net/http + encoding/json into plain structs and the same pkg/measure calls, with no auth,
// logging, metrics or validation. The JSON front is measured against what this does.
package main

import (
	"encoding/json"
	"net/http"
	"os"

	"github.com/yardstick-dev/yardstick/pkg/measure"
)

type request struct {
	Items []struct {
		Difficulty float64 `json:"difficulty"`
		Count      *int    `json:"count"`
	} `json:"items"`
	NumberCorrect    int     `json:"numberCorrect"`
	Framework        string  `json:"framework"`
	PriorAbility     float64 `json:"priorAbility"`
	PriorUncertainty float64 `json:"priorUncertainty"`
	ElapsedDays      float64 `json:"elapsedDays"`
}

type answer struct {
	Ability        int    `json:"ability"`
	AbilityDisplay string `json:"abilityDisplay"`
	Uncertainty    int    `json:"uncertainty"`
	Framework      string `json:"framework"`
	APIVersion     string `json:"apiVersion"`
}

func main() {
	bundle := measure.Demo()
	http.HandleFunc("POST /api/score/items/difficulties/bayes", func(w http.ResponseWriter, r *http.Request) {
		var req request
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fw, _ := bundle.Framework(req.Framework)
		test := measure.Test{Correct: req.NumberCorrect}
		for _, it := range req.Items {
			n := 1
			if it.Count != nil {
				n = *it.Count
			}
			test.Items = append(test.Items, measure.Difficulty{Measure: it.Difficulty, Count: n})
		}
		prior := fw.Grow(measure.Normal{Mean: req.PriorAbility, SD: req.PriorUncertainty}, req.ElapsedDays)
		est, _ := fw.Bayes(test, prior)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(answer{measure.Round(est.Ability), fw.Display(est.Ability), measure.Round(est.Uncertainty), fw.Name, "dev"})
	})
	_ = http.ListenAndServe(os.Args[1], nil)
}
