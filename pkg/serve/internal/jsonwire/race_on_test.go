//go:build race

package jsonwire

// raceEnabled: the race detector instruments allocations, so allocation counts mean nothing under
// it; `make test` runs the allocation test a second time without it.
const raceEnabled = true
