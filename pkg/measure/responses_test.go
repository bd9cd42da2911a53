package measure

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestReadResponses(t *testing.T) {
	t.Parallel()
	in := "\ufeffperson, A ,B,C\n# a comment\np1,1,0,\np2, 0 ,,1\n"
	got, err := ReadResponses(strings.NewReader(in), "r.csv")
	if err != nil {
		t.Fatal(err)
	}
	want := &Responses{Items: []string{"A", "B", "C"}, Persons: []string{"p1", "p2"},
		Cells: [][]int8{{1, 0, Missing}, {0, Missing, 1}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v; want %+v", got, want)
	}
}

func TestReadResponsesProblems(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, in string
		want     []string // every problem, in order
	}{
		{"empty", "", []string{"r.csv: empty file; want a header person,<item id>,…"}},
		{"first header", "id,A,B\n", []string{`r.csv:1:1: first header field "id"; want "person"`}},
		{"no items", "person\np1\n", []string{"r.csv:1:1: header has no item columns; want person,<item id>,…"}},
		{"header ids", "person,A,,A\n", []string{
			"r.csv:1:10: item id in header column 3 is empty",
			`r.csv:1:11: duplicate item id "A" (first in column 2)`,
		}},
		{"cells", "person,A,B\np1,1,101\np2,x,0\np3,1\n,0,1\np1,0,1\n", []string{
			`r.csv:2:6: response "101" to item B is not a score 0 … 100 or empty`,
			`r.csv:3:4: response "x" to item A is not a score 0 … 100 or empty`,
			"r.csv:4:1: 2 fields; want 3 (person and 2 items, as the header)",
			"r.csv:5:1: person id is empty",
			`r.csv:6:1: duplicate person "p1" (first at line 2)`,
		}},
		{"quote", "person,A\np1,1\"x\np2,1\n", []string{`r.csv:2:5: bare " in non-quoted-field`}},
		{"no persons", "person,A,B\n# nobody\n", []string{"r.csv: no persons after the header"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, err := ReadResponses(strings.NewReader(c.in), "r.csv")
			if got != nil || err == nil {
				t.Fatalf("got %+v, %v; want only an error", got, err)
			}
			if lines := strings.Split(err.Error(), "\n"); !reflect.DeepEqual(lines, c.want) {
				t.Errorf("got\n%s\nwant\n%s", err, strings.Join(c.want, "\n"))
			}
		})
	}
}

// TestReadResponsesScores: a cell is a whole number 0 … MaxCellScore written with digits only; both
// sides of the bound, and every other spelling of a number, refused with its position.
func TestReadResponsesScores(t *testing.T) {
	t.Parallel()
	got, err := ReadResponses(strings.NewReader("person,A,B,C\np1,2,100,\np2,0, 3 ,007\n"), "r.csv")
	want := &Responses{Items: []string{"A", "B", "C"}, Persons: []string{"p1", "p2"},
		Cells: [][]int8{{2, 100, Missing}, {0, 3, 7}}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, %v; want %+v", got, err, want)
	}
	if MaxCellScore != 100 {
		t.Errorf("MaxCellScore = %d; want 100 (the documented bound)", MaxCellScore)
	}
	for _, cell := range []string{"101", "1000", "-1", "+1", "1.0", "2e0", "0x1", "½", "1 2"} {
		t.Run(cell, func(t *testing.T) {
			t.Parallel()
			_, err := ReadResponses(strings.NewReader("person,A,B\np1,1,"+cell+"\n"), "r.csv")
			if want := fmt.Sprintf("r.csv:2:6: response %q to item B is not a score 0 … 100 or empty", cell); err == nil || err.Error() != want {
				t.Errorf("got %v; want %q", err, want)
			}
		})
	}
}

func TestReadItemStrands(t *testing.T) {
	t.Parallel()
	got, err := ReadItemStrands(strings.NewReader("id,strand\n# c\nA, Algebra \nB,Geometry, and more\n"), "s.csv")
	if err == nil || got != nil || err.Error() != "s.csv:4:1: 3 fields; want 2 (id,strand)" {
		t.Errorf("got %v, %v; want the field-count problem", got, err)
	}
	got, err = ReadItemStrands(strings.NewReader("id,strand\nA, Algebra \n\"B\",\"Geometry, and more\"\n"), "s.csv")
	if want := map[string]string{"A": "Algebra", "B": "Geometry, and more"}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, %v; want %v", got, err, want)
	}
	for _, c := range []struct{ in, want string }{
		{"", "s.csv: empty file; want the header id,strand"},
		{"item,strand\n", `s.csv:1:1: header "item,strand"; want "id,strand"`},
		{"id,strand\n,x\nA,\nA,y\nA,z\n", "s.csv:2:1: item id is empty\ns.csv:3:3: strand of item A is empty\ns.csv:5:1: duplicate item \"A\" (first at line 4)"},
	} {
		t.Run(c.want, func(t *testing.T) {
			t.Parallel()
			if _, err := ReadItemStrands(strings.NewReader(c.in), "s.csv"); err == nil || err.Error() != c.want {
				t.Errorf("%q: got %v; want %q", c.in, err, c.want)
			}
		})
	}
}
