package alloc

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/cni"
	"github.com/troupe-dev/troupe/runtime/driver"
)

// TestNetworkOrder: the network is set up before the csi volumes and the
// tasks, and torn down after the tasks are dead and the volumes let go.
func TestNetworkOrder(t *testing.T) {
	h, e, pc := csiHarness(t)
	e.known("vol0")
	f := cni.NewFake()
	h.net = &loggedNet{Fake: f, log: e.log, drv: h.fake, running: netAllocID + "/t"}
	h.drivers = map[string]driver.Driver{"fake": &loggedDriver{Fake: h.fake, log: e.log}}
	a := bridgeAlloc(netAllocID)
	g := csiAlloc(netAllocID, "vol0").Job.TaskGroups[0]
	a.Job.TaskGroups[0].Volumes, a.Job.TaskGroups[0].Tasks[0].VolumeMounts = g.Volumes, g.Tasks[0].VolumeMounts
	h.spawn(a)
	up := h.waitFor("running", status(statusRunning))
	require.Equal(t, "eth0", up.GetNetworkStatus().GetInterfaceName())
	require.Equal(t, "10.0.0.2", up.GetNetworkStatus().GetAddress())
	rec := networkRecordOf(t, h, netAllocID)
	require.Equal(t, "/var/run/netns/"+netAllocID, rec.NetnsPath)
	require.NotEmpty(t, rec.RawResult, "the CNI result is persisted before the tasks start")
	cfg, _ := h.fake.Task(netAllocID + "/t")
	require.Equal(t, rec.NetnsPath, cfg.NetnsPath, "the task joins the allocation's namespace")

	h.stop(a)
	waitTerminal(t, h, netAllocID)
	dst := volumeMountPath(h.root, netAllocID, "t", "/mnt/vol0")
	require.Equal(t, []string{
		"Network Setup", "Claim vol0", "NodeStage ext-vol0", "NodePublish ext-vol0", "Bind " + dst, "StartTask t",
		"StopTask " + netAllocID + "/t", "Unmount " + dst, "NodeUnpublish ext-vol0", "NodeUnstage ext-vol0",
		"NodeDetached vol0", "Network Teardown (task running: false)",
	}, e.log.all())
	require.Equal(t, int32(1), pc.n.Load(), "the postrun hooks ran, before the network teardown")
	require.Empty(t, f.Active())
	require.Nil(t, networkRecordOf(t, h, netAllocID), "the record is dropped after the teardown")
}

// TestNetworkRestoredAfterAgentRestart: a persisted result makes the
// restarted agent Restore (CNI CHECK) instead of setting up a second
// network, and the task is re-attached, not restarted.
func TestNetworkRestoredAfterAgentRestart(t *testing.T) {
	r := newAgentRuns(t)
	f := cni.NewFake()
	r.net = f
	a := bridgeAlloc(netAllocID)
	h := r.start()
	h.spawn(a)
	h.waitFor("running", status(statusRunning))
	h.close() // the agent stops; the task and its network stay

	h = r.start() // respawns the stored alloc
	require.Eventually(t, func() bool { return r.drv.Calls(driver.MethodRecoverTask) == 1 }, 5*time.Second, time.Millisecond)
	up := h.waitFor("running again", status(statusRunning))
	require.Equal(t, "10.0.0.2", up.GetNetworkStatus().GetAddress())
	require.Equal(t, 1, f.Calls(cni.MethodSetup), "no second network")
	require.Equal(t, 1, f.Calls(cni.MethodRestore))
	require.Equal(t, []string{netAllocID}, f.Active())
	require.Equal(t, 1, r.drv.Calls(driver.MethodStartTask), "the task is re-attached")
	require.NotContains(t, taskEvents(up.TaskStates["t"]), eventNetworkRecreated)

	h.stop(a)
	waitTerminal(t, h, netAllocID)
	require.Equal(t, 1, f.Calls(cni.MethodTeardown))
	require.Empty(t, f.Active())
}

