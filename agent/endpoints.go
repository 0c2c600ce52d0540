package agent

import (
	"context"
	"fmt"

	"github.com/troupe-dev/troupe/messages"
)

// registerNode commits a node and an evaluation for every system job, so
// that system jobs land on the new node. It runs on the leader.
func (a *Agent) registerNode(ctx context.Context, n *messages.Node) (uint64, error) {
	cmd := &messages.RegisterNode{Node: n}
	var evals []*messages.Evaluation
	for _, j := range a.store.Snapshot().Jobs() {
		if j.GetType() == "system" && !j.GetStop() {
			evals = append(evals, a.newEval(j, "node-update", n.GetID()))
		}
	}
	if len(evals) > 0 {
		cmd.Eval = evals[0]
	}
	_, index, err := a.raft.Apply(ctx, &messages.Command{Cmd: &messages.Command_RegisterNode{RegisterNode: cmd}})
	if err != nil {
		return 0, err
	}
	if len(evals) > 1 {
		up := &messages.UpsertEvals{Evals: evals[1:]}
		_, index, err = a.raft.Apply(ctx, &messages.Command{Cmd: &messages.Command_UpsertEvals{UpsertEvals: up}})
	}
	return index, err
}

// updateAllocs commits client status updates. It runs on the leader. An
// allocation that newly failed gets an evaluation (the scheduler decides
// whether to reschedule it); one that ended frees capacity, so blocked
// evaluations are retried.
func (a *Agent) updateAllocs(ctx context.Context, allocs []*messages.Allocation) (uint64, error) {
	snap := a.store.Snapshot()
	cmd := &messages.UpdateAllocsFromClient{Allocs: allocs}
	freed := false
	seen := map[string]bool{}
	for _, up := range allocs {
		old := snap.AllocByID(up.GetID())
		if old == nil || old.GetClientStatus() == up.GetClientStatus() {
			continue
		}
		if messages.ClientTerminal(up.GetClientStatus()) {
			freed = true
		}
		key := old.GetNamespace() + "/" + old.GetJobID()
		trigger, why := "", ""
		switch {
		case up.GetClientStatus() == "failed" && old.GetDesiredStatus() == "run":
			trigger, why = "alloc-failure", failureDescription(up)
		case old.GetClientStatus() == "unknown":
			trigger = "reconnect" // the scheduler settles original vs replacement
		}
		if trigger != "" && !seen[key] {
			if j := snap.JobByID(old.GetNamespace(), old.GetJobID()); j != nil && !j.GetStop() {
				seen[key] = true
				ev := a.newEval(j, trigger, "")
				ev.StatusDescription = why
				cmd.Evals = append(cmd.Evals, ev)
			}
		}
	}
	_, index, err := a.raft.Apply(ctx, &messages.Command{Cmd: &messages.Command_UpdateAllocsFromClient{UpdateAllocsFromClient: cmd}})
	if err != nil {
		return 0, fmt.Errorf("agent: update allocs: %w", err)
	}
	if freed {
		a.sys.Root.Send(a.serverPID, &capacityChanged{})
	}
	return index, nil
}

// failureDescription says, for the evaluation a failed allocation
// triggers, which allocation failed and why (a csi volume's setup error
// names the volume and the plugin's answer).
func failureDescription(up *messages.Allocation) string {
	why := up.GetClientDescription()
	if why == "" {
		why = "failed"
	}
	return fmt.Sprintf("allocation %s failed: %s", up.GetID(), why)
}

// newEval builds a pending evaluation of a job.
func (a *Agent) newEval(j *messages.Job, trigger, nodeID string) *messages.Evaluation {
	return messages.NewEval(j, trigger, nodeID, a.clock.Now())
}
