package server

import (
	"context"
	"fmt"
	"time"

	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

// GCConfig is the garbage collector's configuration (the agent's
// eval_gc_threshold, job_gc_threshold, node_gc_threshold,
// job_gc_interval and job_tracked_versions). Zero fields take Nomad's
// defaults.
type GCConfig struct {
	EvalThreshold time.Duration // 1h
	JobThreshold  time.Duration // 4h
	NodeThreshold time.Duration // 24h
	Interval      time.Duration // 5m: how often the leader collects
	// JobVersions is how many versions of a job are kept (6): a job that
	// keeps more (the limit was lowered) is trimmed.
	JobVersions int
}

func (c GCConfig) withDefaults() GCConfig {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.EvalThreshold, time.Hour)
	def(&c.JobThreshold, 4*time.Hour)
	def(&c.NodeThreshold, 24*time.Hour)
	def(&c.Interval, 5*time.Minute)
	if c.JobVersions <= 0 {
		c.JobVersions = state.DefaultJobVersions
	}
	return c
}

// Cutoffs are the times before which state is old enough at now; force
// (PUT /v1/system/gc) uses thresholds of 0, as Nomad's forced GC does.
func (c GCConfig) Cutoffs(now time.Time, force bool) state.GCCutoffs {
	if force {
		n := now.UnixNano()
		return state.GCCutoffs{Eval: n, Job: n, Node: n}
	}
	c = c.withDefaults()
	return state.GCCutoffs{
		Eval: now.Add(-c.EvalThreshold).UnixNano(),
		Job:  now.Add(-c.JobThreshold).UnixNano(),
		Node: now.Add(-c.NodeThreshold).UnixNano(),
	}
}

// GCState is what the collector reads (the state store's snapshot).
type GCState interface {
	Jobs() []*messages.Job
	JobVersions(namespace, id string) []*messages.Job
	Evals() []*messages.Evaluation
	Nodes() []*messages.Node
	CSIPlugins() []*messages.CSIPlugin
	JobCollectable(j *messages.Job, c state.GCCutoffs) bool
	EvalCollectable(e *messages.Evaluation, c state.GCCutoffs) bool
	NodeCollectable(n *messages.Node, c state.GCCutoffs) bool
	PluginCollectable(p *messages.CSIPlugin) bool
}

var _ GCState = (*state.Snap)(nil)

// DecideGC is the pure decision: the purges to propose for s at cutoffs
// c, each at most state.MaxGCItems items (none: nothing to collect). A
// collected job takes its evaluations and allocations with it; other
// evaluations go with the allocations they placed; a job that stays but
// keeps more than keep versions is trimmed to keep. The FSM checks every
// item again when it applies.
func DecideGC(s GCState, c state.GCCutoffs, keep int) []*messages.GarbageCollect {
	b := gcBatcher{cut: c, keep: uint32(max(keep, 1))}
	jobs := map[string]bool{}
	for _, j := range s.Jobs() {
		if s.JobCollectable(j, c) {
			jobs[state.JobKey(j.Namespace, j.ID)] = true
			b.add(func(g *messages.GarbageCollect) {
				g.Jobs = append(g.Jobs, &messages.GCJob{Namespace: j.Namespace, ID: j.ID})
			})
			continue
		}
		if len(s.JobVersions(j.Namespace, j.ID)) > int(b.keep) {
			b.add(func(g *messages.GarbageCollect) {
				g.TrimJobs = append(g.TrimJobs, &messages.GCJob{Namespace: j.Namespace, ID: j.ID})
			})
		}
	}
	for _, e := range s.Evals() {
		if !jobs[state.JobKey(e.Namespace, e.JobID)] && s.EvalCollectable(e, c) {
			b.add(func(g *messages.GarbageCollect) { g.EvalIDs = append(g.EvalIDs, e.ID) })
		}
	}
	for _, n := range s.Nodes() {
		if s.NodeCollectable(n, c) {
			b.add(func(g *messages.GarbageCollect) { g.NodeIDs = append(g.NodeIDs, n.ID) })
		}
	}
	for _, p := range s.CSIPlugins() {
		if s.PluginCollectable(p) {
			b.add(func(g *messages.GarbageCollect) { g.PluginIDs = append(g.PluginIDs, p.ID) })
		}
	}
	return b.out
}

type gcBatcher struct {
	cut  state.GCCutoffs
	keep uint32
	out  []*messages.GarbageCollect
	n    int
}

func (b *gcBatcher) add(put func(*messages.GarbageCollect)) {
	if len(b.out) == 0 || b.n == state.MaxGCItems {
		b.out = append(b.out, &messages.GarbageCollect{EvalCutoff: b.cut.Eval, JobCutoff: b.cut.Job, NodeCutoff: b.cut.Node,
			KeepVersions: b.keep})
		b.n = 0
	}
	put(b.out[len(b.out)-1])
	b.n++
}

// GCTotals is what a collection purged, and the raft index of its last
// purge (0: nothing proposed).
type GCTotals struct {
	Index                               uint64
	Evals, Jobs, Allocs, Nodes, Plugins int
	Versions                            int // old job versions trimmed
}

// CollectGarbage decides on s and proposes each purge in turn, returning
// once all committed (or at the first error); jobs keep at most keep
// versions.
func CollectGarbage(ctx context.Context, p Proposer, s GCState, c state.GCCutoffs, keep int, now time.Time) (GCTotals, error) {
	var t GCTotals
	for _, g := range DecideGC(s, c, keep) {
		resp, idx, err := p.Apply(ctx, &messages.Command{Time: now.UnixNano(), Cmd: &messages.Command_GarbageCollect{GarbageCollect: g}})
		if err == nil {
			err, _ = resp.(error)
		}
		if err != nil {
			return t, fmt.Errorf("%w: %w", ErrGC, err)
		}
		t.Index = idx
		if r, ok := resp.(*state.GCResult); ok {
			t.Evals += r.Evals
			t.Jobs += r.Jobs
			t.Allocs += r.Allocs
			t.Nodes += r.Nodes
			t.Plugins += r.Plugins
			t.Versions += r.Versions
		}
	}
	return t, nil
}
