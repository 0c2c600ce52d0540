package volume

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

func unpub(vol, alloc string) *messages.ControllerOp {
	return &messages.ControllerOp{Kind: opControllerUnpublish, PluginID: "hostpath", VolumeID: vol, AllocationID: alloc}
}

func healthy(nodes ...string) []instance {
	out := make([]instance, len(nodes))
	for i, n := range nodes {
		out[i] = instance{NodeID: n, Healthy: true}
	}
	return out
}

func liveSet(nodes ...string) map[string]bool {
	m := map[string]bool{}
	for _, n := range nodes {
		m[n] = true
	}
	return m
}

func qstep(t *testing.T, q *controllerQueue, in queueInput) queueEffects {
	t.Helper()
	e, err := q.Step(in)
	require.NoError(t, err, "%T", in)
	return e
}

func TestQueueFIFOOneInFlight(t *testing.T) {
	q := newControllerQueue()
	qstep(t, q, InstancesChanged{Instances: healthy("n1"), Live: liveSet("n1")})
	a, b, c := unpub("v1", "a"), unpub("v2", "b"), unpub("v3", "c")
	e := qstep(t, q, submit{Op: a})
	require.Equal(t, &dispatch{Op: a, NodeID: "n1"}, e.Dispatch)
	require.Nil(t, qstep(t, q, submit{Op: b}).Dispatch, "one in flight")
	require.Nil(t, qstep(t, q, submit{Op: c}).Dispatch)
	require.Nil(t, qstep(t, q, submit{Op: unpub("v2", "b")}).Dispatch, "duplicate of a queued op")
	require.Nil(t, qstep(t, q, submit{Op: unpub("v1", "a")}).Dispatch, "duplicate of the op in flight")
	require.Len(t, q.Pending(), 2)

	var order []string
	for _, want := range []*messages.ControllerOp{a, b, c} {
		inFlight, node := q.InFlight()
		require.Same(t, want, inFlight)
		require.Equal(t, "n1", node)
		e = qstep(t, q, opFinished{Op: want})
		require.Equal(t, []completion{{Op: want}}, e.Completed)
		order = append(order, want.GetAllocationID())
	}
	require.Equal(t, []string{"a", "b", "c"}, order)
	inFlight, _ := q.InFlight()
	require.Nil(t, inFlight)
	_, err := q.Step(opFinished{Op: a})
	require.ErrorIs(t, err, errUnexpectedResult)
}

