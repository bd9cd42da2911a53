package main

import (
	"strings"
	"testing"
)

// withPrograms gives the demo copy in dir a program column: L000001 acme's, L000002 beta's,
// form FORM-READ-G3 acme's (line 3 is its first row) and link STATE-READ-2026 acme's.
func withPrograms(t *testing.T, dir string) {
	t.Helper()
	setLine(t, dir, "items.csv", 2, "id,framework,strand,difficulty,steps,program")
	setLine(t, dir, "items.csv", 3, "L000001,lexile,Key Ideas,-131,,acme")
	setLine(t, dir, "items.csv", 4, "L000002,lexile,Key Ideas,616,,beta")
	setLine(t, dir, "links.csv", 2, "id,framework,kind,slope,intercept,min,max,linking_error,program")
	setLine(t, dir, "links.csv", 3, "STATE-READ-2026,lexile,linear,2.8,-780,200,800,45,acme")
}

// TestCheckPrograms: check summarises what each program owns and what is shared, and reports a
// bad program at its file:line.
func TestCheckPrograms(t *testing.T) {
	t.Parallel()
	dir := demoCopy(t)
	withPrograms(t, dir)
	out, code := call("check", dir)
	want := "shared content: 3538 items, 6 forms, 3 links\nprogram acme: 1 items, 0 forms, 1 links\nprogram beta: 1 items, 0 forms, 0 links\n"
	if code != 0 || !strings.HasSuffix(out, want) {
		t.Errorf("got exit %d:\n%s\nwant it to end\n%s", code, out, want)
	}
	setLine(t, dir, "items.csv", 4, "L000002,lexile,Key Ideas,616,,Beta")
	out, code = call("check", dir)
	if code != 1 || !strings.Contains(out, `items.csv:4: program "Beta" must be`) {
		t.Errorf("a bad program: got exit %d:\n%s", code, out)
	}
	if out, _ := call("check", demoCopy(t)); strings.Contains(out, "shared content") {
		t.Errorf("a bundle without programs: got a program summary:\n%s", out)
	}
}

// TestDiffPrograms: an item or link moved between programs, or from shared to a program, is a
// change, each listed once.
func TestDiffPrograms(t *testing.T) {
	t.Parallel()
	old, moved := demoCopy(t), demoCopy(t)
	withPrograms(t, old)
	withPrograms(t, moved)
	setLine(t, moved, "items.csv", 3, "L000001,lexile,Key Ideas,-131,,beta")
	setLine(t, moved, "items.csv", 5, "L000003,lexile,Craft and Structure,-290,,acme")
	setLine(t, moved, "links.csv", 3, "STATE-READ-2026,lexile,linear,2.8,-780,200,800,45,")
	out, code := call("diff", old, moved)
	want := []string{
		"item L000001 changed: program acme -> beta\n",
		"item L000003 changed: program shared -> acme\n",
		"link STATE-READ-2026 changed: lexile linear slope 2.8 intercept -780 range [200, 800] linking error 45 points [], program acme -> lexile linear slope 2.8 intercept -780 range [200, 800] linking error 45 points []\n",
		"3 changes\n",
	}
	if code != 1 {
		t.Errorf("exit %d; want 1", code)
	}
	for _, w := range want {
		if strings.Count(out, w) != 1 {
			t.Errorf("got\n%s\nwant once %q", out, w)
		}
	}
	if out, code := call("diff", old, old); code != 0 {
		t.Errorf("the same bundle: got exit %d:\n%s", code, out)
	}
}
