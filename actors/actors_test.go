package actors

import (
	"log/slog"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/stretchr/testify/require"
)

type phased struct{ phase string }

type setPhase struct{ to string }
type boom struct{}

func (p *phased) Phase() string { return p.phase }

func (p *phased) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *setPhase:
		p.phase = m.to
	case *boom:
		panic("boom")
	}
}

func info(tree []*Info, path string) *Info {
	for _, in := range tree {
		if in.Path == path {
			return in
		}
	}
	return nil
}

func TestTreeShowsLiveActorsWithTheirReports(t *testing.T) {
	sys := NewSystem(slog.New(slog.DiscardHandler))
	defer sys.Shutdown()
	parent, err := sys.Root.SpawnNamed(sys.Props("parent", func() actor.Actor {
		return &spawner{sys: sys}
	}, actor.WithSupervisor(DefaultSupervision.Strategy())), "p")
	require.NoError(t, err)
	child := actor.NewPID(sys.Address(), "p/kids/a")
	require.Eventually(t, func() bool { return info(sys.Tree(), "p/kids/a") != nil }, 5*time.Second, time.Millisecond)

	sys.Root.Send(child, &setPhase{to: "working"})
	sys.Root.Send(child, &boom{})
	require.Eventually(t, func() bool {
		in := info(sys.Tree(), "p/kids/a")
		return in != nil && in.Restarts == 1
	}, 5*time.Second, time.Millisecond)
	tree := sys.Tree()
	p, c := info(tree, "p"), info(tree, "p/kids/a")
	require.Equal(t, "parent", p.Kind)
	require.Equal(t, []string{"p/kids/a"}, p.Children)
	require.Equal(t, "p", c.Parent)
	require.Equal(t, "kid", c.Kind)
	require.Equal(t, "actor.Started", c.LastMessage, "a restarted actor starts again")
	require.Equal(t, "", c.Phase, "the restarted instance has a fresh phase")
	require.Zero(t, c.MailboxLen)

	require.NoError(t, sys.Root.StopFuture(parent).Wait())
	require.Nil(t, info(sys.Tree(), "p/kids/a"), "stopped actors leave the tree")
	require.Nil(t, info(sys.Tree(), "p"))
}

type spawner struct{ sys *System }

func (s *spawner) Receive(ctx actor.Context) {
	if _, ok := ctx.Message().(*actor.Started); ok {
		_, _ = ctx.SpawnNamed(s.sys.Props("kid", func() actor.Actor { return &phased{} }), "kids/a")
	}
}

func TestFakeClockFiresTimersInOrder(t *testing.T) {
	c := NewFakeClock(time.Unix(0, 0))
	var got []int
	c.AfterFunc(2*time.Second, func() { got = append(got, 2) })
	c.AfterFunc(time.Second, func() { got = append(got, 1) })
	stopped := c.AfterFunc(time.Second, func() { got = append(got, 99) })
	require.True(t, stopped.Stop())
	require.Equal(t, 2, c.Pending())
	c.Advance(500 * time.Millisecond)
	require.Empty(t, got)
	c.Advance(2 * time.Second)
	require.Equal(t, []int{1, 2}, got)
	require.Zero(t, c.Pending())
}
