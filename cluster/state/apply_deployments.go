package state

import (
	"fmt"
	"slices"

	"github.com/troupe-dev/troupe/messages"
)

// applyUpsertDeployment stores a deployment and its evaluation. A new
// deployment cancels the job's other active ones (older versions).
func applyUpsertDeployment(w *writeTxn, c *messages.UpsertDeployment) any {
	d := c.GetDeployment()
	if d == nil || d.ID == "" {
		return fmt.Errorf("%w: UpsertDeployment without a deployment", ErrBadCommand)
	}
	if w.read().DeploymentByID(d.ID) == nil {
		for _, o := range w.read().DeploymentsByJob(d.Namespace, d.JobID) {
			if o.Active() {
				w.setDeploymentStatus(cloneDeployment(o), messages.DeploymentStatusCancelled, messages.DeploymentDescNewerJob)
			}
		}
	}
	w.putDeployment(cloneDeployment(d))
	w.putEval(c.GetEval())
	return nil
}

// activeDeployment is the stored deployment id, writable, when active.
func (w *writeTxn) activeDeployment(id string) (*messages.Deployment, error) {
	d := w.editDeployment(id)
	if d == nil {
		return nil, fmt.Errorf("%w: %q", ErrDeploymentNotFound, id)
	}
	if !d.Active() {
		return nil, fmt.Errorf("%w: %q is %s", ErrDeploymentNotActive, id, d.Status)
	}
	return d, nil
}

// applySetAllocHealth records the health of allocations of one active
// deployment; every allocation must be in it, or nothing changes.
func applySetAllocHealth(w *writeTxn, c *messages.SetAllocHealth) any {
	if _, err := w.activeDeployment(c.GetDeploymentID()); err != nil {
		return err
	}
	set := func(ids []string, healthy bool) error {
		for _, id := range ids {
			old := w.read().AllocByID(id)
			if old == nil || old.DeploymentID != c.DeploymentID {
				return fmt.Errorf("%w: allocation %q, deployment %q", ErrDeploymentBadAlloc, id, c.DeploymentID)
			}
			a := copyAlloc(old)
			ds := shallowCopy(old.GetDeploymentStatus())
			if ds == nil {
				ds = &messages.AllocDeploymentStatus{}
			}
			h := healthy
			ds.Healthy, ds.Timestamp, ds.ModifyIndex = &h, c.GetTimestamp(), w.index
			if ds.Timestamp == 0 {
				ds.Timestamp = w.now
			}
			a.DeploymentStatus = ds
			a.ModifyIndex = w.index
			w.putAlloc(old, a)
		}
		return nil
	}
	if err := set(c.GetHealthyAllocationIDs(), true); err != nil {
		return err
	}
	if err := set(c.GetUnhealthyAllocationIDs(), false); err != nil {
		return err
	}
	w.putEval(c.GetEval())
	return nil
}

// applyPromoteDeployment promotes the canaries of the named groups (or of
// all): each must have canaries, all of them healthy, as Nomad requires.
func applyPromoteDeployment(w *writeTxn, c *messages.PromoteDeployment) any {
	d, err := w.activeDeployment(c.GetDeploymentID())
	if err != nil {
		return err
	}
	promoted := 0
	for name, s := range d.TaskGroups {
		if !c.GetAll() && !slices.Contains(c.GetGroups(), name) {
			continue
		}
		if s.DesiredCanaries == 0 || s.Promoted {
			continue
		}
		healthy := 0
		for _, id := range s.PlacedCanaries {
			if a := w.read().AllocByID(id); a.GetDeploymentStatus().IsHealthy() {
				healthy++
			}
		}
		if healthy < int(s.DesiredCanaries) {
			return fmt.Errorf("%w: task group %q has %d/%d healthy allocations", ErrDeploymentPromote, name, healthy, s.DesiredCanaries)
		}
		s.Promoted = true
		promoted++
	}
	if promoted == 0 {
		return fmt.Errorf("%w: no canaries to promote", ErrDeploymentPromote)
	}
	if d.Status == messages.DeploymentStatusRunning {
		d.StatusDescription = messages.DeploymentDescRunning
	}
	w.putDeployment(d)
	w.putEval(c.GetEval())
	return nil
}

// applyUpdateDeploymentStatus moves an active deployment to a status
// (failed, paused, running, successful), registering c.Job with it when
// set (auto-revert).
func applyUpdateDeploymentStatus(w *writeTxn, c *messages.UpdateDeploymentStatus) any {
	d, err := w.activeDeployment(c.GetDeploymentID())
	if err != nil {
		return err
	}
	switch c.GetStatus() {
	case messages.DeploymentStatusFailed, messages.DeploymentStatusPaused, messages.DeploymentStatusRunning,
		messages.DeploymentStatusSuccessful, messages.DeploymentStatusCancelled, messages.DeploymentStatusBlocked:
	default:
		return fmt.Errorf("%w: deployment status %q", ErrBadCommand, c.GetStatus())
	}
	if d.Status == messages.DeploymentStatusPending && c.GetStatus() == messages.DeploymentStatusRunning {
		startProgressDeadlines(d, w.now) // its turn in a multiregion rollout begins now
	}
	w.setDeploymentStatus(d, c.GetStatus(), c.GetStatusDescription())
	if j := c.GetJob(); j != nil {
		if res := applyRegisterJob(w, &messages.RegisterJob{Job: j, Eval: c.GetEval()}); res != nil {
			if err, ok := res.(error); ok {
				return err
			}
		}
		return nil
	}
	w.putEval(c.GetEval())
	return nil
}

// startProgressDeadlines counts each group's progress deadline from now
// (unix nanos): a multiregion deployment waited pending since it was made.
func startProgressDeadlines(d *messages.Deployment, now int64) {
	for _, s := range d.TaskGroups {
		if s.ProgressDeadline > 0 {
			s.RequireProgressBy = now + s.ProgressDeadline
		}
	}
}

// applySetJobStable marks a stored job version stable or not.
func applySetJobStable(w *writeTxn, c *messages.SetJobStable) any {
	if !w.setJobStable(c.GetNamespace(), c.GetJobID(), c.GetVersion(), c.GetStable()) {
		return fmt.Errorf("%w: job %q version %d", ErrJobVersionNotFound, c.GetJobID(), c.GetVersion())
	}
	return nil
}

// deploymentCommand is the handler of a deployment command, or nil.
func deploymentCommand(cmd *messages.Command) func(w *writeTxn) any {
	switch c := cmd.Cmd.(type) {
	case *messages.Command_UpsertDeployment:
		return func(w *writeTxn) any { return applyUpsertDeployment(w, c.UpsertDeployment) }
	case *messages.Command_SetAllocHealth:
		return func(w *writeTxn) any { return applySetAllocHealth(w, c.SetAllocHealth) }
	case *messages.Command_PromoteDeployment:
		return func(w *writeTxn) any { return applyPromoteDeployment(w, c.PromoteDeployment) }
	case *messages.Command_UpdateDeploymentStatus:
		return func(w *writeTxn) any { return applyUpdateDeploymentStatus(w, c.UpdateDeploymentStatus) }
	case *messages.Command_SetJobStable:
		return func(w *writeTxn) any { return applySetJobStable(w, c.SetJobStable) }
	}
	return nil
}