// TestNetworkRecreatedRestartsReattachedTask: when Restore had to make the
// namespace anew while the task still ran (CHECK failed), the re-attached
// task lost its network: it is stopped and started again in the new one.
func TestNetworkRecreatedRestartsReattachedTask(t *testing.T) {
	r := newAgentRuns(t)
	f := cni.NewFake()
	r.net = f
	a := bridgeAlloc(netAllocID)
	h := r.start()
	h.spawn(a)
	h.waitFor("running", status(statusRunning))
	h.close()

	// The namespace is gone; the task (in the fake driver) still runs.
	f.Reboot()
	h = r.start() // respawns the stored alloc
	up := h.waitFor("running in the new network", func(x *messages.Allocation) bool {
		return x.GetClientStatus() == statusRunning && x.GetNetworkStatus().GetAddress() == "10.0.0.3"
	})
	require.Eventually(t, func() bool { return r.drv.Calls(driver.MethodStartTask) == 2 }, 5*time.Second, time.Millisecond)
	up = h.waitFor("started again", func(x *messages.Allocation) bool {
		evs := taskEvents(x.TaskStates["t"])
		return len(evs) > 2 && evs[len(evs)-2] == eventNetworkRecreated && evs[len(evs)-1] == eventStarted
	})
	require.Equal(t, statusRunning, up.GetClientStatus())
	require.Zero(t, up.TaskStates["t"].GetRestarts(), "not counted by the restart policy")
	require.Equal(t, 1, r.drv.Calls(driver.MethodStopTask), "the old process was stopped")
	cfg, _ := r.drv.Task(netAllocID + "/t")
	require.Equal(t, "10.0.0.3", cfg.Env["NOMAD_ALLOC_IP_http"], "the new task sees the new address")
	require.Equal(t, "10.0.0.3", networkRecordOf(t, h, netAllocID).IP, "the new result is persisted")
	require.Equal(t, 1, f.Calls(cni.MethodSetup))
	require.Equal(t, 1, f.Calls(cni.MethodRestore))
}

// TestNetworkAfterHostReboot: the namespace and the task are gone; the
// network is made anew (a fresh address) and the task started in it.
func TestNetworkAfterHostReboot(t *testing.T) {
	r := newAgentRuns(t)
	f := cni.NewFake()
	r.net = f
	a := bridgeAlloc(netAllocID)
	h := r.start()
	h.spawn(a)
	h.waitFor("running", status(statusRunning))
	h.close()

	f.Reboot()
	r.drv = driver.NewFake() // the reboot took the task too
	h = r.start()
	up := h.waitFor("running", func(x *messages.Allocation) bool {
		return x.GetClientStatus() == statusRunning && x.GetNetworkStatus().GetAddress() == "10.0.0.3"
	})
	require.Eventually(t, func() bool { return r.drv.Running(netAllocID + "/t") }, 5*time.Second, time.Millisecond)
	require.Equal(t, 1, r.drv.Calls(driver.MethodStartTask))
	require.Zero(t, r.drv.Calls(driver.MethodStopTask), "a new task, nothing to restart")
	require.NotContains(t, taskEvents(up.TaskStates["t"]), eventNetworkRecreated)
	cfg, _ := r.drv.Task(netAllocID + "/t")
	require.Equal(t, "10.0.0.3", cfg.Env["TROUPE_ALLOC_IP_http"])
}

func TestNetworkSurvivesAllocActorCrash(t *testing.T) {
	h, f := netHarness(t)
	a := bridgeAlloc(netAllocID)
	h.spawn(a)
	h.waitFor("running", status(statusRunning))
	h.sys.Root.Send(allocPID(a), &crash{})
	require.Eventually(t, func() bool { return f.Calls(cni.MethodRestore) == 1 }, 5*time.Second, time.Millisecond)
	require.Eventually(t, func() bool { return h.fake.Calls(driver.MethodRecoverTask) == 1 }, 5*time.Second, time.Millisecond)
	h.waitFor("running again", status(statusRunning))
	require.Equal(t, 1, f.Calls(cni.MethodSetup))
	require.Equal(t, 1, h.fake.Calls(driver.MethodStartTask))
}

// TestNetworkSetupErrors: a setup error fails the allocation with its
// message; nothing runs, and what may be left is torn down.
func TestNetworkSetupErrors(t *testing.T) {
	t.Run("port in use", func(t *testing.T) {
		h, f := netHarness(t)
		h.spawn(bridgeAlloc(netAllocID))
		h.waitFor("running", status(statusRunning))
		other := bridgeAlloc("b0000000-0000-0000-0000-000000000002")
		h.spawn(other)
		failed := h.waitFor("failed", func(x *messages.Allocation) bool {
			return x.GetID() == other.ID && x.GetClientStatus() == statusFailed
		})
		require.Contains(t, failed.GetClientDescription(), "setup failed: network:")
		require.Contains(t, failed.GetClientDescription(), "port 8080 (tcp) is already in use")
		waitTerminal(t, h, other.ID)
		require.Equal(t, 1, h.fake.Calls(driver.MethodStartTask), "only the first alloc's task started")
		require.Equal(t, []string{netAllocID}, f.Active(), "the first alloc keeps its network")
		require.Nil(t, networkRecordOf(t, h, other.ID))
	})
	t.Run("no bridge networking", func(t *testing.T) {
		h := newHarness(t)
		h.spawn(bridgeAlloc(netAllocID))
		failed := h.waitFor("failed", status(statusFailed))
		require.Contains(t, failed.GetClientDescription(), errNoBridge.Error())
		require.Zero(t, h.fake.Calls(driver.MethodStartTask))
	})
	t.Run("unsupported mode", func(t *testing.T) {
		h, f := netHarness(t)
		a := bridgeAlloc(netAllocID)
		a.Job.TaskGroups[0].Networks[0].Mode = "cni/custom"
		h.spawn(a)
		failed := h.waitFor("failed", status(statusFailed))
		require.Contains(t, failed.GetClientDescription(), `network mode not supported: "cni/custom"`)
		require.Zero(t, f.Calls(cni.MethodSetup))
	})
	t.Run("invalid request", func(t *testing.T) {
		h, f := netHarness(t)
		a := bridgeAlloc(netAllocID)
		a.AllocatedResources.Shared.Networks[0].DynamicPorts[0].Value = 0 // not allocated
		h.spawn(a)
		failed := h.waitFor("failed", status(statusFailed))
		require.Contains(t, failed.GetClientDescription(), `port "metrics" has no host port`)
		require.Zero(t, f.Calls(cni.MethodSetup))
	})
}

