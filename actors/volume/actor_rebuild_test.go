package volume

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/csi"
)

// rpcs lists "vol/alloc" of the controller calls of kind, in order.
func (h *harness) rpcs(kind string) []string {
	var out []string
	for _, e := range h.tl.list() {
		if s, ok := strings.CutPrefix(e, "rpc "+kind+" "); ok {
			out = append(out, s)
		}
	}
	return out
}

// barrier waits until the plugin's controller queue has run everything
// submitted so far: a create-volume goes through the same FIFO queue.
func (h *harness) barrier(id string) {
	h.t.Helper()
	spec := testVolume(id, true)
	r := h.op(&messages.VolumeOpRequest{Op: opRequestCreate, VolumeID: id, Volume: spec})
	require.Nil(h.t, r.GetError())
}

// at applies a claim command stamped at unix second sec (the claim's
// UpdatedAt, which orders the rebuilt queue).
func (h *harness) at(sec int64, cmd *messages.Command) {
	h.t.Helper()
	cmd.Time = time.Unix(sec, 0).UnixNano()
	h.apply(cmd)
}

func claimCmd(vol, alloc, nodeID string) *messages.Command {
	return &messages.Command{Cmd: &messages.Command_ClaimVolume{ClaimVolume: &messages.ClaimVolume{VolumeID: vol,
		Claim: testClaim(alloc, nodeID, state.ModeWrite, messages.CSIAccessMultiNodeMultiWriter)}}}
}

func moveCmd(vol, alloc string, to state.ClaimState, published bool) *messages.Command {
	return &messages.Command{Cmd: &messages.Command_UpdateClaimState{UpdateClaimState: &messages.UpdateClaimState{
		VolumeID: vol, AllocationID: alloc, State: to.String(), ControllerPublished: published}}}
}

// TestActorRebuildFinishesOpsOnce: a new leader's manager finds claims
// mid-way in the store and finishes them, running each controller op that
// was due exactly once, in the order they became due.
func TestActorRebuildFinishesOpsOnce(t *testing.T) {
	h := newHarness(t)
	h.node("n1", "ready")
	h.node("n2", "ready")
	h.plugin("n1", true, true)
	h.plugin("n2", false, true)
	// what the old leader left behind
	steps := []struct {
		vol, alloc, node string
		states           []state.ClaimState
		published        bool
		at               int64
	}{
		{"vol1", "a1", "n1", []state.ClaimState{state.ClaimUnpublishing, state.ClaimNodeDetached}, true, 300},
		{"vol2", "a2", "n1", []state.ClaimState{state.ClaimUnpublishing, state.ClaimNodeDetached, state.ClaimControllerDetached}, true, 50},
		{"vol3", "a3", "n1", []state.ClaimState{state.ClaimUnpublishing}, false, 100}, // never reached its node
		{"vol4", "a4", "n1", nil, true, 10}, // in use
		{"vol5", "a5", "n1", []state.ClaimState{state.ClaimUnpublishing, state.ClaimNodeDetached}, true, 200},
		{"vol5", "a6", "n2", []state.ClaimState{state.ClaimUnpublishing, state.ClaimNodeDetached}, true, 400},
	}
	for _, s := range steps {
		if h.stored(s.vol) == nil {
			h.volume(s.vol)
		}
		h.alloc(s.alloc, s.node)
		h.at(s.at, claimCmd(s.vol, s.alloc, s.node))
		h.at(s.at, moveCmd(s.vol, s.alloc, state.ClaimTaken, s.published))
		for _, st := range s.states {
			h.at(s.at, moveCmd(s.vol, s.alloc, st, false))
		}
	}
	h.start()

	for _, s := range steps[:3] {
		h.waitClaim(s.vol, s.alloc, "")
	}
	h.waitClaim("vol5", "a5", "")
	h.waitClaim("vol5", "a6", "")
	h.barrier("barrier")
	require.Equal(t, state.ClaimTaken.String(), h.claimState("vol4", "a4"))
	require.Equal(t, []string{"vol3/a3", "vol5/a5", "vol1/a1", "vol5/a6"}, h.rpcs(opControllerUnpublish),
		"each once, in the order they became due")
	require.Equal(t, 4, h.csi.Calls(csi.MethodControllerUnpublish))
	require.Equal(t, 1, h.csi.MaxInFlight())
}

// TestActorLeaderChangeMidWay: the leader loses leadership with one
// unpublish running and two queued; the next leader's manager runs the
// interrupted one again and the queued ones once each.
func TestActorLeaderChangeMidWay(t *testing.T) {
	h := newHarness(t)
	h.cluster()
	for i := range 3 {
		h.volume(fmt.Sprintf("vol%d", i))
		h.alloc(fmt.Sprintf("a%d", i), "n1")
	}
	h.start()
	for i := range 3 {
		h.claimed(fmt.Sprintf("vol%d", i), fmt.Sprintf("a%d", i))
	}
	release := h.csi.Block(csi.MethodControllerUnpublish, "ext-vol0")
	for i := range 3 {
		require.Nil(t, h.detached(fmt.Sprintf("vol%d", i), fmt.Sprintf("a%d", i), "n1").GetError())
	}
	require.Eventually(t, func() bool { return h.phase("volumes/c/hostpath") == "running" },
		5*time.Second, time.Millisecond)
	h.stop() // leadership lost: the running call is cancelled
	release()
	// The old leader's call ends on its own time (a partitioned leader's
	// may outlive the next leader's first call); here it ends first.
	require.Eventually(t, func() bool { return h.rpc.running.Load() == 0 }, 5*time.Second, time.Millisecond)
	require.Equal(t, state.ClaimNodeDetached.String(), h.claimState("vol0", "a0"))

	h.start()
	for i := range 3 {
		h.waitClaim(fmt.Sprintf("vol%d", i), fmt.Sprintf("a%d", i), "")
	}
	h.barrier("barrier")
	require.Equal(t, []string{"vol0/a0", "vol0/a0", "vol1/a1", "vol2/a2"}, h.rpcs(opControllerUnpublish))
	require.Equal(t, 1, h.csi.MaxInFlight())
}

// TestActorRestartedControllerGetsOpsBack: a controller actor that crashes
// loses its queue; the volume actors submit their ops in flight again.
func TestActorRestartedControllerGetsOpsBack(t *testing.T) {
	h := newHarness(t)
	h.node("n1", "ready")
	h.plugin("n1", true, false) // no healthy instance: ops wait in the queue
	h.volume("vol1")
	h.alloc("a1", "n1")
	h.start()
	done := make(chan *messages.VolumeClaimResponse, 1)
	go func() { done <- h.claim("vol1", "a1", "n1", messages.CSIAccessSingleNodeWriter) }()
	require.Eventually(t, func() bool { return h.phase("volumes/c/hostpath") == "waiting-instance" },
		5*time.Second, time.Millisecond)

	h.panicOnce.Store(true) // the controller actor's next state read panics
	h.sys.Root.Send(actor.NewPID(h.sys.Address(), "volumes/c/hostpath"), &instancesChanged{})
	require.Eventually(t, func() bool { return h.restarts("volumes/c/hostpath") == 1 }, 5*time.Second, time.Millisecond)
	h.plugin("n1", true, true) // the lost publish can run only if it came back
	r := <-done
	require.Nil(t, r.GetError())
	require.Equal(t, 1, h.csi.Calls(csi.MethodControllerPublish))
}
