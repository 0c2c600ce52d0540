package scheduler

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/troupe-dev/troupe/messages"
	"google.golang.org/protobuf/proto"
)

// Snapshot is the read view of cluster state the scheduler plans against
// (the state store's read transaction implements it). Nodes must come back
// in a stable order for Process to be deterministic for a given Rand seed.
type Snapshot interface {
	JobByID(namespace, id string) *messages.Job // current version; nil if unknown/purged
	Nodes() []*messages.Node                    // all nodes
	NodeByID(id string) *messages.Node
	AllocsByJob(namespace, jobID string) []*messages.Allocation
	AllocsByNode(nodeID string) []*messages.Allocation
}

// NodeUsageSource may be implemented by a Snapshot that keeps running
// totals of the resources its non-terminal allocations use on each node.
// Process then reads the totals instead of summing AllocsByNode.
type NodeUsageSource interface {
	NodeUsage(nodeID string) (cpuShares, memoryMB, diskMB int64)
}

// UsageLogSource is a NodeUsageSource that says which nodes' usage
// changed since a version it gave (cluster/state's Snap does): with it a
// NodeCache keeps every other node's usage from one evaluation to the
// next. fn is called for each node changed after (epoch, gen); false
// means it cannot tell (another epoch, or too far back).
type UsageLogSource interface {
	NodeUsageSource
	UsageVersion() (epoch any, gen uint64)
	UsageChangedSince(epoch any, gen uint64, fn func(nodeID string)) bool
}

// Options are the effects Process needs, injected so that it stays pure.
type Options struct {
	Now   time.Time
	NewID func() string
	Rand  *rand.Rand // seeded by the caller
	// MinDynamicPort and MaxDynamicPort bound the ports given to dynamic
	// ports on nodes that do not set their own range; 0 means
	// defaultMinDynamicPort / defaultMaxDynamicPort.
	MinDynamicPort, MaxDynamicPort int32
	// Job, when set, is planned instead of the snapshot's version of the
	// evaluation's job (a dry run of a job not registered yet).
	Job *messages.Job
	// MaxPlacements bounds the allocations one plan places (0: no bound);
	// the rest are left to a follow-up evaluation, so one huge job is
	// placed in plans of a bounded size.
	MaxPlacements int
	// Pending is what plans proposed but not committed yet place: counted
	// as used on their nodes (nil: nothing).
	Pending *Pending
	// SchedulerAlgorithm is the scheduler configuration's algorithm for
	// this evaluation: algorithmBinPack ("binpack") ranks the fullest node
	// that fits first, algorithmSpread ("spread") the emptiest; "" reads
	// it from the snapshot (SchedulerConfigSource), else binpack.
	SchedulerAlgorithm string
	// ScoreMetaData keeps every placement's scores in its metrics, not only
	// those of groups with spreads or affinities (job plan sets it).
	ScoreMetaData bool
	// NodeCache keeps what is derived from nodes alone across
	// evaluations (nil: nothing kept); the plan is the same either way.
	NodeCache *NodeCache
}

// Job types.
const (
	jobTypeService  = "service"
	jobTypeBatch    = "batch"
	jobTypeSystem   = "system"
	jobTypeSysBatch = "sysbatch"
)

// Triggers and descriptions the scheduler writes (the statuses are
// messages').
const (
	triggerQueued      = "queued-allocs"
	triggerAllocFail   = "alloc-failure"
	blockedDescription = "created due to placement conflicts"
	delayedDescription = "created for delayed rescheduling"
)

// Descriptions of stopped allocations, as Nomad words them.
const (
	descNotNeeded   = "alloc not needed due to job update"
	descUpdating    = "alloc is being updated due to job update"
	descMigrating   = "alloc is being migrated"
	descLost        = "alloc is lost since its node is down"
	descRescheduled = "alloc was rescheduled because it failed"
	descNodeTainted = "alloc not needed as node is tainted"
)

// process computes the plan for one evaluation. It reads snap, never
// writes it, and does no I/O: the caller proposes the returned plan.
func process(snap Snapshot, eval *messages.Evaluation, opts Options) (*messages.ApplyPlan, error) {
	plan, _, err := processDeploy(snap, eval, opts)
	return plan, err
}

// processDeploy is process, with the deployment the plan creates (nil:
// none), to be committed before the plan.
func processDeploy(snap Snapshot, eval *messages.Evaluation, opts Options) (*messages.ApplyPlan, *messages.Deployment, error) {
	switch {
	case snap == nil:
		return nil, nil, errNilSnapshot
	case eval == nil:
		return nil, nil, errNilEval
	case opts.NewID == nil:
		return nil, nil, errMissingNewID
	case opts.Rand == nil:
		return nil, nil, errMissingRand
	}
	p := newPlanner(snap, eval, opts)
	if err := p.run(); err != nil {
		return nil, nil, fmt.Errorf("eval %s: %w", eval.ID, err)
	}
	return p.finish(), p.deployNew, nil
}

