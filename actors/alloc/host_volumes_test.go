package alloc

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/driver"
)

// hostVolAlloc is an allocation whose task (of driver drv) mounts host
// volume "data" (source "shared") at /data.
func hostVolAlloc(drv string, reqRO, mountRO bool) (*messages.Allocation, *messages.Task) {
	a := testAlloc("service", map[string]any{}, nil)
	a.ID = "A"
	task := groupOf(a).GetTasks()[0]
	task.Driver = drv
	task.VolumeMounts = []*messages.VolumeMount{{Volume: "data", Destination: "data/", ReadOnly: mountRO}}
	groupOf(a).Volumes = map[string]*messages.VolumeRequest{"data": {Name: "data", Type: "host", Source: "shared", ReadOnly: reqRO}}
	return a, task
}

func hostVolNode(readOnly bool) *messages.Node {
	return &messages.Node{HostVolumes: map[string]*messages.ClientHostVolume{"shared": {Path: "/srv/shared", ReadOnly: readOnly}}}
}

// asRoot makes the package see an agent running as root (or not).
func asRoot(t *testing.T, root bool) {
	old := rootIsolation
	rootIsolation = func() bool { return root }
	t.Cleanup(func() { rootIsolation = old })
}

func TestHostVolumeMountsResolve(t *testing.T) {
	asRoot(t, true)
	tests := []struct {
		name                   string
		nodeRO, reqRO, mountRO bool
		wantRO                 bool
	}{
		{"read-write", false, false, false, false},
		{"request read-only", false, true, false, true},
		{"mount read-only", false, false, true, true},
		{"node read-only, request read-only", true, true, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := []driver.Mount{{Source: "/srv/shared", Destination: "/data", ReadOnly: tt.wantRO}}
			for _, drv := range []string{"exec", "java"} {
				a, task := hostVolAlloc(drv, tt.reqRO, tt.mountRO)
				cfg := taskConfig("/var/troupe/alloc", hostVolNode(tt.nodeRO), a, task, nil, nil)
				require.Equal(t, &driver.Isolation{AllocDir: "/var/troupe/alloc/A/alloc", Mounts: want}, cfg.Isolation, drv)
				require.Equal(t, "/data", cfg.Env["TROUPE_VOLUME_DATA"], drv)
			}
			a, task := hostVolAlloc("containerd", tt.reqRO, tt.mountRO)
			cfg := taskConfig("/var/troupe/alloc", hostVolNode(tt.nodeRO), a, task, nil, nil)
			require.Equal(t, &driver.Isolation{AllocDir: "/var/troupe/alloc/A/alloc"}, cfg.Isolation)
			require.Equal(t, []any{map[string]any{"source": "/srv/shared", "target": "/data", "readonly": tt.wantRO}},
				cfg.Config["volume_mounts"])
		})
	}
}

func TestHostVolumeMountsRefused(t *testing.T) {
	asRoot(t, true)
	a, task := hostVolAlloc("raw_exec", true, false)
	_, err := hostVolumeMounts(hostVolNode(false), a, task)
	require.ErrorIs(t, err, errHostVolume)
	require.Contains(t, err.Error(), `task driver "raw_exec" for "t" does not support host volumes`)
	cfg := taskConfig("/r", hostVolNode(false), a, task, nil, nil)
	require.Nil(t, cfg.Isolation)
	require.NotContains(t, cfg.Env, "TROUPE_VOLUME_DATA")

	a, task = hostVolAlloc("exec", false, false)
	_, err = hostVolumeMounts(&messages.Node{}, a, task)
	require.ErrorIs(t, err, errHostVolume)
	require.Contains(t, err.Error(), `no host volume named "shared"`)

	_, err = hostVolumeMounts(hostVolNode(true), a, task)
	require.ErrorIs(t, err, errHostVolume)
	require.Contains(t, err.Error(), `host volume "shared" is read-only on this node`)

	asRoot(t, false)
	_, err = hostVolumeMounts(hostVolNode(false), a, task)
	require.ErrorIs(t, err, errHostVolume)
	require.Contains(t, err.Error(), `task driver "exec" for "t" does not support host volumes when the agent is not root`)
	a, task = hostVolAlloc("containerd", false, false)
	_, err = hostVolumeMounts(hostVolNode(false), a, task)
	require.NoError(t, err, "containerd isolates without the agent being root")

	asRoot(t, true)
	a, task = hostVolAlloc("exec", false, false)
	task.VolumeMounts = nil
	mounts, err := hostVolumeMounts(&messages.Node{}, a, task)
	require.NoError(t, err, "a task that mounts nothing needs nothing of the node")
	require.Empty(t, mounts)
}

// TestRawExecHostVolumeFailsAlloc: a raw_exec task never starts with a
// host volume (it would write where the destination names on the host).
func TestRawExecHostVolumeFailsAlloc(t *testing.T) {
	h := newHarness(t)
	h.drivers = map[string]driver.Driver{"raw_exec": h.fake}
	a, _ := hostVolAlloc("raw_exec", true, false)
	a.ID = "a1b2c3d4-0000-0000-0000-000000000001"
	h.spawn(a)
	failed := h.waitFor("failed", status(statusFailed))
	ev := failed.TaskStates["t"].Events
	require.Equal(t, eventSetupFailure, ev[len(ev)-1].Type)
	require.Contains(t, ev[len(ev)-1].DisplayMessage, "does not support host volumes")
	require.Zero(t, h.fake.Calls(driver.MethodStartTask))
}
