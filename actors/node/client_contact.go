package node

import (
	"slices"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-dev/troupe/messages"
)

// A client cut off from the servers stops, on its own authority, each
// allocation whose group sets stop_on_client_after, that long after its
// last successful contact with a server (a registration, a heartbeat or an
// allocation update answered), not after its first failed call: a timer
// runs to lastContact + the nearest window, re-armed at every contact.
// The stop itself only adds the task's kill_timeout.

// LogStopOnClientAfter is logged when the client stops an allocation for
// its stop_on_client_after window (the end-to-end tests look for it).
const LogStopOnClientAfter = "no server reached for the group's stop_on_client_after window: stopping the allocation"

// stopCheck is the timer for the nearest stop_on_client_after window.
type stopCheck struct{}

// expiredWindows says which allocations' windows have passed at now, for a
// client last in contact at last, and when the nearest window still
// running ends (zero: none). windows maps allocation IDs to their window.
func expiredWindows(now, last time.Time, windows map[string]time.Duration) (due []string, next time.Time) {
	cut := now.Sub(last)
	for id, d := range windows {
		if cut >= d {
			due = append(due, id)
			continue
		}
		if end := last.Add(d); next.IsZero() || end.Before(next) {
			next = end
		}
	}
	slices.Sort(due)
	return due, next
}

// onContact records a successful call to the servers and re-arms the stop
// timer from it.
func (c *client) onContact(ctx actor.Context) {
	c.lastContact = c.spec.Clock.Now()
	c.armStopCheck(ctx)
}

// armStopCheck arms the timer at the end of the nearest window still
// running, measured from the last contact. Before the first contact (a
// restored client that has not registered yet) no window runs.
func (c *client) armStopCheck(ctx actor.Context) {
	if c.stopTimer != nil {
		c.stopTimer.Stop()
		c.stopTimer = nil
	}
	if c.lastContact.IsZero() {
		return
	}
	now := c.spec.Clock.Now()
	if _, next := expiredWindows(now, c.lastContact, c.table.windows()); !next.IsZero() {
		c.stopTimer = c.after(ctx, next.Sub(now), &stopCheck{})
	}
}

func (c *client) onStopCheck(ctx actor.Context) {
	c.stopTimer = nil
	c.stopDisconnected(ctx)
	c.armStopCheck(ctx)
}

// stopDisconnected stops every alloc whose stop_on_client_after window has
// passed since the servers last answered: the servers treat them as gone
// after the same window.
func (c *client) stopDisconnected(ctx actor.Context) {
	c.step(ctx, evWindowsDue{Now: c.spec.Clock.Now(), LastContact: c.lastContact})
}

// onProbeNode answers the leader's direct probe (server_probe.go) with
// this node's ID.
func (c *client) onProbeNode(ctx actor.Context) {
	ctx.Respond(&messages.ProbeNodeResponse{NodeID: c.spec.Node.GetID()})
}
