//go:build !race

package scoring

const raceEnabled = false
