package alloc

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/device"
	"github.com/troupe-dev/troupe/runtime/driver"
)

// nvidiaLike is a Fake whose reservations look like the nvidia plugin's:
// UUIDs in NVIDIA_VISIBLE_DEVICES, host indices (GPU-<index>) in
// CUDA_VISIBLE_DEVICES (0..n-1 when isolated), and a driver library to
// mount read-only.
type nvidiaLike struct{ *device.Fake }

func (p nvidiaLike) Reserve(ids []string) (*device.Reservation, error) {
	res, err := p.Fake.Reserve(ids)
	if err != nil {
		return nil, err
	}
	ids = device.Dedupe(ids)
	idx, isolated := make([]string, len(ids)), make([]string, len(ids))
	for i, id := range ids {
		idx[i], isolated[i] = strings.TrimPrefix(id, "GPU-"), strconv.Itoa(i)
	}
	res.Envs = map[string]string{"NVIDIA_VISIBLE_DEVICES": strings.Join(ids, ","),
		"CUDA_VISIBLE_DEVICES": strings.Join(idx, ","), "CUDA_DEVICE_ORDER": "PCI_BUS_ID"}
	res.IsolatedEnvs = map[string]string{"CUDA_VISIBLE_DEVICES": strings.Join(isolated, ",")}
	res.Mounts = []device.Mount{{HostPath: "/usr/lib/libcuda.so.1", ContainerPath: "/usr/lib/libcuda.so.1", ReadOnly: true}}
	return res, nil
}

// eightGPUs is a Fake with GPU-0 … GPU-7.
func eightGPUs() *device.Fake {
	ids := make([]string, 8)
	for i := range ids {
		ids[i] = "GPU-" + string(rune('0'+i))
	}
	return device.NewFake(device.FakeGroup("nvidia", "gpu", "T4", ids...))
}

// deviceAlloc is testAlloc whose task t, run by drv, was given ids.
func deviceAlloc(drv string, config map[string]any, restart *messages.RestartPolicy, ids ...string) *messages.Allocation {
	a := testAlloc("service", config, restart)
	a.Job.TaskGroups[0].Tasks[0].Driver = drv
	a.Job.TaskGroups[0].Tasks[0].Env = map[string]string{"CUDA_VISIBLE_DEVICES": "all", "KEEP": "me"}
	a.AllocatedResources = &messages.AllocatedResources{Tasks: map[string]*messages.AllocatedTaskResources{
		"t": {Devices: []*messages.AllocatedDeviceResource{{Vendor: "nvidia", Type: "gpu", Name: "T4", DeviceIDs: ids}}}}}
	return a
}

// runWithGPUs runs a on h, with an nvidiaLike plugin over eightGPUs,
// until its task runs; it checks that the job was not changed and returns
// the IDs the plugin reserved and the task's config as the driver got it.
func runWithGPUs(t *testing.T, h *harness, a *messages.Allocation) ([][]string, *driver.TaskConfig) {
	t.Helper()
	gpus := eightGPUs()
	h.devices = nvidiaLike{gpus}
	orig := proto.Clone(a)
	h.spawn(a)
	h.waitFor("running", status(statusRunning))
	cfg, ok := h.fake.Task(taskID)
	require.True(t, ok)
	require.True(t, proto.Equal(orig, a), "the job is not changed")
	return gpus.Reserved(), cfg
}

func TestExecTaskGetsItsReservedDevices(t *testing.T) {
	h := newHarness(t)
	a := deviceAlloc("fake", map[string]any{}, nil, "GPU-2", "GPU-5")
	reserved, cfg := runWithGPUs(t, h, a)

	require.Equal(t, [][]string{{"GPU-2", "GPU-5"}}, reserved)
	require.Equal(t, "GPU-2,GPU-5", cfg.Env["NVIDIA_VISIBLE_DEVICES"])
	require.Equal(t, "2,5", cfg.Env["CUDA_VISIBLE_DEVICES"], "an exec task sees every GPU: host indices, over its env block")
	require.Equal(t, "PCI_BUS_ID", cfg.Env["CUDA_DEVICE_ORDER"])
	require.Equal(t, "me", cfg.Env["KEEP"])
	require.NotContains(t, cfg.Config, "devices")
	require.NotContains(t, cfg.Config, "mounts")
}

func TestContainerdTaskGetsDeviceNodesAndIndicesFromZero(t *testing.T) {
	h := newHarness(t)
	h.drivers = map[string]driver.Driver{"containerd": h.fake}
	user := map[string]any{"image": "cuda", "devices": []any{"/dev/fuse"},
		"mounts": []any{map[string]any{"source": "/data", "target": "/data"}}}
	a := deviceAlloc("containerd", user, nil, "GPU-5", "GPU-2")
	reserved, cfg := runWithGPUs(t, h, a)

	require.Equal(t, [][]string{{"GPU-5", "GPU-2"}}, reserved)
	require.Equal(t, "0,1", cfg.Env["CUDA_VISIBLE_DEVICES"], "the container holds only its GPUs")
	require.Equal(t, "GPU-5,GPU-2", cfg.Env["NVIDIA_VISIBLE_DEVICES"])
	require.Equal(t, []any{"/dev/fuse",
		map[string]any{"path": "/dev/fake-GPU-5", "container_path": "/dev/fake-GPU-5", "permissions": "rwm"},
		map[string]any{"path": "/dev/fake-GPU-2", "container_path": "/dev/fake-GPU-2", "permissions": "rwm"},
	}, cfg.Config["devices"])
	require.Equal(t, []any{map[string]any{"source": "/data", "target": "/data"},
		map[string]any{"source": "/usr/lib/libcuda.so.1", "target": "/usr/lib/libcuda.so.1", "readonly": true},
	}, cfg.Config["mounts"])
	require.Equal(t, "cuda", cfg.Config["image"])
	require.Equal(t, []any{"/dev/fuse"}, a.Job.TaskGroups[0].Tasks[0].Config.AsMap()["devices"])
}

