//go:build race

package e2e

// raceEnabled is true when the tests run with -race; binaries the tests build then reuse the race-instrumented
// packages already compiled for the tests instead of compiling every dependency a second time.
const raceEnabled = true
