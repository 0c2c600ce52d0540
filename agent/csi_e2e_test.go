package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/runtime/csi/hostpath"
)

// fastRetry shrinks the unpublish backoff so retries take milliseconds.
func fastRetry(cfg *Config) *Config {
	cfg.VolumeRetry = actors.Retry{Initial: 10 * time.Millisecond, Max: 40 * time.Millisecond, Multiplier: 2, Deadline: time.Hour}
	return cfg
}

// TestCSIVolumeMountedWrittenAndDetached is the whole path with the real
// plugin as a job: create through the controller, claim, publish, mount
// into the task, the task's write lands in the volume; stop: node
// unpublish and unstage, then controller unpublish, and the claim is freed.
func TestCSIVolumeMountedWrittenAndDetached(t *testing.T) {
	e := startPluginJob(t, fastRetry(testConfig(t, t.TempDir())))
	e.create(t, "vol1")
	vol := e.volume("vol1")
	require.NotNil(t, vol)
	require.NotEmpty(t, vol.GetExternalID(), "CreateVolume's ID is stored")

	jobID := e.run(t, volumeJob("web", 1, false, "vol1"))
	al := e.waitRunning(t, jobID, 1)[0]
	written := filepath.Join(e.root, vol.GetExternalID(), "written")
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(written)
		return err == nil && strings.TrimSpace(string(b)) == al.GetID()
	}, 20*time.Second, 20*time.Millisecond, "the task's write never reached the volume")
	claims := e.volume("vol1").GetClaims()
	require.Len(t, claims, 1)
	require.Equal(t, "taken", claims[0].GetState())
	require.Equal(t, al.GetID(), claims[0].GetAllocationID())
	require.Equal(t, "mounted", e.a.Store().Snapshot().AllocByID(al.GetID()).GetVolumeStates()["v0"].GetState())

	_, _, err := e.c.Jobs().Deregister(jobID, false, nil)
	require.NoError(t, err)
	e.waitFreed(t, "vol1")
	var order []string
	for _, c := range e.calls(t, "NodeStageVolume", "NodePublishVolume", "NodeUnpublishVolume", "NodeUnstageVolume",
		"ControllerPublishVolume", "ControllerUnpublishVolume") {
		order = append(order, c.Method)
	}
	require.Equal(t, []string{"ControllerPublishVolume", "NodeStageVolume", "NodePublishVolume",
		"NodeUnpublishVolume", "NodeUnstageVolume", "ControllerUnpublishVolume"}, order)
	b, err := os.ReadFile(written)
	require.NoError(t, err, "the data outlives the allocation")
	require.Equal(t, al.GetID(), strings.TrimSpace(string(b)))
}

// TestCSIFiftyVolumesRaceMode stops 50 allocations, each with its own
// volume, at once, with the plugin failing concurrent controller calls:
// every claim is freed, no call failed, and at most one controller call
// ran at any time.
func TestCSIFiftyVolumesRaceMode(t *testing.T) {
	e := startPluginJob(t, fastRetry(testConfig(t, t.TempDir())))
	const n = 50
	var ids []string
	for i := range n {
		ids = append(ids, fmt.Sprintf("vol[%d]", i))
	}
	e.create(t, ids...)
	require.NoError(t, e.ctl.SetRaceMode(t.Context(), true))
	jobID := e.run(t, volumeJob("fifty", n, true, "vol"))
	e.waitRunning(t, jobID, n)

	_, _, err := e.c.Jobs().Deregister(jobID, false, nil)
	require.NoError(t, err)
	e.waitFreed(t, ids...)
	ctrl := e.calls(t, "ControllerPublishVolume", "ControllerUnpublishVolume")
	require.Len(t, ctrl, 2*n, "one publish and one unpublish per volume, none retried")
	for _, c := range ctrl {
		require.Equal(t, "OK", c.Code, "%s %s", c.Method, c.VolumeID)
	}
	require.Equal(t, 1, maxOverlap(ctrl), "controller calls must never overlap")
}

