package node

import (
	"context"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-dev/troupe/actors"
	"github.com/troupe-dev/troupe/actors/server/evals"
	"github.com/troupe-dev/troupe/messages"
)

// DrainTick is how often a draining node's actor drives its drain.
var DrainTick = time.Second

// drainTick is the drain timer's message to self.
type drainTick struct{}

// drainStep is what one look at a draining node decides: pure, from the
// node, its allocations and the pending evaluations.
type drainStep struct {
	evalJobs []*messages.Job        // jobs to evaluate (their allocs migrate)
	stop     []*messages.Allocation // allocs to stop now (deadline passed, or system allocs last)
	done     bool                   // nothing is left: the drain is complete
}

// planDrain decides the next drain step. Service and batch allocations
// migrate through the scheduler, which honours each group's migrate
// max_parallel; one evaluation per job is kept pending. System allocations
// are stopped last (unless IgnoreSystemJobs). Past the deadline every
// remaining allocation is stopped.
func planDrain(view StateView, n *messages.Node, now time.Time) drainStep {
	var out drainStep
	ds := n.GetDrainStrategy()
	forced := ds.GetForceDeadline() > 0 && now.UnixNano() >= ds.GetForceDeadline()
	var system []*messages.Allocation
	jobs := map[string]*messages.Job{}
	for _, a := range view.AllocsByNode(n.GetID()) {
		if a.ClientTerminalStatus() || a.GetDesiredStatus() != messages.AllocDesiredStatusRun {
			continue
		}
		j := view.JobByID(a.GetNamespace(), a.GetJobID())
		if j == nil {
			out.stop = append(out.stop, a) // its job is gone: nothing to migrate
			continue
		}
		if j.GetType() == "system" {
			if !ds.GetIgnoreSystemJobs() {
				system = append(system, a)
			}
			continue
		}
		if forced {
			out.stop = append(out.stop, a)
			continue
		}
		jobs[a.GetNamespace()+"/"+a.GetJobID()] = j
	}
	for _, j := range jobs {
		if !hasPendingEval(view, j) {
			out.evalJobs = append(out.evalJobs, j)
		}
	}
	if len(jobs) == 0 && len(out.stop) == 0 {
		out.stop = append(out.stop, system...)
		out.done = len(system) == 0
	}
	return out
}

func hasPendingEval(view StateView, j *messages.Job) bool {
	for _, e := range view.EvalsByJob(j.GetNamespace(), j.GetID()) {
		if e.GetStatus() == messages.EvalStatusPending {
			return true
		}
	}
	return false
}

// drain drives the node's drain one step and re-arms the drain timer
// while it lasts.
func (s *server) drain(ctx actor.Context, view StateView) {
	n := view.NodeByID(s.spec.NodeID)
	if !n.GetDrain() {
		return
	}
	now := s.spec.Clock.Now()
	step := planDrain(view, n, now)
	var cmds []*messages.Command
	if len(step.evalJobs) > 0 {
		up := &messages.UpsertEvals{}
		for _, j := range step.evalJobs {
			up.Evals = append(up.Evals, evals.ForNodeDrain(j, s.spec.NodeID, now))
		}
		cmds = append(cmds, &messages.Command{Cmd: &messages.Command_UpsertEvals{UpsertEvals: up}})
	}
	for _, a := range step.stop {
		j := view.JobByID(a.GetNamespace(), a.GetJobID())
		if j == nil {
			j = &messages.Job{ID: a.GetJobID(), Namespace: a.GetNamespace(), Type: "service", Priority: 50}
		}
		cmds = append(cmds, &messages.Command{Cmd: &messages.Command_StopAlloc{StopAlloc: &messages.StopAlloc{
			AllocID: a.GetID(), DesiredDescription: "alloc stopped by the drain of node " + n.GetName(),
			Eval: evals.ForNodeDrain(j, s.spec.NodeID, now)}}})
	}
	if step.done {
		s.log.Info("node drain complete")
		cmds = append(cmds, &messages.Command{Cmd: &messages.Command_UpdateNodeDrain{UpdateNodeDrain: &messages.UpdateNodeDrain{NodeID: s.spec.NodeID}}})
	}
	s.propose(ctx, cmds)
	if !step.done && s.drainTimer == nil {
		self, root := ctx.Self(), ctx.ActorSystem().Root
		s.drainTimer = s.spec.Clock.AfterFunc(DrainTick, func() { root.Send(self, &drainTick{}) })
	}
}

func (s *server) onDrainTick(ctx actor.Context) {
	s.drainTimer = nil
	s.drain(ctx, s.spec.State())
}

// propose commits commands in order from a worker.
func (s *server) propose(ctx actor.Context, cmds []*messages.Command) {
	if len(cmds) == 0 {
		return
	}
	prop, log, now := s.spec.Proposer, s.log, s.spec.Clock.Now().UnixNano()
	actors.Go(ctx, func(life context.Context) any {
		c, cancel := context.WithTimeout(life, 30*time.Second)
		defer cancel()
		for _, cmd := range cmds {
			cmd.Time = now
			if _, _, err := prop.Apply(c, cmd); err != nil {
				log.Error("drain: committing failed", "error", err)
				return nil
			}
		}
		return nil
	})
}
