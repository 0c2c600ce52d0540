package deployment

import (
	"slices"

	"github.com/troupe-dev/troupe/messages"
)

// Multiregion rollouts (Nomad Enterprise's multiregion strategy). Every
// region's deployment of one rollout starts pending and places nothing.
// The leader of each region moves only its own region's deployment, from
// what it reads of every region's (MultiregionStep, pure):
//
//   - pending to running when it is the region's turn: fewer than
//     max_parallel regions before it in the block's order are not done yet
//     (0: every region runs at once), and no region failed;
//   - running to blocked is the watcher's (Step): a multiregion deployment
//     whose groups are all healthy waits for its peers;
//   - blocked to successful once every region's deployment is blocked or
//     successful (the last region to finish completes them all);
//   - to failed when a peer failed, by on_failure: "fail_all" fails every
//     region's deployment that is pending, running or blocked; the default
//     ("") fails the regions after the failed one in the block's order
//     (the ones before it stay as they are, blocked ones for an operator's
//     `deployment unblock`); "fail_local" fails none but stops the rollout
//     (later regions stay pending, earlier ones blocked).
//
// A region failed because of a peer reverts as a deployment that failed
// itself does (Step's fail): when any of its groups has auto_revert, to
// its job's latest stable version older than the deployment's (Nomad:
// "each region follows the auto_revert strategy of its own update
// block"); the revert registers that version's spec as a new one.

// DeploymentDescFailedByPeer is Nomad's description of a deployment
// failed because another region's failed.
const DeploymentDescFailedByPeer = "Failed because of an error in peer region"

// MultiregionInput is what MultiregionStep decides from: this region's
// deployment, its job version's multiregion block, this region's name and
// every other region's deployment of the same rollout (a region with none
// yet is absent or nil: it has not started). Job is the deployment's job
// version and Stable the latest stable one before it (nil: none), for a
// revert.
type MultiregionInput struct {
	Deployment  *messages.Deployment
	Multiregion *messages.Multiregion
	Region      string
	Peers       map[string]*messages.Deployment
	Job         *messages.Job
	Stable      *messages.Job
}

// MultiregionStep is what this region's deployment does now: its new
// status and description (Status "": none), with the evaluation that
// places it when its turn comes, or the revert of a failure.
func MultiregionStep(in MultiregionInput) Effects {
	d := in.Deployment
	switch d.GetStatus() {
	case messages.DeploymentStatusPending, messages.DeploymentStatusRunning, messages.DeploymentStatusBlocked:
	default:
		return Effects{}
	}
	order := regionOrder(in.Multiregion)
	self := slices.Index(order, in.Region)
	if self < 0 {
		return Effects{}
	}
	status := func(i int) string {
		if i == self {
			return d.GetStatus()
		}
		return in.Peers[order[i]].GetStatus()
	}
	if firstFailed := firstWith(len(order), status, messages.DeploymentStatusFailed); firstFailed >= 0 {
		if failsWithPeer(in.Multiregion.GetStrategy().GetOnFailure(), self, firstFailed) {
			return fail(Input{Job: in.Job, Stable: in.Stable}, DeploymentDescFailedByPeer, autoReverts(d))
		}
		return Effects{}
	}
	switch d.GetStatus() {
	case messages.DeploymentStatusPending:
		if myTurn(self, int(in.Multiregion.GetStrategy().GetMaxParallel()), status) {
			return Effects{Status: messages.DeploymentStatusRunning, Description: messages.DeploymentDescRunning, Eval: true}
		}
	case messages.DeploymentStatusBlocked:
		for i := range order {
			if !regionDone(status(i)) {
				return Effects{}
			}
		}
		return Effects{Status: messages.DeploymentStatusSuccessful, Description: messages.DeploymentDescSuccessful}
	}
	return Effects{}
}

// failsWithPeer reports whether a failure of the region at position
// failed fails this region's deployment (at self), which has not failed.
func failsWithPeer(onFailure string, self, failed int) bool {
	switch {
	case onFailure == "fail_local":
		return false
	case onFailure == "fail_all" || self > failed:
		return true
	}
	return false
}

// autoReverts reports whether any of d's groups has auto_revert (as
// Nomad's failing of a deployment from outside its watcher decides).
func autoReverts(d *messages.Deployment) bool {
	for _, s := range d.GetTaskGroups() {
		if s.GetAutoRevert() {
			return true
		}
	}
	return false
}

// myTurn reports whether the region at self may start: fewer than
// maxParallel regions before it are not done (maxParallel 0: no limit).
func myTurn(self, maxParallel int, status func(int) string) bool {
	if maxParallel <= 0 {
		return true
	}
	busy := 0
	for i := range self {
		if !regionDone(status(i)) {
			busy++
		}
	}
	return busy < maxParallel
}

// regionDone reports whether a region's deployment finished its own part.
func regionDone(status string) bool {
	return status == messages.DeploymentStatusBlocked || status == messages.DeploymentStatusSuccessful
}

// firstWith is the first position whose status is want, or -1.
func firstWith(n int, status func(int) string, want string) int {
	for i := range n {
		if status(i) == want {
			return i
		}
	}
	return -1
}

func regionOrder(m *messages.Multiregion) []string {
	out := make([]string, 0, len(m.GetRegions()))
	for _, r := range m.GetRegions() {
		out = append(out, r.GetName())
	}
	return out
}
