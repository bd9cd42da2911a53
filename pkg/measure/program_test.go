package measure

import (
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
)

// withPrograms is the demo bundle with a program column: L000001 and L000372 (an item of
// FORM-READ-G3) are acme's, L000002 beta's, FORM-READ-G3 and STATE-READ-2026 acme's, NATL-READ-PT
// beta's; everything else is shared.
func withPrograms() fstest.MapFS {
	m := demoFS()
	setLine(m, "items.csv", 2, "id,framework,strand,difficulty,steps,program")
	setLine(m, "items.csv", 3, "L000001,lexile,Key Ideas,-131,,acme")
	setLine(m, "items.csv", 4, "L000002,lexile,Key Ideas,616,,beta")
	setLine(m, "items.csv", 374, "L000372,lexile,Foundational Skills,315,,acme")
	forms := strings.Split(string(m["forms.csv"].Data), "\n")
	for i, l := range forms {
		switch {
		case strings.HasPrefix(l, "form,"):
			forms[i] = l + ",program"
		case strings.HasPrefix(l, "FORM-READ-G3,"):
			forms[i] = l + ",acme"
		}
	}
	m["forms.csv"] = &fstest.MapFile{Data: []byte(strings.Join(forms, "\n"))}
	links := strings.Split(string(m["links.csv"].Data), "\n")
	for i, l := range links {
		switch {
		case strings.HasPrefix(l, "id,"):
			links[i] = l + ",program"
		case strings.HasPrefix(l, "STATE-READ-2026,"):
			links[i] = l + ",acme"
		case strings.HasPrefix(l, "NATL-READ-PT,"):
			links[i] = l + ",beta"
		}
	}
	m["links.csv"] = &fstest.MapFile{Data: []byte(strings.Join(links, "\n"))}
	return m
}

// TestViewHidesOtherPrograms: a view holds shared content and its programs' only, and everything
// computed from the bank (adaptive banks, the catalog, the offers) is computed on what it holds.
func TestViewHidesOtherPrograms(t *testing.T) {
	t.Parallel()
	b, err := LoadFS(withPrograms())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := b.Programs(), []string{"acme", "beta"}; !slices.Equal(got, want) {
		t.Fatalf("Programs: got %v; want %v", got, want)
	}
	full, _ := b.Bank("lexile")
	tests := []struct {
		name                    string
		set                     Programs
		l1, l2, l372, form, lin bool // L000001, L000002, L000372, FORM-READ-G3, STATE-READ-2026 seen
		natl                    bool // NATL-READ-PT seen
		hidden                  int  // lexile items left out
	}{
		{"shared only", Programs{}, false, false, false, false, false, false, 3},
		{"acme", ProgramSet("acme"), true, false, true, true, true, false, 1},
		{"beta", ProgramSet("beta"), false, true, false, false, false, true, 2},
		{"acme and beta", ProgramSet("beta", "acme"), true, true, true, true, true, true, 0},
		{"every program", ProgramSet("*"), true, true, true, true, true, true, 0},
		{"a program without content", ProgramSet("gamma"), false, false, false, false, false, false, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v := b.View(tt.set)
			for _, c := range []struct {
				what string
				got  bool
				want bool
			}{
				{"item L000001", has(v.Item("L000001")), tt.l1},
				{"item L000002", has(v.Item("L000002")), tt.l2},
				{"item L000372", has(v.Item("L000372")), tt.l372},
				{"item L000003 (shared)", has(v.Item("L000003")), true},
				{"form FORM-READ-G3", has(v.Form("FORM-READ-G3")), tt.form},
				{"form FORM-READ-G5-PC (shared)", has(v.Form("FORM-READ-G5-PC")), true},
				{"link STATE-READ-2026", has(v.Link("STATE-READ-2026")), tt.lin},
				{"link NATL-READ-PT", has(v.Link("NATL-READ-PT")), tt.natl},
				{"link STATE-MATH-2026 (shared)", has(v.Link("STATE-MATH-2026")), true},
			} {
				if c.got != c.want {
					t.Errorf("%s seen: got %v; want %v", c.what, c.got, c.want)
				}
			}
			bk, _ := v.Bank("lexile")
			if got, want := len(bk.all), len(full.all)-tt.hidden; got != want {
				t.Errorf("adaptive bank: got %d items; want %d", got, want)
			}
			if _, ok := bk.Item("L000002"); ok != tt.l2 {
				t.Errorf("adaptive bank holds L000002: got %v; want %v", ok, tt.l2)
			}
			page := v.Items(ItemQuery{Framework: "lexile", Limit: 5000})
			if got, want := len(page.Items), len(full.all)-tt.hidden; got != want {
				t.Errorf("catalog: got %d items; want %d", got, want)
			}
			if got, want := v.Offers()[0].Items, len(full.all)-tt.hidden; got != want {
				t.Errorf("offer: got %d lexile items; want %d", got, want)
			}
			if tt.hidden == 0 && v != b {
				t.Error("a view that sees everything is not the bundle itself")
			}
			if again := b.View(tt.set); again != v {
				t.Error("a second view of the same set is not the cached one")
			}
		})
	}
}

