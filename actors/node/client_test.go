package node

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/clientstate"
)

// fakeServer is a ServerConn that records calls.
type fakeServer struct {
	mu           sync.Mutex
	registered   int
	nodes        []*messages.Node // every registration, in order
	heartbeatErr error
	updates      [][]*messages.Allocation
}

func (f *fakeServer) RegisterNode(_ context.Context, n *messages.Node) (time.Duration, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.registered++
	f.nodes = append(f.nodes, proto.Clone(n).(*messages.Node))
	return 10 * time.Second, nil
}

func (f *fakeServer) Heartbeat(context.Context, string, uint64) (HeartbeatReply, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return HeartbeatReply{TTL: 10 * time.Second}, f.heartbeatErr
}

func (f *fakeServer) UpdateAllocs(_ context.Context, allocs []*messages.Allocation) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.updates = append(f.updates, allocs)
	return nil
}

func (f *fakeServer) UpsertPlugins(context.Context, *messages.UpsertPluginInstances) error {
	return nil
}

func (f *fakeServer) calls() (int, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.registered, len(f.updates)
}

// recorder stands in for an alloc actor: it records what it is sent.
type recorder struct {
	mu      sync.Mutex
	spawned map[string]int
	got     map[string][]*messages.Allocation
	node    *messages.Node // the node the last alloc actor got
}

func (r *recorder) props(a *messages.Allocation, node *messages.Node) *actor.Props {
	r.mu.Lock()
	r.spawned[a.GetID()]++
	r.node = node
	r.mu.Unlock()
	id := a.GetID()
	return actor.PropsFromFunc(func(ctx actor.Context) {
		if m, ok := ctx.Message().(*messages.UpdateAlloc); ok {
			r.mu.Lock()
			r.got[id] = append(r.got[id], m.GetAlloc())
			r.mu.Unlock()
		}
	})
}

func (r *recorder) stops(id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, a := range r.got[id] {
		if a.GetDesiredStatus() == "stop" {
			n++
		}
	}
	return n
}

func newTestClient(t *testing.T, srv *fakeServer, clock *actors.FakeClock, rec *recorder) (*actors.System, *actor.PID) {
	t.Helper()
	return newTestClientWith(t, srv, clock, rec, nil)
}

// newTestClientWith is newTestClient with edit applied to the spec first.
func newTestClientWith(t *testing.T, srv *fakeServer, clock *actors.FakeClock, rec *recorder,
	edit func(*ClientSpec)) (*actors.System, *actor.PID) {
	t.Helper()
	sys, pid := startTestClient(t, srv, clock, rec, edit)
	require.Eventually(t, func() bool { r, _ := srv.calls(); return r == 1 }, 5*time.Second, time.Millisecond)
	return sys, pid
}

// startTestClient starts the client actor without waiting for it to
// register.
func startTestClient(t *testing.T, srv *fakeServer, clock *actors.FakeClock, rec *recorder,
	edit func(*ClientSpec)) (*actors.System, *actor.PID) {
	t.Helper()
	sys := actors.NewSystem(slog.New(slog.DiscardHandler))
	db, err := clientstate.Open(filepath.Join(t.TempDir(), "state.db"), nil)
	require.NoError(t, err)
	t.Cleanup(func() { sys.Shutdown(); _ = db.Close() })
	spec := &ClientSpec{Node: &messages.Node{ID: "n1", Name: "n1"}, Server: srv, DB: db, Clock: clock,
		AllocProps: rec.props, BatchInterval: time.Second, Logger: slog.New(slog.DiscardHandler),
		Retry: actors.Retry{Initial: time.Second}} // 1 s, constant
	if edit != nil {
		edit(spec)
	}
	pid, err := sys.Root.SpawnNamed(sys.Props("client", NewClient(spec)), "client")
	require.NoError(t, err)
	return sys, pid
}

