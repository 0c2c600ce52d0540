package volume

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/cluster"
	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/csi"
)

// testRetry is the backoff the actor tests run with (on a FakeClock).
var testRetry = actors.Retry{Initial: time.Second, Max: 4 * time.Second, Multiplier: 2, Deadline: time.Hour}

// timeline records committed claim changes and controller calls in the
// order they happened, to check what came before what.
type timeline struct {
	mu     sync.Mutex
	events []string
}

func (t *timeline) add(s string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.events = append(t.events, s)
}

func (t *timeline) list() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.events)
}

// fakeProposer applies commands to an in-memory FSM, as raft would on a
// single server. fail makes the next Applies answer not-leader.
type fakeProposer struct {
	mu    sync.Mutex
	fsm   *state.FSM
	index uint64
	fail  int
	tl    *timeline
}

func (p *fakeProposer) Apply(_ context.Context, cmd *messages.Command) (any, uint64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fail > 0 {
		p.fail--
		return nil, 0, fmt.Errorf("%w: fake proposer", cluster.ErrNotLeader)
	}
	data, err := proto.Marshal(cmd)
	if err != nil {
		return nil, 0, err
	}
	p.index++
	res := p.fsm.Apply(&raft.Log{Index: p.index, Type: raft.LogCommand, Data: data})
	if err, ok := res.(error); ok {
		return nil, p.index, err
	}
	if s := describeCommand(cmd); s != "" {
		p.tl.add(s)
	}
	return res, p.index, nil
}

func (p *fakeProposer) failNext(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fail = n
}

// describeCommand is a volume command in the timeline: "alloc:state"
// ("!" marks an abandoned node), "alloc:claim", "deregister vol".
func describeCommand(cmd *messages.Command) string {
	switch {
	case cmd.GetUpdateClaimState() != nil:
		u := cmd.GetUpdateClaimState()
		s := u.GetAllocationID() + ":" + u.GetState()
		if u.GetNodeAbandoned() {
			s += "!"
		}
		return s
	case cmd.GetClaimVolume() != nil:
		return cmd.GetClaimVolume().GetClaim().GetAllocationID() + ":claim"
	case cmd.GetDeregisterVolume() != nil:
		return "deregister " + cmd.GetDeregisterVolume().GetVolumeID()
	}
	return ""
}

// fakeRPC runs controller requests on a csi.Fake, as a client would on
// its controller plugin; instances on nodes in down cannot be reached.
type fakeRPC struct {
	csi   *csi.Fake
	tl    *timeline
	mu    sync.Mutex
	down  map[string]bool
	nodes []string // the node of each call
	// running counts the calls that have not returned yet
	running atomic.Int32
	// secrets of the last delete-volume
	deleteSecrets map[string]string
}

func (f *fakeRPC) lastSecrets() map[string]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.deleteSecrets
}

func (f *fakeRPC) setDown(node string, down bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.down[node] = down
}

func (f *fakeRPC) calledNodes() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.nodes)
}

func (f *fakeRPC) Run(ctx context.Context, nodeID string, req *messages.ControllerRequest) (*messages.ControllerResponse, error) {
	f.running.Add(1)
	defer f.running.Add(-1)
	f.mu.Lock()
	f.nodes = append(f.nodes, nodeID)
	down := f.down[nodeID]
	f.mu.Unlock()
	if down {
		return nil, fmt.Errorf("node %s: connection refused", nodeID)
	}
	op, vol := req.GetOp(), req.GetVolume()
	f.tl.add("rpc " + op.GetKind() + " " + op.GetVolumeID() + "/" + op.GetAllocationID())
	resp := &messages.ControllerResponse{}
	var err error
	switch op.GetKind() {
	case opControllerPublish:
		resp.PublishContext, err = f.csi.ControllerPublish(ctx, &csi.PublishRequest{VolumeID: op.GetExternalVolumeID(),
			NodeID: op.GetExternalNodeID(), Capability: &csi.VolumeCapability{AccessMode: vol.GetAccessMode(),
				AttachmentMode: vol.GetAttachmentMode()}})
	case opControllerUnpublish:
		err = f.csi.ControllerUnpublish(ctx, op.GetExternalVolumeID(), op.GetExternalNodeID(), vol.GetSecrets())
	case opDeleteVolume:
		f.mu.Lock()
		f.deleteSecrets = vol.GetSecrets()
		f.mu.Unlock()
		err = f.csi.DeleteVolume(ctx, op.GetExternalVolumeID(), vol.GetSecrets())
	case opCreateVolume:
		creq := &csi.CreateRequest{Name: vol.GetID(), RequiredBytes: vol.GetRequestedCapacityMin()}
		for _, c := range vol.GetRequestedCapabilities() {
			creq.Capabilities = append(creq.Capabilities, &csi.VolumeCapability{AccessMode: c.GetAccessMode(),
				AttachmentMode: c.GetAttachmentMode()})
		}
		var v *csi.Volume
		if v, err = f.csi.CreateVolume(ctx, creq); err == nil {
			resp.Volume = &messages.CSIVolume{ExternalID: v.ID, Capacity: v.CapacityBytes, Context: map[string]string{"made": "fake"}}
		}
	default:
		return messages.ControllerResult(codes.Unimplemented, op.GetKind()), nil
	}
	if err != nil {
		return messages.ControllerResult(csi.Code(err), err.Error()), nil
	}
	return resp, nil
}

