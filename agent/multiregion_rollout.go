package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/troupe-dev/troupe/actors/deployment"
	"github.com/troupe-dev/troupe/cluster/remote"
	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

// Multiregion rollouts (actors/deployment multiregion.go has the rules):
// every MultiregionRolloutInterval the leader of each region reads, for
// each of its active multiregion deployments, the deployment of the same
// rollout in every other region of the job's block (asking one of their
// servers' "agent" actor, the leader first), decides with
// deployment.MultiregionStep and commits its own region's change through
// raft. Each region moves only its own deployment, so the rollout lives in
// the regions' raft state and survives any leader change; a region that
// does not answer holds the decision until the next tick.

// DefaultMultiregionRolloutInterval is Config.MultiregionRolloutInterval's
// default.
const DefaultMultiregionRolloutInterval = time.Second

func (a *Agent) multiregionRolloutInterval() time.Duration {
	if d := a.cfg.MultiregionRolloutInterval; d > 0 {
		return d
	}
	return DefaultMultiregionRolloutInterval
}

// multiregionRolloutTick steps every active multiregion deployment when
// this server leads (run by everyUntilStop).
func (a *Agent) multiregionRolloutTick() {
	if a.store == nil || !a.raft.IsLeader() {
		return
	}
	snap := a.store.Snapshot()
	var mine []*messages.Deployment
	for _, d := range snap.Deployments() {
		if d.GetIsMultiregion() && d.Active() {
			mine = append(mine, d)
		}
	}
	if len(mine) == 0 {
		return
	}
	ctx, cancel := a.tickContext(a.multiregionRolloutInterval() + regionOpenTimeout)
	defer cancel()
	for _, d := range mine {
		if err := a.stepMultiregion(ctx, snap, d); err != nil {
			a.log.Warn("multiregion rollout: not stepped; trying again", "deployment", d.ID, "job", d.JobID, "error", err)
		}
	}
}

// stepMultiregion commits d's next step in its rollout, if it has one.
func (a *Agent) stepMultiregion(ctx context.Context, snap *state.Snap, d *messages.Deployment) error {
	cmd, err := multiregionCommand(ctx, snap, peerReaderFunc(a.peerDeployment), a.cfg.Region, d, a.clock.Now())
	if err != nil || cmd == nil {
		return err
	}
	u := cmd.GetUpdateDeploymentStatus()
	a.log.Info("multiregion rollout", "deployment", d.ID, "job", d.JobID, "from", d.Status, "to", u.Status,
		"description", u.StatusDescription)
	_, _, err = a.Apply(ctx, cmd)
	return err
}

// peerReader reads another region's deployment of d's rollout (nil: none
// yet).
type peerReader interface {
	peer(ctx context.Context, region string, d *messages.Deployment) (*messages.Deployment, error)
}

type peerReaderFunc func(ctx context.Context, region string, d *messages.Deployment) (*messages.Deployment, error)

func (f peerReaderFunc) peer(ctx context.Context, region string, d *messages.Deployment) (*messages.Deployment, error) {
	return f(ctx, region, d)
}

// jobVersions is the state multiregionCommand reads (*state.Snap).
type jobVersions interface {
	JobVersion(ns, id string, v uint64) *messages.Job
	LatestStableVersion(ns, id string, before uint64) *messages.Job
}

// multiregionCommand reads d's peers in the regions of its job version's
// block and returns the raft command of d's next step (nil: none now; an
// error when a region did not answer): a deployment that starts comes
// with the evaluation that places it, one failed because of a peer with
// the revert to its latest stable version when its groups auto-revert
// (deployment.Command, as the deployment actor's own failures).
func multiregionCommand(ctx context.Context, jobs jobVersions, peers peerReader, region string, d *messages.Deployment, now time.Time) (*messages.Command, error) {
	job := jobs.JobVersion(d.Namespace, d.JobID, d.JobVersion)
	m := job.GetMultiregion()
	if m == nil {
		return nil, nil
	}
	seen := map[string]*messages.Deployment{}
	for _, r := range m.GetRegions() {
		if r.GetName() == region {
			continue
		}
		p, err := peers.peer(ctx, r.GetName(), d)
		if err != nil {
			return nil, err
		}
		seen[r.GetName()] = p
	}
	eff := deployment.MultiregionStep(deployment.MultiregionInput{Deployment: d, Multiregion: m,
		Region: region, Peers: seen, Job: job, Stable: jobs.LatestStableVersion(d.Namespace, d.JobID, d.JobVersion)})
	if eff.Status == "" {
		return nil, nil
	}
	return deployment.Command(d, job, eff, now), nil
}

// peerDeployment is region's deployment of d's rollout (nil: none yet),
// from the first of its servers that answers.
func (a *Agent) peerDeployment(ctx context.Context, region string, d *messages.Deployment) (*messages.Deployment, error) {
	servers := a.regionServers(region)
	if len(servers) == 0 {
		return nil, fmt.Errorf("region %q: no server of it is known", region)
	}
	q := &messages.MultiregionDeploymentQuery{Namespace: d.Namespace, JobID: d.JobID, Rollout: d.MultiregionRollout}
	var errs []error
	for _, s := range servers {
		rctx, cancel := context.WithTimeout(ctx, regionOpenTimeout)
		resp, err := remote.Request[*messages.MultiregionDeploymentQueryResponse](rctx, a.sys.Root, s.Meta.RPCAddr, "agent", q)
		cancel()
		switch {
		case err != nil:
			errs = append(errs, err)
		case resp.GetError() != nil:
			errs = append(errs, errors.New(resp.GetError().GetMessage()))
		default:
			return resp.GetDeployment(), nil
		}
	}
	return nil, fmt.Errorf("region %q: %w", region, errors.Join(errs...))
}

// answerMultiregionDeployment is this region's deployment of a rollout:
// the newest of the job's multiregion deployments that carries it.
func (a *Agent) answerMultiregionDeployment(m *messages.MultiregionDeploymentQuery) *messages.MultiregionDeploymentQueryResponse {
	if a.store == nil {
		return &messages.MultiregionDeploymentQueryResponse{Error: &messages.Error{Code: string(messages.CodeUnavailable),
			Message: "this agent keeps no server state"}}
	}
	var out *messages.Deployment
	for _, d := range a.store.Snapshot().DeploymentsByJob(m.GetNamespace(), m.GetJobID()) {
		if d.GetIsMultiregion() && d.GetMultiregionRollout() == m.GetRollout() && (out == nil || d.CreateIndex > out.CreateIndex) {
			out = d
		}
	}
	return &messages.MultiregionDeploymentQueryResponse{Deployment: out}
}
