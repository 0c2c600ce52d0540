package deployment

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

// mrBlock is a multiregion block over regions a, b, c.
func mrBlock(maxParallel int32, onFailure string) *messages.Multiregion {
	return &messages.Multiregion{Strategy: &messages.MultiregionStrategy{MaxParallel: maxParallel, OnFailure: onFailure},
		Regions: []*messages.MultiregionRegion{{Name: "a"}, {Name: "b"}, {Name: "c"}}}
}

// peers builds the other regions' deployments from their statuses ("":
// none yet).
func peers(st map[string]string) map[string]*messages.Deployment {
	out := map[string]*messages.Deployment{}
	for r, s := range st {
		if s != "" {
			out[r] = &messages.Deployment{ID: r, Status: s}
		}
	}
	return out
}

// TestMultiregionStep is the rollout's whole decision table: this
// region's status, the block's strategy, the peers' statuses, and what
// this region's deployment moves to.
func TestMultiregionStep(t *testing.T) {
	const (
		pend, run, blk, ok, fail = messages.DeploymentStatusPending, messages.DeploymentStatusRunning,
			messages.DeploymentStatusBlocked, messages.DeploymentStatusSuccessful, messages.DeploymentStatusFailed
	)
	for _, tc := range []struct {
		name      string
		region    string
		self      string
		max       int32
		onFailure string
		peers     map[string]string
		want      string
		wantDesc  string
	}{
		{"first region starts at once (max_parallel 1)", "a", pend, 1, "", map[string]string{"b": pend, "c": ""}, run, messages.DeploymentDescRunning},
		{"second waits while the first runs", "b", pend, 1, "", map[string]string{"a": run, "c": pend}, "", ""},
		{"second waits while the first has no deployment yet", "b", pend, 1, "", map[string]string{}, "", ""},
		{"second starts once the first is blocked", "b", pend, 1, "", map[string]string{"a": blk, "c": pend}, run, messages.DeploymentDescRunning},
		{"third waits for the second", "c", pend, 1, "", map[string]string{"a": blk, "b": run}, "", ""},
		{"max_parallel 2: second starts beside the first", "b", pend, 2, "", map[string]string{"a": run, "c": pend}, run, messages.DeploymentDescRunning},
		{"max_parallel 2: third waits for one of two", "c", pend, 2, "", map[string]string{"a": run, "b": run}, "", ""},
		{"max_parallel 2: third starts when one is done", "c", pend, 2, "", map[string]string{"a": ok, "b": run}, run, messages.DeploymentDescRunning},
		{"max_parallel 0: all at once", "c", pend, 0, "", map[string]string{"a": pend, "b": ""}, run, messages.DeploymentDescRunning},
		{"blocked waits for the last region", "a", blk, 1, "", map[string]string{"b": blk, "c": run}, "", ""},
		{"blocked completes when every region is done", "a", blk, 1, "", map[string]string{"b": blk, "c": blk}, ok, messages.DeploymentDescSuccessful},
		{"blocked completes beside a region already successful", "b", blk, 1, "", map[string]string{"a": ok, "c": ok}, ok, messages.DeploymentDescSuccessful},
		{"running is the watcher's", "a", run, 1, "", map[string]string{"b": blk, "c": blk}, "", ""},
		{"fail_all fails a blocked region", "a", blk, 1, "fail_all", map[string]string{"b": fail, "c": pend}, fail, DeploymentDescFailedByPeer},
		{"fail_all fails a pending region", "c", pend, 1, "fail_all", map[string]string{"a": blk, "b": fail}, fail, DeploymentDescFailedByPeer},
		{"fail_all fails a running region", "a", run, 0, "fail_all", map[string]string{"b": fail, "c": run}, fail, DeploymentDescFailedByPeer},
		{"default fails the regions after the failed one", "c", pend, 1, "", map[string]string{"a": blk, "b": fail}, fail, DeploymentDescFailedByPeer},
		{"default leaves the regions before it blocked", "a", blk, 1, "", map[string]string{"b": fail, "c": pend}, "", ""},
		{"fail_local leaves a later region pending", "c", pend, 1, "fail_local", map[string]string{"a": blk, "b": fail}, "", ""},
		{"fail_local leaves an earlier region blocked", "a", blk, 1, "fail_local", map[string]string{"b": fail, "c": blk}, "", ""},
		{"a failed region stays failed", "b", fail, 1, "fail_all", map[string]string{"a": blk, "c": pend}, "", ""},
		{"a successful region stays successful", "a", ok, 1, "fail_all", map[string]string{"b": fail}, "", ""},
		{"a region the block does not name does nothing", "z", pend, 1, "", map[string]string{}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &messages.Deployment{ID: "self", Status: tc.self, IsMultiregion: true}
			got := MultiregionStep(MultiregionInput{Deployment: d, Multiregion: mrBlock(tc.max, tc.onFailure),
				Region: tc.region, Peers: peers(tc.peers)})
			require.Equal(t, tc.want, got.Status)
			require.Equal(t, tc.wantDesc, got.Description)
			require.Equal(t, tc.want == run, got.Eval, "a region that starts asks for the evaluation that places it")
			require.Nil(t, got.Revert, "no group auto-reverts")
		})
	}
}

