package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// multiregionHCL is spinJob's job with a multiregion block over both
// regions: one allocation in east, two in west.
func multiregionHCL(id string) string {
	block := `  multiregion {
    region "east" {
      count = 1
    }
    region "west" {
      count = 2
      meta {
        side = "west"
      }
    }
  }
`
	return strings.Replace(spinJob{ID: id, Count: 1}.hcl(), "  type = \"service\"\n", "  type = \"service\"\n"+block, 1)
}

// TestClusterMultiregionRegistersInBothRegions: a multiregion job run
// through east is registered in both regions, each with its region's
// count (east 1, west 2) running on its own client, at the same version;
// a second version lands in both at version 1. A job naming a region
// that does not exist is refused with a 400 naming it. Last, `job stop
// -global` removes it from both.
func TestClusterMultiregionRegistersInBothRegions(t *testing.T) {
	f := startFederation(t)
	eastS, westS := f.east.server(), f.west.server()
	// The servers asked here know both regions (west's joined east's
	// first server, the only one of east's in the WAN pool).
	f.east.eventually(t, formTimeout, "both regions known", func() (bool, string) {
		for _, s := range []*agentProc{eastS, westS} {
			regions, err := s.API.Regions().List()
			if err != nil || !slices.Equal(regions, []string{"east", "west"}) {
				return false, fmt.Sprint(s.Name, regions, err)
			}
		}
		return true, ""
	})

	path := filepath.Join(t.TempDir(), "mr.hcl")
	require.NoError(t, os.WriteFile(path, []byte(multiregionHCL("mr")), 0o644))
	out, code := f.east.cli(t, eastS, "job run", "-detach", path)
	require.Equal(t, 0, code, out)
	eastNode, westNode := f.east.nodeIDs(t)["east-client0"], f.west.nodeIDs(t)["west-client0"]
	f.east.waitRunning(t, "mr", 1, settleTimeout, onEachNode(eastNode))
	f.west.waitRunning(t, "mr", 2, settleTimeout, onEachNode(westNode))
	for region, a := range map[string]*agentProc{"east": eastS, "west": westS} {
		job, _, err := a.API.Jobs().Info("mr", nil)
		require.NoError(t, err, region)
		require.Equal(t, region, job.Region)
		require.Equal(t, uint64(0), job.Version, region)
	}
	westJob, _, err := westS.API.Jobs().Info("mr", nil)
	require.NoError(t, err)
	require.Equal(t, "west", westJob.Meta["side"])

	// A second version, through west this time: both regions at 1.
	require.NoError(t, os.WriteFile(path, []byte(strings.Replace(multiregionHCL("mr"), "cpu = 50", "cpu = 60", 1)), 0o644))
	out, code = f.west.cli(t, westS, "job run", "-detach", path)
	require.Equal(t, 0, code, out)
	for region, a := range map[string]*agentProc{"east": eastS, "west": westS} {
		job, _, err := a.API.Jobs().Info("mr", nil)
		require.NoError(t, err, region)
		require.Equal(t, uint64(1), job.Version, region)
	}

	bad := filepath.Join(t.TempDir(), "bad.hcl")
	require.NoError(t, os.WriteFile(bad, []byte(strings.Replace(multiregionHCL("bad"), `region "west"`, `region "mars"`, 1)), 0o644))
	out, code = f.east.cli(t, eastS, "job run", "-detach", bad)
	require.NotEqual(t, 0, code, out)
	require.Contains(t, out, `region "mars" does not exist`)
	_, _, err = westS.API.Jobs().Info("bad", nil)
	require.Error(t, err, "a refused multiregion job reached west")
	_, _, err = eastS.API.Jobs().Info("bad", nil)
	require.Error(t, err, "a refused multiregion job reached east")

	// Stopped with -global from east: gone from both regions.
	out, code = f.east.cli(t, eastS, "job stop", "-global", "-purge", "-detach", "mr")
	require.Equal(t, 0, code, out)
	for region, a := range map[string]*agentProc{"east": eastS, "west": westS} {
		_, _, err := a.API.Jobs().Info("mr", nil)
		require.Error(t, err, "region %s kept the job after a global stop", region)
	}
	f.west.eventually(t, settleTimeout, "west's allocations stop", func() (bool, string) {
		allocs, err := f.west.jobAllocs("mr")
		return err == nil && len(running(allocs)) == 0, fmt.Sprint(len(running(allocs)), err)
	})
}