// planner holds the state of one Process call.
type planner struct {
	snap      Snapshot
	usageSrc  NodeUsageSource // snap's usage totals, when it keeps them
	eval      *messages.Evaluation
	job       *messages.Job
	opts      Options
	plan      *messages.ApplyPlan
	match     *matcher
	jobAllocs []*messages.Allocation
	nodes     map[string]*messages.Node // NodeByID cache
	stopped   map[string]bool           // alloc IDs this plan stops
	groups    map[string]*groupState
	failed    map[string]*messages.AllocMetric
	queued    map[string]int32
	deferred  []*messages.AllocStopUpdate // conditional stops that took effect
	inPlaceOK map[versionGroup]bool       // inPlace's answers; nil until asked
	capped    bool                        // MaxPlacements left placements for a follow-up
	spreadFit bool                        // SchedulerAlgorithm is algorithmSpread
	placedNew int                         // new allocations placed (not in-place updates)

	deploy       *messages.Deployment // the job version's deployment (rolling.go)
	deployNew    *messages.Deployment // deploy, when this plan creates it
	deployLooked bool

	pool      []*messages.Node // candidate nodes, shuffled for generic jobs
	pos       []int32          // with cached: each pool node's position in the node list
	cached    *nodeListCache   // Options.NodeCache's entries for this job's pool; nil without
	logged    bool             // cached keeps the snapshot's usage (UsageLogSource)
	pendingAt []bool           // with cached: per list position, whether Options.Pending has placements there
	pooled    bool
	index     map[string]int32 // node ID -> position in pool
	usage     []nodeUsage
	ports     []*nodePorts   // per pool node, built lazily; nil when no group asks for ports
	devs      []*nodeDevices // per pool node, built lazily; nil when no group asks for devices
	cores     []nodeCores    // per pool node, loaded lazily; nil until a group or alloc has cores
	devSlabs  deviceSlabs
	cursor    int
	limit     int
	pre       prefilter
	metric    selectMetric

	config     *messages.SchedulerConfiguration // in force for this evaluation
	preemption bool                             // this job's scheduler may preempt
	evict      *preemptor                       // nil until a placement needs preemption
}

func newPlanner(snap Snapshot, eval *messages.Evaluation, opts Options) *planner {
	src, _ := snap.(NodeUsageSource)
	return &planner{
		snap:      snap,
		usageSrc:  src,
		eval:      eval,
		opts:      opts,
		spreadFit: opts.SchedulerAlgorithm == algorithmSpread,
		plan:      &messages.ApplyPlan{EvalID: eval.ID},
		match:     newMatcher(),
		nodes:     map[string]*messages.Node{},
		stopped:   map[string]bool{},
		groups:    map[string]*groupState{},
		failed:    map[string]*messages.AllocMetric{},
		queued:    map[string]int32{},
	}
}

func (p *planner) run() error {
	p.job = p.opts.Job
	if p.job == nil {
		p.job = p.snap.JobByID(p.eval.Namespace, p.eval.JobID)
	}
	p.configure()
	p.jobAllocs = sortedAllocs(p.snap.AllocsByJob(p.eval.Namespace, p.eval.JobID))
	if p.job != nil {
		for _, tg := range p.job.TaskGroups {
			p.queued[tg.Name] = 0
		}
	}
	// A periodic or parameterized job is a template: its children run, it places nothing
	// (an evaluation of it, from a scale or a node event, stops what it
	// may have had before it became periodic), as Nomad's scheduler does.
	if p.job == nil || p.job.Stop || p.job.IsParent() {
		p.stopAll()
		return nil
	}
	switch p.job.Type {
	case jobTypeService, jobTypeBatch, "":
		p.runGeneric()
	case jobTypeSystem, jobTypeSysBatch:
		p.runSystem()
	default:
		return fmt.Errorf("%w: %q", errUnknownJobType, p.job.Type)
	}
	return nil
}

// sortedAllocs copies allocs ordered by group, name index and ID so that
// plans do not depend on the snapshot's iteration order.
func sortedAllocs(in []*messages.Allocation) []*messages.Allocation {
	out := slices.Clone(in)
	slices.SortFunc(out, func(a, b *messages.Allocation) int {
		return cmp.Or(cmp.Compare(a.TaskGroup, b.TaskGroup),
			cmp.Compare(a.Index, b.Index), cmp.Compare(a.ID, b.ID))
	})
	return out
}

