package clientsim_test

import (
	"os"
	"testing"

	"github.com/troupe-dev/troupe/cluster/clustertest"
)

// troupeBin is the troupe binary, built once: the server agent runs as a
// child process, as in the bench (protoactor wants one transport per
// process, and the Sim runs its own).
var troupeBin string

func TestMain(m *testing.M) { os.Exit(clustertest.RunWithTroupe(m, &troupeBin)) }
