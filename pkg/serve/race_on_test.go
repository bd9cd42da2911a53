//go:build race

package serve

// raceEnabled: the race detector instruments every allocation and keeps shadow memory, so heap
// figures mean nothing under it; `make test` runs the cost test a second time without it.
const raceEnabled = true
