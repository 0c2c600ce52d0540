package deployment

import (
	"time"

	"github.com/troupe-dev/troupe/actors/server/evals"
	"github.com/troupe-dev/troupe/messages"
)

// Command is the raft command that carries out eff on deployment d of
// job version job (nil: eff asks for nothing the log records). A status
// with a Revert registers that job with the failure and evaluates it (an
// evaluation of the job, not of the deployment); Eval asks for an
// evaluation of the deployment. The deployment actor and the multiregion
// rollout (agent) both commit what Step and MultiregionStep decide
// through it.
func Command(d *messages.Deployment, job *messages.Job, eff Effects, now time.Time) *messages.Command {
	eval := func(j *messages.Job) *messages.Evaluation {
		if j == nil {
			j = &messages.Job{ID: d.JobID, Namespace: d.Namespace}
		}
		e := evals.ForJob(j, evals.DeploymentWatcher, now)
		e.DeploymentID = d.ID
		return e
	}
	cmd := &messages.Command{Time: now.UnixNano()}
	switch {
	case eff.Status != "":
		u := &messages.UpdateDeploymentStatus{DeploymentID: d.ID, Status: eff.Status,
			StatusDescription: eff.Description, Job: eff.Revert}
		switch {
		case eff.Revert != nil:
			u.Eval = eval(eff.Revert)
			u.Eval.DeploymentID = ""
		case eff.Eval:
			u.Eval = eval(job)
		}
		cmd.Cmd = &messages.Command_UpdateDeploymentStatus{UpdateDeploymentStatus: u}
	case eff.Promote:
		cmd.Cmd = &messages.Command_PromoteDeployment{PromoteDeployment: &messages.PromoteDeployment{
			DeploymentID: d.ID, All: true, Eval: eval(job)}}
	case eff.Eval:
		cmd.Cmd = &messages.Command_UpsertEvals{UpsertEvals: &messages.UpsertEvals{Evals: []*messages.Evaluation{eval(job)}}}
	default:
		return nil
	}
	return cmd
}
