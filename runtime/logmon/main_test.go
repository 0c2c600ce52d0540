package logmon

import (
	"os"
	"testing"
)

// The test binary doubles as the forwarder.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == Command {
		os.Exit(Main(os.Args[2:]))
	}
	os.Exit(m.Run())
}
