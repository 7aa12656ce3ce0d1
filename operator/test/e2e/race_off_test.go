//go:build !race

package e2e

// raceEnabled is false when the tests run without -race.
const raceEnabled = false
