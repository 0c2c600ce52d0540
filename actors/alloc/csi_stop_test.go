package alloc

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/csi"
)

func TestStuckVolumeDoesNotHoldUpTheOthers(t *testing.T) {
	h, e, pc := csiHarness(t)
	var names []string
	for i := range 10 {
		names = append(names, fmt.Sprintf("v%d", i))
	}
	e.known(names...)
	a := csiAlloc(csiAllocID, names...)
	h.spawn(a)
	h.waitFor("running", status(statusRunning))
	release := e.plugin.Block(csi.MethodNodeUnpublish, "ext-v3")
	defer release()

	h.stop(a)
	others := slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == "v3" })
	up := h.waitFor("nine volumes unpublished", allVolumes(volumeUnpublished, others...))
	require.Equal(t, others, e.claimer.detachedVolumes(), "the nine others reported detached")
	require.Equal(t, VolumeUnpublishing, up.GetVolumeStates()["v3"].GetState())
	require.Equal(t, statusComplete, up.GetClientStatus(), "the client status does not wait for volumes")
	require.Zero(t, pc.n.Load(), "postrun waits for the stuck volume")
	require.Contains(t, childPaths(h, csiAllocID), "client/allocs/"+csiAllocID+"/volumes/v3")
	release()
	h.waitFor("v3 unpublished", volumeState("v3", volumeUnpublished))
	waitPostrun(t, pc, 1)
	require.Equal(t, names, e.claimer.detachedVolumes())
}

func TestUnpublishRetriesUntilThePluginHeals(t *testing.T) {
	h, e, pc := csiHarness(t)
	e.known("vol0")
	a := csiAlloc(csiAllocID, "vol0")
	h.spawn(a)
	h.waitFor("running", status(statusRunning))
	e.plugin.FailNext(csi.MethodNodeUnpublish, grpcstatus.Error(codes.Internal, "plugin broken"), 20)
	h.stop(a)

	h.drive(time.Minute, func() bool { return e.plugin.Calls(csi.MethodNodeUnpublish) == 21 })
	done := h.waitFor("unpublished", volumeState("vol0", volumeUnpublished))
	waitPostrun(t, pc, 1)
	require.Equal(t, 21, e.plugin.Calls(csi.MethodNodeUnpublish))
	require.Equal(t, []int{21}, e.claimer.unpublishedAtDetach(), "one node-detached report, after the 21st try")
	st := done.GetVolumeStates()["vol0"]
	require.Equal(t, int32(20), st.GetAttempts())
	want := []string{eventVolumeUnpublishFailed, eventVolumeUnpublishFailed, eventVolumeUnpublishFailed,
		eventVolumeUnpublishFailed, eventVolumeUnpublishFailed, eventVolumeUnpublishFailed, eventVolumeUnpublishFailed,
		eventVolumeUnpublishFailed, eventVolumeUnpublished, eventVolumeDetached}
	require.Equal(t, want, eventTypes(st), "the last 10 events")
	require.Contains(t, st.GetEvents()[7].GetMessage(), "attempt 20: ")
	require.Contains(t, st.GetEvents()[7].GetMessage(), "plugin broken")
	require.Equal(t, 1, e.plugin.Calls(csi.MethodNodeUnstage), "unstaged once, after the unpublish worked")
}

func TestUnpublishBackoffDoubles(t *testing.T) {
	h, e, _ := csiHarness(t)
	e.known("vol0")
	a := csiAlloc(csiAllocID, "vol0")
	h.spawn(a)
	h.waitFor("running", status(statusRunning))
	e.plugin.FailNext(csi.MethodNodeUnpublish, grpcstatus.Error(codes.Internal, "busy"), 3)
	h.stop(a)
	// 1 s, then 2 s, then 4 s: a step short of each delay fires nothing.
	for i, d := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
		require.Eventually(t, func() bool { return h.clock.Pending() == 1 }, 5*time.Second, time.Millisecond)
		h.clock.Advance(d - time.Millisecond)
		require.Equal(t, i+1, e.plugin.Calls(csi.MethodNodeUnpublish))
		h.clock.Advance(time.Millisecond)
		require.Eventually(t, func() bool { return e.plugin.Calls(csi.MethodNodeUnpublish) == i+2 }, 5*time.Second, time.Millisecond)
	}
	h.waitFor("unpublished", volumeState("vol0", volumeUnpublished))
}