// stopAll stops every non-terminal allocation of a stopped or purged job.
func (p *planner) stopAll() {
	for _, a := range p.jobAllocs {
		if a.TerminalStatus() {
			continue
		}
		cs := ""
		if p.nodeLost(a.NodeID, nil) {
			cs = messages.AllocClientStatusLost
		}
		p.stop(a, descNotNeeded, cs)
	}
}

// node returns a node by ID through a per-call cache.
func (p *planner) node(id string) *messages.Node {
	if n, ok := p.nodes[id]; ok {
		return n
	}
	n := p.snap.NodeByID(id)
	p.nodes[id] = n
	return n
}

// nodeLost reports whether allocations on node id are lost: the node is
// gone, down, or disconnected without a disconnect window in tg.
func (p *planner) nodeLost(id string, tg *messages.TaskGroup) bool {
	n := p.node(id)
	switch {
	case n == nil || n.Status == messages.NodeStatusDown:
		return true
	case n.Status == messages.NodeStatusDisconnected:
		return tg == nil || !hasDisconnectWindow(tg)
	}
	return false
}

// stop adds an unconditional stop to the plan and releases the alloc.
func (p *planner) stop(a *messages.Allocation, desc, clientStatus string) {
	p.plan.Stop = append(p.plan.Stop, stopUpdate(a, desc, clientStatus))
	p.release(a)
}

func stopUpdate(a *messages.Allocation, desc, clientStatus string) *messages.AllocStopUpdate {
	return &messages.AllocStopUpdate{
		AllocID:            a.ID,
		DesiredStatus:      messages.AllocDesiredStatusStop,
		DesiredDescription: desc,
		ClientStatus:       clientStatus,
	}
}

// finish builds the eval update and the blocked eval.
func (p *planner) finish() *messages.ApplyPlan {
	p.plan.Stop = append(p.plan.Stop, p.deferred...)
	p.plan.NewEvals = append(p.plan.NewEvals, p.preemptionEvals()...)
	upd := proto.Clone(p.eval).(*messages.Evaluation)
	upd.Status = messages.EvalStatusComplete
	upd.ModifyTime = p.opts.Now.UnixNano()
	upd.QueuedAllocations = p.queued
	upd.FailedTGAllocs = nil // a blocked eval's old failures are not this plan's
	if d := p.deploy; d != nil && d.Active() && upd.DeploymentID == "" {
		upd.DeploymentID = d.ID
	}
	if len(p.failed) > 0 {
		upd.FailedTGAllocs = p.failed
		switch {
		case p.capped:
			// The continuation plans the job again and blocks, once, when
			// it is the last: one blocked evaluation, not one per plan.
		case p.eval.Status == messages.EvalStatusBlocked:
			upd.Status = messages.EvalStatusBlocked // reblock: still waiting for capacity
		default:
			b := p.blockedEval()
			upd.BlockedEval = b.ID
			p.plan.NewEvals = append(p.plan.NewEvals, b)
		}
	}
	if p.capped {
		p.plan.NewEvals = append(p.plan.NewEvals, p.continuationEval())
	}
	p.plan.EvalUpdate = upd
	return p.plan
}

// continuationEval plans, once this plan is committed, what MaxPlacements
// left out.
func (p *planner) continuationEval() *messages.Evaluation {
	now := p.opts.Now.UnixNano()
	return &messages.Evaluation{ID: p.opts.NewID(), Namespace: p.eval.Namespace, Priority: p.eval.Priority,
		Type: p.eval.Type, TriggeredBy: triggerQueued, JobID: p.eval.JobID, JobModifyIndex: p.eval.JobModifyIndex,
		Status: messages.EvalStatusPending, StatusDescription: continuationDescription, PreviousEval: p.eval.ID,
		CreateTime: now, ModifyTime: now}
}

const continuationDescription = "placing the rest: the previous plan reached the placements-per-evaluation limit"

func (p *planner) blockedEval() *messages.Evaluation {
	now := p.opts.Now.UnixNano()
	failed := make(map[string]*messages.AllocMetric, len(p.failed))
	for k, v := range p.failed {
		failed[k] = proto.Clone(v).(*messages.AllocMetric)
	}
	return &messages.Evaluation{
		ID:                p.opts.NewID(),
		Namespace:         p.eval.Namespace,
		Priority:          p.eval.Priority,
		Type:              p.eval.Type,
		TriggeredBy:       triggerQueued,
		JobID:             p.eval.JobID,
		JobModifyIndex:    p.eval.JobModifyIndex,
		Status:            messages.EvalStatusBlocked,
		StatusDescription: blockedDescription,
		PreviousEval:      p.eval.ID,
		FailedTGAllocs:    failed,
		CreateTime:        now,
		ModifyTime:        now,
	}
}

func cloneAlloc(a *messages.Allocation) *messages.Allocation {
	return proto.Clone(a).(*messages.Allocation)
}
