package volume

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/csi"
)

// TestActorFiftyVolumesOneControllerCallFIFO: 50 volumes released at once
// send one ControllerUnpublish each to the plugin's controller actor,
// which runs them one at a time, in the order they came.
func TestActorFiftyVolumesOneControllerCallFIFO(t *testing.T) {
	h := newHarness(t)
	h.cluster()
	const n = 50
	vol := func(i int) string { return fmt.Sprintf("vol%02d", i) }
	for i := range n {
		h.volume(vol(i))
		h.alloc(fmt.Sprintf("a%02d", i), "n1")
	}
	h.start()
	for i := range n {
		h.claimed(vol(i), fmt.Sprintf("a%02d", i))
	}

	release := h.csi.Block(csi.MethodControllerUnpublish, "ext-"+vol(0))
	defer release()
	var want []string
	for i := range n {
		require.Nil(t, h.detached(vol(i), fmt.Sprintf("a%02d", i), "n1").GetError())
		want = append(want, csi.MethodControllerUnpublish+" ext-"+vol(i))
	}
	// the first call hangs; every volume waits on the controller
	require.Eventually(t, func() bool {
		waiting := 0
		for _, in := range h.sys.Tree() {
			if strings.HasPrefix(in.Path, "volumes/v/") && in.Phase == "waiting-controller" {
				waiting++
			}
		}
		return waiting == n
	}, 5*time.Second, 5*time.Millisecond)
	require.Equal(t, "running", h.phase("volumes/c/hostpath"))
	require.Equal(t, 1, h.csi.Calls(csi.MethodControllerUnpublish))
	release()

	for i := range n {
		h.waitClaim(vol(i), fmt.Sprintf("a%02d", i), "")
	}
	var unpublished []string
	for _, call := range h.csi.Order() {
		if len(call) > len(csi.MethodControllerUnpublish) && call[:len(csi.MethodControllerUnpublish)] == csi.MethodControllerUnpublish {
			unpublished = append(unpublished, call)
		}
	}
	require.Equal(t, want, unpublished, "FIFO, each once")
	require.Equal(t, 1, h.csi.MaxInFlight(), "never two controller calls at once")
}

// TestActorFailsOverOnUnavailable: the lowest instance cannot be reached;
// the call moves to the next instance, which then stays the one used.
func TestActorFailsOverOnUnavailable(t *testing.T) {
	h := newHarness(t)
	h.node("n1", "ready")
	h.node("n2", "ready")
	h.plugin("n1", true, true)
	h.plugin("n2", true, true)
	h.volume("vol1")
	h.volume("vol2")
	h.alloc("a1", "n1")
	h.alloc("a2", "n1")
	h.rpc.setDown("n1", true)
	h.start()

	h.claimed("vol1", "a1")
	require.Equal(t, []string{"n1", "n2"}, h.rpc.calledNodes())
	h.claimed("vol2", "a2")
	require.Equal(t, []string{"n1", "n2", "n2"}, h.rpc.calledNodes(), "sticky on n2")

	// an instance that answers codes.Unavailable fails over the same way
	h.rpc.setDown("n1", false)
	h.csi.FailNext(csi.MethodControllerUnpublish, status.Error(codes.Unavailable, "socket gone"), 1)
	require.Nil(t, h.detached("vol1", "a1", "n1").GetError())
	h.waitClaim("vol1", "a1", "")
	require.Equal(t, []string{"n1", "n2", "n2", "n2", "n1"}, h.rpc.calledNodes())
}

// TestActorSkipsUnhealthyAndDownInstances: an unhealthy instance and one
// on a down node are never called.
func TestActorSkipsUnhealthyAndDownInstances(t *testing.T) {
	h := newHarness(t)
	for _, n := range []string{"n1", "n2", "n3"} {
		h.node(n, "ready")
	}
	h.plugin("n1", true, false)
	h.plugin("n2", true, true)
	h.plugin("n3", true, true)
	h.nodeStatus("n2", "down")
	h.volume("vol1")
	h.alloc("a1", "n3")
	h.start()
	r := h.claim("vol1", "a1", "n3", messages.CSIAccessSingleNodeWriter)
	require.Nil(t, r.GetError())
	require.Equal(t, []string{"n3"}, h.rpc.calledNodes())
}

