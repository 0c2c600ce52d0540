package volume

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/troupe-dev/troupe/messages"
)

// instance is one controller instance of a plugin: the node it runs on
// and whether its last probe was healthy.
type instance struct {
	NodeID  string
	Healthy bool
}

// controllerInstances lists a plugin's controller instances, sorted by node.
func controllerInstances(p *messages.CSIPlugin) []instance {
	out := make([]instance, 0, len(p.GetControllers()))
	for nodeID, info := range p.GetControllers() {
		out = append(out, instance{NodeID: nodeID, Healthy: info.GetHealthy()})
	}
	slices.SortFunc(out, func(a, b instance) int { return cmp.Compare(a.NodeID, b.NodeID) })
	return out
}

// liveNodes is the set of nodes whose status is ready. Scheduling
// eligibility and drain do not matter: controllers serve the whole cluster.
func liveNodes(nodes []*messages.Node) map[string]bool {
	live := map[string]bool{}
	for _, n := range nodes {
		if n.GetStatus() == messages.NodeStatusReady {
			live[n.GetID()] = true
		}
	}
	return live
}

// router picks the controller instance for each call: the healthy one on
// the lowest live node ID, and then the same one (sticky) for as long as it
// stays healthy and live and does not answer Unavailable. An instance that
// answered Unavailable is skipped until a call succeeds somewhere.
type router struct {
	sticky string
	failed map[string]bool
}

// candidates are the healthy instances on live nodes that have not failed,
// sorted by node ID.
func (r *router) candidates(instances []instance, live map[string]bool) []string {
	var out []string
	for _, in := range instances {
		if in.Healthy && live[in.NodeID] && !r.failed[in.NodeID] {
			out = append(out, in.NodeID)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// route picks the node whose controller instance gets the next call and
// makes it the sticky one; errNoController when there is none.
func (r *router) route(instances []instance, live map[string]bool) (string, error) {
	cands := r.candidates(instances, live)
	if len(cands) == 0 {
		return "", fmt.Errorf("%w (%d instances, %d failed)", errNoController, len(instances), len(r.failed))
	}
	pick := cands[0]
	switch {
	case slices.Contains(cands, r.sticky):
		pick = r.sticky
	case r.failed[r.sticky]:
		// move on to the next instance after the one that failed
		if i, _ := slices.BinarySearch(cands, r.sticky); i < len(cands) {
			pick = cands[i]
		}
	}
	r.sticky = pick
	return pick, nil
}

// unavailable marks nodeID's instance as unreachable.
func (r *router) unavailable(nodeID string) {
	if r.failed == nil {
		r.failed = map[string]bool{}
	}
	r.failed[nodeID] = true
}

// succeeded forgets the failures: every instance may be tried again.
func (r *router) succeeded() { r.failed = nil }

// exhausted starts over from the lowest instance.
func (r *router) exhausted() { r.failed, r.sticky = nil, "" }
