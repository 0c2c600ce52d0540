package volume

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/messages"
)

// controllerActor is the leader's actor for one plugin's controller
// ("server/volumes/c/<plugin>"): it steps a controllerQueue, so the
// plugin's destructive controller RPCs run one at a time, FIFO, across
// all its volumes, on the instance the queue routes to. Each RPC runs in
// a worker; its outcome goes back to the manager, which hands it to the
// volume actor (or, for a create-volume, registers the volume).
type controllerActor struct {
	actors.Lifetime // ends the workers on stop
	spec            *ManagerSpec
	pluginID        string
	initial         []*messages.ControllerOp // the rebuilt queue, first start only
	restarted       bool
	q               *controllerQueue
	extra           map[string]*submitOp // opKey -> a submission with a spec or secrets
	last            *opRan               // the outcome of the op that finished last
	cancel          context.CancelFunc   // of the RPC in flight
	waiting         bool
	log             *slog.Logger
}

// opRan is an RPC's outcome, from the worker. owner is the actor
// instance that started it: a late result of a stopped instance (an old
// leader's manager, a crashed actor) may reach a new one under the same
// name, which must ignore it.
type opRan struct {
	owner  *controllerActor
	op     *messages.ControllerOp
	nodeID string
	resp   *messages.ControllerResponse
	err    error
}

func newControllerActor(spec *ManagerSpec, pluginID string, initial []*messages.ControllerOp) actor.Producer {
	var started atomic.Bool
	return func() actor.Actor {
		a := &controllerActor{spec: spec, pluginID: pluginID, extra: map[string]*submitOp{},
			log: spec.Logger.With("plugin", pluginID)}
		if started.CompareAndSwap(false, true) {
			a.initial = initial
		} else {
			a.restarted = true
		}
		return a
	}
}

// Phase names the actor's state for the actor tree.
func (a *controllerActor) Phase() string {
	switch {
	case a.q == nil:
		return "starting"
	case a.cancel != nil:
		return "running"
	case len(a.q.Pending()) > 0:
		return "waiting-instance"
	}
	return "idle"
}

// Receive dispatches.
func (a *controllerActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		a.onStarted(ctx)
	case *submitOp:
		a.onSubmit(ctx, m)
	case *instancesChanged:
		a.step(ctx, a.instances())
	case *opRan:
		a.onRan(ctx, m)
	case *actor.Stopping, *actor.Restarting:
		if a.cancel != nil {
			a.cancel()
		}
	case *actor.Stopped, *actor.Terminated:
	default:
		a.log.Warn("controller actor: unexpected message", "type", fmt.Sprintf("%T", m))
	}
}

// onStarted builds the queue (the rebuilt one on a new leader) and learns
// the plugin's instances. After a crash the queue is lost: the volume
// actors submit their ops in flight again.
func (a *controllerActor) onStarted(ctx actor.Context) {
	a.q = rebuildControllerQueue(a.initial)
	a.initial = nil
	if a.restarted {
		a.log.Warn("controller actor restarted: asking the volume actors for their ops in flight")
		ctx.Send(ctx.Parent(), &controllerRestarted{PluginID: a.pluginID})
	}
	a.step(ctx, a.instances())
}

func (a *controllerActor) instances() InstancesChanged {
	view := a.spec.State()
	return InstancesChanged{Instances: controllerInstances(view.CSIPluginByID(a.pluginID)), Live: liveNodes(view.Nodes())}
}

func (a *controllerActor) onSubmit(ctx actor.Context, s *submitOp) {
	if s.Volume != nil || s.Secrets != nil {
		a.extra[opKey(s.Op)] = s
	}
	a.step(ctx, submit{Op: s.Op})
}

