package state

import "github.com/troupe-dev/troupe/messages"

// LiveNodes is how many nodes are not down, in O(1): kept on every node
// write (and rebuilt on restore) so that the leader, which scales every
// heartbeat's TTL with it, never walks the nodes per heartbeat. Nomad
// scales by the nodes it holds a heartbeat timer for, which are these.
func (s *Snap) LiveNodes() int { return s.allocs.liveNodes }

// countNode keeps LiveNodes exact as old (nil for a new node) becomes n.
func (w *writeTxn) countNode(old, n *messages.Node) {
	if d := liveNode(n) - liveNode(old); d != 0 {
		w.allocTable(true).liveNodes += d
	}
}

func liveNode(n *messages.Node) int {
	if n == nil || n.GetStatus() == messages.NodeStatusDown {
		return 0
	}
	return 1
}
