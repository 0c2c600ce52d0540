package volume

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/troupe-dev/troupe/cluster"
	"github.com/troupe-dev/troupe/cluster/remote"
	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/csi"
)

// TestClaimRule is the whole release/abandon table.
func TestClaimRule(t *testing.T) {
	alloc := func(status string) *messages.Allocation {
		return &messages.Allocation{ID: "a1", ClientStatus: status, DesiredStatus: "run"}
	}
	node := func(status string) *messages.Node { return &messages.Node{ID: "n1", Status: status} }
	release, abandon := releaseRequested{AllocID: "a1"}, nodeAbandoned{AllocID: "a1"}
	cases := []struct {
		claim  state.ClaimState
		alloc  *messages.Allocation
		node   *messages.Node
		want   input
		reason string
	}{
		{state.ClaimTaken, alloc("running"), node("ready"), nil, "in use"},
		{state.ClaimTaken, &messages.Allocation{ClientStatus: "running", DesiredStatus: "stop"}, node("ready"), nil, "stopping: wait for the client"},
		{state.ClaimTaken, alloc("complete"), node("ready"), release, "client-terminal"},
		{state.ClaimTaken, alloc("failed"), node("disconnected"), release, "failed on a cut-off node: the client unmounts"},
		{state.ClaimTaken, alloc("lost"), node("ready"), release, "lost on a live node"},
		{state.ClaimTaken, alloc("lost"), node("disconnected"), abandon, "lost past stop_on_client_after"},
		{state.ClaimTaken, alloc("running"), node("disconnected"), nil, "disconnected, window not over"},
		{state.ClaimTaken, alloc("running"), node("down"), abandon, "node down"},
		{state.ClaimTaken, alloc("running"), nil, abandon, "node garbage-collected"},
		{state.ClaimTaken, nil, node("ready"), abandon, "alloc garbage-collected"},
		{state.ClaimUnpublishing, alloc("complete"), node("ready"), nil, "waits for the node's report"},
		{state.ClaimUnpublishing, alloc("complete"), node("down"), abandon, "node down while unpublishing"},
		{state.ClaimUnpublishing, alloc("lost"), node("disconnected"), abandon, "lost while unpublishing"},
		{state.ClaimNodeDetached, nil, nil, nil, "past the node step"},
		{state.ClaimControllerDetached, nil, nil, nil, "past the node step"},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s/%s", c.claim, c.reason), func(t *testing.T) {
			claim := &messages.CSIVolumeClaim{AllocationID: "a1", NodeID: "n1", State: c.claim.String()}
			require.Equal(t, c.want, claimRule(claim, c.alloc, c.node))
		})
	}
}

// rulesView is a StateView over a few nodes and allocations.
type rulesView struct {
	StateView
	nodes  map[string]*messages.Node
	allocs map[string]*messages.Allocation
}

func (v *rulesView) NodeByID(id string) *messages.Node                { return v.nodes[id] }
func (v *rulesView) AllocByID(id string) *messages.Allocation         { return v.allocs[id] }
func (v *rulesView) CSIVolumeAnyNamespace(string) *messages.CSIVolume { return nil }

// TestDetachInputs: the operator's detach releases terminal claims on a
// live node, abandons them on a down one, re-tries the node-detached ones
// and ends with a Resume; claims elsewhere or in use are left alone.
func TestDetachInputs(t *testing.T) {
	vol := &messages.CSIVolume{ID: "vol1", Claims: []*messages.CSIVolumeClaim{
		{AllocationID: "done", NodeID: "n1", State: state.ClaimTaken.String()},
		{AllocationID: "running", NodeID: "n1", State: state.ClaimTaken.String()},
		{AllocationID: "gc", NodeID: "n1", State: state.ClaimUnpublishing.String()},
		{AllocationID: "stuck", NodeID: "n1", State: state.ClaimNodeDetached.String()},
		{AllocationID: "other", NodeID: "n2", State: state.ClaimTaken.String()},
	}}
	view := &rulesView{nodes: map[string]*messages.Node{"n1": {ID: "n1", Status: "ready"}},
		allocs: map[string]*messages.Allocation{
			"done": {ID: "done", ClientStatus: "complete"}, "running": {ID: "running", ClientStatus: "running"},
			"other": {ID: "other", ClientStatus: "complete"}}}
	require.Equal(t, []input{releaseRequested{AllocID: "done"}, RetryDue{AllocID: "stuck"}, resume{}},
		detachInputs(vol, "n1", view), "a claim unpublishing on a live node waits for the node")

	view.nodes["n1"].Status = "down"
	require.Equal(t, []input{nodeAbandoned{AllocID: "done"}, nodeAbandoned{AllocID: "gc"}, RetryDue{AllocID: "stuck"}, resume{}},
		detachInputs(vol, "n1", view))
	require.Equal(t, []input{resume{}}, detachInputs(vol, "n3", view))
}