func TestUnpublishNotFoundIsSuccess(t *testing.T) {
	h, e, pc := csiHarness(t)
	e.known("vol0")
	a := csiAlloc(csiAllocID, "vol0")
	h.spawn(a)
	h.waitFor("running", status(statusRunning))
	e.plugin.FailNext(csi.MethodNodeUnpublish, grpcstatus.Error(codes.NotFound, "no such target"), 1)
	e.plugin.FailNext(csi.MethodNodeUnstage, grpcstatus.Error(codes.NotFound, "not staged"), 1)
	h.stop(a)
	done := h.waitFor("unpublished", volumeState("vol0", volumeUnpublished))
	waitPostrun(t, pc, 1)
	require.Equal(t, 1, e.plugin.Calls(csi.MethodNodeUnpublish))
	require.Equal(t, 1, e.plugin.Calls(csi.MethodNodeUnstage))
	require.Zero(t, done.GetVolumeStates()["vol0"].GetAttempts())
	require.Equal(t, []string{"vol0"}, e.claimer.detachedVolumes())
	require.Zero(t, h.clock.Pending(), "no retry")
}

func TestUnstageWaitsForTheLastAllocOnTheHost(t *testing.T) {
	h, e, _ := csiHarness(t)
	e.known("shared")
	a := csiAlloc(csiAllocID, "shared")
	b := csiAlloc("c0000000-0000-0000-0000-000000000002", "shared")
	h.spawn(a)
	h.spawn(b)
	running := map[string]bool{}
	h.waitFor("both running", func(x *messages.Allocation) bool {
		running[x.GetID()] = x.GetClientStatus() == statusRunning
		return running[a.GetID()] && running[b.GetID()]
	})
	staging := stagingPath(e.cfg.Root, "plug", "shared", csi.AttachmentModeFilesystem, csi.AccessModeMultiNodeMultiWriter)
	require.Equal(t, 2, e.users(staging))

	h.stop(a)
	h.waitFor("a unpublished", func(x *messages.Allocation) bool {
		return x.GetID() == a.GetID() && x.GetVolumeStates()["shared"].GetState() == volumeUnpublished
	})
	require.Equal(t, 1, e.plugin.Calls(csi.MethodNodeUnpublish))
	require.Zero(t, e.plugin.Calls(csi.MethodNodeUnstage), "b still uses the staged volume")
	require.True(t, e.plugin.Staged("ext-shared"))
	require.Equal(t, 1, e.users(staging))

	h.stop(b)
	h.waitFor("b unpublished", func(x *messages.Allocation) bool {
		return x.GetID() == b.GetID() && x.GetVolumeStates()["shared"].GetState() == volumeUnpublished
	})
	require.Equal(t, 1, e.plugin.Calls(csi.MethodNodeUnstage), "the last one unstages")
	require.False(t, e.plugin.Staged("ext-shared"))
}

func TestTeardownOrderPerVolume(t *testing.T) {
	h, e, pc := csiHarness(t)
	e.known("a", "b")
	al := csiAlloc(csiAllocID, "a", "b")
	h.spawn(al)
	h.waitFor("running", status(statusRunning))
	before := len(e.log.all())
	h.stop(al)
	waitPostrun(t, pc, 1)
	for _, v := range []string{"a", "b"} {
		var got []string
		for _, entry := range e.log.all()[before:] {
			if entry == "Unmount "+volumeMountPath(h.root, csiAllocID, "t", "/mnt/"+v) || entry == "NodeUnpublish ext-"+v ||
				entry == "NodeUnstage ext-"+v || entry == "NodeDetached "+v {
				got = append(got, entry)
			}
		}
		require.Equal(t, []string{"Unmount " + volumeMountPath(h.root, csiAllocID, "t", "/mnt/"+v),
			"NodeUnpublish ext-" + v, "NodeUnstage ext-" + v, "NodeDetached " + v}, got)
	}
}