func has[T any](_ T, ok bool) bool { return ok }

// TestProgramSet: the canonical key of a set and what it sees.
func TestProgramSet(t *testing.T) {
	t.Parallel()
	tests := []struct {
		set  Programs
		key  string
		sees []string
		not  []string
	}{
		{Programs{}, "", []string{""}, []string{"acme"}},
		{ProgramSet("beta", "acme", "beta"), "acme,beta", []string{"", "acme", "beta"}, []string{"gamma"}},
		{ProgramSet("acme", "*"), "*", []string{"", "acme", "zeta"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			t.Parallel()
			if got := tt.set.Key(); got != tt.key {
				t.Errorf("Key: got %q; want %q", got, tt.key)
			}
			for _, p := range tt.sees {
				if !tt.set.Sees(p) {
					t.Errorf("Sees(%q): got false; want true", p)
				}
			}
			for _, p := range tt.not {
				if tt.set.Sees(p) {
					t.Errorf("Sees(%q): got true; want false", p)
				}
			}
		})
	}
}

// TestLoadRejectsBadPrograms: a bad program name, and a form holding another program's items or
// rows that disagree on its program, are refused at file:line.
func TestLoadRejectsBadPrograms(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", 65)
	tests := []struct {
		name  string
		breaK func(m fstest.MapFS)
		want  string
	}{
		{"upper case", func(m fstest.MapFS) { setLine(m, "items.csv", 5, "L000003,lexile,Craft and Structure,-290,,Acme") },
			`items.csv:5: program "Acme" must be`},
		{"65 characters", func(m fstest.MapFS) { setLine(m, "items.csv", 5, "L000003,lexile,Craft and Structure,-290,,"+long) },
			`items.csv:5: program "` + long + `" must be`},
		{"a star", func(m fstest.MapFS) {
			setLine(m, "links.csv", 4, "STATE-MATH-2026,quantile,linear,2.5,-650,200,800,40,*")
		},
			`links.csv:4: program "*" must be`},
		{"form of another program's item", func(m fstest.MapFS) {
			setLine(m, "items.csv", 4, "L000002,lexile,Key Ideas,616,,beta")
			addFormRow(m, "FORM-READ-G3,lexile,L000002,acme")
		},
			`item "L000002" is of program beta; form "FORM-READ-G3" of program acme may hold only shared items and its own program's`},
		{"shared form of a program's item", func(m fstest.MapFS) { addFormRow(m, "FORM-READ-G8,lexile,L000001,") },
			`item "L000001" is of program acme; form "FORM-READ-G8" of shared content may hold only`},
		{"form rows disagree", func(m fstest.MapFS) { addFormRow(m, "FORM-READ-G3,lexile,L000003,beta") },
			`form "FORM-READ-G3" is of program acme (line 3), not program beta`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := withPrograms()
			tt.breaK(m)
			_, err := LoadFS(m)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v; want an error containing %q", err, tt.want)
			}
		})
	}
	// The last accepted name: 64 characters of every kind allowed.
	m := withPrograms()
	ok := "a0._-" + strings.Repeat("z", 59)
	setLine(m, "items.csv", 5, "L000003,lexile,Craft and Structure,-290,,"+ok)
	b, err := LoadFS(m)
	if err != nil {
		t.Fatalf("program %q: %v", ok, err)
	}
	if it, _ := b.Item("L000003"); it.Program != ok {
		t.Errorf("L000003's program: got %q; want %q", it.Program, ok)
	}
}

