package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/messages"
)

// followerWriteBound is how long a write through a follower may take: it
// is one forward to the leader, one raft commit and the follower's apply.
const followerWriteBound = 3 * time.Second

// TestClusterFollowerWrites sends every kind of write that a follower
// forwards to the leader (through Apply, the volume manager or a proxied
// request) to a follower of 3 servers, one after the other, and checks
// that each answers within followerWriteBound and that a ?stale read on
// that same follower, made right after the answer, already sees it.
// Volume-only writes (register, create, deregister, delete) used to get
// no answer at all: the follower waited for a job, eval, alloc or node
// table to reach the write's index.
func TestClusterFollowerWrites(t *testing.T) {
	cc := startCSICluster(t, 3, 1)
	cc.runPlugin(t)
	f := cc.follower(t)
	t.Logf("writing through follower %s (leader %s)", f.Name, cc.leader(t).Name)
	stale := &api.QueryOptions{AllowStale: true}
	nodeID := cc.order[0]
	capability := []*messages.CSIVolumeCapability{{AccessMode: "single-node-writer", AttachmentMode: "file-system"}}
	job, err := f.API.Jobs().ParseHCL(spinJob{ID: "fw", Count: 1}.hcl(), true)
	require.NoError(t, err)
	var allocID string

	volumeSeen := func(id string, want bool) func() (bool, string) {
		return func() (bool, string) {
			v, _, err := f.API.Volumes().Info(id, stale)
			if api.IsNotFound(err) {
				return !want, "volume " + id + " not found"
			}
			if err != nil {
				return false, err.Error()
			}
			return want && v.GetID() == id, fmt.Sprintf("volume %s: %d claims", id, len(v.GetClaims()))
		}
	}
	jobSeen := func(cond func(j *messages.Job) bool) func() (bool, string) {
		return func() (bool, string) {
			j, _, err := f.API.Jobs().Info("fw", stale)
			if err != nil {
				return false, err.Error()
			}
			return cond(j), fmt.Sprintf("job fw: version %d, count %d, stop %v", j.GetVersion(),
				j.GetTaskGroups()[0].GetCount(), j.GetStop())
		}
	}
	nodeSeen := func(cond func(n *messages.Node) bool) func() (bool, string) {
		return func() (bool, string) {
			n, _, err := f.API.Nodes().Info(nodeID, stale)
			if err != nil {
				return false, err.Error()
			}
			return cond(n), fmt.Sprintf("node: eligibility %s, drain %v", n.GetSchedulingEligibility(), n.GetDrain())
		}
	}
	steps := []struct {
		name  string
		write func() error
		seen  func() (bool, string)
		// before runs first, not timed (waiting for state to settle).
		before func(t *testing.T)
	}{
		{name: "volume create", write: func() error {
			_, _, err := f.API.Volumes().Create(&messages.CSIVolume{ID: "fw-c", Name: "fw-c", PluginID: "hostpath",
				RequestedCapabilities: capability}, nil)
			return err
		}, seen: volumeSeen("fw-c", true)},
		{name: "volume register", write: func() error {
			_, err := f.API.Volumes().Register(&messages.CSIVolume{ID: "fw-r", Name: "fw-r", PluginID: "hostpath",
				ExternalID: "fw-r-ext", RequestedCapabilities: capability}, nil)
			return err
		}, seen: volumeSeen("fw-r", true)},
		{name: "volume detach", write: func() error { return f.API.Volumes().Detach("fw-c", nodeID, nil) },
			seen: volumeSeen("fw-c", true)},
		{name: "volume deregister", write: func() error { return f.API.Volumes().Deregister("fw-r", false, nil) },
			seen: volumeSeen("fw-r", false)},
		{name: "job register", write: func() error {
			_, _, err := f.API.Jobs().Register(job, nil)
			return err
		}, seen: jobSeen(func(j *messages.Job) bool { return j.GetVersion() == 0 })},
		{name: "job scale", write: func() error {
			_, _, err := f.API.Jobs().Scale("fw", "spin", 2, nil)
			return err
		}, seen: jobSeen(func(j *messages.Job) bool { return j.GetVersion() == 1 && j.GetTaskGroups()[0].GetCount() == 2 })},
		{name: "job revert", write: func() error {
			_, _, err := f.API.Jobs().Revert("fw", 0, nil, nil)
			return err
		}, seen: jobSeen(func(j *messages.Job) bool { return j.GetVersion() == 2 && j.GetTaskGroups()[0].GetCount() == 1 })},
		{name: "alloc stop", before: func(t *testing.T) {
			final := cc.waitRunning(t, "fw", 1, settleTimeout, nil)
			allocID = final[0].ID
		}, write: func() error {
			_, err := f.API.Allocations().Stop(allocID, nil)
			return err
		}, seen: func() (bool, string) {
			a, _, err := f.API.Allocations().Info(allocID, stale)
			if err != nil {
				return false, err.Error()
			}
			return a.GetDesiredStatus() == "stop", "alloc desired " + a.GetDesiredStatus()
		}},
		{name: "node ineligible", write: func() error {
			_, err := f.API.Nodes().ToggleEligibility(nodeID, false, nil)
			return err
		}, seen: nodeSeen(func(n *messages.Node) bool { return n.GetSchedulingEligibility() == "ineligible" })},
		{name: "node eligible", write: func() error {
			_, err := f.API.Nodes().ToggleEligibility(nodeID, true, nil)
			return err
		}, seen: nodeSeen(func(n *messages.Node) bool { return n.GetSchedulingEligibility() == "eligible" })},
		{name: "node drain", write: func() error {
			_, err := f.API.Nodes().UpdateDrain(nodeID, &api.DrainSpec{Deadline: int64(time.Hour), IgnoreSystemJobs: true}, false, nil)
			return err
		}, seen: nodeSeen(func(n *messages.Node) bool { return n.GetDrain() })},
		{name: "node drain off", write: func() error {
			_, err := f.API.Nodes().UpdateDrain(nodeID, nil, true, nil)
			return err
		}, seen: nodeSeen(func(n *messages.Node) bool { return !n.GetDrain() && n.GetSchedulingEligibility() == "eligible" })},
		{name: "job deregister", write: func() error {
			_, _, err := f.API.Jobs().Deregister("fw", false, nil)
			return err
		}, seen: jobSeen(func(j *messages.Job) bool { return j.GetStop() })},
		{name: "volume delete", write: func() error { return f.API.Volumes().Delete("fw-c", nil, nil) },
			seen: volumeSeen("fw-c", false)},
	}
	for _, st := range steps {
		if st.before != nil {
			st.before(t)
		}
		start := time.Now()
		require.NoError(t, st.write(), "%s through follower %s", st.name, f.Name)
		took := time.Since(start)
		ok, why := st.seen()
		t.Logf("%-17s through %s: answered in %4d ms; seen by a ?stale read there: %v", st.name, f.Name, took.Milliseconds(), ok)
		require.Less(t, took, followerWriteBound, "%s through follower %s", st.name, f.Name)
		require.True(t, ok, "%s: a ?stale read on follower %s right after the answer does not see it: %s", st.name, f.Name, why)
	}
}
