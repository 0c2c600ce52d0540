package alloc

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/clientstate"
	"github.com/troupe-dev/troupe/runtime/csi"
	"github.com/troupe-dev/troupe/runtime/driver"
)

// TestCSIHook follows Nomad's TestCSIHook table: how an allocation's csi
// volumes are claimed and mounted before its tasks start, and let go
// after they stop.
func TestCSIHook(t *testing.T) {
	t.Run("simple", func(t *testing.T) {
		h, e, pc := csiHarness(t)
		e.known("vol0")
		a := csiAlloc(csiAllocID, "vol0")
		h.spawn(a)
		up := h.waitFor("running", status(statusRunning))

		require.Equal(t, 1, e.claimer.claimCount())
		claim := e.claimer.claim(0)
		require.Equal(t, "vol0", claim.GetVolumeID())
		require.Equal(t, csiAllocID, claim.GetClaim().GetAllocationID())
		require.Equal(t, "node-1", claim.GetClaim().GetNodeID())
		require.Equal(t, "write", claim.GetClaim().GetMode())

		target := publishPath(e.cfg.Root, csiAllocID, "vol0", csi.AttachmentModeFilesystem, csi.AccessModeMultiNodeMultiWriter, false)
		st := up.GetVolumeStates()["vol0"]
		require.Equal(t, volumeMounted, st.GetState())
		require.Equal(t, "plug", st.GetPluginID())
		require.Equal(t, target, st.GetTargetPath())
		require.True(t, e.plugin.Staged("ext-vol0"))
		require.True(t, e.plugin.NodePublished(target))
		dst := volumeMountPath(h.root, csiAllocID, "t", "/mnt/vol0")
		require.Equal(t, target, e.mounter.Source(dst), "the task sees the published target")
		cfg, _ := h.fake.Task(csiAllocID + "/t")
		require.Equal(t, dst, cfg.Env["TROUPE_VOLUME_VOL0"])
		require.Equal(t, []string{"Claim vol0", "NodeStage ext-vol0", "NodePublish ext-vol0", "Bind " + dst}, e.log.all(),
			"claim, stage, publish, bind; the tasks start after")

		h.stop(a)
		done := h.waitFor("volume unpublished", volumeState("vol0", volumeUnpublished))
		require.Equal(t, statusComplete, done.GetClientStatus())
		waitPostrun(t, pc, 1)
		require.Equal(t, []string{"vol0"}, e.claimer.detachedVolumes())
		require.False(t, e.plugin.Staged("ext-vol0"))
		require.False(t, e.plugin.NodePublished(target))
		require.False(t, e.mounter.IsMounted(dst))
	})

	t.Run("per-alloc", func(t *testing.T) {
		h, e, _ := csiHarness(t)
		e.known("vol0[2]")
		a := csiAlloc(csiAllocID, "vol0")
		a.Index, a.Name = 2, "web.g[2]"
		a.Job.TaskGroups[0].Volumes["vol0"].PerAlloc = true
		h.spawn(a)
		up := h.waitFor("running", status(statusRunning))
		require.Equal(t, "vol0[2]", e.claimer.claim(0).GetVolumeID())
		require.Equal(t, "vol0[2]", up.GetVolumeStates()["vol0"].GetVolumeID())
		require.Equal(t, 1, e.plugin.Calls(csi.MethodNodePublish))
		require.Contains(t, e.log.all(), "NodePublish ext-vol0[2]")
	})

	t.Run("fatal error on claim", func(t *testing.T) {
		h, e, _ := csiHarness(t)
		e.known("vol0")
		e.claimer.claimErrs = []error{errCode("conflict")}
		h.spawn(csiAlloc(csiAllocID, "vol0"))
		failed := h.waitFor("failed", status(statusFailed))
		require.Contains(t, failed.GetClientDescription(), `CSI volume "vol0": claim: `)
		require.Contains(t, failed.GetClientDescription(), "conflict")
		require.Equal(t, 1, e.claimer.claimCount(), "a final refusal is not retried")
		require.Zero(t, h.fake.Calls(driver.MethodStartTask))
		require.Empty(t, e.plugin.Order())
		require.Equal(t, volumeFailed, failed.GetVolumeStates()["vol0"].GetState())
		require.Equal(t, []string{eventVolumeClaimFailed}, eventTypes(failed.GetVolumeStates()["vol0"]))
		require.Empty(t, e.claimer.detachedVolumes(), "no claim was taken: nothing to report")
	})

	t.Run("retryable error on claim", func(t *testing.T) {
		h, e, _ := csiHarness(t)
		e.known("vol0")
		e.claimer.claimErrs = []error{errors.New("connection refused"), errCode("unavailable")}
		h.spawn(csiAlloc(csiAllocID, "vol0"))
		h.drive(10*time.Second, func() bool { return e.claimer.claimCount() == 3 })
		up := h.waitFor("running", status(statusRunning))
		require.Equal(t, 3, e.claimer.claimCount())
		require.Equal(t, 1, e.plugin.Calls(csi.MethodNodePublish))
		st := up.GetVolumeStates()["vol0"]
		require.Equal(t, volumeMounted, st.GetState())
		require.Equal(t, []string{eventVolumeClaimFailed, eventVolumeClaimFailed, eventVolumeMounted}, eventTypes(st))
	})

	t.Run("already mounted", func(t *testing.T) {
		h, e, _ := csiHarness(t)
		e.known("vol0")
		a := csiAlloc(csiAllocID, "vol0")
		rec := mountedRecord(h, e, a, "vol0")
		e.mounter.SetMounted(rec.TargetPath, true) // the agent restarted; the mounts did not go
		e.mounter.SetMounted(rec.Binds[0], true)
		h.spawn(a)
		up := h.waitFor("running", status(statusRunning))
		require.Zero(t, e.claimer.claimCount(), "a volume still mounted is kept")
		require.Empty(t, e.plugin.Order())
		require.Zero(t, e.mounter.Count("Bind"))
		require.Equal(t, volumeMounted, up.GetVolumeStates()["vol0"].GetState())
	})

	t.Run("already mounted: publish again is idempotent", func(t *testing.T) {
		h, e, _ := csiHarness(t)
		e.known("vol0")
		a := csiAlloc(csiAllocID, "vol0")
		target := publishPath(e.cfg.Root, csiAllocID, "vol0", csi.AttachmentModeFilesystem, csi.AccessModeMultiNodeMultiWriter, false)
		e.mounter.SetMounted(target, true)
		e.plugin.FailNext(csi.MethodNodePublish, grpcstatus.Error(codes.AlreadyExists, "target exists"), 1)
		h.spawn(a)
		h.waitFor("running", status(statusRunning))
		require.Equal(t, 1, e.plugin.Calls(csi.MethodNodePublish))
		require.Equal(t, target, e.mounter.Source(volumeMountPath(h.root, csiAllocID, "t", "/mnt/vol0")))
	})

	t.Run("existing but invalid mounts after reboot", func(t *testing.T) {
		h, e, _ := csiHarness(t)
		e.known("vol0")
		a := csiAlloc(csiAllocID, "vol0")
		rec := mountedRecord(h, e, a, "vol0") // the record says mounted; the reboot took the mounts
		h.spawn(a)
		up := h.waitFor("running", status(statusRunning))
		require.Equal(t, 1, e.claimer.claimCount())
		require.Equal(t, []string{"Unmount " + rec.Binds[0], "Unmount " + rec.TargetPath, "Claim vol0",
			"NodeStage ext-vol0", "NodePublish ext-vol0", "Bind " + rec.Binds[0]}, e.log.all())
		st := up.GetVolumeStates()["vol0"]
		require.Equal(t, volumeMounted, st.GetState())
		require.Contains(t, eventTypes(st), eventVolumeRemounting)
	})

	t.Run("retry on failed unmount", func(t *testing.T) {
		h, e, pc := csiHarness(t)
		e.known("vol0")
		a := csiAlloc(csiAllocID, "vol0")
		h.spawn(a)
		h.waitFor("running", status(statusRunning))
		e.plugin.FailNext(csi.MethodNodeUnpublish, grpcstatus.Error(codes.Internal, "device busy"), 1)
		h.stop(a)
		h.waitFor("first unpublish failed", func(a *messages.Allocation) bool {
			return a.GetVolumeStates()["vol0"].GetAttempts() == 1
		})
		require.Empty(t, e.claimer.detachedVolumes(), "not detached while the node still mounts it")
		require.Zero(t, pc.n.Load(), "the alloc waits for its volumes")
		h.drive(time.Second, func() bool { return e.plugin.Calls(csi.MethodNodeUnpublish) == 2 })
		done := h.waitFor("unpublished", volumeState("vol0", volumeUnpublished))
		waitPostrun(t, pc, 1)
		require.Equal(t, []int{2}, e.claimer.unpublishedAtDetach(), "reported detached once, after the unpublish that worked")
		require.Equal(t, int32(1), done.GetVolumeStates()["vol0"].GetAttempts())
	})

	t.Run("missing namespace or unknown volume", func(t *testing.T) {
		h, e, _ := csiHarness(t)
		h.spawn(csiAlloc(csiAllocID, "nope"))
		failed := h.waitFor("failed", status(statusFailed))
		require.Contains(t, failed.GetClientDescription(), `CSI volume "nope": claim: not_found: volume "nope" not found in namespace "default"`)
		require.Equal(t, 1, e.claimer.claimCount())
		require.Zero(t, h.fake.Calls(driver.MethodStartTask))
	})

	t.Run("no CSI support", func(t *testing.T) {
		h := newHarness(t)
		h.spawn(csiAlloc(csiAllocID, "vol0"))
		failed := h.waitFor("failed", status(statusFailed))
		require.Contains(t, failed.GetClientDescription(), `this client has no CSI support: volume "vol0"`)
		require.Zero(t, h.fake.Calls(driver.MethodStartTask))
	})

	t.Run("should not run", func(t *testing.T) {
		h, e, pc := csiHarness(t)
		a := csiAlloc(csiAllocID)
		a.Job.TaskGroups[0].Volumes = map[string]*messages.VolumeRequest{"host": {Name: "host", Type: "host", Source: "shared"}}
		h.spawn(a)
		up := h.waitFor("running", status(statusRunning))
		require.Empty(t, up.GetVolumeStates())
		h.stop(a)
		h.waitFor("complete", status(statusComplete))
		waitPostrun(t, pc, 1)
		require.Empty(t, e.log.all(), "no claim, no plugin call, no mount")
		require.Empty(t, e.mounter.Ops())
		recs, err := h.db.VolumeMounts(csiAllocID)
		require.NoError(t, err)
		require.Empty(t, recs)
	})
}

// mountedRecord stores a volume record that says name is mounted for a
// (as an earlier run of the agent left it), and the allocation itself.
func mountedRecord(h *harness, e *csiEnv, a *messages.Allocation, name string) *clientstate.VolumeMount {
	mode, access := csi.AttachmentModeFilesystem, csi.AccessModeMultiNodeMultiWriter
	rec := &clientstate.VolumeMount{Name: name, VolumeID: name, PluginID: "plug", ExternalID: "ext-" + name,
		ExternalNodeID: "ext-node-1", AccessMode: access, AttachmentMode: mode,
		StagingPath: stagingPath(e.cfg.Root, "plug", name, mode, access),
		TargetPath:  publishPath(e.cfg.Root, a.GetID(), name, mode, access, false),
		ClaimSent:   true, Staged: true, Published: true,
		Binds: []string{volumeMountPath(h.root, a.GetID(), "t", "/mnt/"+name)},
		State: &messages.AllocVolumeState{VolumeID: name, PluginID: "plug", State: volumeMounted}}
	rec.State.TargetPath = rec.TargetPath
	require.NoError(h.t, h.db.PutVolumeMount(a.GetID(), rec))
	h.db.PutAlloc(a)
	h.db.Flush()
	return rec
}
