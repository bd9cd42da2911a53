package main

import (
	"fmt"
	"io"
	"math"

	"github.com/yardstick-dev/yardstick/pkg/measure"
)

// check prints every problem of the bundle in dir (errFound), or its summary.
func check(dir string, w io.Writer) error {
	b, problems := measure.CheckDir(dir)
	if len(problems) > 0 {
		for _, p := range problems {
			fmt.Fprintln(w, p)
		}
		fmt.Fprintf(w, "%s: %d problems; the services would not load this bundle\n", dir, len(problems))
		return errFound
	}
	live, err := measure.OpenLive(dir)
	if err != nil { // changed between the two reads
		return err
	}
	fmt.Fprintf(w, "%s: valid, hash %s\n", dir, live.Version())
	for _, o := range b.Offers() {
		fmt.Fprintln(w, o)
	}
	programSummary(b, w)
	return nil
}

// programSummary prints, for a bundle whose content belongs to programs, what each program owns
// and what is shared: what a client given no program sees is the shared line.
func programSummary(b *measure.Bundle, w io.Writer) {
	programs := b.Programs()
	if len(programs) == 0 {
		return
	}
	type owned struct{ items, forms, links int }
	count := map[string]*owned{"": {}}
	for _, p := range programs {
		count[p] = &owned{}
	}
	for _, fw := range b.FrameworkNames() {
		for _, it := range b.Items(measure.ItemQuery{Framework: fw, Limit: math.MaxInt}).Items {
			count[it.Program].items++
		}
	}
	for _, f := range b.Forms("") {
		count[f.Program].forms++
	}
	for _, l := range b.Links() {
		count[l.Program].links++
	}
	for _, p := range append([]string{""}, programs...) {
		name := "program " + p
		if p == "" {
			name = "shared content"
		}
		c := count[p]
		fmt.Fprintf(w, "%s: %d items, %d forms, %d links\n", name, c.items, c.forms, c.links)
	}
}
