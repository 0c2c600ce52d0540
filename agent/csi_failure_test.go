package agent

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"

	"github.com/troupe-dev/troupe/messages"
)

// rescheduledVolumeJob is volumeJob with a short reschedule policy, so a
// failed allocation is replaced within a second or two.
func rescheduledVolumeJob(id string, sources ...string) string {
	return strings.Replace(volumeJob(id, 1, false, sources...), `    task "t" {`, `    reschedule {
      attempts       = 3
      interval       = "1h"
      delay          = "1s"
      delay_function = "constant"
      unlimited      = false
    }
    task "t" {`, 1)
}

// failedThenReplaced waits for the job's first allocation to fail, then
// for its replacement (PreviousAllocation set to the failed one) to run;
// it returns both as the store has them.
func (e *pluginEnv) failedThenReplaced(t *testing.T, jobID string) (failed, next *messages.Allocation) {
	t.Helper()
	require.Eventually(t, func() bool {
		if fs := e.allocs(jobID, "failed"); len(fs) > 0 {
			failed = fs[0]
		}
		return failed != nil
	}, 60*time.Second, 20*time.Millisecond, "the first allocation of %s never failed", jobID)
	require.Eventually(t, func() bool {
		for _, al := range e.allocs(jobID, "running") {
			if al.GetPreviousAllocation() == failed.GetID() {
				next = al
				return true
			}
		}
		return false
	}, 60*time.Second, 20*time.Millisecond, "the failed allocation of %s was never replaced: %s", jobID, e.dump(jobID))
	return e.a.Store().Snapshot().AllocByID(failed.GetID()), next
}

// requireNamed checks that the failed allocation says which volume and
// which CSI call failed: in its client description, in its volume's
// events and in its task's events.
func requireNamed(t *testing.T, al *messages.Allocation, volumeID, rpc string) {
	t.Helper()
	desc := al.GetClientDescription()
	require.Contains(t, desc, `CSI volume "`+volumeID+`"`, desc)
	require.Contains(t, desc, rpc, desc)
	require.Contains(t, desc, "injected fault", desc)
	var volEvents []string
	for _, ev := range al.GetVolumeStates()["v0"].GetEvents() {
		volEvents = append(volEvents, ev.GetType()+": "+ev.GetDisplayMessage())
	}
	require.True(t, containsAll(volEvents, volumeID, rpc), "volume events: %q", volEvents)
	var taskEvents []string
	for _, ev := range al.GetTaskStates()["t"].GetEvents() {
		taskEvents = append(taskEvents, ev.GetType()+": "+ev.GetDisplayMessage())
	}
	require.True(t, containsAll(taskEvents, volumeID, rpc), "task events: %q", taskEvents)
	require.True(t, al.GetTaskStates()["t"].GetFailed(), "the task never ran and counts as failed")
}

// requireEvalNames checks that an evaluation of the job says which
// allocation failed, naming the volume and the CSI call (read through
// Nomad's API client).
func (e *pluginEnv) requireEvalNames(t *testing.T, jobID string, al *messages.Allocation, volumeID, rpc string) {
	t.Helper()
	evals, _, err := e.c.Jobs().Evaluations(jobID, nil)
	require.NoError(t, err)
	var descs []string
	for _, ev := range evals {
		descs = append(descs, ev.TriggeredBy+": "+ev.StatusDescription)
	}
	require.True(t, containsAll(descs, "alloc-failure", al.GetID(), `CSI volume "`+volumeID+`"`, rpc), "evaluations: %q", descs)
}

// containsAll reports whether one of lines contains every part.
func containsAll(lines []string, parts ...string) bool {
	for _, l := range lines {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(l, p)
		}
		if ok {
			return true
		}
	}
	return false
}

// requireNoClaimOf checks that the volume holds no claim of allocID (and
// that the replacement's claim is the only one).
func (e *pluginEnv) requireNoClaimOf(t *testing.T, volumeID, allocID, nextID string) {
	t.Helper()
	require.Eventually(t, func() bool {
		claims := e.volume(volumeID).GetClaims()
		return len(claims) == 1 && claims[0].GetAllocationID() == nextID
	}, 30*time.Second, 20*time.Millisecond, "the failed allocation %s kept its claim: %v", allocID, e.volume(volumeID).GetClaims())
}

// stopAndFree stops the job and waits until its volumes' claims are freed
// (what is mounted is unmounted before the test's dirs go).
func (e *pluginEnv) stopAndFree(t *testing.T, jobID string, ids ...string) {
	t.Helper()
	_, _, err := e.c.Jobs().Deregister(jobID, false, nil)
	require.NoError(t, err)
	e.waitFreed(t, ids...)
}

// TestCSIControllerPublishFailsAllocRescheduled: the controller refuses
// the first ControllerPublish; the allocation fails naming the volume and
// the plugin's error, its claim is released, and the reschedule policy
// places a replacement that runs.
func TestCSIControllerPublishFailsAllocRescheduled(t *testing.T) {
	e := startPluginJob(t, fastRetry(testConfig(t, t.TempDir())))
	e.create(t, "cpub")
	ext := e.volume("cpub").GetExternalID()
	require.NoError(t, e.ctl.FailNext(t.Context(), "ControllerPublishVolume", ext, codes.FailedPrecondition, 1))
	jobID := e.run(t, rescheduledVolumeJob("cpub", "cpub"))

	e.requireFailedAndReplaced(t, jobID, "cpub", "ControllerPublishVolume")
	defer e.stopAndFree(t, jobID, "cpub")
	pubs := e.calls(t, "ControllerPublishVolume")
	require.GreaterOrEqual(t, len(pubs), 2)
	require.Equal(t, "FailedPrecondition", pubs[0].Code)
	require.Equal(t, "OK", pubs[len(pubs)-1].Code)
}

