package scheduler

import "github.com/troupe-dev/troupe/messages"

// Node pools: a job is placed only on the nodes of its pool ("all": every
// node). A node or job that names no pool is in "default". Nodes of other
// pools never enter the candidates and are not counted anywhere in the
// metrics (Nomad's NodesInPool counts the job's pool only).
const (
	nodePoolDefault = "default"
	nodePoolAll     = "all"
)

// NodePoolSource may be implemented by a Snapshot that indexes nodes by
// pool (the state store does): a job's candidates are then read from its
// pool's index instead of filtered out of every node. NodesByPool must
// return the same nodes, in the same order, as Nodes filtered by pool.
type NodePoolSource interface {
	NodesByPool(pool string) []*messages.Node
}

// jobPool is the pool a job runs in.
func jobPool(job *messages.Job) string {
	if p := job.GetNodePool(); p != "" {
		return p
	}
	return nodePoolDefault
}

// inPool reports whether node n is in pool: one string compare.
func inPool(pool string, n *messages.Node) bool {
	if pool == nodePoolAll {
		return true
	}
	if n.NodePool == "" {
		return pool == nodePoolDefault
	}
	return n.NodePool == pool
}

// poolNodes are the nodes a generic job may be placed on, read from the
// pool index when the snapshot has one (filtered again by admit, so a
// snapshot without one gives the same plan).
func (p *planner) poolNodes() []*messages.Node {
	if src, ok := p.snap.(NodePoolSource); ok && p.pre.pool != nodePoolAll {
		return src.NodesByPool(p.pre.pool)
	}
	return p.snap.Nodes()
}

// countInPool is how many of nodes are in pool.
func countInPool(pool string, nodes []*messages.Node) int32 {
	if pool == nodePoolAll {
		return int32(len(nodes))
	}
	var n int32
	for _, node := range nodes {
		if inPool(pool, node) {
			n++
		}
	}
	return n
}
