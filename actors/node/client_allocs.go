package node

import (
	"context"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/messages"
)

// step feeds an event to the allocation table and carries out its
// effects.
func (c *client) step(ctx actor.Context, ev allocEvent) {
	eff, err := c.table.Step(ev)
	if err != nil {
		c.log.Error("client allocation table refused an event", "error", err)
		return
	}
	c.apply(ctx, eff)
}

// apply carries out a step's effects, in their order.
func (c *client) apply(ctx actor.Context, eff allocEffects) {
	if eff.Stale {
		c.log.Debug("ignoring an older allocation set", "have", c.table.index)
	}
	for _, a := range eff.Spawn {
		c.spawn(ctx, a)
	}
	for _, ws := range eff.WindowStops {
		now := c.spec.Clock.Now()
		c.log.Warn(LogStopOnClientAfter, "alloc", ws.ID, "window", ws.Window, "last_contact", c.lastContact, "cut_for", now.Sub(c.lastContact))
	}
	for _, up := range eff.Update {
		ctx.Send(c.child(ctx, up.GetID()), &messages.UpdateAlloc{Alloc: up})
	}
	for _, id := range eff.Forget {
		ctx.Stop(c.child(ctx, id))
		c.spec.DB.DeleteAlloc(id)
	}
	for _, failed := range eff.Crashed {
		c.log.Error("alloc actor died; reporting the allocation failed", "alloc", failed.GetID())
		c.watchPlugins(ctx, failed)
	}
	if eff.Send != nil {
		c.send(ctx, eff.Send)
	}
	c.armFlush(ctx, eff.Flush)
	if eff.ArmStopCheck {
		c.armStopCheck(ctx)
	}
}

// allocsPrefix names the alloc actors under the client actor.
const allocsPrefix = "allocs/"

// child is the PID of the allocation's actor.
func (c *client) child(ctx actor.Context, id string) *actor.PID {
	self := ctx.Self()
	return actor.NewPID(self.Address, self.Id+"/"+allocsPrefix+id)
}

func (c *client) spawn(ctx actor.Context, a *messages.Allocation) {
	node := c.node
	if node == nil { // restored before the first registration
		node = c.spec.Node
	}
	if _, err := ctx.SpawnNamed(c.spec.AllocProps(a, node), allocsPrefix+a.GetID()); err != nil {
		c.log.Error("spawn alloc actor", "alloc", a.GetID(), "error", err)
		c.step(ctx, evSpawnFailed{ID: a.GetID()})
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
// actors it runs (allocTable.listed).
func (c *client) onSetAllocs(ctx actor.Context, m *messages.SetClientAllocs) {
	c.step(ctx, evListed{Index: m.GetIndex(), Allocs: m.GetAllocs()})
}

// onAllocReleased records that an alloc actor let go of everything it
// held on the host (allocTable.released).
func (c *client) onAllocReleased(ctx actor.Context, m *actors.AllocReleased) {
	c.step(ctx, evReleased{ID: m.AllocID})
}

func (c *client) onAllocUpdated(ctx actor.Context, m *messages.AllocUpdated) {
	c.step(ctx, evReported{Alloc: m.GetAlloc()})
	c.watchPlugins(ctx, m.GetAlloc())
}

func (c *client) onFlushNow(ctx actor.Context) {
	c.timer = nil
	c.step(ctx, evFlushDue{})
}

// send sends a batch of reports in one call.
func (c *client) send(ctx actor.Context, batch []*messages.Allocation) {
	srv := c.spec.Server
	sendable := make([]*messages.Allocation, len(batch))
	for i, a := range batch {
		sendable[i] = proto.Clone(a).(*messages.Allocation)
	}
	actors.Go(ctx, func(life context.Context) any {
		cctx, cancel := context.WithTimeout(life, 30*time.Second)
		defer cancel()
		return &flushed{err: srv.UpdateAllocs(cctx, sendable)}
	})
}

// armFlush arms the batch timer the table asked for.
func (c *client) armFlush(ctx actor.Context, f flushTimer) {
	switch f {
	case flushBatch:
		c.timer = c.after(ctx, c.spec.BatchInterval, &flushNow{})
	case flushRetry:
		if c.flushBack == nil {
			c.flushBack = c.retrier()
		}
		d := nextDelay(c.flushBack)
		c.log.Warn("alloc update failed, retrying", "error", c.flushErr, "in", d)
		c.timer = c.after(ctx, d, &flushNow{})
	}
}

func (c *client) onFlushed(ctx actor.Context, m *flushed) {
	if c.flushErr = m.err; m.err != nil {
		c.step(ctx, evFlushed{Failed: true})
		return
	}
	c.flushBack = nil
	c.onContact(ctx)
	c.step(ctx, evFlushed{})
}

// onChildTerminated notices an alloc actor that died (its supervisor gave
// up after repeated crashes, or it was stopped): one still wanted is
// reported failed (allocTable.died), instead of being left as a dead PID.
func (c *client) onChildTerminated(ctx actor.Context, m *actor.Terminated) {
	if c.stopping {
		return
	}
	id, ok := strings.CutPrefix(m.GetWho().GetId(), ctx.Self().GetId()+"/"+allocsPrefix)
	if !ok {
		return // a plugin probe
	}
	c.step(ctx, evDied{ID: id, At: c.spec.Clock.Now()})
}
