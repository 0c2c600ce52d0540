package volume

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

// ControllerQueue is a plugin's controller serializer: destructive
// controller ops from every volume of the plugin run one at a time, in the
// order they were submitted, each on the instance Route picks. An op
// submitted while an equal one (same OpKey) is queued or in flight is
// dropped, so nothing runs twice.
//
// Every submitted op completes exactly once (QueueEffects.Completed):
// with the instance's answer, or Unreachable when every candidate
// instance answered Unavailable. Step has no I/O and no clock.
type ControllerQueue struct {
	pending   []*messages.ControllerOp
	inFlight  *messages.ControllerOp
	running   string // node of the instance running inFlight
	instances []Instance
	live      map[string]bool
	r         router
}

// QueueInput is what ControllerQueue.Step accepts: Submit, OpFinished or
// InstancesChanged.
type QueueInput interface{ isQueueInput() }

// Submit queues an op.
type Submit struct{ Op *messages.ControllerOp }

// OpFinished: the op in flight returned. Unavailable: the instance could
// not be reached or answered codes.Unavailable; any other result, success
// or failure, is a plain finish.
type OpFinished struct {
	Op          *messages.ControllerOp
	Unavailable bool
}

// InstancesChanged gives the plugin's controller instances and the live
// nodes (LiveNodes).
type InstancesChanged struct {
	Instances []Instance
	Live      map[string]bool
}

func (Submit) isQueueInput()           {}
func (OpFinished) isQueueInput()       {}
func (InstancesChanged) isQueueInput() {}

// QueueEffects is what the controller actor must do after a Step.
type QueueEffects struct {
	// Dispatch: run Op on the controller instance on NodeID.
	Dispatch *Dispatch
	// Completed: ops that left the queue. The actor forwards each result
	// to the op's volume actor; an Unreachable op goes back as a retryable
	// failure.
	Completed []Completion
	// Waiting is ErrNoController (wrapped) while ops wait for an instance.
	Waiting error
}

// Dispatch is one op to run on the instance on NodeID.
type Dispatch struct {
	Op     *messages.ControllerOp
	NodeID string
}

// Completion is an op that left the queue.
type Completion struct {
	Op          *messages.ControllerOp
	Unreachable bool
}

// NewControllerQueue returns an empty queue that knows no instance yet.
func NewControllerQueue() *ControllerQueue { return &ControllerQueue{} }

// RebuildControllerQueue returns a queue holding ops in the given order,
// duplicates dropped, nothing in flight (as on a new leader, see
// PendingOps). Step it InstancesChanged to start the first.
func RebuildControllerQueue(ops []*messages.ControllerOp) *ControllerQueue {
	q := NewControllerQueue()
	for _, op := range ops {
		if !q.has(op) {
			q.pending = append(q.pending, op)
		}
	}
	return q
}

// OpKey identifies an op: two ops with the same key do the same work.
func OpKey(op *messages.ControllerOp) string {
	return fmt.Sprintf("%s/%s/%s/%s", op.GetKind(), op.GetVolumeID(), op.GetAllocationID(), op.GetSnapshotID())
}

// InFlight returns the op in flight and the node running it.
func (q *ControllerQueue) InFlight() (*messages.ControllerOp, string) { return q.inFlight, q.running }

// Pending returns the queued ops, in order, not counting the one in flight.
func (q *ControllerQueue) Pending() []*messages.ControllerOp { return slices.Clone(q.pending) }

// Route picks the controller instance for the next call (see router).
func (q *ControllerQueue) Route(instances []Instance, live map[string]bool) (string, error) {
	return q.r.route(instances, live)
}

// Step applies one input.
func (q *ControllerQueue) Step(in QueueInput) (QueueEffects, error) {
	var e QueueEffects
	switch m := in.(type) {
	case Submit:
		if !q.has(m.Op) {
			q.pending = append(q.pending, m.Op)
		}
	case OpFinished:
		if err := q.finished(&e, m); err != nil {
			return QueueEffects{}, err
		}
	case InstancesChanged:
		q.instances, q.live = slices.Clone(m.Instances), maps.Clone(m.Live)
	default:
		return QueueEffects{}, fmt.Errorf("volume: unknown queue input %T", in)
	}
	q.dispatch(&e)
	return e, nil
}

func (q *ControllerQueue) has(op *messages.ControllerOp) bool {
	key := OpKey(op)
	if q.inFlight != nil && OpKey(q.inFlight) == key {
		return true
	}
	return slices.ContainsFunc(q.pending, func(p *messages.ControllerOp) bool { return OpKey(p) == key })
}

// finished ends the op in flight. An Unavailable answer fails the
// instance over: the op goes back to the head of the queue for the next
// instance, or completes Unreachable when no instance is left.
func (q *ControllerQueue) finished(e *QueueEffects, m OpFinished) error {
	if q.inFlight == nil || OpKey(q.inFlight) != OpKey(m.Op) {
		return fmt.Errorf("%w: controller queue: %s", ErrUnexpectedResult, OpKey(m.Op))
	}
	op, node := q.inFlight, q.running
	q.inFlight, q.running = nil, ""
	if !m.Unavailable {
		q.r.succeeded()
		e.Completed = append(e.Completed, Completion{Op: op})
		return nil
	}
	q.r.unavailable(node)
	if len(q.r.candidates(q.instances, q.live)) == 0 {
		q.r.exhausted()
		e.Completed = append(e.Completed, Completion{Op: op, Unreachable: true})
		return nil
	}
	q.pending = append([]*messages.ControllerOp{op}, q.pending...)
	return nil
}

// dispatch starts the head of the queue when nothing is in flight.
func (q *ControllerQueue) dispatch(e *QueueEffects) {
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
	e.Dispatch = &Dispatch{Op: q.inFlight, NodeID: node}
}

// PendingOps lists the controller ops that a new leader must run for the
// stored volumes of one plugin, in the order they became due: the op each
// volume's state starts on Resume (at most one per volume; the rest follow
// from the volume actors), sorted by the claim's UpdatedAt, then volume and
// allocation. Feed it to RebuildControllerQueue; the volume actors' own
// submissions are then dropped as duplicates.
func PendingOps(vols []*messages.CSIVolume) []*messages.ControllerOp {
	type due struct {
		op *messages.ControllerOp
		at int64
	}
	var all []due
	for _, v := range vols {
		e, err := NewVolumeState(v).Step(Resume{})
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