func TestRouteLowestHealthyLiveSticky(t *testing.T) {
	nodes := []*messages.Node{
		{ID: "n1", Status: "ready"},
		{ID: "n2", Status: "down"},
		{ID: "n3", Status: "ready", SchedulingEligibility: "ineligible"},
		{ID: "n4", Status: "ready", Drain: true},
		{ID: "n5", Status: "disconnected"},
		{ID: "n6", Status: "initializing"},
	}
	live := liveNodes(nodes)
	require.Equal(t, liveSet("n1", "n3", "n4"), live, "ready, whatever the eligibility or drain")

	plugin := &messages.CSIPlugin{ID: "hostpath", Controllers: map[string]*messages.CSIInfo{
		"n4": {Healthy: true}, "n1": {Healthy: false}, "n2": {Healthy: true}, "n3": {Healthy: true}, "n5": {Healthy: true},
	}}
	inst := controllerInstances(plugin)
	require.Equal(t, []string{"n1", "n2", "n3", "n4", "n5"}, nodeIDs(inst))

	q := newControllerQueue()
	cases := []struct {
		name      string
		instances []instance
		live      map[string]bool
		want      string
	}{
		{"lowest healthy live (n1 unhealthy, n2 down), ineligible n3 counts", inst, live, "n3"},
		{"sticky: a lower instance appears", append(healthy("n0"), inst...), liveSet("n0", "n1", "n3", "n4"), "n3"},
		{"sticky instance unhealthy: lowest again", []instance{{NodeID: "n0", Healthy: true}, {NodeID: "n3"}, {NodeID: "n4", Healthy: true}}, liveSet("n0", "n3", "n4"), "n0"},
		{"sticky node down: lowest again", healthy("n0", "n4"), liveSet("n4"), "n4"},
		{"draining node still serves", healthy("n4"), liveNodes(nodes), "n4"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := q.Route(tc.instances, tc.live)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
	_, err := q.Route([]instance{{NodeID: "n1"}}, liveSet("n1"))
	require.ErrorIs(t, err, errNoController)
}

func nodeIDs(in []instance) []string {
	var out []string
	for _, i := range in {
		out = append(out, i.NodeID)
	}
	return out
}

func TestQueueFailsOverOnlyOnUnavailable(t *testing.T) {
	q := newControllerQueue()
	qstep(t, q, InstancesChanged{Instances: healthy("n1", "n2", "n3"), Live: liveSet("n1", "n2", "n3")})
	a, b, c := unpub("v1", "a"), unpub("v2", "b"), unpub("v3", "c")
	require.Equal(t, "n1", qstep(t, q, submit{Op: a}).Dispatch.NodeID)
	qstep(t, q, submit{Op: b})
	qstep(t, q, submit{Op: c})

	e := qstep(t, q, opFinished{Op: a, Unavailable: true})
	require.Empty(t, e.Completed, "a is retried on the next instance")
	require.Equal(t, &dispatch{Op: a, NodeID: "n2"}, e.Dispatch)
	e = qstep(t, q, opFinished{Op: a}) // a plain failure or success does not move
	require.Equal(t, []completion{{Op: a}}, e.Completed)
	require.Equal(t, &dispatch{Op: b, NodeID: "n2"}, e.Dispatch, "sticky on n2")

	var path []string
	for _, want := range []string{"n3", "n1"} {
		e = qstep(t, q, opFinished{Op: b, Unavailable: true})
		require.Empty(t, e.Completed)
		path = append(path, e.Dispatch.NodeID)
		require.Equal(t, want, e.Dispatch.NodeID)
	}
	e = qstep(t, q, opFinished{Op: b, Unavailable: true})
	require.Equal(t, []completion{{Op: b, Unreachable: true}}, e.Completed, "every instance unreachable")
	require.Equal(t, &dispatch{Op: c, NodeID: "n1"}, e.Dispatch, "starts over from the lowest")
	require.Equal(t, []string{"n3", "n1"}, path)
}

func TestQueueWaitsForAController(t *testing.T) {
	q := newControllerQueue()
	e := qstep(t, q, submit{Op: unpub("v1", "a")})
	require.Nil(t, e.Dispatch)
	require.ErrorIs(t, e.Waiting, errNoController)
	e = qstep(t, q, InstancesChanged{Instances: []instance{{NodeID: "n1"}}, Live: liveSet("n1")})
	require.ErrorIs(t, e.Waiting, errNoController, "unhealthy instance")
	e = qstep(t, q, InstancesChanged{Instances: healthy("n2"), Live: liveSet("n2")})
	require.Equal(t, "n2", e.Dispatch.NodeID)
	_, err := q.Step(nil)
	require.Error(t, err)
}

// TestQueueRebuildRunsEachOpOnce is a leader change: the queue is rebuilt
// from the pending ops in order, the volume actors submit theirs again,
// and each op runs exactly once.
func TestQueueRebuildRunsEachOpOnce(t *testing.T) {
	ops := []*messages.ControllerOp{unpub("v1", "a"), unpub("v2", "b"), unpub("v1", "a"), unpub("v3", "c")}
	q := rebuildControllerQueue(ops)
	require.Len(t, q.Pending(), 3)
	inFlight, _ := q.InFlight()
	require.Nil(t, inFlight)

	runs := map[string]int{}
	var order []string
	e := qstep(t, q, InstancesChanged{Instances: healthy("n1"), Live: liveSet("n1")})
	for _, op := range ops { // the volume actors resubmit on Resume
		require.Nil(t, qstep(t, q, submit{Op: op}).Dispatch)
	}
	for e.Dispatch != nil {
		runs[opKey(e.Dispatch.Op)]++
		order = append(order, e.Dispatch.Op.GetAllocationID())
		e = qstep(t, q, opFinished{Op: e.Dispatch.Op})
	}
	require.Equal(t, []string{"a", "b", "c"}, order)
	for k, n := range runs {
		require.Equal(t, 1, n, k)
	}
}

func TestPendingOpsFromStoredVolumes(t *testing.T) {
	vol := func(id string, claims ...*messages.CSIVolumeClaim) *messages.CSIVolume {
		v := testVolume(id, true)
		v.Claims = claims
		return v
	}
	claim := func(alloc, claimState string, at int64) *messages.CSIVolumeClaim {
		c := testClaim(alloc, "n-"+alloc, state.ModeWrite, messages.CSIAccessMultiNodeMultiWriter)
		c.State, c.UpdatedAt, c.ControllerPublished = claimState, at, true
		return c
	}
	vols := []*messages.CSIVolume{
		vol("v1", claim("a1", "node-detached", 30)),
		vol("v2", claim("a2", "node-detached", 10), claim("a2b", "node-detached", 5)),
		vol("v3", claim("a3", "taken", 1), claim("a3b", "unpublishing", 2)),
		vol("v4", claim("a4", "node-detached", 20)),
	}
	got := pendingOps(vols)
	require.Equal(t, []string{"v2/a2", "v4/a4", "v1/a1"}, keysOf(got),
		"one op per volume (its first node-detached claim), by the time it became due")
}

func keysOf(ops []*messages.ControllerOp) []string {
	var out []string
	for _, op := range ops {
		out = append(out, op.GetVolumeID()+"/"+op.GetAllocationID())
	}
	return out
}

// TestManyVolumesStopAtOnce runs volume states and the plugin's queue
// together: 50 allocations stop at once, each with its own volume. Node
// sides finish in any order; the controller side runs one op at a time in
// the order the volumes asked, and every claim is freed.
func TestManyVolumesStopAtOnce(t *testing.T) {
	const n = 50
	vols := map[string]*volumeState{}
	q := newControllerQueue()
	qstep(t, q, InstancesChanged{Instances: healthy("n1", "n2"), Live: liveSet("n1", "n2")})
	var asked, ran []string
	var running *dispatch
	submit := func(e effects) {
		for _, op := range e.Controller {
			asked = append(asked, op.GetVolumeID())
			qe := qstep(t, q, submit{Op: op})
			if qe.Dispatch != nil {
				require.Nil(t, running, "a second controller op while one is in flight")
				running = qe.Dispatch
			}
		}
	}
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("vol%02d", i)
		v := testVolume(id, true)
		v.Claims = []*messages.CSIVolumeClaim{{AllocationID: "alloc-" + id, NodeID: "w1",
			Mode: state.ModeWrite, AccessMode: messages.CSIAccessSingleNodeWriter, AttachmentMode: messages.CSIAttachFileSystem,
			State: "unpublishing", ControllerPublished: true}}
		vols[id] = newVolumeState(v)
	}
	for i := n - 1; i >= 0; i-- { // node sides finish in reverse
		id := fmt.Sprintf("vol%02d", i)
		submit(step(t, vols[id], nodeDetached{AllocID: "alloc-" + id}))
	}
	for running != nil {
		d := running
		running = nil
		ran = append(ran, d.Op.GetVolumeID())
		require.Equal(t, "n1", d.NodeID, "sticky on the lowest node")
		qe := qstep(t, q, opFinished{Op: d.Op})
		running = qe.Dispatch
		for _, c := range qe.Completed {
			submit(step(t, vols[c.Op.GetVolumeID()], controllerDetached{AllocID: c.Op.GetAllocationID()}))
		}
	}
	require.Equal(t, asked, ran, "FIFO")
	require.Len(t, ran, n)
	for id, s := range vols {
		require.Empty(t, s.Volume().GetClaims(), id)
	}
}
