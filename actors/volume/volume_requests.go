package volume

import (
	"slices"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

// doneFunc is called once a step (or a sequence of steps) is over: after
// its proposals committed and its effects were carried out, or with the
// error that refused the input or failed the commit.
type doneFunc func(ctx actor.Context, index uint64, err error)

// onClaim steps a claim; the answer comes when the claim is usable (after
// ClaimVolume committed, and after ControllerPublish when the volume needs
// a controller), or at once when the claim is refused.
func (a *Actor) onClaim(ctx actor.Context, r *messages.VolumeClaimRequest, sender *actor.PID) {
	alloc := r.GetClaim().GetAllocationID()
	if alloc == "" {
		a.respond(ctx, sender, &messages.VolumeClaimResponse{Error: messages.Errorf(messages.CodeInvalid,
			"volume %q: claim without an allocation ID", a.id)})
		return
	}
	a.wait(alloc, sender)
	a.run(ctx, claimRequested{Claim: r.GetClaim()}, func(ctx actor.Context, _ uint64, err error) {
		if err != nil && a.unwait(alloc, sender) {
			a.respond(ctx, sender, &messages.VolumeClaimResponse{Error: errorOf(err)})
		}
	})
}

// onNodeDetached steps the client's report that it unpublished the volume
// for the allocation, and answers once the proposals committed.
func (a *Actor) onNodeDetached(ctx actor.Context, r *messages.VolumeNodeDetachedRequest, sender *actor.PID) {
	c := state.ClaimsOf(a.s.Volume()).Get(r.GetAllocationID())
	if c != nil && r.GetNodeID() != "" && c.GetNodeID() != r.GetNodeID() {
		a.respond(ctx, sender, &messages.VolumeOpResponse{Error: messages.Errorf(messages.CodeInvalid,
			"volume %q: alloc %q claims it on node %q, not %q", a.id, r.GetAllocationID(),
			c.GetNodeID(), r.GetNodeID())})
		return
	}
	a.run(ctx, nodeDetached{AllocID: r.GetAllocationID()}, a.answerOp(sender, true))
}

// onOp handles an operator's delete, deregister or detach.
func (a *Actor) onOp(ctx actor.Context, r *messages.VolumeOpRequest, sender *actor.PID) {
	switch r.GetOp() {
	case opRequestDelete:
		a.secrets = r.GetSecrets()
		a.wait("", sender)
		a.run(ctx, deleteRequested{}, func(ctx actor.Context, _ uint64, err error) {
			if err != nil && a.unwait("", sender) {
				a.respond(ctx, sender, &messages.VolumeOpResponse{Error: errorOf(err)})
			}
		})
	case opRequestDeregister:
		a.run(ctx, deregisterRequested{Force: r.GetForce()}, a.answerOp(sender, false))
	case opRequestDetach:
		if r.GetNodeID() == "" {
			a.respond(ctx, sender, &messages.VolumeOpResponse{Error: messages.Errorf(messages.CodeInvalid,
				"volume %q: detach needs a node ID", a.id)})
			return
		}
		ins := detachInputs(a.s.Volume(), r.GetNodeID(), a.spec.State())
		for _, in := range ins {
			if rd, ok := in.(RetryDue); ok { // the backoff starts over
				delete(a.failedAt, rd.AllocID)
				if t := a.timers[rd.AllocID]; t != nil {
					t.Stop()
					delete(a.timers, rd.AllocID)
				}
			}
		}
		a.runAll(ctx, ins, a.answerOp(sender, true))
	default:
		a.respond(ctx, sender, &messages.VolumeOpResponse{Error: messages.Errorf(messages.CodeInvalid,
			"volume %q: unknown operation %q", a.id, r.GetOp())})
	}
}

// runAll steps the inputs one after the other (each after the previous
// one's proposals committed) and calls done with the last index.
func (a *Actor) runAll(ctx actor.Context, ins []input, done doneFunc) {
	if len(ins) == 0 {
		done(ctx, 0, nil)
		return
	}
	a.run(ctx, ins[0], func(ctx actor.Context, index uint64, err error) {
		if err != nil || len(ins) == 1 {
			done(ctx, index, err)
			return
		}
		a.runAll(ctx, ins[1:], func(ctx actor.Context, next uint64, err error) {
			done(ctx, max(index, next), err)
		})
	})
}

// answerOp answers an operator's or a client's op with the index written
// (and the volume, when withVolume and it succeeded).
func (a *Actor) answerOp(sender *actor.PID, withVolume bool) doneFunc {
	return func(ctx actor.Context, index uint64, err error) {
		resp := &messages.VolumeOpResponse{Index: index, Error: errorOf(err)}
		if err == nil && withVolume {
			resp.Volume = a.s.Volume()
		}
		a.respond(ctx, sender, resp)
	}
}

// wait records a requester owed the reply for alloc ("" : a delete).
func (a *Actor) wait(alloc string, sender *actor.PID) {
	if sender != nil {
		a.waiters[alloc] = append(a.waiters[alloc], sender)
	}
}

// unwait drops a requester; false when it was answered already.
func (a *Actor) unwait(alloc string, sender *actor.PID) bool {
	pids := a.waiters[alloc]
	i := slices.Index(pids, sender)
	if i < 0 {
		return sender == nil
	}
	if pids = slices.Delete(pids, i, i+1); len(pids) == 0 {
		delete(a.waiters, alloc)
	} else {
		a.waiters[alloc] = pids
	}
	return true
}

// answerAll answers every requester waiting on alloc: with the usable
// claim and the volume, or the error.
func (a *Actor) answerAll(ctx actor.Context, alloc string, claim *messages.CSIVolumeClaim, err error, index uint64) {
	pids := a.waiters[alloc]
	delete(a.waiters, alloc)
	for _, pid := range pids {
		if alloc == "" {
			ctx.Send(pid, &messages.VolumeOpResponse{Index: index, Error: errorOf(err)})
			continue
		}
		resp := &messages.VolumeClaimResponse{Claim: claim, Error: errorOf(err)}
		if err == nil {
			resp.Volume = a.s.Volume()
		}
		ctx.Send(pid, resp)
	}
}

func (a *Actor) respond(ctx actor.Context, to *actor.PID, msg any) {
	if to != nil {
		ctx.Send(to, msg)
	}
}

// requestFor is a request of the kind that waits on alloc, for failure.
func (a *Actor) requestFor(alloc string) any {
	if alloc == "" {
		return &messages.VolumeOpRequest{}
	}
	return &messages.VolumeClaimRequest{}
}

// isRequest reports whether msg is a request someone waits an answer to.
func isRequest(msg any) bool {
	switch msg.(type) {
	case *messages.VolumeClaimRequest, *messages.VolumeNodeDetachedRequest, *messages.VolumeOpRequest:
		return true
	}
	return false
}
