package agent

import (
	"path/filepath"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-dev/troupe/actors/server"
)

// identifyClient fixes this agent's own client as the server side sees
// it: the node ID and the node's SecretID (a random UUID made on the
// first start, as Nomad's), kept in the data dir, and the client actor's
// PID. It
// runs before any server actor starts and nothing writes a.local
// afterwards, so the leader's node actors (which start as soon as raft
// restores their nodes, maybe before the client actor exists) read it
// without a lock. The PID is made before the actor is spawned (it is
// named, so its ID is known) and before the transport starts: an
// address-less PID of this process, which the actor system delivers
// locally whatever its address becomes.
func (a *Agent) identifyClient() error {
	id, err := persistentID(filepath.Join(a.dataDir, "client", "node-id"))
	if err != nil {
		return err
	}
	secret, err := persistentID(filepath.Join(a.dataDir, "client", "node-secret-id"))
	if err != nil {
		return err
	}
	a.local = server.Clients{LocalNodeID: id, LocalPID: actor.NewPID(a.sys.Address(), server.ClientActorName)}
	a.nodeSecret = secret
	return nil
}