// TestCSIOneHungVolumeDoesNotBlockOthers: an allocation with 10 volumes
// stops while the plugin hangs NodeUnpublish for one of them; the other 9
// are detached and freed, the hung one waits, and goes once released.
func TestCSIOneHungVolumeDoesNotBlockOthers(t *testing.T) {
	e := startPluginJob(t, fastRetry(testConfig(t, t.TempDir())))
	var ids []string
	for i := range 10 {
		ids = append(ids, fmt.Sprintf("multi%d", i))
	}
	e.create(t, ids...)
	jobID := e.run(t, volumeJob("ten", 1, false, ids...))
	e.waitRunning(t, jobID, 1)
	hung := e.volume("multi3").GetExternalID()
	require.NoError(t, e.ctl.Hang(t.Context(), "NodeUnpublishVolume", hung))

	_, _, err := e.c.Jobs().Deregister(jobID, false, nil)
	require.NoError(t, err)
	others := append(append([]string{}, ids[:3]...), ids[4:]...)
	e.waitFreed(t, others...)
	require.Len(t, e.volume("multi3").GetClaims(), 1, "the hung volume keeps its claim")
	require.NotEqual(t, "controller-detached", e.volume("multi3").GetClaims()[0].GetState())
	for _, c := range e.calls(t, "ControllerUnpublishVolume") {
		require.NotEqual(t, hung, c.VolumeID, "no controller detach while the node may still have it mounted")
	}
	require.NoError(t, e.ctl.Release(t.Context(), "NodeUnpublishVolume", hung))
	e.waitFreed(t, "multi3")
}

// TestCSINodeUnpublishFailsThenHeals: the node plugin fails NodeUnpublish
// 20 times; the client retries with backoff, records each attempt on the
// allocation, and only after success does the controller detach.
func TestCSINodeUnpublishFailsThenHeals(t *testing.T) {
	e := startPluginJob(t, fastRetry(testConfig(t, t.TempDir())))
	e.create(t, "flaky")
	jobID := e.run(t, volumeJob("flaky", 1, false, "flaky"))
	al := e.waitRunning(t, jobID, 1)[0]
	ext := e.volume("flaky").GetExternalID()
	require.NoError(t, e.ctl.FailNext(t.Context(), "NodeUnpublishVolume", ext, codes.Internal, 20))

	_, _, err := e.c.Jobs().Deregister(jobID, false, nil)
	require.NoError(t, err)
	e.waitFreed(t, "flaky")
	node := e.calls(t, "NodeUnpublishVolume")
	require.Len(t, node, 21)
	ctrl := e.calls(t, "ControllerUnpublishVolume")
	require.Len(t, ctrl, 1)
	require.True(t, ctrl[0].Start.After(node[20].End), "controller detach only after the node side succeeded")
	require.Eventually(t, func() bool {
		vs := e.a.Store().Snapshot().AllocByID(al.GetID()).GetVolumeStates()["v0"]
		return vs.GetState() == "unpublished" && vs.GetAttempts() == 20
	}, 10*time.Second, 20*time.Millisecond, "the attempts are visible on the allocation")
}

