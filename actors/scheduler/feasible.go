package scheduler

import (
	"strconv"
	"strings"

	"github.com/troupe-dev/troupe/messages"
)

// AllocMetric keys for nodes that are filtered out. Constraints are keyed
// by constraintString. The first four never enter the candidate pool and
// are reported only in the metrics of failed placements.
const (
	filterNotReady       = "node not ready"
	filterDatacenter     = "datacenter not in job"
	filterIneligible     = "node not eligible"
	filterDraining       = "node draining"
	filterMissingDrivers = "missing drivers"
	filterDistinctHosts  = opDistinctHosts
)

// prefilter counts the nodes left out of the pool, and the pool by DC.
// Nodes outside the job's node pool (pool) are left out uncounted;
// inPool is how many nodes the job's node pool has.
type prefilter struct {
	notReady, datacenter, ineligible, draining int32
	byDC                                       map[string]int32
	dcOK                                       map[string]bool
	pool                                       string
	inPool                                     int32
}

// inDatacenter is inDatacenters memoised per datacenter name.
func (f *prefilter) inDatacenter(job *messages.Job, dc string) bool {
	ok, seen := f.dcOK[dc]
	if !seen {
		ok = inDatacenters(job.Datacenters, dc)
		f.dcOK[dc] = ok
	}
	return ok
}

// admit reports whether node joins a generic job's pool, counting why not.
func (f *prefilter) admit(job *messages.Job, n *messages.Node) bool {
	if !inPool(f.pool, n) {
		return false
	}
	f.inPool++
	switch {
	case n.Status != messages.NodeStatusReady:
		f.notReady++
	case !f.inDatacenter(job, n.Datacenter):
		f.datacenter++
	case n.SchedulingEligibility != messages.NodeSchedulingEligible:
		f.ineligible++
	case n.Drain:
		f.draining++
	default:
		f.byDC[n.Datacenter]++
		return true
	}
	return false
}

// into writes the counts into a failed placement's metric.
func (f *prefilter) into(m *messages.AllocMetric) {
	for k, v := range map[string]int32{filterNotReady: f.notReady,
		filterDatacenter: f.datacenter, filterIneligible: f.ineligible,
		filterDraining: f.draining} {
		if v > 0 {
			m.ConstraintFiltered[k] += v
		}
	}
	m.NodesAvailable = make(map[string]int32, len(f.byDC))
	for k, v := range f.byDC {
		m.NodesAvailable[k] = v
	}
}

// inDatacenters matches dc against the job's datacenters, which may use
// "*" globs; no datacenters means all.
func inDatacenters(dcs []string, dc string) bool {
	if len(dcs) == 0 {
		return true
	}
	for _, pat := range dcs {
		if globMatch(pat, dc) {
			return true
		}
	}
	return false
}

// globMatch matches s against a pattern in which "*" is any run of
// characters (ryanuber/go-glob semantics, as Nomad uses).
func globMatch(pat, s string) bool {
	if !strings.Contains(pat, "*") {
		return pat == s
	}
	parts := strings.Split(pat, "*")
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, mid := range parts[1 : len(parts)-1] {
		i := strings.Index(s, mid)
		if i < 0 {
			return false
		}
		s = s[i+len(mid):]
	}
	return strings.HasSuffix(s, last)
}

// propLimit is a distinct_property constraint and its running counts.
type propLimit struct {
	target   target
	limit    int32
	jobScope bool
	counts   map[string]int32
	reason   int
}

// groupFeas holds a task group's feasibility checks and, for generic jobs,
// the memoised static result per pool node.
type groupFeas struct {
	jobRules   []rule
	drivers    []string
	groupRules []rule
	hostsJob   bool
	hostsGroup bool
	hostReason int
	props      []*propLimit
	keys       []string
	keyIndex   map[string]int
	csi        []csiReq
	csiSrc     CSISource
	csiNS      string
	devices    *deviceAsk // nil when no task asks for devices
	devReason  int
	hostVols   []hostVolReq // nil when the group mounts no host volume
	hvReason   int
	cache      []uint16 // 0 unknown, 1 feasible, r+2 filtered by reason r
	cross      []uint16 // as cache, by node list position, kept across evaluations (NodeCache); nil without
}

const reasonDrivers = 0

