package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/api"
)

// TestClusterDrain drains one client of a two-client cluster with the
// CLI: its allocations move to the other client one at a time (migrate
// max_parallel 1), the drained node ends ineligible with nothing on it,
// and `-disable` makes it eligible again.
func TestClusterDrain(t *testing.T) {
	tc := startCluster(t, 2)
	ids := tc.nodeIDs(t)
	drained, other := tc.clients[0], tc.clients[1]
	tc.submit(t, tc.server(), spinJob{ID: "spin", Count: spinAllocs})
	tc.waitRunning(t, "spin", spinAllocs, settleTimeout, onEachNode(ids[drained.Name], ids[other.Name]))

	start := time.Now()
	out, code := tc.cli(t, tc.server(), "node drain", "-enable", "-deadline", "1m", ids[drained.Name])
	require.Equal(t, 0, code, out)
	moved := func(running, _ []*api.AllocListStub) (bool, string) {
		if n := perNode(running); n[ids[other.Name]] != spinAllocs {
			return false, fmt.Sprintf("%d running on %s", n[ids[other.Name]], other.Name)
		}
		return true, ""
	}
	tc.waitRunning(t, "spin", spinAllocs, settleTimeout, moved)
	tc.eventually(t, settleTimeout, "the drain to complete", func() (bool, string) {
		n, _, err := tc.server().API.Nodes().Info(ids[drained.Name], nil)
		if err != nil {
			return false, err.Error()
		}
		return !n.Drain && n.SchedulingEligibility == "ineligible", fmt.Sprintf("drain=%v eligibility=%s", n.Drain, n.SchedulingEligibility)
	})
	t.Logf("drain of %d allocations: %.1f s", spinAllocs/2, time.Since(start).Seconds())

	out, code = tc.cli(t, tc.server(), "node drain", "-disable", ids[drained.Name])
	require.Equal(t, 0, code, out)
	tc.eventually(t, settleTimeout, "the node to be eligible again", func() (bool, string) {
		n, _, err := tc.server().API.Nodes().Info(ids[drained.Name], nil)
		if err != nil {
			return false, err.Error()
		}
		return n.SchedulingEligibility == "eligible", n.SchedulingEligibility
	})
}
