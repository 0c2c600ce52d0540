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
			got, desc := MultiregionStep(MultiregionInput{Deployment: d, Multiregion: mrBlock(tc.max, tc.onFailure),
				Region: tc.region, Peers: peers(tc.peers)})
			require.Equal(t, tc.want, got)
			require.Equal(t, tc.wantDesc, desc)
		})
	}
}
