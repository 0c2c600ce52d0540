//go:build race

package agent

// raceDetector reports whether the tests run with -race.
const raceDetector = true