func TestPluginLookedUpOnEveryAttempt(t *testing.T) {
	h, e, _ := csiHarness(t)
	e.known("vol0")
	a := csiAlloc(csiAllocID, "vol0")
	h.spawn(a)
	h.waitFor("running", status(statusRunning))
	e.setSocket("") // the plugin task died
	h.stop(a)
	up := h.waitFor("first attempt failed", func(x *messages.Allocation) bool {
		return x.GetVolumeStates()["vol0"].GetAttempts() == 1
	})
	ev := up.GetVolumeStates()["vol0"].GetEvents()
	require.Contains(t, ev[len(ev)-1].GetMessage(), "no healthy node plugin for plug")
	require.Zero(t, e.plugin.Calls(csi.MethodNodeUnpublish))

	e.setSocket("/run/plug-restarted/csi.sock") // back, on a new socket
	h.drive(time.Second, func() bool { return e.plugin.Calls(csi.MethodNodeUnpublish) == 1 })
	h.waitFor("unpublished", volumeState("vol0", volumeUnpublished))
	e.mu.Lock()
	defer e.mu.Unlock()
	require.Equal(t, "/run/plug-restarted/csi.sock", e.dials[len(e.dials)-1])
}

func TestDetachRetriedAfterNodeSideDone(t *testing.T) {
	h, e, pc := csiHarness(t)
	e.known("vol0")
	a := csiAlloc(csiAllocID, "vol0")
	h.spawn(a)
	h.waitFor("running", status(statusRunning))
	e.claimer.mu.Lock()
	e.claimer.detachErrs = []error{errCode("unavailable"), errCode("not_leader")}
	e.claimer.mu.Unlock()
	h.stop(a)
	h.drive(time.Minute, func() bool { return len(e.claimer.detachedVolumes()) == 1 })
	done := h.waitFor("unpublished", volumeState("vol0", volumeUnpublished))
	waitPostrun(t, pc, 1)
	require.Equal(t, 1, e.plugin.Calls(csi.MethodNodeUnpublish), "the node side is not redone")
	require.Equal(t, []string{eventVolumeMounted, eventVolumeUnpublished, eventVolumeDetachFailed, eventVolumeDetachFailed,
		eventVolumeDetached}, eventTypes(done.GetVolumeStates()["vol0"]))
}

func TestTeardownGivesUpAtTheDeadline(t *testing.T) {
	h, e, pc := csiHarness(t)
	e.cfg.Retry = actors.Retry{Initial: time.Second, Max: time.Minute, Multiplier: 2, Deadline: 10 * time.Minute}
	e.known("vol0")
	a := csiAlloc(csiAllocID, "vol0")
	h.spawn(a)
	h.waitFor("running", status(statusRunning))
	e.plugin.FailNext(csi.MethodNodeUnpublish, grpcstatus.Error(codes.Internal, "plugin broken"), -1)
	h.stop(a)
	h.drive(time.Minute, func() bool { return pc.n.Load() == 1 })
	up := h.waitFor("failed", volumeState("vol0", volumeFailed))
	st := up.GetVolumeStates()["vol0"]
	last := st.GetEvents()[len(st.GetEvents())-1]
	require.Equal(t, eventVolumeGaveUp, last.GetType())
	require.Contains(t, last.GetMessage(), "trying to unmount it from this node")
	require.Empty(t, e.claimer.detachedVolumes(), "never reported detached while the node may hold it")
	require.Equal(t, statusComplete, up.GetClientStatus())
	require.Zero(t, h.clock.Pending())
}

func childPaths(h *harness, allocID string) []string {
	for _, in := range h.sys.Tree() {
		if in.Path == "client/allocs/"+allocID {
			return in.Children
		}
	}
	return nil
}
