package alloc

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// UsageActor (client/csi-usage) owns the host's Usage and serialises the
// node-side work on each staged volume across the allocations of this
// host, as CSI asks of a container orchestrator: a stopping allocation's
// release + NodeUnstageVolume never interleaves with a starting one's
// acquire + NodeStageVolume + NodePublishVolume.
//
// Its mailbox is the queue: a worker asks for a turn on a staging path
// (usageTurn, with the acquire or release to make), the actor grants the
// turns of one path one at a time, in the order asked, making the change
// when it grants and answering with the users left; the worker makes its
// plugin calls and ends its turn (usageDone), which grants the next.
// Different paths never wait on each other, and no lock is held by
// anyone: a turn whose worker stopped is ended by that worker's deferred
// done, even if it was still waiting.
type UsageActor struct {
	usage *Usage
	turns map[string][]*usageTurn // by staging path; the first holds the turn
	log   *slog.Logger
}

// Messages of the usage actor.
type (
	// usageTurn asks for the turn on Key (the sender, a future, is the
	// turn's name); Acquire or Release is made for AllocID when granted.
	usageTurn struct {
		Key, AllocID     string
		Acquire, Release bool
		from             *actor.PID
	}
	// usageGranted: the turn is the asker's; Users use the key now.
	usageGranted struct{ Users int }
	// usageDone ends (or gives up waiting for) the turn Turn on Key.
	usageDone struct {
		Key  string
		Turn *actor.PID
	}
	// usageUsers asks how many allocations use Key (answered with an int).
	usageUsers struct{ Key string }
	// usageQueued asks how many turns on Key are held or waited for.
	usageQueued struct{ Key string }
)

// NewUsageActor returns a producer for the usage actor, owning u (the
// agent starts it with NewUsageFromState). A restarted actor keeps u.
func NewUsageActor(u *Usage, logger *slog.Logger) actor.Producer {
	return func() actor.Actor {
		return &UsageActor{usage: u, turns: map[string][]*usageTurn{}, log: logger}
	}
}

// Phase names the actor's state for the actor tree.
func (a *UsageActor) Phase() string { return fmt.Sprintf("%d staged volumes busy", len(a.turns)) }

// Receive dispatches.
func (a *UsageActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *usageTurn:
		a.onTurn(ctx, m)
	case *usageDone:
		a.onDone(ctx, m)
	case *usageUsers:
		ctx.Respond(a.usage.Users(m.Key))
	case *usageQueued:
		ctx.Respond(len(a.turns[m.Key]))
	case *actor.Started, *actor.Stopping, *actor.Stopped, *actor.Restarting, *actor.Terminated:
	default:
		a.log.Warn("usage actor: unexpected message", "type", fmt.Sprintf("%T", m))
	}
}

func (a *UsageActor) onTurn(ctx actor.Context, m *usageTurn) {
	t := *m
	t.from = ctx.Sender()
	a.turns[m.Key] = append(a.turns[m.Key], &t)
	if len(a.turns[m.Key]) == 1 {
		a.grant(ctx, &t)
	}
}

// grant makes t's change and gives it the turn.
func (a *UsageActor) grant(ctx actor.Context, t *usageTurn) {
	switch {
	case t.Acquire:
		a.usage.Acquire(t.Key, t.AllocID)
	case t.Release:
		a.usage.Release(t.Key, t.AllocID)
	}
	ctx.Send(t.from, &usageGranted{Users: a.usage.Users(t.Key)})
}

func (a *UsageActor) onDone(ctx actor.Context, m *usageDone) {
	q := a.turns[m.Key]
	for i, t := range q {
		if !t.from.Equal(m.Turn) {
			continue
		}
		q = append(q[:i:i], q[i+1:]...)
		if len(q) == 0 {
			delete(a.turns, m.Key)
			return
		}
		a.turns[m.Key] = q
		if i == 0 {
			a.grant(ctx, q[0])
		}
		return
	}
}

// usageClient is how a worker takes turns at the usage actor.
type usageClient struct {
	root    *actor.RootContext
	pid     *actor.PID
	timeout time.Duration // bounds the wait for a turn
}

// turnStopped ends the wait of a worker whose context ended.
type turnStopped struct{ err error }

// turn waits for the turn on key, making acquire or release for allocID
// when it is granted, and returns the users of key then and the done that
// ends the turn (call it once, also on error). It gives up when ctx ends.
func (u *usageClient) turn(ctx context.Context, key, allocID string, acquire, release bool) (users int, done func(), err error) {
	f := u.root.RequestFuture(u.pid, &usageTurn{Key: key, AllocID: allocID, Acquire: acquire, Release: release}, u.timeout)
	done = func() { u.root.Send(u.pid, &usageDone{Key: key, Turn: f.PID()}) }
	stop := context.AfterFunc(ctx, func() { u.root.Send(f.PID(), &turnStopped{err: ctx.Err()}) })
	res, err := f.Result()
	stop()
	switch r := res.(type) {
	case *usageGranted:
		return r.Users, done, nil
	case *turnStopped:
		return 0, done, fmt.Errorf("waiting for the staged volume %s: %w", key, r.err)
	}
	if err == nil {
		err = fmt.Errorf("unexpected answer %T", res)
	}
	return 0, done, fmt.Errorf("waiting for the staged volume %s: %w", key, err)
}
