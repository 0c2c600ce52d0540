package agent

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-dev/troupe/actors/node"
	"github.com/troupe-dev/troupe/actors/server"
	"github.com/troupe-dev/troupe/cluster"
	"github.com/troupe-dev/troupe/cluster/state"
)

// serverActorName is the name of the server actor, a root actor.
const serverActorName = "server"

// startServer opens the replicated state and raft, then starts the server
// actor (actors/server) with everything it reads fixed in its spec, and
// tells it when this server gains or loses leadership.
func (a *Agent) startServer() error {
	a.store = state.NewStore()
	if a.cfg.JobVersions > 0 {
		a.store.SetJobVersions(a.cfg.JobVersions)
	}
	a.store.SetEventBufferSize(a.cfg.EventBufferSize) // 0: the default
	a.fsm = state.NewFSM(a.store, a.log)
	id, err := persistentID(filepath.Join(a.dataDir, "server", "server-id"))
	if err != nil {
		return err
	}
	a.raftID = id
	// The FSM's events go to the server actor's PID, made before raft
	// starts: raft first, so that the actor's spec holds it. An event
	// applied before the actor runs is for a server that does not lead
	// yet, which ignores it anyway: a new leader reads the state.
	to := actor.NewPID(a.sys.Address(), serverActorName)
	a.fsm.OnApply(func(ev state.Event) { a.sys.Root.Send(to, &ev) })
	if a.raft, err = cluster.NewRaft(a.raftConfig(id), a.fsm); err != nil {
		return err
	}
	props := a.sys.Props("server", server.New(a.serverSpec()))
	if a.serverPID, err = a.sys.Root.SpawnNamed(props, serverActorName); err != nil {
		return fmt.Errorf("agent: spawn server actor: %w", err)
	}
	a.wg.Add(1)
	go a.watchLeadership()
	return nil
}

// raftConfig is this server's raft configuration.
func (a *Agent) raftConfig(id string) cluster.RaftConfig {
	rc := cluster.RaftConfig{
		NodeID: id, DataDir: filepath.Join(a.dataDir, "server"), Bootstrap: true,
		SnapshotThreshold: a.cfg.SnapshotThreshold, SnapshotInterval: a.cfg.SnapshotInterval,
		HeartbeatTimeout: 500 * time.Millisecond, ElectionTimeout: 500 * time.Millisecond,
		LeaderLeaseTimeout: 250 * time.Millisecond, Logger: a.log,
	}
	if a.cfg.Clustered() {
		rc.BindAddr = a.cfg.addr(a.cfg.RaftPort)
		rc.TLS = a.raftTLS()
		rc.Bootstrap = a.cfg.BootstrapExpect == 1
		rc.HeartbeatTimeout, rc.ElectionTimeout, rc.LeaderLeaseTimeout = time.Second, time.Second, 500*time.Millisecond
		if d := a.cfg.RaftTimeout; d > 0 {
			rc.HeartbeatTimeout, rc.ElectionTimeout, rc.LeaderLeaseTimeout = d, d, d/2
		}
	}
	return rc
}

// serverSpec is the server actor's spec: this server's raft, the agent's
// Apply (which forwards to the leader) for the leader's actors, the state
// store and the local client fixed by identifyClient.
func (a *Agent) serverSpec() *server.Spec {
	return &server.Spec{
		Raft:     a.raft,
		Proposer: measuredProposer{a}, // times plans (telemetry.go)
		State:    func() server.StateView { return a.store.Snapshot() },
		Clients:  a.local,
		Clock:    a.clock, Logger: a.log, Registry: a.sys.Registry,
		Heartbeat:     a.heartbeatConfig(),
		MaxPlacements: a.cfg.MaxPlacementsPerEval,
		VolumeRetry:   a.cfg.VolumeRetry,
		GC:            a.gcConfig(),
		Servers:       a.serverRPCAddrs,
		Leader:        a.leaderRPCAddr,
		// Clients gossip reported failed under the old leader.
		GainedLeadership:   a.suspectFailedClients,
		Vars:               a.readVarsPlain,
		ACLTokens:          a.resolveACLToken,
		WorkloadIdentities: a.resolveWorkloadIdentity, // acl_tokens.go
		SchedulerStats:     &a.schedStats,
		Identities:         a.signIdentities, // identity.go
		WorkloadVars:       a.readVarsAs,
	}
}

// heartbeatConfig is the node status machine's configuration.
func (a *Agent) heartbeatConfig() node.HeartbeatConfig {
	c := node.DefaultHeartbeatConfig()
	c.MinTTL, c.Grace = a.cfg.HeartbeatTTL, a.cfg.HeartbeatGrace
	if a.cfg.MaxHeartbeatsPerSecond > 0 {
		c.MaxHeartbeatsPerSecond = a.cfg.MaxHeartbeatsPerSecond
	}
	c.FailoverTTL = 6 * a.cfg.HeartbeatTTL
	return c
}

// watchLeadership tells the server actor when this server gains or loses
// raft leadership.
func (a *Agent) watchLeadership() {
	defer a.wg.Done()
	ch := a.raft.LeaderCh()
	for {
		select {
		case <-a.stop:
			return
		case isLeader, ok := <-ch:
			if !ok {
				return
			}
			a.readyTerm.Store(0)
			if isLeader {
				// Act, and answer reads, only on a state that holds every
				// committed entry.
				term := a.raft.CurrentTerm()
				if err := a.raft.Barrier(time.Minute); err != nil {
					a.log.Warn("raft barrier failed after gaining leadership", "error", err)
					continue
				}
				a.readyTerm.Store(term)
			}
			a.sys.Root.Send(a.serverPID, &server.Leadership{Leader: isLeader})
		}
	}
}

// gcConfig is the garbage collector's configuration: the agent's GC
// thresholds, with the job versions the store keeps.
func (a *Agent) gcConfig() server.GCConfig {
	gc := a.cfg.GC
	gc.JobVersions = a.store.JobVersions()
	return gc
}