// TestMultiregionStepRevert: a region failed because of a peer reverts
// as one that failed itself does: to the latest stable version before
// its own when any of its groups has auto_revert (none, or the same spec:
// it says so and reverts nothing); regions the failure leaves alone
// revert nothing either.
func TestMultiregionStepRevert(t *testing.T) {
	const (
		pend, blk, fail = messages.DeploymentStatusPending, messages.DeploymentStatusBlocked, messages.DeploymentStatusFailed
	)
	v0, v1 := job(0, 4), job(1, 4)
	v0.Meta, v1.Meta = map[string]string{"v": "0"}, map[string]string{"v": "1"}
	v0.Stable = true
	byPeer := DeploymentDescFailedByPeer
	for _, tc := range []struct {
		name       string
		region     string
		self       string
		onFailure  string
		peers      map[string]string
		autoRevert bool
		stable     *messages.Job
		wantStatus string
		wantDesc   string
		wantRevert *messages.Job
	}{
		{"fail_all: a blocked region reverts to the stable version", "a", blk, "fail_all", map[string]string{"b": fail, "c": pend},
			true, v0, fail, messages.DeploymentDescRollback(byPeer, 0), RevertJob(v0)},
		{"fail_all: a pending region reverts too", "c", pend, "fail_all", map[string]string{"a": blk, "b": fail},
			true, v0, fail, messages.DeploymentDescRollback(byPeer, 0), RevertJob(v0)},
		{"fail_all without auto_revert fails only", "a", blk, "fail_all", map[string]string{"b": fail},
			false, v0, fail, byPeer, nil},
		{"fail_all: no stable version to revert to", "a", blk, "fail_all", map[string]string{"b": fail},
			true, nil, fail, messages.DeploymentDescNoRollbackTarget(byPeer), nil},
		{"fail_all: the stable version has the same spec", "a", blk, "fail_all", map[string]string{"b": fail},
			true, func() *messages.Job { j := job(0, 4); j.Meta, j.Stable = map[string]string{"v": "1"}, true; return j }(),
			fail, messages.DeploymentDescRollbackNoop(byPeer, 0), nil},
		{"default: a region after the failed one reverts", "c", pend, "", map[string]string{"a": blk, "b": fail},
			true, v0, fail, messages.DeploymentDescRollback(byPeer, 0), RevertJob(v0)},
		{"default: a region before it stays blocked", "a", blk, "", map[string]string{"b": fail, "c": pend},
			true, v0, "", "", nil},
		{"fail_local: no other region fails or reverts", "a", blk, "fail_local", map[string]string{"b": fail},
			true, v0, "", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &messages.Deployment{ID: "self", JobID: "web", JobVersion: 1, Status: tc.self, IsMultiregion: true,
				TaskGroups: map[string]*messages.DeploymentState{"g": {AutoRevert: tc.autoRevert}, "h": {}}}
			got := MultiregionStep(MultiregionInput{Deployment: d, Multiregion: mrBlock(1, tc.onFailure),
				Region: tc.region, Peers: peers(tc.peers), Job: v1, Stable: tc.stable})
			require.Equal(t, tc.wantStatus, got.Status)
			require.Equal(t, tc.wantDesc, got.Description)
			require.Equal(t, tc.wantRevert, got.Revert)
		})
	}
}
