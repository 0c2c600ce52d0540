package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-dev/troupe/actors/alloc"
	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/httpapi"
)

var _ httpapi.ChecksBackend = (*Agent)(nil)

// checksTimeout bounds the wait for an alloc actor's check results.
const checksTimeout = 10 * time.Second

// AllocChecks asks the actor of an allocation this client runs for its
// checks' latest results (GET /v1/client/allocation/:id/checks). An
// allocation whose actor is gone has none.
func (a *Agent) AllocChecks(ctx context.Context, allocID string) (map[string]*api.AllocCheckStatus, error) {
	if a.clientPID == nil {
		return nil, ErrNotClient
	}
	pid := actor.NewPID(a.clientPID.GetAddress(), a.clientPID.GetId()+"/allocs/"+allocID)
	res, err := a.requestLocal(ctx, pid, &alloc.ChecksRequest{}, checksTimeout)
	if errors.Is(err, actor.ErrDeadLetter) {
		return map[string]*api.AllocCheckStatus{}, nil
	}
	if err != nil {
		return nil, err
	}
	resp, ok := res.(*alloc.ChecksResponse)
	if !ok {
		return nil, fmt.Errorf("agent: unexpected answer %T from allocation %q", res, allocID)
	}
	out := make(map[string]*api.AllocCheckStatus, len(resp.Checks))
	for id, c := range resp.Checks {
		out[id] = &api.AllocCheckStatus{ID: c.ID, Check: c.Check, Group: c.Group, Mode: c.Mode, Output: c.Output,
			Service: c.Service, Task: c.Task, Status: c.Status, StatusCode: c.StatusCode, Timestamp: c.Timestamp}
	}
	return out, nil
}
