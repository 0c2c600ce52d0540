package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/troupe-dev/troupe/api"
)

// spinJob is an exec service job whose tasks loop forever.
type spinJob struct {
	ID        string
	Count     int
	LostAfter string // disconnect.lost_after; "" leaves the block out
	// StopOnClientAfter is disconnect.stop_on_client_after (instead of
	// lost_after, as Nomad wants).
	StopOnClientAfter string
}

// hcl renders the job file, one attribute per line (HCL2 wants that).
func (j spinJob) hcl() string {
	disconnect := ""
	switch {
	case j.LostAfter != "":
		disconnect = fmt.Sprintf("\n    disconnect {\n      lost_after = %q\n    }\n", j.LostAfter)
	case j.StopOnClientAfter != "":
		disconnect = fmt.Sprintf("\n    disconnect {\n      stop_on_client_after = %q\n    }\n", j.StopOnClientAfter)
	}
	return fmt.Sprintf(`job %[1]q {
  datacenters = ["dc1"]
  type = "service"

  group "spin" {
    count = %[2]d
%[3]s
    task "spin" {
      driver = "exec"

      config {
        command = "/bin/sh"
        args = ["-c", "while true; do sleep 1; done"]
      }

      resources {
        cpu = 50
        memory = 32
      }
    }
  }
}
`, j.ID, j.Count, disconnect)
}

// submit writes the job file and runs `troupe job run -detach` against a.
func (tc *testCluster) submit(t *testing.T, a *agentProc, j spinJob) {
	t.Helper()
	path := filepath.Join(t.TempDir(), j.ID+".hcl")
	require.NoError(t, os.WriteFile(path, []byte(j.hcl()), 0o644))
	out, code := tc.cli(t, a, "job run", "-detach", path)
	require.Equal(t, 0, code, "job run %s via %s:\n%s", j.ID, a.Name, out)
}

// jobAllocs lists the job's allocations, asked of a live server.
func (tc *testCluster) jobAllocs(jobID string) ([]*api.AllocListStub, error) {
	s := tc.server()
	allocs, _, err := s.API.Jobs().Allocations(jobID, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: allocations of %s: %w", s.Name, jobID, err)
	}
	return allocs, nil
}

// running returns the allocations the job wants to run and that run.
func running(allocs []*api.AllocListStub) []*api.AllocListStub {
	var out []*api.AllocListStub
	for _, a := range allocs {
		if a.DesiredStatus == "run" && a.ClientStatus == "running" {
			out = append(out, a)
		}
	}
	return out
}

// allocCheck looks at the running and all allocations of a job and says
// whether they are as wanted, else why not.
type allocCheck func(running, all []*api.AllocListStub) (bool, string)

// waitRunning waits until exactly count allocations of the job run, and
// returns them; ok, when given, must also accept them.
func (tc *testCluster) waitRunning(t *testing.T, jobID string, count int, timeout time.Duration,
	ok allocCheck) []*api.AllocListStub {
	t.Helper()
	var got []*api.AllocListStub
	tc.eventually(t, timeout, fmt.Sprintf("%d running allocations of %s", count, jobID), func() (bool, string) {
		allocs, err := tc.jobAllocs(jobID)
		if err != nil {
			return false, err.Error()
		}
		got = running(allocs)
		if len(got) != count {
			return false, describeAllocs(allocs)
		}
		if ok != nil {
			if fine, why := ok(got, allocs); !fine {
				return false, why + ": " + describeAllocs(allocs)
			}
		}
		return true, ""
	})
	return got
}

// onEachNode accepts running allocations that use every given node.
func onEachNode(nodeIDs ...string) allocCheck {
	return func(running, _ []*api.AllocListStub) (bool, string) {
		n := perNode(running)
		for _, id := range nodeIDs {
			if n[id] == 0 {
				return false, "none on node " + short(id)
			}
		}
		return true, ""
	}
}

// perNode counts allocations by node ID.
func perNode(allocs []*api.AllocListStub) map[string]int {
	n := map[string]int{}
	for _, a := range allocs {
		n[a.NodeID]++
	}
	return n
}

// allocIDs returns the sorted IDs.
func allocIDs(allocs []*api.AllocListStub) []string {
	ids := make([]string, 0, len(allocs))
	for _, a := range allocs {
		ids = append(ids, a.ID)
	}
	sort.Strings(ids)
	return ids
}

func describeAllocs(allocs []*api.AllocListStub) string {
	parts := make([]string, 0, len(allocs))
	for _, a := range allocs {
		parts = append(parts, fmt.Sprintf("%s@%s:%s/%s", short(a.ID), orDash(a.NodeName, short(a.NodeID)),
			a.DesiredStatus, a.ClientStatus))
	}
	sort.Strings(parts)
	return fmt.Sprintf("%d allocs [%s]", len(allocs), strings.Join(parts, " "))
}

func short(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

func orDash(s, alt string) string {
	if s != "" {
		return s
	}
	return alt
}
