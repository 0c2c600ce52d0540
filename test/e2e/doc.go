// Package e2e holds end-to-end tests that run the real troupe binary the
// way an operator does: build it, start `troupe agent -dev`, and drive it
// with the CLI (troupe job run, alloc logs, actors, ...).
package e2e
