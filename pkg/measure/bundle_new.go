package measure

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"testing/fstest"
)

// NewFrameworkFiles is a bundle of one framework and nothing else, which CalibrateBank and
// ExtendBundle take as the base of a bundle made from nothing: frameworks.csv with f's row,
// strands.csv and items.csv with their headers only. f's parameters are checked as the loader
// checks them (its norm curve and grade caps are not part of it: grades.csv is left out).
func NewFrameworkFiles(f Framework) (fs.FS, error) {
	f.Norm, f.GradeMax = nil, make([]float64, Grades)
	for g := range f.GradeMax {
		f.GradeMax[g] = f.DisplayMax
	}
	if err := f.Prepare(); err != nil {
		return nil, err
	}
	if f.Name != strings.ToLower(f.Name) || strings.ContainsAny(f.Name, ",\"\n") {
		return nil, fmt.Errorf("framework name %q: want lower case, without commas or quotes", f.Name)
	}
	var buf bytes.Buffer
	buf.WriteString("# " + f.Name + ": a framework made by yardstick-calibrate -new-framework\n")
	w := csv.NewWriter(&buf)
	_ = w.Write(append(append([]string{}, frameworksHeader...), frameworksOptional...))
	_ = w.Write([]string{f.Name, f.Label, f.NegativePrefix, decimal(f.UnitsPerLogit), decimal(f.SuccessAtMatch),
		decimal(f.DisplayMin), decimal(f.DisplayMax), decimal(f.GrowthSD), decimal(f.PopulationSD), decimal(f.ExtremeAdjust),
		decimal(f.StrandSpread), f.Subject, strings.Join(f.IDPrefixes, ";")})
	w.Flush()
	files := fstest.MapFS{
		"frameworks.csv": {Data: buf.Bytes()},
		"strands.csv":    {Data: []byte(strings.Join(strandsHeader, ",") + "\n")},
		"items.csv":      {Data: []byte(strings.Join(itemsHeader, ",") + "\n")},
	}
	if _, err := LoadFS(files); err != nil {
		return nil, err
	}
	return files, nil
}

func decimal(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
