package node

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/messages"
)

func TestExpiredWindows(t *testing.T) {
	sec := time.Second
	windows := map[string]time.Duration{"a": 10 * sec, "b": 30 * sec, "c": 10 * sec}
	for _, tt := range []struct {
		name string
		now  time.Duration // after the last contact at t0
		due  []string
		next time.Time
	}{
		{"in contact", 0, nil, at(10 * sec)},
		{"one ns before the nearest window", 10*sec - 1, nil, at(10 * sec)},
		{"at the window: due, the next one armed", 10 * sec, []string{"a", "c"}, at(30 * sec)},
		{"past every window", time.Minute, []string{"a", "b", "c"}, time.Time{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			due, next := expiredWindows(at(tt.now), t0, windows)
			require.Equal(t, tt.due, due)
			require.Equal(t, tt.next, next)
		})
	}
	due, next := expiredWindows(t0, t0, nil)
	require.Empty(t, due)
	require.True(t, next.IsZero())
}

// cutServer answers heartbeats until cut, then leaves them hanging (a
// partition: no error comes back before the call's own timeout).
type cutServer struct {
	fakeServer
	cut     atomic.Bool
	beats   atomic.Int32
	release chan struct{}
}

func (s *cutServer) Heartbeat(ctx context.Context, id string, idx uint64) (HeartbeatReply, error) {
	if s.cut.Load() {
		select {
		case <-ctx.Done():
		case <-s.release:
		}
		return HeartbeatReply{}, errors.New("cut off")
	}
	s.beats.Add(1)
	return s.fakeServer.Heartbeat(ctx, id, idx)
}

// TestClientStopsAtLastContactPlusWindow: the client stops an alloc
// stop_on_client_after after the servers last answered, on a timer of its
// own: not at the first heartbeat that fails (this one hangs), and each
// answered heartbeat moves the deadline.
func TestClientStopsAtLastContactPlusWindow(t *testing.T) {
	srv, clock := &cutServer{release: make(chan struct{})}, actors.NewFakeClock(time.Unix(0, 0))
	defer close(srv.release)
	rec := &recorder{spawned: map[string]int{}, got: map[string][]*messages.Allocation{}}
	sys, pid := newTestClientWith(t, &srv.fakeServer, clock, rec, func(s *ClientSpec) { s.Server = srv })
	// Registered at 0 (the first contact); the heartbeat is due at 5 s.
	require.Eventually(t, func() bool { return clock.Pending() == 1 }, 5*time.Second, time.Millisecond)
	sys.Root.Send(pid, &messages.SetClientAllocs{NodeID: "n1", Allocs: []*messages.Allocation{
		allocWith("short", 30*time.Second), allocWith("keep", 0)}})
	require.Eventually(t, func() bool { return clock.Pending() == 2 }, 5*time.Second, time.Millisecond) // + the window at 30 s

	clock.Advance(5 * time.Second) // an answered heartbeat: the window now ends at 35 s
	require.Eventually(t, func() bool { return srv.beats.Load() == 1 && clock.Pending() == 2 }, 5*time.Second, time.Millisecond)
	srv.cut.Store(true)
	clock.Advance(5 * time.Second) // this heartbeat hangs
	require.Eventually(t, func() bool { return clock.Pending() == 1 }, 5*time.Second, time.Millisecond)

	clock.Advance(25*time.Second - time.Millisecond) // 34.999 s: 29.999 s since the last contact
	require.Equal(t, 1, clock.Pending(), "the window has not ended")
	require.Zero(t, rec.stops("short"))
	clock.Advance(time.Millisecond) // 35 s: 30 s since the last contact
	require.Eventually(t, func() bool { return rec.stops("short") == 1 }, 5*time.Second, time.Millisecond)
	require.Zero(t, rec.stops("keep"), "a group without the window keeps running")
	require.Zero(t, clock.Pending(), "no window left to watch")
}
