package node

import (
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/device"
)

// plainPlugin hides the Fake's Watch: a plugin that cannot watch, so only
// the refresh timer finds changes.
type plainPlugin struct{ device.Plugin }

func twoGPUs() *device.Fake {
	return device.NewFake(device.FakeGroup("nvidia", "gpu", "T4", "GPU-0", "GPU-1"))
}

// deviceClient starts a client with plugin p, refreshing every second, and
// waits until it registered and armed its heartbeat and device timers.
func deviceClient(t *testing.T, p device.Plugin) (*fakeServer, *actors.FakeClock, *actors.System, *actor.PID) {
	t.Helper()
	srv, clock := &fakeServer{}, actors.NewFakeClock(time.Unix(0, 0))
	rec := &recorder{spawned: map[string]int{}, got: map[string][]*messages.Allocation{}}
	sys, pid := newTestClientWith(t, srv, clock, rec, func(s *ClientSpec) {
		s.Devices, s.DeviceInterval = p, time.Second
	})
	require.Eventually(t, func() bool { return clock.Pending() == 2 }, 5*time.Second, time.Millisecond)
	return srv, clock, sys, pid
}

// registeredNode returns the i-th registration.
func (f *fakeServer) registeredNode(t *testing.T, i int) *messages.Node {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	require.Greater(t, len(f.nodes), i)
	return f.nodes[i]
}

// health lists "id:healthy:description" for every instance of a node.
func health(n *messages.Node) []string {
	var out []string
	for _, g := range n.GetNodeResources().GetDevices() {
		for _, in := range g.GetInstances() {
			h := "healthy"
			if !in.GetHealthy() {
				h = "unhealthy"
			}
			out = append(out, device.GroupID(g)+" "+in.GetID()+":"+h+":"+in.GetHealthDescription())
		}
	}
	return out
}

// tick fires the device timer and waits until the refresh fingerprinted
// (the plugin's calls reach want) and armed the timer again.
func tick(t *testing.T, clock *actors.FakeClock, f *device.Fake, want int) {
	t.Helper()
	clock.Advance(time.Second)
	require.Eventually(t, func() bool {
		return f.Calls(device.MethodFingerprint) == want && clock.Pending() == 2
	}, 5*time.Second, time.Millisecond)
}

func TestClientRegistersDevices(t *testing.T) {
	f := twoGPUs()
	srv, _, _, _ := deviceClient(t, plainPlugin{f})
	n := srv.registeredNode(t, 0)
	require.Equal(t, []string{"nvidia/gpu/T4 GPU-0:healthy:", "nvidia/gpu/T4 GPU-1:healthy:"}, health(n))
	require.NotNil(t, n.GetNodeResources().GetCpu(), "the host's resources stay")
	require.Equal(t, 1, f.Calls(device.MethodFingerprint))
}

func TestClientReregistersOnlyWhenDeviceHealthChanges(t *testing.T) {
	f := twoGPUs()
	srv, clock, _, _ := deviceClient(t, plainPlugin{f})

	tick(t, clock, f, 2) // nothing changed: no registration
	require.True(t, f.SetHealth("GPU-1", false, "XID 79"))
	tick(t, clock, f, 3)
	require.Eventually(t, func() bool { r, _ := srv.calls(); return r == 2 }, 5*time.Second, time.Millisecond)
	require.Equal(t, []string{"nvidia/gpu/T4 GPU-0:healthy:", "nvidia/gpu/T4 GPU-1:unhealthy:XID 79"},
		health(srv.registeredNode(t, 1)), "the second registration must be the changed health")

	tick(t, clock, f, 4) // unchanged again
	require.True(t, f.SetHealth("GPU-1", true, ""))
	tick(t, clock, f, 5)
	require.Eventually(t, func() bool { r, _ := srv.calls(); return r == 3 }, 5*time.Second, time.Millisecond)
	require.Equal(t, []string{"nvidia/gpu/T4 GPU-0:healthy:", "nvidia/gpu/T4 GPU-1:healthy:"},
		health(srv.registeredNode(t, 2)), "no registration between the two changes")
}

func TestClientWatchFingerprintsAndStopsWithTheActor(t *testing.T) {
	f := twoGPUs()
	srv, clock, sys, pid := deviceClient(t, f)
	require.Eventually(t, func() bool { return f.Watchers() == 1 }, 5*time.Second, time.Millisecond)

	require.True(t, f.SetHealth("GPU-0", false, "XID 48")) // no clock move: the watch alone
	require.Eventually(t, func() bool { r, _ := srv.calls(); return r == 2 }, 5*time.Second, time.Millisecond)
	require.Equal(t, 2, f.Calls(device.MethodFingerprint))
	require.Equal(t, []string{"nvidia/gpu/T4 GPU-0:unhealthy:XID 48", "nvidia/gpu/T4 GPU-1:healthy:"},
		health(srv.registeredNode(t, 1)))

	require.NoError(t, sys.Root.StopFuture(pid).Wait())
	require.Eventually(t, func() bool { return f.Watchers() == 0 }, 5*time.Second, time.Millisecond)
	require.Zero(t, clock.Pending(), "the heartbeat and device timers stop with the actor")
}

func TestClientRegistersDevicesOnceTheirFingerprintWorks(t *testing.T) {
	f := twoGPUs()
	f.NextFingerprintErr = device.ErrUnavailable
	srv, clock, _, _ := deviceClient(t, plainPlugin{f})
	require.Empty(t, health(srv.registeredNode(t, 0)), "the node registers without its devices")

	tick(t, clock, f, 2)
	require.Eventually(t, func() bool { r, _ := srv.calls(); return r == 2 }, 5*time.Second, time.Millisecond)
	require.Len(t, health(srv.registeredNode(t, 1)), 2)
}

func TestSameDevicesIgnoresOrderAndAttributes(t *testing.T) {
	group := func(name string, ids ...string) *messages.NodeDeviceResource {
		return device.FakeGroup("nvidia", "gpu", name, ids...)
	}
	base := []*messages.NodeDeviceResource{group("T4", "a", "b"), group("A100", "c")}
	unhealthy, described, attrs := group("T4", "a", "b"), group("T4", "a", "b"), group("T4", "b", "a")
	unhealthy.Instances[1].Healthy = false
	described.Instances[1].HealthDescription = "ok now"
	attrs.Attributes["memory_mib"] = "16000"
	for _, tc := range []struct {
		name  string
		other []*messages.NodeDeviceResource
		same  bool
	}{
		{"reordered", []*messages.NodeDeviceResource{group("A100", "c"), group("T4", "b", "a")}, true},
		{"attributes", []*messages.NodeDeviceResource{attrs, group("A100", "c")}, true},
		{"health", []*messages.NodeDeviceResource{unhealthy, group("A100", "c")}, false},
		{"health description", []*messages.NodeDeviceResource{described, group("A100", "c")}, false},
		{"instance added", []*messages.NodeDeviceResource{group("T4", "a", "b", "d"), group("A100", "c")}, false},
		{"instance moved", []*messages.NodeDeviceResource{group("T4", "a"), group("A100", "c", "b")}, false},
		{"group gone", []*messages.NodeDeviceResource{group("T4", "a", "b"), group("A100")}, false},
		{"none", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.same, sameDevices(base, tc.other))
			require.Equal(t, tc.same, sameDevices(tc.other, base))
		})
	}
	require.True(t, sameDevices(nil, []*messages.NodeDeviceResource{}))
}
