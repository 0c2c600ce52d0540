package node

import (
	"context"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/messages"
)

func (c *Client) spawn(ctx actor.Context, a *messages.Allocation) {
	node := c.node
	if node == nil { // restored before the first registration
		node = c.spec.Node
	}
	pid, err := ctx.SpawnNamed(c.spec.AllocProps(a, node), "allocs/"+a.GetID())
	if err != nil {
		c.log.Error("spawn alloc actor", "alloc", a.GetID(), "error", err)
		return
	}
	c.known[a.GetID()] = pid
	c.allocs[a.GetID()] = a
	if d := stopOnClientAfter(a); d > 0 {
		c.stopAfter[a.GetID()] = d
		c.armStopCheck(ctx)
	}
}

// stopOnClientAfter is how long a client cut off from the servers keeps
// running an alloc of this group (disconnect.stop_on_client_after, or the
// older stop_after_client_disconnect); 0 keeps it running.
func stopOnClientAfter(a *messages.Allocation) time.Duration {
	for _, g := range a.GetJob().GetTaskGroups() {
		if g.GetName() == a.GetTaskGroup() {
			return max(time.Duration(g.GetDisconnect().GetStopOnClientAfter()), time.Duration(g.GetStopAfterClientDisconnect()))
		}
	}
	return 0
}

// onSetAllocs diffs the server's full set for this node against the alloc
// actors it runs. It is idempotent: a re-sent set changes nothing.
func (c *Client) onSetAllocs(ctx actor.Context, m *messages.SetClientAllocs) {
	if m.GetIndex() < c.setIndex {
		c.log.Debug("ignoring an older allocation set", "index", m.GetIndex(), "have", c.setIndex)
		return
	}
	c.setIndex = m.GetIndex()
	c.desired = map[string]bool{}
	for _, a := range m.GetAllocs() {
		c.desired[a.GetID()] = true
		if pid, ok := c.known[a.GetID()]; ok {
			ctx.Send(pid, &messages.UpdateAlloc{Alloc: a})
			continue
		}
		if a.GetDesiredStatus() != "run" || messages.ClientTerminal(a.GetClientStatus()) {
			continue
		}
		c.spawn(ctx, a)
	}
	for id, pid := range c.known {
		if c.desired[id] {
			continue
		}
		if messages.ClientTerminal(c.last[id]) {
			if c.released[id] {
				c.forget(ctx, id, pid)
			}
			continue
		}
		ctx.Send(pid, &messages.UpdateAlloc{Alloc: &messages.Allocation{ID: id, DesiredStatus: "stop",
			DesiredDescription: "allocation no longer assigned to this node"}})
	}
}

// onAllocReleased records that an alloc actor let go of everything it
// held on the host (its last volume unmounted, its network torn down); a
// stopped allocation the servers no longer list is forgotten only then,
// so no teardown is cut short and no state it still needs is dropped.
func (c *Client) onAllocReleased(ctx actor.Context, m *actors.AllocReleased) {
	c.released[m.AllocID] = true
	pid, ok := c.known[m.AllocID]
	if ok && c.setIndex > 0 && !c.desired[m.AllocID] && messages.ClientTerminal(c.last[m.AllocID]) {
		c.forget(ctx, m.AllocID, pid)
	}
}

// forget stops a finished alloc actor the server no longer lists and drops
// its local state (its alloc dir, with the logs, stays).
func (c *Client) forget(ctx actor.Context, id string, pid *actor.PID) {
	ctx.Stop(pid)
	delete(c.known, id)
	delete(c.stopAfter, id)
	delete(c.last, id)
	delete(c.released, id)
	c.spec.DB.DeleteAlloc(id)
}

func (c *Client) onAllocUpdated(ctx actor.Context, m *messages.AllocUpdated) {
	a := m.GetAlloc()
	c.last[a.GetID()] = a.GetClientStatus()
	c.pending[a.GetID()] = a
	c.reports[a.GetID()] = a
	c.watchPlugins(ctx, a)
	if c.timer == nil && !c.inFlight {
		c.timer = c.after(ctx, c.spec.BatchInterval, &flushNow{})
	}
}

// flush sends the gathered updates in one call; one call is in flight at a
// time, so updates reach the server in order.
func (c *Client) flush(ctx actor.Context) {
	c.timer = nil
	if c.inFlight || len(c.pending) == 0 {
		return
	}
	batch := make([]*messages.Allocation, 0, len(c.pending))
	for _, a := range c.pending {
		batch = append(batch, a)
	}
	c.pending = map[string]*messages.Allocation{}
	c.inFlight = true
	srv := c.spec.Server
	sendable := make([]*messages.Allocation, len(batch))
	for i, a := range batch {
		sendable[i] = proto.Clone(a).(*messages.Allocation)
	}
	actors.Go(ctx, func() any {
		cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return &flushed{batch: batch, err: srv.UpdateAllocs(cctx, sendable)}
	})
}

func (c *Client) onFlushed(ctx actor.Context, m *flushed) {
	c.inFlight = false
	if m.err != nil {
		for _, a := range m.batch {
			if _, newer := c.pending[a.GetID()]; !newer {
				c.pending[a.GetID()] = a
			}
		}
		if c.flushBack == nil {
			c.flushBack = c.spec.Retry()
		}
		d := c.flushBack.NextBackOff()
		c.log.Warn("alloc update failed, retrying", "error", m.err, "in", d)
		c.timer = c.after(ctx, d, &flushNow{})
		return
	}
	c.flushBack = nil
	c.onContact(ctx)
	if len(c.pending) > 0 && c.timer == nil {
		c.timer = c.after(ctx, c.spec.BatchInterval, &flushNow{})
	}
}

// onChildTerminated notices an alloc actor that died (its supervisor gave
// up after repeated crashes, or it was stopped): one still wanted is
// reported failed, so the servers reschedule it, instead of being left as
// a dead PID.
func (c *Client) onChildTerminated(ctx actor.Context, m *actor.Terminated) {
	if c.stopping {
		return
	}
	for id, pid := range c.known {
		if !pid.Equal(m.GetWho()) {
			continue
		}
		delete(c.known, id)
		delete(c.stopAfter, id)
		delete(c.released, id)
		if !messages.ClientTerminal(c.last[id]) && c.desired[id] {
			c.log.Error("alloc actor died; reporting the allocation failed", "alloc", id)
			failed := &messages.Allocation{ID: id, ClientStatus: "failed", ClientDescription: "the allocation's actor crashed repeatedly",
				ModifyTime: c.spec.Clock.Now().UnixNano()}
			c.onAllocUpdated(ctx, &messages.AllocUpdated{Alloc: failed})
		}
		return
	}
}

// resendReports queues every alloc's newest report again.
func (c *Client) resendReports(ctx actor.Context) {
	for id, a := range c.reports {
		if _, newer := c.pending[id]; !newer {
			c.pending[id] = a
		}
	}
	if len(c.pending) > 0 && c.timer == nil && !c.inFlight {
		c.timer = c.after(ctx, c.spec.BatchInterval, &flushNow{})
	}
}