func addFormRow(m fstest.MapFS, row string) {
	m["forms.csv"] = &fstest.MapFile{Data: append(append([]byte{}, m["forms.csv"].Data...), "\n"+row+"\n"...)}
}

// BenchmarkView is what a request pays for its client's view of a bundle with programs: a cached
// view (a map look-up) against building it (a filter of the bank and its indexes), with the
// bundle itself (a client that sees everything) as the floor.
func BenchmarkView(b *testing.B) {
	bundle, err := LoadFS(withPrograms())
	if err != nil {
		b.Fatal(err)
	}
	acme := ProgramSet("acme")
	bundle.View(acme)
	b.Run("everything", func(b *testing.B) {
		all := AllPrograms()
		for b.Loop() {
			bundle.View(all)
		}
	})
	b.Run("cached", func(b *testing.B) {
		for b.Loop() {
			bundle.View(acme)
		}
	})
	b.Run("cached with the set from the claims", func(b *testing.B) {
		claims := []string{"acme"}
		for b.Loop() {
			bundle.View(ProgramSet(claims...))
		}
	})
	b.Run("built", func(b *testing.B) {
		for b.Loop() {
			bundle.view(acme)
		}
	})
}

// TestViewKeepsWhatBelongsToNoProgram: a view answers growth norms, norms and the norm curve as
// the whole bundle does (they belong to no program), whichever programs it sees.
func TestViewKeepsWhatBelongsToNoProgram(t *testing.T) {
	t.Parallel()
	m := withPrograms()
	growth, err := demoFiles.ReadFile("demo/growth_norms.csv") // fitted apart from democontent's files
	if err != nil {
		t.Fatal(err)
	}
	m["growth_norms.csv"] = &fstest.MapFile{Data: growth}
	b, err := LoadFS(m)
	if err != nil {
		t.Fatal(err)
	}
	current, prior := Window{Grade: 6, TimeOfYear: "EOY"}, []Window{{Grade: 5, TimeOfYear: "EOY"}}
	want, ok := b.GrowthModelFor("lexile", current, prior)
	if !ok {
		t.Fatal("the demo bundle has no lexile growth model from grade 5 EOY to grade 6 EOY")
	}
	for _, set := range []Programs{{}, ProgramSet("acme"), ProgramSet("gamma")} {
		got, ok := b.View(set).GrowthModelFor("lexile", current, prior)
		if !ok || got != want {
			t.Errorf("view %q: got growth model %p (%v); want the bundle's %p", set.Key(), got, ok, want)
		}
	}
}

// TestViewBuiltOnceUnderConcurrency: the first requests of a program set after a reload arrive
// together; they wait for one build of its view instead of each building one (measured as the
// memory allocated: 32 builds would allocate 32 views' worth).
func TestViewBuiltOnceUnderConcurrency(t *testing.T) {
	// Not parallel: it reads the process's allocation counter.
	one, err := LoadFS(withPrograms())
	if err != nil {
		t.Fatal(err)
	}
	b, err := LoadFS(withPrograms())
	if err != nil {
		t.Fatal(err)
	}
	allocated := func(f func()) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	single := allocated(func() { one.View(ProgramSet("acme")) })
	const callers = 32
	views := make([]*Bundle, callers)
	herd := allocated(func() {
		var wg sync.WaitGroup
		for i := range callers {
			wg.Go(func() { views[i] = b.View(ProgramSet("acme")) })
		}
		wg.Wait()
	})
	for i, v := range views {
		if v != views[0] {
			t.Fatalf("caller %d got another view than caller 0", i)
		}
	}
	t.Logf("one view allocated %d bytes; %d concurrent first views %d", single, callers, herd)
	if herd > 3*single {
		t.Errorf("%d concurrent first views allocated %d bytes; want at most 3 times one view's %d", callers, herd, single)
	}
}
