package scheduler

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/messages"
)

// cachedJobs are jobs whose static checks differ: none, a constraint that
// filters half the nodes, and a driver only some nodes have.
func cachedJobs() []*messages.Job {
	plain := testJob("plain", jobTypeService, 20)
	constrained := testJob("constrained", jobTypeService, 20)
	constrained.Constraints = []*messages.Constraint{{LTarget: "${meta.rack}", Operand: "=", RTarget: "r1"}}
	docker := testJob("docker", jobTypeBatch, 5)
	docker.TaskGroups[0].Tasks[0].Driver = "docker"
	docker.Datacenters = []string{"dc*"}
	return []*messages.Job{plain, constrained, docker}
}

func cachedNodes() []*messages.Node {
	nodes := SimulatedNodes(200, 2)
	for i, n := range nodes {
		n.Meta = map[string]string{"rack": fmt.Sprintf("r%d", i%2)}
		if i%3 == 0 {
			n.Drivers = map[string]*messages.DriverInfo{"exec": {Detected: true, Healthy: true},
				"docker": {Detected: true, Healthy: true}}
		}
	}
	return nodes
}

// TestNodeCacheKeepsThePlan: evaluations planned with one NodeCache make
// exactly the plans made without, before and after a node changes in
// place, and the cache holds one entry per distinct set of static checks.
func TestNodeCacheKeepsThePlan(t *testing.T) {
	jobs := cachedJobs()
	s := newMemSnapshot(cachedNodes(), jobs...)
	cache := newNodeCache()
	run := func(round int) {
		for i, job := range jobs {
			opts := prefixedOpts(uint64(round*10+i), fmt.Sprint("c", round, i))
			want := processWith(t, s, testEval(job), opts)
			opts = prefixedOpts(uint64(round*10+i), fmt.Sprint("c", round, i))
			opts.NodeCache = cache
			got := processWith(t, s, testEval(job), opts)
			require.True(t, proto.Equal(want, got), "round %d job %s: the cache changed the plan", round, job.ID)
			if job.ID != "docker" || round == 0 {
				require.NotEmpty(t, got.Place, "round %d job %s", round, job.ID)
			}
		}
	}
	run(0)
	l := cache.pools[nodePoolDefault]
	require.NotNil(t, l)
	require.Len(t, l.feas, len(jobs), "one set of static checks per job")
	require.Len(t, l.adm, 2, "one admission per set of datacenters")
	for sig, v := range l.feas {
		known := 0
		for _, r := range v {
			if r != 0 {
				known++
			}
		}
		require.Positive(t, known, "signature %q was filled", sig)
	}

	// Change nodes in place (MemSnapshot keeps its slice): every node of
	// rack r1 moves to r0 and loses docker, and the first node shrinks.
	for _, n := range s.Nodes() {
		c := proto.Clone(n).(*messages.Node)
		c.Meta = map[string]string{"rack": "r0"}
		c.Drivers = map[string]*messages.DriverInfo{"exec": {Detected: true, Healthy: true}}
		if n.ID == s.Nodes()[0].ID {
			c.NodeResources.Memory.MemoryMB = 300
		}
		if n.ID == s.Nodes()[1].ID {
			c.Drain = true // leaves the pool: the admission kept must not
		}
		s.AddNode(c)
	}
	jobs[1].Constraints[0].RTarget = "r0" // a new signature, still placeable
	docker := jobs[2]
	opts := prefixedOpts(7, "gone")
	opts.NodeCache = cache
	plan := processWith(t, s, testEval(docker), opts)
	require.Empty(t, plan.Place, "no node has docker any more")
	require.Contains(t, plan.EvalUpdate.FailedTGAllocs, "web")
	run(1)
	for _, a := range cache.pools[nodePoolDefault].adm {
		require.Len(t, a.pos, len(s.Nodes())-1, "the drained node is out")
	}
}

// TestNodeCacheSkipsWhatDependsOnMore: groups with devices or CSI volumes
// are not cached across evaluations.
func TestNodeCacheSkipsWhatDependsOnMore(t *testing.T) {
	job := testJob("web", jobTypeService, 1)
	f := newGroupFeas(job, job.TaskGroups[0])
	f.cache = []uint16{0}
	require.NotEmpty(t, staticSignature(job, job.TaskGroups[0], &f))
	f.csi = []csiReq{{perAlloc: true}}
	require.Empty(t, staticSignature(job, job.TaskGroups[0], &f))
	f.csi, f.devices = nil, &deviceAsk{}
	require.Empty(t, staticSignature(job, job.TaskGroups[0], &f))
}

// loggedSnap is a MemSnapshot with a usage log (UsageLogSource): every
// plan it applies names the nodes whose usage changed.
type loggedSnap struct {
	*MemSnapshot
	log []string // log[i] changed at version i+1
}

func (s *loggedSnap) UsageVersion() (any, uint64) { return s.MemSnapshot, uint64(len(s.log)) }

func (s *loggedSnap) UsageChangedSince(epoch any, gen uint64, fn func(string)) bool {
	if epoch != any(s.MemSnapshot) || gen > uint64(len(s.log)) {
		return false
	}
	for _, id := range s.log[gen:] {
		fn(id)
	}
	return true
}

func (s *loggedSnap) apply(plan *messages.ApplyPlan) {
	s.ApplyPlan(plan)
	for _, a := range plan.Place {
		s.log = append(s.log, a.NodeID)
	}
	for _, st := range plan.Stop {
		s.log = append(s.log, s.allocs[st.AllocID].NodeID)
	}
}

// TestNodeCacheKeepsUsageOfUnchangedNodes: with a usage log the cache
// reads again only the nodes that changed, and every plan is the plan
// made without the cache, as placements fill the nodes up.
func TestNodeCacheKeepsUsageOfUnchangedNodes(t *testing.T) {
	nodes := SimulatedNodes(60, 1)
	s := &loggedSnap{MemSnapshot: newMemSnapshot(nodes)}
	cache := newNodeCache()
	// As the actor's pipeline does: each plan is made while the one
	// before is still pending, and committed after.
	pending, prev := newPending(), (*messages.ApplyPlan)(nil)
	for round := range 12 {
		job := testJob(fmt.Sprint("job", round), jobTypeService, 15)
		s.AddJob(job)
		opts := prefixedOpts(uint64(round), fmt.Sprint("u", round))
		opts.Pending = pending
		want := processWith(t, s.MemSnapshot, testEval(job), opts) // no log, no cache
		opts = prefixedOpts(uint64(round), fmt.Sprint("u", round))
		opts.Pending, opts.NodeCache = pending, cache
		got := processWith(t, s, testEval(job), opts)
		require.True(t, proto.Equal(want, got), "round %d: the cache changed the plan", round)
		_, gen := s.UsageVersion()
		require.Equal(t, gen, cache.pools[nodePoolDefault].gen, "the cache is at the snapshot's version")
		pending.Add(got)
		if prev != nil {
			s.apply(prev)
			pending.Remove(prev)
		}
		prev = got
	}
	require.NotNil(t, cache.pools[nodePoolDefault].posByID, "changes were applied node by node")
}
