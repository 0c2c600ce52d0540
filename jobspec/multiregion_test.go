package jobspec

import (
	"encoding/json"
	"testing"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

const multiregionHCL = `
job "web" {
  datacenters = ["dc1"]
  meta { team = "a" }
  multiregion {
    strategy {
      max_parallel = 0
    }
    region "east" {
      count       = 3
      datacenters = ["east-1"]
      meta { side = "east" }
    }
    region "west" {
      node_pool = "big"
    }
  }
  group "g" {
    count = 2
    task "t" {
      driver = "exec"
      config { command = "/bin/sleep" }
    }
  }
}
`

// TestMultiregionHCLAndRegionCopies: the HCL block decodes, validates, and
// each region's copy takes that region's count, datacenters, node pool
// and meta over the job's; a region the job does not name has no copy.
func TestMultiregionHCLAndRegionCopies(t *testing.T) {
	job, err := Parse("web.hcl", []byte(multiregionHCL))
	require.NoError(t, err)
	Canonicalize(job)
	require.NoError(t, Validate(job))
	require.Equal(t, []string{"east", "west"}, MultiregionRegions(job))

	east, ok := ForRegion(job, "east")
	require.True(t, ok)
	require.Equal(t, "east", east.Region)
	require.Equal(t, []string{"east-1"}, east.Datacenters)
	require.Equal(t, int32(3), east.TaskGroups[0].Count)
	require.Equal(t, map[string]string{"team": "a", "side": "east"}, east.Meta)
	require.NotNil(t, east.Multiregion, "each copy keeps the block")

	west, ok := ForRegion(job, "west")
	require.True(t, ok)
	require.Equal(t, []string{"dc1"}, west.Datacenters)
	require.Equal(t, int32(2), west.TaskGroups[0].Count, "no region count keeps the group's")
	require.Equal(t, "big", west.NodePool)
	require.Equal(t, map[string]string{"team": "a"}, west.Meta)
	require.Equal(t, int32(2), job.TaskGroups[0].Count, "the original is not changed")

	_, ok = ForRegion(job, "north")
	require.False(t, ok)
}

// TestMultiregionJSONFromNomadClient: Nomad's api.Multiregion, as its
// client sends it (canonicalized), parses to the same regions.
func TestMultiregionJSONFromNomadClient(t *testing.T) {
	job := userJob("service")
	job.TaskGroups[0].Volumes, job.TaskGroups[0].Tasks[0].VolumeMounts = nil, nil
	job.Multiregion = &nomad.Multiregion{Regions: []*nomad.MultiregionRegion{
		{Name: "east", Count: new(2), Datacenters: []string{"e1"}}, {Name: "west"}}}
	job.Canonicalize()
	require.NoError(t, parseAPIJob(t, job))
	src, err := json.Marshal(map[string]any{"Job": job})
	require.NoError(t, err)
	got, err := ParseJSON(src)
	require.NoError(t, err)
	require.Equal(t, []string{"east", "west"}, MultiregionRegions(got))
	require.Equal(t, int32(2), got.Multiregion.Regions[0].Count)
	require.Equal(t, int32(1), got.Multiregion.Regions[1].Count, "Nomad's client fills count 1")
}

// TestMultiregionValidation: every bad block is refused with its path.
func TestMultiregionValidation(t *testing.T) {
	for _, tc := range []struct{ name, block, want string }{
		{"duplicate region", `region "a" {}
		 region "a" {}`, `multiregion: region "a": region is named more than once`},
		{"negative count", `region "a" { count = -1 }`, `multiregion: region "a": count -1 must not be negative`},
		{"bad on_failure", `strategy { on_failure = "explode" }
		 region "a" {}`, `on_failure "explode" must be "fail_all", "fail_local" or unset`},
		{"negative max_parallel", `strategy { max_parallel = -1 }
		 region "a" {}`, `strategy: max_parallel -1 must not be negative`},
		{"empty datacenter", `region "a" { datacenters = [""] }`, `datacenters[0] must not be empty`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			job := multiregionJob(t, tc.block)
			err := Validate(job)
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
		})
	}
}

// multiregionJob parses and canonicalizes a one-task job whose
// multiregion block holds block.
func multiregionJob(t *testing.T, block string) *messages.Job {
	t.Helper()
	src := `job "web" {
  multiregion {
    ` + block + `
  }
  group "g" {
    task "t" {
      driver = "exec"
      config { command = "/bin/true" }
    }
  }
}`
	job, err := Parse("web.hcl", []byte(src))
	require.NoError(t, err)
	Canonicalize(job)
	return job
}

// TestMultiregionRolloutStrategiesValidate: a region-by-region rollout
// (max_parallel below the number of regions) and every on_failure are
// accepted.
func TestMultiregionRolloutStrategiesValidate(t *testing.T) {
	for _, onFailure := range []string{"", MultiregionFailAll, MultiregionFailLocal} {
		t.Run("on_failure="+onFailure, func(t *testing.T) {
			job := multiregionJob(t, `strategy {
      max_parallel = 1
      on_failure   = "`+onFailure+`"
    }
    region "a" {}
    region "b" {}`)
			require.NoError(t, Validate(job))
			require.EqualValues(t, 1, job.Multiregion.Strategy.MaxParallel)
			require.Equal(t, onFailure, job.Multiregion.Strategy.OnFailure)
		})
	}
}

// TestMultiregionRolloutIsServerSet: a job's JSON that carries a rollout
// ID (as GET /v1/job writes it back) parses, without it.
func TestMultiregionRolloutIsServerSet(t *testing.T) {
	job, err := ParseJSON([]byte(`{"Job": {"ID": "web", "MultiregionRollout": "r-1",
	  "Multiregion": {"Regions": [{"Name": "a"}]}}}`))
	require.NoError(t, err)
	require.Empty(t, job.MultiregionRollout)
}
