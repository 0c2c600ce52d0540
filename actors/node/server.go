package node

import (
	"fmt"
	"log/slog"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/messages"
)

// StateView is the part of the replicated state a server-side node actor
// reads (the state store's snapshot implements it).
type StateView interface {
	NodeByID(id string) *messages.Node
	AllocsByNode(nodeID string) []*messages.Allocation
	JobVersion(namespace, id string, version uint64) *messages.Job
	JobByID(namespace, id string) *messages.Job
}

// ServerSpec is everything a server-side node actor needs.
type ServerSpec struct {
	NodeID string
	State  func() StateView
	// ClientPID says where the node's client actor lives; nil when the node
	// has no client to push to.
	ClientPID func(n *messages.Node) *actor.PID
	Logger    *slog.Logger
}

// Server is the leader's actor for one node ("nodes/<id>").
type Server struct {
	spec   *ServerSpec
	pushed uint64
	log    *slog.Logger
}

// NewServer returns a producer for a server-side node actor.
func NewServer(spec *ServerSpec) actor.Producer {
	return func() actor.Actor {
		return &Server{spec: spec, log: spec.Logger.With("node", spec.NodeID)}
	}
}

// Phase names the actor's state for the actor tree.
func (s *Server) Phase() string {
	if n := s.spec.State().NodeByID(s.spec.NodeID); n != nil {
		return n.GetStatus()
	}
	return "unknown"
}

// Receive dispatches.
func (s *Server) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		s.push(ctx, 0)
	case *messages.NodeAllocsChanged:
		s.push(ctx, m.GetIndex())
	case *actor.Stopping, *actor.Stopped, *actor.Restarting:
	default:
		s.log.Warn("node actor: unexpected message", "type", fmt.Sprintf("%T", m))
	}
}

// push sends the client the full set of allocations it must know about:
// every one it should run or still has to stop. Terminal ones are left out,
// which tells the client it may forget them.
func (s *Server) push(ctx actor.Context, index uint64) {
	if index != 0 && index <= s.pushed {
		return
	}
	view := s.spec.State()
	n := view.NodeByID(s.spec.NodeID)
	if n == nil {
		return
	}
	to := s.spec.ClientPID(n)
	if to == nil {
		return
	}
	out := &messages.SetClientAllocs{NodeID: s.spec.NodeID, Index: index}
	for _, a := range view.AllocsByNode(s.spec.NodeID) {
		if terminal(a.GetClientStatus()) {
			continue
		}
		c := proto.Clone(a).(*messages.Allocation)
		c.Job = view.JobVersion(a.GetNamespace(), a.GetJobID(), a.GetJobVersion())
		if c.Job == nil {
			c.Job = view.JobByID(a.GetNamespace(), a.GetJobID())
		}
		out.Allocs = append(out.Allocs, c)
	}
	if index > s.pushed {
		s.pushed = index
	}
	ctx.Send(to, out)
}
