package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/clientstate"
	"github.com/troupe-dev/troupe/runtime/device"
	"github.com/troupe-dev/troupe/runtime/driver"
)

// ServerConn is how a client reaches the servers: in-process in -dev, over
// the remote transport in a cluster. Calls block; the client actor makes
// them from workers.
type ServerConn interface {
	// RegisterNode registers the node and returns its heartbeat TTL.
	RegisterNode(ctx context.Context, n *messages.Node) (time.Duration, error)
	// Heartbeat keeps the node alive and returns the next TTL; an error
	// for which nodeUnknown is true asks the client to register again.
	// allocsIndex is the newest allocation set the client holds, so the
	// leader can push it again when one went missing.
	Heartbeat(ctx context.Context, nodeID string, allocsIndex uint64) (HeartbeatReply, error)
	UpdateAllocs(ctx context.Context, allocs []*messages.Allocation) error
	// UpsertPlugins reports every CSI plugin instance on the node.
	UpsertPlugins(ctx context.Context, up *messages.UpsertPluginInstances) error
}

// AllocStore is the part of the client state file (a *clientstate.DB) the
// client actor uses.
type AllocStore interface {
	// Allocs reads every stored allocation.
	Allocs() ([]*clientstate.StoredAlloc, error)
	// DeleteAlloc drops an allocation's records (queued).
	DeleteAlloc(id string)
}

var _ AllocStore = (*clientstate.DB)(nil)

// HeartbeatReply is what the servers answer a heartbeat.
type HeartbeatReply struct {
	TTL time.Duration
	// Resend asks for every allocation's status again (the node was cut
	// off and the servers marked its allocations).
	Resend bool
}

// nodeUnknown reports whether err says the servers do not know the node
// (it must register again).
func nodeUnknown(err error) bool {
	var nf interface{ NotFound() bool }
	return errors.As(err, &nf) && nf.NotFound()
}

// ClientSpec is everything the client actor needs.
type ClientSpec struct {
	Node    *messages.Node
	Server  ServerConn
	Drivers map[string]driver.Driver
	DB      AllocStore
	Clock   actors.Clock
	// AllocProps builds the props of an alloc actor for an allocation
	// (injected: the node package does not import the alloc package).
	// node is the node as last registered (fingerprinted attributes
	// included), or Node before the first registration answered (the
	// agent puts the host's attributes on Node; the drivers' come with
	// the registration); read only.
	AllocProps func(a *messages.Allocation, node *messages.Node) *actor.Props
	// BatchInterval is how long alloc updates gather before one is sent.
	BatchInterval time.Duration
	// PluginSocket says where a CSI plugin task listens; ProbeCSI
	// fingerprints it every PluginProbeInterval (default 10 s). Without
	// ProbeCSI, CSI plugin tasks are not watched.
	PluginSocket        func(allocID, task, mountDir string) string
	ProbeCSI            ProbeCSI
	PluginProbeInterval time.Duration
	// Plugins is where the client publishes the healthy plugin instances
	// it runs (NewClient makes one when nil).
	Plugins *PluginTable
	// RunController runs a controller RPC that the leader routed here on
	// the local controller plugin listening on socket.
	RunController func(ctx context.Context, socket string, req *messages.ControllerRequest) *messages.ControllerResponse
	// Devices fingerprints the host's devices (a device.Manager); nil: the
	// node has none. The client fingerprints them every DeviceInterval
	// (default 1 min) and, when Devices is a device.Watcher, whenever its
	// Watch sees a change; a new set or a changed health registers the
	// node again.
	Devices        device.Plugin
	DeviceInterval time.Duration
	// ReservedCores are cores the client keeps for itself (Nomad's client
	// reserved { cores }): they are not among the node's reservable cores.
	ReservedCores []uint32
	// Registry puts the client's probe actors in the actor tree.
	Registry *actors.Registry
	// Retry is the backoff for failed server calls and state reads (zero:
	// defaultClientRetry); past its attempts or deadline it starts again
	// at its first interval: a client never stops calling its servers.
	Retry  actors.Retry
	Logger *slog.Logger
}