// TestRetryableCodesMatchCSI: the controller actor classifies a failed
// answer's gRPC code as runtime/csi classifies the error; a sender that
// sets only the code's name is read the same way.
func TestRetryableCodesMatchCSI(t *testing.T) {
	pub := &messages.ControllerOp{Kind: opControllerPublish, VolumeID: "v", AllocationID: "a"}
	for c := codes.OK + 1; c <= codes.Unauthenticated; c++ {
		for _, resp := range []*messages.ControllerResponse{messages.ControllerResult(c, "x"), {Code: c.String()}} {
			o := outcomeOf(&opRan{op: pub, resp: resp}, false)
			require.False(t, o.ok, c.String())
			require.Equal(t, csi.IsRetryable(status.Error(c, "x")), o.retryable, c.String())
			require.Equal(t, c, o.code, c.String())
		}
	}
	for _, resp := range []*messages.ControllerResponse{{}, {Code: "OK"}, messages.ControllerResult(codes.OK, "")} {
		require.True(t, outcomeOf(&opRan{op: pub, resp: resp}, false).ok, "%+v", resp)
	}
	o := outcomeOf(&opRan{op: pub, resp: &messages.ControllerResponse{Code: "SomethingNew"}}, false)
	require.True(t, o.retryable, "an unknown code counts as Unknown")
	require.Equal(t, codes.Unknown, o.code)
}

// TestOutcomeOf: what a controller answer means for the volume.
func TestOutcomeOf(t *testing.T) {
	unpub := &messages.ControllerOp{Kind: opControllerUnpublish, VolumeID: "v", AllocationID: "a"}
	pub := &messages.ControllerOp{Kind: opControllerPublish, VolumeID: "v", AllocationID: "a"}
	del := &messages.ControllerOp{Kind: opDeleteVolume, VolumeID: "v"}
	resp := func(code codes.Code) *messages.ControllerResponse {
		r := messages.ControllerResult(code, "m")
		r.PublishContext = map[string]string{"k": "v"}
		return r
	}
	failed := func(retry bool, msg string, code codes.Code) input {
		return controllerFailed{AllocID: "a", Retryable: retry, Message: msg, Code: code}
	}
	cases := []struct {
		op          *messages.ControllerOp
		r           *opRan
		unreachable bool
		want        input
	}{
		{pub, &opRan{op: pub, resp: resp(codes.OK)}, false, controllerPublished{AllocID: "a", PublishContext: map[string]string{"k": "v"}}},
		{unpub, &opRan{op: unpub, resp: resp(codes.OK)}, false, controllerDetached{AllocID: "a"}},
		{unpub, &opRan{op: unpub, resp: resp(codes.NotFound)}, false, controllerDetached{AllocID: "a"}},
		{del, &opRan{op: del, resp: resp(codes.NotFound)}, false, volumeDeleted{}},
		{pub, &opRan{op: pub, resp: resp(codes.NotFound)}, false, failed(false, "NotFound: m", codes.NotFound)},
		{unpub, &opRan{op: unpub, resp: resp(codes.Internal)}, false, failed(true, "Internal: m", codes.Internal)},
		{unpub, &opRan{op: unpub, resp: resp(codes.FailedPrecondition)}, false, failed(false, "FailedPrecondition: m", codes.FailedPrecondition)},
		{unpub, &opRan{op: unpub, err: errors.New("refused")}, true, failed(true, "no controller instance reachable: refused", codes.OK)},
		{unpub, &opRan{op: unpub, resp: &messages.ControllerResponse{Code: "NotFound"}}, false, controllerDetached{AllocID: "a"}},
		{pub, &opRan{op: pub, resp: &messages.ControllerResponse{Code: "Aborted", Message: "m"}}, false, failed(true, "Aborted: m", codes.Aborted)},
	}
	for _, c := range cases {
		require.Equal(t, c.want, outcomeOf(c.r, c.unreachable).input(c.op, c.r.resp), "%s %+v", c.op.GetKind(), c.r.resp)
	}
}

// TestErrorOf: the codes requesters get.
func TestErrorOf(t *testing.T) {
	cases := []struct {
		err  error
		code messages.ErrorCode
	}{
		{&state.ClaimConflictError{VolumeID: "v", AllocID: "a1"}, messages.CodeConflict},
		{fmt.Errorf("x: %w", state.ErrClaimReleasing), messages.CodeConflict},
		{fmt.Errorf("x: %w", state.ErrVolumeInUse), messages.CodeConflict},
		{fmt.Errorf("x: %w", state.ErrVolumeReadOnly), messages.CodeInvalid},
		{fmt.Errorf("x: %w", cluster.ErrNotLeader), messages.CodeNotLeader},
		{&controllerError{Kind: opControllerPublish, Retryable: true}, messages.CodeUnavailable},
		{&controllerError{Kind: opControllerPublish}, messages.CodeInternal},
		{&controllerError{Kind: opCreateVolume, Code: codes.InvalidArgument}, messages.CodeInvalid},
		{&controllerError{Kind: opCreateVolume, Code: codes.AlreadyExists}, messages.CodeConflict},
		{&controllerError{Kind: opDeleteVolume, Code: codes.FailedPrecondition}, messages.CodeConflict},
		{&controllerError{Kind: opControllerExpand, Code: codes.NotFound}, messages.CodeNotFound},
		{&remote.RemoteError{Code: remote.CodeNotLeader, LeaderRPCAddr: "l:1"}, messages.CodeNotLeader},
		{errors.New("boom"), messages.CodeInternal},
	}
	for _, c := range cases {
		require.Equal(t, c.code, errorOf(c.err).ErrorCode(), "%v", c.err)
	}
	require.Nil(t, errorOf(nil))
	require.Contains(t, errorOf(&state.ClaimConflictError{VolumeID: "v", AllocID: "a1"}).GetMessage(), `alloc "a1"`)
}