// harness runs a volume manager over an in-memory FSM, a fake controller
// plugin and a fake clock; the FSM's events go to the manager as the
// agent sends them.
type harness struct {
	t     *testing.T
	sys   *actors.System
	fsm   *state.FSM
	prop  *fakeProposer
	rpc   *fakeRPC
	csi   *csi.Fake
	clock *actors.FakeClock
	tl    *timeline
	spec  *ManagerSpec
	mgr   atomic.Pointer[actor.PID]
	// panicOnce makes the next state read panic (an actor crash).
	panicOnce atomic.Bool
}

func newHarness(t *testing.T) *harness {
	tl := &timeline{}
	fake := csi.NewFake()
	fsm := state.NewFSM(state.NewStore(), nil)
	logger := slog.New(slog.DiscardHandler)
	if testing.Verbose() {
		logger = slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	h := &harness{t: t, sys: actors.NewSystem(nil), fsm: fsm, prop: &fakeProposer{fsm: fsm, tl: tl},
		rpc: &fakeRPC{csi: fake, tl: tl, down: map[string]bool{}}, csi: fake,
		clock: actors.NewFakeClock(time.Unix(1_700_000_000, 0)), tl: tl}
	h.spec = &ManagerSpec{State: h.view, Proposer: h.prop,
		Controllers: h.rpc, Clock: h.clock, Retry: testRetry, Registry: h.sys.Registry, Logger: logger,
		RPCTimeout: 10 * time.Second}
	fsm.OnApply(func(ev state.Event) {
		if pid := h.mgr.Load(); pid != nil {
			h.sys.Root.Send(pid, &ev)
		}
	})
	t.Cleanup(func() {
		h.stop()
		h.sys.Shutdown()
	})
	return h
}

func (h *harness) view() StateView {
	if h.panicOnce.CompareAndSwap(true, false) {
		panic("test: state read fails")
	}
	return h.fsm.Store().Snapshot()
}

// start spawns the manager (as the agent does on gaining leadership).
func (h *harness) start() {
	pid, err := h.sys.Root.SpawnNamed(h.sys.Props("volumes", NewManager(h.spec)), "volumes")
	require.NoError(h.t, err)
	h.mgr.Store(pid)
}

// stop stops the manager and its children (as on losing leadership).
func (h *harness) stop() {
	if pid := h.mgr.Swap(nil); pid != nil {
		require.NoError(h.t, h.sys.Root.StopFuture(pid).Wait())
	}
}

func (h *harness) apply(cmd *messages.Command) {
	h.t.Helper()
	_, _, err := h.prop.Apply(context.Background(), cmd)
	require.NoError(h.t, err)
}

func (h *harness) node(id, status string) {
	h.apply(&messages.Command{Cmd: &messages.Command_RegisterNode{RegisterNode: &messages.RegisterNode{Node: &messages.Node{
		ID: id, Name: id, Datacenter: "dc1", Status: status,
		NodeResources: &messages.NodeResources{Cpu: &messages.NodeCpuResources{CpuShares: 4000},
			Memory: &messages.NodeMemoryResources{MemoryMB: 4096}}}}}})
}

func (h *harness) nodeStatus(id, status string) {
	h.apply(&messages.Command{Cmd: &messages.Command_UpdateNodeStatus{UpdateNodeStatus: &messages.UpdateNodeStatus{
		NodeID: id, Status: status}}})
}

// plugin fingerprints the hostpath plugin on nodeID: a controller
// instance (healthy or not) and a node instance.
func (h *harness) plugin(nodeID string, controller, healthy bool) {
	info := func() *messages.CSIInfo {
		return &messages.CSIInfo{PluginID: "hostpath", Healthy: healthy, RequiresControllerPlugin: true, Provider: "fake"}
	}
	up := &messages.UpsertPluginInstances{NodeID: nodeID, Nodes: []*messages.CSIInfo{info()}}
	if controller {
		up.Controllers = []*messages.CSIInfo{info()}
	}
	h.apply(&messages.Command{Cmd: &messages.Command_UpsertPluginInstances{UpsertPluginInstances: up}})
}

func (h *harness) volume(id string) {
	h.apply(&messages.Command{Cmd: &messages.Command_RegisterVolume{RegisterVolume: &messages.RegisterVolume{
		Volume: testVolume(id, true)}}})
}

func (h *harness) alloc(id, nodeID string) {
	h.apply(&messages.Command{Cmd: &messages.Command_ApplyPlan{ApplyPlan: &messages.ApplyPlan{Place: []*messages.Allocation{{
		ID: id, Namespace: "default", JobID: "web", TaskGroup: "web", NodeID: nodeID, ClientStatus: "running"}}}}})
}

func (h *harness) allocStatus(id, status string) {
	h.apply(&messages.Command{Cmd: &messages.Command_UpdateAllocsFromClient{UpdateAllocsFromClient: &messages.UpdateAllocsFromClient{
		Allocs: []*messages.Allocation{{ID: id, ClientStatus: status}}}}})
}

// cluster is one ready node n1 running the monolith hostpath plugin.
func (h *harness) cluster() {
	h.node("n1", "ready")
	h.plugin("n1", true, true)
}

func (h *harness) request(msg any) any {
	h.t.Helper()
	res, err := h.sys.Root.RequestFuture(h.mgr.Load(), msg, 10*time.Second).Result()
	require.NoError(h.t, err, "%T", msg)
	return res
}

func (h *harness) claim(vol, alloc, nodeID, access string) *messages.VolumeClaimResponse {
	h.t.Helper()
	return h.request(&messages.VolumeClaimRequest{VolumeID: vol,
		Claim: testClaim(alloc, nodeID, state.ModeWrite, access)}).(*messages.VolumeClaimResponse)
}

// claimed claims vol for alloc on n1 and requires success.
func (h *harness) claimed(vol, alloc string) *messages.VolumeClaimResponse {
	h.t.Helper()
	r := h.claim(vol, alloc, "n1", messages.CSIAccessSingleNodeWriter)
	require.Nil(h.t, r.GetError(), "claim %s for %s", vol, alloc)
	return r
}

func (h *harness) detached(vol, alloc, nodeID string) *messages.VolumeOpResponse {
	h.t.Helper()
	return h.request(&messages.VolumeNodeDetachedRequest{VolumeID: vol, AllocationID: alloc,
		NodeID: nodeID}).(*messages.VolumeOpResponse)
}

func (h *harness) op(req *messages.VolumeOpRequest) *messages.VolumeOpResponse {
	h.t.Helper()
	return h.request(req).(*messages.VolumeOpResponse)
}

func (h *harness) stored(vol string) *messages.CSIVolume {
	return h.fsm.Store().Snapshot().CSIVolumeAnyNamespace(vol)
}

// claimState is the stored state of alloc's claim on vol; "" when freed.
func (h *harness) claimState(vol, alloc string) string {
	return state.ClaimsOf(h.stored(vol)).Get(alloc).GetState()
}

func (h *harness) waitClaim(vol, alloc, want string) {
	h.t.Helper()
	require.Eventually(h.t, func() bool { return h.claimState(vol, alloc) == want }, 5*time.Second, time.Millisecond,
		"claim %s/%s: want %q, have %q", vol, alloc, want, h.claimState(vol, alloc))
}

// phase is the actor tree's phase of the actor at path ("" when absent).
func (h *harness) phase(path string) string {
	for _, in := range h.sys.Tree() {
		if in.Path == path {
			return in.Phase
		}
	}
	return ""
}

// restarts is how often the actor at path restarted.
func (h *harness) restarts(path string) int {
	for _, in := range h.sys.Tree() {
		if in.Path == path {
			return in.Restarts
		}
	}
	return -1
}

// before requires that every event appears in the timeline, in order.
// A proposal is recorded when Apply returns, just after the store shows
// it: the events are waited for.
func (h *harness) before(events ...string) {
	h.t.Helper()
	require.Eventually(h.t, func() bool {
		tl := h.tl.list()
		for _, e := range events {
			if !slices.Contains(tl, e) {
				return false
			}
		}
		return true
	}, 5*time.Second, time.Millisecond, "events %v, timeline %v", events, h.tl.list())
	tl := h.tl.list()
	last := -1
	for _, e := range events {
		i := slices.Index(tl, e)
		require.GreaterOrEqual(h.t, i, 0, "%q not in timeline %v", e, tl)
		require.Greater(h.t, i, last, "%q out of order in timeline %v", e, tl)
		last = i
	}
}

func count(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}
