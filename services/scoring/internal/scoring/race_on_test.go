//go:build race

package scoring

const raceEnabled = true