// Client actor phases.
const (
	clientRestoring   = "restoring"
	clientRegistering = "registering"
	clientReady       = "ready"
)

// Worker results and timers.
type (
	restoredAllocs struct {
		allocs []*clientstate.StoredAlloc
		err    error
	}
	retryRestore struct{}
	registered   struct {
		ttl  time.Duration
		err  error
		node *messages.Node // as registered
		// devices were fingerprinted for this registration (fresh), or
		// the fingerprint failed (devErr).
		devices []*messages.NodeDeviceResource
		fresh   bool
		devErr  error
	}
	retryRegister struct{}
	heartbeatNow  struct{}
	heartbeatDone struct {
		reply HeartbeatReply
		err   error
	}
	flushNow struct{}
	flushed  struct{ err error }
)

// client is the client's node actor.
type client struct {
	actors.Lifetime // ends the workers on stop
	spec            *ClientSpec
	phase           string
	// table is every allocation the client knows of, one entry each
	// (client_table.go).
	table       *allocTable
	timer       actors.Timer // the batch timer
	regBack     *actors.Retrier
	regInFlight bool // a registration runs
	regAgain    bool // register again once it answers (the devices changed)
	flushBack   *actors.Retrier
	flushErr    error // why the last batch failed
	hbTimer     actors.Timer
	hbBack      *actors.Retrier
	// loadBack and loadTimer retry a failed read of the state file.
	loadBack    *actors.Retrier
	loadTimer   actors.Timer
	lastContact time.Time    // the servers' last answer (client_contact.go)
	stopTimer   actors.Timer // the nearest stop_on_client_after window
	// stopping is set while the client actor itself stops (its children
	// stop with it; that is no crash).
	stopping bool
	// probes and plugins are the CSI plugin tasks watched (by
	// allocID/task) and the instances they last reported.
	probes  map[string]*actor.PID
	plugins map[string]*pluginInstance
	dev     clientDevices
	// node is the node as last registered, fingerprint included.
	node *messages.Node
	log  *slog.Logger
}

// NewClient returns a producer for the client actor.
func NewClient(spec *ClientSpec) actor.Producer {
	if spec.BatchInterval <= 0 {
		spec.BatchInterval = 50 * time.Millisecond
	}
	if spec.Plugins == nil {
		spec.Plugins = NewPluginTable()
	}
	if spec.DeviceInterval <= 0 {
		spec.DeviceInterval = time.Minute
	}
	if spec.PluginProbeInterval <= 0 {
		spec.PluginProbeInterval = 10 * time.Second
	}
	spec.Retry = spec.Retry.Or(defaultClientRetry)
	return func() actor.Actor {
		return &client{spec: spec, phase: clientRestoring, table: newAllocTable(),
			probes: map[string]*actor.PID{}, plugins: map[string]*pluginInstance{},
			log: spec.Logger.With("node", spec.Node.GetID())}
	}
}

// Phase names the actor's state for the actor tree.
func (c *client) Phase() string { return c.phase }

