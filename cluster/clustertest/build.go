package clustertest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// BuildTroupe builds this module's troupe binary (./cmd/troupe) into dir
// and returns its path, for tests that run agents as child processes.
func BuildTroupe(dir string) (string, error) {
	_, file, _, _ := runtime.Caller(0)
	bin := filepath.Join(dir, "troupe")
	build := exec.Command("go", "build", "-o", bin, "./cmd/troupe")
	build.Dir = filepath.Join(filepath.Dir(file), "..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building troupe: %w\n%s", err, out)
	}
	return bin, nil
}

// RunWithTroupe is a TestMain body: it builds troupe into a temporary
// directory, sets *bin to it, runs the tests and removes the directory.
// It returns the exit code: os.Exit(clustertest.RunWithTroupe(m, &bin)).
func RunWithTroupe(m *testing.M, bin *string) int {
	dir, err := os.MkdirTemp("", "troupe-test-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if *bin, err = BuildTroupe(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}
