package state

import (
	"slices"
	"sort"
)

// usageLogLen is how many recent write transactions the usage log names
// the changed nodes of. The scheduler reads it once an evaluation; a
// reader further behind than this reads every node's usage again.
const usageLogLen = 64

// usageChange names the nodes whose usage one write transaction changed.
type usageChange struct {
	gen   uint64
	nodes []string
}

// logUsage records that transaction gen changed the usage of nodes. The
// log is copied, never edited in place: published tables share the old.
func (t *allocTable) logUsage(gen uint64, nodes []string) {
	keep := t.usageLog[max(0, len(t.usageLog)-(usageLogLen-1)):]
	t.usageLog = append(slices.Clip(keep), usageChange{gen: gen, nodes: nodes})
}

// UsageVersion names the node usage this snapshot holds: epoch changes
// when a restore replaces the state, gen with every write that changed a
// node's usage (the scheduler's UsageLogSource).
func (s *Snap) UsageVersion() (epoch any, gen uint64) {
	if n := len(s.allocs.usageLog); n > 0 {
		gen = s.allocs.usageLog[n-1].gen
	}
	return s.db, gen
}

// UsageChangedSince calls fn with each node whose usage changed after the
// version (epoch, gen) that UsageVersion gave, up to this snapshot's. It
// reports false, having called nothing, when it cannot tell: another
// epoch, or a version older than the log reaches back.
func (s *Snap) UsageChangedSince(epoch any, gen uint64, fn func(nodeID string)) bool {
	if epoch != any(s.db) {
		return false
	}
	log := s.allocs.usageLog
	// log[i:] changed after gen. When every entry did, the ones before
	// log[0] may have been dropped (a full log drops its oldest).
	i := sort.Search(len(log), func(j int) bool { return log[j].gen > gen })
	if i == 0 && len(log) == usageLogLen {
		return false
	}
	for _, c := range log[i:] {
		for _, id := range c.nodes {
			fn(id)
		}
	}
	return true
}