// Receive dispatches.
func (c *client) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		c.onStarted(ctx)
	case *restoredAllocs:
		c.onRestored(ctx, m)
	case *retryRestore:
		c.restore(ctx)
	case *registered:
		c.onRegistered(ctx, m)
	case *retryRegister:
		c.register(ctx)
	case *heartbeatNow:
		c.heartbeat(ctx)
	case *heartbeatDone:
		c.onHeartbeat(ctx, m)
	case *stopCheck:
		c.onStopCheck(ctx)
	case *messages.ProbeNode:
		c.onProbeNode(ctx)
	case *messages.SetClientAllocs:
		c.onSetAllocs(ctx, m)
	case *messages.AllocUpdated:
		c.onAllocUpdated(ctx, m)
	case *flushNow:
		c.onFlushNow(ctx)
	case *pluginInstance:
		c.onPluginInstance(ctx, m)
	case *pluginsSent:
		c.onPluginsSent(m)
	case *messages.ControllerRequest:
		c.onControllerRequest(ctx, m)
	case *actors.AllocReleased:
		c.onAllocReleased(ctx, m)
	case *flushed:
		c.onFlushed(ctx, m)
	case *deviceTick, *devicesChanged:
		c.refreshDevices(ctx)
	case *devicesFingerprinted:
		c.onDevicesFingerprinted(ctx, m)
	case *deviceWatchEnded:
		c.onDeviceWatchEnded(m)
	case *actor.Stopping, *actor.Restarting:
		// A restart also ends this incarnation's timers and device watch:
		// the new one starts its own.
		_, c.stopping = m.(*actor.Stopping)
		c.stopDevices()
		for _, t := range []actors.Timer{c.timer, c.hbTimer, c.stopTimer, c.loadTimer} {
			if t != nil {
				t.Stop()
			}
		}
	case *actor.Terminated:
		c.onChildTerminated(ctx, m)
	case *actor.Stopped:
	default:
		c.log.Warn("client actor: unexpected message", "type", fmt.Sprintf("%T", m))
	}
}

func (c *client) onStarted(ctx actor.Context) { c.restore(ctx) }

// restore reads the allocations of a previous run from the state file
// (again, after a read failed).
func (c *client) restore(ctx actor.Context) {
	c.loadTimer = nil
	db := c.spec.DB
	actors.Go(ctx, func(_ context.Context) any {
		all, err := db.Allocs()
		return &restoredAllocs{allocs: all, err: err}
	})
}

// onRestored respawns the alloc actors of a previous run: they re-attach to
// their tasks through the stored handles. A state file that could not be
// read is read again with backoff: taking it for an empty one would start
// tasks that are already running.
func (c *client) onRestored(ctx actor.Context, m *restoredAllocs) {
	if m.err != nil {
		if c.loadBack == nil {
			c.loadBack = c.retrier()
		}
		d := nextDelay(c.loadBack)
		c.log.Error("reading the client state failed, retrying", "error", m.err, "in", d)
		c.loadTimer = c.after(ctx, d, &retryRestore{})
		return
	}
	c.loadBack = nil
	allocs := make([]*messages.Allocation, 0, len(m.allocs))
	for _, sa := range m.allocs {
		allocs = append(allocs, sa.Alloc)
	}
	c.step(ctx, evRestored{Allocs: allocs})
	if len(m.allocs) > 0 {
		c.log.Info("restored allocations from the client state", "count", len(m.allocs))
	}
	c.phase = clientRegistering
	c.regBack = c.retrier()
	c.register(ctx)
}

// register fingerprints the node and registers it (an upsert), one
// registration at a time. The devices are fingerprinted here only until
// one fingerprint succeeded; then the device refresh keeps them current.
func (c *client) register(ctx actor.Context) {
	if c.regInFlight {
		c.regAgain = true
		return
	}
	c.regInFlight = true
	n := proto.Clone(c.spec.Node).(*messages.Node)
	srv, drivers, now := c.spec.Server, c.spec.Drivers, c.spec.Clock.Now()
	plugin, groups, known := c.spec.Devices, c.dev.groups, c.dev.known
	reserved := c.spec.ReservedCores
	actors.Go(ctx, func(life context.Context) any {
		cctx, cancel := context.WithTimeout(life, 30*time.Second)
		defer cancel()
		Fingerprint(cctx, n, drivers, now)
		withoutCores(n, reserved)
		r := &registered{}
		if plugin != nil && !known {
			if groups, r.devErr = plugin.Fingerprint(cctx); r.devErr == nil {
				r.devices, r.fresh = groups, true
			}
		}
		if plugin != nil {
			withDevices(n, groups)
		}
		n.Status = messages.NodeStatusReady
		r.ttl, r.err = srv.RegisterNode(cctx, n)
		r.node = n
		return r
	})
}