func TestHostModeNeedsNoNetwork(t *testing.T) {
	h, f := netHarness(t)
	a := bridgeAlloc(netAllocID)
	a.Job.TaskGroups[0].Networks[0].Mode = networkModeHost
	a.AllocatedResources.Shared.Networks[0].Mode = networkModeHost
	h.spawn(a)
	up := h.waitFor("running", status(statusRunning))
	require.Nil(t, up.GetNetworkStatus())
	cfg, _ := h.fake.Task(netAllocID + "/t")
	require.Empty(t, cfg.NetnsPath)
	require.Equal(t, "80", cfg.Env["NOMAD_PORT_http"])
	require.NotContains(t, cfg.Env, "NOMAD_ALLOC_IP_http")
	h.stop(a)
	waitTerminal(t, h, netAllocID)
	require.Empty(t, f.Order(), "no cni call at all")
	require.Nil(t, networkRecordOf(t, h, netAllocID))
}

// TestNetworkTeardownRetries: a failed teardown is retried with backoff
// on the clock; past the attempts the record is dropped all the same.
func TestNetworkTeardownRetries(t *testing.T) {
	t.Run("succeeds on the third attempt", func(t *testing.T) {
		h, f := netHarness(t)
		a := bridgeAlloc(netAllocID)
		h.spawn(a)
		h.waitFor("running", status(statusRunning))
		f.FailNext(cni.MethodTeardown, errors.New("iptables busy"), 2)
		h.stop(a)
		h.drive(time.Second, func() bool { return phaseOf(h, netAllocID) == phaseTerminal.String() })
		require.Equal(t, 3, f.Calls(cni.MethodTeardown))
		require.Empty(t, f.Active())
		require.Nil(t, networkRecordOf(t, h, netAllocID))
	})
	t.Run("gives up", func(t *testing.T) {
		h, f := netHarness(t)
		h.netAttempts = 3
		a := bridgeAlloc(netAllocID)
		h.spawn(a)
		h.waitFor("running", status(statusRunning))
		f.FailNext(cni.MethodTeardown, errors.New("iptables broken"), 10)
		h.stop(a)
		h.drive(time.Second, func() bool { return phaseOf(h, netAllocID) == phaseTerminal.String() })
		require.Equal(t, 3, f.Calls(cni.MethodTeardown))
		require.Nil(t, networkRecordOf(t, h, netAllocID), "dropped: the agent's GC takes what is left")
	})
	t.Run("resumed by a restarted agent", func(t *testing.T) {
		r := newAgentRuns(t)
		f := cni.NewFake()
		r.net = f
		a := bridgeAlloc(netAllocID)
		h := r.start()
		h.spawn(a)
		h.waitFor("running", status(statusRunning))
		f.FailNext(cni.MethodTeardown, errors.New("iptables busy"), 1)
		h.stop(a)
		require.Eventually(t, func() bool { return f.Calls(cni.MethodTeardown) == 1 && h.clock.Pending() == 1 },
			5*time.Second, time.Millisecond)
		h.close() // killed while waiting to retry

		h = r.start() // respawns the stored, complete alloc
		require.Eventually(t, func() bool { return f.Calls(cni.MethodTeardown) == 2 }, 5*time.Second, time.Millisecond)
		waitTerminal(t, h, netAllocID)
		require.Empty(t, f.Active())
		require.Nil(t, networkRecordOf(t, h, netAllocID))
		require.Equal(t, 1, f.Calls(cni.MethodSetup), "a stopped alloc is not set up again")
	})
}