func allocWith(id string, stopAfter time.Duration) *messages.Allocation {
	return &messages.Allocation{ID: id, TaskGroup: "g", DesiredStatus: "run", ClientStatus: "pending",
		Job: &messages.Job{ID: "j", TaskGroups: []*messages.TaskGroup{{Name: "g",
			Disconnect: &messages.DisconnectStrategy{StopOnClientAfter: int64(stopAfter)}}}}}
}

func TestClientSetAllocsIsIdempotentAndBatchesUpdates(t *testing.T) {
	srv, clock := &fakeServer{}, actors.NewFakeClock(time.Unix(0, 0))
	rec := &recorder{spawned: map[string]int{}, got: map[string][]*messages.Allocation{}}
	sys, pid := newTestClient(t, srv, clock, rec)
	// Registered and answered: the heartbeat timer is armed.
	require.Eventually(t, func() bool { return clock.Pending() == 1 }, 5*time.Second, time.Millisecond)
	set := &messages.SetClientAllocs{NodeID: "n1", Allocs: []*messages.Allocation{allocWith("a1", 0)}}
	sys.Root.Send(pid, set)
	sys.Root.Send(pid, set)
	require.Eventually(t, func() bool { rec.mu.Lock(); defer rec.mu.Unlock(); return len(rec.got["a1"]) == 1 }, 5*time.Second, time.Millisecond)
	require.Equal(t, 1, rec.spawned["a1"], "a re-sent set must not spawn twice")
	rec.mu.Lock()
	node := rec.node
	rec.mu.Unlock()
	require.Equal(t, "n1", node.GetID())
	require.NotEmpty(t, node.GetAttributes()["kernel.name"], "the alloc actor gets the node as registered, fingerprint included")

	for _, st := range []string{"pending", "running"} {
		sys.Root.Send(pid, &messages.AllocUpdated{Alloc: &messages.Allocation{ID: "a1", ClientStatus: st}})
	}
	// The heartbeat timer and the batch timer.
	require.Eventually(t, func() bool { return clock.Pending() == 2 }, 5*time.Second, time.Millisecond)
	clock.Advance(time.Second)
	require.Eventually(t, func() bool { _, u := srv.calls(); return u == 1 }, 5*time.Second, time.Millisecond)
	srv.mu.Lock()
	require.Len(t, srv.updates[0], 1, "updates to one alloc are batched into the newest")
	require.Equal(t, "running", srv.updates[0][0].ClientStatus)
	srv.mu.Unlock()
}

func TestClientStopsAllocsAfterStopOnClientAfter(t *testing.T) {
	srv, clock := &fakeServer{heartbeatErr: errors.New("no route to server")}, actors.NewFakeClock(time.Unix(0, 0))
	rec := &recorder{spawned: map[string]int{}, got: map[string][]*messages.Allocation{}}
	sys, pid := newTestClient(t, srv, clock, rec)
	sys.Root.Send(pid, &messages.SetClientAllocs{NodeID: "n1", Allocs: []*messages.Allocation{
		allocWith("short", 30*time.Second), allocWith("keep", 0)}})
	require.Eventually(t, func() bool { rec.mu.Lock(); defer rec.mu.Unlock(); return rec.spawned["keep"] == 1 }, 5*time.Second, time.Millisecond)

	// Heartbeats fail from now on; before the window nothing stops.
	clock.Advance(5 * time.Second)
	require.Eventually(t, func() bool { return clock.Pending() > 0 }, 5*time.Second, time.Millisecond)
	clock.Advance(10 * time.Second)
	require.Zero(t, rec.stops("short"))
	for i := 0; i < 25 && rec.stops("short") == 0; i++ {
		require.Eventually(t, func() bool { return clock.Pending() > 0 }, 5*time.Second, time.Millisecond)
		clock.Advance(time.Second)
	}
	require.Eventually(t, func() bool { return rec.stops("short") == 1 }, 5*time.Second, time.Millisecond)
	require.GreaterOrEqual(t, clock.Now().Sub(time.Unix(0, 0)), 30*time.Second)
	require.Zero(t, rec.stops("keep"), "a group without the window keeps running")
}
