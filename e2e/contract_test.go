package e2e

import (
	"encoding/json"
	"testing"

	"github.com/yardstick-dev/yardstick/pkg/measure"
	"github.com/yardstick-dev/yardstick/proto/openapi"
)

// schema is the part of a JSON schema this test reads.
type schema struct {
	Properties map[string]*schema `json:"properties"`
	Items      *schema            `json:"items"`
	OneOf      []*schema          `json:"oneOf"`
	Minimum    *float64           `json:"minimum"`
	Maximum    *float64           `json:"maximum"`
}

// TestDocumentedLimitsAreEnforcedOnes: the ranges the documents state (written in overlay.yaml)
// are pkg/measure's domain bounds, so the documents cannot drift from what the services check
// (each service holds the list sizes to its own limits: TestDocumentedSizes).
func TestDocumentedLimitsAreEnforcedOnes(t *testing.T) {
	t.Parallel()
	for _, service := range []string{"scoring", "forecast"} {
		t.Run(service, func(t *testing.T) {
			t.Parallel()
			ranges := map[string][2]float64{
				"priorAbility":     {-measure.MaxAbsMeasure, measure.MaxAbsMeasure},
				"readerAbility":    {-measure.MaxAbsMeasure, measure.MaxAbsMeasure},
				"textMeasures[]":   {-measure.MaxAbsMeasure, measure.MaxAbsMeasure},
				"difficulty":       {-measure.MaxAbsMeasure, measure.MaxAbsMeasure},
				"steps[]":          {-measure.MaxAbsMeasure, measure.MaxAbsMeasure},
				"cutLevels[]":      {-measure.MaxAbsMeasure, measure.MaxAbsMeasure},
				"priorUncertainty": {0, measure.MaxUncertainty},
				"scaleSem":         {0, measure.MaxUncertainty},
				"testUncertainty":  {0, measure.MaxUncertainty},
				"elapsedDays":      {0, measure.MaxElapsedDays},
			}

			raw, err := openapi.Document(service, "dev")
			if err != nil {
				t.Fatal(err)
			}
			var doc struct {
				Components struct {
					Schemas map[string]*schema `json:"schemas"`
				} `json:"components"`
			}
			if err := json.Unmarshal(raw, &doc); err != nil {
				t.Fatal(err)
			}
			checked := 0
			for name, s := range doc.Components.Schemas {
				for prop, p := range s.Properties {
					if len(p.OneOf) > 0 {
						p = p.OneOf[0] // the generated shape carries the range
					}
					if want, ok := ranges[prop]; ok {
						checked++
						if p.Minimum == nil || p.Maximum == nil || *p.Minimum != want[0] || *p.Maximum != want[1] {
							t.Errorf("%s.%s: got [%v, %v]; want [%v, %v]", name, prop, deref(p.Minimum), deref(p.Maximum), want[0], want[1])
						}
					}
					if want, ok := ranges[prop+"[]"]; ok {
						checked++
						if it := p.Items; it == nil || it.Minimum == nil || it.Maximum == nil || *it.Minimum != want[0] || *it.Maximum != want[1] {
							t.Errorf("%s.%s[]: got %+v; want [%v, %v]", name, prop, it, want[0], want[1])
						}
					}
				}
			}
			if checked < 10 {
				t.Errorf("checked %d properties; the document lost its constrained fields", checked)
			}
		})
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
