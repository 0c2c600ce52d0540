package clientsim

import (
	"fmt"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-dev/troupe/messages"
)

// sink is the Sim's "client" actor: every simulated node's RPC address is
// the Sim's, so the leader pushes all their allocation sets here.
type sink struct {
	sim      *Sim
	reported map[string]bool // allocation IDs reported running
}

// Receive dispatches.
func (k *sink) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *messages.SetClientAllocs:
		k.onSet(m)
	case *actor.Started, *actor.Stopping, *actor.Stopped, *actor.Restarting:
	default:
		k.sim.cfg.Logger.Debug("simulated clients: unexpected message", "type", fmt.Sprintf("%T", m))
	}
}

// onSet keeps the node's newest set index (its next heartbeat carries it)
// and reports the allocations it has not reported yet as running, in one
// request per node as a client's batch would.
func (k *sink) onSet(m *messages.SetClientAllocs) {
	n := k.sim.byID[m.GetNodeID()]
	if n == nil || n.isStopped() || m.GetIndex() < n.allocsIndex.Load() {
		return
	}
	k.sim.pushes.Add(1)
	n.allocsIndex.Store(m.GetIndex())
	n.allocs.Store(int32(len(m.GetAllocs())))
	var up []*messages.Allocation
	for _, a := range m.GetAllocs() {
		if a.GetDesiredStatus() != "run" || k.reported[a.GetID()] || messages.ClientTerminalStatus(a.GetClientStatus()) {
			continue
		}
		k.reported[a.GetID()] = true
		up = append(up, &messages.Allocation{ID: a.GetID(), NodeID: n.msg.GetID(), ClientStatus: "running",
			ClientDescription: "simulated"})
	}
	if len(up) > 0 {
		k.sim.report(n, up)
	}
}

// report sends the updates from a worker, a bounded number at a time.
func (s *Sim) report(n *simNode, up []*messages.Allocation) {
	s.calls.Add(1)
	go func() {
		defer s.calls.Done()
		select {
		case s.reportSlots <- struct{}{}:
		case <-s.ctx.Done():
			return
		}
		defer func() { <-s.reportSlots }()
		_, err := request[*messages.UpdateAllocsResponse](s.ctx, s, &messages.UpdateAllocsRequest{NodeID: n.msg.GetID(), Allocs: up, NodeSecretID: n.msg.GetSecretID()})
		if err != nil {
			s.cfg.Logger.Warn("simulated node: reporting allocations failed", "node", n.msg.GetName(), "error", err)
			return
		}
		s.reported.Add(int64(len(up)))
	}()
}
