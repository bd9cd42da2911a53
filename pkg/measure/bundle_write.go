package measure

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// DemoFiles returns the files of the embedded demonstration bundle, as a base for ExtendBundle.
func DemoFiles() fs.FS {
	sub, err := fs.Sub(demoFiles, "demo")
	if err != nil {
		panic(fmt.Sprintf("embedded demonstration bundle: %v", err)) // unreachable: "demo" is embedded
	}
	return sub
}

// ExtendBundle writes to dir a complete content bundle: the CSV files of the bundle in base, with
// items appended to items.csv and every strand they name that base does not declare appended to
// strands.csv. An item whose id is already in base (or twice in items), of a framework base does
// not have, with a difficulty or a step that is not a number, or with steps whose mean is not its
// difficulty (within 0.5) is an error. Difficulties and steps are written to 0.01 units; a
// polytomous item's steps go to the column `steps` (`410;520;655`) and an item's program to the
// column `program`, each added to the header of items.csv if base has none (its rows, and the
// rows of items without them, are written as before: a row may leave its last columns out).
//
// dir must not exist or be empty. The bundle is written into a new directory beside dir, loaded
// back (so what is written is known to load), and only then renamed to dir: on any error nothing
// is left at dir.
func ExtendBundle(base fs.FS, items []Item, dir string) error {
	b, err := LoadFS(base)
	if err != nil {
		return fmt.Errorf("base bundle: %w", err)
	}
	if err := CheckOutputDir(dir); err != nil {
		return err
	}
	newStrands := map[string][]string{}
	seen := map[string]bool{}
	var errs []error
	for _, it := range items {
		f, ok := b.Framework(it.Framework)
		switch old, dup := b.Item(it.ID); {
		case dup:
			errs = append(errs, fmt.Errorf("item %s is already in the bundle (%s, strand %q, difficulty %v)", it.ID, old.Framework, old.Strand, old.Difficulty))
		case seen[it.ID]:
			errs = append(errs, fmt.Errorf("item %s is given twice", it.ID))
		case !ok:
			errs = append(errs, fmt.Errorf("item %s: the bundle has no framework %q", it.ID, it.Framework))
		case strings.TrimSpace(it.ID) != it.ID || it.ID == "" || strings.TrimSpace(it.Strand) != it.Strand || it.Strand == "":
			errs = append(errs, fmt.Errorf("item %q: id and strand must be non-empty without surrounding spaces (strand %q)", it.ID, it.Strand))
		case !finite(it.Difficulty):
			errs = append(errs, fmt.Errorf("item %s: difficulty %v is not a number", it.ID, it.Difficulty))
		case !Finite(it.Steps...):
			errs = append(errs, fmt.Errorf("item %s: steps %v are not all numbers", it.ID, it.Steps))
		case it.Program != "" && !ValidProgram(it.Program):
			errs = append(errs, fmt.Errorf("item %s: program %q must be 1 to 64 of a-z 0-9 . _ - starting with a letter or digit", it.ID, it.Program))
		case len(it.Steps) > 0 && math.Abs(stepMean(it.Steps)-it.Difficulty) > maxStepsMeanGap:
			errs = append(errs, fmt.Errorf("item %s: difficulty %v is not the mean of its steps %v (%v, within %v)", it.ID, it.Difficulty, it.Steps, stepMean(it.Steps), maxStepsMeanGap))
		default:
			if !slices.Contains(f.StrandNames, it.Strand) && !slices.Contains(newStrands[it.Framework], it.Strand) {
				newStrands[it.Framework] = append(newStrands[it.Framework], it.Strand)
			}
		}
		seen[it.ID] = true
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	files, err := bundleCSVs(base)
	if err != nil {
		return err
	}
	if files["items.csv"], err = extendItems(files["items.csv"], items); err != nil {
		return err
	}
	if len(newStrands) > 0 {
		files["strands.csv"] = appendRows(files["strands.csv"], "# strands of the calibrated items", func(w *csv.Writer) {
			for _, fw := range sortedKeys(newStrands) {
				for _, s := range newStrands[fw] {
					_ = w.Write([]string{fw, s})
				}
			}
		})
	}
	return writeBundleDir(dir, files)
}

// maxStepsMeanGap is how far an item's difficulty may be from the mean of its steps (units), as
// a bundle's loader allows: the steps are rounded as they are written.
const maxStepsMeanGap = 0.5

// stepMean is the mean of an item's steps: its location.
func stepMean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// extendItems appends items to the items.csv data, adding the steps column to its header when an
// item has steps and the program column when an item has a program, if the header lacks them.
func extendItems(data []byte, items []Item) ([]byte, error) {
	polytomous, owned := false, false
	for _, it := range items {
		polytomous = polytomous || len(it.Steps) > 0
		owned = owned || it.Program != ""
	}
	data, cols, err := withItemColumns(data, polytomous, owned)
	if err != nil {
		return nil, err
	}
	return appendRows(data, fmt.Sprintf("# %d items added by calibration", len(items)), func(w *csv.Writer) {
		for _, it := range items {
			row := []string{it.ID, it.Framework, it.Strand, units(it.Difficulty)}
			for _, col := range cols {
				switch col {
				case "steps":
					steps := make([]string, len(it.Steps))
					for h, st := range it.Steps {
						steps[h] = units(st)
					}
					row = append(row, strings.Join(steps, ";"))
				case "program":
					row = append(row, it.Program)
				}
			}
			// Optional columns may be left out at the end of a row: an item without them is
			// written as before they existed.
			for len(row) > len(itemsHeader) && row[len(row)-1] == "" {
				row = row[:len(row)-1]
			}
			_ = w.Write(row)
		}
	}), nil
}

// units formats a measure to 0.01 units, as a bundle stores it.
func units(v float64) string { return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64) }