// TestActorWaitsForAnInstance: with no healthy controller the publish
// waits; a healthy instance showing up runs it.
func TestActorWaitsForAnInstance(t *testing.T) {
	h := newHarness(t)
	h.node("n1", "ready")
	h.plugin("n1", true, false)
	h.volume("vol1")
	h.alloc("a1", "n1")
	h.start()
	done := make(chan error, 1)
	go func() {
		r := h.claim("vol1", "a1", "n1", messages.CSIAccessSingleNodeWriter)
		if r.GetError() != nil {
			done <- fmt.Errorf("%v", r.GetError())
		}
		done <- nil
	}()
	require.Eventually(t, func() bool { return h.phase("volumes/c/hostpath") == "waiting-instance" },
		5*time.Second, time.Millisecond, "phase %q", h.phase("volumes/c/hostpath"))
	require.Empty(t, h.rpc.calledNodes())
	h.plugin("n1", true, true)
	require.NoError(t, <-done)
	require.Equal(t, []string{"n1"}, h.rpc.calledNodes())
}

// TestActorNotFoundIsDetached: ControllerUnpublish answering NotFound (the
// attachment is already gone) frees the claim.
func TestActorNotFoundIsDetached(t *testing.T) {
	h := newHarness(t)
	h.cluster()
	h.volume("vol1")
	h.alloc("a1", "n1")
	h.start()
	h.claimed("vol1", "a1")
	h.csi.FailNext(csi.MethodControllerUnpublish, status.Error(codes.NotFound, "no such attachment"), 1)
	require.Nil(t, h.detached("vol1", "a1", "n1").GetError())
	h.waitClaim("vol1", "a1", "")
	require.Equal(t, 1, h.csi.Calls(csi.MethodControllerUnpublish))
}

// TestActorRetriesUnpublishAfterBackoff: a retryable failure is tried
// again only when the backoff on the clock has run out.
func TestActorRetriesUnpublishAfterBackoff(t *testing.T) {
	h := newHarness(t)
	h.cluster()
	h.volume("vol1")
	h.alloc("a1", "n1")
	h.start()
	h.claimed("vol1", "a1")
	h.csi.FailNext(csi.MethodControllerUnpublish, status.Error(codes.Internal, "backend busy"), 2)
	require.Nil(t, h.detached("vol1", "a1", "n1").GetError())

	require.Eventually(t, func() bool { return h.clock.Pending() == 1 }, 5*time.Second, time.Millisecond)
	require.Equal(t, 1, h.csi.Calls(csi.MethodControllerUnpublish))
	require.Equal(t, state.ClaimNodeDetached.String(), h.claimState("vol1", "a1"))
	h.clock.Advance(testRetry.Initial - time.Millisecond)
	require.Equal(t, 1, h.clock.Pending(), "not due yet")

	h.clock.Advance(time.Millisecond) // first retry, fails again: the next wait doubles
	require.Eventually(t, func() bool { return h.csi.Calls(csi.MethodControllerUnpublish) == 2 && h.clock.Pending() == 1 },
		5*time.Second, time.Millisecond)
	h.clock.Advance(testRetry.Initial)
	require.Equal(t, 1, h.clock.Pending(), "the second wait is 2s")
	h.clock.Advance(testRetry.Initial)
	h.waitClaim("vol1", "a1", "")
	require.Equal(t, 3, h.csi.Calls(csi.MethodControllerUnpublish))
}

// TestActorPublishFailure: a publish that fails for good answers the
// claim with the controller's error and releases the claim.
func TestActorPublishFailure(t *testing.T) {
	h := newHarness(t)
	h.cluster()
	h.volume("vol1")
	h.alloc("a1", "n1")
	h.start()
	h.csi.FailNext(csi.MethodControllerPublish, status.Error(codes.FailedPrecondition, "attached elsewhere"), 1)
	r := h.claim("vol1", "a1", "n1", messages.CSIAccessSingleNodeWriter)
	require.NotNil(t, r.GetError())
	require.Contains(t, r.GetError().GetMessage(), "attached elsewhere")
	require.Contains(t, r.GetError().GetMessage(), "retryable: false")
	// released: it never reached the node, so it goes on to the controller step
	h.waitClaim("vol1", "a1", "")
}
