package measure

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing/fstest"
)

// NormsWritten is what AddNorms wrote: norms tables and norm curves by framework.
type NormsWritten struct {
	Tables     int
	Frameworks []string // the frameworks of the sample, whose norms and norm curve were replaced
}

// AddNorms writes a norming sample's percentile norms (BuildNorms) and each of its frameworks'
// norm curve (BuildNormCurve) into the bundle in dir: the rows of norms.csv and grades.csv of
// those frameworks are replaced, the other frameworks' rows kept. A grade keeps its display cap
// from grades.csv, or takes the framework's display_max. The new files are checked to load with
// the rest of the bundle before either is written, each through a temporary file and a rename; on
// any problem nothing is written.
func AddNorms(dir string, sample []NormSample, percentiles []float64) (NormsWritten, error) {
	b, err := LoadDir(dir)
	if err != nil {
		return NormsWritten{}, err
	}
	var out NormsWritten
	var errs []error
	for _, s := range sample {
		if slices.Contains(out.Frameworks, s.Framework) {
			continue
		}
		if _, ok := b.Framework(s.Framework); !ok {
			errs = append(errs, fmt.Errorf("the bundle has no framework %q (it has %s)", s.Framework, b.FrameworkList()))
		}
		out.Frameworks = append(out.Frameworks, s.Framework)
	}
	if len(errs) > 0 {
		return NormsWritten{}, errors.Join(errs...)
	}
	tables, err := BuildNorms(sample, percentiles)
	if err != nil {
		return NormsWritten{}, err
	}
	out.Tables = len(tables)
	files, err := bundleCSVs(os.DirFS(dir))
	if err != nil {
		return NormsWritten{}, err
	}
	var norms bytes.Buffer
	norms.Write(withoutRows(files["norms.csv"], normsHeader, out.Frameworks))
	if err := WriteNorms(&norms, tables, ""); err != nil {
		return NormsWritten{}, err
	}
	files["norms.csv"] = dropRepeatedHeader(norms.Bytes(), normsHeader)
	grades := withoutRows(files["grades.csv"], gradesHeader, out.Frameworks)
	for _, name := range out.Frameworks {
		curve, err := BuildNormCurve(sample, name)
		if err != nil {
			return NormsWritten{}, err
		}
		f, _ := b.Framework(name)
		grades = append(grades, "# "+name+": norm curve from a norming sample (yardstick-calibrate norms)\n"...)
		for g, v := range curve {
			grades = append(grades, fmt.Sprintf("%s,%d,%s,%s\n", name, g, decimal(v), decimal(f.GradeMax[g]))...)
		}
	}
	files["grades.csv"] = grades
	mem := fstest.MapFS{}
	for name, data := range files {
		mem[name] = &fstest.MapFile{Data: data}
	}
	if _, err := LoadFS(mem); err != nil {
		return NormsWritten{}, fmt.Errorf("the bundle with these norms does not load: %w", err)
	}
	for _, name := range []string{"norms.csv", "grades.csv"} {
		if err := replaceFile(filepath.Join(dir, name), files[name]); err != nil {
			return NormsWritten{}, err
		}
	}
	return out, nil
}

// withoutRows is a bundle file's text without the rows whose first field is one of frameworks
// (comments and the header kept); an absent file is its header alone.
func withoutRows(data []byte, header []string, frameworks []string) []byte {
	if len(data) == 0 {
		return []byte(strings.Join(header, ",") + "\n")
	}
	var out []byte
	for _, line := range strings.SplitAfter(string(data), "\n") {
		first, _, _ := strings.Cut(line, ",")
		if slices.Contains(frameworks, strings.TrimSpace(first)) {
			continue
		}
		out = append(out, line...)
	}
	if len(out) > 0 && out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	return out
}

// dropRepeatedHeader removes the second header line WriteNorms added after kept rows.
func dropRepeatedHeader(data []byte, header []string) []byte {
	h := strings.Join(header, ",") + "\n"
	first := strings.Index(string(data), h)
	if first < 0 {
		return data
	}
	rest := strings.Replace(string(data[first+len(h):]), h, "", 1)
	return append(data[:first+len(h):first+len(h)], rest...)
}

// replaceFile writes data to path through a temporary file beside it and a rename.
func replaceFile(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(data)
	if err := errors.Join(werr, tmp.Close(), os.Chmod(tmp.Name(), 0o644)); err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	return nil
}
