package volume

import (
	"context"
	"log/slog"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

// Proposer commits a raft command through the leader (the agent's Apply).
// An error value from the FSM comes back as err.
type Proposer interface {
	Apply(ctx context.Context, cmd *messages.Command) (any, uint64, error)
}

// StateView is the part of the replicated state the volume actors read.
// *state.Snap implements it.
type StateView interface {
	CSIVolumeAnyNamespace(id string) *messages.CSIVolume
	CSIVolumes() []*messages.CSIVolume
	CSIVolumesByPlugin(pluginID string) []*messages.CSIVolume
	CSIPluginByID(id string) *messages.CSIPlugin
	CSIPlugins() []*messages.CSIPlugin
	Nodes() []*messages.Node
	NodeByID(id string) *messages.Node
	AllocByID(id string) *messages.Allocation
}

var _ StateView = (*state.Snap)(nil)

// ControllerRPC runs one controller RPC on the controller plugin instance
// on nodeID (the agent sends the request to that node's client actor). A
// non-nil error means the instance could not be reached, as a gRPC
// Unavailable. resp.StatusCode() is the RPC's gRPC code.
type ControllerRPC interface {
	Run(ctx context.Context, nodeID string, req *messages.ControllerRequest) (*messages.ControllerResponse, error)
}

// ManagerSpec is everything the volume manager and its children need.
type ManagerSpec struct {
	State       func() StateView
	Proposer    Proposer
	Controllers ControllerRPC
	// Clock drives the retry timers; nil is the wall clock.
	Clock actors.Clock
	// Retry is the backoff of failed controller unpublishes and failed
	// commits; the zero value is actors.DefaultRetry.
	Retry actors.Retry
	// Registry reports the children in the actor tree; nil spawns them
	// with plain props.
	Registry *actors.Registry
	Logger   *slog.Logger
	// RPCTimeout bounds one controller RPC; 0 is defaultRPCTimeout.
	RPCTimeout time.Duration
}

// defaultRPCTimeout bounds a controller RPC when the spec sets none:
// cloud attach and create calls take minutes at worst.
const defaultRPCTimeout = 2 * time.Minute

// proposeTimeout bounds the commit of one step's proposals.
const proposeTimeout = 30 * time.Second

// withDefaults returns a copy of the spec with its zero fields filled.
func (sp *ManagerSpec) withDefaults() *ManagerSpec {
	c := *sp
	if c.Clock == nil {
		c.Clock = actors.RealClock{}
	}
	if c.Retry.IsZero() {
		c.Retry = actors.DefaultRetry()
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.RPCTimeout <= 0 {
		c.RPCTimeout = defaultRPCTimeout
	}
	return &c
}

// props builds the props of one child actor.
func (sp *ManagerSpec) props(kind string, p actor.Producer) *actor.Props {
	if sp.Registry != nil {
		return sp.Registry.Props(kind, p)
	}
	return actor.PropsFromProducer(p, actors.WithLifetime())
}

// envelope is a message kept for later with the sender to answer.
type envelope struct {
	msg    any
	sender *actor.PID
}

// Messages between the manager and its children.
type (
	// stepInput steps the volume actor's state with In (no reply).
	stepInput struct{ In input }
	// submitOp queues a controller op on its plugin's controller actor.
	// Volume is the spec of a create-volume; Secrets are extra secrets
	// for a delete-volume.
	submitOp struct {
		Op      *messages.ControllerOp
		Volume  *messages.CSIVolume
		Secrets map[string]string
	}
	// opResult is a controller op's outcome for its volume actor.
	opResult struct {
		VolumeID string
		In       input
	}
	// createDone is a create-volume's outcome for the manager.
	createDone struct {
		VolumeID string
		Volume   *messages.CSIVolume
		Err      error
	}
	// instancesChanged tells a controller actor to read its plugin's
	// instances and the live nodes again.
	instancesChanged struct{}
	// controllerRestarted: a controller actor restarted after a crash and
	// lost its queue; the volume actors submit their op in flight again.
	controllerRestarted struct{ PluginID string }
	// resubmit asks a volume actor to submit its op in flight again.
	resubmit struct{}
	// volumeGone: the volume was deregistered; the actor stops when idle.
	volumeGone struct{}
)
