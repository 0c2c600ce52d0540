package alloc

import (
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/clientstate"
	"github.com/troupe-dev/troupe/runtime/cni"
	"github.com/troupe-dev/troupe/runtime/csi"
	"github.com/troupe-dev/troupe/runtime/driver"
)

var testNet = &clientstate.AllocNetwork{NetnsPath: "/var/run/netns/x", Interface: "eth0", IP: "10.0.0.7", Gateway: "10.0.0.1"}

func TestSetupRequest(t *testing.T) {
	req, err := setupRequest(bridgeAlloc(netAllocID))
	require.NoError(t, err)
	require.Equal(t, cni.SetupRequest{AllocID: netAllocID, JobID: "web", Group: "g", Ports: []cni.PortMapping{
		{Label: "http", HostPort: 8080, ContainerPort: 80, Protocol: "tcp"},
		{Label: "http", HostPort: 8080, ContainerPort: 80, Protocol: "udp"},
		{Label: "metrics", HostPort: 25000, ContainerPort: 25000, Protocol: "tcp"},
		{Label: "metrics", HostPort: 25000, ContainerPort: 25000, Protocol: "udp"},
	}}, req)

	// Before the scheduler allocated ports: the group's reserved ones only.
	a := bridgeAlloc(netAllocID)
	a.AllocatedResources = nil
	req, err = setupRequest(a)
	require.NoError(t, err)
	require.Len(t, req.Ports, 2)
	require.Equal(t, "http", req.Ports[0].Label)
}

func TestWantsBridge(t *testing.T) {
	for mode, want := range map[string]bool{"": false, "host": false, "bridge": true} {
		a := bridgeAlloc(netAllocID)
		a.Job.TaskGroups[0].Networks[0].Mode = mode
		got, err := wantsBridge(a)
		require.NoError(t, err, mode)
		require.Equal(t, want, got, mode)
	}
	a := testAlloc("service", map[string]any{}, nil)
	got, err := wantsBridge(a)
	require.NoError(t, err)
	require.False(t, got, "no network block: the host's")
	a.Job.TaskGroups[0].Networks = []*messages.NetworkResource{{Mode: "none"}}
	_, err = wantsBridge(a)
	require.ErrorIs(t, err, errNetworkMode)
}

func TestPortEnv(t *testing.T) {
	a := bridgeAlloc(netAllocID)
	task := a.Job.TaskGroups[0].Tasks[0]
	env := taskEnv("/alloc", nil, a, task, testNet)
	want := map[string]string{
		"IP_http": "192.168.1.10", "HOST_IP_http": "192.168.1.10", "PORT_http": "80", "HOST_PORT_http": "8080",
		"ADDR_http": "192.168.1.10:8080", "HOST_ADDR_http": "192.168.1.10:8080",
		"ALLOC_IP_http": "10.0.0.7", "ALLOC_PORT_http": "80", "ALLOC_ADDR_http": "10.0.0.7:80", "ALLOC_INTERFACE_http": "eth0",
		"PORT_metrics": "25000", "HOST_PORT_metrics": "25000", "ALLOC_PORT_metrics": "25000",
	}
	for k, v := range want {
		require.Equal(t, v, env["NOMAD_"+k], "NOMAD_"+k)
		require.Equal(t, v, env["TROUPE_"+k], "TROUPE_"+k)
	}

	t.Run("host mode", func(t *testing.T) {
		env := taskEnv("/alloc", nil, a, task, nil)
		require.Equal(t, "80", env["NOMAD_PORT_http"])
		require.Equal(t, "8080", env["NOMAD_HOST_PORT_http"])
		require.NotContains(t, env, "NOMAD_ALLOC_IP_http")
	})
	t.Run("no host address", func(t *testing.T) {
		b := proto.Clone(a).(*messages.Allocation)
		b.AllocatedResources.Shared.Networks[0].IP = ""
		env := taskEnv("/alloc", nil, b, task, testNet)
		require.NotContains(t, env, "NOMAD_IP_http")
		require.Equal(t, "10.0.0.7:80", env["NOMAD_ALLOC_ADDR_http"])
	})
	t.Run("labels", func(t *testing.T) {
		b := proto.Clone(a).(*messages.Allocation)
		b.AllocatedResources.Shared.Networks[0].ReservedPorts[0].Label = "my-port.1"
		env := taskEnv("/alloc", nil, b, task, testNet)
		require.Equal(t, "80", env["NOMAD_PORT_my_port_1"])
	})
	t.Run("the task's env can use them", func(t *testing.T) {
		b := proto.Clone(a).(*messages.Allocation)
		b.Job.TaskGroups[0].Tasks[0].Env = map[string]string{"LISTEN": "0.0.0.0:${NOMAD_PORT_http}"}
		env := taskEnv("/alloc", nil, b, b.Job.TaskGroups[0].Tasks[0], testNet)
		require.Equal(t, "0.0.0.0:80", env["LISTEN"])
	})
}

