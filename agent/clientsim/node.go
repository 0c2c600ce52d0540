package clientsim

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-uuid"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/messages"
)

// Resources are what each simulated node offers.
type Resources struct {
	CPU      int64 // MHz
	MemoryMB int64
}

// NewNodes returns n ready nodes named sim-00000 on, in dc1, with the exec
// driver and res each.
func NewNodes(n int, res Resources) []*messages.Node {
	out := make([]*messages.Node, n)
	for i := range out {
		id, err := uuid.GenerateUUID()
		if err != nil {
			panic(err) // crypto/rand failed
		}
		name := fmt.Sprintf("sim-%05d", i)
		out[i] = &messages.Node{ID: id, SecretID: id, Name: name, Datacenter: "dc1", Region: "global",
			NodePool: "default", Status: "ready",
			Drivers:    map[string]*messages.DriverInfo{"exec": {Detected: true, Healthy: true, HealthDescription: "Healthy"}},
			Attributes: map[string]string{"kernel.name": "linux", "unique.hostname": name, "driver.exec": "1"},
			NodeResources: &messages.NodeResources{
				Cpu:    &messages.NodeCpuResources{CpuShares: res.CPU, TotalCpuCores: int32(max(res.CPU/1000, 1))},
				Memory: &messages.NodeMemoryResources{MemoryMB: res.MemoryMB},
				Disk:   &messages.NodeDiskResources{DiskMB: 10 * 1024},
			}}
	}
	return out
}

// NodeInfo is what the Sim knows of one node.
type NodeInfo struct {
	ID, Name string
	// LastReply is when the node's last answered heartbeat (or its
	// registration) came back; TTL is the TTL that answer carried.
	LastReply time.Time
	TTL       time.Duration
	// Heartbeats counts the answered heartbeats.
	Heartbeats int
	// Allocs is how many allocations the newest pushed set holds.
	Allocs  int
	Stopped bool
}

// simNode is one simulated client: its heartbeat timer and what the
// leader told it.
type simNode struct {
	sim         *Sim
	msg         *messages.Node
	allocsIndex atomic.Uint64 // newest allocation set received
	allocs      atomic.Int32  // allocations in that set

	mu        sync.Mutex
	stopped   bool
	timer     *time.Timer
	lastReply time.Time
	ttl       time.Duration
	beats     int
}

func (n *simNode) info() NodeInfo {
	n.mu.Lock()
	defer n.mu.Unlock()
	return NodeInfo{ID: n.msg.GetID(), Name: n.msg.GetName(), LastReply: n.lastReply, TTL: n.ttl,
		Heartbeats: n.beats, Allocs: int(n.allocs.Load()), Stopped: n.stopped}
}

// register registers the node (retrying once a RetryAfter on failure
// until ctx ends) and arms its first heartbeat.
func (n *simNode) register(ctx context.Context) error {
	msg := proto.Clone(n.msg).(*messages.Node)
	msg.RPCAddr = n.sim.Address()
	for {
		resp, err := request[*messages.RegisterNodeResponse](ctx, n.sim, &messages.RegisterNodeRequest{Node: msg})
		if err == nil {
			n.alive(time.Duration(resp.GetHeartbeatTTL()), false)
			return nil
		}
		n.sim.cfg.Logger.Warn("simulated node: registration failed, retrying", "node", msg.GetName(), "error", err)
		select {
		case <-ctx.Done():
			return err
		case <-n.sim.ctx.Done():
			return err
		case <-time.After(n.sim.cfg.RetryAfter):
		}
	}
}

// alive records an answer and arms the next heartbeat at half the TTL, as
// the real client does.
func (n *simNode) alive(ttl time.Duration, beat bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.lastReply, n.ttl = time.Now(), ttl
	if beat {
		n.beats++
	}
	n.armLocked(ttl / 2)
}

func (n *simNode) armLocked(d time.Duration) {
	if n.stopped {
		return
	}
	n.timer = time.AfterFunc(d, n.beat)
}

// beat sends one heartbeat (the timer's goroutine waits for the answer).
func (n *simNode) beat() {
	n.mu.Lock()
	if n.stopped {
		n.mu.Unlock()
		return
	}
	n.sim.calls.Add(1)
	n.mu.Unlock()
	defer n.sim.calls.Done()
	start := time.Now()
	resp, err := request[*messages.NodeHeartbeatResponse](n.sim.ctx, n.sim,
		&messages.NodeHeartbeat{NodeID: n.msg.GetID(), AllocsIndex: n.allocsIndex.Load(), NodeSecretID: n.msg.GetSecretID()})
	switch {
	case err == nil:
		n.sim.rtts.add(time.Since(start))
		n.alive(time.Duration(resp.GetHeartbeatTTL()), true)
	case notFound(err):
		n.sim.hbErrors.Add(1)
		if rerr := n.register(n.sim.ctx); rerr != nil {
			n.sim.cfg.Logger.Warn("simulated node: registering again failed", "node", n.msg.GetName(), "error", rerr)
		}
	default:
		n.sim.hbErrors.Add(1)
		n.sim.cfg.Logger.Warn("simulated node: heartbeat failed", "node", n.msg.GetName(), "error", err)
		n.mu.Lock()
		n.armLocked(n.sim.cfg.RetryAfter)
		n.mu.Unlock()
	}
}

// stop ends the node's heartbeats.
func (n *simNode) stop() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.stopped = true
	if n.timer != nil {
		n.timer.Stop()
	}
}

func (n *simNode) isStopped() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.stopped
}
