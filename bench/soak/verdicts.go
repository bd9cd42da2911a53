package main

import (
	"fmt"
	"io"
)

// verdicts prints each target of a scenario as PASS or FAIL and remembers whether any failed.
type verdicts struct {
	out    io.Writer
	failed bool
}

func (v *verdicts) check(good bool, format string, args ...any) {
	verdict := "PASS"
	if !good {
		verdict, v.failed = "FAIL", true
	}
	fmt.Fprintf(v.out, "%s  %s\n", verdict, fmt.Sprintf(format, args...))
}

// exitCode is the scenario's exit status: 1 when a target was missed.
func (v *verdicts) exitCode() int {
	if v.failed {
		return 1
	}
	return 0
}