// withItemColumns returns items.csv data whose header has the steps column if it had it or steps
// is set, and the program column likewise, and the optional columns of the new header. The
// header is the first line that is not a comment; a column added at the end leaves the rows as
// they are, and steps added before an existing program column gives each row that reaches the
// program column an empty steps field.
func withItemColumns(data []byte, steps, program bool) ([]byte, []string, error) {
	cr := csv.NewReader(bytes.NewReader(data))
	cr.Comment = '#'
	cr.FieldsPerRecord = -1
	head, err := cr.Read()
	if err != nil {
		return nil, nil, fmt.Errorf("items.csv of the base bundle: %w", err)
	}
	head = trimAll(head)
	had, ok := headerWith(head, itemsHeader, itemsOptional)
	if !ok {
		return nil, nil, fmt.Errorf("items.csv of the base bundle: header %q; want %q (the last %d optional)",
			strings.Join(head, ","), strings.Join(append(slices.Clip(itemsHeader), itemsOptional...), ","), len(itemsOptional))
	}
	hadSteps, hadProgram := slices.Contains(had, "steps"), slices.Contains(had, "program")
	var cols []string
	if steps || hadSteps {
		cols = append(cols, "steps")
	}
	if program || hadProgram {
		cols = append(cols, "program")
	}
	if len(cols) == len(had)-len(itemsHeader) {
		return data, cols, nil
	}
	headerLine, _ := cr.FieldPos(0)
	lines := strings.SplitAfter(string(data), "\n")
	var out strings.Builder
	for n, line := range lines {
		body := strings.TrimRight(line, "\r\n")
		end := line[len(body):]
		switch {
		case n+1 == headerLine:
			body = strings.Join(append(slices.Clip(itemsHeader), cols...), ",")
		case n+1 > headerLine && hadProgram && !hadSteps && steps && !strings.HasPrefix(body, "#") && strings.TrimSpace(body) != "":
			rec, err := csv.NewReader(strings.NewReader(body)).Read()
			if err != nil {
				return nil, nil, fmt.Errorf("items.csv of the base bundle: line %d: %w", n+1, err)
			}
			if len(rec) > len(itemsHeader) {
				rec = slices.Insert(rec, len(itemsHeader), "")
			}
			var b bytes.Buffer
			w := csv.NewWriter(&b)
			_ = w.Write(rec)
			w.Flush()
			body = strings.TrimRight(b.String(), "\n")
		}
		out.WriteString(body + end)
	}
	return []byte(out.String()), cols, nil
}

// bundleCSVs reads the bundle files of base as LoadFS sees them (hidden names and non-CSV files
// are left out: a base's README does not describe the new bundle).
func bundleCSVs(base fs.FS) (map[string][]byte, error) {
	entries, err := fs.ReadDir(base, ".")
	if err != nil {
		return nil, fmt.Errorf("read base bundle: %w", err)
	}
	files := map[string][]byte{}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || e.IsDir() || !strings.HasSuffix(name, ".csv") {
			continue
		}
		data, err := fs.ReadFile(base, name)
		if err != nil {
			return nil, fmt.Errorf("read base bundle: %w", err)
		}
		files[name] = data
	}
	return files, nil
}

func appendRows(data []byte, comment string, rows func(*csv.Writer)) []byte {
	var buf bytes.Buffer
	buf.Write(data)
	if len(data) > 0 && data[len(data)-1] != '\n' {
		buf.WriteByte('\n')
	}
	buf.WriteString(comment + "\n")
	w := csv.NewWriter(&buf)
	rows(w)
	w.Flush()
	return buf.Bytes()
}

// CheckOutputDir returns an error unless dir is absent or an empty directory (what ExtendBundle
// may write to), so that a command can refuse before doing any work.
func CheckOutputDir(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("output directory: %w", err)
	case len(entries) > 0:
		return fmt.Errorf("output directory %s exists and is not empty", dir)
	}
	return nil
}

// writeBundleDir writes files into a fresh directory beside dir, checks that it loads, and
// renames it to dir (replacing an empty dir).
func writeBundleDir(dir string, files map[string][]byte) (err error) {
	parent := filepath.Dir(filepath.Clean(dir))
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".tmp-")
	if err != nil {
		return fmt.Errorf("write bundle: %w", err)
	}
	defer func() {
		if err != nil {
			_ = os.RemoveAll(tmp)
		}
	}()
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(tmp, name), data, 0o644); err != nil {
			return fmt.Errorf("write bundle: %w", err)
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fmt.Errorf("write bundle: %w", err)
	}
	if _, err := LoadDir(tmp); err != nil {
		return fmt.Errorf("the written bundle does not load: %w", err)
	}
	if err := CheckOutputDir(dir); err != nil {
		return err
	}
	if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("write bundle: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return fmt.Errorf("write bundle: %w", err)
	}
	return nil
}
