package jobspec

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"
)

// userJob is a job built with Nomad's api package as a user would.
func userJob(typ string) *nomad.Job {
	job := nomad.NewServiceJob("web", "web", "global", 50)
	job.Type = &typ
	task := nomad.NewTask("t", "exec").SetConfig("command", "/bin/sleep").
		Require(&nomad.Resources{CPU: new(100), MemoryMB: new(64)})
	task.VolumeMounts = []*nomad.VolumeMount{{Volume: new("v"), Destination: new("/data")}}
	task.LogConfig = &nomad.LogConfig{MaxFiles: new(3)}
	group := nomad.NewTaskGroup("g", 2).AddTask(task)
	group.Volumes = map[string]*nomad.VolumeRequest{"v": {Name: "v", Type: "csi", Source: "vol",
		AccessMode: "single-node-writer", AttachmentMode: "file-system"}}
	group.Networks = []*nomad.NetworkResource{{DynamicPorts: []nomad.Port{{Label: "http"}}}}
	job.AddTaskGroup(group)
	return job
}

func parseAPIJob(t *testing.T, job *nomad.Job) error {
	src, err := json.Marshal(map[string]any{"Job": job})
	require.NoError(t, err)
	_, err = ParseJSON(src)
	return err
}

// TestParseJSONAcceptsNomadClientZeroes: what Nomad's client sends for
// fields left unset (nil, zero structs) and what api.Job.Canonicalize fills
// in (its default update strategy and ephemeral disk, "private" mounts)
// pass.
func TestParseJSONAcceptsNomadClientZeroes(t *testing.T) {
	for _, typ := range []string{"service", "batch", "system"} {
		t.Run(typ, func(t *testing.T) {
			require.NoError(t, parseAPIJob(t, userJob(typ)))
			canonical := userJob(typ)
			canonical.Canonicalize()
			require.NoError(t, parseAPIJob(t, canonical))
			zeroes := userJob(typ)
			g, task := zeroes.TaskGroups[0], zeroes.TaskGroups[0].Tasks[0]
			zeroes.Periodic, zeroes.Multiregion = &nomad.PeriodicConfig{}, &nomad.Multiregion{}
			g.EphemeralDisk, g.Update = &nomad.EphemeralDisk{}, &nomad.UpdateStrategy{}
			task.Lifecycle, task.Templates = &nomad.TaskLifecycle{}, []*nomad.Template{}
			require.NoError(t, parseAPIJob(t, zeroes))
		})
	}
}

// TestParseJSONRefusalsNameTheirPath: a user's job that sets fields troupe
// does not implement is refused with every one of them named by its path.
func TestParseJSONRefusalsNameTheirPath(t *testing.T) {
	job := userJob("service")
	job.TaskGroups[0].EphemeralDisk = &nomad.EphemeralDisk{SizeMB: new(1000)}
	job.TaskGroups[0].Networks[0].DNS = &nomad.DNSConfig{Servers: []string{"1.1.1.1"}}
	task := job.TaskGroups[0].Tasks[0]
	task.Templates = []*nomad.Template{{EmbeddedTmpl: new("x"), DestPath: new("local/x"), VaultGrace: new(time.Second)}}
	task.Resources.SecretsMB = new(2)
	task.KillTimeout = new(time.Second)
	err := parseAPIJob(t, job)
	require.Error(t, err)
	require.True(t, errors.Is(err, ErrUnsupported))
	var ue *UnsupportedError
	require.ErrorAs(t, err, &ue)
	require.Equal(t, []string{
		`job "web": group "g": EphemeralDisk.SizeMB is not supported yet`,
		`job "web": group "g": Networks[0].DNS is not supported yet`,
		`job "web": group "g": task "t": Resources.SecretsMB is not supported yet`,
		`job "web": group "g": task "t": Templates[0].VaultGrace is not supported yet`,
	}, ue.Problems)
}

func TestParseJSONRefusesUnknownFieldsThatAreSet(t *testing.T) {
	_, err := ParseJSON([]byte(`{"Job": {"ID": "j", "Bogus": 0, "TaskGroups": [{"Name": "g",
		"Tasks": [{"Name": "t", "Driver": "exec", "Sidecar": {"Image": "x"}}]}]}}`))
	require.EqualError(t, err, `job "j": group "g": task "t": Sidecar is not a field of Nomad's job API that troupe knows`)
	_, err = ParseJSON([]byte(`{"Job": {"ID": "j", "update": {"max_parallel": 0}, "Bogus": null}}`))
	require.NoError(t, err, "zero values and case-insensitive names pass")
}
