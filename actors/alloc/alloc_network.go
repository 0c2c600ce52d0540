package alloc

import (
	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/messages"
)

// Messages of the alloc actor's network hook.
type (
	// networkReady: the network hook's prerun answered.
	networkReady struct {
		up  *networkUp
		err error
	}
	// networkDown: a teardown attempt answered; dropped: the record is
	// gone (given up on), whatever err says.
	networkDown struct {
		err     error
		dropped bool
	}
	retryNetworkTeardown struct{}
)

func (a *Actor) networkHook() *networkHook {
	return &networkHook{net: a.spec.Network, db: a.spec.DB, alloc: proto.Clone(a.alloc).(*messages.Allocation)}
}

// setupNetwork runs the network hook's prerun in a worker; the other
// hooks run once it answers.
func (a *Actor) setupNetwork(ctx actor.Context) {
	a.phase = phaseNetwork
	hook, c := a.networkHook(), a.ctx
	actors.Go(ctx, func() any {
		up, err := hook.prerun(c)
		if c.Err() != nil {
			return nil // stopping: a restarted actor restores from the record
		}
		return &networkReady{up: up, err: err}
	})
}

func (a *Actor) onNetworkReady(ctx actor.Context, m *networkReady) {
	if a.phase != phaseNetwork {
		return
	}
	if m.up != nil {
		a.net, a.netRecreated = m.up.rec, m.up.recreated
	}
	if m.err != nil {
		a.log.Error("network setup failed", "error", m.err)
		a.fail(ctx, "setup failed: network: "+m.err.Error())
		return
	}
	if st := networkStatus(a.net); st != nil {
		a.log.Info("network ready", "netns", a.net.NetnsPath, "address", a.net.IP, "recreated", a.netRecreated)
		a.alloc.NetworkStatus = st
		a.spec.DB.PutAlloc(a.alloc)
		a.report(ctx)
	}
	a.phase = phasePrerun
	a.runHooks(ctx, false)
}

// releaseNetwork tears down the allocation's network, the last step of
// its teardown, and then makes the actor terminal.
func (a *Actor) releaseNetwork(ctx actor.Context) {
	if a.net == nil {
		a.becomeTerminal(ctx)
		return
	}
	a.phase = phaseNetworkDown
	a.netTimer = nil
	hook, rec, c := a.networkHook(), a.net.Clone(), a.ctx
	actors.Go(ctx, func() any {
		err := hook.postrun(c, rec)
		if c.Err() != nil {
			return nil // stopping: a restarted actor tears it down from the record
		}
		return &networkDown{err: err}
	})
}

// onNetworkDown retries a failed teardown with backoff, a few times; then
// it gives up, drops the record and leaves the rest to the agent's
// network GC.
func (a *Actor) onNetworkDown(ctx actor.Context, m *networkDown) {
	if a.phase != phaseNetworkDown {
		return
	}
	if m.err == nil || m.dropped {
		if m.err == nil && !m.dropped {
			a.log.Info("network torn down")
		} else if m.err != nil {
			a.log.Error("dropping the network record failed", "error", m.err)
		}
		a.net = nil
		a.becomeTerminal(ctx)
		return
	}
	a.netTries++
	now := a.spec.Clock.Now()
	if a.netStart.IsZero() {
		a.netStart = now
	}
	if a.netTries < a.netAttempts {
		if d, ok := a.netRetry.Delay(a.netTries, now.Sub(a.netStart)); ok {
			a.log.Warn("network teardown failed, retrying", "error", m.err, "attempt", a.netTries, "in", d)
			self, root := ctx.Self(), ctx.ActorSystem().Root
			a.netTimer = a.spec.Clock.AfterFunc(d, func() { root.Send(self, &retryNetworkTeardown{}) })
			return
		}
	}
	a.log.Error("network teardown failed, giving up; the agent's network GC removes what is left",
		"error", m.err, "attempts", a.netTries)
	hook, c := a.networkHook(), a.ctx
	actors.Go(ctx, func() any {
		err := hook.drop(c)
		if c.Err() != nil {
			return nil
		}
		return &networkDown{err: err, dropped: true}
	})
}

func (a *Actor) onRetryNetworkTeardown(ctx actor.Context) {
	if a.phase != phaseNetworkDown || a.netTimer == nil {
		return
	}
	a.releaseNetwork(ctx)
}

// holding reports whether the allocation may still hold something to let
// go: a csi volume, or a network.
func (a *Actor) holding() bool {
	return a.activeVolumes() || a.net != nil
}