// TestCSIControllerPublishUnavailableAllocRescheduled: the controller
// answers a retryable error until the client's setup tries are used up;
// the allocation fails naming the volume and the error, its claim is
// released, and the replacement runs once the fault is gone.
func TestCSIControllerPublishUnavailableAllocRescheduled(t *testing.T) {
	e := startPluginJob(t, fastRetry(testConfig(t, t.TempDir())))
	e.create(t, "cflaky")
	ext := e.volume("cflaky").GetExternalID()
	require.NoError(t, e.ctl.FailNext(t.Context(), "ControllerPublishVolume", ext, codes.Internal, -1))
	jobID := e.run(t, rescheduledVolumeJob("cflaky", "cflaky"))
	require.Eventually(t, func() bool { return len(e.allocs(jobID, "failed")) > 0 },
		60*time.Second, 20*time.Millisecond, "the allocation never failed")
	require.NoError(t, e.ctl.Reset(t.Context()))

	e.requireFailedAndReplaced(t, jobID, "cflaky", "ControllerPublishVolume")
	defer e.stopAndFree(t, jobID, "cflaky")
}

// TestCSINodePublishFailsAllocRescheduled: the node plugin refuses the
// first NodePublish; the allocation fails naming the volume and the
// error, what was staged is unstaged, its claim is released (controller
// unpublish included), and the replacement runs.
func TestCSINodePublishFailsAllocRescheduled(t *testing.T) {
	e := startPluginJob(t, fastRetry(testConfig(t, t.TempDir())))
	e.create(t, "npub")
	ext := e.volume("npub").GetExternalID()
	require.NoError(t, e.ctl.FailNext(t.Context(), "NodePublishVolume", ext, codes.FailedPrecondition, 1))
	jobID := e.run(t, rescheduledVolumeJob("npub", "npub"))

	e.requireFailedAndReplaced(t, jobID, "npub", "NodePublishVolume")
	defer e.stopAndFree(t, jobID, "npub")
	var order []string
	for _, c := range e.calls(t, "NodePublishVolume", "NodeUnstageVolume", "ControllerUnpublishVolume") {
		order = append(order, c.Method+" "+c.Code)
	}
	require.Equal(t, []string{"NodePublishVolume FailedPrecondition", "NodeUnstageVolume OK",
		"ControllerUnpublishVolume OK", "NodePublishVolume OK"}, order,
		"the failed allocation's node side and controller attachment are undone before the replacement's")
}

// TestCSINodeStageFailsAllocRescheduled: the same with NodeStage.
func TestCSINodeStageFailsAllocRescheduled(t *testing.T) {
	e := startPluginJob(t, fastRetry(testConfig(t, t.TempDir())))
	e.create(t, "nstage")
	ext := e.volume("nstage").GetExternalID()
	require.NoError(t, e.ctl.FailNext(t.Context(), "NodeStageVolume", ext, codes.InvalidArgument, 1))
	jobID := e.run(t, rescheduledVolumeJob("nstage", "nstage"))

	e.requireFailedAndReplaced(t, jobID, "nstage", "NodeStageVolume")
	defer e.stopAndFree(t, jobID, "nstage")
}

// requireFailedAndReplaced waits for the job's first allocation to fail
// and a replacement to run, and checks that the failure names the volume
// and the CSI call in the allocation and its evaluation, and that the
// failed allocation holds no claim.
func (e *pluginEnv) requireFailedAndReplaced(t *testing.T, jobID, vol, method string) {
	t.Helper()
	failed, next := e.failedThenReplaced(t, jobID)
	requireNamed(t, failed, vol, method)
	e.requireEvalNames(t, jobID, failed, vol, method)
	e.requireNoClaimOf(t, vol, failed.GetID(), next.GetID())
}

// dump describes the job's allocations and evaluations, for a failure.
func (e *pluginEnv) dump(jobID string) string {
	var b strings.Builder
	snap := e.a.Store().Snapshot()
	for _, al := range snap.AllocsByJob("default", jobID) {
		fmt.Fprintf(&b, "\nalloc %s %s/%s prev=%s: %s", al.GetID(), al.GetDesiredStatus(), al.GetClientStatus(),
			al.GetPreviousAllocation(), al.GetClientDescription())
	}
	for _, ev := range snap.EvalsByJob("default", jobID) {
		fmt.Fprintf(&b, "\neval %s %s %s wait=%d: %s %v", ev.GetID(), ev.GetTriggeredBy(), ev.GetStatus(),
			ev.GetWaitUntil(), ev.GetStatusDescription(), ev.GetFailedTGAllocs())
	}
	fmt.Fprintf(&b, "\nclaims of volume %s: %v", jobID, e.volume(jobID).GetClaims()) // each test's volume is named after its job
	return b.String()
}
