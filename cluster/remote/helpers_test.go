package remote

import (
	"strconv"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

// bound is the most any failing request in these tests may take.
const bound = 8 * time.Second

// echo answers the requests these tests send. A SetClientAllocs goes to
// got when set, else it is forwarded to the actor "sink" at forward.
type echo struct {
	got     chan *messages.SetClientAllocs
	forward string
}

func (e *echo) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *messages.GetActorTree:
		ctx.Respond(&messages.ActorTreeResponse{Node: "b"})
	case *messages.NodeHeartbeat:
		ctx.Respond(&messages.NodeHeartbeatResponse{HeartbeatTTL: int64(5 * time.Second)})
	case *messages.RegisterNodeRequest:
		ctx.Respond(&messages.RegisterNodeResponse{Error: &messages.Error{
			Code: CodeNotLeader, Message: "follower", LeaderRPCAddr: "10.0.0.9:4647",
		}})
	case *messages.UpdateAllocsRequest:
		ctx.Respond(&messages.Error{Code: CodeNotFound, Message: "node " + m.GetNodeID()})
	case *messages.SetClientAllocs:
		e.onAllocs(ctx, m)
	}
}

func (e *echo) onAllocs(ctx actor.Context, m *messages.SetClientAllocs) {
	if e.got != nil {
		e.got <- m
		return
	}
	_ = Send(ctx.ActorSystem().Root, e.forward, "sink", m)
}

func testAllocs() *messages.SetClientAllocs {
	return &messages.SetClientAllocs{
		NodeID: "node-1",
		Index:  42,
		Allocs: []*messages.Allocation{
			{ID: "a1", JobID: "web", TaskGroup: "web", DesiredStatus: "run", CreateIndex: 7,
				TaskStates: map[string]*messages.TaskState{"nginx": {State: "running", Restarts: 2}}},
			{ID: "a2", JobID: "db", TaskGroup: "db", DesiredStatus: "stop", ModifyTime: 123},
		},
	}
}

// deadAddr is a loopback address that nothing listens on.
func deadAddr(t testing.TB) string {
	p, err := probePort("127.0.0.1", 0)
	require.NoError(t, err)
	return "127.0.0.1:" + strconv.Itoa(p)
}

// plainSystem is an actor system without remoting.
func plainSystem(t testing.TB) *actor.ActorSystem {
	sys := actor.NewActorSystemWithConfig(actor.Configure(actor.WithLoggerFactory(LoggerFactory(nil))))
	t.Cleanup(sys.Shutdown)
	return sys
}
