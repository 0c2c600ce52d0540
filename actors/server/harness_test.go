package server

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/actors/node"
	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

// fakeRaft is a one-server raft: every Apply is one log entry, applied to
// a real FSM at once and recorded.
type fakeRaft struct {
	leader  atomic.Bool
	mu      sync.Mutex
	fsm     *state.FSM
	index   uint64
	entries []*messages.Command
}

func (r *fakeRaft) IsLeader() bool { return r.leader.Load() }

func (r *fakeRaft) Apply(_ context.Context, cmd *messages.Command) (any, uint64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	data, err := proto.Marshal(cmd)
	if err != nil {
		return nil, 0, err
	}
	r.index++
	r.entries = append(r.entries, proto.Clone(cmd).(*messages.Command))
	res := r.fsm.Apply(&raft.Log{Index: r.index, Type: raft.LogCommand, Data: data})
	if err, ok := res.(error); ok {
		return nil, r.index, err
	}
	return res, r.index, nil
}

// log is the commands applied so far.
func (r *fakeRaft) log() []*messages.Command {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*messages.Command(nil), r.entries...)
}

// harness is a server actor over a real state store and a fakeRaft.
type harness struct {
	t     *testing.T
	sys   *actor.ActorSystem
	store *state.Store
	raft  *fakeRaft
	pid   *actor.PID
	clock *actors.FakeClock
	reg   *actors.Registry
}

func newHarness(t *testing.T, clients ClientLocator, opts ...func(*Spec)) *harness {
	t.Helper()
	store := state.NewStore()
	h := &harness{t: t, sys: actor.NewActorSystem(), store: store, clock: actors.NewFakeClock(time.Unix(1700000000, 0)),
		raft: &fakeRaft{fsm: state.NewFSM(store, slog.New(slog.DiscardHandler))}, reg: actors.NewRegistry()}
	h.raft.fsm.OnApply(func(ev state.Event) {
		if h.pid != nil {
			h.sys.Root.Send(h.pid, &ev)
		}
	})
	if clients == nil {
		clients = Clients{}
	}
	spec := &Spec{Raft: h.raft, Proposer: h.raft, State: func() StateView { return store.Snapshot() },
		Clients: clients, Clock: h.clock, Registry: h.reg, Heartbeat: node.DefaultHeartbeatConfig(),
		Leader: func() string { return "10.0.0.1:4647" }, Servers: func() []string { return []string{"10.0.0.1:4647"} }}
	for _, o := range opts {
		o(spec)
	}
	pid, err := h.sys.Root.SpawnNamed(actor.PropsFromProducer(New(spec)), "server")
	require.NoError(t, err)
	h.pid = pid
	t.Cleanup(func() {
		_ = h.sys.Root.StopFuture(pid).Wait()
		h.sys.Shutdown()
	})
	return h
}

// lead makes the fake raft lead and tells the actor so.
func (h *harness) lead() {
	h.raft.leader.Store(true)
	h.sys.Root.Send(h.pid, &Leadership{Leader: true})
}

// apply commits a command directly, as another writer would.
func (h *harness) apply(cmd *messages.Command) {
	h.t.Helper()
	_, _, err := h.raft.Apply(context.Background(), cmd)
	require.NoError(h.t, err)
}

// request asks the server actor and waits for its answer.
func (h *harness) request(msg any) any {
	h.t.Helper()
	res, err := h.sys.Root.RequestFuture(h.pid, msg, 5*time.Second).Result()
	require.NoError(h.t, err)
	return res
}

func registerJob(j *messages.Job) *messages.Command {
	return &messages.Command{Cmd: &messages.Command_RegisterJob{RegisterJob: &messages.RegisterJob{Job: j}}}
}

func testJob(id, typ string) *messages.Job {
	return &messages.Job{ID: id, Name: id, Namespace: "default", Type: typ, Priority: 50, Datacenters: []string{"dc1"},
		TaskGroups: []*messages.TaskGroup{{Name: "g", Count: 1, Tasks: []*messages.Task{{Name: "t", Driver: "exec",
			Resources: &messages.Resources{CPU: 100, MemoryMB: 64}}}}}}
}

func testNode(id string) *messages.Node {
	return &messages.Node{ID: id, Name: id, Datacenter: "dc1", Status: "ready",
		NodeResources: &messages.NodeResources{Cpu: &messages.NodeCpuResources{CpuShares: 4000},
			Memory: &messages.NodeMemoryResources{MemoryMB: 4096}}}
}
