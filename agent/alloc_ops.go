package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-dev/troupe/messages"
)

// allocOpTimeout bounds the wait for an alloc actor's answer to an
// operator's request without a deadline of its own (a restart waits for
// the tasks' kill_timeout and their start).
const allocOpTimeout = 3 * time.Minute

// AllocOp hands an operator's request (*messages.SignalAlloc,
// *messages.RestartAlloc) to the actor of an allocation this client runs
// (client/allocs/<id>) and waits for its answer. A client without that
// actor answers unavailable.
func (a *Agent) AllocOp(ctx context.Context, allocID string, req any) (*messages.AllocOpResponse, error) {
	if a.clientPID == nil {
		return nil, ErrNotClient
	}
	switch req.(type) {
	case *messages.SignalAlloc, *messages.RestartAlloc:
	default:
		return nil, fmt.Errorf("agent: not an allocation request: %T", req)
	}
	pid := actor.NewPID(a.clientPID.GetAddress(), a.clientPID.GetId()+"/allocs/"+allocID)
	res, err := a.requestLocal(ctx, pid, req, allocOpTimeout)
	if errors.Is(err, actor.ErrDeadLetter) {
		return &messages.AllocOpResponse{Error: messages.Errorf(messages.CodeUnavailable,
			"%v %q: it does not run on this client (now)", ErrUnknownAlloc, allocID)}, nil
	}
	if err != nil {
		return nil, err
	}
	resp, ok := res.(*messages.AllocOpResponse)
	if !ok {
		return nil, fmt.Errorf("agent: unexpected answer %T from allocation %q", res, allocID)
	}
	return resp, nil
}
