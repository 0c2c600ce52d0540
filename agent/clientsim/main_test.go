package clientsim_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// troupeBin is the troupe binary, built once: the server agent runs as a
// child process, as in the bench (protoactor wants one transport per
// process, and the Sim runs its own).
var troupeBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "troupe-clientsim-test-")
	if err != nil {
		panic(err)
	}
	troupeBin = filepath.Join(dir, "troupe")
	_, file, _, _ := runtime.Caller(0)
	build := exec.Command("go", "build", "-o", troupeBin, "./cmd/troupe")
	build.Dir = filepath.Join(filepath.Dir(file), "..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building troupe: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
