package measure

import (
	"bytes"
	"fmt"
)

// demoGrowthComment heads the demonstration bundle's growth_norms.csv.
const demoGrowthComment = `SYNTHETIC demonstration growth norms: fitted by yardstick-calibrate growth-norms (BuildGrowthNorms,
at least 300 students a model) from the seeded simulated cohorts of pkg/measure/internal/democontent
(grades 3-8, end of year to end of year). Not real norms: do not use them for real students.`

// DemoGrowthNorms fits the demonstration bundle's growth norms from the simulated cohorts'
// measures file (internal/democontent), as yardstick-calibrate growth-norms does, and returns
// the growth_norms.csv. The demo generator writes it; a test holds the committed file to it.
func DemoGrowthNorms(measures []byte) ([]byte, error) {
	ms, err := ReadGrowthMeasures(bytes.NewReader(measures), "demo growth measures", []string{"lexile", "quantile"})
	if err != nil {
		return nil, err
	}
	rep, models, err := BuildGrowthNorms(ms, minGrowthCohort, nil)
	if err != nil {
		return nil, err
	}
	if len(rep.Skipped) > 0 {
		return nil, fmt.Errorf("demo growth norms: %d models skipped, the first: %s", len(rep.Skipped), rep.Skipped[0].Reason)
	}
	return WriteGrowthNorms(models, demoGrowthComment), nil
}