// TestCSIClientRestartResumesUnpublish: the agent stops (as kill -9 would
// leave it) while a node unpublish is being retried; restarted on the
// same data dir, it resumes from its state file and the claim is freed.
func TestCSIClientRestartResumesUnpublish(t *testing.T) {
	dir := t.TempDir()
	e := startPluginJob(t, fastRetry(testConfig(t, dir)))
	e.create(t, "sticky")
	jobID := e.run(t, volumeJob("sticky", 1, false, "sticky"))
	e.waitRunning(t, jobID, 1)
	ext := e.volume("sticky").GetExternalID()
	require.NoError(t, e.ctl.FailNext(t.Context(), "NodeUnpublishVolume", ext, codes.Internal, -1))
	_, _, err := e.c.Jobs().Deregister(jobID, false, nil)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return len(e.calls(t, "NodeUnpublishVolume")) >= 3 },
		20*time.Second, 20*time.Millisecond, "no retries seen")
	crash(t, e.a)
	require.Len(t, e.volume("sticky").GetClaims(), 1, "the claim waits for the node")

	require.NoError(t, e.ctl.Reset(t.Context()))
	b := startAgent(t, fastRetry(testConfig(t, dir)))
	defer b.Shutdown()
	require.Eventually(t, func() bool { return volumeFreed(b, "sticky") },
		60*time.Second, 20*time.Millisecond, "the restarted client never finished the unpublish")
	// The controller detach ran once, after a NodeUnpublish succeeded. (The
	// order of the other calls is not asserted: the stopped agent's last
	// in-flight call, which a real kill -9 would not leave, may be
	// recorded late; NodeUnpublish is idempotent.)
	calls := e.calls(t, "NodeUnpublishVolume", "ControllerUnpublishVolume")
	var ctrl []hostpath.Call
	for _, c := range calls {
		if c.Method == "ControllerUnpublishVolume" {
			ctrl = append(ctrl, c)
		}
	}
	require.Len(t, ctrl, 1, "%+v", calls)
	nodeOK := slices.ContainsFunc(calls, func(c hostpath.Call) bool {
		return c.Method == "NodeUnpublishVolume" && c.Code == "OK" && c.End.Before(ctrl[0].Start)
	})
	require.True(t, nodeOK, "controller detach only after the node side succeeded: %+v", calls)
}

// TestCSIControllerQueueSurvivesLeaderRestart: the only server stops while
// its controller queue holds several ControllerUnpublish operations; the
// restarted server (a new leader) rebuilds the queue from raft and
// finishes every one of them, one at a time.
func TestCSIControllerQueueSurvivesLeaderRestart(t *testing.T) {
	dir := t.TempDir()
	e := startPluginJob(t, fastRetry(testConfig(t, dir)))
	ids := []string{"q[0]", "q[1]", "q[2]", "q[3]", "q[4]"}
	e.create(t, ids...)
	jobID := e.run(t, volumeJob("queue", len(ids), true, "q"))
	e.waitRunning(t, jobID, len(ids))
	require.NoError(t, e.ctl.SetLatency(t.Context(), "ControllerUnpublishVolume", 300*time.Millisecond))
	_, _, err := e.c.Jobs().Deregister(jobID, false, nil)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return len(e.calls(t, "ControllerUnpublishVolume")) >= 1 },
		20*time.Second, 5*time.Millisecond, "no controller unpublish started")
	crash(t, e.a)
	pending := 0
	for _, id := range ids {
		pending += len(e.volume(id).GetClaims())
	}
	require.GreaterOrEqual(t, pending, 3, "the queue held several operations when the leader went")

	b := startAgent(t, fastRetry(testConfig(t, dir)))
	defer b.Shutdown()
	require.Eventually(t, func() bool {
		for _, id := range ids {
			if !volumeFreed(b, id) {
				return false
			}
		}
		return true
	}, 60*time.Second, 20*time.Millisecond, "the new leader never finished the queue")
	ctrl := e.calls(t, "ControllerUnpublishVolume")
	require.Equal(t, 1, maxOverlap(ctrl), "one controller call at a time across the leader change")
	done := map[string]int{}
	for _, c := range ctrl {
		if c.Code == "OK" {
			done[c.VolumeID]++
		}
	}
	require.Len(t, done, len(ids), "every volume was detached: %v\n%+v", done, ctrl)
}

// volumeFreed reports whether the agent's store holds the volume with no
// claim left. A restarted server's store has only its last raft snapshot
// until it has replayed the log (as leader), and a volume it does not know
// yet has no claims either: that is not "freed".
func volumeFreed(a *Agent, id string) bool {
	v := a.Store().Snapshot().CSIVolumeAnyNamespace(id)
	return v != nil && len(v.GetClaims()) == 0
}
