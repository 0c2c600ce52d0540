package agent

import (
	"path/filepath"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-dev/troupe/messages"
)

// localClient is this agent's own client as the server side sees it: its
// node ID and the PID of its client actor. identifyClient sets it before
// any server actor starts and nothing writes it afterwards, so the
// leader's node actors (which start as soon as raft restores their nodes,
// maybe before the client actor exists) read it without a lock.
type localClient struct {
	nodeID string
	pid    *actor.PID
}

// clientActorName is the name of the client actor, a root actor.
const clientActorName = "client"

// identifyClient fixes the local client's identity: the node ID kept in
// the data dir, and the client actor's PID. The PID is made before the
// actor is spawned (it is named, so its ID is known) and before the
// transport starts: an address-less PID of this process, which the actor
// system delivers locally whatever its address becomes.
func (a *Agent) identifyClient() error {
	id, err := persistentID(filepath.Join(a.dataDir, "client", "node-id"))
	if err != nil {
		return err
	}
	a.local = localClient{nodeID: id, pid: actor.NewPID(a.sys.Address(), clientActorName)}
	return nil
}

// clientPIDFor says where a node's client actor lives: this process for
// its own node, the node's RPC address otherwise; nil for a node that has
// none (simulated nodes in benchmarks). It reads only what was fixed
// before the server's actors started.
func (a *Agent) clientPIDFor(n *messages.Node) *actor.PID {
	if a.local.pid != nil && n.GetID() == a.local.nodeID {
		return a.local.pid
	}
	if n.GetRPCAddr() == "" {
		return nil
	}
	return actor.NewPID(n.GetRPCAddr(), clientActorName)
}
