package agent

import (
	"context"
	"fmt"

	"github.com/hashicorp/go-uuid"

	"github.com/troupe-dev/troupe/messages"
)

// localServer is the client's connection to the server in the same process.
type localServer struct{ a *Agent }

// RegisterNode commits the node and an evaluation for every system job, so
// that system jobs land on the new node.
func (l *localServer) RegisterNode(ctx context.Context, n *messages.Node) error {
	cmd := &messages.RegisterNode{Node: n}
	var evals []*messages.Evaluation
	for _, j := range l.a.store.Snapshot().Jobs() {
		if j.GetType() == "system" && !j.GetStop() {
			evals = append(evals, l.a.newEval(j, "node-update", n.GetID()))
		}
	}
	if len(evals) > 0 {
		cmd.Eval = evals[0]
	}
	if _, _, err := l.a.Apply(ctx, &messages.Command{Cmd: &messages.Command_RegisterNode{RegisterNode: cmd}}); err != nil {
		return err
	}
	if len(evals) > 1 {
		up := &messages.UpsertEvals{Evals: evals[1:]}
		_, _, err := l.a.Apply(ctx, &messages.Command{Cmd: &messages.Command_UpsertEvals{UpsertEvals: up}})
		return err
	}
	return nil
}

// UpdateAllocs commits client status updates. An allocation that newly
// failed gets an evaluation (the scheduler decides whether to reschedule
// it); one that ended frees capacity, so blocked evaluations are retried.
func (l *localServer) UpdateAllocs(ctx context.Context, allocs []*messages.Allocation) error {
	snap := l.a.store.Snapshot()
	cmd := &messages.UpdateAllocsFromClient{Allocs: allocs}
	freed := false
	seen := map[string]bool{}
	for _, up := range allocs {
		old := snap.AllocByID(up.GetID())
		if old == nil || old.GetClientStatus() == up.GetClientStatus() {
			continue
		}
		if isTerminal(up.GetClientStatus()) {
			freed = true
		}
		key := old.GetNamespace() + "/" + old.GetJobID()
		if up.GetClientStatus() == "failed" && old.GetDesiredStatus() == "run" && !seen[key] {
			if j := snap.JobByID(old.GetNamespace(), old.GetJobID()); j != nil && !j.GetStop() {
				seen[key] = true
				cmd.Evals = append(cmd.Evals, l.a.newEval(j, "alloc-failure", ""))
			}
		}
	}
	if _, _, err := l.a.Apply(ctx, &messages.Command{Cmd: &messages.Command_UpdateAllocsFromClient{UpdateAllocsFromClient: cmd}}); err != nil {
		return fmt.Errorf("agent: update allocs: %w", err)
	}
	if freed {
		l.a.sys.Root.Send(l.a.serverPID, &capacityChanged{})
	}
	return nil
}

// newEval builds a pending evaluation of a job.
func (a *Agent) newEval(j *messages.Job, trigger, nodeID string) *messages.Evaluation {
	id, _ := uuid.GenerateUUID()
	now := a.clock.Now().UnixNano()
	return &messages.Evaluation{ID: id, Namespace: j.GetNamespace(), Priority: j.GetPriority(), Type: j.GetType(),
		TriggeredBy: trigger, JobID: j.GetID(), NodeID: nodeID, Status: "pending", CreateTime: now, ModifyTime: now}
}

func isTerminal(s string) bool { return s == "complete" || s == "failed" || s == "lost" }
