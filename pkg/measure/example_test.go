package measure_test

import (
	"fmt"

	"github.com/yardstick-dev/yardstick/pkg/measure"
)

// Scoring a test without a prior: the standard (maximum-likelihood) estimate.
func ExampleFramework_Standard() {
	lexile, _ := measure.Demo().Framework("lexile")
	test := measure.Test{
		Items:   []measure.Difficulty{{Measure: 500, Count: 10}, {Measure: 700, Count: 10}},
		Correct: 12,
	}
	est, err := lexile.Standard(test)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(measure.Round(est.Ability), measure.Round(est.Uncertainty), lexile.Display(est.Ability))
	// Output: 481 85 480L
}

// Scoring items from the bank with a prior moved forward by the time since it was measured.
func ExampleFramework_Bayes() {
	bank := measure.Demo()
	lexile, _ := bank.Framework("lexile")
	form, _ := bank.Form("FORM-READ-G3")
	var answers []measure.Answer
	for i, id := range form.Items {
		item, _ := bank.Item(id)
		answers = append(answers, measure.Answer{Item: item, Correct: i%3 != 0}) // 20 of 30 right
	}
	prior := lexile.Grow(measure.Normal{Mean: 450, SD: 90}, 120) // last measured 120 days ago
	est, err := lexile.Bayes(measure.TestOf(answers), prior)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("prior %.0f±%.0f -> %d±%d %s\n", prior.Mean, prior.SD,
		measure.Round(est.Ability), measure.Round(est.Uncertainty), lexile.Display(est.Ability))
	// Output: prior 509±100 -> 476±60 475L
}

// A forecast of next year's test with three performance levels.
func ExampleFramework_Forecast() {
	lexile, _ := measure.Demo().Framework("lexile")
	fc := lexile.Forecast(measure.Normal{Mean: 640, SD: 60}, 365, 40, []float64{600, 800})
	fmt.Printf("%.1f ± %.1f (%s)\n", fc.Ability, fc.Uncertainty, lexile.Display(fc.Ability))
	for _, p := range fc.Probabilities {
		fmt.Printf("%.4f ", p)
	}
	fmt.Println()
	// Output:
	// 748.9 ± 104.0 (750L)
	// 0.0762 0.6123 0.3115
}

// Display rules: rounded half up to 5, capped, BR/EM for values at or below zero.
func ExampleFramework_Display() {
	bank := measure.Demo()
	lexile, _ := bank.Framework("lexile")
	quantile, _ := bank.Framework("quantile")
	fmt.Println(lexile.Display(572.5), lexile.Display(-147.5), lexile.Display(0), lexile.Display(-900), lexile.Display(2400))
	fmt.Println(lexile.DisplayGrade(1000, 0), quantile.Display(-42), quantile.Display(1234))
	// Output:
	// 575L BR145L 0L BR400L 1825L
	// 850L EM40Q 1235Q
}

// A scale score from an external test, linked to the lexile scale and combined with a prior.
func ExampleLink_Measure() {
	bank := measure.Demo()
	link, _ := bank.Link("STATE-READ-2026")
	obs, err := link.Measure(500, 12)
	if err != nil {
		fmt.Println(err)
		return
	}
	post := measure.Update(measure.Normal{Mean: 650, SD: 100}, obs)
	fmt.Printf("%.0f±%.1f -> %.0f±%.1f\n", obs.Mean, obs.SD, post.Mean, post.SD)
	_, err = link.Measure(900, 12)
	fmt.Println(err)
	// Output:
	// 620±56.2 -> 627±49.0
	// scaleScore 900 is outside the link table's range [200, 800]
}
