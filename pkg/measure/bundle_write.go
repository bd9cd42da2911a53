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
// not have, or with a difficulty that is not a number is an error. Difficulties are written to
// 0.01 units.
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
	files["items.csv"] = appendRows(files["items.csv"], fmt.Sprintf("# %d items added by calibration", len(items)), func(w *csv.Writer) {
		for _, it := range items {
			d := strconv.FormatFloat(math.Round(it.Difficulty*100)/100, 'f', -1, 64)
			_ = w.Write([]string{it.ID, it.Framework, it.Strand, d})
		}
	})
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
