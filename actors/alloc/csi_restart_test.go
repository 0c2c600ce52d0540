package alloc

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/cni"
	"github.com/troupe-dev/troupe/runtime/csi"
	"github.com/troupe-dev/troupe/runtime/driver"
)

// agentRun is one run of an agent on a state file that outlives it.
type agentRun struct {
	t      *testing.T
	dbPath string
	root   string
	drv    *driver.Fake
	clock  *actors.FakeClock
	e      *csiEnv
	pc     *postrunCounter
	net    cni.Networker // every run's Spec.Network
}

func newAgentRuns(t *testing.T) *agentRun {
	return &agentRun{t: t, dbPath: filepath.Join(t.TempDir(), "client.db"), root: t.TempDir(),
		drv: driver.NewFake(), clock: actors.NewFakeClock(time.Unix(1_700_000_000, 0)), e: newCSIEnv(t), pc: &postrunCounter{}}
}

// start opens the state file, rebuilds the volume usage from it (as the
// agent does on start), and respawns every stored allocation (as the
// client's node actor does).
func (r *agentRun) start() *harness {
	h := newHarnessAt(r.t, r.dbPath, r.root, r.drv, r.clock)
	all, err := h.db.Allocs()
	require.NoError(r.t, err)
	r.e.usage = NewUsageFromState(all)
	r.e.attach(h)
	h.csi, h.hooks, h.net = r.e.cfg, []Hook{r.pc}, r.net
	for _, sa := range all {
		h.spawn(sa.Alloc)
	}
	return h
}

func TestAgentRestartResumesTeardown(t *testing.T) {
	r := newAgentRuns(t)
	e := r.e
	e.known("vol0")
	a := csiAlloc(csiAllocID, "vol0")
	h := r.start()
	h.spawn(a)
	h.waitFor("running", status(statusRunning))
	e.plugin.FailNext(csi.MethodNodeUnpublish, grpcstatus.Error(codes.Internal, "plugin broken"), -1)
	h.stop(a)
	h.drive(time.Second, func() bool { return e.plugin.Calls(csi.MethodNodeUnpublish) == 2 })
	h.waitFor("two failed attempts", func(x *messages.Allocation) bool { return x.GetVolumeStates()["vol0"].GetAttempts() == 2 })
	h.close() // the agent is killed mid-retry

	e.plugin.Reset() // the plugin is fixed meanwhile
	h = r.start()
	staging := stagingPath(e.cfg.Root, "plug", "vol0", csi.AttachmentModeFilesystem, csi.AccessModeMultiNodeMultiWriter)
	require.Equal(t, 1, e.users(staging), "the usage is rebuilt from the state file")
	h.drive(time.Second, func() bool { return len(e.claimer.detachedVolumes()) == 1 })
	done := h.waitFor("unpublished", volumeState("vol0", volumeUnpublished))
	waitPostrun(t, r.pc, 1)
	require.Equal(t, statusComplete, done.GetClientStatus())
	require.Equal(t, int32(2), done.GetVolumeStates()["vol0"].GetAttempts(), "the attempts survive the restart")
	require.Equal(t, 3, e.plugin.Calls(csi.MethodNodeUnpublish))
	require.Equal(t, 1, e.plugin.Calls(csi.MethodNodeUnstage))
	require.Equal(t, 1, e.claimer.claimCount(), "nothing is claimed again")
	require.Zero(t, e.users(staging))
	h.close()

	// A third start finds nothing left to do.
	h = r.start()
	up := h.waitFor("restored", status(statusComplete))
	require.Equal(t, volumeUnpublished, up.GetVolumeStates()["vol0"].GetState())
	require.Len(t, e.claimer.detachedVolumes(), 1)
	require.Empty(t, childPaths(h, csiAllocID))
}

func TestAgentRestartKeepsMountsOfRunningAlloc(t *testing.T) {
	r := newAgentRuns(t)
	e := r.e
	e.known("vol0")
	a := csiAlloc(csiAllocID, "vol0")
	h := r.start()
	h.spawn(a)
	h.waitFor("running", status(statusRunning))
	h.close() // the agent stops; the task and its mounts stay

	h = r.start()
	require.Eventually(t, func() bool { return r.drv.Calls(driver.MethodRecoverTask) == 1 }, 5*time.Second, time.Millisecond)
	up := h.waitFor("running again", status(statusRunning))
	require.Equal(t, volumeMounted, up.GetVolumeStates()["vol0"].GetState())
	require.Equal(t, 1, r.drv.Calls(driver.MethodStartTask), "the task is re-attached")
	require.Equal(t, 1, e.claimer.claimCount(), "not claimed twice")
	require.Equal(t, 1, e.plugin.Calls(csi.MethodNodePublish), "not published twice")
	require.Equal(t, 1, e.mounter.Count("Bind"), "not bound twice")

	h.stop(a)
	h.waitFor("unpublished", volumeState("vol0", volumeUnpublished))
	require.Equal(t, 1, e.plugin.Calls(csi.MethodNodeUnstage))
}

func TestAllocActorCrashKeepsMounts(t *testing.T) {
	h, e, _ := csiHarness(t)
	e.known("vol0")
	a := csiAlloc(csiAllocID, "vol0")
	h.spawn(a)
	h.waitFor("running", status(statusRunning))
	h.sys.Root.Send(allocPID(a), &crash{})
	require.Eventually(t, func() bool { return h.fake.Calls(driver.MethodRecoverTask) == 1 }, 5*time.Second, time.Millisecond)
	h.waitFor("running again", status(statusRunning))
	require.Equal(t, 1, e.claimer.claimCount())
	require.Equal(t, 1, e.plugin.Calls(csi.MethodNodePublish))
	require.Equal(t, 1, e.mounter.Count("Bind"))
}
