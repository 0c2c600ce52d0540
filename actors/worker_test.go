package actors

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/stretchr/testify/require"
)

// working starts a worker on every *startWork and tells the test its
// context; the worker blocks until that context ends.
type working struct {
	Lifetime
	started chan context.Context
	ended   chan error
}

type startWork struct{}

func (w *working) Receive(ctx actor.Context) {
	switch ctx.Message().(type) {
	case *startWork:
		Go(ctx, func(c context.Context) any {
			w.started <- c
			<-c.Done()
			w.ended <- c.Err()
			return nil
		})
	case *boom:
		panic("boom")
	}
}

func TestWorkerContextEndsWithItsActor(t *testing.T) {
	started, ended := make(chan context.Context, 4), make(chan error, 4)
	producer := func() actor.Actor { return &working{started: started, ended: ended} }
	sys := NewSystem(slog.New(slog.DiscardHandler))
	defer sys.Shutdown()
	for name, props := range map[string]*actor.Props{
		"registry":      sys.Props("working", producer),
		"with lifetime": actor.PropsFromProducer(producer, WithLifetime()),
	} {
		t.Run(name, func(t *testing.T) {
			pid := sys.Root.Spawn(props)
			sys.Root.Send(pid, &startWork{})
			c := <-started
			require.NoError(t, c.Err(), "the actor runs: so does its worker")
			require.NoError(t, sys.Root.StopFuture(pid).Wait())
			select {
			case err := <-ended:
				require.ErrorIs(t, err, context.Canceled)
			case <-time.After(5 * time.Second):
				t.Fatal("the worker outlived its actor")
			}
		})
	}
}

func TestWorkerContextEndsWhenItsActorRestarts(t *testing.T) {
	started, ended := make(chan context.Context, 4), make(chan error, 4)
	sys := NewSystem(slog.New(slog.DiscardHandler))
	defer sys.Shutdown()
	pid := sys.Root.Spawn(sys.Props("working", func() actor.Actor { return &working{started: started, ended: ended} }))
	sys.Root.Send(pid, &startWork{})
	first := <-started
	sys.Root.Send(pid, &boom{}) // the default supervisor restarts it
	select {
	case err := <-ended:
		require.ErrorIs(t, err, context.Canceled)
	case <-time.After(5 * time.Second):
		t.Fatal("the worker outlived its actor's incarnation")
	}
	sys.Root.Send(pid, &startWork{})
	second := <-started
	require.NoError(t, second.Err(), "the new incarnation has a new lifetime")
	require.False(t, first == second, "not the first lifetime")
	require.NoError(t, sys.Root.StopFuture(pid).Wait())
	<-ended
}

// An actor without a Lifetime cannot start a worker with a context.
func TestWorkerNeedsALifetime(t *testing.T) {
	sys := NewSystem(slog.New(slog.DiscardHandler))
	defer sys.Shutdown()
	got := make(chan any, 1)
	pid := sys.Root.Spawn(actor.PropsFromFunc(func(ctx actor.Context) {
		if _, ok := ctx.Message().(*startWork); ok {
			defer func() { got <- recover() }()
			Go(ctx, func(context.Context) any { return nil })
		}
	}))
	sys.Root.Send(pid, &startWork{})
	require.Contains(t, <-got, "embeds no actors.Lifetime")
}
