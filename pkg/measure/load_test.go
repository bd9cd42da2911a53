package measure

import (
	"errors"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/yardstick-dev/yardstick/pkg/measure/internal/democontent"
)

// demoFS returns the demo bundle as a MapFS that a test may break.
func demoFS() fstest.MapFS {
	m := fstest.MapFS{}
	for name, data := range democontent.Files() {
		m[name] = &fstest.MapFile{Data: data}
	}
	return m
}

// setLine replaces line n (1-based) of a file; an empty text deletes the line.
func setLine(m fstest.MapFS, file string, n int, text string) {
	lines := strings.Split(string(m[file].Data), "\n")
	if text == "" {
		lines = append(lines[:n-1], lines[n:]...)
	} else {
		lines[n-1] = text
	}
	m[file] = &fstest.MapFile{Data: []byte(strings.Join(lines, "\n"))}
}

func TestLoadRejectsBadContent(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		breaK func(m fstest.MapFS)
		want  string // one line of the error, exactly
	}{
		{"difficulty not a number", func(m fstest.MapFS) { setLine(m, "items.csv", 17, "L000015,lexile,Vocabulary,abc") },
			`items.csv:17: difficulty "abc" is not a number`},
		{"difficulty NaN", func(m fstest.MapFS) { setLine(m, "items.csv", 5, "L000003,lexile,Vocabulary,NaN") },
			`items.csv:5: difficulty "NaN" is not a finite number`},
		{"difficulty infinite", func(m fstest.MapFS) { setLine(m, "items.csv", 5, "L000003,lexile,Vocabulary,+Inf") },
			`items.csv:5: difficulty "+Inf" is not a finite number`},
		{"unknown framework", func(m fstest.MapFS) { setLine(m, "items.csv", 6, "L000004,science,Vocabulary,100") },
			`items.csv:6: unknown framework "science"`},
		{"duplicate item", func(m fstest.MapFS) { setLine(m, "items.csv", 4, "L000001,lexile,Vocabulary,100") },
			`items.csv:4: duplicate item id "L000001" (first at line 3)`},
		{"undeclared strand", func(m fstest.MapFS) { setLine(m, "items.csv", 3, "L000001,lexile,Geometry,100") },
			`items.csv:3: strand "Geometry" is not declared for lexile in strands.csv`},
		{"empty id", func(m fstest.MapFS) { setLine(m, "items.csv", 3, ",lexile,Vocabulary,100") },
			`items.csv:3: id is empty`},
		{"missing column", func(m fstest.MapFS) { setLine(m, "items.csv", 9, "L000007,lexile,100") },
			`items.csv:9: 3 columns; want 4 to 5 (id,framework,strand,difficulty,steps)`},
		{"extra column", func(m fstest.MapFS) { setLine(m, "items.csv", 9, "L000007,lexile,Vocabulary,100,,x") },
			`items.csv:9: 6 columns; want 4 to 5 (id,framework,strand,difficulty,steps)`},
		{"extra column without steps", func(m fstest.MapFS) {
			setLine(m, "items.csv", 2, "id,framework,strand,difficulty")
			setLine(m, "items.csv", 9, "L000007,lexile,Vocabulary,100,410")
		}, `items.csv:9: 5 columns; want 4 (id,framework,strand,difficulty)`},
		{"step not a number", func(m fstest.MapFS) { setLine(m, "items.csv", 9, "L000007,lexile,Vocabulary,500,410;x;590") },
			`items.csv:9: steps: step 2 "x" is not a number (steps are numbers separated by ;)`},
		{"step empty", func(m fstest.MapFS) { setLine(m, "items.csv", 9, "L000007,lexile,Vocabulary,500,410;;590") },
			`items.csv:9: steps: step 2 "" is not a number (steps are numbers separated by ;)`},
		{"step infinite", func(m fstest.MapFS) { setLine(m, "items.csv", 9, "L000007,lexile,Vocabulary,500,410;Inf") },
			`items.csv:9: steps: step 2 "Inf" is not a finite number`},
		{"difficulty not the steps' mean", func(m fstest.MapFS) { setLine(m, "items.csv", 9, "L000007,lexile,Vocabulary,500,410;520;655") },
			`items.csv:9: difficulty 500 is not the mean of the steps (528.3333333333334) within 0.5`},
		{"difficulty just beyond 0.5 of the mean", func(m fstest.MapFS) { setLine(m, "items.csv", 9, "L000007,lexile,Vocabulary,501.01,400;601") },
			`items.csv:9: difficulty 501.01 is not the mean of the steps (500.5) within 0.5`},
		{"single step differs", func(m fstest.MapFS) { setLine(m, "items.csv", 9, "L000007,lexile,Vocabulary,500,501") },
			`items.csv:9: steps: a single step 501 differs from difficulty 500 (one step is a dichotomous item of that difficulty)`},
		{"bad quoting", func(m fstest.MapFS) { setLine(m, "items.csv", 9, `L000007,lexile,Voc"abulary,100`) },
			`items.csv:9: bare " in non-quoted-field`},
		{"wrong header", func(m fstest.MapFS) { setLine(m, "items.csv", 2, "id,framework,difficulty,strand") },
			`items.csv:2: header "id,framework,difficulty,strand"; want "id,framework,strand,difficulty,steps,program" (the last 2 optional)`},
		{"empty file", func(m fstest.MapFS) { m["items.csv"] = &fstest.MapFile{} },
			`items.csv: empty file; want the header "id,framework,strand,difficulty"`},
		{"missing file", func(m fstest.MapFS) { delete(m, "strands.csv") },
			`strands.csv: missing required file`},
		{"unknown file", func(m fstest.MapFS) { m["item.csv"] = &fstest.MapFile{Data: []byte("id\n")} },
			`item.csv: unknown bundle file; want one of benchmarks.csv, forms.csv, frameworks.csv, grades.csv, growth_norms.csv, items.csv, link_points.csv, links.csv, norms.csv, strands.csv`},
		{"framework parameter out of range", func(m fstest.MapFS) {
			setLine(m, "frameworks.csv", 4, "lexile,L,BR,180,0.75,-400,1825,75,300,0.7,100")
		}, `frameworks.csv:4: framework "lexile": extremeAdjust 0.7 is outside (0, 0.5)`},
		{"framework parameter not a number", func(m fstest.MapFS) {
			setLine(m, "frameworks.csv", 4, "lexile,L,BR,many,0.75,-400,1825,75,300,0.3,100")
		}, `frameworks.csv:4: units_per_logit "many" is not a number`},
		{"duplicate framework", func(m fstest.MapFS) {
			setLine(m, "frameworks.csv", 4, "quantile,Q,EM,180,0.5,-400,1650,75,300,0.3,100")
		}, `frameworks.csv:4: duplicate framework "quantile" (first at line 3)`},
		{"norm curve not increasing", func(m fstest.MapFS) { setLine(m, "grades.csv", 14, "lexile,11,1095,1800") },
			`grades.csv:15: lexile norm 1090 at grade 12 is not above 1095 at grade 11; the norm curve must increase`},
		{"grade out of range", func(m fstest.MapFS) { setLine(m, "grades.csv", 15, "lexile,13,1090,1825") },
			`grades.csv:15: grade "13" is not a grade 0-12`},
		{"grade missing", func(m fstest.MapFS) { setLine(m, "grades.csv", 15, "") },
			`grades.csv: lexile grade 12 missing (a framework has all 13 grades 0-12 or none)`},
		{"duplicate grade", func(m fstest.MapFS) { setLine(m, "grades.csv", 15, "lexile,11,1090,1825") },
			`grades.csv:15: duplicate lexile grade 11 (first at line 14)`},
		{"duplicate strand", func(m fstest.MapFS) { setLine(m, "strands.csv", 4, "lexile,Vocabulary") },
			`strands.csv:4: duplicate strand "Vocabulary" of lexile (first at line 3)`},
		{"unknown link kind", func(m fstest.MapFS) {
			setLine(m, "links.csv", 3, "STATE-READ-2026,lexile,cubic,2.8,-780,200,800,45")
		}, `links.csv:3: kind "cubic" is not "linear" or "points"`},
		{"decreasing linear link", func(m fstest.MapFS) {
			setLine(m, "links.csv", 3, "STATE-READ-2026,lexile,linear,-2.8,-780,200,800,45")
		}, `links.csv:3: slope -2.8 is not positive; a link must increase`},
		{"empty link range", func(m fstest.MapFS) {
			setLine(m, "links.csv", 3, "STATE-READ-2026,lexile,linear,2.8,-780,800,800,45")
		}, `links.csv:3: min 800 is not below max 800`},
		{"negative linking error", func(m fstest.MapFS) {
			setLine(m, "links.csv", 3, "STATE-READ-2026,lexile,linear,2.8,-780,200,800,-1")
		}, `links.csv:3: linking_error -1 is negative`},
		{"duplicate link", func(m fstest.MapFS) {
			setLine(m, "links.csv", 4, "STATE-READ-2026,quantile,linear,2.5,-650,200,800,40")
		}, `links.csv:4: duplicate link id "STATE-READ-2026" (first at line 3)`},
		{"point table with a slope", func(m fstest.MapFS) { setLine(m, "links.csv", 5, "NATL-READ-PT,lexile,points,2,,,,55") },
			`links.csv:5: slope must be empty for a point table (its points are in link_points.csv)`},
		{"point table not monotone", func(m fstest.MapFS) { setLine(m, "link_points.csv", 5, "NATL-READ-PT,120,-200") },
			`link_points.csv:5: point (120, -200) does not follow (110, -118): scale scores and measures must both increase`},
		{"point table scores repeat", func(m fstest.MapFS) { setLine(m, "link_points.csv", 5, "NATL-READ-PT,110,17") },
			`link_points.csv:5: point (110, 17) does not follow (110, -118): scale scores and measures must both increase`},
		{"points of an unknown link", func(m fstest.MapFS) { setLine(m, "link_points.csv", 5, "NOPE,120,17") },
			`link_points.csv:5: unknown link "NOPE" (declare it in links.csv)`},
		{"points of a linear link", func(m fstest.MapFS) { setLine(m, "link_points.csv", 5, "STATE-READ-2026,120,17") },
			`link_points.csv:5: link "STATE-READ-2026" is linear, not a point table`},
		{"point table too short", func(m fstest.MapFS) {
			m["link_points.csv"] = &fstest.MapFile{Data: []byte("link,scale_score,measure\nNATL-READ-PT,1,1\nNATL-MATH-PT,1,1\nNATL-MATH-PT,2,2\n")}
		}, `links.csv:5: point table "NATL-READ-PT" has 1 points in link_points.csv; want at least 2`},
		{"benchmark reversed", func(m fstest.MapFS) { setLine(m, "benchmarks.csv", 4, "lexile,0,MOY,130,-250") },
			`benchmarks.csv:4: lower 130 is above upper -250`},
		{"benchmark time of year", func(m fstest.MapFS) { setLine(m, "benchmarks.csv", 4, "lexile,0,NOY,-250,130") },
			`benchmarks.csv:4: time_of_year "NOY" is not BOY, MOY or EOY`},
		{"benchmark missing", func(m fstest.MapFS) { setLine(m, "benchmarks.csv", 4, "") },
			`benchmarks.csv: lexile grade 0 MOY missing (a framework has every grade and time of year or none)`},
		{"benchmark duplicate", func(m fstest.MapFS) { setLine(m, "benchmarks.csv", 4, "lexile,0,BOY,-250,130") },
			`benchmarks.csv:4: duplicate benchmark lexile grade 0 BOY (first at line 3)`},
		{"norms percentile 0", func(m fstest.MapFS) { setLine(m, "norms.csv", 3, "lexile,0,BOY,0,-858") },
			`norms.csv:3: percentile 0 is outside (0, 100)`},
		{"norms percentile 100", func(m fstest.MapFS) { setLine(m, "norms.csv", 11, "lexile,0,BOY,100,538") },
			`norms.csv:11: percentile 100 is outside (0, 100)`},
		{"norms percentile not a number", func(m fstest.MapFS) { setLine(m, "norms.csv", 4, "lexile,0,BOY,five,-653") },
			`norms.csv:4: percentile "five" is not a number`},
		{"norms measure not increasing", func(m fstest.MapFS) { setLine(m, "norms.csv", 5, "lexile,0,BOY,10,-653") },
			`norms.csv:5: lexile grade 0 BOY: point (10, -653) does not follow (5, -653): percentiles and measures must both increase`},
		{"norms percentile not increasing", func(m fstest.MapFS) { setLine(m, "norms.csv", 5, "lexile,0,BOY,5,-544") },
			`norms.csv:5: lexile grade 0 BOY: point (5, -544) does not follow (5, -653): percentiles and measures must both increase`},
		{"norms time of year", func(m fstest.MapFS) { setLine(m, "norms.csv", 3, "lexile,0,NOY,1,-858") },
			`norms.csv:3: time_of_year "NOY" is not BOY, MOY or EOY`},
		{"norms grade", func(m fstest.MapFS) { setLine(m, "norms.csv", 3, "lexile,13,BOY,1,-858") },
			`norms.csv:3: grade "13" is not a grade 0-12`},
		{"norms framework", func(m fstest.MapFS) { setLine(m, "norms.csv", 3, "science,0,BOY,1,-858") },
			`norms.csv:3: unknown framework "science"`},
		{"norms table of one row", func(m fstest.MapFS) {
			m["norms.csv"] = &fstest.MapFile{Data: []byte("framework,grade,time_of_year,percentile,measure\nlexile,3,MOY,10,200\nquantile,3,MOY,10,200\nquantile,3,MOY,90,900\n")}
		}, `norms.csv:2: lexile grade 3 MOY has 1 row in norms.csv; want at least 2`},
		{"norms wrong header", func(m fstest.MapFS) { setLine(m, "norms.csv", 2, "framework,grade,time_of_year,measure,percentile") },
			`norms.csv:2: header "framework,grade,time_of_year,measure,percentile"; want "framework,grade,time_of_year,percentile,measure"`},
		{"form with unknown item", func(m fstest.MapFS) { setLine(m, "forms.csv", 4, "FORM-READ-G3,lexile,L999999") },
			`forms.csv:4: unknown item "L999999"`},
		{"form with another framework's item", func(m fstest.MapFS) { setLine(m, "forms.csv", 4, "FORM-READ-G3,lexile,Q000001") },
			`forms.csv:4: item "Q000001" is quantile, not lexile like form "FORM-READ-G3"`},
		{"form switching framework", func(m fstest.MapFS) { setLine(m, "forms.csv", 4, "FORM-READ-G3,quantile,Q000001") },
			`forms.csv:4: form "FORM-READ-G3" is lexile (line 3), not quantile`},
		{"form repeating an item", func(m fstest.MapFS) { setLine(m, "forms.csv", 4, "FORM-READ-G3,lexile,L000372") },
			`forms.csv:4: item "L000372" appears twice in form "FORM-READ-G3"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			m := demoFS()
			c.breaK(m)
			b, err := LoadFS(m)
			if b != nil {
				t.Errorf("LoadFS returned a bundle with the error; want nil (nothing half-loaded)")
			}
			if err == nil {
				t.Fatalf("LoadFS = nil error; want %q", c.want)
			}
			lines := strings.Split(err.Error(), "\n")
			for _, l := range lines {
				if l == c.want {
					return
				}
			}
			t.Errorf("LoadFS error:\n%v\nwant a line %q", err, c.want)
		})
	}
}

func TestLoadIgnoresHiddenAndOtherFiles(t *testing.T) {
	t.Parallel()
	m := demoFS()
	m["..data/items.csv"] = &fstest.MapFile{Data: []byte("garbage")}
	m[".hidden.csv"] = &fstest.MapFile{Data: []byte("garbage")}
	m["NOTES.txt"] = &fstest.MapFile{Data: []byte("garbage")}
	if _, err := LoadFS(m); err != nil {
		t.Errorf("LoadFS with hidden entries and a .txt file: %v", err)
	}
	// Optional files may be left out.
	delete(m, "links.csv")
	delete(m, "link_points.csv")
	delete(m, "forms.csv")
	b, err := LoadFS(m)
	if err != nil {
		t.Fatalf("LoadFS without optional files: %v", err)
	}
	if s := b.Stats(); s.Links != 0 || s.Forms != 0 {
		t.Errorf("stats %v; want no links or forms", s)
	}
}

func TestLoadCapsTheErrorList(t *testing.T) {
	t.Parallel()
	m := demoFS()
	var sb strings.Builder
	sb.WriteString("id,framework,strand,difficulty\n")
	for i := 0; i < 80; i++ {
		sb.WriteString("X,lexile,Vocabulary,abc\n")
	}
	m["items.csv"] = &fstest.MapFile{Data: []byte(sb.String())}
	_, err := LoadFS(m)
	if err == nil {
		t.Fatal("nil error")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != maxProblems+1 || !strings.HasPrefix(lines[maxProblems], "... and ") {
		t.Errorf("%d error lines ending %q; want %d and a count of the rest", len(lines), lines[len(lines)-1], maxProblems+1)
	}
}

type failingFS struct{}

func (failingFS) Open(string) (fs.File, error) { return nil, errors.New("disk on fire") }

func TestLoadFSReadError(t *testing.T) {
	t.Parallel()
	if _, err := LoadFS(failingFS{}); err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Errorf("LoadFS on a failing FS: %v; want the cause", err)
	}
}

// TestLoadSteps: the steps column makes a polytomous item (disordered steps are legal, fractional
// ones too, the difficulty within 0.5 of their mean on both sides); a single step equal to the
// difficulty, an empty field, a row without the column and a file without the column are
// dichotomous items.
func TestLoadSteps(t *testing.T) {
	t.Parallel()
	m := demoFS()
	setLine(m, "items.csv", 3, "L000001,lexile,Key Ideas,501,400;601")
	setLine(m, "items.csv", 4, "L000002,lexile,Key Ideas,499.5,601;398;500.5")
	setLine(m, "items.csv", 5, "L000003,lexile,Craft and Structure,-290,-290")
	setLine(m, "items.csv", 6, "L000004,lexile,Craft and Structure,100")
	b, err := LoadFS(m)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		id    string
		d     float64
		steps []float64
	}{
		{"L000001", 501, []float64{400, 601}},
		{"L000002", 499.5, []float64{601, 398, 500.5}},
		{"L000003", -290, nil},
		{"L000004", 100, nil},
		{"L000005", -298, nil},
		{"LP00006", 1751, []float64{1612, 1751, 1891}},
	} {
		it, ok := b.Item(tc.id)
		if !ok || it.Difficulty != tc.d || !slices.Equal(it.Steps, tc.steps) || it.MaxScore() != max(1, len(tc.steps)) {
			t.Errorf("%s: got %+v (max %d), %v; want difficulty %v, steps %v", tc.id, it, it.MaxScore(), ok, tc.d, tc.steps)
		}
	}
	// The demo's partial credit items: 0–2 and 0–3 in both frameworks, in every strand.
	kinds := map[string]map[int]bool{}
	for _, it := range Demo().items {
		if !it.Polytomous() {
			continue
		}
		key := it.Framework + "/" + it.Strand
		if kinds[key] == nil {
			kinds[key] = map[int]bool{}
		}
		kinds[key][it.MaxScore()] = true
	}
	for _, fw := range []string{"lexile", "quantile"} {
		f, _ := Demo().Framework(fw)
		for _, strand := range f.StrandNames {
			if k := kinds[fw+"/"+strand]; !k[2] || !k[3] {
				t.Errorf("%s %s: partial credit items scored %v; want 0–2 and 0–3", fw, strand, k)
			}
		}
	}
	// Without the column every item is dichotomous.
	plain := demoFS()
	lines := strings.Split(string(plain["items.csv"].Data), "\n")
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, "LP") || strings.HasPrefix(l, "QP"): // the partial credit items
			lines[i] = ""
		case strings.HasPrefix(l, "L") || strings.HasPrefix(l, "S") || strings.HasPrefix(l, "Q"):
			lines[i] = strings.TrimSuffix(l, ",")
		}
	}
	lines[1] = "id,framework,strand,difficulty"
	plain["items.csv"] = &fstest.MapFile{Data: []byte(strings.Join(lines, "\n"))}
	delete(plain, "forms.csv")
	b, err = LoadFS(plain)
	if err != nil {
		t.Fatal(err)
	}
	if s := b.Stats().String(); s != "lexile: 2000 items, 5 strands; quantile: 1500 items, 5 strands; 4 links, 0 forms" {
		t.Errorf("without steps: %s", s)
	}
}
