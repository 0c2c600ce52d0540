package jobspec

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

const hostVolumeHCL = `
job "hv" {
  group "g" {
    volume "data" {
      type      = "host"
      source    = "shared"
      read_only = true
    }
    task "t" {
      driver = "exec"
      config { command = "/bin/true" }
      volume_mount {
        volume      = "data"
        destination = "/data"
        read_only   = true
      }
    }
  }
}
`

const hostVolumeJSON = `{"Job":{"ID":"hv","Name":"hv","TaskGroups":[{"Name":"g",
 "Volumes":{"data":{"Name":"data","Type":"host","Source":"shared","ReadOnly":true}},
 "Tasks":[{"Name":"t","Driver":"exec","Config":{"command":"/bin/true"},
  "VolumeMounts":[{"Volume":"data","Destination":"/data","ReadOnly":true}]}]}]}}`

// TestHostVolumeParses: a group's host volume and its task's volume_mount
// read the same from HCL and JSON, and validate.
func TestHostVolumeParses(t *testing.T) {
	fromHCL, err := Parse("hv.hcl", []byte(hostVolumeHCL))
	require.NoError(t, err)
	fromJSON, err := ParseJSON([]byte(hostVolumeJSON))
	require.NoError(t, err)
	for _, job := range []*messages.Job{fromHCL, fromJSON} {
		Canonicalize(job)
		require.NoError(t, Validate(job))
		g := job.TaskGroups[0]
		requireProto(t, &messages.VolumeRequest{Name: "data", Type: VolumeTypeHost, Source: "shared", ReadOnly: true}, g.Volumes["data"])
		requireProto(t, &messages.VolumeMount{Volume: "data", Destination: "/data", ReadOnly: true}, g.Tasks[0].VolumeMounts[0])
	}
}

func TestHostVolumeRefusesCSIFields(t *testing.T) {
	job, err := Parse("hv.hcl", []byte(hostVolumeHCL))
	require.NoError(t, err)
	Canonicalize(job)
	job.TaskGroups[0].Volumes["data"].AccessMode = messages.CSIAccessSingleNodeWriter
	job.TaskGroups[0].Volumes["data"].Source = ""
	err = Validate(job)
	require.ErrorContains(t, err, "access_mode is only for csi volumes")
	require.ErrorContains(t, err, "source must not be empty")
}
