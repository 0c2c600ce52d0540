package agent

import (
	"time"

	"github.com/troupe-dev/troupe/actors/node"
	"github.com/troupe-dev/troupe/cluster/membership"
)

// evidenceSweep is how often the leader passes on gossip's view of the
// clients it still reports failed: a node that answered a probe while
// gossip called it failed (a flap) is checked again that often, so that
// its real death later is not left to the heartbeat deadline alone.
const evidenceSweep = 10 * time.Second

// Clients gossip too, so the servers' memberlist sees a dead client within
// seconds (suspect, then failed), long before its heartbeat deadline.
// That is evidence, not a verdict: the leader's node actor probes the
// client (node.SuspectNode) and takes it for missed only when the probes
// fail. A member that left gracefully (an agent stopped or restarted on
// purpose) is no evidence: its heartbeat deadline decides.

// suspectOnEvent passes on a client member that gossip declared failed.
func (a *Agent) suspectOnEvent(ev membership.Event) {
	if ev.Type == membership.EventFailed {
		a.suspectClient(ev.Member)
	}
}

// suspectFailedClients passes on every client member gossip reports
// failed (when this server gains leadership, and every evidenceSweep).
func (a *Agent) suspectFailedClients() {
	if a.members == nil || !a.leads() {
		return
	}
	for _, m := range a.members.Members() {
		if m.Status == membership.StatusFailed {
			a.suspectClient(m)
		}
	}
}

// suspectClient tells the leader's node actor of a client member's node
// that gossip reports it failed. Servers' members carry their raft ID, not
// a node ID: a server that also runs a client is left to its heartbeats.
func (a *Agent) suspectClient(m membership.Member) {
	if m.Meta.Role != membership.RoleClient || m.Meta.NodeID == "" || !a.leads() {
		return
	}
	a.sys.Root.Send(a.serverPID, &node.SuspectNode{NodeID: m.Meta.NodeID, Source: "gossip reports member " + m.Name + " failed"})
}

func (a *Agent) leads() bool { return a.cfg.Server && a.raft != nil && a.raft.IsLeader() }
