package volume

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

// controllerQueue is a plugin's controller serializer: destructive
// controller ops from every volume of the plugin run one at a time, in the
// order they were submitted, each on the instance Route picks. An op
// submitted while an equal one (same opKey) is queued or in flight is
// dropped, so nothing runs twice.
//
// Every submitted op completes exactly once (queueEffects.Completed):
// with the instance's answer, or Unreachable when every candidate
// instance answered Unavailable. Step has no I/O and no clock.
type controllerQueue struct {
	pending   []*messages.ControllerOp
	inFlight  *messages.ControllerOp
	running   string // node of the instance running inFlight
	instances []instance
	live      map[string]bool
	r         router
}

// queueInput is what controllerQueue.Step accepts: Submit, opFinished or
// InstancesChanged.
type queueInput interface{ isQueueInput() }

// submit queues an op.
type submit struct{ Op *messages.ControllerOp }

// opFinished: the op in flight returned. Unavailable: the instance could
// not be reached or answered codes.Unavailable; any other result, success
// or failure, is a plain finish.
type opFinished struct {
	Op          *messages.ControllerOp
	Unavailable bool
}

// InstancesChanged gives the plugin's controller instances and the live
// nodes (liveNodes).
type InstancesChanged struct {
	Instances []instance
	Live      map[string]bool
}

func (submit) isQueueInput()           {}
func (opFinished) isQueueInput()       {}
func (InstancesChanged) isQueueInput() {}

// queueEffects is what the controller actor must do after a Step.
type queueEffects struct {
	// Dispatch: run Op on the controller instance on NodeID.
	Dispatch *dispatch
	// Completed: ops that left the queue. The actor forwards each result
	// to the op's volume actor; an Unreachable op goes back as a retryable
	// failure.
	Completed []completion
	// Waiting is errNoController (wrapped) while ops wait for an instance.
	Waiting error
}

// dispatch is one op to run on the instance on NodeID.
type dispatch struct {
	Op     *messages.ControllerOp
	NodeID string
}

// completion is an op that left the queue.
type completion struct {
	Op          *messages.ControllerOp
	Unreachable bool
}

// newControllerQueue returns an empty queue that knows no instance yet.
func newControllerQueue() *controllerQueue { return &controllerQueue{} }

// rebuildControllerQueue returns a queue holding ops in the given order,
// duplicates dropped, nothing in flight (as on a new leader, see
// pendingOps). Step it InstancesChanged to start the first.
func rebuildControllerQueue(ops []*messages.ControllerOp) *controllerQueue {
	q := newControllerQueue()
	for _, op := range ops {
		if !q.has(op) {
			q.pending = append(q.pending, op)
		}
	}
	return q
}

// opKey identifies an op: two ops with the same key do the same work.
func opKey(op *messages.ControllerOp) string {
	return fmt.Sprintf("%s/%s/%s/%s", op.GetKind(), op.GetVolumeID(), op.GetAllocationID(), op.GetSnapshotID())
}

// InFlight returns the op in flight and the node running it.
func (q *controllerQueue) InFlight() (*messages.ControllerOp, string) { return q.inFlight, q.running }

// Pending returns the queued ops, in order, not counting the one in flight.
func (q *controllerQueue) Pending() []*messages.ControllerOp { return slices.Clone(q.pending) }

// Route picks the controller instance for the next call (see router).
func (q *controllerQueue) Route(instances []instance, live map[string]bool) (string, error) {
	return q.r.route(instances, live)
}

// Step applies one input.
func (q *controllerQueue) Step(in queueInput) (queueEffects, error) {
	var e queueEffects
	switch m := in.(type) {
	case submit:
		if !q.has(m.Op) {
			q.pending = append(q.pending, m.Op)
		}
	case opFinished:
		if err := q.finished(&e, m); err != nil {
			return queueEffects{}, err
		}
	case InstancesChanged:
		q.instances, q.live = slices.Clone(m.Instances), maps.Clone(m.Live)
	default:
		return queueEffects{}, fmt.Errorf("volume: unknown queue input %T", in)
	}
	q.dispatch(&e)
	return e, nil
}

func (q *controllerQueue) has(op *messages.ControllerOp) bool {
	key := opKey(op)
	if q.inFlight != nil && opKey(q.inFlight) == key {
		return true
	}
	return slices.ContainsFunc(q.pending, func(p *messages.ControllerOp) bool { return opKey(p) == key })
}

// finished ends the op in flight. An Unavailable answer fails the
// instance over: the op goes back to the head of the queue for the next
// instance, or completes Unreachable when no instance is left.
func (q *controllerQueue) finished(e *queueEffects, m opFinished) error {
	if q.inFlight == nil || opKey(q.inFlight) != opKey(m.Op) {
		return fmt.Errorf("%w: controller queue: %s", errUnexpectedResult, opKey(m.Op))
	}
	op, node := q.inFlight, q.running
	q.inFlight, q.running = nil, ""
	if !m.Unavailable {
		q.r.succeeded()
		e.Completed = append(e.Completed, completion{Op: op})
		return nil
	}
	q.r.unavailable(node)
	if len(q.r.candidates(q.instances, q.live)) == 0 {
		q.r.exhausted()
		e.Completed = append(e.Completed, completion{Op: op, Unreachable: true})
		return nil
	}
	q.pending = append([]*messages.ControllerOp{op}, q.pending...)
	return nil
}

// dispatch starts the head of the queue when nothing is in flight.
func (q *controllerQueue) dispatch(e *queueEffects) {
	if q.inFlight != nil || len(q.pending) == 0 {
		return
	}
	node, err := q.r.route(q.instances, q.live)
	if err != nil {
		e.Waiting = err
		return
	}
	q.inFlight, q.running = q.pending[0], node
	q.pending = q.pending[1:]
	e.Dispatch = &dispatch{Op: q.inFlight, NodeID: node}
}

// pendingOps lists the controller ops that a new leader must run for the
// stored volumes of one plugin, in the order they became due: the op each
// volume's state starts on Resume (at most one per volume; the rest follow
// from the volume actors), sorted by the claim's UpdatedAt, then volume and
// allocation. Feed it to rebuildControllerQueue; the volume actors' own
// submissions are then dropped as duplicates.
func pendingOps(vols []*messages.CSIVolume) []*messages.ControllerOp {
	type due struct {
		op *messages.ControllerOp
		at int64
	}
	var all []due
	for _, v := range vols {
		e, err := newVolumeState(v).Step(resume{})
		if err != nil {
			continue
		}
		for _, op := range e.Controller {
			all = append(all, due{op: op, at: state.ClaimsOf(v).Get(op.GetAllocationID()).GetUpdatedAt()})
		}
	}
	slices.SortStableFunc(all, func(a, b due) int {
		return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.op.GetVolumeID(), b.op.GetVolumeID()),
			cmp.Compare(a.op.GetAllocationID(), b.op.GetAllocationID()))
	})
	out := make([]*messages.ControllerOp, len(all))
	for i, d := range all {
		out[i] = d.op
	}
	return out
}