// containerdAlloc is a bridge alloc whose containerd task mounts csi
// volume vol0 read-only at /data and has a volume_mounts entry of its own.
func containerdAlloc(t *testing.T) *messages.Allocation {
	a := bridgeAlloc(netAllocID)
	cfg, err := structpb.NewStruct(map[string]any{"image": "busybox",
		"volume_mounts": []any{map[string]any{"source": "/srv/own", "target": "/own"}}})
	require.NoError(t, err)
	g := a.Job.TaskGroups[0]
	g.Tasks[0].Driver, g.Tasks[0].Config = containerdDriver, cfg
	g.Tasks[0].VolumeMounts = []*messages.VolumeMount{{Volume: "vol0", Destination: "data", ReadOnly: true}}
	g.Volumes = map[string]*messages.VolumeRequest{"vol0": {Name: "vol0", Type: "csi", Source: "vol0",
		AccessMode: csi.AccessModeMultiNodeMultiWriter, AttachmentMode: csi.AttachmentModeFilesystem}}
	return a
}

func TestContainerdTaskConfig(t *testing.T) {
	a := containerdAlloc(t)
	task := a.Job.TaskGroups[0].Tasks[0]
	before := proto.Clone(task.Config)
	vols := map[string]*messages.AllocVolumeState{"vol0": {State: volumeMounted, TargetPath: "/csi/per-alloc/x/vol0/rw"}}
	cfg := taskConfig("/alloc", nil, a, task, testNet, vols)
	require.Equal(t, testNet.NetnsPath, cfg.Config["netns_path"])
	require.Equal(t, testNet.NetnsPath, cfg.NetnsPath)
	require.Equal(t, []any{
		map[string]any{"source": "/srv/own", "target": "/own"},
		map[string]any{"source": "/csi/per-alloc/x/vol0/rw", "target": "/data", "readonly": true},
	}, cfg.Config["volume_mounts"])
	require.Equal(t, "busybox", cfg.Config["image"])
	require.Equal(t, "/data", cfg.Env["TROUPE_VOLUME_VOL0"], "the path inside the container")
	require.True(t, proto.Equal(before, task.Config), "the job is not changed")

	// Without a network and before the volume is published: nothing added.
	cfg = taskConfig("/alloc", nil, a, task, nil, nil)
	require.NotContains(t, cfg.Config, "netns_path")
	require.Len(t, cfg.Config["volume_mounts"], 1)

	// An exec task gets the namespace as TaskConfig.NetnsPath only.
	exec := bridgeAlloc(netAllocID)
	cfg = taskConfig("/alloc", nil, exec, exec.Job.TaskGroups[0].Tasks[0], testNet, vols)
	require.Equal(t, testNet.NetnsPath, cfg.NetnsPath)
	require.NotContains(t, cfg.Config, "netns_path")
	require.NotContains(t, cfg.Config, "volume_mounts")
}

// TestContainerdTaskGetsVolumeMounts: a containerd task gets the published
// csi volume in its driver config, not a bind mount in its task dir.
func TestContainerdTaskGetsVolumeMounts(t *testing.T) {
	h, e, _ := csiHarness(t)
	e.known("vol0")
	h.net = cni.NewFake()
	h.drivers = map[string]driver.Driver{containerdDriver: h.fake}
	a := containerdAlloc(t)
	a.Job.TaskGroups[0].Tasks[0].Config.Fields["volume_mounts"] = structpb.NewListValue(&structpb.ListValue{})
	h.spawn(a)
	up := h.waitFor("running", status(statusRunning))
	target := up.GetVolumeStates()["vol0"].GetTargetPath()
	require.NotEmpty(t, target)
	require.Zero(t, e.mounter.Count("Bind"), "no bind into the task dir")
	cfg, _ := h.fake.Task(netAllocID + "/t")
	require.Equal(t, "/var/run/netns/"+netAllocID, cfg.Config["netns_path"])
	require.Equal(t, []any{map[string]any{"source": target, "target": "/data", "readonly": true}},
		cfg.Config["volume_mounts"])

	h.stop(a)
	waitTerminal(t, h, netAllocID)
	require.Equal(t, 1, e.plugin.Calls(csi.MethodNodeUnpublish))
	require.Zero(t, e.mounter.Count("Unmount"), "nothing was bound, nothing to unbind")
}