func newGroupFeas(job *messages.Job, tg *messages.TaskGroup) groupFeas {
	f := groupFeas{keyIndex: map[string]int{}}
	f.key(filterMissingDrivers)
	f.jobRules = f.addConstraints(job.Constraints, true)
	for _, t := range tg.Tasks {
		if !contains(f.drivers, t.Driver) {
			f.drivers = append(f.drivers, t.Driver)
		}
	}
	cons := append([]*messages.Constraint(nil), tg.Constraints...)
	for _, t := range tg.Tasks {
		cons = append(cons, t.Constraints...)
	}
	f.groupRules = f.addConstraints(cons, false)
	if f.devices = newDeviceAsk(tg); f.devices != nil {
		f.devReason = f.key(filterMissingDevices)
	}
	f.addHostVolumes(tg)
	return f
}

func (f *groupFeas) key(k string) int {
	if i, ok := f.keyIndex[k]; ok {
		return i
	}
	f.keys = append(f.keys, k)
	f.keyIndex[k] = len(f.keys) - 1
	return len(f.keys) - 1
}

// addConstraints sorts constraints into static rules and the dynamic
// distinct_hosts / distinct_property checks.
func (f *groupFeas) addConstraints(cs []*messages.Constraint, jobScope bool) []rule {
	var rules []rule
	for _, c := range cs {
		switch c.Operand {
		case opDistinctHosts:
			if c.RTarget == "false" {
				continue
			}
			f.hostReason = f.key(filterDistinctHosts)
			f.hostsJob = f.hostsJob || jobScope
			f.hostsGroup = f.hostsGroup || !jobScope
		case opDistinctProperty:
			limit := int32(1)
			if n, err := strconv.Atoi(c.RTarget); err == nil && n > 0 {
				limit = int32(n)
			}
			f.props = append(f.props, &propLimit{target: parseTarget(c.LTarget), limit: limit,
				jobScope: jobScope, counts: map[string]int32{},
				reason: f.key(opDistinctProperty + ": " + c.LTarget)})
		default:
			rules = append(rules, newRule(c, f.key(constraintString(c))))
		}
	}
	return rules
}

// checkStatic returns the reason node is infeasible, or -1.
func (f *groupFeas) checkStatic(m *matcher, n *messages.Node) int {
	for i := range f.jobRules {
		r := &f.jobRules[i]
		if !m.checkRule(r, n) {
			return r.reason
		}
	}
	for _, d := range f.drivers {
		info := n.Drivers[d]
		if info == nil || !info.Detected || !info.Healthy {
			return reasonDrivers
		}
	}
	for i := range f.groupRules {
		r := &f.groupRules[i]
		if !m.checkRule(r, n) {
			return r.reason
		}
	}
	if f.devices != nil && !f.devices.fitsNode(m, n) {
		return f.devReason
	}
	if f.hostVols != nil && !f.hostVolumesFit(n) {
		return f.hvReason
	}
	return f.checkCSI(n)
}

// staticReason is checkStatic memoised per pool node.
func (p *planner) staticReason(gs *groupState, idx int) int {
	f := &gs.feas
	if f.cross != nil {
		c := &f.cross[p.pos[idx]]
		if *c == 0 {
			*c = uint16(f.checkStatic(p.match, p.pool[idx]) + 2)
		}
		return int(*c) - 2
	}
	if f.cache != nil {
		if v := f.cache[idx]; v != 0 {
			return int(v) - 2
		}
	}
	r := f.checkStatic(p.match, p.pool[idx])
	if f.cache != nil {
		f.cache[idx] = uint16(r + 2)
	}
	return r
}

// dynamicReason checks distinct_hosts and distinct_property against what
// the cluster and this plan already hold; it returns a reason or -1.
func (p *planner) dynamicReason(gs *groupState, idx int) int {
	f := &gs.feas
	if f.hostsGroup && gs.collisions[idx] > 0 {
		return f.hostReason
	}
	if f.hostsJob && p.jobCollisions(idx) > 0 {
		return f.hostReason
	}
	for _, pl := range f.props {
		v, ok := pl.target.resolve(p.pool[idx])
		if !ok || pl.counts[v] >= pl.limit {
			return pl.reason
		}
	}
	return -1
}

// jobCollisions counts the job's proposed allocs on a pool node.
func (p *planner) jobCollisions(idx int) int32 {
	var n int32
	for _, gs := range p.groups {
		n += gs.collisions[idx]
	}
	return n
}