func (c *client) onRegistered(ctx actor.Context, m *registered) {
	c.regInFlight = false
	if m.fresh && !c.dev.known {
		c.dev.groups, c.dev.known = m.devices, true
	}
	if m.devErr != nil {
		c.log.Warn("device fingerprint failed; registering without devices", "error", m.devErr)
	}
	if m.err != nil {
		c.regAgain = false // the retry sends the newest devices
		d := nextDelay(c.regBack)
		c.log.Warn("node registration failed, retrying", "error", m.err, "in", d)
		c.after(ctx, d, &retryRegister{})
		return
	}
	c.log.Info("node registered", "name", c.spec.Node.GetName(), "ttl", m.ttl)
	c.node = m.node
	c.phase = clientReady
	c.regBack.Reset()
	c.onContact(ctx)
	c.scheduleHeartbeat(ctx, m.ttl)
	c.startDevices(ctx)
	if c.regAgain {
		c.regAgain = false
		c.register(ctx)
	}
}

// scheduleHeartbeat arms the next heartbeat at half the TTL, as Nomad's
// clients do, so one lost heartbeat does not make the node miss.
func (c *client) scheduleHeartbeat(ctx actor.Context, ttl time.Duration) {
	if ttl <= 0 {
		ttl = 10 * time.Second
	}
	if c.hbTimer != nil {
		c.hbTimer.Stop()
	}
	c.hbTimer = c.after(ctx, ttl/2, &heartbeatNow{})
}

func (c *client) heartbeat(ctx actor.Context) {
	srv, id, idx := c.spec.Server, c.spec.Node.GetID(), c.table.index
	actors.Go(ctx, func(life context.Context) any {
		cctx, cancel := context.WithTimeout(life, 10*time.Second)
		defer cancel()
		reply, err := srv.Heartbeat(cctx, id, idx)
		return &heartbeatDone{reply: reply, err: err}
	})
}

func (c *client) onHeartbeat(ctx actor.Context, m *heartbeatDone) {
	switch {
	case m.err == nil:
		if c.hbBack != nil || m.reply.Resend {
			c.step(ctx, evResend{}) // back in contact: the servers may have marked our allocs
		}
		c.hbBack = nil
		c.onContact(ctx)
		c.scheduleHeartbeat(ctx, m.reply.TTL)
	case nodeUnknown(m.err):
		c.log.Warn("the servers do not know this node: registering again", "error", m.err)
		c.phase = clientRegistering
		c.register(ctx)
	default:
		if c.hbBack == nil {
			c.hbBack = c.retrier()
		}
		d := nextDelay(c.hbBack)
		c.log.Warn("heartbeat failed, retrying", "error", m.err, "in", d, "last_contact", c.lastContact)
		c.stopDisconnected(ctx)
		if c.hbTimer != nil {
			c.hbTimer.Stop()
		}
		c.hbTimer = c.after(ctx, d, &heartbeatNow{})
	}
}

// defaultClientRetry is the backoff of a client's server calls: 200 ms
// growing by half to 10 s, spread by half (cenkalti/backoff's defaults
// from 200 ms), with no end.
var defaultClientRetry = actors.Retry{Initial: 200 * time.Millisecond, Max: 10 * time.Second, Multiplier: 1.5, Jitter: 0.5}

func (c *client) retrier() *actors.Retrier { return c.spec.Retry.On(c.spec.Clock) }

// nextDelay is r's next wait; when r gives up it starts again at its
// first interval.
func nextDelay(r *actors.Retrier) time.Duration {
	d, ok := r.Next()
	if !ok {
		r.Reset()
		d, _ = r.Next()
	}
	return d
}

func (c *client) after(ctx actor.Context, d time.Duration, msg any) actors.Timer {
	self, root := ctx.Self(), ctx.ActorSystem().Root
	return c.spec.Clock.AfterFunc(d, func() { root.Send(self, msg) })
}