func TestRestartedTaskReservesAgainAndReattachedDoesNot(t *testing.T) {
	h := newHarness(t)
	gpus := eightGPUs()
	h.devices = gpus
	pol := &messages.RestartPolicy{Attempts: 3, Interval: int64(time.Hour), Delay: int64(10 * time.Second), Mode: "fail"}
	a := deviceAlloc("fake", map[string]any{}, pol, "GPU-1")
	h.spawn(a)
	h.waitFor("running", status(statusRunning))
	require.NoError(t, h.fake.Exit(taskID, 1))
	h.waitFor("restart pending", func(a *messages.Allocation) bool { return a.TaskStates["t"].GetRestarts() == 1 })
	require.Eventually(t, func() bool { return h.clock.Pending() == 1 }, 5*time.Second, time.Millisecond)
	h.clock.Advance(10 * time.Second)
	require.Eventually(t, func() bool { return h.fake.Calls(driver.MethodStartTask) == 2 }, 5*time.Second, time.Millisecond)
	h.waitFor("running again", status(statusRunning))
	require.Equal(t, [][]string{{"GPU-1"}, {"GPU-1"}}, gpus.Reserved(), "a restarted task gets the same devices")
	cfg, _ := h.fake.Task(taskID)
	require.Equal(t, "GPU-1", cfg.Env[device.FakeEnv])

	h.sys.Root.Send(actor.NewPID("nonhost", "client/allocs/"+a.ID), &crash{})
	require.Eventually(t, func() bool { return h.fake.Calls(driver.MethodRecoverTask) == 1 }, 5*time.Second, time.Millisecond)
	h.waitFor("re-attached", func(a *messages.Allocation) bool {
		ev := a.TaskStates["t"].GetEvents()
		return len(ev) > 0 && ev[len(ev)-1].Type == eventReattached
	})
	require.Len(t, gpus.Reserved(), 2, "a re-attached task reserves nothing")
	require.Equal(t, 2, gpus.Calls(device.MethodReserve))
}

func TestNoDevicePluginFailsTheAllocation(t *testing.T) {
	h := newHarness(t)
	h.spawn(deviceAlloc("fake", map[string]any{}, nil, "GPU-0"))
	failed := h.waitFor("failed", status(statusFailed))
	require.Contains(t, failed.ClientDescription, "this client has no device plugin for nvidia/gpu")
	require.Zero(t, h.fake.Calls(driver.MethodStartTask))
}

func TestReserveErrorFailsTheTaskStart(t *testing.T) {
	h := newHarness(t)
	gpus := eightGPUs()
	h.devices = gpus
	pol := &messages.RestartPolicy{Attempts: 0, Interval: int64(time.Hour), Mode: "fail"}
	h.spawn(deviceAlloc("fake", map[string]any{}, pol, "GPU-9"))
	failed := h.waitFor("failed", status(statusFailed))
	var msgs []string
	for _, ev := range failed.TaskStates["t"].GetEvents() {
		if ev.Type == eventDriverFailure {
			msgs = append(msgs, ev.DisplayMessage)
		}
	}
	require.Len(t, msgs, 1)
	require.Contains(t, msgs[0], "reserving devices failed")
	require.Contains(t, msgs[0], "unknown device instance: GPU-9")
	require.Zero(t, h.fake.Calls(driver.MethodStartTask))
	require.Equal(t, 1, gpus.Calls(device.MethodReserve))
}

func TestWithReservationCopies(t *testing.T) {
	devs := []any{"/dev/fuse"}
	in := &driver.TaskConfig{Env: map[string]string{"A": "1"}, Config: map[string]any{"devices": devs}}
	res := &device.Reservation{Envs: map[string]string{"CUDA_VISIBLE_DEVICES": "3,6,7"},
		IsolatedEnvs: map[string]string{"CUDA_VISIBLE_DEVICES": "0,1,2"},
		Devices:      []device.DeviceNode{{HostPath: "/dev/nvidia3", ContainerPath: "/dev/nvidia3", Permissions: "rw"}},
		Mounts:       []device.Mount{{HostPath: "/var/cache/x", ContainerPath: "/cache"}}}
	out := withReservation(in, containerdDriver, res)
	require.Equal(t, "0,1,2", out.Env["CUDA_VISIBLE_DEVICES"])
	require.Len(t, out.Config["devices"], 2)
	require.Equal(t, []any{map[string]any{"source": "/var/cache/x", "target": "/cache", "readonly": false}},
		out.Config["mounts"], "a mount is read-only only when the plugin says so")
	require.Equal(t, map[string]string{"A": "1"}, in.Env, "the input is not changed")
	require.Equal(t, []any{"/dev/fuse"}, in.Config["devices"])
	require.Len(t, devs, 1)
	require.Equal(t, "3,6,7", res.Envs["CUDA_VISIBLE_DEVICES"], "the reservation is not changed")

	exec := withReservation(in, "exec", res)
	require.Equal(t, "3,6,7", exec.Env["CUDA_VISIBLE_DEVICES"])
	require.Equal(t, []any{"/dev/fuse"}, exec.Config["devices"])
}
