package main

import (
	"flag"
	"fmt"
	"math"
	"strconv"

	"github.com/yardstick-dev/yardstick/pkg/measure"
)

// newScale is the scale of a framework made from nothing (-new-framework and its flags).
type newScale struct {
	name, subject, label, negativePrefix string
	set                                  map[string]float64 // the numeric flags given
}

// The numeric flags of -new-framework.
var scaleFlags = []string{"units-per-logit", "success-at-match", "display-min", "display-max",
	"population-sd", "growth-sd", "strand-spread", "extreme-adjust"}

func (n *newScale) flags(fs *flag.FlagSet) {
	n.set = map[string]float64{}
	fs.StringVar(&n.name, "new-framework", "", "")
	fs.StringVar(&n.subject, "subject", "", "")
	fs.StringVar(&n.label, "label", "", "")
	fs.StringVar(&n.negativePrefix, "negative-prefix", "-", "")
	for _, name := range scaleFlags {
		fs.Func(name, "", func(s string) error {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil || !measure.Finite(v) {
				return fmt.Errorf("%q is not a number", s)
			}
			n.set[name] = v
			return nil
		})
	}
}

// check refuses a -new-framework command line that misses what a scale needs or mixes in the
// flags of a calibration onto an existing bundle.
func (n *newScale) check(fs *flag.FlagSet, o *options) error {
	switch {
	case fs.NArg() != 1:
		return fmt.Errorf("want one response file after the flags, got %d arguments", fs.NArg())
	case o.framework != "" || o.anchors != "":
		return fmt.Errorf("-new-framework makes its own framework: give neither -framework nor -anchors (add items to it later with -framework %s -anchors DIR)", n.name)
	case !o.hasMean:
		return fmt.Errorf("-new-framework needs -mean M: the calibrated items' mean difficulty on the new scale")
	case n.label == "":
		return fmt.Errorf("-new-framework needs -label: the unit shown after a value")
	case n.set["units-per-logit"] == 0:
		return fmt.Errorf("-new-framework needs -units-per-logit S (> 0)")
	case n.subject != measure.SubjectReading && n.subject != measure.SubjectMath && n.subject != "none":
		return fmt.Errorf("-subject %q: want reading, math or none (the forecast paths the framework serves)", n.subject)
	case o.out == "":
		return fmt.Errorf("-new-framework needs -out DIR: the bundle to write")
	}
	_, lo := n.set["display-min"]
	_, hi := n.set["display-max"]
	if lo != hi {
		return fmt.Errorf("give both -display-min and -display-max, or neither")
	}
	return nil
}

// framework is the new framework's parameters, the defaults filled in around mean.
func (n *newScale) framework(mean float64) measure.Framework {
	s := n.set["units-per-logit"]
	get := func(name string, def float64) float64 {
		if v, ok := n.set[name]; ok {
			return v
		}
		return def
	}
	subject := n.subject
	if subject == "none" {
		subject = ""
	}
	return measure.Framework{
		Name: n.name, Label: n.label, NegativePrefix: n.negativePrefix, Subject: subject,
		UnitsPerLogit: s, SuccessAtMatch: get("success-at-match", 0.5),
		DisplayMin: get("display-min", math.Round(mean-5*s)), DisplayMax: get("display-max", math.Round(mean+5*s)),
		PopulationSD: get("population-sd", math.Round(5*s/3)), GrowthSD: get("growth-sd", math.Round(5*s/12)),
		StrandSpread: get("strand-spread", math.Round(5*s/9)), ExtremeAdjust: get("extreme-adjust", 0.3),
	}
}