func (a *controllerActor) onRan(ctx actor.Context, r *opRan) {
	if r.owner != a {
		a.log.Debug("late controller result of a previous actor ignored", "op", opKey(r.op))
		return
	}
	a.cancel, a.last = nil, r
	unavailable := r.err != nil || r.resp.GetError() != nil || r.resp.StatusCode() == codes.Unavailable
	if unavailable {
		a.log.Warn("controller instance unavailable", "op", opKey(r.op), "node", r.nodeID, "error", describe(r))
	}
	a.step(ctx, opFinished{Op: r.op, Unavailable: unavailable})
}

// step runs the queue and carries out its effects: outcomes to the
// manager, then the next RPC.
func (a *controllerActor) step(ctx actor.Context, in queueInput) {
	e, err := a.q.Step(in)
	if err != nil {
		a.log.Error("controller queue", "input", fmt.Sprintf("%T", in), "error", err)
		return
	}
	for _, c := range e.Completed {
		a.complete(ctx, c)
	}
	if e.Waiting != nil && !a.waiting {
		a.log.Warn("controller ops wait for an instance", "queued", len(a.q.Pending()), "error", e.Waiting)
	}
	a.waiting = e.Waiting != nil
	if e.Dispatch != nil {
		a.run(ctx, e.Dispatch)
	}
}

// run starts one RPC in a worker, with the stored volume (for a create,
// the spec; for a delete, the extra secrets merged in).
func (a *controllerActor) run(ctx actor.Context, d *dispatch) {
	req := &messages.ControllerRequest{Op: d.Op, Volume: a.volumeFor(d.Op)}
	c, cancel := context.WithTimeout(a.Context(), a.spec.RPCTimeout)
	a.cancel = cancel
	rpc, node := a.spec.Controllers, d.NodeID
	a.log.Debug("controller op dispatched", "op", opKey(d.Op), "node", node)
	actors.Go(ctx, func(_ context.Context) any {
		defer cancel()
		resp, err := rpc.Run(c, node, req)
		return &opRan{owner: a, op: d.Op, nodeID: node, resp: resp, err: err}
	})
}

func (a *controllerActor) volumeFor(op *messages.ControllerOp) *messages.CSIVolume {
	x := a.extra[opKey(op)]
	if x != nil && x.Volume != nil {
		return proto.Clone(x.Volume).(*messages.CSIVolume)
	}
	vol := a.spec.State().CSIVolumeAnyNamespace(op.GetVolumeID())
	if vol == nil { // force-deregistered meanwhile: what the op knows
		vol = &messages.CSIVolume{ID: op.GetVolumeID(), ExternalID: op.GetExternalVolumeID(), PluginID: op.GetPluginID()}
	} else {
		vol = proto.Clone(vol).(*messages.CSIVolume)
	}
	if x != nil && len(x.Secrets) > 0 {
		if vol.Secrets == nil {
			vol.Secrets = map[string]string{}
		}
		for k, v := range x.Secrets {
			vol.Secrets[k] = v
		}
	}
	return vol
}

// complete sends an op's outcome to the manager.
func (a *controllerActor) complete(ctx actor.Context, c completion) {
	key := opKey(c.Op)
	delete(a.extra, key)
	r := a.last
	if r == nil || opKey(r.op) != key {
		r = &opRan{op: c.Op, err: fmt.Errorf("%w: no outcome recorded", errUnexpectedResult)}
	}
	out := outcomeOf(r, c.Unreachable)
	if out.ok {
		a.log.Info("controller op done", "op", key, "node", r.nodeID)
	} else {
		a.log.Warn("controller op failed", "op", key, "node", r.nodeID, "retryable", out.retryable, "error", out.message)
	}
	if c.Op.GetKind() == opCreateVolume {
		d := &createDone{VolumeID: c.Op.GetVolumeID()}
		if out.ok {
			d.Volume = r.resp.GetVolume()
		} else {
			d.Err = out.err(c.Op)
		}
		ctx.Send(ctx.Parent(), d)
		return
	}
	ctx.Send(ctx.Parent(), &opResult{VolumeID: c.Op.GetVolumeID(), In: out.input(c.Op, r.resp)})
}
